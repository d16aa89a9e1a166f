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
 * LibTorch works in the device's primary context.  When FFmpeg uses it too
 * (primary_ctx=1), LibTorch runs on FFmpeg's own stream.  Otherwise the two
 * contexts' streams are ordered with events: a kernel in the primary context
 * reads memory of FFmpeg's context on the same device directly.
 */

#include <c10/cuda/CUDAStream.h>

extern "C" {
#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"
#include "../filters.h"
#include "dnn_backend_torch_cudactx.h"
}

#include "dnn_backend_torch_cuda.h"

struct THCuda {
    void *log_ctx;
    THCudaCtx *ctx;         ///< FFmpeg's context, stream and events
    enum AVPixelFormat sw_format;
    int bpp;                ///< bytes per pixel
    int rgb[3];             ///< byte of R, G and B in a pixel
    int pad;                ///< padding byte, or -1
    int yuv;                ///< planar/semi-planar YUV: nv12, p010, yuv420p, yuv444p
    int depth;              ///< bits per YUV sample (8 or 10)
    int sub;                ///< log2 of chroma subsampling (both directions)
    int interleaved;        ///< chroma as UV pairs in plane 1
    int device_index;
    int primary;            ///< FFmpeg works in the primary context
    cudaStream_t stream;    ///< where LibTorch works
    torch::Tensor *k255;    ///< the 0-dim divisor of uint8 -> [0, 1]
};

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
 * Makes a stream LibTorch's current one on its device for the scope.
 * (c10's CUDAStreamGuard would tie this unit to libcudart.)
 */
class THStreamScope {
public:
    explicit THStreamScope(c10::cuda::CUDAStream stream)
        : prev(c10::cuda::getCurrentCUDAStream(stream.device_index()))
    {
        c10::cuda::setCurrentCUDAStream(stream);
    }
    ~THStreamScope()
    {
        c10::cuda::setCurrentCUDAStream(prev);
    }
private:
    c10::cuda::CUDAStream prev;
};

static int th_cuda_layout(THCuda *cuda)
{
    static const struct {
        enum AVPixelFormat fmt;
        int bpp, r, g, b, pad;
    } layouts[] = {
        { AV_PIX_FMT_RGB24, 3, 0, 1, 2, -1 },
        { AV_PIX_FMT_BGR24, 3, 2, 1, 0, -1 },
        { AV_PIX_FMT_RGB0,  4, 0, 1, 2,  3 },
        { AV_PIX_FMT_BGR0,  4, 2, 1, 0,  3 },
        { AV_PIX_FMT_0RGB,  4, 1, 2, 3,  0 },
        { AV_PIX_FMT_0BGR,  4, 3, 2, 1,  0 },
        { AV_PIX_FMT_RGBA,  4, 0, 1, 2,  3 },   /* alpha written opaque */
        { AV_PIX_FMT_BGRA,  4, 2, 1, 0,  3 },
    };

    static const struct {
        enum AVPixelFormat fmt;
        int depth, sub, interleaved;
    } yuv[] = {
        { AV_PIX_FMT_NV12,     8, 1, 1 },
        { AV_PIX_FMT_P010,    10, 1, 1 },
        { AV_PIX_FMT_YUV420P,  8, 1, 0 },
        { AV_PIX_FMT_YUV444P,  8, 0, 0 },
    };

    for (size_t i = 0; i < FF_ARRAY_ELEMS(yuv); i++) {
        if (yuv[i].fmt != cuda->sw_format)
            continue;
        cuda->yuv         = 1;
        cuda->depth       = yuv[i].depth;
        cuda->sub         = yuv[i].sub;
        cuda->interleaved = yuv[i].interleaved;
        return 0;
    }
    for (size_t i = 0; i < FF_ARRAY_ELEMS(layouts); i++) {
        if (layouts[i].fmt != cuda->sw_format)
            continue;
        cuda->bpp    = layouts[i].bpp;
        cuda->rgb[0] = layouts[i].r;
        cuda->rgb[1] = layouts[i].g;
        cuda->rgb[2] = layouts[i].b;
        cuda->pad    = layouts[i].pad;
        return 0;
    }
    av_log(cuda->log_ctx, AV_LOG_ERROR, "CUDA frames of sw_format %s are not "
           "supported by the torch backend\n", av_get_pix_fmt_name(cuda->sw_format));
    return AVERROR(ENOSYS);
}

int ff_dnn_th_cuda_init(THCuda **pcuda, void *log_ctx, const AVFilterLink *inlink,
                        int *device_index)
{
    FilterLink *l = ff_filter_link((AVFilterLink *)inlink);
    THCuda *cuda;
    int ret;

    ff_dnn_th_cuda_uninit(pcuda);
    if (!l->hw_frames_ctx) {
        av_log(log_ctx, AV_LOG_ERROR, "CUDA frames without a frames context\n");
        return AVERROR(EINVAL);
    }

    cuda = (THCuda *)av_mallocz(sizeof(*cuda));
    if (!cuda)
        return AVERROR(ENOMEM);
    *pcuda = cuda;
    cuda->log_ctx   = log_ctx;
    cuda->sw_format = ((AVHWFramesContext *)l->hw_frames_ctx->data)->sw_format;
    ret = th_cuda_layout(cuda);
    if (ret < 0)
        return ret;
    ret = ff_dnn_th_cudactx_init(&cuda->ctx, log_ctx, l->hw_frames_ctx,
                                 &cuda->device_index, &cuda->primary);
    if (ret < 0)
        return ret;

    try {
        c10::DeviceIndex index = (c10::DeviceIndex)cuda->device_index;
        cuda->k255   = new torch::Tensor(torch::scalar_tensor(255.0));
        cuda->stream = cuda->primary ?
                       (cudaStream_t)ff_dnn_th_cudactx_stream(cuda->ctx) :
                       c10::cuda::getStreamFromPool(false, index).stream();
    } catch (const std::exception &e) {
        av_log(log_ctx, AV_LOG_ERROR, "LibTorch cannot use cuda:%d: %s\n",
               cuda->device_index, e.what());
        return AVERROR_EXTERNAL;
    }

    av_log(log_ctx, AV_LOG_VERBOSE, "CUDA frames (%s) on cuda:%d, %s\n",
           av_get_pix_fmt_name(cuda->sw_format), cuda->device_index,
           cuda->primary ? "FFmpeg uses the primary context: LibTorch runs on "
                           "FFmpeg's stream" :
                           "FFmpeg uses its own context: mapped without a copy, "
                           "streams ordered with events");
    *device_index = cuda->device_index;
    return 0;
}

void ff_dnn_th_cuda_uninit(THCuda **pcuda)
{
    if (!*pcuda)
        return;
    delete (*pcuda)->k255;
    ff_dnn_th_cudactx_uninit(&(*pcuda)->ctx);
    av_freep(pcuda);
}

enum AVPixelFormat ff_dnn_th_cuda_sw_format(const THCuda *cuda)
{
    return cuda->sw_format;
}

int ff_dnn_th_cuda_run(THCuda *cuda, const std::function<int()> &work)
{
    c10::DeviceIndex index = (c10::DeviceIndex)cuda->device_index;
    int ret;

    try {
        if (cuda->primary) {
            THCudaPush push(cuda->ctx);
            if (!push.ok)
                return AVERROR_EXTERNAL;
            THStreamScope scope(cuda->stream ?
                c10::cuda::getStreamFromExternal(cuda->stream, index) :
                c10::cuda::getDefaultCUDAStream(index));
            return work();
        }

        ret = ff_dnn_th_cudactx_wait_frames(cuda->ctx, cuda->stream);
        if (ret < 0)
            return ret;
        {
            THStreamScope scope(c10::cuda::getStreamFromExternal(cuda->stream, index));
            ret = work();
        }
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "CUDA stream setup failed: %s\n", e.what());
        return AVERROR_EXTERNAL;
    }
    /* even after a failed run, later work on FFmpeg's stream waits for ours */
    if (ff_dnn_th_cudactx_signal_frames(cuda->ctx, cuda->stream) < 0)
        return AVERROR_EXTERNAL;
    return ret;
}

/* The frame's plane as an H x W x bpp uint8 tensor in VRAM, padding respected. */
static torch::Tensor th_cuda_view(const THCuda *cuda, const AVFrame *frame)
{
    return torch::from_blob(frame->data[0], { frame->height, frame->width, cuda->bpp },
                            { frame->linesize[0], cuda->bpp, 1 },
                            torch::TensorOptions().dtype(torch::kUInt8)
                                .device(torch::kCUDA, cuda->device_index));
}

/* R, G, B of a pixel in increasing byte order: one strided view does it. */
static bool th_cuda_rgb_order(const THCuda *cuda)
{
    return cuda->rgb[1] == cuda->rgb[0] + 1 && cuda->rgb[2] == cuda->rgb[0] + 2;
}

int ff_dnn_th_cuda_is_yuv(const THCuda *cuda)
{
    return cuda->yuv;
}

/* ---- YUV frames (NVDEC output and friends) ---- */

typedef struct THYuvMatrix {
    double kr, kb;
    int full;
} THYuvMatrix;

/* The frame's colour matrix and range, with swscale's defaults (BT.601, limited). */
static THYuvMatrix th_yuv_matrix(const AVFrame *frame)
{
    THYuvMatrix m = { 0.299, 0.114, frame->color_range == AVCOL_RANGE_JPEG };

    switch (frame->colorspace) {
    case AVCOL_SPC_BT709:
        m.kr = 0.2126;
        m.kb = 0.0722;
        break;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
        m.kr = 0.2627;
        m.kb = 0.0593;
        break;
    default:
        break;
    }
    return m;
}

/*
 * Chroma resampling on swscale's grid, so that the GPU path and the CPU path
 * (swscale to RGB and back, flags area+full_chroma_int+full_chroma_inp)
 * agree.  Along one axis of n luma samples and m chroma samples, chroma
 * sample j sits at luma position (j + (pos + 0.5) / 2) * n / m - 0.5, where
 * pos is the frame's chroma location in luma samples (0 left or top, 0.5
 * center, 1 bottom); n / m is 2 except for odd sizes.
 */
static void th_chroma_location(const AVFrame *frame, double *x, double *y)
{
    int xpos, ypos;

    if (av_chroma_location_enum_to_pos(&xpos, &ypos, frame->chroma_location) < 0)
        xpos = ypos = 128;          /* unspecified: center, as swscale */
    *x = xpos / 256.0;
    *y = ypos / 256.0;
}

/* Weighted sum of c's samples at indices (clamped to the edges) along dim. */
static torch::Tensor th_taps(const torch::Tensor &c, int dim, const torch::Tensor &index,
                             const torch::Tensor &weight, const torch::Tensor &sum)
{
    torch::Tensor t = c.index_select(dim, index.to(torch::kLong).clamp(0, c.size(dim) - 1));

    t = t.mul(dim ? weight : weight.unsqueeze(1));
    return sum.defined() ? sum.add(t) : t;
}

/* Chroma (m samples along dim) to luma resolution n: linear interpolation. */
static torch::Tensor th_chroma_up(const torch::Tensor &c, int dim, int64_t n, double pos)
{
    const int64_t m = c.size(dim);
    torch::Tensor src = (torch::arange(n, c.options()) + 0.5) * ((double)m / n) - (pos + 0.5) / 2;
    torch::Tensor i = src.floor(), f = src - i, sum;

    sum = th_taps(c, dim, i, 1 - f, sum);
    return th_taps(c, dim, i + 1, f, sum);
}

/* Luma resolution (n samples along dim) to m chroma samples: area average. */
static torch::Tensor th_chroma_down(const torch::Tensor &c, int dim, int64_t m, double pos)
{
    const double r = (double)c.size(dim) / m;     /* at most 2 */
    torch::Tensor p = (torch::arange(m, c.options()) + (pos + 0.5) / 2) * r - 0.5;
    torch::Tensor k0 = p.floor(), sum;

    for (int d = -1; d <= 2; d++) {
        torch::Tensor k = k0 + d;
        torch::Tensor w = (torch::minimum(p + r / 2, k + 0.5) -
                           torch::maximum(p - r / 2, k - 0.5)).clamp_min(0) / r;
        sum = th_taps(c, dim, k, w, sum);
    }
    return sum;
}

/*
 * Chroma planes when a one-channel model changes the size, as the CPU path
 * scales them with swscale's bicubic (Keys, a = -0.6): five taps from
 * trunc(src - 1.5), renormalized where that drops one at the top or left
 * edge, horizontal pass first with its result capped at 32767 / 128.
 */
static torch::Tensor th_cubic(const torch::Tensor &c, int dim, int64_t n)
{
    const double a = -0.6;
    const int64_t m = c.size(dim);
    torch::Tensor src = (torch::arange(n, c.options()) + 0.5) * ((double)m / n) - 0.5;
    torch::Tensor first = (src - 1.5).trunc(), sum, wsum;

    for (int k = 0; k < 5; k++) {
        torch::Tensor d = (src - (first + k)).abs();
        torch::Tensor near = ((a + 2) * d - (a + 3)) * d * d + 1;
        torch::Tensor far  = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
        torch::Tensor w = torch::where(d < 1, near, far).masked_fill_(d >= 2, 0.0);
        sum  = th_taps(c, dim, first + k, w, sum);
        wsum = wsum.defined() ? wsum + w : w;
    }
    return sum.div(dim ? wsum : wsum.unsqueeze(1));
}

static torch::Tensor th_chroma_resize(const torch::Tensor &c, int64_t h, int64_t w, int depth)
{
    torch::Tensor t = th_cubic(c.to(torch::kFloat32), 1, w);

    t = t.clamp_max((double)(1 << depth) - 1.0 / 128);
    return th_cubic(t, 0, h);
}

/* Plane p of a YUV CUDA frame as an int32 H x W (x 2 for UV pairs) tensor of sample values. */
static torch::Tensor th_yuv_plane(const THCuda *cuda, const AVFrame *frame, int p,
                                  int64_t h, int64_t w)
{
    auto opts = torch::TensorOptions().device(torch::kCUDA, cuda->device_index);
    int bytes = cuda->depth > 8 ? 2 : 1;
    int pairs = p && cuda->interleaved ? 2 : 1;
    torch::Tensor t = torch::from_blob(frame->data[p], { h, w, pairs },
                                       { frame->linesize[p] / bytes, pairs, 1 },
                                       opts.dtype(bytes == 2 ? torch::kInt16 : torch::kUInt8));

    t = t.to(torch::kInt32);
    if (bytes == 2)
        t = t.bitwise_and(0xffff).bitwise_right_shift(16 - cuda->depth);
    return t;
}

static void th_yuv_chroma_planes(const THCuda *cuda, const AVFrame *frame,
                                 torch::Tensor &u, torch::Tensor &v)
{
    int64_t ch = -(-(int64_t)frame->height >> cuda->sub);
    int64_t cw = -(-(int64_t)frame->width  >> cuda->sub);

    if (cuda->interleaved) {
        torch::Tensor uv = th_yuv_plane(cuda, frame, 1, ch, cw);
        u = uv.select(2, 0);
        v = uv.select(2, 1);
    } else {
        u = th_yuv_plane(cuda, frame, 1, ch, cw).select(2, 0);
        v = th_yuv_plane(cuda, frame, 2, ch, cw).select(2, 0);
    }
}

static int th_yuv_to_tensor(THCuda *cuda, const AVFrame *frame, int channels,
                            torch::Tensor &input)
{
    const int64_t h = frame->height, w = frame->width;
    const double scale = 1 << (cuda->depth - 8), max = (1 << cuda->depth) - 1;
    THYuvMatrix m = th_yuv_matrix(frame);
    torch::Tensor y = th_yuv_plane(cuda, frame, 0, h, w).select(2, 0).to(torch::kFloat32);
    torch::Tensor u, v;
    double kg = 1.0 - m.kr - m.kb;

    if (channels == 1) {            /* the Y plane as the CPU path gives it */
        input = y.div(max).view({ 1, 1, h, w });
        return 0;
    }
    th_yuv_chroma_planes(cuda, frame, u, v);
    u = u.to(torch::kFloat32);
    v = v.to(torch::kFloat32);
    if (cuda->sub) {
        double px, py;
        th_chroma_location(frame, &px, &py);
        u = th_chroma_up(th_chroma_up(u, 0, h, py), 1, w, px);
        v = th_chroma_up(th_chroma_up(v, 0, h, py), 1, w, px);
    }
    u = u.sub(128 * scale);
    v = v.sub(128 * scale);
    if (m.full) {
        y = y.div(max);
        u = u.div(max);
        v = v.div(max);
    } else {
        y = y.sub(16 * scale).div(219 * scale);
        u = u.div(224 * scale);
        v = v.div(224 * scale);
    }
    input = torch::stack({ y + 2 * (1 - m.kr) * v,
                           y - (2 * m.kb * (1 - m.kb) / kg) * u - (2 * m.kr * (1 - m.kr) / kg) * v,
                           y + 2 * (1 - m.kb) * u }).clamp_(0.0, 1.0).unsqueeze(0);
    return 0;
}

/* Write sample values (float, already in range) into plane p. */
static void th_yuv_store(const THCuda *cuda, AVFrame *frame, int p, int pair,
                         const torch::Tensor &values)
{
    const double max = (1 << cuda->depth) - 1;
    int64_t h = values.size(0), w = values.size(1);
    int bytes = cuda->depth > 8 ? 2 : 1;
    int pairs = p && cuda->interleaved ? 2 : 1;
    auto opts = torch::TensorOptions().device(torch::kCUDA, cuda->device_index);
    torch::Tensor out = torch::from_blob(frame->data[p], { h, w, pairs },
                                         { frame->linesize[p] / bytes, pairs, 1 },
                                         opts.dtype(bytes == 2 ? torch::kInt16 : torch::kUInt8));
    torch::Tensor q = values.round().clamp(0.0, max).to(torch::kInt32);

    if (bytes == 2)
        q = q.bitwise_left_shift(16 - cuda->depth);
    out.select(2, pair).copy_(q);
}

static int th_tensor_to_yuv(THCuda *cuda, const torch::Tensor &output,
                            const AVFrame *in, AVFrame *frame)
{
    const int64_t h = output.size(2), w = output.size(3);
    const double scale = 1 << (cuda->depth - 8), max = (1 << cuda->depth) - 1;
    int64_t ch = -(-h >> cuda->sub), cw = -(-w >> cuda->sub);
    THYuvMatrix m = th_yuv_matrix(frame);
    torch::Tensor o = output[0].to(torch::kFloat32).clamp(0.0, 1.0), y, u, v;
    double kg = 1.0 - m.kr - m.kb;

    if (o.size(0) == 1) {           /* Y from the model, chroma carried over */
        th_yuv_store(cuda, frame, 0, 0, o[0] * max);
        th_yuv_chroma_planes(cuda, in, u, v);
        if (u.size(0) != ch || u.size(1) != cw) {
            u = th_chroma_resize(u, ch, cw, cuda->depth);
            v = th_chroma_resize(v, ch, cw, cuda->depth);
        }
        th_yuv_store(cuda, frame, 1, 0, u.to(torch::kFloat32));
        th_yuv_store(cuda, frame, cuda->interleaved ? 1 : 2, cuda->interleaved ? 1 : 0,
                     v.to(torch::kFloat32));
        return 0;
    }

    y = m.kr * o[0] + kg * o[1] + m.kb * o[2];
    u = (o[2] - y) / (2 * (1 - m.kb));
    v = (o[0] - y) / (2 * (1 - m.kr));
    if (cuda->sub) {                /* chroma downsampled by averaging */
        double px, py;
        th_chroma_location(frame, &px, &py);
        u = th_chroma_down(th_chroma_down(u, 0, ch, py), 1, cw, px);
        v = th_chroma_down(th_chroma_down(v, 0, ch, py), 1, cw, px);
    }
    if (m.full) {
        y = y * max;
        u = u * max + 128 * scale;
        v = v * max + 128 * scale;
    } else {
        y = y * (219 * scale) + 16 * scale;
        u = u * (224 * scale) + 128 * scale;
        v = v * (224 * scale) + 128 * scale;
    }
    th_yuv_store(cuda, frame, 0, 0, y);
    th_yuv_store(cuda, frame, 1, 0, u);
    th_yuv_store(cuda, frame, cuda->interleaved ? 1 : 2, cuda->interleaved ? 1 : 0, v);
    return 0;
}

/* ---- packed RGB frames ---- */

static void th_rgb_to_tensor(THCuda *cuda, const AVFrame *frame,
                             torch::Tensor &store, torch::Tensor &input)
{
    const int64_t h = frame->height, w = frame->width;
    torch::Tensor src = th_cuda_view(cuda, frame);

    if (!store.defined() || store.numel() < 3 * h * w || !store.is_cuda())
        store = torch::empty({ 3 * h * w }, torch::TensorOptions()
                             .device(torch::kCUDA, cuda->device_index));
    input = store.narrow(0, 0, 3 * h * w).view({ 1, 3, h, w });
    /* one kernel: strided uint8 in, float out */
    if (th_cuda_rgb_order(cuda)) {
        torch::Tensor planes = input[0];
        at::div_out(planes, src.narrow(2, cuda->rgb[0], 3).permute({ 2, 0, 1 }),
                    *cuda->k255);
    } else {
        for (int c = 0; c < 3; c++) {
            torch::Tensor plane = input[0][c];
            at::div_out(plane, src.select(2, cuda->rgb[c]), *cuda->k255);
        }
    }
}

static void th_tensor_to_rgb(THCuda *cuda, const torch::Tensor &output, AVFrame *frame)
{
    torch::Tensor dst = th_cuda_view(cuda, frame);
    torch::Tensor y = output[0], u8;

    /*
     * round(clamp(y, 0, 1) * 255) in one kernel: quantization to 8 bits
     * with scale 1/255 rounds to nearest and saturates.
     */
    if (y.scalar_type() != torch::kFloat32)
        y = y.to(torch::kFloat32);
    u8 = at::quantize_per_tensor(y, 1.0 / 255.0, 0, torch::kQUInt8).int_repr();
    if (th_cuda_rgb_order(cuda)) {
        dst.narrow(2, cuda->rgb[0], 3).copy_(u8.permute({ 1, 2, 0 }));
    } else {
        for (int c = 0; c < 3; c++)
            dst.select(2, cuda->rgb[c]).copy_(u8[c]);
    }
    if (cuda->pad >= 0)
        dst.select(2, cuda->pad).fill_(255);
}

/* ---- entry points ---- */

int ff_dnn_th_cuda_frame_to_tensor(THCuda *cuda, const AVFrame *frame, int channels,
                                   torch::Tensor &store, torch::Tensor &input)
{
    try {
        if (cuda->yuv)
            return th_yuv_to_tensor(cuda, frame, channels, input);
        th_rgb_to_tensor(cuda, frame, store, input);
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "could not map the CUDA frame: %s\n", e.what());
        return AVERROR_EXTERNAL;
    }
    return 0;
}

int ff_dnn_th_cuda_tensor_to_frame(THCuda *cuda, const torch::Tensor &output,
                                   const AVFrame *in, AVFrame *frame)
{
    const int64_t h = output.size(2), w = output.size(3);

    if (h != frame->height || w != frame->width) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "model output is %" PRId64 "x%" PRId64
               " but the output CUDA frame is %dx%d; a CUDA stream cannot change "
               "size without reconfiguring the filter graph\n", w, h,
               frame->width, frame->height);
        return AVERROR(EINVAL);
    }
    if (!output.is_cuda() || output.get_device() != cuda->device_index) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "model output is on %s, not on cuda:%d "
               "with the frames\n", output.device().str().c_str(), cuda->device_index);
        return AVERROR(EINVAL);
    }

    try {
        if (cuda->yuv)
            return th_tensor_to_yuv(cuda, output, in, frame);
        th_tensor_to_rgb(cuda, output, frame);
    } catch (const std::exception &e) {
        av_log(cuda->log_ctx, AV_LOG_ERROR, "could not write the CUDA frame: %s\n", e.what());
        return AVERROR_EXTERNAL;
    }
    return 0;
}
