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
#include "libavutil/avassert.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"
}

#include "dnn_backend_torch_window.h"

struct THWaiting {
    TaskItem *task;
    int64_t index;          ///< its frame in the segment
};

struct THWindow {
    void *log_ctx;
    int size;               ///< N, frames per window
    int anchor;
    int delay;              ///< frames a task waits for: N / 2 (center) or 0
    THWindowSlot slot[TH_WINDOW_MAX];   ///< frame i of the segment in slot i % N

    /* the segment: frames of one size, format and frames context */
    int64_t frames;         ///< frames of the segment in the ring so far
    int width, height, format;
    const void *frames_ctx;

    /* tasks whose window is not complete yet, oldest first */
    THWaiting waiting[TH_WINDOW_MAX];
    int first, nb_waiting;
};

int ff_dnn_th_window_init(THWindow **w, void *log_ctx, int size, int anchor,
                          int batch)
{
    *w = NULL;
    if (size <= 1)
        return 0;
    if (anchor == TH_WINDOW_CENTER && !(size & 1)) {
        av_log(log_ctx, AV_LOG_ERROR, "window=%d with window_anchor=center: the "
               "middle frame needs an odd window (%d or %d), or use "
               "window_anchor=last\n", size, size - 1, size + 1);
        return AVERROR(EINVAL);
    }
    if (batch > 1) {
        av_log(log_ctx, AV_LOG_ERROR, "batch_size %d with window=%d: a window "
               "model runs one window per forward; use batch_size=1\n", batch, size);
        return AVERROR(ENOSYS);
    }
    *w = new (std::nothrow) THWindow();
    if (!*w)
        return AVERROR(ENOMEM);
    (*w)->log_ctx = log_ctx;
    (*w)->size    = size;
    (*w)->anchor  = anchor;
    (*w)->delay   = anchor == TH_WINDOW_CENTER ? size / 2 : 0;
    return 0;
}

void ff_dnn_th_window_free(THWindow **w)
{
    delete *w;
    *w = NULL;
}

THWindowSlot &ff_dnn_th_window_next(THWindow *w)
{
    return w->slot[w->frames % w->size];
}

/* Submit the oldest waiting task. */
static int th_window_pop(THWindow *w, const THWindowSubmit &submit)
{
    THWaiting t = w->waiting[w->first];

    w->first = (w->first + 1) % TH_WINDOW_MAX;
    w->nb_waiting--;
    return submit(t.task, t.index);
}

int ff_dnn_th_window_push(THWindow *w, const AVFrame *in, TaskItem *task,
                          const THWindowSubmit &submit)
{
    int ret = 0;

    av_assert0(w->nb_waiting < TH_WINDOW_MAX);
    if (!w->frames) {
        w->width      = in->width;
        w->height     = in->height;
        w->format     = in->format;
        w->frames_ctx = in->hw_frames_ctx ? in->hw_frames_ctx->data : NULL;
    }
    w->waiting[(w->first + w->nb_waiting++) % TH_WINDOW_MAX] = { task, w->frames++ };
    /* a task goes once the frame delay frames after its own is in */
    while (ret >= 0 && w->nb_waiting &&
           w->waiting[w->first].index + w->delay < w->frames)
        ret = th_window_pop(w, submit);
    return ret;
}

int ff_dnn_th_window_cut(THWindow *w, const AVFrame *in, const THWindowSubmit &submit)
{
    int ret = 0;

    if (in && (!w->frames || (in->width == w->width && in->height == w->height &&
                              in->format == w->format &&
                              (in->hw_frames_ctx ? in->hw_frames_ctx->data : NULL) ==
                              w->frames_ctx)))
        return 0;
    while (ret >= 0 && w->nb_waiting)
        ret = th_window_pop(w, submit);
    /* after an error the tasks left are freed with the model */
    w->first = w->nb_waiting = 0;
    w->frames = 0;
    return ret;
}

torch::Tensor ff_dnn_th_window_view(const THWindow *w, const THInputSpec &spec,
                                    const c10::Device &device, torch::Tensor &store,
                                    int channels, int height, int width)
{
    const int64_t n = w->size, numel = n * channels * height * width;

    if (!store.defined() || store.numel() < numel || store.scalar_type() != spec.dtype ||
        store.device() != device)
        store = torch::empty({ numel }, torch::TensorOptions().dtype(spec.dtype).device(device));
    if (spec.channels_last)
        return store.narrow(0, 0, numel).view({ 1, height, width, n, channels })
                    .permute({ 0, 3, 4, 1, 2 });
    return store.narrow(0, 0, numel).view({ 1, n, channels, height, width });
}

/* Frame k of the window of frame index, the segment's edge repeated. */
static int64_t th_window_frame(const THWindow *w, int64_t index, int k)
{
    int64_t i = index - (w->size - 1 - w->delay) + k;

    return i < 0 ? 0 : i >= w->frames ? w->frames - 1 : i;
}

int ff_dnn_th_window_input(THWindow *w, int64_t index, const THInputSpec &spec,
                           torch::Tensor &store, torch::Tensor &input)
{
    const torch::Tensor &own = w->slot[index % w->size].input;

    try {
        torch::NoGradGuard no_grad;
        input = ff_dnn_th_window_view(w, spec, own.device(), store, (int)own.size(1),
                                      (int)own.size(2), (int)own.size(3));
        for (int k = 0; k < w->size; k++) {
            int64_t i = th_window_frame(w, index, k);
            av_assert0(i >= 0 && i < w->frames && w->frames - i <= w->size);
            input.select(1, k).copy_(w->slot[i % w->size].input);
        }
    } catch (const std::exception &e) {
        av_log(w->log_ctx, AV_LOG_ERROR, "could not assemble the window of %d "
               "frames: %s\n", w->size, e.what());
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
               out.size(1), w->size);
        return AVERROR(EINVAL);
    }
    if (out.dim() == 4 && out.size(0) != 1) {
        av_log(log_ctx, AV_LOG_ERROR, "model output has %" PRId64 " frames; a model "
               "of window=%d returns the output of one frame, 1 x C x H x W\n",
               out.size(0), w->size);
        return AVERROR(EINVAL);
    }
    return 0;
}

void ff_dnn_th_window_probe_what(const THWindow *w, char *buf, size_t size,
                                 int channels, int width, int height)
{
    snprintf(buf, size, "model failed on a window probe input 1x%dx%dx%dx%d "
             "(window=%d: 1 x N x C x H x W)", w->size, channels, height, width,
             w->size);
}
