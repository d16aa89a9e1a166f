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

#include "config.h"

extern "C" {
#include "libavutil/error.h"
}

typedef struct THAoti THAoti;

#if CONFIG_LIBTORCH_AOTI

/** 1 when the file is an AOTInductor package (by its content), else 0. */
int ff_dnn_th_aoti_is_package(const char *path);

/**
 * Load a package for a device of its kind.  *device is the device the
 * user asked for (cpu when no option was given) and is set to where the
 * package runs.  Errors are logged in one line: a package of another
 * device, or one whose metadata does not describe its input.
 */
int ff_dnn_th_aoti_load(THAoti **aoti, void *log_ctx, const char *path,
                        bool device_given, c10::Device *device);

void ff_dnn_th_aoti_free(THAoti **aoti);

/** The dtype of the package's input, as its metadata says. */
torch::ScalarType ff_dnn_th_aoti_dtype(const THAoti *aoti);

/**
 * The layout of the package's input, as its metadata says: 1 NHWC strides
 * (exported from a channels-last input; for a window, 1 x N x C x H x W,
 * H x W x N x C in memory), 0 contiguous NCHW (or NCHW frames in a row).
 */
int ff_dnn_th_aoti_channels_last(const THAoti *aoti);

/**
 * The input channels of every model of the package (C of 1 x C x H x W,
 * or of 1 x N x C x H x W for a window): 1 or 3, else 0.
 */
int ff_dnn_th_aoti_channels(const THAoti *aoti);

/** Load the package again on another device of the same kind (CUDA frames). */
int ff_dnn_th_aoti_to_device(THAoti *aoti, void *log_ctx, const c10::Device &device);

/**
 * Run the package on one input of its dtype and device (made dense in the
 * package's layout when it is not); on CUDA on the current stream.  Throws,
 * as a TorchScript forward does, with the package's own words for an input
 * it was not exported for: another size, or another window (a 5-D input
 * for a 4-D package, 4-D for a 5-D one, a window of another N).
 */
torch::Tensor ff_dnn_th_aoti_run(THAoti *aoti, const torch::Tensor &input);

#else
/* Built without --enable-libtorch-aoti: every file is TorchScript. */
static inline int ff_dnn_th_aoti_is_package(const char *path) { return 0; }
static inline int ff_dnn_th_aoti_load(THAoti **aoti, void *log_ctx, const char *path,
                                      bool device_given, c10::Device *device)
{
    return AVERROR(ENOSYS);
}
static inline void ff_dnn_th_aoti_free(THAoti **aoti) {}
static inline torch::ScalarType ff_dnn_th_aoti_dtype(const THAoti *aoti) { return torch::kFloat32; }
static inline int ff_dnn_th_aoti_channels_last(const THAoti *aoti) { return 0; }
static inline int ff_dnn_th_aoti_channels(const THAoti *aoti) { return 0; }
static inline int ff_dnn_th_aoti_to_device(THAoti *aoti, void *log_ctx, const c10::Device &device)
{
    return AVERROR(ENOSYS);
}
static inline torch::Tensor ff_dnn_th_aoti_run(THAoti *aoti, const torch::Tensor &input)
{
    throw std::runtime_error("no AOTInductor package loader in this build");
}
#endif /* CONFIG_LIBTORCH_AOTI */

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_AOTI_H */
