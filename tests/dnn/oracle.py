"""Independent reference: apply a TorchScript model with PyTorch to raw frames.

    python3 oracle.py MODEL PIXFMT WIDTH HEIGHT IN.raw OUT.raw

PIXFMT is the frame layout on both sides: rgb24, bgr24 (the model always
sees R, G, B), gray8, grayf32, or a planar YUV format whose Y plane goes
through a one-channel model while chroma is carried over (only for models that
keep the size).  Model output of any float type is widened to float32 first;
float to 8 bits is round(clamp(y, 0, 1) * 255).  The input is made in the
dtype of the model's weights (x * (1 / 255) in float32, as dnn_io_proc
and swscale make it, then cast), or in DTYPE
(fp32, fp16, bf16) when given: the model is then cast to it.

    python3 oracle.py MODEL PIXFMT WIDTH HEIGHT IN.raw OUT.raw [DTYPE]

With --window N:ANCHOR (ANCHOR center or last) the model is a temporal
one: it gets 1 x N x C x H x W, the frames around each frame (center: N/2
before and after it; last: the N - 1 before it), the stream's first and
last frame repeated at its edges, and gives that frame's output.

    python3 oracle.py --window N:ANCHOR MODEL PIXFMT WIDTH HEIGHT IN.raw OUT.raw

MODEL may be a checkpoint (.pth, .ckpt, .safetensors): spandrel's own
module for it runs, the independent side of tools/export-model.py.
"""

import sys

import numpy as np
import torch

CHROMA = {  # log2 of the chroma subsampling (w, h); nv12 is interleaved
    "yuv420p": (1, 1), "yuv422p": (1, 0), "yuv444p": (0, 0),
    "yuv410p": (2, 2), "yuv411p": (2, 0), "nv12": (1, 1),
}


def ceil_shift(v, s):
    return -((-v) >> s)


def frame_size(fmt, w, h):
    if fmt in ("rgb24", "bgr24"):
        return w * h * 3
    if fmt == "gray8":
        return w * h
    if fmt == "grayf32":
        return w * h * 4
    cw, ch = CHROMA[fmt]
    return w * h + 2 * ceil_shift(w, cw) * ceil_shift(h, ch)


def to_u8(t):
    return (t.clamp(0.0, 1.0) * 255.0).round().to(torch.uint8)


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def weights_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.float32


def to_input(fmt, w, h, buf, dt):
    """A frame as the model sees it: 1 x C x H x W in dtype dt, R, G, B."""
    if fmt in ("rgb24", "bgr24"):
        x = torch.from_numpy(np.frombuffer(buf, np.uint8).reshape(h, w, 3).copy())
        if fmt == "bgr24":
            x = x.flip(2)
        return (x.permute(2, 0, 1).unsqueeze(0).float() * (1.0 / 255.0)).to(dt)
    if fmt == "grayf32":
        return torch.from_numpy(np.frombuffer(buf, np.float32).reshape(1, 1, h, w).copy())
    x = torch.from_numpy(np.frombuffer(buf[:w * h], np.uint8).reshape(1, 1, h, w).copy())
    return (x.float() * (1.0 / 255.0)).to(dt)


def to_frame(fmt, w, h, y, buf):
    """Model output y as a frame of fmt; chroma of YUV carried over from buf."""
    if fmt in ("rgb24", "bgr24"):
        y = to_u8(y.float()[0]).permute(1, 2, 0)
        if fmt == "bgr24":
            y = y.flip(2)
        return y.contiguous().numpy().tobytes()
    if fmt == "grayf32":
        return y.float()[0, 0].contiguous().numpy().tobytes()
    return to_u8(y.float()[0, 0]).numpy().tobytes() + bytes(buf[w * h:])


def run(model, fmt, w, h, buf):
    return to_frame(fmt, w, h, model(to_input(fmt, w, h, buf, weights_dtype(model))), buf)


def run_windows(model, fmt, w, h, frames, n, anchor):
    """Each frame's output from the window of n frames around it (center:
    n // 2 before and after; last: n - 1 before), the first and last frame
    repeated at the edges, as the backend's window option does."""
    dt = weights_dtype(model)
    xs = [to_input(fmt, w, h, f, dt) for f in frames]
    before = n - 1 if anchor == "last" else n // 2
    for t, buf in enumerate(frames):
        idx = [min(max(t - before + k, 0), len(xs) - 1) for k in range(n)]
        window = torch.stack([xs[i][0] for i in idx]).unsqueeze(0)
        yield to_frame(fmt, w, h, model(window), buf)


def load(path):
    """A TorchScript file, or a checkpoint as spandrel's own module."""
    if path.endswith((".pth", ".ckpt", ".safetensors")):
        import spandrel
        return spandrel.ModelLoader().load_from_file(path).model.eval()
    return torch.jit.load(path).eval()


def main():
    args = sys.argv[1:]
    window = None
    if args[:1] == ["--window"] and len(args) > 1:
        n, anchor = args[1].split(":")
        window, args = (int(n), anchor), args[2:]
    if len(args) not in (6, 7):
        raise SystemExit(__doc__)
    path, fmt, w, h, src, dst = args[:6]
    w, h = int(w), int(h)
    model = load(path)
    if len(args) == 7:
        model = model.to(DTYPES[args[6]])
    size = frame_size(fmt, w, h)
    data = open(src, "rb").read()
    if len(data) % size:
        raise SystemExit("%s: %d bytes is not a whole number of %s %dx%d frames"
                         % (src, len(data), fmt, w, h))
    frames = [data[i:i + size] for i in range(0, len(data), size)]
    with torch.no_grad(), open(dst, "wb") as out:
        if window:
            for y in run_windows(model, fmt, w, h, frames, *window):
                out.write(y)
            return
        for f in frames:
            out.write(run(model, fmt, w, h, f))


if __name__ == "__main__":
    main()
