/*
 * LibTorch DNN backend: the CUDA unit
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

/**
 * @file
 * The CUDA unit of the torch backend, a C++ interface used only by
 * dnn_backend_torch.cpp.  The CPU path never enters it.
 *
 * Built without --enable-libtorch-cuda, the unit is replaced by
 * the inline stubs at the end of this file: the backend calls it the same
 * way, no THCuda or THCudaStage is ever made, and a call that would need
 * one fails with AVERROR(ENOSYS).
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_CUDA_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_CUDA_H

#include <functional>
#include <torch/script.h>

#include "config.h"

extern "C" {
#include "libavutil/buffer.h"
#include "libavutil/error.h"
#include "libavutil/frame.h"
#include "libavutil/log.h"
#include "libavutil/pixfmt.h"
}

typedef struct THCuda THCuda;
typedef struct THCudaStage THCudaStage;

/** The model's input: its dtype, and NHWC strides for a channels-last model. */
struct THInputSpec {
    torch::ScalarType dtype;
    bool channels_last;
};

#if CONFIG_LIBTORCH_CUDA  /* which depends on cuda: FFmpeg's CUDA is there too */

/**
 * The sw_formats of the CUDA frames the unit takes in place, the one list
 * of them: packed RGB (the padding byte of 4-byte pixels written as 255,
 * alpha kept) and the YUV formats NVDEC decodes to; AV_PIX_FMT_NONE-terminated.
 */
extern const enum AVPixelFormat ff_dnn_th_cuda_sw_formats[];

/**
 * Prepare zero-copy processing of the CUDA frames of a frames context
 * (the filter's input's, DNNModel.input_frames_ctx).
 *
 * @param device_index set to the CUDA device of the frames
 * @return 0 or an AVERROR (logged)
 */
int ff_dnn_th_cuda_init(THCuda **cuda, void *log_ctx, AVBufferRef *frames_ref,
                        int *device_index);

void ff_dnn_th_cuda_uninit(THCuda **cuda);

/**
 * Say at verbose level which GPU the model runs on.  It reads LibTorch's
 * at::cuda device properties, of libtorch_cuda: FFmpeg's one reference to
 * that library, so that --as-needed links keep it (its load registers
 * LibTorch's CUDA kernels) with no linker option.
 */
void ff_dnn_th_cuda_log_device(void *log_ctx, int device_index);

/** sw_format of the frames; the output frames have the same. */
enum AVPixelFormat ff_dnn_th_cuda_sw_format(const THCuda *cuda);

/**
 * Run work() on the frames' device, ordered after everything queued on
 * FFmpeg's stream of the frames, and later work there after it.  Frames in
 * the device's primary context: on FFmpeg's stream, with FFmpeg's context
 * pushed, no host sync.  Frames in a context of FFmpeg's own: on
 * LibTorch's current stream, the host waiting for FFmpeg's stream before
 * and for LibTorch's after.
 */
int ff_dnn_th_cuda_run(THCuda *cuda, const std::function<int()> &work);

/** 1 for YUV frames (not RGB): only a one-channel model takes them, its
 *  Y plane. */
int ff_dnn_th_cuda_is_yuv(const THCuda *cuda);

/**
 * Map a CUDA frame as a 1xCxHxW tensor in [0, 1] of the spec's dtype and
 * layout: packed RGB into store (C=3), or a YUV frame's Y plane (C=1; YUV
 * for another C is an error: scale_cuda converts it to RGB).
 */
int ff_dnn_th_cuda_frame_to_tensor(THCuda *cuda, const AVFrame *frame, int channels,
                                   const THInputSpec &spec, torch::Tensor &store,
                                   torch::Tensor &input);

/**
 * Write a 1xCxHxW model output of the frame's size into a CUDA frame,
 * device to device; for a one-channel output into YUV, chroma is copied
 * from the input frame (of the same size: get_output refuses others).
 */
int ff_dnn_th_cuda_tensor_to_frame(THCuda *cuda, const torch::Tensor &output,
                                   const AVFrame *in, AVFrame *frame);

/*
 * CPU frames for a model on a CUDA device, one stage per request: its own
 * stream, grow-only page-locked host buffers and device buffers, so that
 * the upload of one request overlaps the model on another.  A stage's
 * buffers are written again only by the next upload of its request, which
 * the backend starts after ff_dnn_th_cuda_stage_finish() has waited for the
 * stage's stream: no copy of the previous frame is still reading them.
 * *stage is set only on success.
 */
int ff_dnn_th_cuda_stage_alloc(THCudaStage **stage, void *log_ctx, int device_index);
void ff_dnn_th_cuda_stage_free(THCudaStage **stage);

/** Run work() with the stage's stream current; exceptions become AVERRORs. */
int ff_dnn_th_cuda_stage_run(THCudaStage *stage, const std::function<int()> &work);

/**
 * Copy plane 0 of a CPU frame (packed bytes, gray or grayf32) to the device
 * asynchronously and convert it into input (its dtype and strides kept);
 * byte[c] is the byte of model channel c in a pixel.
 */
int ff_dnn_th_cuda_stage_upload(THCudaStage *stage, const AVFrame *in, int channels,
                                const int *byte, torch::Tensor &input);

/**
 * Convert a 1xCxHxW model output to the frame's bytes on the device and
 * start their copy to the host; ff_dnn_th_cuda_stage_finish() waits for it.
 */
int ff_dnn_th_cuda_stage_download(THCudaStage *stage, const torch::Tensor &output,
                                  const int *byte, AVFrame *out);

/** Wait for the stage's stream, then copy the bytes into plane 0 of out. */
int ff_dnn_th_cuda_stage_finish(THCudaStage *stage, AVFrame *out);

#else /* !CONFIG_LIBTORCH_CUDA */

static const enum AVPixelFormat *const ff_dnn_th_cuda_sw_formats = NULL;

static inline int ff_dnn_th_cuda_init(THCuda **, void *log_ctx, AVBufferRef *,
                                      int *)
{
    av_log(log_ctx, AV_LOG_ERROR, "CUDA frames need FFmpeg built with "
           "--enable-libtorch-cuda and CUDA; put hwdownload before the filter\n");
    return AVERROR(ENOSYS);
}

static inline void ff_dnn_th_cuda_uninit(THCuda **)
{
}

static inline void ff_dnn_th_cuda_log_device(void *, int)
{
}

static inline enum AVPixelFormat ff_dnn_th_cuda_sw_format(const THCuda *)
{
    return AV_PIX_FMT_NONE;
}

static inline int ff_dnn_th_cuda_run(THCuda *, const std::function<int()> &)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_is_yuv(const THCuda *)
{
    return 0;
}

static inline int ff_dnn_th_cuda_frame_to_tensor(THCuda *, const AVFrame *, int,
                                                 const THInputSpec &, torch::Tensor &,
                                                 torch::Tensor &)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_tensor_to_frame(THCuda *, const torch::Tensor &,
                                                 const AVFrame *, AVFrame *)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_stage_alloc(THCudaStage **, void *, int)
{
    return AVERROR(ENOSYS);
}

static inline void ff_dnn_th_cuda_stage_free(THCudaStage **)
{
}

static inline int ff_dnn_th_cuda_stage_run(THCudaStage *, const std::function<int()> &)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_stage_upload(THCudaStage *, const AVFrame *, int,
                                              const int *, torch::Tensor &)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_stage_download(THCudaStage *, const torch::Tensor &,
                                                const int *, AVFrame *)
{
    return AVERROR(ENOSYS);
}

static inline int ff_dnn_th_cuda_stage_finish(THCudaStage *, AVFrame *)
{
    return AVERROR(ENOSYS);
}

#endif /* CONFIG_LIBTORCH_CUDA */

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_CUDA_H */
