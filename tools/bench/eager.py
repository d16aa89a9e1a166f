"""The bench's PyTorch column: a model of tests/dnn/models.py run by PyTorch
eager in Python, the way a user would write it, on a frame that already
lives on the device.

Each frame: uint8 H x W x 3 rgb -> 1 x 3 x H x W in the model's dtype / 255
(channels-last on CUDA), the model, clamp to [0, 1], * 255, round, uint8,
packed H x W x 3 again.  One resident input frame; every output is a new
tensor, as in a user's loop.  Timing is the steady state: after a warm-up,
runs of N1 and N2 = 3 * N1 frames, each ended by a synchronize, and the
rate is (N2 - N1) / (T2 - T1), so that what a run costs once (the first
launch, the last synchronize) drops out.  N1 is picked from the warm-up's
rate so that both runs together take about --seconds.

Prints "warm" once warmed up, then one JSON line; with --hold it then waits
for a line on stdin (so that the caller can read the GPU's memory while the
model is loaded).

With --window N (a temporal model of tests/dnn/models.py, win_*) the
input is a window of N frames already converted and resident (in the
backend's window layout, channels-last unless --cl 0): each step is the
forward alone and the output's conversion, the bound a window model can
reach in the filter.

With --compile the model is torch.compile'd (default mode) first: the
other anchor, what a user would pick instead of the filter.  The layout
is the filter's default (channels-last, auto) unless --cl says otherwise.

usage: python3 eager.py [--device cuda] [--dtype fp16] [--compile] [--seconds 3] MODEL W H
"""

import argparse
import importlib.util
import json
import os
import sys
import time

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def load_models(path):
    spec = importlib.util.spec_from_file_location("bench_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def frame_step(model, frame, dtype, cl):
    """One frame as a user would write it: returns the packed uint8 output."""
    x = frame.permute(2, 0, 1).unsqueeze(0).to(dtype) / 255
    x = x.contiguous(memory_format=torch.channels_last if cl else torch.contiguous_format)
    y = model(x)
    y = (y.clamp(0, 1) * 255).round().to(torch.uint8)
    return y[0].permute(1, 2, 0).contiguous()


def window_step(model, window):
    """One window already converted: the forward and the output's conversion."""
    y = (model(window).clamp(0, 1) * 255).round().to(torch.uint8)
    return y[0].permute(1, 2, 0).contiguous()


def resident_window(n, width, height, dev, dtype, cl):
    """1 x n x 3 x H x W in [0, 1], laid out as the backend lays out a window."""
    from dnn_package import window_like
    x = torch.rand(1, n, 3, height, width, device=dev).to(dtype)
    return window_like(x) if cl else x


def timed(dev, n, step):
    """Seconds that n steps take, synchronized at both ends."""
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    sync(dev)
    return time.perf_counter() - t0


def measure(dev, step, seconds, warm):
    """Steady rate in frames per second from two run lengths."""
    timed(dev, warm, step)                  # first calls: allocations, kernels
    per = timed(dev, warm, step) / warm     # the rate, roughly
    n1 = max(1, round(seconds / 4 / per))
    t1 = timed(dev, n1, step)
    t2 = timed(dev, 3 * n1, step)
    return {"frame_fps": 2 * n1 / (t2 - t1) if t2 > t1 else None,
            "n": [n1, 3 * n1], "t": [round(t1, 4), round(t2, 4)]}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="a name of tests/dnn/models.py (compact, rrdb, ...)")
    ap.add_argument("width", type=int)
    ap.add_argument("height", type=int)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="fp32", choices=sorted(DTYPES))
    ap.add_argument("--cl", default="auto", choices=["auto", "0", "1"],
                    help="channels-last weights and input (auto: on, as the filter)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--window", type=int, default=1,
                    help="a temporal model: the forward on a resident window of N frames")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--hold", action="store_true")
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "tests", "dnn",
                                                     "models.py"))
    args = ap.parse_args()

    dev = torch.device(args.device)
    dtype = DTYPES[args.dtype]
    cl = args.cl != "0"
    model = load_models(args.models).module(args.model).to(dev, dtype)
    if cl:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model)
    frame = torch.randint(0, 256, (args.height, args.width, 3), dtype=torch.uint8,
                          device=dev)
    out = []
    if args.window > 1:
        sys.path.insert(0, os.path.join(here, "..", "python"))
        window = resident_window(args.window, args.width, args.height, dev, dtype, cl)
    with torch.inference_mode():
        def step():
            out[:] = [window_step(model, window) if args.window > 1 else
                      frame_step(model, frame, dtype, cl)]
        step()
        print("warm", flush=True)
        res = measure(dev, step, args.seconds, 10 if dev.type == "cuda" or args.compile else 1)
    res.update(out=[out[0].shape[1], out[0].shape[0]], dtype=args.dtype, cl=int(cl),
               compiled=args.compile, window=args.window,
               threads=torch.get_num_threads(), torch=torch.__version__,
               cudnn_benchmark=torch.backends.cudnn.benchmark,
               cudnn_tf32=torch.backends.cudnn.allow_tf32)
    if dev.type == "cuda":
        res["max_allocated_mib"] = round(torch.cuda.max_memory_allocated(dev) / 2**20)
    print(json.dumps(res), flush=True)
    if args.hold:
        sys.stdin.readline()


if __name__ == "__main__":
    main()
