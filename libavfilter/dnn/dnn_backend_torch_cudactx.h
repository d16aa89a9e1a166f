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

/**
 * @file
 * FFmpeg's CUDA context, stream and kernels for the torch backend, through
 * FFmpeg's dynamically loaded driver API.  C, because FFmpeg's CUDA loader
 * and the CUDA toolkit headers LibTorch includes cannot share a unit.
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_CUDACTX_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_CUDACTX_H

#include <stdint.h>

#include "libavutil/buffer.h"

typedef struct THCudaCtx THCudaCtx;

/**
 * @param frames_ref  the CUDA frames context of the input
 * @param device_index set to the frames' CUDA device
 * *c is set also when this fails: call ff_dnn_th_cudactx_uninit() then too.
 */
int ff_dnn_th_cudactx_init(THCudaCtx **c, void *log_ctx, AVBufferRef *frames_ref,
                           int *device_index);
void ff_dnn_th_cudactx_uninit(THCudaCtx **c);

/** FFmpeg's stream of the frames (may be NULL: that context's default). */
void *ff_dnn_th_cudactx_stream(const THCudaCtx *c);

/**
 * Whether the frames are in the device's primary context, the one LibTorch
 * works in: then LibTorch can work on FFmpeg's stream.
 */
int ff_dnn_th_cudactx_primary(const THCudaCtx *c);

/** Wait on the host for the work queued on FFmpeg's stream. */
int ff_dnn_th_cudactx_sync(THCudaCtx *c);

/** Push FFmpeg's context on the calling thread; pop it again. */
int ff_dnn_th_cudactx_push(THCudaCtx *c);
void ff_dnn_th_cudactx_pop(THCudaCtx *c);

/** A model output to write into packed 8-bit pixels. */
typedef struct THBytesOut {
    const void *src;        ///< C x H x W, in the frames' VRAM
    int dtype;              ///< 0 float32, 1 float16, 2 bfloat16
    int64_t stride[3];      ///< of src, in bytes: channel, row, column
    int channels;           ///< 1 or 3, written from src's first channels
    void *dst;              ///< the first pixel
    int linesize, bpp;
    int byte[3];            ///< byte in the pixel of each channel
    int pad;                ///< byte set to 255, or -1
    int width, height;
} THBytesOut;

/**
 * Queue on stream the conversion of o->src to bytes:
 * round(clamp(v * 255, 0, 255)), NaN as 0.  AVERROR(ENOSYS) when the
 * kernels cannot be used here (not built, or the frames outside the
 * primary context) or the frame has over 65535 rows: the caller converts
 * another way.
 */
int ff_dnn_th_cudactx_to_bytes(THCudaCtx *c, void *stream, const THBytesOut *o);

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_CUDACTX_H */
