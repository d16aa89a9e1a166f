/*
 * LibTorch DNN backend: FFmpeg's side of CUDA frames
 *
 * This file is part of FFmpeg.
 *
 * FFmpeg is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License as published by the Free Software Foundation; either
 * version 2.1 of the License, or (at your option) any later version.
 *
 * FFmpeg is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public
 * License along with FFmpeg; if not, write to the Free Software
 * Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA
 */

#include "config.h"

#include "libavutil/cuda_check.h"
#include "libavutil/hwcontext.h"
#include "libavutil/hwcontext_cuda_internal.h"
#include "libavutil/mem.h"
#if CONFIG_LIBTORCH_CUDA_KERNELS
#include "libavfilter/cuda/load_helper.h"
#endif
#include "dnn_backend_torch_cudactx.h"

#define CHECK_CU(x) FF_CUDA_CHECK_DL(c->log_ctx, c->cu, x)

struct THCudaCtx {
    void *log_ctx;
    AVBufferRef *frames_ref;
    AVCUDADeviceContext *hwctx;
    CudaFunctions *cu;
    CUmodule module;        ///< dnn_backend_torch_kernels.cu
    CUfunction to_bytes[3]; ///< per model output type: float32, float16, bfloat16
    int kernels;            ///< 0 not loaded yet, 1 loaded, < 0 unusable
    int primary;            ///< the frames are in the device's primary context
};

#if CONFIG_LIBTORCH_CUDA_KERNELS
extern const unsigned char ff_dnn_backend_torch_kernels_ptx_data[];
extern const unsigned int ff_dnn_backend_torch_kernels_ptx_len;

/* dnn_backend_torch_kernels.cu, built by FFmpeg's CUDA compiler */
static int th_load_module(THCudaCtx *c)
{
    return ff_cuda_load_module(c->log_ctx, c->hwctx, &c->module,
                               ff_dnn_backend_torch_kernels_ptx_data,
                               ff_dnn_backend_torch_kernels_ptx_len);
}
#else
static int th_load_module(THCudaCtx *c)
{
    av_log(c->log_ctx, AV_LOG_VERBOSE, "built without a CUDA compiler "
           "(--enable-cuda-llvm or --enable-cuda-nvcc): the output is "
           "converted with LibTorch operations\n");
    return AVERROR(ENOSYS);
}
#endif

/* Loads the kernels into FFmpeg's context, which must be current. */
static int th_load_kernels(THCudaCtx *c)
{
    static const char *const names[3] = {
        "th_to_bytes_f32", "th_to_bytes_f16", "th_to_bytes_bf16",
    };
    int ret = th_load_module(c);

    if (ret == AVERROR(ENOSYS))
        return ret;
    for (int i = 0; ret >= 0 && i < 3; i++)
        ret = CHECK_CU(c->cu->cuModuleGetFunction(&c->to_bytes[i], c->module, names[i]));
    if (ret < 0)
        av_log(c->log_ctx, AV_LOG_WARNING, "the backend's CUDA kernels did not load; "
               "the output is converted with LibTorch operations instead\n");
    else
        av_log(c->log_ctx, AV_LOG_VERBOSE, "output to 8 bits by the backend's CUDA kernel\n");
    return ret;
}

static void th_unload_kernels(THCudaCtx *c)
{
    if (!c->module || ff_dnn_th_cudactx_push(c) < 0)
        return;
    CHECK_CU(c->cu->cuModuleUnload(c->module));
    ff_dnn_th_cudactx_pop(c);
    c->module = NULL;
}

int ff_dnn_th_cudactx_to_bytes(THCudaCtx *c, void *stream, const THBytesOut *o)
{
    CUdeviceptr src = (CUdeviceptr)o->src, dst = (CUdeviceptr)o->dst;
    uint64_t sc = o->stride[0], sh = o->stride[1], sw = o->stride[2];
    uint64_t ls = o->linesize;
    uint32_t bpp = o->bpp, ch = o->channels, w = o->width;
    uint32_t b0 = o->byte[0], b1 = o->byte[1], b2 = o->byte[2];   /* unread past ch */
    int32_t pad = o->pad;
    void *args[] = { &src, &dst, &sc, &sh, &sw, &ls, &bpp, &b0, &b1, &b2, &pad, &ch, &w };
    int ret;

    /* one block row per frame row: a grid is at most 65535 blocks high;
     * and the kernels, in FFmpeg's context, run on LibTorch's stream */
    if (!c->primary || c->kernels < 0 || o->dtype < 0 || o->dtype > 2 || o->height > 65535)
        return AVERROR(ENOSYS);
    ret = ff_dnn_th_cudactx_push(c);
    if (ret < 0)
        return ret;
    if (!c->kernels)
        c->kernels = th_load_kernels(c) < 0 ? -1 : 1;
    ret = c->kernels < 0 ? AVERROR(ENOSYS) :
          CHECK_CU(c->cu->cuLaunchKernel(c->to_bytes[o->dtype], (w + 127) / 128,
                                         o->height, 1, 128, 1, 1, 0,
                                         (CUstream)stream, args, NULL));
    ff_dnn_th_cudactx_pop(c);
    return ret;
}

/*
 * The ordinal of the frames' device, which LibTorch's device index is: a
 * CUdevice is a handle, found again among the devices by ordinal.
 */
static int device_ordinal(THCudaCtx *c, CUdevice dev, int *index)
{
    CUdevice d;
    int n = 0, ret = CHECK_CU(c->cu->cuDeviceGetCount(&n));

    for (int i = 0; ret >= 0 && i < n; i++) {
        ret = CHECK_CU(c->cu->cuDeviceGet(&d, i));
        if (ret >= 0 && d == dev) {
            *index = i;
            return 0;
        }
    }
    if (ret >= 0)
        av_log(c->log_ctx, AV_LOG_ERROR, "the frames' CUDA device is none of the "
               "%d devices of this process\n", n);
    return ret < 0 ? ret : AVERROR(ENODEV);
}

/* The device of the frames' context, as the driver says. */
static int frames_device(THCudaCtx *c, CUdevice *dev)
{
    int ret = ff_dnn_th_cudactx_push(c);

    if (ret < 0)
        return ret;
    ret = CHECK_CU(c->cu->cuCtxGetDevice(dev));
    ff_dnn_th_cudactx_pop(c);
    return ret;
}

/*
 * LibTorch works in the device's primary context.  Frames of another
 * context on the same device are read and written there too, but
 * LibTorch cannot work on that context's stream: ff_dnn_th_cudactx_sync()
 * then orders the two streams from the host.
 */
static int check_primary(THCudaCtx *c, CUdevice dev)
{
    CUcontext primary;
    unsigned int flags;
    int active, ret;

    /* an inactive primary context is not the frames': none is made */
    ret = CHECK_CU(c->cu->cuDevicePrimaryCtxGetState(dev, &flags, &active));
    if (ret < 0 || !active)
        return ret;
    ret = CHECK_CU(c->cu->cuDevicePrimaryCtxRetain(&primary, dev));
    if (ret < 0)
        return ret;
    CHECK_CU(c->cu->cuDevicePrimaryCtxRelease(dev));
    c->primary = primary == c->hwctx->cuda_ctx;
    return 0;
}

int ff_dnn_th_cudactx_init(THCudaCtx **pc, void *log_ctx, AVBufferRef *frames_ref,
                           int *device_index)
{
    AVHWFramesContext *frames = (AVHWFramesContext *)frames_ref->data;
    THCudaCtx *c;
    CUdevice dev;
    int ret;

    c = av_mallocz(sizeof(*c));
    if (!c)
        return AVERROR(ENOMEM);
    *pc = c;
    c->log_ctx    = log_ctx;
    c->frames_ref = av_buffer_ref(frames_ref);
    if (!c->frames_ref)
        return AVERROR(ENOMEM);
    c->hwctx = frames->device_ctx->hwctx;
    c->cu    = c->hwctx->internal->cuda_dl;

    ret = frames_device(c, &dev);
    if (ret >= 0)
        ret = check_primary(c, dev);
    if (ret < 0)
        return ret;
    return device_ordinal(c, dev, device_index);
}

void ff_dnn_th_cudactx_uninit(THCudaCtx **pc)
{
    THCudaCtx *c = *pc;

    if (!c)
        return;
    if (c->hwctx)
        th_unload_kernels(c);
    av_buffer_unref(&c->frames_ref);
    av_freep(pc);
}

void *ff_dnn_th_cudactx_stream(const THCudaCtx *c)
{
    return c->hwctx->stream;
}

int ff_dnn_th_cudactx_primary(const THCudaCtx *c)
{
    return c->primary;
}

int ff_dnn_th_cudactx_sync(THCudaCtx *c)
{
    int ret = ff_dnn_th_cudactx_push(c);

    if (ret < 0)
        return ret;
    ret = CHECK_CU(c->cu->cuStreamSynchronize(c->hwctx->stream));
    ff_dnn_th_cudactx_pop(c);
    return ret;
}

int ff_dnn_th_cudactx_push(THCudaCtx *c)
{
    return CHECK_CU(c->cu->cuCtxPushCurrent(c->hwctx->cuda_ctx));
}

void ff_dnn_th_cudactx_pop(THCudaCtx *c)
{
    CUcontext dummy;
    CHECK_CU(c->cu->cuCtxPopCurrent(&dummy));
}
