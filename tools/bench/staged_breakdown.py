"""Where the time of one frame goes when dnn_processing runs a model on CUDA:
each step of the backend's path timed alone, in PyTorch on the same GPU.

    python3 tools/bench/staged_breakdown.py MODEL [WIDTH HEIGHT] [fp32|fp16|bf16]

CPU frames with device=cuda (rgb24): the filter thread copies the frame into
a page-locked buffer and queues the upload and the conversion on the
request's stream; the worker runs the model and the conversion back to bytes
and queues the download; the next frame's host copy out follows.  CUDA
frames (rgb0 in VRAM) have only the conversions around the model.  Each step
is timed over a few hundred repetitions (CUDA events for GPU work, the host
clock for host copies) and printed in microseconds per frame, with the frame
rate a strictly serial pipeline would reach and the rate if the steps on the
copy engines and the host overlapped the model perfectly.
"""

import sys
import time

import torch

REPS = 200


def gpu_us(fn):
    """Mean GPU time of fn in microseconds, after a warm-up."""
    for _ in range(10):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(REPS):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / REPS


def host_us(fn):
    """Mean wall time of fn in microseconds, after a warm-up."""
    for _ in range(10):
        fn()
    t = time.perf_counter()
    for _ in range(REPS):
        fn()
    return (time.perf_counter() - t) * 1e6 / REPS


def to_input(u8, dtype, out):
    """uint8 H x W x bytes -> 1 x 3 x H x W of dtype, NHWC strides, / 255."""
    torch.div(u8[..., :3].permute(2, 0, 1), 255.0, out=out[0])


def to_bytes(y, dst):
    """Model output -> uint8 H x W x 3 (clamp, round), as the backend does."""
    q = torch.quantize_per_tensor(y[0].float(), 1.0 / 255.0, 0, torch.quint8)
    dst[..., :3].copy_(q.int_repr().permute(1, 2, 0))


def steps(model, w, h, dtype):
    dev = torch.device("cuda")
    frame = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8)
    pinned_in = torch.empty_like(frame).pin_memory()
    dev_in = torch.empty((h, w, 3), dtype=torch.uint8, device=dev)
    dev_rgb0 = torch.empty((h, w, 4), dtype=torch.uint8, device=dev)
    inp = torch.empty((1, h, w, 3), dtype=dtype, device=dev).permute(0, 3, 1, 2)
    to_input(dev_in, dtype, inp)
    with torch.no_grad():
        y = model(inp)
    dev_out = torch.empty((y.shape[2], y.shape[3], 3), dtype=torch.uint8, device=dev)
    pinned_out = torch.empty(dev_out.shape, dtype=torch.uint8).pin_memory()
    host_out = torch.empty(dev_out.shape, dtype=torch.uint8)
    rgb0_out = torch.empty((y.shape[2], y.shape[3], 4), dtype=torch.uint8, device=dev)

    def forward():
        with torch.no_grad():
            model(inp)
    return [
        ("host copy into the page-locked buffer", "host", lambda: pinned_in.copy_(frame)),
        ("upload (pinned -> VRAM)", "copy", lambda: dev_in.copy_(pinned_in, non_blocking=True)),
        ("bytes -> input tensor", "gpu", lambda: to_input(dev_in, dtype, inp)),
        ("model forward", "gpu", forward),
        ("output -> bytes", "gpu", lambda: to_bytes(y, dev_out)),
        ("download (VRAM -> pinned)", "copy",
         lambda: pinned_out.copy_(dev_out, non_blocking=True)),
        ("host copy out of the page-locked buffer", "host",
         lambda: host_out.copy_(pinned_out)),
        ("CUDA frames: rgb0 -> input tensor", "frames", lambda: to_input(dev_rgb0, dtype, inp)),
        ("CUDA frames: output -> rgb0 (LibTorch ops)", "frames",
         lambda: to_bytes(y, rgb0_out)),
    ]


def main():
    path = sys.argv[1]
    w, h = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (1920, 1080)
    name = sys.argv[4] if len(sys.argv) > 4 else "fp32"
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]
    torch._C._set_graph_executor_optimize(False)
    model = torch.jit.load(path, map_location="cuda").to(dtype)
    model = model.to(memory_format=torch.channels_last)
    rows, kinds = [], {}
    for label, kind, fn in steps(model, w, h, dtype):
        us = host_us(fn) if kind == "host" else gpu_us(fn)
        rows.append((label, kind, us))
        kinds[kind] = kinds.get(kind, 0.0) + us
        print("%s: %.1f us" % (label, us), flush=True)
    staged = sum(kinds.get(k, 0.0) for k in ("host", "copy", "gpu"))
    print("\n| step (%dx%d, %s, channels-last) | where | us per frame |" % (w, h, name))
    print("| --- | --- | --- |")
    for label, kind, us in rows:
        print("| %s | %s | %.1f |" % (label, kind, us))
    print("\nCPU frames, all steps one after another: %.0f fps; GPU work alone "
          "(copies and host copies overlapped): %.0f fps" %
          (1e6 / staged, 1e6 / kinds["gpu"]))
    frames = kinds["frames"] + dict((r[0], r[2]) for r in rows)["model forward"]
    print("CUDA frames, conversions and model one after another: %.0f fps" % (1e6 / frames))


if __name__ == "__main__":
    main()
