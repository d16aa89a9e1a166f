/*
 * LibTorch DNN backend: CUDA kernels
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

/*
 * A model's output (C x H x W, any strides in bytes, float32, float16 or
 * bfloat16) to packed 8-bit pixels in one pass: round(clamp(v * 255, 0,
 * 255)), NaN giving 0, as the CPU path computes it in float; the padding
 * byte, if any, set to 255.  One thread per pixel, blockIdx.y the row.
 */

enum { TH_F32, TH_F16, TH_BF16 };

union th_bits {
    unsigned int u;
    float f;
};

static __device__ float th_half(unsigned short h)
{
    unsigned int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    union th_bits v;

    if (exp == 0x1f)                /* infinities and NaNs */
        v.u = 0x7f800000u | man << 13;
    else if (exp)                   /* normal: rebias 15 to 127 */
        v.u = (exp + 112) << 23 | man << 13;
    else                            /* zero and subnormal: man * 2^-24 */
        v.f = man * 5.9604644775390625e-8f;
    v.u |= (unsigned int)(h & 0x8000) << 16;
    return v.f;
}

template<int T>
static __device__ float th_load(const unsigned char *p)
{
    union th_bits v;

    if (T == TH_F32)
        return *(const float *)p;
    if (T == TH_F16)
        return th_half(*(const unsigned short *)p);
    v.u = (unsigned int)*(const unsigned short *)p << 16;
    return v.f;
}

static __device__ unsigned char th_byte(float v)
{
    /* __saturatef() clamps to [0, 1] and gives 0 for NaN */
    return (unsigned char)(int)rintf(__saturatef(v) * 255.0f);
}

template<int T>
static __device__ void th_to_bytes(const unsigned char *src, unsigned char *dst,
                                   unsigned long long sc, unsigned long long sh,
                                   unsigned long long sw, unsigned long long ls,
                                   unsigned int bpp, unsigned int b0, unsigned int b1,
                                   unsigned int b2, int pad, unsigned int ch,
                                   unsigned int w)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    const unsigned char *s = src + y * sh + x * sw;
    unsigned char *d = dst + y * ls + x * bpp;

    if (x >= w)
        return;
    d[b0] = th_byte(th_load<T>(s));
    if (ch >= 3) {
        d[b1] = th_byte(th_load<T>(s + sc));
        d[b2] = th_byte(th_load<T>(s + 2 * sc));
    }
    if (pad >= 0)
        d[pad] = 255;
}

#define TH_TO_BYTES(name, type)                                                   \
__global__ void name(const unsigned char *src, unsigned char *dst,                \
                     unsigned long long sc, unsigned long long sh,                \
                     unsigned long long sw, unsigned long long ls,                \
                     unsigned int bpp, unsigned int b0, unsigned int b1,          \
                     unsigned int b2, int pad, unsigned int ch, unsigned int w)   \
{                                                                                 \
    th_to_bytes<type>(src, dst, sc, sh, sw, ls, bpp, b0, b1, b2, pad, ch, w);     \
}

extern "C" {

TH_TO_BYTES(th_to_bytes_f32,  TH_F32)
TH_TO_BYTES(th_to_bytes_f16,  TH_F16)
TH_TO_BYTES(th_to_bytes_bf16, TH_BF16)

}
