/*
 * Copyright (c) 2024
 *
 * LibTorch DNN backend
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
 * DNN backend running TorchScript models through LibTorch.
 *
 * Each inference request owns its tensors for its whole life: a grow-only
 * input store on the model's device, a staging store for frames that live
 * elsewhere and a grow-only store for the conversion back to 8 bits.  They
 * are reallocated only when a frame needs more than they hold.
 *
 * With async=1 worker threads (the DNN layer's pool of threads) run the
 * requests:
 * on the CPU one worker per batch of requests (a batch is one request by
 * default), so that forwards run side by side, each with its share of the
 * cores as LibTorch intra-op threads; on CUDA one worker that runs them in
 * order.  The filter thread
 * converts the next frame meanwhile.  Frames leave in the order they came,
 * whatever order the forwards end in.
 * With batch_size > 1 consecutive frames of one size and format form a
 * batch led by its first request, its lead: the filter thread converts CPU
 * frames into the lead's input (on the model's device); CUDA frames are
 * converted by the worker and joined.  The batch goes to a worker when
 * full, when size, format or frames context change and at flush; one
 * forward, then each request writes its slice of the output.
 * flush() waits for the workers, free_model() stops and joins them.  No C++
 * exception leaves this file: every entry point catches and returns an
 * AVERROR.
 */

#include <algorithm>
#include <cstdio>
#include <ATen/Parallel.h>
#include <ATen/cpu/Utils.h>
#include <ATen/detail/XPUHooksInterface.h>
#include <torch/version.h>
#include <torch/script.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>

extern "C" {
#include "config.h"
#include "libavutil/avassert.h"
#include "libavutil/avstring.h"
#include "libavutil/cpu.h"
#include "libavutil/file_open.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"
#include "libavutil/pixdesc.h"
#include "libavutil/thread.h"
#include "dnn_backend_common.h"
#include "queue.h"
}

#include "dnn_backend_torch_aoti.h"
#include "dnn_backend_torch_cpu.h"
#include "dnn_backend_torch_cuda.h"
#include "dnn_backend_torch_window.h"

typedef struct THInferRequest {
    struct THModel *model;
    TaskItem *task;
    std::vector<struct THInferRequest *> batch; ///< as lead: the requests of
                             ///< its forward, itself first, in input order
    torch::Tensor input;     ///< model input, a view of in_store (as lead:
                             ///< every frame of the batch)
    torch::Tensor output;    ///< model output of the last run
    torch::Tensor in_store;  ///< grow-only float store on the model's device
    torch::Tensor stage;     ///< grow-only uint8 store, frame -> device
    torch::Tensor out_store; ///< grow-only float store for post-processing
    torch::Tensor out_stage; ///< grow-only uint8 store on the device
    torch::Tensor out_host;  ///< grow-only uint8 store, device -> frame
    THCudaStage *cuda_stage; ///< CPU frames, model on CUDA: stream and buffers
    int finish;              ///< output still on its way to the host
    int ret;                 ///< as lead: what its forward on a worker gave
    DNNAsyncExecModule exec_module; ///< as lead: its batch as the workers' task
} THInferRequest;

typedef struct THModel {
    DNNModel model;
    DnnContext *ctx;
    torch::jit::Module *jit_model;
    THAoti *aoti;               ///< an AOTInductor package instead of jit_model
    c10::DeviceType device_type;
    int device_index;
    int pinned_index;           ///< the GPU the options name, or -1

    THInferRequest **requests;
    int nb_requests;
    Queue *request_queue;       ///< free requests: filled at init, then taken and
                                ///< given back under mutex
    Queue *task_queue;          ///< tasks in submission order

    /* async execution: workers, the rest guarded by mutex */
    DNNAsyncPool *workers;      ///< the DNN layer's pool of threads
    int nb_workers;             ///< its threads
    THInferRequest *prev;       ///< the one worker (CUDA): run, output still
                                ///< on its way to the host
    int started;                ///< th_start() ran: requests made, workers started
    int intra_threads;          ///< LibTorch intra-op threads per forward (0: its default)
    int default_threads;        ///< LibTorch's count, as the filter thread read it at load
    int batch;                  ///< frames per forward (batch_size)
    THInferRequest *forming;    ///< lead of a batch not yet full (filter thread)
    int sync_init;              ///< mutex and cond are initialised
    AVMutex mutex;
    AVCond cond;
    int waiting;                ///< batches handed to the workers, not started
    int inflight;               ///< requests handed to the workers, not done
    int quit;
    int error;                  ///< first inference error; sticks

    THCuda *cuda;               ///< set when the input link has CUDA frames
    int cuda_channels;          ///< model channels for CUDA frames (3 or 1)
    torch::ScalarType dtype;    ///< what the model runs in (precision)
    int channels_last;          ///< weights and input in channels-last layout
    int in_channels;            ///< channels the model takes, as it says or
                                ///< its first weight shows (3 or 1; 0: unknown)
    THWindow *window;           ///< window > 1: the ring of converted frames
} THModel;

/* The values of precision: auto, then th_precisions[] in order. */
enum { TH_PRECISION_AUTO, TH_PRECISION_FP32, TH_PRECISION_FP16, TH_PRECISION_BF16 };

#define OFFSET(x) offsetof(THOptions, x)
#define FLAGS AV_OPT_FLAG_FILTERING_PARAM
static const AVOption dnn_th_options[] = {
    { "optimize", "let TorchScript's graph executor optimize the model", OFFSET(optimize), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS, NULL },
    { "in_channels", "input channels of the model, 1 or 3 (0: from its file or first weight)", OFFSET(in_channels), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 3, FLAGS, NULL },
    { "aoti", "load AOTInductor packages (.pt2), whose compiled code runs in this process", OFFSET(aoti), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS, NULL },
    { "precision", "the dtype the model runs in", OFFSET(precision), AV_OPT_TYPE_INT, { .i64 = TH_PRECISION_AUTO }, TH_PRECISION_AUTO, TH_PRECISION_BF16, FLAGS, "precision" },
        { "auto", "that of its weights", 0, AV_OPT_TYPE_CONST, { .i64 = TH_PRECISION_AUTO }, 0, 0, FLAGS, "precision" },
        { "fp32", "float32",             0, AV_OPT_TYPE_CONST, { .i64 = TH_PRECISION_FP32 }, 0, 0, FLAGS, "precision" },
        { "fp16", "float16",             0, AV_OPT_TYPE_CONST, { .i64 = TH_PRECISION_FP16 }, 0, 0, FLAGS, "precision" },
        { "bf16", "bfloat16",            0, AV_OPT_TYPE_CONST, { .i64 = TH_PRECISION_BF16 }, 0, 0, FLAGS, "precision" },
    { "channels_last", "channels-last weights and input (auto: on; a .pt2: as exported)", OFFSET(channels_last), AV_OPT_TYPE_BOOL, { .i64 = -1 }, -1, 1, FLAGS, NULL },
    { NULL }
};

/*
 * The line of a LibTorch message that says what went wrong: the last one
 * after a TorchScript traceback (the interpreter's call stack), else the
 * first.
 */
static std::string th_error_line(const std::string &msg)
{
    size_t end = msg.find_last_not_of(" \n");
    size_t start;

    if (end == std::string::npos)
        return msg;
    if (msg.find("Traceback of TorchScript") == std::string::npos)
        return msg.substr(0, msg.find('\n'));
    start = msg.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    return msg.substr(start, end + 1 - start);
}

/*
 * Log a LibTorch exception as one line at error level, without its C++
 * backtrace; the whole message (a TorchScript traceback) at verbose level.
 * Returns an AVERROR.
 */
static int th_error(void *log_ctx, const char *what, const std::exception &e)
{
    const c10::Error *ce = dynamic_cast<const c10::Error *>(&e);
    std::string msg = ce ? ce->what_without_backtrace() : e.what();
    std::string line = th_error_line(msg);

    if (dynamic_cast<const std::bad_alloc *>(&e)) {
        av_log(log_ctx, AV_LOG_ERROR, "%s: out of memory\n", what);
        return AVERROR(ENOMEM);
    }
    av_log(log_ctx, AV_LOG_ERROR, "%s: %s\n", what, line.c_str());
    if (line != msg)
        av_log(log_ctx, AV_LOG_VERBOSE, "LibTorch's whole message:\n%s\n", msg.c_str());
    return AVERROR_EXTERNAL;
}

static c10::Device th_device(const THModel *th_model)
{
    return c10::Device(th_model->device_type, th_model->device_index);
}

/*
 * Channels a CPU frame of this format gives the model (0: not supported);
 * CUDA frames: ff_dnn_th_cuda_sw_formats and cuda_channels.
 */
static int th_format_channels(int format)
{
    switch (format) {
    case AV_PIX_FMT_RGB24:
    case AV_PIX_FMT_BGR24:
        return 3;
    case AV_PIX_FMT_GRAY8:
    case AV_PIX_FMT_GRAYF32:
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUV422P:
    case AV_PIX_FMT_YUV444P:
    case AV_PIX_FMT_YUV410P:
    case AV_PIX_FMT_YUV411P:
    case AV_PIX_FMT_NV12:
        return 1;
    default:
        return 0;
    }
}

/* The model's input channels, from the filter's input link when known. */
static int th_input_channels(const THModel *th_model)
{
    int channels;

    if (th_model->cuda_channels)
        return th_model->cuda_channels;
    channels = th_format_channels(th_model->model.input_format);
    return channels ? channels : 3;
}

/* A view of n elements of a flat store, grown (never shrunk) to hold them. */
static torch::Tensor th_grow(torch::Tensor &store, int64_t n,
                             torch::ScalarType type, const c10::Device &device)
{
    if (!store.defined() || store.numel() < n ||
        store.scalar_type() != type || store.device() != device)
        store = torch::empty({ n }, torch::TensorOptions().dtype(type).device(device));
    return store.narrow(0, 0, n);
}

/* The model's N x C x H x W input in store: its dtype, NHWC strides if asked. */
static torch::Tensor th_input_view_n(const THModel *th_model, torch::Tensor &store,
                                     int n, int channels, int height, int width)
{
    torch::Tensor t = th_grow(store, (int64_t)n * channels * height * width,
                              th_model->dtype, th_device(th_model));

    if (th_model->channels_last)
        return t.view({ n, height, width, channels }).permute({ 0, 3, 1, 2 });
    return t.view({ n, channels, height, width });
}

static torch::Tensor th_input_view(const THModel *th_model, torch::Tensor &store,
                                   int channels, int height, int width)
{
    return th_input_view_n(th_model, store, 1, channels, height, width);
}

/*
 * Where request's frame goes: slot k of its batch, whose lead holds the
 * input of every frame (a request alone is its own lead, slot 0).
 */
static torch::Tensor th_batch_slot(const THModel *th_model, THInferRequest *request,
                                   int channels, int height, int width)
{
    THInferRequest *lead = th_model->forming ? th_model->forming : request;
    int64_t k = lead == request ? 0 : (int64_t)lead->batch.size();

    if (th_model->window) {         /* the frame goes into the ring */
        THWindowSlot &slot = ff_dnn_th_window_next(th_model->window);
        return slot.input = th_input_view(th_model, slot.store, channels, height, width);
    }
    if (!k)
        lead->input = th_input_view_n(th_model, lead->in_store, th_model->batch,
                                      channels, height, width);
    return lead->input.narrow(0, k, 1);
}

/*
 * Plane 0 of a CPU frame as an H x W x C tensor, without a copy.  LibTorch
 * takes no negative strides (from_blob() ends the process on one), so a
 * frame stored bottom-up (negative linesize, as vflip hands out) is viewed
 * from its last row: *flipped is then set, and row y of the view is row
 * H - 1 - y of the frame.
 */
static torch::Tensor th_frame_view(const AVFrame *frame, int channels, bool *flipped)
{
    const ptrdiff_t ls = frame->linesize[0];
    uint8_t *data = frame->data[0];

    *flipped = ls < 0;
    if (*flipped)
        data += (ptrdiff_t)(frame->height - 1) * ls;
    if (frame->format == AV_PIX_FMT_GRAYF32)
        return torch::from_blob(data, { frame->height, frame->width, 1 },
                                { (*flipped ? -ls : ls) / 4, 1, 1 }, torch::kFloat32);
    return torch::from_blob(data, { frame->height, frame->width, channels },
                            { *flipped ? -ls : ls, channels, 1 }, torch::kUInt8);
}

/* Frame channel that carries model channel c (the model always sees RGB). */
static int th_frame_channel(int format, int c)
{
    return format == AV_PIX_FMT_BGR24 ? 2 - c : c;
}

/* channels: what the frame format needs, 0 for th_format_channels(format) */
static int th_check_output(void *log_ctx, const torch::Tensor &out, int format,
                           int channels)
{
    if (!channels)
        channels = th_format_channels(format);

    if (out.dim() != 4) {
        av_log(log_ctx, AV_LOG_ERROR, "model output has %d dimensions; "
               "expected 4 (N, C, H, W)\n", (int)out.dim());
        return AVERROR(EINVAL);
    }
    if (out.size(0) != 1) {
        av_log(log_ctx, AV_LOG_ERROR, "model output has batch size %" PRId64
               "; expected 1\n", out.size(0));
        return AVERROR(EINVAL);
    }
    if (out.size(1) != channels) {
        av_log(log_ctx, AV_LOG_ERROR, "model output has %" PRId64 " channel%s, "
               "%s needs %d\n", out.size(1), out.size(1) == 1 ? "" : "s",
               av_get_pix_fmt_name((enum AVPixelFormat)format), channels);
        return AVERROR(EINVAL);
    }
    if (!at::isFloatingType(out.scalar_type())) {
        av_log(log_ctx, AV_LOG_ERROR, "model output is of type %s; "
               "expected a floating point type\n", c10::toString(out.scalar_type()));
        return AVERROR(EINVAL);
    }
    if (out.size(2) < 1 || out.size(3) < 1 || out.size(2) > INT_MAX / 4 ||
        out.size(3) > INT_MAX / 4) {
        av_log(log_ctx, AV_LOG_ERROR, "model output size %" PRId64 "x%" PRId64
               " is not usable\n", out.size(3), out.size(2));
        return AVERROR(EINVAL);
    }
    return 0;
}

/* Byte of model channel c in a pixel of a CPU frame, for each c. */
static void th_frame_bytes(int format, int channels, int *byte)
{
    for (int c = 0; c < channels; c++)
        byte[c] = th_frame_channel(format, c);
}

static void th_fill_cpu(const AVFrame *in, int channels, const torch::Tensor &input)
{
    int byte[3];

    th_frame_bytes(in->format, channels, byte);
    ff_dnn_th_cpu_frame_to_input(in, channels, byte, input);
}

/* A CPU frame for a model on CUDA: page-locked, on the request's stream. */
static int th_fill_cuda_staged(THModel *th_model, THInferRequest *request, int channels)
{
    const AVFrame *in = request->task->in_frame;
    int byte[3], ret;

    if (!request->cuda_stage) {
        ret = ff_dnn_th_cuda_stage_alloc(&request->cuda_stage, th_model->ctx,
                                         th_model->device_index);
        if (ret < 0)
            return ret;
    }
    th_frame_bytes(in->format, channels, byte);
    return ff_dnn_th_cuda_stage_run(request->cuda_stage, [&]() -> int {
        request->input = th_input_view(th_model, request->in_store, channels,
                                       in->height, in->width);
        return ff_dnn_th_cuda_stage_upload(request->cuda_stage, in, channels, byte,
                                           request->input);
    });
}

/* A CUDA frame into the ring of a window, converted in VRAM on the frames' stream. */
static int th_window_fill_cuda(THModel *th_model, const AVFrame *in)
{
    const THInputSpec spec = { th_model->dtype, !!th_model->channels_last };
    THWindowSlot &slot = ff_dnn_th_window_next(th_model->window);

    return ff_dnn_th_cuda_run(th_model->cuda, [&]() -> int {
        return ff_dnn_th_cuda_frame_to_tensor(th_model->cuda, in, th_model->cuda_channels,
                                              spec, slot.store, slot.input);
    });
}

static int fill_model_input_th(THModel *th_model, THInferRequest *request)
{
    AVFrame *in = request->task->in_frame;
    const c10::Device device = th_device(th_model);
    int channels = th_format_channels(in->format);
    torch::Tensor src;
    bool flipped;

    if (in->format == AV_PIX_FMT_CUDA)  /* only with a window: into the ring */
        return th_window_fill_cuda(th_model, in);
    if (!channels) {
        av_log(th_model->ctx, AV_LOG_ERROR, "pixel format %s is not supported\n",
               av_get_pix_fmt_name((enum AVPixelFormat)in->format));
        return AVERROR(ENOSYS);
    }

    if (device.is_cpu() && in->format != AV_PIX_FMT_GRAYF32) {
        torch::Tensor x = th_batch_slot(th_model, request, channels, in->height, in->width);
        th_fill_cpu(in, channels, x);
        return 0;
    }
    /* batches of CPU frames on CUDA, or no CUDA unit: on the device, below */
    if (CONFIG_LIBTORCH_CUDA && device.is_cuda() && th_model->batch == 1 && !th_model->window)
        return th_fill_cuda_staged(th_model, request, channels);

    src = th_frame_view(in, channels, &flipped);
    if (flipped)
        src = src.flip(0);
    if (!device.is_cpu()) {
        torch::Tensor staged = th_grow(request->stage, src.numel(), src.scalar_type(), device);
        staged = staged.view(src.sizes());
        staged.copy_(src);
        src = staged;
    }

    torch::Tensor x = th_batch_slot(th_model, request, channels, in->height, in->width);
    if (in->format == AV_PIX_FMT_GRAYF32) {
        x[0].copy_(src.permute({ 2, 0, 1 }));
        return 0;
    }
    /* on the model's device: copy_ casts in place, without a temporary */
    for (int c = 0; c < channels; c++)
        x[0][c].copy_(src.select(2, th_frame_channel(in->format, c)));
    x.mul_(1.0f / 255.0f);      /* as the CPU conversion and dnn_io_proc */
    return 0;
}

/* Start the copy of a staged request's output; th_finish_request() ends it. */
static int th_download_staged(THInferRequest *request, const torch::Tensor &y, AVFrame *out)
{
    int byte[3], ret;

    th_frame_bytes(out->format, (int)y.size(1), byte);
    ret = ff_dnn_th_cuda_stage_download(request->cuda_stage, y, byte, out);
    request->finish = ret >= 0;
    return ret;
}

/*
 * Output frames have the output link's size, set from the model's output
 * for the link's input size: a model whose output size changes mid-stream
 * (a new input size in a graph that was kept) cannot be followed.
 */
static int th_check_output_size(THModel *th_model, const AVFrame *out, int width, int height)
{
    if (out->width == width && out->height == height)
        return 0;
    av_log(th_model->ctx, AV_LOG_ERROR, "model output is %dx%d but the filter's "
           "output is %dx%d: the input changed size but the filter was not "
           "configured again\n", width, height, out->width, out->height);
    return AVERROR(EINVAL);
}

/* A failed forward: the model and the input shape, then LibTorch's line. */
static int th_forward_error(THModel *th_model, const torch::Tensor &input,
                            const std::exception &e)
{
    char what[1024];
    int n = snprintf(what, sizeof(what), "model forward failed ('%s', input ",
                     th_model->ctx->model_filename);

    for (int64_t i = 0; i < input.dim() && n > 0 && n < (int)sizeof(what); i++)
        n += snprintf(what + n, sizeof(what) - n, "%s%" PRId64, i ? "x" : "",
                      input.size(i));
    if (n > 0 && n < (int)sizeof(what))
        snprintf(what + n, sizeof(what) - n, ")");
    return th_error(th_model->ctx, what, e);
}

/*
 * Run the model's forward on one input.  Whether TorchScript's graph
 * executor optimizes is a thread-local flag of LibTorch, and the forward may
 * run on the worker thread: set it here, for this model, around each call.
 */
static torch::jit::IValue th_forward(THModel *th_model, const torch::Tensor &input)
{
    torch::NoGradGuard no_grad;

    if (th_model->aoti)
        return ff_dnn_th_aoti_run(th_model->aoti, input);
    torch::jit::GraphOptimizerEnabledGuard optimize(
        !!th_model->ctx->torch_option.optimize);
    std::vector<torch::jit::IValue> inputs{ input };

    return th_model->jit_model->forward(inputs);
}

static int th_start_inference(void *args)
{
    THInferRequest *request = (THInferRequest *)args;
    THModel *th_model = (THModel *)request->task->model;

    try {
        torch::jit::IValue result = th_forward(th_model, request->input);

        if (!result.isTensor()) {
            av_log(th_model->ctx, AV_LOG_ERROR, "model returned a %s, not a tensor\n",
                   result.tagKind().c_str());
            return AVERROR(EINVAL);
        }
        request->output = result.toTensor();
    } catch (const std::exception &e) {
        return th_forward_error(th_model, request->input, e);
    }
    return 0;
}

/* Write the model output into the output frame; returns an AVERROR. */
static int infer_completion_callback(THInferRequest *request)
{
    TaskItem *task = request->task;
    THModel *th_model = (THModel *)task->model;
    AVFrame *out = task->out_frame;
    const torch::Tensor &y = request->output;
    int ret, channels, width, height;

    ret = th_check_output(th_model->ctx, y, out->format, 0);
    if (ret < 0)
        return ret;
    channels = (int)y.size(1);
    height   = (int)y.size(2);
    width    = (int)y.size(3);
    ret = th_check_output_size(th_model, out, width, height);
    if (ret < 0)
        return ret;
    if (request->cuda_stage)        /* runs inside ff_dnn_th_cuda_stage_run() */
        return th_download_staged(request, y, out);

    try {
        torch::NoGradGuard no_grad;
        bool flipped;
        torch::Tensor dst = th_frame_view(out, channels, &flipped);
        torch::Tensor f;
        if (out->format == AV_PIX_FMT_GRAYF32) {
            f = y[0].permute({ 1, 2, 0 });
            dst.copy_(flipped ? f.flip(0) : f);
            return 0;
        }
        if (y.device().is_cpu()) {     /* on the threads of the forward */
            int byte[3];
            th_frame_bytes(out->format, channels, byte);
            ff_dnn_th_cpu_output_to_frame(y[0], channels, byte, out, request->out_store);
            return 0;
        }
        f = th_grow(request->out_store, (int64_t)channels * height * width,
                    torch::kFloat32, y.device()).view({ channels, height, width });
        f.copy_(y[0]);
        f.mul_(255.0).clamp_(0.0, 255.0).round_();
        torch::Tensor u8 = th_grow(request->out_stage, f.numel(), torch::kUInt8,
                                   y.device()).view({ height, width, channels });
        torch::Tensor host = th_grow(request->out_host, f.numel(), torch::kUInt8,
                                     torch::kCPU).view({ height, width, channels });
        u8.copy_(f.permute({ 1, 2, 0 }));
        host.copy_(u8);
        f = host.permute({ 2, 0, 1 });
        if (flipped)
            f = f.flip(1);
        for (int c = 0; c < channels; c++)
            dst.select(2, th_frame_channel(out->format, c)).copy_(f[c]);
    } catch (const std::exception &e) {
        return th_error(th_model->ctx, "could not write the model output", e);
    }
    return 0;
}

static int th_is_cuda_frame(const AVFrame *frame)
{
    return frame->format == AV_PIX_FMT_CUDA;
}

/*
 * After the forward of a batch: each request of the batch gets its slice
 * of the lead's output.
 */
static int th_split_batch(THModel *th_model, THInferRequest *lead)
{
    const int64_t n = (int64_t)lead->batch.size();
    torch::Tensor y = lead->output;

    if (th_model->batch == 1)
        return 0;
    if (y.dim() == 4 && y.size(0) != n) {
        av_log(th_model->ctx, AV_LOG_ERROR, "model output has batch size %" PRId64
               "; expected %" PRId64 ", the frames of its input (batch_size %d)\n",
               y.size(0), n, th_model->batch);
        return AVERROR(EINVAL);
    }
    for (int64_t i = 0; i < n; i++)
        lead->batch[i]->output = y.dim() == 4 ? y.narrow(0, i, 1) : y;
    return 0;
}

/* One forward on the frames of a batch converted in the lead's input. */
static int th_run_batch(THModel *th_model, THInferRequest *lead)
{
    int ret;

    lead->input = lead->input.narrow(0, 0, (int64_t)lead->batch.size());
    ret = th_start_inference(lead);
    return ret < 0 ? ret : th_split_batch(th_model, lead);
}

/*
 * The CUDA frames of a batch as the lead's input: each frame converted by
 * its own request, then, for more than one, joined along N.
 */
static int th_cuda_batch_input(THModel *th_model, THInferRequest *lead)
{
    const THInputSpec spec = { th_model->dtype, !!th_model->channels_last };
    std::vector<torch::Tensor> inputs;

    if (th_model->window)           /* assembled from the ring already */
        return 0;
    for (THInferRequest *request : lead->batch) {
        int ret = ff_dnn_th_cuda_frame_to_tensor(th_model->cuda, request->task->in_frame,
                                                 th_model->cuda_channels, spec,
                                                 request->in_store, request->input);
        if (ret < 0)
            return ret;
        inputs.push_back(request->input);
    }
    if (inputs.size() > 1)
        lead->input = torch::cat(inputs, 0);
    return 0;
}

/* A batch of CUDA frames: map, run and write back in VRAM, ordered on the GPU. */
static int th_run_cuda(THModel *th_model, THInferRequest *lead)
{
    return ff_dnn_th_cuda_run(th_model->cuda, [&]() -> int {
        torch::NoGradGuard no_grad;
        int ret = th_cuda_batch_input(th_model, lead);

        if (!ret)
            ret = th_start_inference(lead);
        if (!ret)
            ret = th_split_batch(th_model, lead);
        for (size_t i = 0; i < lead->batch.size() && !ret; i++) {
            THInferRequest *request = lead->batch[i];
            const torch::Tensor &y = request->output;
            AVFrame *out = request->task->out_frame;

            ret = th_check_output(th_model->ctx, y,
                                  ff_dnn_th_cuda_sw_format(th_model->cuda),
                                  th_model->cuda_channels);
            if (!ret)
                ret = th_check_output_size(th_model, out, (int)y.size(3), (int)y.size(2));
            if (!ret)
                ret = ff_dnn_th_cuda_tensor_to_frame(th_model->cuda, request->output,
                                                     request->task->in_frame,
                                                     request->task->out_frame);
        }
        return ret;
    });
}

/* Run a converted request: inference and writing the output frame. */
static int th_run_request(THModel *th_model, THInferRequest *request)
{
    int ret;

    if (th_is_cuda_frame(request->task->in_frame))
        return th_run_cuda(th_model, request);
    if (request->cuda_stage)
        return ff_dnn_th_cuda_stage_run(request->cuda_stage, [&]() -> int {
            int err = th_start_inference(request);
            return err < 0 ? err : infer_completion_callback(request);
        });
    ret = th_run_batch(th_model, request);
    for (size_t i = 0; i < request->batch.size() && !ret; i++)
        ret = infer_completion_callback(request->batch[i]);
    return ret;
}

/* The last step of a request whose output is still on its way to the host. */
static int th_finish_request(THInferRequest *request, int ret)
{
    if (request->finish) {
        int err = ff_dnn_th_cuda_stage_finish(request->cuda_stage, request->task->out_frame);
        request->finish = 0;
        if (ret >= 0)
            ret = err;
    }
    return ret;
}

/* Mark the tasks of a batch done; called with the mutex held. */
static void th_complete(THModel *th_model, THInferRequest *lead, int ret)
{
    for (THInferRequest *request : lead->batch)
        request->task->inference_done++;
    if (ret < 0 && !th_model->error)
        th_model->error = ret;
}

/*
 * Give a request back to the free ones.  Where that fails (no memory for
 * the queue's node), the model stops with the error, and a filter thread
 * waiting for a request (th_take_request()) wakes up to it.
 */
static void th_give_back(THModel *th_model, THInferRequest *request)
{
    int ret;

    ff_mutex_lock(&th_model->mutex);
    ret = ff_queue_push_back(th_model->request_queue, request);
    if (ret < 0 && !th_model->error)
        th_model->error = AVERROR(ENOMEM);
    ff_cond_broadcast(&th_model->cond);
    ff_mutex_unlock(&th_model->mutex);
    if (ret < 0)
        av_log(th_model->ctx, AV_LOG_ERROR, "could not give a request back\n");
}

/*
 * A free request, once one is back; the model's error instead if it
 * stopped with none to give (a request lost by th_give_back()).
 */
static int th_take_request(THModel *th_model, THInferRequest **request)
{
    int ret = 0;

    ff_mutex_lock(&th_model->mutex);
    while (!ff_queue_size(th_model->request_queue) && !th_model->error)
        ff_cond_wait(&th_model->cond, &th_model->mutex);
    if (ff_queue_size(th_model->request_queue))
        *request = (THInferRequest *)ff_queue_pop_front(th_model->request_queue);
    else
        ret = th_model->error;
    ff_mutex_unlock(&th_model->mutex);
    return ret;
}

/*
 * Give back the requests of a batch, the lead last: once it is back, the
 * filter thread may make it the lead of another batch.
 */
static void th_release(THModel *th_model, THInferRequest *lead)
{
    for (size_t i = lead->batch.size(); i-- > 0;)
        th_give_back(th_model, lead->batch[i]);
}

/* A worker is done with a batch: complete its tasks, free its requests. */
static void th_worker_done(THModel *th_model, THInferRequest *lead, int ret)
{
    ff_mutex_lock(&th_model->mutex);
    th_complete(th_model, lead, ret);
    th_model->inflight -= (int)lead->batch.size();
    ff_cond_broadcast(&th_model->cond);
    ff_mutex_unlock(&th_model->mutex);
    th_release(th_model, lead);
}

/*
 * LibTorch's intra-op thread count is the calling thread's: with its OpenMP
 * backend a forward runs on a team of omp_get_max_threads() threads of that
 * thread.  at::set_num_threads() sets it, and also the count that a thread
 * which has not run LibTorch yet starts with (and the size of caffe2's
 * pool; it clears oneDNN's kernel cache).  So the backend sets it only on
 * the threads it owns, its workers (async=1), each before its first
 * forward: the model's count, from the threads option, else LibTorch's
 * default as the filter thread read it at load, so that every worker runs
 * on its own model's count whatever another torch filter set last.  A
 * forward on the filter thread (async=0), which is the graph's or the
 * application's, runs on that thread's count, which the backend leaves
 * as it is.  Without OpenMP (AT_PARALLEL_OPENMP) LibTorch has one count
 * for the process: the backend sets none.  Workers side by side may call
 * at::set_num_threads() at once, each at its first forward (the count
 * then stays); its process-wide part (caffe2's pool, oneDNN's kernel
 * cache, which it clears) is shared with forwards already running on
 * other workers.
 */
static int th_run_with_threads(THModel *th_model, THInferRequest *request)
{
    int want = th_model->intra_threads > 0 ? th_model->intra_threads :
                                             th_model->default_threads;

    if (AT_PARALLEL_OPENMP && th_model->ctx->async && want > 0 &&
        at::get_num_threads() != want)
        at::set_num_threads(want);
    av_log(th_model->ctx, AV_LOG_TRACE, "forward on %d intra-op threads\n",
           at::get_num_threads());
    return th_run_request(th_model, request);
}

/*
 * The pool runs the oldest batch first.  With one worker (CUDA) batches
 * run in order, and one whose output is still being copied to the host
 * (CPU frames on CUDA) is finished only after the next one, already
 * waiting, has been started, so that the copy of one overlaps the model on
 * the next.  With several (CPU), forwards run side by side and may end in
 * any order; dnn_get_result_th() still hands tasks out in submission
 * order.  After an error or once free_model() has asked to quit, batches
 * are completed without running.  Each forward runs on this model's
 * intra-op count (th_run_with_threads()).
 */
static int th_worker_forward(void *arg)
{
    THInferRequest *lead = (THInferRequest *)arg;
    THModel *th_model = lead->model;
    int skip;

    ff_mutex_lock(&th_model->mutex);
    skip = th_model->quit || th_model->error;
    th_model->waiting--;
    ff_mutex_unlock(&th_model->mutex);
    lead->ret = skip ? AVERROR_EXIT : th_run_with_threads(th_model, lead);
    return 0;
}

static void th_worker_finish(void *arg)
{
    THInferRequest *lead = (THInferRequest *)arg;
    THModel *th_model = lead->model;
    THInferRequest *prev;
    int keep;

    ff_mutex_lock(&th_model->mutex);
    prev = th_model->prev;
    th_model->prev = NULL;
    ff_mutex_unlock(&th_model->mutex);
    if (prev)
        th_worker_done(th_model, prev, th_finish_request(prev, prev->ret));
    /* held back only while a later batch is queued (waiting counts it from
     * th_submit() to its forward): that batch's finish, which always runs,
     * even after quit or an error, finishes this one.  Only staged requests
     * (CPU frames on CUDA) are held back, and they have one worker (they do
     * not run side by side: th_side_by_side()), so no finish runs meanwhile */
    ff_mutex_lock(&th_model->mutex);
    keep = lead->finish && th_model->waiting > 0;
    if (keep)
        th_model->prev = lead;
    ff_mutex_unlock(&th_model->mutex);
    if (!keep)
        th_worker_done(th_model, lead, th_finish_request(lead, lead->ret));
}

/*
 * Hand a batch to the workers (async) or run it here (sync).  Its tasks are
 * queued; on error they are completed with it.
 */
static int th_submit(THModel *th_model, THInferRequest *lead)
{
    int ret;

    if (th_model->ctx->async) {
        ff_mutex_lock(&th_model->mutex);
        th_model->inflight += (int)lead->batch.size();
        th_model->waiting++;
        ff_mutex_unlock(&th_model->mutex);
        /* with a pool this only queues the batch and returns 0; the
         * worker's callback completes the batch whatever its forward gives */
        ret = ff_dnn_start_inference_async(th_model->ctx, &lead->exec_module);
        av_assert0(ret == 0);
        return 0;
    }

    ret = th_finish_request(lead, th_run_with_threads(th_model, lead));
    ff_mutex_lock(&th_model->mutex);
    th_complete(th_model, lead, ret);
    ff_mutex_unlock(&th_model->mutex);
    th_release(th_model, lead);
    return ret;
}

/*
 * DNNWindow's callback (opaque: the model) for a task whose window is
 * complete: its window is copied from the ring into a request's input (for
 * CUDA frames on the frames' stream) and submitted.
 */
static int th_window_submit(void *opaque, TaskItem *task, int64_t index)
{
    THModel *th_model = (THModel *)opaque;
    THInferRequest *request = NULL;
    const THInputSpec spec = { th_model->dtype, !!th_model->channels_last };
    auto fill = [&]() -> int {
        return ff_dnn_th_window_input(th_model->window, index, spec,
                                      request->in_store, request->input);
    };
    int ret = th_take_request(th_model, &request);

    if (ret < 0) {              /* the model stopped: the task ends with it */
        ff_mutex_lock(&th_model->mutex);
        task->inference_done++;
        ff_mutex_unlock(&th_model->mutex);
        return ret;
    }
    request->task = task;
    request->batch.assign(1, request);  /* within what th_make_requests reserved */
    ret = th_is_cuda_frame(task->in_frame) ? ff_dnn_th_cuda_run(th_model->cuda, fill) : fill();
    if (ret >= 0)
        return th_submit(th_model, request);
    ff_mutex_lock(&th_model->mutex);
    th_complete(th_model, request, ret);
    ff_mutex_unlock(&th_model->mutex);
    th_release(th_model, request);
    return ret;
}

/* The frame is in the ring: its request is free again until its window is complete. */
static int th_window_push(THModel *th_model, THInferRequest *request)
{
    TaskItem *task = request->task;

    request->task = NULL;
    th_give_back(th_model, request);
    return ff_dnn_th_window_push(th_model->window, task->in_frame, task,
                                 th_window_submit, th_model);
}

/* The hardware frames context of a frame (NULL for a CPU frame). */
static const void *th_frames_ctx(const AVFrame *frame)
{
    return frame->hw_frames_ctx ? frame->hw_frames_ctx->data : NULL;
}

/*
 * Submit the batch being formed, partly filled, when the next frame cannot
 * join it (another size, format or frames context) or when in is NULL (flush).
 */
static int th_close_batch(THModel *th_model, const AVFrame *in)
{
    THInferRequest *lead = th_model->forming;
    const AVFrame *first;

    if (th_model->window)
        return ff_dnn_th_window_cut(th_model->window, in, th_window_submit, th_model);
    if (!lead)
        return 0;
    first = lead->task->in_frame;
    if (in && in->width == first->width && in->height == first->height &&
        in->format == first->format && th_frames_ctx(in) == th_frames_ctx(first))
        return 0;
    th_model->forming = NULL;
    return th_submit(th_model, lead);
}

/* Add a queued request to the batch being formed; a full batch goes. */
static int th_add_to_batch(THModel *th_model, THInferRequest *request)
{
    THInferRequest *lead = th_model->forming ? th_model->forming : request;

    if (lead == request)
        request->batch.clear();
    lead->batch.push_back(request);     /* within what th_make_requests reserved */
    if ((int)lead->batch.size() < th_model->batch) {
        th_model->forming = lead;
        return 0;
    }
    th_model->forming = NULL;
    return th_submit(th_model, lead);
}

/*
 * Convert the frame, queue the task, add it to a batch, which runs here
 * (sync) or goes to the workers (async) once full.  Once *queued is set
 * the backend owns the task's frames, even on error; before, the caller
 * keeps them.
 */
static int execute_model_th(THModel *th_model, THInferRequest *request, int *queued)
{
    TaskItem *task = request->task;
    int ret;

    *queued = 0;
    /* CUDA frames are converted where the request runs, by th_run_cuda(),
     * or with a window into its ring */
    if (!th_is_cuda_frame(task->in_frame) || th_model->window) {
        try {
            torch::NoGradGuard no_grad;
            ret = fill_model_input_th(th_model, request);
        } catch (const std::exception &e) {
            ret = th_error(th_model->ctx, "could not convert the frame", e);
        }
        if (ret < 0)
            return ret;
    }

    ff_mutex_lock(&th_model->mutex);
    ret = ff_queue_push_back(th_model->task_queue, task);
    ff_mutex_unlock(&th_model->mutex);
    if (ret < 0)
        return ret;
    *queued = 1;
    return th_model->window ? th_window_push(th_model, request) :
                              th_add_to_batch(th_model, request);
}

/* precision=1, 2, 3 (0 is auto) */
static const struct {
    const char *name;
    torch::ScalarType type;
} th_precisions[] = {
    { "fp32", torch::kFloat32 },
    { "fp16", torch::kHalf },
    { "bf16", torch::kBFloat16 },
};

static const char *th_dtype_name(torch::ScalarType type)
{
    for (size_t i = 0; i < FF_ARRAY_ELEMS(th_precisions); i++)
        if (th_precisions[i].type == type)
            return th_precisions[i].name;
    return c10::toString(type);
}

/* The dtype of the model's first floating-point weight; float32 if none. */
static torch::ScalarType th_weights_dtype(torch::jit::Module *module)
{
    for (const torch::Tensor &p : module->parameters())
        if (at::isFloatingType(p.scalar_type()))
            return p.scalar_type();
    for (const torch::Tensor &b : module->buffers())
        if (at::isFloatingType(b.scalar_type()))
            return b.scalar_type();
    return torch::kFloat32;
}

/*
 * The CPU's units for a 16-bit float type, as LibTorch's cpuinfo names them
 * (avx512_bf16, amx_bf16, avx512_fp16, amx_fp16, ...); empty when it has
 * none.  *known is false where the LibTorch cannot tell.
 */
static std::string th_cpu_units(torch::ScalarType type, bool *known)
{
    std::vector<std::string> found;
    std::string units;

    *known = false;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 11)
    const char *tag = type == torch::kBFloat16 ? "bf16" : "fp16";

    try {
        for (const auto &c : at::cpu::get_cpu_capabilities())
            if (c.first.find(tag) != std::string::npos && c.second.isBool() &&
                c.second.toBool())
                found.push_back(c.first);
        *known = true;
    } catch (const std::exception &) {
        found.clear();
    }
#endif
    std::sort(found.begin(), found.end());
    for (const std::string &u : found)
        units += (units.empty() ? "" : ", ") + u;
    return units;
}

/* fp16 or bf16 on the CPU: fast where the CPU has units for it, else slow. */
static void th_log_cpu_precision(DnnContext *ctx, torch::ScalarType type)
{
    bool known;
    std::string units = th_cpu_units(type, &known);

    if (!known)
        av_log(ctx, AV_LOG_VERBOSE, "the model runs in %s on the CPU; this LibTorch "
               "does not say whether the CPU has units for it\n", th_dtype_name(type));
    else if (!units.empty())
        av_log(ctx, AV_LOG_VERBOSE, "the model runs in %s on the CPU, which has "
               "units for it (%s)\n", th_dtype_name(type), units.c_str());
    else
        av_log(ctx, AV_LOG_WARNING, "the model runs in %s on the CPU, which has no "
               "%s units: correct, but often slower than fp32 (precision=fp32)\n",
               th_dtype_name(type), th_dtype_name(type));
}

/* Pick the dtype the model runs in (precision) and cast it once. */
static int th_setup_precision(DnnContext *ctx, THModel *th_model)
{
    int precision = ctx->torch_option.precision;
    torch::ScalarType weights = th_model->aoti ? ff_dnn_th_aoti_dtype(th_model->aoti) :
                                th_weights_dtype(th_model->jit_model);

    th_model->dtype = precision != TH_PRECISION_AUTO ?
                      th_precisions[precision - TH_PRECISION_FP32].type : weights;
    if (th_model->dtype != torch::kFloat32 && th_model->dtype != torch::kHalf &&
        th_model->dtype != torch::kBFloat16) {
        av_log(ctx, AV_LOG_ERROR, "the model's weights are %s; use precision=fp32, "
               "fp16 or bf16\n", c10::toString(th_model->dtype));
        return AVERROR(EINVAL);
    }
    if (th_model->dtype != weights && th_model->aoti) {
        av_log(ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package compiled for %s "
               "input: precision=%s cannot change it (export it again in that "
               "precision)\n", ctx->model_filename, th_dtype_name(weights),
               th_dtype_name(th_model->dtype));
        return AVERROR(EINVAL);
    }
    if (th_model->dtype != weights)
        th_model->jit_model->to(th_model->dtype);
    return 0;
}

/* A package takes the layout it was exported for: channels_last cannot change it. */
static int th_package_layout(THModel *th_model, int want)
{
    DnnContext *ctx = th_model->ctx;
    int nhwc = ff_dnn_th_aoti_channels_last(th_model->aoti);

    if (want >= 0 && want != nhwc) {
        av_log(ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package exported for %s "
               "input: channels_last=%d cannot change it (export it again from %s "
               "input)\n", ctx->model_filename, nhwc ? "channels-last" : "NCHW", want,
               want ? "a channels-last" : "an NCHW");
        return AVERROR(EINVAL);
    }
    th_model->channels_last = nhwc;
    return 0;
}

/*
 * Once the model is on its final device: channels-last weights (auto: on;
 * measured faster or equal on CUDA and, through oneDNN, on the CPU), so
 * that the input's NHWC strides reach the convolutions as they are.
 */
static int th_layout_model(THModel *th_model)
{
    int want = th_model->ctx->torch_option.channels_last;

    if (th_model->aoti)
        return th_package_layout(th_model, want);
    th_model->channels_last = want < 0 ? 1 : want;
    if (!th_model->channels_last)
        return 0;
    torch::NoGradGuard no_grad;
    for (torch::Tensor p : th_model->jit_model->parameters())
        if (p.dim() == 4)
            p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
    return 0;
}

/* The options name another device than the CUDA frames': say what parses. */
static int th_device_mismatch(DnnContext *ctx, int index)
{
    char opts[96] = "";

    if (ctx->device)
        av_strlcatf(opts, sizeof(opts), "device=%s", ctx->device);
    if (ctx->device_id)
        av_strlcatf(opts, sizeof(opts), "%sdevice_id=%d", *opts ? ", " : "",
                    ctx->device_id);
    av_log(ctx, AV_LOG_ERROR, "%s, but the CUDA frames are on GPU %d; drop the "
           "option or write device=cuda:device_id=%d\n", opts, index, index);
    return AVERROR(EINVAL);
}

/*
 * CUDA frames on the input link: the model moves to the frames' device.
 * device=cuda without an index follows the frames; a GPU the options name
 * (cuda:1, device_id=1) must be theirs.
 */
static int th_setup_cuda(THModel *th_model)
{
    DnnContext *ctx = th_model->ctx;

    if (th_model->model.input_format != AV_PIX_FMT_CUDA)
        return 0;
    int index = 0;
    int ret = ff_dnn_th_cuda_init(&th_model->cuda, ctx, th_model->model.input_frames_ctx,
                                  &index);
    if (ret < 0)
        return ret;
    if ((ctx->device && th_model->device_type != c10::DeviceType::CUDA) ||
        (th_model->pinned_index >= 0 && th_model->pinned_index != index))
        return th_device_mismatch(ctx, index);
    try {
        c10::Device device(c10::DeviceType::CUDA, index);
        if (th_model->aoti)
            ret = ff_dnn_th_aoti_to_device(th_model->aoti, ctx, device);
        else
            th_model->jit_model->to(device);
        if (ret < 0)
            return ret;
    } catch (const std::exception &e) {
        return th_error(ctx, "could not move the model to the frames' device", e);
    }
    th_model->device_type   = c10::DeviceType::CUDA;
    th_model->device_index  = index;
    th_model->cuda_channels = 3;
    try {
        return th_layout_model(th_model);
    } catch (const std::exception &e) {
        return th_error(ctx, "could not make the weights channels-last", e);
    }
}

/* The channels the model tells (in_channels, found at load), else 0. */
static int get_input_channels_th(DNNModel *model)
{
    return ((THModel *)model)->in_channels;
}

/*
 * The model's input: its channels where it tells them (in_channels), else
 * the input link's once its format is known, else -1 (not known yet: the
 * filter offers every format, get_input_channels_th() being 0).
 */
static int get_input_th(DNNModel *model, DNNData *input, const char *)
{
    THModel *th_model = (THModel *)model;
    int linked = model->input_format != AV_PIX_FMT_NONE;

    input->dt       = DNN_FLOAT;
    input->order    = DCO_RGB;
    input->layout   = DL_NCHW;
    input->dims[0]  = 1;
    input->dims[1]  = th_model->in_channels ? th_model->in_channels :
                      linked ? th_input_channels(th_model) : -1;
    input->dims[2]  = -1;
    input->dims[3]  = -1;
    return 0;
}

/* Run the model once on a blank input; returns its output or throws. */
static torch::Tensor th_probe(THModel *th_model, int channels, int width, int height)
{
    const THInputSpec spec = { th_model->dtype, !!th_model->channels_last };
    torch::Tensor store;
    torch::jit::IValue result = th_forward(th_model, th_model->window ?
        ff_dnn_th_window_view(th_model->window, spec, th_device(th_model), store,
                              channels, height, width).zero_() :
        th_input_view(th_model, store, channels, height, width).zero_());

    if (!result.isTensor())
        throw std::runtime_error(std::string("model returned a ") +
                                 result.tagKind() + ", not a tensor");
    return result.toTensor();
}

/* Run the model once on a blank input to learn its output size. */
static int th_output_size(DNNModel *model, int input_width, int input_height,
                          int *output_width, int *output_height)
{
    THModel *th_model = (THModel *)model;
    int channels = th_input_channels(th_model);
    int format = model->input_format;
    /* YUV CUDA frames: the Y plane, for a model known to take one channel
     * (th_find_channels) that keeps the size; scale_cuda makes RGB for the
     * others */
    bool yuv = th_model->cuda && ff_dnn_th_cuda_is_yuv(th_model->cuda);
    int ret;

    if (th_model->cuda)
        format = ff_dnn_th_cuda_sw_format(th_model->cuda);
    else if (!th_format_channels(format))
        format = AV_PIX_FMT_RGB24;

    try {
        torch::Tensor y;

        if (yuv && th_model->in_channels != 1) {
            av_log(th_model->ctx, AV_LOG_ERROR, "YUV CUDA frames go only to a model "
                   "known to take one channel; put scale_cuda=format=rgb0 before "
                   "the filter\n");
            return AVERROR(EINVAL);
        }
        if (yuv)
            channels = th_model->cuda_channels = 1;
        y = th_probe(th_model, channels, input_width, input_height);
        if (yuv && (y.size(3) != input_width || y.size(2) != input_height)) {
            av_log(th_model->ctx, AV_LOG_ERROR, "a model that changes the size takes "
                   "YUV CUDA frames' Y plane only on the CPU: put hwdownload before "
                   "the filter\n");
            return AVERROR(EINVAL);
        }
        ret = ff_dnn_th_window_check_output(th_model->window, th_model->ctx, y);
        if (ret >= 0)
            ret = th_check_output(th_model->ctx, y, format,
                                  th_model->cuda_channels ? channels : 0);
        if (ret < 0)
            return ret;
        *output_width  = (int)y.size(3);
        *output_height = (int)y.size(2);
    } catch (const std::exception &e) {
        char what[128];
        snprintf(what, sizeof(what), "model failed on a %dx%dx%d probe input",
                 channels, input_width, input_height);
        if (th_model->window)
            ff_dnn_th_window_probe_what(th_model->window, what, sizeof(what),
                                        channels, input_width, input_height);
        return th_error(th_model->ctx, what, e);
    }
    return 0;
}

/*
 * The output size, at the output link's configuration: CUDA frames first
 * take the model to their device.  get_input() only reads, since the
 * filter asks it for the formats too.
 */
static int get_output_th(DNNModel *model, const char *, int input_width,
                         int input_height, const char *,
                         int *output_width, int *output_height)
{
    int ret = th_setup_cuda((THModel *)model);

    if (ret < 0)
        return ret;
    return th_output_size(model, input_width, input_height,
                          output_width, output_height);
}

#define TH_DEVICES "use cpu, cuda (device_id=N for GPU N) or xpu"

/* CUDA devices LibTorch sees; 0 when it sees none or cannot tell. */
static int th_cuda_count(void)
{
    try {
        return torch::cuda::is_available() ? (int)torch::cuda::device_count() : 0;
    } catch (const std::exception &e) {
        return 0;
    }
}

/* GPU index exists for LibTorch; label is the option and what it means. */
static int th_check_cuda(DnnContext *ctx, const char *label, int index)
{
    int count = th_cuda_count();

    if (!count) {
        av_log(ctx, AV_LOG_ERROR, "device %s asked for, but LibTorch finds no "
               "CUDA device%s\n", label, CONFIG_LIBTORCH_CUDA ? "" :
               " (FFmpeg was built without --enable-libtorch-cuda)");
        return AVERROR(ENODEV);
    }
    if (index >= count) {
        char have[32] = "device_id 0";
        if (count > 1)
            snprintf(have, sizeof(have), "device_id 0 to %d", count - 1);
        av_log(ctx, AV_LOG_ERROR, "device %s does not exist; LibTorch sees %d "
               "CUDA device%s: %s\n", label, count, count == 1 ? "" : "s", have);
        return AVERROR(ENODEV);
    }
    return 0;
}

/*
 * device: cpu, cuda or LibTorch's cuda:N, xpu.  Without an index, CUDA takes
 * device_id.  pinned_index is the GPU the options name explicitly (an index
 * in device, or device_id above 0), else -1: CUDA frames must be on it.
 */
static int th_parse_device(DnnContext *ctx, THModel *th_model)
{
    const char *opt = ctx->device ? ctx->device : "cpu";
    c10::Device device(c10::DeviceType::CPU);
    int index, ret;

    try {
        device = c10::Device(opt);
    } catch (const std::exception &e) {
        av_log(ctx, AV_LOG_ERROR, "device '%s' is not a device name; " TH_DEVICES "\n", opt);
        return AVERROR(EINVAL);
    }
    index = device.has_index() ? device.index() : ctx->device_id;
    if (device.has_index() && ctx->device_id && ctx->device_id != index) {
        av_log(ctx, AV_LOG_ERROR, "device=%s and device_id=%d name two devices; "
               "give one\n", opt, ctx->device_id);
        return AVERROR(EINVAL);
    }
    th_model->pinned_index = device.has_index() || ctx->device_id ? index : -1;

    if (device.is_cuda()) {
        char label[128];
        snprintf(label, sizeof(label), "'%s' (cuda:%d)", opt, index);
        ret = th_check_cuda(ctx, label, index);
        if (ret < 0)
            return ret;
        ff_dnn_th_cuda_log_device(ctx, index);
        device.set_index((c10::DeviceIndex)index);
    } else if (device.is_xpu()) {
        if (!at::hasXPU()) {
            av_log(ctx, AV_LOG_ERROR, "device '%s' asked for, but LibTorch "
                   "finds no XPU device\n", opt);
            return AVERROR(ENODEV);
        }
        try {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
            at::detail::getXPUHooks().init();
#else
            at::detail::getXPUHooks().initXPU();
#endif
        } catch (const std::exception &e) {
            return th_error(ctx, "could not initialize the XPU device", e);
        }
    } else if (!device.is_cpu()) {
        av_log(ctx, AV_LOG_ERROR, "device '%s' is not supported; " TH_DEVICES "\n", opt);
        return AVERROR(EINVAL);
    }
    if (ctx->device_id && !device.is_cuda())
        av_log(ctx, AV_LOG_WARNING, "device_id=%d is for CUDA devices; ignored "
               "for '%s'\n", ctx->device_id, opt);
    th_model->device_type  = device.type();
    th_model->device_index = device.has_index() && !device.is_cpu() ? device.index() : -1;
    return 0;
}

static void th_free_requests(THModel *th_model)
{
    for (int i = 0; i < th_model->nb_requests; i++) {
        ff_dnn_th_cuda_stage_free(&th_model->requests[i]->cuda_stage);
        delete th_model->requests[i];
    }
    av_freep(&th_model->requests);
    th_model->nb_requests = 0;
}

static void dnn_free_model_th(DNNModel **model)
{
    THModel *th_model;
    TaskItem *task;

    if (!model || !*model)
        return;
    th_model = (THModel *)*model;

    if (th_model->workers) {
        /* the workers complete what is pending without running it */
        ff_mutex_lock(&th_model->mutex);
        th_model->quit = 1;
        while (th_model->inflight > 0)
            ff_cond_wait(&th_model->cond, &th_model->mutex);
        ff_mutex_unlock(&th_model->mutex);
        ff_dnn_async_pool_free(&th_model->workers);
    }
    if (th_model->sync_init) {
        ff_mutex_destroy(&th_model->mutex);
        ff_cond_destroy(&th_model->cond);
    }

    while (th_model->task_queue && (task = (TaskItem *)ff_queue_pop_front(th_model->task_queue))) {
        av_frame_free(&task->in_frame);
        av_frame_free(&task->out_frame);
        av_freep(&task);
    }
    ff_queue_destroy(th_model->task_queue);
    ff_queue_destroy(th_model->request_queue);
    th_free_requests(th_model);
    ff_dnn_th_cuda_uninit(&th_model->cuda);
    ff_dnn_th_window_free(&th_model->window);

    try {
        delete th_model->jit_model;
        ff_dnn_th_aoti_free(&th_model->aoti);
    } catch (const std::exception &e) {
        th_error(th_model->ctx, "could not free the model", e);
    }
    av_freep(model);
}

#define TH_CHANNELS_FILE "dnn.input.channels"

/*
 * The input channels of the model, without running it, so that the filter
 * offers only the formats it can take: what a package's metadata says, or
 * a TorchScript file's extra file dnn.input.channels (declared; written
 * with torch.jit.save's _extra_files), else the input channels of its
 * first 4-D weight, a convolution's in most models; the in_channels option
 * before all of them.  Neither 1 nor 3, or no such weight: unknown, every
 * format stays.
 */
static int th_find_channels(THModel *th_model, const std::string &declared)
{
    const char *from = "its extra file " TH_CHANNELS_FILE;
    int channels = atoi(declared.c_str());

    if (th_model->ctx->torch_option.in_channels == 2) {
        av_log(th_model->ctx, AV_LOG_ERROR, "in_channels is 1 or 3 (0: the model's)\n");
        return AVERROR(EINVAL);
    }
    if (!declared.empty() && channels != 1 && channels != 3)
        av_log(th_model->ctx, AV_LOG_WARNING, "%s says '%s', neither 1 nor 3: "
               "ignored\n", TH_CHANNELS_FILE, declared.c_str());
    if (th_model->ctx->torch_option.in_channels) {
        from = "the in_channels option";
        channels = th_model->ctx->torch_option.in_channels;
    } else if (th_model->aoti) {
        from = "the package's metadata";
        channels = ff_dnn_th_aoti_channels(th_model->aoti);
    } else if (declared.empty() && th_model->ctx->window <= 1) {
        /* with a window, the first weight sees one frame, or all of them */
        from = "its first 4-D weight";
        for (const torch::Tensor &w : th_model->jit_model->parameters()) {
            if (w.dim() == 4 && w.is_floating_point()) {
                channels = (int)w.size(1);
                break;
            }
        }
    }
    th_model->in_channels = channels == 1 || channels == 3 ? channels : 0;
    if (th_model->in_channels)
        av_log(th_model->ctx, AV_LOG_VERBOSE, "the model takes %d channel%s (%s)\n",
               channels, channels == 1 ? "" : "s", from);
    return 0;
}

static int th_load_module(DnnContext *ctx, THModel *th_model)
{
    FILE *f = avpriv_fopen_utf8(ctx->model_filename, "rb");
    int ret;

    if (!f) {
        char buf[AV_ERROR_MAX_STRING_SIZE];
        int err = AVERROR(errno);

        av_strerror(err, buf, sizeof(buf));
        av_log(ctx, AV_LOG_ERROR, "cannot open model file '%s': %s\n",
               ctx->model_filename, buf);
        return err;
    }
    fclose(f);

    try {
        std::string declared;

        if (ff_dnn_th_aoti_is_package(ctx->model_filename)) {
            if (!ctx->torch_option.aoti) {
                av_log(ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package: its compiled "
                       "code runs in this process, so it loads only with aoti=1\n",
                       ctx->model_filename);
                return AVERROR(EPERM);
            }
            c10::Device device = th_device(th_model);
            ret = ff_dnn_th_aoti_load(&th_model->aoti, ctx, ctx->model_filename,
                                      !!ctx->device, &device);
            if (ret < 0)
                return ret;
            th_model->device_type  = device.type();
            th_model->device_index = device.has_index() ? device.index() : -1;
        } else {
            torch::jit::ExtraFilesMap extra{ { TH_CHANNELS_FILE, "" } };
            th_model->jit_model = new torch::jit::Module(
                torch::jit::load(ctx->model_filename, th_device(th_model), extra));
            th_model->jit_model->eval();
            declared = extra[TH_CHANNELS_FILE];
        }
        ret = th_find_channels(th_model, declared);
        if (ret >= 0)
            ret = th_setup_precision(ctx, th_model);
        if (ret >= 0)
            ret = th_layout_model(th_model);
    } catch (const std::exception &e) {
        char what[256];
        snprintf(what, sizeof(what), "could not load %s '%s'", th_model->aoti ?
                 "AOTInductor package" : "TorchScript model", ctx->model_filename);
        return th_error(ctx, what, e);
    }
    return ret;
}

/* The lock and the queues; requests come in th_start(). */
static int th_init_sync(THModel *th_model)
{
    if (ff_mutex_init(&th_model->mutex, NULL))
        return AVERROR(ENOMEM);
    if (ff_cond_init(&th_model->cond, NULL)) {
        ff_mutex_destroy(&th_model->mutex);
        return AVERROR(ENOMEM);
    }
    th_model->sync_init = 1;

    th_model->request_queue = ff_queue_create();
    th_model->task_queue    = ff_queue_create();
    if (!th_model->request_queue || !th_model->task_queue)
        return AVERROR(ENOMEM);
    return 0;
}

/*
 * Forwards run side by side on the CPU only; CUDA work runs in order.  Not
 * for an AOTInductor package: its CPU kernels run with the thread count it
 * was compiled for, whatever the worker's, so side by side they would
 * oversubscribe the cores.
 */
static int th_side_by_side(const THModel *th_model)
{
    return th_model->ctx->async && th_model->device_type == c10::DeviceType::CPU &&
           !th_model->cuda_channels && !th_model->aoti && AT_PARALLEL_OPENMP;
}

/*
 * nireq = 0: one batch without async; CUDA frames: two batches (one
 * formed while one runs); CPU frames on CUDA: three requests (one
 * uploading, one in the model, one downloading), or two batches; on the
 * CPU half the cores, at least two batches (two batches for an AOTInductor
 * package, which runs one forward at a time).
 */
static int th_default_nireq(const THModel *th_model, int cores)
{
    const int b = th_model->batch;

    if (!th_model->ctx->async)
        return b;
    if (th_model->cuda_channels)
        return 2 * b;
    if (th_model->device_type == c10::DeviceType::CUDA)
        return b == 1 ? 3 : 2 * b;
    if (th_model->device_type != c10::DeviceType::CPU || !th_side_by_side(th_model))
        return 2 * b;
    return b * FFMAX(2, cores / 2 / b);
}

/* Workers: on the CPU one per batch of requests, else one. */
static int th_nb_workers(const THModel *th_model)
{
    if (!th_model->ctx->async)
        return 0;
    return th_side_by_side(th_model) ? FFMAX(1, th_model->ctx->nireq / th_model->batch) : 1;
}

/*
 * Intra-op threads of each forward on a worker, from the filter's generic
 * threads option where it is set (capped by the graph's: the DNN layer's
 * nb_threads), else the cores: shared among the forwards that run side by
 * side; for one forward at a time all of them where that is fewer than
 * the cores, else LibTorch's default (0).  Without async the forwards run
 * on the filter thread's count, and without OpenMP on LibTorch's one.
 */
static int th_default_intra_threads(const THModel *th_model, int cores)
{
    const int given = th_model->model.nb_threads;
    int budget = given > 0 ? given : cores;
    int workers = th_nb_workers(th_model);

    if (!AT_PARALLEL_OPENMP || !th_model->ctx->async) {
        if (given > 0)
            av_log(th_model->ctx, AV_LOG_WARNING, "threads: %s; LibTorch's count "
                   "is used\n", AT_PARALLEL_OPENMP ? "only the backend's own threads "
                   "(async=1) take a count" : "this LibTorch has no count of a thread alone");
        return 0;
    }
    if (th_side_by_side(th_model) && workers >= 2)
        return FFMAX(1, budget / workers);
    return budget < cores ? FFMAX(1, budget) : 0;
}

/* batch_size > 1: a request per frame. */
static int th_check_batch(THModel *th_model)
{
    DnnContext *ctx = th_model->ctx;

    if (th_model->batch == 1)
        return 0;
    if (ctx->nireq < th_model->batch) {
        av_log(ctx, AV_LOG_WARNING, "nireq %d is less than batch_size %d: "
               "%d requests, one per frame of a batch\n", ctx->nireq,
               th_model->batch, th_model->batch);
        ctx->nireq = th_model->batch;
    }
    return 0;
}

static int th_make_requests(DnnContext *ctx, THModel *th_model)
{
    th_model->requests = (THInferRequest **)av_calloc(ctx->nireq, sizeof(*th_model->requests));
    if (!th_model->requests)
        return AVERROR(ENOMEM);
    for (int i = 0; i < ctx->nireq; i++) {
        THInferRequest *request = new (std::nothrow) THInferRequest();
        if (!request)
            return AVERROR(ENOMEM);
        th_model->requests[th_model->nb_requests++] = request;
        request->model = th_model;
        request->exec_module.start_inference = th_worker_forward;
        request->exec_module.callback = th_worker_finish;
        request->exec_module.args = request;
        try {
            request->batch.reserve(th_model->batch);
        } catch (const std::exception &e) {
            return th_error(ctx, "could not make the requests", e);
        }
        if (ff_queue_push_back(th_model->request_queue, request) < 0)
            return AVERROR(ENOMEM);
    }
    return 0;
}

static int th_start_workers(DnnContext *ctx, THModel *th_model)
{
    int n = th_nb_workers(th_model);

    th_model->workers = ff_dnn_async_pool_alloc(ctx, n);
    if (!th_model->workers) {
        av_log(ctx, AV_LOG_ERROR, "could not start the inference threads\n");
        return AVERROR(ENOMEM);
    }
    for (int i = 0; i < th_model->nb_requests; i++)
        th_model->requests[i]->exec_module.pool = th_model->workers;
    th_model->nb_workers = n;
    return 0;
}

/*
 * Once, before the first frame, when the input link has said whether its
 * frames are on CUDA (get_input): requests, intra-op threads, workers.
 */
static int th_start(THModel *th_model)
{
    DnnContext *ctx = th_model->ctx;
    int cores = av_cpu_count(), ret;

    th_model->started = 1;
    th_model->batch = FFMAX(1, ctx->batch_size);
    if (ctx->nireq <= 0)
        ctx->nireq = th_default_nireq(th_model, cores);
    ret = th_check_batch(th_model);
    th_model->intra_threads = th_default_intra_threads(th_model, cores);
    if (ret >= 0)
        ret = th_make_requests(ctx, th_model);
    if (ret >= 0 && ctx->async)
        ret = th_start_workers(ctx, th_model);
    if (ret < 0)
        return ret;
    /* here the device is final: CUDA frames take the model to their GPU */
    if (th_model->dtype != torch::kFloat32 && th_model->device_type == c10::DeviceType::CPU)
        th_log_cpu_precision(ctx, th_model->dtype);
    av_log(ctx, AV_LOG_VERBOSE, "%s, %d request%s%s, batch size %d, intra-op "
           "threads: %d%s\n", ctx->async ? "async" : "sync", ctx->nireq,
           ctx->nireq == 1 ? "" : "s", th_model->nb_workers > 1 ? " side by side" : "",
           th_model->batch, th_model->intra_threads,
           th_model->intra_threads ? "" : " (LibTorch's default)");
    return 0;
}

static DNNModel *dnn_load_model_th(DnnContext *ctx, DNNFunctionType func_type,
                                   AVFilterContext *filter_ctx)
{
    THModel *th_model;
    DNNModel *model;

    if (func_type != DFT_PROCESS_FRAME) {
        av_log(ctx, AV_LOG_ERROR, "the torch backend only processes whole frames "
               "(dnn_processing)\n");
        return NULL;
    }

    th_model = (THModel *)av_mallocz(sizeof(*th_model));
    if (!th_model)
        return NULL;
    model = &th_model->model;
    th_model->ctx = ctx;
    model->filter_ctx = filter_ctx;
    model->func_type  = func_type;
    model->get_input  = &get_input_th;
    model->get_output = &get_output_th;
    model->get_input_channels = &get_input_channels_th;
    th_model->device_type = c10::DeviceType::CPU;
    th_model->device_index = -1;

    if (ff_dnn_th_window_init(&th_model->window, ctx, ctx->window,
                              (DNNWindowAnchor)ctx->window_anchor) < 0 ||
        th_parse_device(ctx, th_model) < 0 ||
        th_load_module(ctx, th_model) < 0 ||
        th_init_sync(th_model) < 0)
        goto fail;
    th_model->default_threads = at::get_num_threads();

    av_log(ctx, AV_LOG_VERBOSE, "model '%s' on %s in %s%s\n",
           ctx->model_filename, th_device(th_model).str().c_str(),
           th_dtype_name(th_model->dtype), th_model->channels_last ? ", channels-last" : "");
    return model;

fail:
    dnn_free_model_th(&model);
    return NULL;
}

static int dnn_execute_model_th(const DNNModel *model, DNNExecBaseParams *exec_params)
{
    THModel *th_model = (THModel *)model;
    DnnContext *ctx = th_model->ctx;
    THInferRequest *request;
    TaskItem *task;
    int ret, queued;

    ret = ff_check_exec_params(ctx, DNN_TH, model->func_type, exec_params);
    if (ret < 0)
        return ret;
    /* the frames go through the backend's own conversions, never a filter's */
    if (model->frame_pre_proc || model->frame_post_proc) {
        av_log(ctx, AV_LOG_ERROR, "the torch backend runs no frame_pre_proc or "
               "frame_post_proc callback; this filter cannot use it\n");
        return AVERROR(ENOSYS);
    }

    if (!th_model->started) {
        ret = th_start(th_model);
        if (ret < 0) {
            ff_mutex_lock(&th_model->mutex);
            th_model->error = ret;
            ff_mutex_unlock(&th_model->mutex);
            return ret;
        }
    }
    ff_mutex_lock(&th_model->mutex);
    ret = th_model->error;
    ff_mutex_unlock(&th_model->mutex);
    if (ret < 0)
        return ret;

    /* a batch or window this frame cannot join goes before the frame takes a request */
    ret = th_close_batch(th_model, exec_params->in_frame);
    if (ret < 0)
        return ret;
    task = (TaskItem *)av_mallocz(sizeof(*task));
    if (!task)
        return AVERROR(ENOMEM);
    ret = ff_dnn_fill_task(task, exec_params, th_model, ctx->async, 1);
    if (ret >= 0)
        ret = th_take_request(th_model, &request);
    if (ret < 0) {
        av_freep(&task);
        return ret;
    }
    task->inference_todo = 1;
    request->task = task;
    ret = execute_model_th(th_model, request, &queued);
    if (ret < 0 && !queued) {
        /* never queued: the caller keeps its frames */
        request->task = NULL;
        av_freep(&task);
        th_give_back(th_model, request);
    }
    return ret;
}

static DNNAsyncStatusType dnn_get_result_th(const DNNModel *model, AVFrame **in, AVFrame **out)
{
    THModel *th_model = (THModel *)model;
    DNNAsyncStatusType status;

    /* the workers mark tasks done under the mutex */
    ff_mutex_lock(&th_model->mutex);
    status = th_model->error ? DAST_FAIL :   /* frames left go with the model */
             ff_dnn_get_result_common(th_model->task_queue, in, out);
    ff_mutex_unlock(&th_model->mutex);
    return status;
}

/* Wait until every submitted frame is done: no polling needed afterwards. */
static int dnn_flush_th(const DNNModel *model)
{
    THModel *th_model = (THModel *)model;
    int ret = th_close_batch(th_model, NULL);

    if (!th_model->nb_workers || ret < 0)
        return ret;
    ff_mutex_lock(&th_model->mutex);
    while (th_model->inflight > 0)
        ff_cond_wait(&th_model->cond, &th_model->mutex);
    ret = th_model->error;
    ff_mutex_unlock(&th_model->mutex);
    return ret;
}

extern const DNNModule ff_dnn_backend_torch = {
    .clazz           = DNN_DEFINE_CLASS(dnn_th),
    .type            = DNN_TH,
    .name            = "torch",
    .load_model      = dnn_load_model_th,
    .execute_model   = dnn_execute_model_th,
    .get_result      = dnn_get_result_th,
    .flush           = dnn_flush_th,
    .free_model      = dnn_free_model_th,
    .cuda_sw_formats = ff_dnn_th_cuda_sw_formats,
    .flags           = DNN_MODULE_FLAG_WINDOW,
};
