#!/usr/bin/env python3
#
# The TorchScript models of FATE's dnn-torch samples
#
# This file is part of FFmpeg.
#
# FFmpeg is free software; you can redistribute it and/or
# modify it under the terms of the GNU Lesser General Public
# License as published by the Free Software Foundation; either
# version 2.1 of the License, or (at your option) any later version.
#
# FFmpeg is distributed in the hope that it will be useful,
# but WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
# Lesser General Public License for more details.
#
# You should have received a copy of the GNU Lesser General Public
# License along with FFmpeg; if not, write to the Free Software
# Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA

"""Write the TorchScript models of FATE's dnn-torch samples.

    python3 tools/python/dnn_torch_samples.py DIR

FATE runs them without Python (tests/fate/dnn-torch.mak, against framecrc
references in tests/ref/fate/); this script only makes the samples, once,
for fate-suite's dnn-torch/ folder.  Every model computes exactly in float32 and
float16 on any CPU: sign flips, one-hot convolutions (a copy of a
neighbouring pixel of another channel), nearest upsampling and additions
of such terms, so that an output pixel is an input pixel or 255 minus one,
and a framecrc reference holds on every machine.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn


class Invert(nn.Module):
    """1 - x, no parameters."""

    def forward(self, x):
        return 1.0 - x


class Shift(nn.Module):
    """Each output channel is the previous input channel moved one pixel to
    the right and one down (a 3x3 convolution with one-hot kernels,
    replicate padding)."""

    def __init__(self, channels: int = 3):
        super().__init__()
        w = torch.zeros(channels, channels, 3, 3)
        for c in range(channels):
            w[c, (c + channels - 1) % channels, 0, 0] = 1.0
        self.conv = nn.Conv2d(channels, channels, 3, bias=False)
        self.conv.weight.data.copy_(w)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 1, 1, 1), mode="replicate"))


class Up2(nn.Module):
    """x2 nearest upsampling of the shifted frame: a model whose output is
    larger than its input."""

    def __init__(self):
        super().__init__()
        self.shift = Shift(3)

    def forward(self, x):
        return F.interpolate(self.shift(x), scale_factor=2.0, mode="nearest")


class WinFirst(nn.Module):
    """A temporal model (the filter's window=N): the first frame of its
    window, 1 x N x C x H x W -> 1 x C x H x W, no parameters."""

    def forward(self, x):
        return x[:, 0]


MODELS = {"invert": Invert, "shift": lambda: Shift(3), "shift1": lambda: Shift(1),
          "up2": Up2, "win_first": WinFirst}


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, make in MODELS.items():
        torch.jit.script(make().eval()).save(os.path.join(sys.argv[1], name + ".pt"))


if __name__ == "__main__":
    main()
