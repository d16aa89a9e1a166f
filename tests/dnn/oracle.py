"""Independent reference: apply a TorchScript model with PyTorch to raw frames.

    python3 oracle.py MODEL PIXFMT WIDTH HEIGHT IN.raw OUT.raw

PIXFMT is the frame layout on both sides: rgb24, bgr24 (the model always
sees R, G, B), gray8, grayf32, or a planar YUV format whose Y plane goes
through a one-channel model while chroma is carried over (only for models that
keep the size).  Model output of any float type is widened to float32 first;
float to 8 bits is round(clamp(y, 0, 1) * 255).  The input is made in the
dtype of the model's weights (x / 255 in float32, then cast), or in DTYPE
(fp32, fp16, bf16) when given: the model is then cast to it.

    python3 oracle.py MODEL PIXFMT WIDTH HEIGHT IN.raw OUT.raw [DTYPE]

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


def run(model, fmt, w, h, buf):
    dt = weights_dtype(model)
    if fmt in ("rgb24", "bgr24"):
        x = torch.from_numpy(np.frombuffer(buf, np.uint8).reshape(h, w, 3).copy())
        if fmt == "bgr24":
            x = x.flip(2)
        x = (x.permute(2, 0, 1).unsqueeze(0).float() / 255.0).to(dt)
        y = model(x).float()
        y = to_u8(y[0]).permute(1, 2, 0)
        if fmt == "bgr24":
            y = y.flip(2)
        return y.contiguous().numpy().tobytes()
    if fmt == "grayf32":
        x = torch.from_numpy(np.frombuffer(buf, np.float32).reshape(1, 1, h, w).copy())
        return model(x).float()[0, 0].contiguous().numpy().tobytes()
    x = torch.from_numpy(np.frombuffer(buf[:w * h], np.uint8).reshape(1, 1, h, w).copy())
    y = to_u8(model((x.float() / 255.0).to(dt)).float()[0, 0]).numpy().tobytes()
    return y + bytes(buf[w * h:])


def load(path):
    """A TorchScript file, or a checkpoint as spandrel's own module."""
    if path.endswith((".pth", ".ckpt", ".safetensors")):
        import spandrel
        return spandrel.ModelLoader().load_from_file(path).model.eval()
    return torch.jit.load(path).eval()


def main():
    if len(sys.argv) not in (7, 8):
        raise SystemExit(__doc__)
    path, fmt, w, h, src, dst = sys.argv[1:7]
    w, h = int(w), int(h)
    model = load(path)
    if len(sys.argv) == 8:
        model = model.to(DTYPES[sys.argv[7]])
    size = frame_size(fmt, w, h)
    data = open(src, "rb").read()
    if len(data) % size:
        raise SystemExit("%s: %d bytes is not a whole number of %s %dx%d frames"
                         % (src, len(data), fmt, w, h))
    with torch.no_grad(), open(dst, "wb") as out:
        for i in range(0, len(data), size):
            out.write(run(model, fmt, w, h, data[i:i + size]))


if __name__ == "__main__":
    main()
