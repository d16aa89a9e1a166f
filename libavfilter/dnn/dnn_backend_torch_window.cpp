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

#include <cinttypes>
#include <cstdio>
#include <new>

extern "C" {
#include "config.h"
#include "libavutil/error.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"
}

#include "dnn_backend_torch_window.h"

struct THWindow {
    void *log_ctx;
    DNNWindow tasks;        ///< N (size), the segment and its waiting tasks
    THWindowSlot slot[DNN_WINDOW_MAX];  ///< frame i of the segment in slot i % N
};

int ff_dnn_th_window_init(THWindow **w, void *log_ctx, int size,
                          DNNWindowAnchor anchor)
{
    *w = NULL;
    if (size <= 1)
        return 0;
    *w = new (std::nothrow) THWindow();
    if (!*w)
        return AVERROR(ENOMEM);
    (*w)->log_ctx = log_ctx;
    ff_dnn_window_init(&(*w)->tasks, size, anchor);
    return 0;
}

void ff_dnn_th_window_free(THWindow **w)
{
    delete *w;
    *w = NULL;
}

THWindowSlot &ff_dnn_th_window_next(THWindow *w)
{
    return w->slot[w->tasks.frames % w->tasks.size];
}

int ff_dnn_th_window_push(THWindow *w, const AVFrame *in, TaskItem *task,
                          DNNWindowSubmit submit, void *opaque)
{
    return ff_dnn_window_push(&w->tasks, in, task, submit, opaque);
}

int ff_dnn_th_window_cut(THWindow *w, const AVFrame *in, DNNWindowSubmit submit,
                         void *opaque)
{
    return ff_dnn_window_cut(&w->tasks, in, submit, opaque);
}

torch::Tensor ff_dnn_th_window_view(const THWindow *w, const THInputSpec &spec,
                                    const c10::Device &device, torch::Tensor &store,
                                    int channels, int height, int width)
{
    const int64_t n = w->tasks.size, numel = n * channels * height * width;

    if (!store.defined() || store.numel() < numel || store.scalar_type() != spec.dtype ||
        store.device() != device)
        store = torch::empty({ numel }, torch::TensorOptions().dtype(spec.dtype).device(device));
    if (spec.channels_last)
        return store.narrow(0, 0, numel).view({ 1, height, width, n, channels })
                    .permute({ 0, 3, 4, 1, 2 });
    return store.narrow(0, 0, numel).view({ 1, n, channels, height, width });
}

int ff_dnn_th_window_input(THWindow *w, int64_t index, const THInputSpec &spec,
                           torch::Tensor &store, torch::Tensor &input)
{
    const torch::Tensor &own = w->slot[index % w->tasks.size].input;

    try {
        torch::NoGradGuard no_grad;
        input = ff_dnn_th_window_view(w, spec, own.device(), store, (int)own.size(1),
                                      (int)own.size(2), (int)own.size(3));
        for (int k = 0; k < w->tasks.size; k++) {
            int64_t i = ff_dnn_window_frame(&w->tasks, index, k);
            if (i < 0 || i >= w->tasks.frames || w->tasks.frames - i > w->tasks.size) {
                av_log(w->log_ctx, AV_LOG_ERROR, "frame %" PRId64 " of the window "
                       "is not in the ring\n", i);
                return AVERROR_BUG;
            }
            input.select(1, k).copy_(w->slot[i % w->tasks.size].input);
        }
    } catch (const std::exception &e) {
        av_log(w->log_ctx, AV_LOG_ERROR, "could not assemble the window of %d "
               "frames: %s\n", w->tasks.size, e.what());
        return AVERROR_EXTERNAL;
    }
    return 0;
}

int ff_dnn_th_window_check_output(const THWindow *w, void *log_ctx,
                                  const torch::Tensor &out)
{
    if (!w)
        return 0;
    if (out.dim() == 5) {
        av_log(log_ctx, AV_LOG_ERROR, "model output is 5-D (%" PRId64 " frames); "
               "a model of window=%d returns the output of one frame, 1 x C x H x W\n",
               out.size(1), w->tasks.size);
        return AVERROR(EINVAL);
    }
    if (out.dim() == 4 && out.size(0) != 1) {
        av_log(log_ctx, AV_LOG_ERROR, "model output has %" PRId64 " frames; a model "
               "of window=%d returns the output of one frame, 1 x C x H x W\n",
               out.size(0), w->tasks.size);
        return AVERROR(EINVAL);
    }
    return 0;
}

void ff_dnn_th_window_probe_what(const THWindow *w, char *buf, size_t size,
                                 int channels, int width, int height)
{
    snprintf(buf, size, "model failed on a window probe input 1x%dx%dx%dx%d "
             "(window=%d: 1 x N x C x H x W)", w->tasks.size, channels, height, width,
             w->tasks.size);
}
