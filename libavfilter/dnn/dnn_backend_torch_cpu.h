/*
 * LibTorch DNN backend: CPU frames into the model's input and back
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
 * The two conversions of a model on the CPU: 8-bit packed RGB/BGR or gray
 * into the model's input (its dtype, NCHW or channels-last strides) as
 * x * (1 / 255), in one pass; the model's output (float, half or bfloat16, any
 * strides: channels-last output is read as the packed pixels it is in
 * memory) into an 8-bit frame, clamped to [0, 1] (NaN gives 0), * 255,
 * rounded to nearest.  The output is converted where the forward ran, on
 * its intra-op threads: with more than one, by LibTorch's vectorized
 * operations on them (through a grow-only float store); with one, in one
 * pass of our own, which is faster alone.  The values are the same.
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_CPU_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_CPU_H

#include <torch/script.h>

extern "C" {
#include "libavutil/frame.h"
}

/*
 * byte[c]: the byte of a pixel that carries model channel c (the model
 * always sees R, G, B).  input: 1 x channels x height x width.
 */
void ff_dnn_th_cpu_frame_to_input(const AVFrame *in, int channels, const int *byte,
                                  const torch::Tensor &input);

/*
 * output: channels x height x width, the size of out, on the CPU, of a
 * floating type (other than float, half and bfloat16: converted first);
 * store: the caller's, kept from frame to frame.
 */
void ff_dnn_th_cpu_output_to_frame(const torch::Tensor &output, int channels,
                                   const int *byte, AVFrame *out, torch::Tensor &store);

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_CPU_H */
