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
};

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
