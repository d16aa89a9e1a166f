"""TorchScript models for the LibTorch backend's tests, demo and benchmarks.

Every model is built with a fixed seed (or fixed weights), so the same file
comes out on every machine.  Run as a script to write them:

    python3 models.py OUTDIR [NAME...]

NAME_pt2 writes NAME.pt2, an AOTInductor package of model NAME (NAME_fp16_pt2:
compiled for float16 input; NAME_cl_pt2, NAME_fp16_cl_pt2: exported from a
channels-last input; a temporal model, win_*, takes a window of its n frames,
or 3: 1 x N x C x H x W); NAME[_fp16][_cl]_cuda_pt2 writes NAME[_fp16][_cl]_cuda.pt2,
a CUDA package for frames up to 4K (the benchmark's; kept when already there:
a compile takes about a minute);
NAME_weights writes NAME_weights.pt, the state dict of model NAME (for
tools/export-model.py --weights);
"models.py --damage IN.pt2 OUT.pt2" copies a package, damaging its library;
"models.py --strip-metadata IN.pt2 OUT.pt2" copies it without the
dnn.input metadata (tools/python/dnn_package.py) that tells the backend its input.

Without names it writes the test models (NAMES); the benchmarks' larger
models (compact, rrdb, rrdb6, win_denoise) are written when named.  module(NAME) gives the same
model as a Python module, for running it in PyTorch itself.
"""

import os
import re
import shutil
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools", "python"))
from dnn_package import compile_package, window_like  # noqa: E402


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


class Compact(nn.Module):
    """A compact 4x super-resolution net after the SRVGGNetCompact design
    (Real-ESRGAN's video models): a plain stack of 3x3 convolutions, each
    followed by a PReLU, at the input's size; a last convolution to
    channels * scale^2 maps, a pixel shuffle, and the input upsampled
    (nearest) added as a residual.  body is the number of conv + PReLU layers
    after the first one (the published video model has 16)."""

    def __init__(self, channels=3, feats=64, body=16, scale=4):
        super().__init__()
        layers = [nn.Conv2d(channels, feats, 3, padding=1), nn.PReLU(feats)]
        for _ in range(body):
            layers += [nn.Conv2d(feats, feats, 3, padding=1), nn.PReLU(feats)]
        layers.append(nn.Conv2d(feats, channels * scale * scale, 3, padding=1))
        self.body = nn.Sequential(*layers)
        self.scale = scale

    def forward(self, x):
        y = F.pixel_shuffle(self.body(x), self.scale)
        return y + F.interpolate(x, scale_factor=float(self.scale), mode="nearest")


class DenseBlock(nn.Module):
    """Five 3x3 convolutions, each fed the block's input and every earlier
    output (concatenated); leaky ReLU after the first four; the last maps back
    to feats channels, scaled by 0.2 and added to the input."""

    def __init__(self, feats, growth):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv2d(feats + i * growth, growth, 3, padding=1) for i in range(4)])
        self.last = nn.Conv2d(feats + 4 * growth, feats, 3, padding=1)

    def forward(self, x):
        cat = x
        for conv in self.convs:
            cat = torch.cat([cat, F.leaky_relu(conv(cat), 0.2)], 1)
        return x + 0.2 * self.last(cat)


class RRDB(nn.Module):
    """Residual in residual: dense blocks in a row, their result scaled by 0.2
    and added to the input."""

    def __init__(self, feats, growth, dense):
        super().__init__()
        self.blocks = nn.Sequential(*[DenseBlock(feats, growth) for _ in range(dense)])

    def forward(self, x):
        return x + 0.2 * self.blocks(x)


class RRDBNet(nn.Module):
    """A small ESRGAN-style net: a first conv, a trunk of RRDBs and a conv
    with a long residual, then per 2x step a nearest upsampling and a conv,
    and two convs at the output size (leaky ReLUs between)."""

    def __init__(self, channels=3, feats=32, growth=16, rrdbs=3, dense=3, steps=1):
        super().__init__()
        self.first = nn.Conv2d(channels, feats, 3, padding=1)
        self.trunk = nn.Sequential(*[RRDB(feats, growth, dense) for _ in range(rrdbs)])
        self.trunk_conv = nn.Conv2d(feats, feats, 3, padding=1)
        self.ups = nn.ModuleList(
            [nn.Conv2d(feats, feats, 3, padding=1) for _ in range(steps)])
        self.hr = nn.Conv2d(feats, feats, 3, padding=1)
        self.last = nn.Conv2d(feats, channels, 3, padding=1)

    def forward(self, x):
        f = self.first(x)
        f = f + self.trunk_conv(self.trunk(f))
        for up in self.ups:
            f = F.leaky_relu(up(F.interpolate(f, scale_factor=2.0, mode="nearest")), 0.2)
        return self.last(F.leaky_relu(self.hr(f), 0.2))


class RRDB6(RRDBNet):
    """The published ESRGAN shape at 4x (64 features, growth 32), with 6
    RRDBs where the published model has 23."""

    def __init__(self):
        super().__init__(feats=64, growth=32, rrdbs=6, steps=2)


# Temporal models: the input is 1 x N x C x H x W, N frames in time order;
# the output is the output of one frame, 1 x C x H x W.

class WinPick(nn.Module):
    """Frame k of the window, exactly: no parameters."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x[:, self.k]


class WinPickCrop(nn.Module):
    """The top-left 16x16 of frame k of the window: output of one size for
    any input size."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x[:, self.k, :, :16, :16]


class WinMean(nn.Module):
    """A weighted mean over time, weights 1, 2, .. N over their sum: no
    parameters, any N."""

    def forward(self, x):
        n = x.size(1)
        w = torch.arange(1, n + 1, dtype=x.dtype, device=x.device)
        w = (w / w.sum()).view(1, n, 1, 1, 1)
        return (x * w).sum(1)


class WinConv(nn.Module):
    """Seeded conv over the N frames stacked along C (N*C -> 8 -> C), plus
    the middle frame: a small temporal net with real weights."""

    def __init__(self, n, channels=3, hidden=8):
        super().__init__()
        self.n = n
        self.c1 = nn.Conv2d(n * channels, hidden, 3, padding=1)
        self.c2 = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x):
        b, n, c, h, w = x.shape
        y = self.c2(F.relu(self.c1(x.reshape(b, n * c, h, w))))
        return x[:, self.n // 2] + 0.25 * torch.tanh(y)


def conv_relu(cin, cout, stride=1):
    return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1), nn.ReLU()]


class DenBlock(nn.Module):
    """Three frames (stacked along C) to one, after FastDVDnet's denoising
    block: a small U-Net of 32, 64 and 128 features (two stride-2 convs
    down, two pixel shuffles up, skips added), returning the middle frame
    less the estimated noise.  The sides must be multiples of 4."""

    def __init__(self, channels=3):
        super().__init__()
        self.inc = nn.Sequential(*conv_relu(3 * channels, 32), *conv_relu(32, 32))
        self.down0 = nn.Sequential(*conv_relu(32, 64, 2), *conv_relu(64, 64))
        self.down1 = nn.Sequential(*conv_relu(64, 128, 2),
                                   *[m for _ in range(4) for m in conv_relu(128, 128)])
        self.up1 = nn.Sequential(nn.Conv2d(128, 64 * 4, 3, padding=1), nn.PixelShuffle(2))
        self.up0 = nn.Sequential(*conv_relu(64, 64), *conv_relu(64, 64),
                                 nn.Conv2d(64, 32 * 4, 3, padding=1),
                                 nn.PixelShuffle(2))
        self.out = nn.Sequential(*conv_relu(32, 32), nn.Conv2d(32, channels, 3, padding=1))

    def forward(self, x, mid):
        x0 = self.inc(x)
        x1 = self.down0(x0)
        x1 = self.up0(x1 + self.up1(self.down1(x1)))
        return mid - self.out(x0 + x1)


class WinDenoise(nn.Module):
    """A 5-frame video denoiser of FastDVDnet's size and shape (2.4 M
    parameters, FastDVDnet's 2.5 M): one block on each three consecutive frames, a second block
    on the three results."""

    def __init__(self, channels=3):
        super().__init__()
        self.n = 5
        self.stage1 = DenBlock(channels)
        self.stage2 = DenBlock(channels)

    def forward(self, x):
        b, n, c, h, w = x.shape
        y0 = self.stage1(x[:, 0:3].reshape(b, 3 * c, h, w), x[:, 1])
        y1 = self.stage1(x[:, 1:4].reshape(b, 3 * c, h, w), x[:, 2])
        y2 = self.stage1(x[:, 2:5].reshape(b, 3 * c, h, w), x[:, 3])
        return self.stage2(torch.cat([y0, y1, y2], 1), y1)


class WinOut5D(nn.Module):
    """Returns its window as it is: 5-D."""

    def forward(self, x):
        return x


class WinFrames(nn.Module):
    """Returns every frame of its window along N: N x C x H x W."""

    def forward(self, x):
        return x[0]


MODULES = {
    "conv": Conv,
    "conv1": lambda: Conv(channels=1),
    "small": Small,
    "sr2": SR2,
    "sr2y": lambda: SR2(channels=1),
    "invert": Invert,
    "sharpen": Sharpen,
    "conv_half": lambda: Cast(torch.float16),
    "conv_bf16": lambda: Cast(torch.bfloat16),
    "conv_w_half": lambda: Conv().half(),           # weights saved in half precision
    "conv_w_bf16": lambda: Conv().to(torch.bfloat16),
    "overshoot": Overshoot,
    "nan_inf": NanInf,
    "raise_late": RaiseLate,
    "raise_white": RaiseWhite,
    "batch_first": BatchFirst,
    "out3d": Out3D,
    "out1ch": Out1Ch,
    "win_pick0": lambda: WinPick(0),
    "win_pick1": lambda: WinPick(1),
    "win_pick2": lambda: WinPick(2),
    "win_pick4": lambda: WinPick(4),
    "win_crop0": lambda: WinPickCrop(0),
    "win_mean": WinMean,
    "win_conv3": lambda: WinConv(3),
    "win_conv5": lambda: WinConv(5),
    "win_conv3y": lambda: WinConv(3, channels=1),
    "win_conv5y": lambda: WinConv(5, channels=1),
    "win_out5d": WinOut5D,
    "win_frames": WinFrames,
    # the benchmarks' models of the size users run (seeded random weights:
    # the same cost as trained ones)
    "compact": Compact,
    "rrdb": RRDBNet,
    "rrdb6": RRDB6,
    "win_denoise": WinDenoise,
}


def module(name):
    """The model as a Python module in eval mode, weights from the fixed seed."""
    if name not in MODULES:
        raise SystemExit("unknown model " + name)
    torch.manual_seed(20261130)
    return MODULES[name]().eval()


def build(name):
    return torch.jit.script(module(name))


# What a model declares in its file: sharpen's weights are a buffer (a
# grouped convolution), so only its extra file tells its 3 channels; the
# one-channel window nets (whose first weight sees n frames) say theirs,
# which gives them the Y plane of YUV CUDA frames.
EXTRA = {"sharpen": {"dnn.input.channels": "3"},
         "win_conv3y": {"dnn.input.channels": "1"},
         "win_conv5y": {"dnn.input.channels": "1"}}

NAMES = ["conv", "conv1", "small", "sr2", "sr2y", "invert", "sharpen",
         "conv_half", "conv_bf16", "conv_w_half", "conv_w_bf16", "overshoot",
         "nan_inf", "raise_late", "raise_white", "batch_first", "out3d",
         "out1ch", "win_pick0", "win_pick1", "win_pick2", "win_pick4",
         "win_crop0", "win_mean", "win_conv3", "win_conv5", "win_conv3y", "win_conv5y",
         "win_out5d",
         "win_frames"]


# AOTInductor packages (.pt2): NAME_pt2 is model NAME exported with
# torch.export (height 16..64, width 16..96) and compiled ahead of time for
# the CPU (about a minute on two cores); only written when asked for.
PACKAGE_SHAPES = {"h": (16, 64), "w": (16, 96)}
BENCH_SHAPES = {"h": (16, 2160), "w": (16, 3840)}


def usable_cxx():
    """Inductor compiles with $CXX.  Under FFmpeg's make, a CXX taken from
    the environment is exported with make's own value, an echo command
    before the compiler, which is no program: fall back to the default."""
    cxx = os.environ.get("CXX", "").split()
    if cxx and not shutil.which(cxx[0]):
        del os.environ["CXX"]


def package(name, path, device="cpu", dtype=torch.float32, shapes=None,
            channels_last=False):
    """Temporal models (win_*) take a window of their n frames (else 3),
    channels-last in the backend's window layout (H x W x N x C)."""
    usable_cxx()
    shapes = shapes or PACKAGE_SHAPES
    m = module(name).to(device=device, dtype=dtype)
    channels = 1 if name.endswith("1") or name.endswith("y") else 3
    window = (getattr(m, "n", 3),) if name.startswith("win_") else ()
    h = torch.export.Dim("h", min=shapes["h"][0], max=shapes["h"][1])
    w = torch.export.Dim("w", min=shapes["w"][0], max=shapes["w"][1])
    x = torch.rand(1, *window, channels, 48, 64, device=device, dtype=dtype)
    if channels_last:
        x = window_like(x) if window else x.contiguous(memory_format=torch.channels_last)
    compile_package(m, x, {x.dim() - 2: h, x.dim() - 1: w}, path)


def damage(src, dst):
    """A copy of package src whose compiled library starts with zeros."""
    import zipfile
    entry = [i for i in zipfile.ZipFile(src).infolist() if i.filename.endswith(".so")][0]
    data = bytearray(open(src, "rb").read())
    at = entry.header_offset
    at += 30 + int.from_bytes(data[at + 26:at + 28], "little") + \
        int.from_bytes(data[at + 28:at + 30], "little")
    data[at:at + 64] = bytes(64)
    open(dst, "wb").write(data)


def package_variant(base):
    """NAME[_fp16][_cl] -> (NAME, dtype, exported from a channels-last input)."""
    cl = base.endswith("_cl")
    base = base[:-3] if cl else base
    half = base.endswith("_fp16")
    return base[:-5] if half else base, torch.float16 if half else torch.float32, cl


def strip_metadata(src, dst):
    """A copy of package src whose metadata lacks the dnn.input keys."""
    import json
    import zipfile
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for i in zi.infolist():
            data = zi.read(i.filename)
            if i.filename.endswith("_metadata.json"):
                meta = json.loads(data)
                data = json.dumps({k: v for k, v in meta.items()
                                   if not k.startswith("dnn.")}).encode()
            zo.writestr(i, data)


def write_bench_package(outdir, base):
    """base: NAME[_fp16][_cl]; a CUDA package of frames up to 4K, kept if there."""
    path = os.path.join(outdir, base + "_cuda.pt2")
    if os.path.exists(path):
        return
    name, dtype, cl = package_variant(base)
    tmp = path[:-4] + ".tmp.pt2"      # the compiler wants the .pt2 suffix
    package(name, tmp, "cuda", dtype, BENCH_SHAPES, cl)
    os.rename(tmp, path)


def export_cmd(name, out, weights, width, height, device="cuda"):
    """The command that exports NAME as a user who follows README does:
    tools/export-model.py on the module and its seeded weights (saved to
    WEIGHTS), with the defaults for device (CUDA: fp16, a .pt2 with a
    model for WIDTHxHEIGHT beside the dynamic one)."""
    torch.save(module(name).state_dict(), weights)
    here = os.path.dirname(os.path.realpath(__file__))
    return [sys.executable, os.path.join(here, "..", "..", "tools", "export-model.py"),
            "%s:%s" % (os.path.join(here, "models.py"), MODULES[name].__name__),
            out, "--weights", weights, "--device", device,
            "--sizes", "%dx%d" % (width, height)]


def write_exported(outdir, name, device, width, height):
    """NAME_export[_cpu]_WIDTHxHEIGHT.pt2 (.pt on the CPU) by export_cmd(),
    kept if there."""
    base = "%s_export%s_%dx%d" % (name, "" if device == "cuda" else "_" + device,
                                   width, height)
    path = os.path.join(outdir, base + (".pt2" if device == "cuda" else ".pt"))
    if not os.path.exists(path):
        subprocess.run(export_cmd(name, path, os.path.join(outdir, name + "_weights.pt"),
                                  width, height, device), check=True)


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("--damage", "--strip-metadata"):
        copy = damage if sys.argv[1] == "--damage" else strip_metadata
        return copy(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or NAMES:
        m = re.match(r"(\w+?)_export(_cpu)?_(\d+)x(\d+)$", name)
        if m:
            write_exported(outdir, m.group(1), "cpu" if m.group(2) else "cuda",
                           int(m.group(3)), int(m.group(4)))
            continue
        if name.endswith("_weights"):
            torch.save(module(name[:-8]).state_dict(), os.path.join(outdir, name + ".pt"))
            continue
        if name.endswith("_cuda_pt2"):
            write_bench_package(outdir, name[:-9])
            continue
        if name.endswith("_pt2"):
            model, dtype, cl = package_variant(name[:-4])
            package(model, os.path.join(outdir, name[:-4] + ".pt2"), dtype=dtype,
                    channels_last=cl)
            continue
        build(name).save(os.path.join(outdir, name + ".pt"), _extra_files=EXTRA.get(name, {}))
    if not sys.argv[2:]:
        # a file that is not TorchScript, for the error tests
        with open(os.path.join(outdir, "not_torchscript.pt"), "w") as f:
            f.write("this is not a TorchScript archive\n")


if __name__ == "__main__":
    main()
