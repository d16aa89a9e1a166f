"""Float64 reference of the GPU path's YUV <-> RGB conversions, written
independently of the backend in PyTorch, for the GPU suite's 10-bit
precision test.

The chroma grid is swscale's: along an axis of n luma and m chroma samples,
chroma sample j sits at luma position (j + (pos + 0.5) / 2) * n / m - 0.5
(pos: 0 left/top, 0.5 center, 1 bottom).  Upsampling is linear, downsampling
an area average.
"""

import torch

KR_KB = {"bt709": (0.2126, 0.0722), "smpte170m": (0.299, 0.114),
         "bt470bg": (0.299, 0.114), "bt2020nc": (0.2627, 0.0593)}
LOCATION = {"left": (0.0, 0.5), "center": (0.5, 0.5), "topleft": (0.0, 0.0),
            "top": (0.5, 0.0), "bottomleft": (0.0, 1.0), "bottom": (0.5, 1.0)}
F64 = torch.float64


def _along(dim, values):
    """values (one per sample along dim) shaped to broadcast over a plane."""
    return values if dim else values[:, None]


def _pick(c, dim, index):
    return c.index_select(dim, index.long().clamp(0, c.shape[dim] - 1))


def upsample(c, dim, n, pos, smooth=False):
    """smooth: weights 3f^2 - 2f^3 instead of f (scale_cuda's bicubic with
    its default parameter, whose outer taps are 0)."""
    m = c.shape[dim]
    src = (torch.arange(n, dtype=F64) + 0.5) * m / n - (pos + 0.5) / 2
    i = src.floor()
    f = _along(dim, src - i)
    if smooth:
        f = f * f * (3 - 2 * f)
    return _pick(c, dim, i) * (1 - f) + _pick(c, dim, i + 1) * f


def downsample(c, dim, m, pos):
    n = c.shape[dim]
    r = n / m
    p = (torch.arange(m, dtype=F64) + (pos + 0.5) / 2) * r - 0.5
    out = 0
    for d in range(-1, 3):
        k = p.floor() + d
        w = (torch.minimum(p + r / 2, k + 0.5) - torch.maximum(p - r / 2, k - 0.5))
        out = out + _pick(c, dim, k) * _along(dim, w.clamp(min=0) / r)
    return out


class Format:
    def __init__(self, sw, w, h):
        self.sw, self.w, self.h = sw, w, h
        self.depth = 10 if sw.startswith("p010") else 8
        self.sub = 0 if sw == "yuv444p" else 1
        self.ch, self.cw = -(-h >> self.sub), -(-w >> self.sub)
        self.pairs = sw in ("nv12", "p010le")
        self.frame_bytes = (w * h + 2 * self.ch * self.cw) * (2 if self.depth > 8 else 1)

    def unpack(self, data):
        """Raw frame bytes to float64 Y, U, V sample values."""
        if self.depth > 8:
            t = torch.frombuffer(bytearray(data), dtype=torch.int16).int() & 0xffff
            t = t >> (16 - self.depth)
        else:
            t = torch.frombuffer(bytearray(data), dtype=torch.uint8).int()
        t = t.to(F64)
        n, c = self.w * self.h, self.ch * self.cw
        y = t[:n].view(self.h, self.w)
        if self.pairs:
            uv = t[n:n + 2 * c].view(self.ch, self.cw, 2)
            return y, uv[..., 0], uv[..., 1]
        return y, t[n:n + c].view(self.ch, self.cw), t[n + c:n + 2 * c].view(self.ch, self.cw)

    def pack(self, y, u, v):
        mx = (1 << self.depth) - 1
        y, u, v = [x.round().clamp(0, mx).int() for x in (y, u, v)]
        c = torch.stack([u, v], -1).flatten() if self.pairs else torch.cat([u.flatten(), v.flatten()])
        return torch.cat([y.flatten(), c])


def to_rgb(fmt, y, u, v, spc, full, loc, smooth=False, round_chroma=False):
    """round_chroma: upsampled chroma rounded to sample values first."""
    kr, kb = KR_KB[spc]
    kg = 1 - kr - kb
    s, mx = 1 << (fmt.depth - 8), (1 << fmt.depth) - 1
    if fmt.sub:
        px, py = LOCATION[loc]
        u = upsample(upsample(u, 0, fmt.h, py, smooth), 1, fmt.w, px, smooth)
        v = upsample(upsample(v, 0, fmt.h, py, smooth), 1, fmt.w, px, smooth)
        if round_chroma:
            u, v = u.round(), v.round()
    u, v = u - 128 * s, v - 128 * s
    if full:
        y, u, v = y / mx, u / mx, v / mx
    else:
        y, u, v = (y - 16 * s) / (219 * s), u / (224 * s), v / (224 * s)
    return torch.stack([y + 2 * (1 - kr) * v,
                        y - 2 * kb * (1 - kb) / kg * u - 2 * kr * (1 - kr) / kg * v,
                        y + 2 * (1 - kb) * u]).clamp(0, 1)


def from_rgb(fmt, rgb, spc, full, loc):
    kr, kb = KR_KB[spc]
    kg = 1 - kr - kb
    s, mx = 1 << (fmt.depth - 8), (1 << fmt.depth) - 1
    rgb = rgb.clamp(0, 1)
    y = kr * rgb[0] + kg * rgb[1] + kb * rgb[2]
    u = (rgb[2] - y) / (2 * (1 - kb))
    v = (rgb[0] - y) / (2 * (1 - kr))
    if fmt.sub:
        px, py = LOCATION[loc]
        u = downsample(downsample(u, 0, fmt.ch, py), 1, fmt.cw, px)
        v = downsample(downsample(v, 0, fmt.ch, py), 1, fmt.cw, px)
    if full:
        return y * mx, u * mx + 128 * s, v * mx + 128 * s
    return y * 219 * s + 16 * s, u * 224 * s + 128 * s, v * 224 * s + 128 * s
