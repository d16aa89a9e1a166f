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

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 12, 3, padding=1)

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
    elif name == "invert":
        m = Invert()
    elif name == "sharpen":
        m = Sharpen()
    else:
        raise SystemExit("unknown model " + name)
    return torch.jit.script(m.eval())


NAMES = ["conv", "conv1", "small", "sr2", "invert", "sharpen"]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or NAMES:
        build(name).save(os.path.join(outdir, name + ".pt"))


if __name__ == "__main__":
    main()
