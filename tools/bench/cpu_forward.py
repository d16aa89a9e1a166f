"""Where a CPU forward loses: one model of tests/dnn/models.py, forward
alone on a resident input, as PyTorch eager runs it and as the torch
backend runs it (TorchScript, the graph executor's optimization off, no
grad), each in the main thread and in a thread of its own (as ffmpeg's
filter thread), in the same dtype and layout (channels-last unless --cl 0).

Rounds interleave the four, so that they share the machine's moods; each
round times --frames forwards after one untimed.  Prints per forward the
best and the median of the rounds in ms, the ratio of the median to eager
in the main thread, and LibTorch's thread counts (main thread and, as a
thread sees them, the one of its own).

usage: python3 cpu_forward.py [--dtype bf16] [--rounds 5] [--frames 5] MODEL W H
"""

import argparse
import concurrent.futures
import importlib.util
import os
import statistics
import time

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def load_module(path, name):
    spec = importlib.util.spec_from_file_location("bench_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.module(name)


def timed(fn, x, frames, ctx):
    with ctx():
        fn(x)
        t0 = time.perf_counter()
        for _ in range(frames):
            fn(x)
        return (time.perf_counter() - t0) / frames * 1e3


# one thread for all the rounds, as ffmpeg's filter thread lives the whole run
OWN = concurrent.futures.ThreadPoolExecutor(max_workers=1)


def in_thread(job):
    return OWN.submit(job).result()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("width", type=int)
    ap.add_argument("height", type=int)
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--cl", default="1", choices=["0", "1"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--frames", type=int, default=5)
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "tests", "dnn",
                                                     "models.py"))
    args = ap.parse_args()
    dtype, cl = DTYPES[args.dtype], args.cl == "1"
    fmt = torch.channels_last if cl else torch.contiguous_format
    eager = load_module(args.models, args.model).to(dtype).eval()
    script = torch.jit.script(load_module(args.models, args.model)).eval()
    script.to(dtype)
    for p in [*eager.parameters(), *script.parameters()]:
        if p.dim() == 4:
            p.data = p.data.contiguous(memory_format=fmt)
    torch._C._set_graph_executor_optimize(False)
    x = torch.rand(1, 3, args.height, args.width).to(dtype).contiguous(memory_format=fmt)
    runs = {
        "eager, main thread": lambda: timed(eager, x, args.frames, torch.inference_mode),
        "eager, own thread": lambda: in_thread(
            lambda: timed(eager, x, args.frames, torch.inference_mode)),
        "TorchScript, main thread": lambda: timed(script, x, args.frames, torch.no_grad),
        "TorchScript, own thread": lambda: in_thread(
            lambda: timed(script, x, args.frames, torch.no_grad)),
    }
    res = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            res[name].append(run())
    base = statistics.median(res["eager, main thread"])
    print(f"{args.model} {args.width}x{args.height} {args.dtype} cl={int(cl)}, threads: main "
          f"{torch.get_num_threads()}, own thread {in_thread(torch.get_num_threads)}; "
          f"{torch.__config__.parallel_info().splitlines()[-1].strip()}")
    for name, v in res.items():
        med = statistics.median(v)
        print(f"  {name:26s} best {min(v):8.2f}  median {med:8.2f} ms  "
              f"eager/this {base / med:5.2f}")
    OWN.shutdown()


if __name__ == "__main__":
    main()
