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

#include "libavutil/cuda_check.h"
#include "libavutil/hwcontext.h"
#include "libavutil/hwcontext_cuda_internal.h"
#include "libavutil/mem.h"
#include "dnn_backend_torch_cudactx.h"

#define CHECK_CU(x) FF_CUDA_CHECK_DL(c->log_ctx, c->cu, x)

struct THCudaCtx {
    void *log_ctx;
    AVBufferRef *frames_ref;
    AVCUDADeviceContext *hwctx;
    CudaFunctions *cu;
    CUcontext primary_ctx;
    CUevent frames_ready;   ///< FFmpeg's context, recorded on FFmpeg's stream
    CUevent torch_done;     ///< primary context, recorded on LibTorch's stream
    CUmodule module;        ///< the kernels below, in the primary context
    CUfunction to_bytes[3]; ///< per model output type: float32, float16, bfloat16
    int kernels;            ///< 0 not loaded yet, 1 loaded, < 0 unusable
};

/*
 * A model's output (C x H x W, any strides, float32, float16 or bfloat16)
 * to packed 8-bit pixels in one pass: round(clamp(v * 255, 0, 255)), NaN
 * giving 0 (max.f32 returns the operand that is not NaN), as the CPU path
 * computes it in float; the padding byte, if any, set to 255.  One thread
 * per pixel, a block row of 128 pixels, blockIdx.y the row.  PTX for any
 * GPU LibTorch runs on, compiled by the driver when first used: written by
 * hand, so that the build needs no CUDA compiler.
 */
#define TH_PTX_STORE                                                        \
    "    mul.rn.f32 %f1, %f1, 0f437F0000;\n"                                \
    "    max.f32 %f1, %f1, 0f00000000;\n"                                   \
    "    min.f32 %f1, %f1, 0f437F0000;\n"                                   \
    "    cvt.rni.u32.f32 %r13, %f1;\n"                                      \
    "    cvt.u64.u32 %rd13, %r11;\n"                                        \
    "    add.u64 %rd13, %rd9, %rd13;\n"                                     \
    "    st.global.u8 [%rd13], %r13;\n"

#define TH_PTX_CHANNEL(load, byte)                                          \
    "    ld.param.u32 %r11, [" byte "];\n" load TH_PTX_STORE

#define TH_PTX_LOAD_F32 "    ld.global.f32 %f1, [%rd5];\n"
#define TH_PTX_LOAD_F16 "    ld.global.b16 %h1, [%rd5];\n"                  \
                        "    cvt.f32.f16 %f1, %h1;\n"
#define TH_PTX_LOAD_BF16 "    ld.global.b16 %h1, [%rd5];\n"                 \
                         "    cvt.u32.u16 %r14, %h1;\n"                     \
                         "    shl.b32 %r14, %r14, 16;\n"                    \
                         "    mov.b32 %f1, %r14;\n"

#define TH_PTX_ENTRY(name, load)                                            \
    ".visible .entry " name "(.param .u64 src, .param .u64 dst,\n"          \
    "    .param .u64 sc, .param .u64 sh, .param .u64 sw, .param .u64 ls,\n" \
    "    .param .u32 bpp, .param .u32 b0, .param .u32 b1, .param .u32 b2,\n" \
    "    .param .s32 pad, .param .u32 ch, .param .u32 w)\n"                 \
    "{\n"                                                                   \
    "    .reg .pred %p<3>;\n    .reg .b16 %h<2>;\n"                         \
    "    .reg .b32 %r<16>;\n    .reg .b64 %rd<16>;\n    .reg .f32 %f<2>;\n" \
    "    mov.u32 %r1, %ctaid.x;\n    mov.u32 %r2, %ntid.x;\n"               \
    "    mov.u32 %r3, %tid.x;\n    mad.lo.u32 %r4, %r1, %r2, %r3;\n"        \
    "    ld.param.u32 %r6, [w];\n    setp.ge.u32 %p1, %r4, %r6;\n"          \
    "    @%p1 bra " name "_done;\n"                                                  \
    "    mov.u32 %r7, %ctaid.y;\n"                                          \
    "    cvt.u64.u32 %rd1, %r7;\n    cvt.u64.u32 %rd2, %r4;\n"              \
    "    ld.param.u64 %rd3, [sh];\n    ld.param.u64 %rd4, [sw];\n"          \
    "    mul.lo.u64 %rd5, %rd1, %rd3;\n    mad.lo.u64 %rd5, %rd2, %rd4, %rd5;\n" \
    "    ld.param.u64 %rd6, [src];\n    add.u64 %rd5, %rd5, %rd6;\n"         \
    "    ld.param.u64 %rd7, [ls];\n    ld.param.u32 %r9, [bpp];\n"          \
    "    cvt.u64.u32 %rd8, %r9;\n    mul.lo.u64 %rd9, %rd1, %rd7;\n"        \
    "    mad.lo.u64 %rd9, %rd2, %rd8, %rd9;\n"                              \
    "    ld.param.u64 %rd10, [dst];\n    add.u64 %rd9, %rd9, %rd10;\n"       \
    "    ld.param.u64 %rd11, [sc];\n    ld.param.u32 %r10, [ch];\n"         \
    TH_PTX_CHANNEL(load, "b0")                                              \
    "    setp.lt.u32 %p2, %r10, 3;\n    @%p2 bra " name "_pad;\n"                    \
    "    add.u64 %rd5, %rd5, %rd11;\n"                                      \
    TH_PTX_CHANNEL(load, "b1")                                              \
    "    add.u64 %rd5, %rd5, %rd11;\n"                                      \
    TH_PTX_CHANNEL(load, "b2")                                              \
    name "_pad:\n    ld.param.s32 %r12, [pad];\n    setp.lt.s32 %p2, %r12, 0;\n"  \
    "    @%p2 bra " name "_done;\n    cvt.s64.s32 %rd12, %r12;\n"                    \
    "    add.u64 %rd12, %rd9, %rd12;\n    mov.u32 %r13, 255;\n"             \
    "    st.global.u8 [%rd12], %r13;\n"                                     \
    name "_done:\n    ret;\n}\n"

static const char th_ptx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    TH_PTX_ENTRY("th_to_bytes_f32", TH_PTX_LOAD_F32)
    TH_PTX_ENTRY("th_to_bytes_f16", TH_PTX_LOAD_F16)
    TH_PTX_ENTRY("th_to_bytes_bf16", TH_PTX_LOAD_BF16);

static int create_event(THCudaCtx *c, CUcontext ctx, CUevent *event)
{
    CUcontext dummy;
    int ret = CHECK_CU(c->cu->cuCtxPushCurrent(ctx));

    if (ret < 0)
        return ret;
    ret = CHECK_CU(c->cu->cuEventCreate(event, CU_EVENT_DISABLE_TIMING));
    CHECK_CU(c->cu->cuCtxPopCurrent(&dummy));
    return ret;
}

static void destroy_event(THCudaCtx *c, CUcontext ctx, CUevent *event)
{
    CUcontext dummy;

    if (!*event || CHECK_CU(c->cu->cuCtxPushCurrent(ctx)) < 0)
        return;
    CHECK_CU(c->cu->cuEventDestroy(*event));
    CHECK_CU(c->cu->cuCtxPopCurrent(&dummy));
    *event = NULL;
}

/* Loads the kernels into the primary context, which must be current. */
static int th_load_kernels(THCudaCtx *c)
{
    static const char *const names[3] = {
        "th_to_bytes_f32", "th_to_bytes_f16", "th_to_bytes_bf16",
    };
    int ret = CHECK_CU(c->cu->cuModuleLoadData(&c->module, th_ptx));

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
    CUcontext dummy;

    if (!c->module || CHECK_CU(c->cu->cuCtxPushCurrent(c->primary_ctx)) < 0)
        return;
    CHECK_CU(c->cu->cuModuleUnload(c->module));
    CHECK_CU(c->cu->cuCtxPopCurrent(&dummy));
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
    CUcontext dummy;
    int ret;

    if (c->kernels < 0 || o->dtype < 0 || o->dtype > 2)
        return AVERROR(ENOSYS);
    ret = CHECK_CU(c->cu->cuCtxPushCurrent(c->primary_ctx));
    if (ret < 0)
        return ret;
    if (!c->kernels)
        c->kernels = th_load_kernels(c) < 0 ? -1 : 1;
    ret = c->kernels < 0 ? AVERROR(ENOSYS) :
          CHECK_CU(c->cu->cuLaunchKernel(c->to_bytes[o->dtype], (w + 127) / 128,
                                         o->height, 1, 128, 1, 1, 0,
                                         (CUstream)stream, args, NULL));
    CHECK_CU(c->cu->cuCtxPopCurrent(&dummy));
    return ret;
}

int ff_dnn_th_cudactx_init(THCudaCtx **pc, void *log_ctx, AVBufferRef *frames_ref,
                           int *device_index, int *primary)
{
    AVHWFramesContext *frames = (AVHWFramesContext *)frames_ref->data;
    THCudaCtx *c;
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

    ret = CHECK_CU(c->cu->cuDevicePrimaryCtxRetain(&c->primary_ctx,
                                                    c->hwctx->internal->cuda_device));
    if (ret < 0) {
        c->primary_ctx = NULL;
        return ret;
    }
    ret = create_event(c, c->hwctx->cuda_ctx, &c->frames_ready);
    if (ret >= 0)
        ret = create_event(c, c->primary_ctx, &c->torch_done);
    if (ret < 0)
        return ret;

    *device_index = c->hwctx->internal->cuda_device;
    *primary      = c->primary_ctx == c->hwctx->cuda_ctx;
    return 0;
}

void ff_dnn_th_cudactx_uninit(THCudaCtx **pc)
{
    THCudaCtx *c = *pc;

    if (!c)
        return;
    if (c->hwctx) {
        destroy_event(c, c->hwctx->cuda_ctx, &c->frames_ready);
        if (c->primary_ctx) {
            th_unload_kernels(c);
            destroy_event(c, c->primary_ctx, &c->torch_done);
            CHECK_CU(c->cu->cuDevicePrimaryCtxRelease(c->hwctx->internal->cuda_device));
        }
    }
    av_buffer_unref(&c->frames_ref);
    av_freep(pc);
}

void *ff_dnn_th_cudactx_stream(const THCudaCtx *c)
{
    return c->hwctx->stream;
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

int ff_dnn_th_cudactx_wait_frames(THCudaCtx *c, void *stream)
{
    int ret = ff_dnn_th_cudactx_push(c);

    if (ret < 0)
        return ret;
    ret = CHECK_CU(c->cu->cuEventRecord(c->frames_ready, c->hwctx->stream));
    ff_dnn_th_cudactx_pop(c);
    if (ret < 0)
        return ret;
    return CHECK_CU(c->cu->cuStreamWaitEvent((CUstream)stream, c->frames_ready, 0));
}

int ff_dnn_th_cudactx_signal_frames(THCudaCtx *c, void *stream)
{
    int ret = CHECK_CU(c->cu->cuEventRecord(c->torch_done, (CUstream)stream));

    if (ret < 0)
        return ret;
    ret = ff_dnn_th_cudactx_push(c);
    if (ret < 0)
        return ret;
    ret = CHECK_CU(c->cu->cuStreamWaitEvent(c->hwctx->stream, c->torch_done, 0));
    ff_dnn_th_cudactx_pop(c);
    return ret;
}
