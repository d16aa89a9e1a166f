/*
 * LibTorch DNN backend: windows of neighbouring frames for temporal models
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
 * With window=N > 1 the model's forward gets 1 x N x C x H x W, N
 * consecutive frames in time order, and returns the output for one of
 * them: the middle one (window_anchor=center, N odd: the output of frame t
 * waits for frame t + N/2) or the newest (last: no delay).
 *
 * Each frame is converted once, into a ring of N converted frames (the
 * model's dtype, layout and device); the window of a task is copied from
 * the ring into its request's grow-only input when the task is handed on.
 * A segment is a run of frames of one size, format and frames context; at
 * its ends (the start and the end of the stream, and where it is cut) the
 * window repeats the nearest frame of the segment.
 *
 * The tasks' bookkeeping (waiting for the frames after their own, the
 * segments) is the DNN layer's DNNWindow; this unit keeps the ring and
 * assembles the windows.  It keeps no frame and runs no model: the backend
 * gives it each task once the frame is in the ring, and it calls back for
 * each task whose window is complete, in order.
 */

#ifndef AVFILTER_DNN_DNN_BACKEND_TORCH_WINDOW_H
#define AVFILTER_DNN_DNN_BACKEND_TORCH_WINDOW_H

#include <torch/script.h>

extern "C" {
#include "libavutil/frame.h"
#include "dnn_backend_common.h"
}

#include "dnn_backend_torch_cuda.h"

typedef struct THWindow THWindow;

/* One frame of the ring: its grow-only store and the frame converted in it. */
struct THWindowSlot {
    torch::Tensor store;
    torch::Tensor input;    ///< 1 x C x H x W, a view of store (or its own)
};

/**
 * Make the ring (the DNN layer has checked the options); size 1 leaves *w
 * NULL (no window).
 */
int ff_dnn_th_window_init(THWindow **w, void *log_ctx, int size,
                          DNNWindowAnchor anchor);

void ff_dnn_th_window_free(THWindow **w);

/** The slot the next frame is converted into. */
THWindowSlot &ff_dnn_th_window_next(THWindow *w);

/**
 * The frame is in ff_dnn_th_window_next()'s slot: count it and queue its
 * task; submit(opaque, ...) the tasks whose window is now complete.
 */
int ff_dnn_th_window_push(THWindow *w, const AVFrame *in, TaskItem *task,
                          DNNWindowSubmit submit, void *opaque);

/**
 * Before a frame (in) is converted, or at flush (in NULL): where in starts
 * a new segment, or at flush, submit every waiting task, the end of the
 * segment repeated, and start a new segment.
 */
int ff_dnn_th_window_cut(THWindow *w, const AVFrame *in, DNNWindowSubmit submit,
                         void *opaque);

/**
 * The 1 x N x C x H x W view of a window in store (grown to hold it): NCHW
 * frames one after the other, or, channels-last, H x W x N x C in memory,
 * so that frames stacked along C are a view in both layouts.
 */
torch::Tensor ff_dnn_th_window_view(const THWindow *w, const THInputSpec &spec,
                                    const c10::Device &device, torch::Tensor &store,
                                    int channels, int height, int width);

/** Copy the window of frame index from the ring into store, as input. */
int ff_dnn_th_window_input(THWindow *w, int64_t index, const THInputSpec &spec,
                           torch::Tensor &store, torch::Tensor &input);

/** A window model's output is for one frame: one error line otherwise. */
int ff_dnn_th_window_check_output(const THWindow *w, void *log_ctx,
                                  const torch::Tensor &out);

/** What a failed probe was given, for its error line. */
void ff_dnn_th_window_probe_what(const THWindow *w, char *buf, size_t size,
                                 int channels, int width, int height);

#endif /* AVFILTER_DNN_DNN_BACKEND_TORCH_WINDOW_H */
