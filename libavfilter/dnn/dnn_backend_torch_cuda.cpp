/*
 * LibTorch DNN backend: CUDA frames without host copies
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
 * CUDA frames through a TorchScript model, never leaving VRAM.
 *
 * The frame's device pointer is wrapped with torch::from_blob (strides from
 * linesize), converted to a float NCHW tensor on the GPU, and the model
 * output is written device to device into the output frame.
 *
 * LibTorch works in the device's primary context.  Frames in it too
 * (primary_ctx=1) have LibTorch run on FFmpeg's own stream; frames of a
 * context of FFmpeg's own are read and written from the primary context,
 * with both streams waited for around each batch.
 */

#include <ATen/cuda/CUDAContextLight.h>
#include <c10/core/DeviceGuard.h>
#include <c10/cuda/CUDAStream.h>

extern "C" {
#include "libavutil/hwcontext.h"
#include "libavutil/imgutils.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"
#include "dnn_backend_torch_cudactx.h"
}

#include "dnn_backend_torch_cuda.h"

#include <cstring>
#include <vector>

struct THCuda {
    void *log_ctx;
    THCudaCtx *ctx;         ///< FFmpeg's context and stream
    enum AVPixelFormat sw_format;
    int bpp;                ///< bytes per pixel
    int rgb[3];             ///< byte of R, G and B in a pixel
    int pad;                ///< padding byte, or -1
    int alpha;              ///< pad is alpha (rgba, bgra): kept from the input
    int yuv;                ///< planar or semi-planar YUV (not RGB)
    int depth;              ///< bits per YUV sample (8 or 10)
    int sub_w, sub_h;       ///< log2 of chroma subsampling
    int interleaved;        ///< chroma as UV pairs in plane 1
    int device_index;
    cudaStream_t stream;    ///< FFmpeg's, where LibTorch works (NULL: default)
    torch::Tensor *kinv255; ///< the 0-dim factor 1/255 of uint8 -> [0, 1]
};

/* LibTorch's message without the backtrace that a c10::Error carries. */
static const char *th_what(const std::exception &e)
{
    const c10::Error *ce = dynamic_cast<const c10::Error *>(&e);

    return ce ? ce->what_without_backtrace() : e.what();
}

/* Pushes FFmpeg's CUDA context for the scope, pops it at the end. */
class THCudaPush {
public:
    explicit THCudaPush(THCudaCtx *ctx) : ctx(ctx)
    {
        ok = ff_dnn_th_cudactx_push(ctx) >= 0;
    }
    ~THCudaPush()
    {
        if (ok)
            ff_dnn_th_cudactx_pop(ctx);
    }
    bool ok;
private:
    THCudaCtx *ctx;
};

/*
 * Makes a stream's device the thread's current one and the stream
 * LibTorch's current one on it, for the scope.  The worker thread starts on
 * device 0: without the device guard every operator on GPU 1 would switch
 * the thread to it and back.  (c10's CUDAStreamGuard would tie this unit to
 * libcudart; c10::DeviceGuard goes through LibTorch's registered CUDA guard.)
 */
class THStreamScope {
public:
    explicit THStreamScope(c10::cuda::CUDAStream stream)
        : device(stream.device()),
          prev(c10::cuda::getCurrentCUDAStream(stream.device_index()))
    {
        c10::cuda::setCurrentCUDAStream(stream);
    }
    ~THStreamScope()
    {
        c10::cuda::setCurrentCUDAStream(prev);
    }
private:
    c10::DeviceGuard device;
    c10::cuda::CUDAStream prev;
};

const enum AVPixelFormat ff_dnn_th_cuda_sw_formats[] = {
    AV_PIX_FMT_RGB24, AV_PIX_FMT_BGR24, AV_PIX_FMT_RGB0, AV_PIX_FMT_BGR0,
    AV_PIX_FMT_0RGB, AV_PIX_FMT_0BGR, AV_PIX_FMT_RGBA, AV_PIX_FMT_BGRA,
    AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV444P,
    AV_PIX_FMT_NONE
};

/*
 * Where the samples of a listed sw_format are, from its descriptor: the
 * bytes of R, G and B in a packed pixel, and for 4-byte pixels the other
 * one (padding, written as 255, or alpha, see th_keep_alpha()); for YUV
 * the depth, the chroma subsampling and whether U and V are interleaved.
 */
static int th_cuda_layout(THCuda *cuda)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(cuda->sw_format);
    int i;

    for (i = 0; ff_dnn_th_cuda_sw_formats[i] != AV_PIX_FMT_NONE; i++)
        if (ff_dnn_th_cuda_sw_formats[i] == cuda->sw_format)
            break;
    if (ff_dnn_th_cuda_sw_formats[i] == AV_PIX_FMT_NONE) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "CUDA frames of sw_format %s are not "
               "supported by the torch backend\n", av_get_pix_fmt_name(cuda->sw_format));
        return AVERROR(ENOSYS);
    }
    if (!(desc->flags & AV_PIX_FMT_FLAG_RGB)) {
        cuda->yuv         = 1;
        cuda->depth       = desc->comp[0].depth;
        cuda->sub_w       = desc->log2_chroma_w;
        cuda->sub_h       = desc->log2_chroma_h;
        cuda->interleaved = desc->comp[1].plane == desc->comp[2].plane;
        return 0;
    }
    cuda->bpp = desc->comp[0].step;
    for (int c = 0; c < 3; c++)
        cuda->rgb[c] = desc->comp[c].offset;
    /* of bytes 0 to 3 (sum 6), the one that is not R, G or B */
    cuda->pad = cuda->bpp == 4 ? 6 - cuda->rgb[0] - cuda->rgb[1] - cuda->rgb[2] : -1;
    cuda->alpha = cuda->pad >= 0 && (desc->flags & AV_PIX_FMT_FLAG_ALPHA);
    return 0;
}

int ff_dnn_th_cuda_init(THCuda **pcuda, void *log_ctx, AVBufferRef *frames_ref,
                        int *device_index)
{
    THCuda *cuda;
    int ret;

    ff_dnn_th_cuda_uninit(pcuda);
    if (!frames_ref) {
        av_log(log_ctx, AV_LOG_ERROR, "CUDA frames without a frames context\n");
        return AVERROR(EINVAL);
    }

    cuda = (THCuda *)av_mallocz(sizeof(*cuda));
    if (!cuda)
        return AVERROR(ENOMEM);
    *pcuda = cuda;
    cuda->log_ctx   = log_ctx;
    cuda->sw_format = ((AVHWFramesContext *)frames_ref->data)->sw_format;
    ret = th_cuda_layout(cuda);
    if (ret < 0)
        return ret;
    ret = ff_dnn_th_cudactx_init(&cuda->ctx, log_ctx, frames_ref, &cuda->device_index);
    if (ret < 0)
        return ret;

    try {
        cuda->kinv255 = new torch::Tensor(torch::scalar_tensor(1.0f / 255.0f));
        cuda->stream = (cudaStream_t)ff_dnn_th_cudactx_stream(cuda->ctx);
    } catch (const std::exception &e) {
        av_log(log_ctx, AV_LOG_ERROR, "LibTorch cannot use cuda:%d: %s\n",
               cuda->device_index, th_what(e));
        return AVERROR_EXTERNAL;
    }

    av_log(log_ctx, AV_LOG_VERBOSE, "CUDA frames (%s) on cuda:%d, %s\n",
           av_get_pix_fmt_name(cuda->sw_format), cuda->device_index,
           ff_dnn_th_cudactx_primary(cuda->ctx) ? "in its primary context: LibTorch runs on FFmpeg's stream" :
                           "in a context of FFmpeg's own: LibTorch runs on its own stream");
    *device_index = cuda->device_index;
    return 0;
}

void ff_dnn_th_cuda_uninit(THCuda **pcuda)
{
    if (!*pcuda)
        return;
    delete (*pcuda)->kinv255;
    ff_dnn_th_cudactx_uninit(&(*pcuda)->ctx);
    av_freep(pcuda);
}

void ff_dnn_th_cuda_log_device(void *log_ctx, int device_index)
{
    try {
        const cudaDeviceProp *prop =
            at::cuda::getDeviceProperties((c10::DeviceIndex)device_index);
        av_log(log_ctx, AV_LOG_VERBOSE, "cuda:%d is %s (compute capability "
               "%d.%d, %zu MiB)\n", device_index, prop->name, prop->major,
               prop->minor, prop->totalGlobalMem >> 20);
    } catch (const std::exception &e) {
        av_log(log_ctx, AV_LOG_WARNING, "cannot read the properties of "
               "cuda:%d: %s\n", device_index, th_what(e));
    }
}

enum AVPixelFormat ff_dnn_th_cuda_sw_format(const THCuda *cuda)
{
    return cuda->sw_format;
}

/*
 * Frames of a context of FFmpeg's own: LibTorch stays in the primary context
 * on its current stream, which cannot wait on FFmpeg's stream there.  So
 * the host waits for FFmpeg's stream (the frames are written) before the
 * work, and for LibTorch's (the output is written) after it.  LibTorch's
 * kernels then read and write memory that the other context allocated on
 * the same device: seen to work (an H200, an H100: the GPU suite's
 * own-context cases), as master's mapping relied on, but not a behaviour
 * CUDA's documentation promises; primary_ctx=1 avoids relying on it.
 */
static int th_run_apart(THCuda *cuda, const std::function<int()> &work)
{
    c10::DeviceIndex index = (c10::DeviceIndex)cuda->device_index;
    int ret = ff_dnn_th_cudactx_sync(cuda->ctx);

    if (ret < 0)
        return ret;
    try {
        c10::DeviceGuard device(c10::Device(c10::kCUDA, index));
        ret = work();
        c10::cuda::getCurrentCUDAStream(index).synchronize();
        return ret;
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "CUDA work failed: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
}

int ff_dnn_th_cuda_run(THCuda *cuda, const std::function<int()> &work)
{
    c10::DeviceIndex index = (c10::DeviceIndex)cuda->device_index;

    if (!ff_dnn_th_cudactx_primary(cuda->ctx))
        return th_run_apart(cuda, work);
    try {
        THCudaPush push(cuda->ctx);
        if (!push.ok)
            return AVERROR_EXTERNAL;
        THStreamScope scope(cuda->stream ?
            c10::cuda::getStreamFromExternal(cuda->stream, index) :
            c10::cuda::getDefaultCUDAStream(index));
        return work();
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "CUDA work failed: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
}

/* The frame's plane as an H x W x bpp uint8 tensor in VRAM, padding respected. */
static torch::Tensor th_cuda_view(const THCuda *cuda, const AVFrame *frame)
{
    return torch::from_blob(frame->data[0], { frame->height, frame->width, cuda->bpp },
                            { frame->linesize[0], cuda->bpp, 1 },
                            torch::TensorOptions().dtype(torch::kUInt8)
                                .device(torch::kCUDA, cuda->device_index));
}

int ff_dnn_th_cuda_is_yuv(const THCuda *cuda)
{
    return cuda->yuv;
}

/* ---- YUV frames: the Y plane, for one-channel models ---- */

/* Plane p of a YUV CUDA frame as a uint8 or int16 h x w x pairs view. */
static torch::Tensor th_yuv_view(const THCuda *cuda, const AVFrame *frame, int p,
                                 int64_t h, int64_t w)
{
    auto opts = torch::TensorOptions().device(torch::kCUDA, cuda->device_index);
    int bytes = cuda->depth > 8 ? 2 : 1;
    int pairs = p && cuda->interleaved ? 2 : 1;

    return torch::from_blob(frame->data[p], { h, w, pairs },
                            { frame->linesize[p] / bytes, pairs, 1 },
                            opts.dtype(bytes == 2 ? torch::kInt16 : torch::kUInt8));
}

/* Sample values of a view, as float (P010's 10 bits sit in the high ones). */
static torch::Tensor th_yuv_values(const THCuda *cuda, const torch::Tensor &view)
{
    if (cuda->depth == 8)
        return view.to(torch::kFloat32);
    return view.to(torch::kInt32).bitwise_and(0xffff)
               .bitwise_right_shift(16 - cuda->depth).to(torch::kFloat32);
}

/* The Y plane as the model's 1 x 1 x H x W input in [0, 1], as the CPU path
 * gives a gray or YUV frame's Y plane (other models are refused at
 * configuration, see get_output_th()). */
static int th_yuv_to_tensor(THCuda *cuda, const AVFrame *frame, int channels,
                            const THInputSpec &spec, torch::Tensor &input)
{
    const int64_t h = frame->height, w = frame->width;

    if (channels != 1) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "YUV CUDA frames go only to a "
               "one-channel model\n");
        return AVERROR(EINVAL);
    }
    input = th_yuv_values(cuda, th_yuv_view(cuda, frame, 0, h, w))
                .mul(1.0f / ((1 << cuda->depth) - 1)).view({ 1, 1, h, w })
                .to(spec.dtype);
    return 0;
}

/*
 * A one-channel output as the Y plane, and the input's chroma as it is
 * (get_output_th() refuses models that change the size on YUV frames).
 * The chroma is copied here, in VRAM: vf_dnn_processing copies the chroma
 * of CPU frames itself (copy_uv_planes()), but not of CUDA frames.
 */
static void th_tensor_to_yuv(THCuda *cuda, const torch::Tensor &output,
                             const AVFrame *in, AVFrame *frame)
{
    const int64_t h = output.size(2), w = output.size(3);
    const int64_t ch = AV_CEIL_RSHIFT(h, cuda->sub_h), cw = AV_CEIL_RSHIFT(w, cuda->sub_w);
    const double max = (1 << cuda->depth) - 1;
    /* one float and (P010) one int32 temporary; the rest in place */
    torch::Tensor y = output[0].to(torch::kFloat32, false, true).mul_(max)
                          .nan_to_num_(0.0).round_().clamp_(0.0, max)
                          .permute({ 1, 2, 0 });

    /* P010 keeps a sample in the high bits of a 16-bit word, and the plane
     * is an int16 view (LibTorch has no uint16 copy): a word from 32768 up
     * goes in as the int16 of the same 16 bits, word - 65536, so that the
     * copy converts only values int16 holds. */
    if (cuda->depth > 8)
        y = y.to(torch::kInt32).bitwise_left_shift_(16 - cuda->depth)
                 .bitwise_xor_(0x8000).sub_(0x8000);
    th_yuv_view(cuda, frame, 0, h, w).copy_(y);
    for (int p = 1; p < (cuda->interleaved ? 2 : 3); p++)
        th_yuv_view(cuda, frame, p, ch, cw).copy_(th_yuv_view(cuda, in, p, ch, cw));
}

/* ---- packed RGB frames ---- */

/* Model channels 0..C-1 sit in consecutive bytes: one strided view takes them. */
static bool th_bytes_in_order(const int *byte, int channels)
{
    for (int c = 1; c < channels; c++)
        if (byte[c] != byte[0] + c)
            return false;
    return true;
}

/*
 * H x W x C uint8 (any strides) times 1/255 into input (1 x C x H x W, in the
 * model's dtype and layout), one kernel per channel run in byte order;
 * byte[c] is the byte of model channel c.
 */
static void th_bytes_to_input(const torch::Tensor &src, const int *byte, int channels,
                              const torch::Tensor &kinv255, torch::Tensor &input)
{
    if (th_bytes_in_order(byte, channels)) {
        torch::Tensor planes = input[0];
        at::mul_out(planes, src.narrow(2, byte[0], channels).permute({ 2, 0, 1 }), kinv255);
        return;
    }
    for (int c = 0; c < channels; c++) {
        torch::Tensor plane = input[0][c];
        at::mul_out(plane, src.select(2, byte[c]), kinv255);
    }
}

/* A 1 x C x H x W input in store, of the spec's dtype and layout. */
static torch::Tensor th_cuda_input(torch::Tensor &store, int device_index,
                                   const THInputSpec &spec, int64_t c, int64_t h, int64_t w)
{
    if (!store.defined() || store.numel() < c * h * w || !store.is_cuda() ||
        store.scalar_type() != spec.dtype)
        store = torch::empty({ c * h * w }, torch::TensorOptions().dtype(spec.dtype)
                             .device(torch::kCUDA, device_index));
    if (spec.channels_last)
        return store.narrow(0, 0, c * h * w).view({ 1, h, w, c }).permute({ 0, 3, 1, 2 });
    return store.narrow(0, 0, c * h * w).view({ 1, c, h, w });
}

static void th_rgb_to_tensor(THCuda *cuda, const AVFrame *frame, const THInputSpec &spec,
                             torch::Tensor &store, torch::Tensor &input)
{
    input = th_cuda_input(store, cuda->device_index, spec, 3, frame->height, frame->width);
    th_bytes_to_input(th_cuda_view(cuda, frame), cuda->rgb, 3, *cuda->kinv255, input);
}

/*
 * A C x H x W model output (any float dtype and layout) to 8 bits into dst
 * (H x W x bytes, any strides), model channel c into byte[c]:
 * round(clamp(y * 255, 0, 255)), NaN as 0, in float32, then one copy per
 * run of channels in byte order.  The path of builds without the kernel.
 */
static void th_output_to_bytes(const torch::Tensor &y, const int *byte, int channels,
                               torch::Tensor dst)
{
    torch::Tensor u8 = y.to(torch::kFloat32).mul(255.0).nan_to_num_(0.0)
                        .clamp_(0.0, 255.0).round_().to(torch::kUInt8);

    if (th_bytes_in_order(byte, channels)) {
        dst.narrow(2, byte[0], channels).copy_(u8.permute({ 1, 2, 0 }));
        return;
    }
    for (int c = 0; c < channels; c++)
        dst.select(2, byte[c]).copy_(u8[c]);
}

/* The output written by our kernel in one pass; false where it cannot be. */
static bool th_kernel_to_rgb(THCuda *cuda, const torch::Tensor &y, AVFrame *frame)
{
    static const torch::ScalarType types[3] = {
        torch::kFloat32, torch::kFloat16, torch::kBFloat16,
    };
    THBytesOut o = {};

    o.dtype = -1;
    for (int i = 0; i < 3; i++)
        if (y.scalar_type() == types[i])
            o.dtype = i;
    if (o.dtype < 0 || y.dim() != 3 || y.size(0) < 3 || y.size(1) != frame->height ||
        y.size(2) != frame->width || !y.is_cuda())
        return false;
    o.src = y.data_ptr();
    for (int i = 0; i < 3; i++)
        o.stride[i] = y.stride(i) * y.element_size();
    o.channels = 3;
    o.dst      = frame->data[0];
    o.linesize = frame->linesize[0];
    o.bpp      = cuda->bpp;
    o.pad      = cuda->pad;
    o.width    = frame->width;
    o.height   = frame->height;
    memcpy(o.byte, cuda->rgb, sizeof(o.byte));
    return ff_dnn_th_cudactx_to_bytes(cuda->ctx, c10::cuda::getCurrentCUDAStream().stream(),
                                      &o) >= 0;
}

static void th_tensor_to_rgb(THCuda *cuda, const torch::Tensor &output, AVFrame *frame)
{
    torch::Tensor dst;

    if (th_kernel_to_rgb(cuda, output[0], frame))
        return;
    dst = th_cuda_view(cuda, frame);

    th_output_to_bytes(output[0], cuda->rgb, 3, dst);
    if (cuda->pad >= 0)
        dst.select(2, cuda->pad).fill_(255);
}

/* ---- CPU frames, model on a CUDA device ---- */

struct THCudaStage {
    void *log_ctx;
    c10::cuda::CUDAStream *stream;  ///< the request's own stream
    torch::Tensor *host_in, *host_out;  ///< grow-only page-locked bytes
    torch::Tensor *dev_in, *dev_out;    ///< grow-only device bytes
    torch::Tensor *kinv255;
    int64_t rows, row_bytes;            ///< of the download in flight
};

int ff_dnn_th_cuda_stage_alloc(THCudaStage **pstage, void *log_ctx, int device_index)
{
    THCudaStage *st = (THCudaStage *)av_mallocz(sizeof(*st));

    if (!st)
        return AVERROR(ENOMEM);
    st->log_ctx = log_ctx;
    try {
        st->stream = new c10::cuda::CUDAStream(
            c10::cuda::getStreamFromPool(false, (c10::DeviceIndex)device_index));
        st->host_in  = new torch::Tensor();
        st->host_out = new torch::Tensor();
        st->dev_in   = new torch::Tensor();
        st->dev_out  = new torch::Tensor();
        st->kinv255  = new torch::Tensor(torch::scalar_tensor(1.0f / 255.0f));
    } catch (const std::exception &e) {
        av_log(log_ctx, AV_LOG_ERROR, "LibTorch cannot use cuda:%d: %s\n",
               device_index, th_what(e));
        ff_dnn_th_cuda_stage_free(&st);
        return AVERROR_EXTERNAL;
    }
    *pstage = st;
    return 0;
}

void ff_dnn_th_cuda_stage_free(THCudaStage **pstage)
{
    THCudaStage *st = *pstage;

    if (!st)
        return;
    delete st->stream;
    delete st->host_in;
    delete st->host_out;
    delete st->dev_in;
    delete st->dev_out;
    delete st->kinv255;
    av_freep(pstage);
}

int ff_dnn_th_cuda_stage_run(THCudaStage *st, const std::function<int()> &work)
{
    try {
        THStreamScope scope(*st->stream);
        return work();
    } catch (const std::exception &e) {
        av_log(st->log_ctx, AV_LOG_ERROR, "model on the GPU failed: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
}

/* n bytes of a grow-only store, page-locked on the host or on the device. */
static torch::Tensor th_stage_bytes(torch::Tensor &store, int64_t n, const torch::Device &dev)
{
    if (!store.defined() || store.numel() < n)
        store = torch::empty({ n }, torch::TensorOptions().dtype(torch::kUInt8).device(dev)
                             .pinned_memory(dev.is_cpu()));
    return store.narrow(0, 0, n);
}

int ff_dnn_th_cuda_stage_upload(THCudaStage *st, const AVFrame *in, int channels,
                                const int *byte, torch::Tensor &input)
{
    const int f32 = in->format == AV_PIX_FMT_GRAYF32;
    const int64_t row = (int64_t)in->width * channels * (f32 ? 4 : 1);
    torch::Tensor host = th_stage_bytes(*st->host_in, row * in->height, torch::kCPU);
    torch::Tensor dev  = th_stage_bytes(*st->dev_in, row * in->height, input.device());

    av_image_copy_plane(host.data_ptr<uint8_t>(), row, in->data[0], in->linesize[0],
                        row, in->height);
    dev.copy_(host, true);          /* on the request's stream */
    if (f32) {
        torch::Tensor planes = input[0];
        planes.copy_(dev.view(torch::kFloat32).view({ 1, in->height, in->width }));
        return 0;
    }
    th_bytes_to_input(dev.view({ in->height, in->width, channels }), byte, channels,
                      *st->kinv255, input);
    return 0;
}

int ff_dnn_th_cuda_stage_download(THCudaStage *st, const torch::Tensor &output,
                                  const int *byte, AVFrame *out)
{
    const int f32 = out->format == AV_PIX_FMT_GRAYF32;
    const int channels = (int)output.size(1);
    const int64_t h = output.size(2), w = output.size(3), row = w * channels * (f32 ? 4 : 1);
    torch::Tensor dev  = th_stage_bytes(*st->dev_out, row * h, output.device());
    torch::Tensor host = th_stage_bytes(*st->host_out, row * h, torch::kCPU);

    if (f32)
        dev.view(torch::kFloat32).view({ 1, h, w }).copy_(output[0]);
    else
        th_output_to_bytes(output[0], byte, channels, dev.view({ h, w, channels }));
    host.copy_(dev, true);
    st->rows      = h;
    st->row_bytes = row;
    return 0;
}

int ff_dnn_th_cuda_stage_finish(THCudaStage *st, AVFrame *out)
{
    try {
        st->stream->synchronize();
    } catch (const std::exception &e) {
        av_log(st->log_ctx, AV_LOG_ERROR, "model on the GPU failed: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
    av_image_copy_plane(out->data[0], out->linesize[0], st->host_out->data_ptr<uint8_t>(),
                        st->row_bytes, st->row_bytes, (int)st->rows);
    return 0;
}

/* ---- entry points ---- */

int ff_dnn_th_cuda_frame_to_tensor(THCuda *cuda, const AVFrame *frame, int channels,
                                   const THInputSpec &spec, torch::Tensor &store,
                                   torch::Tensor &input)
{
    try {
        if (cuda->yuv)
            return th_yuv_to_tensor(cuda, frame, channels, spec, input);
        th_rgb_to_tensor(cuda, frame, spec, store, input);
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "could not map the CUDA frame: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
    return 0;
}

/* rgba and bgra keep the input's alpha where the model keeps the size. */
static void th_keep_alpha(const THCuda *cuda, const AVFrame *in, AVFrame *frame)
{
    if (!cuda->alpha || in->width != frame->width || in->height != frame->height)
        return;
    th_cuda_view(cuda, frame).select(2, cuda->pad)
        .copy_(th_cuda_view(cuda, in).select(2, cuda->pad));
}

int ff_dnn_th_cuda_tensor_to_frame(THCuda *cuda, const torch::Tensor &output,
                                   const AVFrame *in, AVFrame *frame)
{
    /* the caller checked the output's size against the frame's */
    if (!output.is_cuda() || output.get_device() != cuda->device_index) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "model output is on %s, not on cuda:%d "
               "with the frames\n", output.device().str().c_str(), cuda->device_index);
        return AVERROR(EINVAL);
    }

    try {
        if (cuda->yuv)
            th_tensor_to_yuv(cuda, output, in, frame);
        else
            th_tensor_to_rgb(cuda, output, frame);
        th_keep_alpha(cuda, in, frame);
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "could not write the CUDA frame: %s\n", th_what(e));
        return AVERROR_EXTERNAL;
    }
    return 0;
}
