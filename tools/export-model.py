#!/usr/bin/env python3
"""Export a model for ffmpeg's dnn_processing (dnn_backend=torch), from
the file you have to the format that runs fastest where it will run.

    build/venv/bin/python tools/export-model.py SOURCE OUT [options]

SOURCE  a checkpoint of a published architecture that spandrel reads
        (.pth, .pt, .ckpt, .safetensors: Real-ESRGAN, SwinIR, SPAN, DRUNet,
        ...; loaded as weights only, never unpickling code), or
        FILE.py:Class or FILE.py:Class(key=value, ...), an nn.Module of
        yours (--weights W.pth for its state dict), or demo (a sharpening
        filter)
OUT     the file to write: a .pt2 (AOTInductor package) or a .pt
        (TorchScript)

--device cpu|cuda        where it will run [cpu]
--precision fp32|fp16|bf16  [fp16 on cuda; on the CPU bf16 where this
                         machine's CPU has bf16 units (avx512_bf16,
                         amx_bf16) and the model in bf16 stays within
                         40 dB PSNR of float32 on a test frame, else fp32]
--sizes WxH,...          the frame sizes you will feed: a .pt2 holds a
                         model compiled for each, and a dynamic one for any
                         other size (16..2160 x 16..3840)
--like VIDEO             the sizes of VIDEO's video streams (ffprobe)
--format auto|pt2|torchscript
                         auto: pt2 on cuda (measured on an H200: the
                         compact 4x net at 960x540 in fp16 ran 430 fps as
                         a .pt2 for that size, 197 as TorchScript),
                         TorchScript on the CPU (on 2 cores a CPU .pt2 of
                         the same net in bf16 ran as fast as TorchScript
                         with the filter's defaults, and takes a compile);
                         an OUT ending in .pt or .pt2 asks for that format
--layout auto|nchw|cl    a package's input layout [cl on cuda]
--window N               a temporal model (FILE.py:Class; the filter's
                         window=N): forward() takes 1xNxCxHxW, N frames in
                         time order, and returns one frame's output [1]

A package is native code, compiled here and run with the rights of whoever
runs ffmpeg: ship it only to those who trust you.  Compiling takes from
half a minute to minutes per size (a C++ compiler is needed).

The contract the filter keeps: forward() takes a 1x3xHxW (or 1x1xHxW)
float tensor in [0, 1], R, G, B, and returns 1xCx(kH)x(kW) in [0, 1];
with --window N it takes 1xNx3xHxW (or 1xNx1xHxW), N frames.
"""
import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from dnn_package import compile_package, window_like  # noqa: E402
from dnn_sources import SourceError, load  # noqa: E402

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
MAX_H, MAX_W = 2160, 3840


def fail(msg):
    print("export-model: " + msg, file=sys.stderr)
    sys.exit(1)


def cpu_bf16_units():
    """The bf16 units of this machine's CPU, as /proc/cpuinfo names them."""
    try:
        flags = set(open("/proc/cpuinfo").read().split())
    except OSError:
        return []
    return [f for f in ("amx_bf16", "avx512_bf16") if f in flags]


def frames(info, *size, **kw):
    """The model's input: 1 x C x H x W, or 1 x N x C x H x W (--window)."""
    window = (info["window"],) if info["window"] > 1 else ()
    return torch.rand(1, *window, info["channels"], *size, **kw)


def bf16_psnr(model, info):
    """PSNR in dB of the model in bf16 against float32, 8-bit output, on a
    smooth test frame with a little noise (the size the model needs)."""
    k = info["multiple_of"]
    side = max(64, info["minimum"]) + (-max(64, info["minimum"])) % k
    gen = torch.Generator().manual_seed(0)
    small = frames(info, 8, 8, generator=gen)
    x = torch.nn.functional.interpolate(
        small.flatten(0, -4), size=(side, side), mode="bilinear", align_corners=False)
    x = x.view(*small.shape[:-2], side, side)
    x = (x + 0.02 * torch.rand(x.shape, generator=gen)).clamp(0, 1)
    with torch.no_grad():
        ref = (model(x).clamp(0, 1) * 255).round()
        low = copy.deepcopy(model).to(torch.bfloat16)
        out = (low(x.to(torch.bfloat16)).float().clamp(0, 1) * 255).round()
    mse = ((ref - out) ** 2).mean().item()
    return math.inf if mse == 0 else 10 * math.log10(255 ** 2 / mse)


def cpu_precision(model, info):
    """The CPU default: bf16 where the units are and the output holds."""
    units = cpu_bf16_units()
    if not units:
        print("  fp32: this CPU has no bf16 units (avx512_bf16, amx_bf16)")
        return "fp32"
    if not info.get("bf16", True):
        print(f"  fp32: {info['architecture']} does not support bf16 (spandrel says so)")
        return "fp32"
    psnr = bf16_psnr(model, info)
    if psnr < 40:
        print(f"  fp32: in bf16 the output is {psnr:.1f} dB from float32's, below 40 dB")
        return "fp32"
    print(f"  bf16: this CPU has units for it ({', '.join(units)}) and the output "
          f"stays {psnr:.1f} dB from float32's (at least 40); --precision fp32 to keep float32")
    return "bf16"


def parse_sizes(text):
    sizes = []
    for item in filter(None, text.split(",")):
        try:
            w, h = (int(v) for v in item.lower().split("x"))
        except ValueError:
            fail(f"--sizes: '{item}' is not WIDTHxHEIGHT")
        sizes.append((w, h))
    return sizes


def sizes_of(video):
    """The sizes of a file's video streams, by the ffprobe next to us."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    probe = shutil.which("ffprobe") or os.path.join(top, "ffprobe")
    try:
        out = subprocess.run([probe, "-v", "error", "-select_streams", "v", "-show_entries",
                              "stream=width,height", "-of", "json", video],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"--like {video}: ffprobe could not read it ({e})")
    sizes = sorted({(s["width"], s["height"]) for s in json.loads(out)["streams"]})
    if not sizes:
        fail(f"--like {video}: no video stream")
    return sizes


def check_size(info, w, h):
    """One line when the model cannot take frames of w x h."""
    m, k = info["minimum"], info["multiple_of"]
    if w < max(m, 1) or h < max(m, 1) or w % k or h % k or (info["square"] and w != h):
        return (f"{info['architecture']} cannot take {w}x{h} frames: it needs at least "
                f"{m}x{m}" + (f", sides that are multiples of {k}" if k > 1 else "") +
                (", square frames" if info["square"] else ""))
    if w > MAX_W or h > MAX_H:
        return f"{w}x{h} is above the largest frame a package takes, {MAX_W}x{MAX_H}"
    return None


def dynamic_dims(info):
    """torch.export dimensions of height and width (the last two), multiples
    of what the architecture needs."""
    k = info["multiple_of"]
    lo = max(16, info["minimum"])
    lo += (-lo) % k
    h = 3 if info["window"] > 1 else 2
    if k == 1:
        return {h: torch.export.Dim("h", min=lo, max=MAX_H),
                h + 1: torch.export.Dim("w", min=lo, max=MAX_W)}
    return {h: k * torch.export.Dim("hk", min=lo // k, max=MAX_H // k),
            h + 1: k * torch.export.Dim("wk", min=lo // k, max=MAX_W // k)}


def hint_size(info, sizes):
    """The size the dynamic model is compiled on, for which Inductor tunes
    its kernels: the largest named size rounded up to multiples of 16 (and
    of what the model needs), else 1280x720.  On an H200 the compact net's
    dynamic fp16 model compiled on 256x256 ran 189 fps at 1280x720, compiled
    on 960x544 221 (torch.compile: 216).  A window model (5-D) on 256x256."""
    if info["window"] > 1:      # as a window package first passed on an H200
        return (256, 256)
    w, h = max(sizes, key=lambda s: s[0] * s[1]) if sizes else (1280, 720)
    k = 16 * info["multiple_of"] // math.gcd(16, info["multiple_of"])
    w, h = min(w + (-w) % k, MAX_W - MAX_W % k), min(h + (-h) % k, MAX_H - MAX_H % k)
    return (min(w, h),) * 2 if info["square"] else (w, h)


def pick_format(args):
    auto = "pt2" if args.device == "cuda" else "torchscript"
    named = {".pt2": "pt2", ".pt": "torchscript"}.get(os.path.splitext(args.out)[1].lower())
    fmt = args.format if args.format != "auto" else (named or auto)
    if named and fmt != named:
        fail(f"{args.out}: a {fmt} file is named .{'pt2' if fmt == 'pt2' else 'pt'}")
    if args.format == "auto" and fmt != auto:
        print(f"  writing {fmt}, as the name {args.out} says (auto would write "
              f"{auto} for {args.device})")
    elif args.format == "auto":
        print("  writing " + ("a .pt2: on CUDA a package compiled for the frame size ran "
                              "2.2x TorchScript" if fmt == "pt2" else
                              "TorchScript: on the CPU a .pt2 ran no faster than TorchScript") +
              " (--format to choose)")
    return fmt


def to_torchscript(model, example, info, out):
    """script, else trace, checked at a second size against the module."""
    try:
        ts = torch.jit.script(model)
        how = "scripted"
    except Exception:
        with torch.no_grad():
            ts = torch.jit.trace(model, example, check_trace=False)
        how = "traced"
        side = 192 if info["square"] else 128
        other = torch.rand(*example.shape[:-2], side, 192, dtype=example.dtype,
                           device=example.device)
        with torch.no_grad():
            diff = (ts(other) - model(other)).abs().max().item()
        if diff > 1e-2:
            fail(f"the traced model is wrong at another size (off by {diff:.3g}): this "
                 "architecture needs --format pt2")
    # the backend reads the input channels from this (the filter's formats)
    ts.save(out, _extra_files={"dnn.input.channels": str(example.shape[-3])})
    return how


def export(model, info, args, fmt):
    dtype = DTYPES[args.precision]
    model = model.to(device=args.device, dtype=dtype)
    if fmt == "torchscript":
        example = frames(info, 256, 256, device=args.device, dtype=dtype)
        if args.sizes:
            print("  TorchScript takes any size: --sizes are for a .pt2")
        return to_torchscript(model, example, info, args.out)
    w, h = hint_size(info, args.sizes)
    example = frames(info, h, w, device=args.device, dtype=dtype)
    cl = args.layout == "cl" or (args.layout == "auto" and args.device == "cuda")
    if cl:  # a window as the filter assembles it: H x W x N x C in memory
        example = window_like(example) if example.dim() == 5 else \
            example.contiguous(memory_format=torch.channels_last)
    try:
        meta = compile_package(model, example, dynamic_dims(info), args.out, args.sizes,
                               say=lambda s: print(s, flush=True))
    except Exception as e:  # torch.export's and Inductor's errors are many pages
        first = next((l for l in str(e).splitlines() if l.strip()), type(e).__name__)
        fail(f"torch.export could not export {info['architecture']} for any frame size "
             f"({type(e).__name__}: {first[:160]}); --format torchscript may work")
    named = meta.get("dnn.models")
    return (f"models for {named.replace('s', '')} and " if named else "") + \
        f"a dynamic one ({meta['dnn.input.shape']}), {meta['dnn.input.layout']}"


def main():
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].strip())
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--precision", choices=list(DTYPES))
    ap.add_argument("--sizes", type=parse_sizes, default=[])
    ap.add_argument("--like")
    ap.add_argument("--format", choices=["auto", "pt2", "torchscript"], default="auto")
    ap.add_argument("--layout", choices=["auto", "nchw", "cl"], default="auto")
    ap.add_argument("--weights")
    ap.add_argument("--window", type=int, default=1)
    args = ap.parse_args()
    if not 1 <= args.window <= 64:
        fail(f"--window {args.window}: the filter's window is 1 to 64 frames")
    if args.like:
        args.sizes += sizes_of(args.like)
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: PyTorch finds no CUDA device here")
    start = time.time()
    try:
        model, info = load(args.source, args.weights, args.window)
    except SourceError as e:
        fail(str(e))
    print(f"found {info['architecture']}: x{info['scale']}, {info['channels']} channel"
          f"{'s' if info['channels'] > 1 else ''}, {info['parameters'] / 1e6:.2f} M parameters"
          + (f", a window of {args.window} frames" if args.window > 1 else ""))
    if not args.precision:
        args.precision = "fp16" if args.device == "cuda" else cpu_precision(model, info)
    if args.precision == "fp16" and not info.get("fp16", True) or \
            args.precision == "bf16" and not info.get("bf16", True):
        fail(f"{info['architecture']} does not support {args.precision} (spandrel says so)")
    for w, h in args.sizes:
        bad = check_size(info, w, h)
        if bad:
            fail(bad)
    fmt = pick_format(args)
    final, args.out = args.out, os.path.join(
        tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(args.out))),
        os.path.basename(args.out))
    try:
        how = export(model, info, args, fmt)
        os.replace(args.out, final)
    finally:
        shutil.rmtree(os.path.dirname(args.out), ignore_errors=True)
    print(f"wrote {final}: {fmt} for {args.device}, {args.precision}, {how}, "
          f"in {time.time() - start:.0f} s")
    if fmt == "pt2":
        print(f"  a package is native code: the filter loads it with aoti=1 "
              f"(dnn_processing=dnn_backend=torch:model={final}:aoti=1)")


if __name__ == "__main__":
    main()
