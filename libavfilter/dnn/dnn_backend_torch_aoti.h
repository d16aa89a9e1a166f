/*
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
 * AOTInductor packages (.pt2, torch.export + AOTInductor) for the torch
 * backend: what the package declares, loading it, running it.
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_AOTI_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_AOTI_H

#include <torch/torch.h>

typedef struct THAoti THAoti;

/** 1 when the file is an AOTInductor package (by its content), else 0. */
int ff_dnn_th_aoti_is_package(const char *path);

/**
 * Load a package for a device of its kind.  want is the device the user
 * asked for (cpu when no option was given); *device is set to where the
 * package runs.  Errors are logged in one line, naming the package's device.
 */
int ff_dnn_th_aoti_load(THAoti **aoti, void *log_ctx, const char *path,
                        bool device_given, c10::Device *device);

void ff_dnn_th_aoti_free(THAoti **aoti);

/** The dtype of the package's floating-point weights (float32 if none). */
torch::ScalarType ff_dnn_th_aoti_dtype(const THAoti *aoti);

/**
 * The layout of the package's input: 1 NHWC strides (exported from a
 * channels-last input), 0 contiguous NCHW, -1 when its checks do not say
 * (the input is then given as it comes).
 */
int ff_dnn_th_aoti_channels_last(const THAoti *aoti);

/** Load the package again on another device of the same kind (CUDA frames). */
int ff_dnn_th_aoti_to_device(THAoti *aoti, void *log_ctx, const c10::Device &device);

/**
 * Run the package on one input of its dtype and device (made dense in the
 * package's layout when it is not); on CUDA on the current stream.  Throws,
 * as a TorchScript forward does, with the package's own words for an input
 * it was not exported for.
 */
torch::Tensor ff_dnn_th_aoti_run(THAoti *aoti, const torch::Tensor &input);

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_AOTI_H */
