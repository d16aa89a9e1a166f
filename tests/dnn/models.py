"""TorchScript models for the LibTorch backend's tests, demo and benchmarks.

Every model is built with a fixed seed (or fixed weights), so the same file
comes out on every machine.  Run as a script to write them:

    python3 models.py OUTDIR [NAME...]
"""

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv(nn.Module):
    """Seeded conv 3->8->3 with a residual: a small model with real weights."""

    def __init__(self, channels=3, hidden=8):
        super().__init__()
        self.c1 = nn.Conv2d(channels, hidden, 3, padding=1)
        self.c2 = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x):
        return x + 0.25 * torch.tanh(self.c2(F.relu(self.c1(x))))


class Small(nn.Module):
    """conv 3->16->3, residual: the 'small' model of the benchmarks."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        return x + self.c2(F.relu(self.c1(x)))


class SR2(nn.Module):
    """ESPCN-like x2 super-resolution: conv, conv, pixel shuffle."""

    def __init__(self, channels=3):
        super().__init__()
        self.c1 = nn.Conv2d(channels, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 4 * channels, 3, padding=1)

    def forward(self, x):
        up = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return up + 0.1 * torch.tanh(F.pixel_shuffle(self.c2(F.relu(self.c1(x))), 2))


class Invert(nn.Module):
    """1 - x: no parameters at all."""

    def forward(self, x):
        return 1.0 - x


class Sharpen(nn.Module):
    """Fixed 3x3 unsharp kernel per channel: the demo's filter."""

    def __init__(self, amount=1.0):
        super().__init__()
        k = torch.tensor([[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]])
        identity = torch.zeros(3, 3)
        identity[1, 1] = 1.0
        w = (identity + amount * k).expand(3, 1, 3, 3).clone()
        self.register_buffer("weight", w)

    def forward(self, x):
        y = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), self.weight, groups=3)
        return y.clamp(0.0, 1.0)


class Cast(nn.Module):
    """The conv model's output cast to a narrower float type."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.conv = Conv()
        self.dtype = dtype

    def forward(self, x):
        return self.conv(x).to(self.dtype)


class Overshoot(nn.Module):
    """2x - 0.5: values outside [0, 1] that the backend must clamp."""

    def forward(self, x):
        return 2.0 * x - 0.5


class NanInf(nn.Module):
    """R: x * 1e5, G: x * 1e5 - x * 1e5, B: x.  In float16 the first overflows
    to inf and the second gives NaN where x > 0.66; in float32 they stay finite
    (R clamps to 1, G is 0)."""

    def forward(self, x):
        g = x[:, 1:2] * 1e5
        return torch.cat([x[:, 0:1] * 1e5, g - g, x[:, 2:3]], 1)


class RaiseLate(nn.Module):
    """Passes the all-zero probe at configuration, raises on real frames."""

    def forward(self, x):
        if bool(x.max() > 0.5):
            raise RuntimeError("raise_late: frame with values above 0.5")
        return x


class RaiseWhite(nn.Module):
    """Returns 1 - x; raises on an all-white frame (one in the middle of a
    stream of testsrc2 frames, which are never all white)."""

    def forward(self, x):
        if bool(x.min() > 0.99):
            raise RuntimeError("raise_white: an all-white frame")
        return 1 - x


class BatchFirst(nn.Module):
    """Returns the first frame of its input only: a batch of 1 whatever the
    batch it is given."""

    def forward(self, x):
        return x[:1]


class Out3D(nn.Module):
    """Returns C x H x W: no batch dimension."""

    def forward(self, x):
        return x[0]


class Out1Ch(nn.Module):
    """Returns one channel whatever it is given."""

    def forward(self, x):
        return x.mean(dim=1, keepdim=True)


def build(name):
    torch.manual_seed(20261130)
    if name == "conv":
        m = Conv()
    elif name == "conv1":
        m = Conv(channels=1)
    elif name == "small":
        m = Small()
    elif name == "sr2":
        m = SR2()
    elif name == "sr2y":
        m = SR2(channels=1)
    elif name == "invert":
        m = Invert()
    elif name == "sharpen":
        m = Sharpen()
    elif name == "conv_half":
        m = Cast(torch.float16)
    elif name == "conv_bf16":
        m = Cast(torch.bfloat16)
    elif name == "conv_w_half":     # weights saved in half precision
        m = Conv().half()
    elif name == "conv_w_bf16":
        m = Conv().to(torch.bfloat16)
    elif name == "overshoot":
        m = Overshoot()
    elif name == "nan_inf":
        m = NanInf()
    elif name == "raise_late":
        m = RaiseLate()
    elif name == "raise_white":
        m = RaiseWhite()
    elif name == "batch_first":
        m = BatchFirst()
    elif name == "out3d":
        m = Out3D()
    elif name == "out1ch":
        m = Out1Ch()
    else:
        raise SystemExit("unknown model " + name)
    return torch.jit.script(m.eval())


NAMES = ["conv", "conv1", "small", "sr2", "sr2y", "invert", "sharpen",
         "conv_half", "conv_bf16", "conv_w_half", "conv_w_bf16", "overshoot",
         "nan_inf", "raise_late", "raise_white", "batch_first", "out3d",
         "out1ch"]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or NAMES:
        build(name).save(os.path.join(outdir, name + ".pt"))
    if not sys.argv[2:]:
        # a file that is not TorchScript, for the error tests
        with open(os.path.join(outdir, "not_torchscript.pt"), "w") as f:
            f.write("this is not a TorchScript archive\n")


if __name__ == "__main__":
    main()
