#!/usr/bin/env python3
"""Export a PyTorch model for ffmpeg's dnn_processing: a TorchScript file,
or with a .pt2 name an AOTInductor package (torch.export, compiled ahead of
time; about a minute, needs a C++ compiler).

    python3 tools/export-model.py sharpen.pt
    python3 tools/export-model.py sharpen.pt2 [cpu|cuda] [fp32|fp16|bf16] [nchw|cl]
                                   (in this order; each one needs those before it)
    ./ffmpeg -i in.mp4 -vf dnn_processing=model=sharpen.pt out.mp4

A package runs on the device, in the dtype and in the layout it was compiled
for, for frames of 16x16 up to 3840x2160 (the dynamic shapes below; widen
them for larger frames).  cl exports it from a channels-last input, the
faster layout for convolutions on CUDA (the default there; nchw on the CPU).

The contract: forward() takes a 1x3xHxW float tensor in [0, 1] (R, G, B;
1xHxW channels for a model of the Y plane) and returns a 1x3xH'xW' tensor,
clamped to [0, 1]; H', W' may differ (super-resolution).  Copy this file,
put your own nn.Module in place of Sharpen (with model.load_state_dict(
torch.load("weights.pth")) for trained weights) and keep the last lines.
"""
import sys

import torch
import torch.nn.functional as F
from torch import nn

from dnn_package import compile_package


class Sharpen(nn.Module):
    """Unsharp mask: a fixed 3x3 kernel on each channel."""

    def __init__(self, amount: float = 1.0):
        super().__init__()
        k = torch.tensor([[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]])
        identity = torch.zeros(3, 3)
        identity[1, 1] = 1.0
        self.register_buffer("weight", (identity + amount * k).expand(3, 1, 3, 3).clone())

    def forward(self, x):
        x = F.pad(x, (1, 1, 1, 1), mode="replicate")
        return F.conv2d(x, self.weight, groups=3).clamp(0.0, 1.0)


def export_package(model, path, device="cpu", dtype="fp32", layout=None):
    """torch.export with dynamic height and width, then AOTInductor."""
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    model = model.to(device=device, dtype=dtype)
    example = torch.rand(1, 3, 720, 1280, device=device, dtype=dtype)
    layout = layout or ("cl" if device.startswith("cuda") else "nchw")
    if layout not in ("nchw", "cl"):
        raise SystemExit(f"layout '{layout}' is not nchw or cl")
    if layout == "cl":
        example = example.contiguous(memory_format=torch.channels_last)
    dims = {2: torch.export.Dim("h", min=16, max=2160),
            3: torch.export.Dim("w", min=16, max=3840)}
    compile_package(model, example, dims, path)


if __name__ == "__main__":
    if len(sys.argv) < 2 or len(sys.argv) > 5:
        raise SystemExit(__doc__)
    model = Sharpen().eval()
    if sys.argv[1].endswith(".pt2"):
        export_package(model, *sys.argv[1:])
    else:
        # script keeps control flow; torch.jit.trace(model, torch.rand(1, 3, 64, 64))
        # also works for models without data-dependent branches
        torch.jit.script(model).save(sys.argv[1])
    print("wrote", sys.argv[1])
