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

#include <cmath>
#include <ATen/Parallel.h>

#include "dnn_backend_torch_cpu.h"

/* x * (1 / 255), as dnn_io_proc and swscale make it, in the model's dtype,
 * built once per type, thread-safe. */
template <typename T> struct THLut {
    T v[256];
    THLut() { for (int i = 0; i < 256; i++) v[i] = T(i * (1.0f / 255.0f)); }
};

/* An 8-bit frame into the input at dst, of strides cs, ys, xs. */
template <typename T>
static void th_rows_to_input(const AVFrame *in, int channels, const int *byte, T *dst,
                             const int64_t *stride)
{
    static const THLut<T> lut;
    const int64_t cs = stride[0], ys = stride[1], xs = stride[2];

    for (int y = 0; y < in->height; y++) {
        const uint8_t *row = in->data[0] + (ptrdiff_t)y * in->linesize[0];
        T *d = dst + y * ys;
        for (int x = 0; x < in->width; x++, row += channels, d += xs)
            for (int c = 0; c < channels; c++)
                d[c * cs] = lut.v[row[byte[c]]];
    }
}

void ff_dnn_th_cpu_frame_to_input(const AVFrame *in, int channels, const int *byte,
                                  const torch::Tensor &input)
{
    const int64_t stride[3] = { input.stride(1), input.stride(2), input.stride(3) };
    auto run = [&](auto *dst) {
        th_rows_to_input(in, channels, byte, dst, stride);
    };

    switch (input.scalar_type()) {
    case torch::kHalf:
        run(input.data_ptr<at::Half>());
        break;
    case torch::kBFloat16:
        run(input.data_ptr<at::BFloat16>());
        break;
    default:
        run(input.data_ptr<float>());
        break;
    }
}

/* The output at src, of strides cs, ys, xs, into the 8-bit frame. */
template <typename T>
static void th_rows_to_u8(const T *src, const int64_t *stride, int channels,
                          const int *byte, AVFrame *out)
{
    const int64_t cs = stride[0], ys = stride[1], xs = stride[2];

    for (int y = 0; y < out->height; y++) {
        const T *s = src + y * ys;
        uint8_t *row = out->data[0] + (ptrdiff_t)y * out->linesize[0];
        for (int x = 0; x < out->width; x++, row += channels, s += xs)
            for (int c = 0; c < channels; c++) {
                float v = (float)s[c * cs] * 255.0f;
                v = v > 0.0f ? (v < 255.0f ? v : 255.0f) : 0.0f;
                row[byte[c]] = (uint8_t)lrintf(v);
            }
    }
}

/* One pass of our own, for a caller with one thread. */
static void th_output_alone(const torch::Tensor &output, int channels, const int *byte,
                            AVFrame *out)
{
    const torch::ScalarType type = output.scalar_type();
    const torch::Tensor y = type == torch::kHalf || type == torch::kBFloat16 ?
                            output : output.to(torch::kFloat32);
    const int64_t stride[3] = { y.stride(0), y.stride(1), y.stride(2) };
    auto run = [&](const auto *src) {
        th_rows_to_u8(src, stride, channels, byte, out);
    };

    if (type == torch::kHalf)
        run(y.data_ptr<at::Half>());
    else if (type == torch::kBFloat16)
        run(y.data_ptr<at::BFloat16>());
    else
        run(y.data_ptr<float>());
}

/*
 * LibTorch's vectorized operations on the caller's intra-op threads, in
 * store (grow-only), as packed float pixels: the same values as one pass.
 */
static void th_output_shared(const torch::Tensor &y, int channels, const int *byte,
                             AVFrame *out, torch::Tensor &store)
{
    const int64_t n = (int64_t)channels * out->height * out->width;
    const ptrdiff_t ls = out->linesize[0];
    torch::Tensor f, dst;

    if (!store.defined() || store.numel() < n || store.scalar_type() != torch::kFloat32)
        store = torch::empty({ n }, torch::kFloat32);
    f = store.narrow(0, 0, n).view({ out->height, out->width, channels });
    /* a frame in the model's order (R, G, B; gray): one copy */
    if (channels == 1 || (byte[0] == 0 && byte[1] == 1))
        f.permute({ 2, 0, 1 }).copy_(y);
    else
        for (int c = 0; c < channels; c++)
            f.select(2, byte[c]).copy_(y[c]);
    at::nan_to_num_(f.mul_(255.0), 0.0).clamp_(0.0, 255.0).round_();
    /* no negative strides in LibTorch: a bottom-up frame from its last row */
    dst = torch::from_blob(out->data[0] + (ls < 0 ? (ptrdiff_t)(out->height - 1) * ls : 0),
                           { out->height, out->width, channels },
                           { ls < 0 ? -ls : ls, channels, 1 }, torch::kUInt8);
    dst.copy_(ls < 0 ? f.flip(0) : f);
}

void ff_dnn_th_cpu_output_to_frame(const torch::Tensor &output, int channels,
                                   const int *byte, AVFrame *out, torch::Tensor &store)
{
    /* The calling thread's count (a worker's, which the backend sets; with
     * async=0 the filter thread's own): several threads share the
     * conversion in LibTorch's ops; one thread converts alone, in one pass. */
    if (at::get_num_threads() > 1)
        th_output_shared(output, channels, byte, out, store);
    else
        th_output_alone(output, channels, byte, out);
}
