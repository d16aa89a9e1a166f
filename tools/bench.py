"""make bench: throughput and memory of our dnn_processing torch backend
against upstream FFmpeg and against LibTorch alone (the limit).

Each scenario runs one model on one generated frame repeated (testsrc2, loop),
so the source is not the bottleneck; its own rate is measured and shown.

  fps      steady rate from ffmpeg's -progress reports over BENCH_SECONDS,
           after a short warm-up; the run is then stopped with 'q'.
           Median, min and max of BENCH_RUNS runs.
  heap     bytes asked of malloc & co per frame, from an LD_PRELOAD counter,
           (B2 - B1) / (N2 - N1) over runs of N1 and N2 frames; "big" counts
           the allocations of at least one input frame's size.
  RSS      peak resident set of the ffmpeg process (getrusage of the child).
  GPU      memory used on the GPU (nvidia-smi) once the first frame is out
           and at the last report.
  eager    for the models of the size users run (compact, rrdb): the same
           model in PyTorch eager, in Python, same device, precision and
           layout (tools/bench/eager.py), run by the PYTHON that runs the
           bench
  compile  the same, torch.compile'd (default mode): the anchor a user
           would pick instead of the filter

Environment: BENCH_SECONDS (5 on the CPU, 3 with a GPU), BENCH_RUNS (3),
BENCH_GPU (auto|yes|no), BENCH_ONLY (a regular expression on scenario names;
--list prints the names it selects, GPU ones included, and runs nothing),
BENCH_HEAP (1; 0 skips the heap counts, for quicker runs of the rates alone),
BENCH_COMPILE (1; 0 leaves torch.compile's column out: on a CPU its compile
can take longer than a row's timeout).
Nothing is asserted: the numbers are reported in results.{json,md,png}.
"""

import argparse
import datetime
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

WARM = 0.5          # seconds after the first frame that are not timed
PERIOD = 0.2        # -stats_period


@dataclass
class Scenario:
    model: str
    width: int
    height: int
    device: str = "cpu"         # where the model runs
    frames: str = "cpu"         # where the frames live: cpu, cuda (rgb0 uploaded),
                                # nvdec, cuda_nv12 (nv12 uploaded); ours takes
                                # YUV through scale_cuda=format=rgb0
    builds: tuple = ("ours", "upstream", "master")
    async_: int = 1
    clip: str = ""              # the NVDEC scenario's input
    precision: str = ""         # the torch option; "" is its default (auto)
    channels_last: int = -1     # the torch option; -1 is its default (auto)
    eager: bool = False         # also PyTorch eager in Python (tools/bench/eager.py)
    heap: bool = True           # count heap allocations per frame
    exported: bool = False      # the model as tools/export-model.py writes it for the
                                # device with its defaults (CUDA: an fp16 .pt2, a model
                                # for export_size and a dynamic one; CPU: TorchScript)
    export_size: str = ""       # WxH the package names ("": the frame size); another
                                # size than the frame's runs its dynamic model
    window: int = 1             # the torch option window: a temporal model (win_*)
    package: str = ""           # "fp32"/"fp16": a CUDA AOTInductor package (.pt2) of the
                                # model, compiled in that dtype (exported from a
                                # channels-last input with channels_last=1), not TorchScript

    @property
    def model_file(self):
        half = "_fp16" if self.package == "fp16" else ""
        cl = "_cl" if self.channels_last == 1 else ""
        if self.exported:
            size = self.export_size or f"{self.width}x{self.height}"
            dev = "" if self.device == "cuda" else "_" + self.device
            return f"{self.model}_export{dev}_{size}." + ("pt2" if self.device == "cuda" else "pt")
        return f"{self.model}{half}{cl}_cuda.pt2" if self.package else self.model + ".pt"

    @property
    def model_name(self):
        """What tests/dnn/models.py is asked for: NAME, or NAME[_fp16][_cl]_cuda_pt2."""
        if self.exported:
            return os.path.splitext(self.model_file)[0]
        return self.model_file[:-4] + "_pt2" if self.package else self.model

    @property
    def name(self):
        where = {"cpu": self.device, "nvdec": "NVDEC MPEG-2 -> cuda",
                 "cuda_nv12": "cuda, nv12 CUDA frames"}.get(
            self.frames, f"{self.device}, {self.frames} frames")
        prec = f" {self.precision}" if self.precision else ""
        prec += " nchw" if self.channels_last == 0 else ""
        prec += f" pt2 {self.package}" if self.package else ""
        prec += " cl" if self.package and self.channels_last == 1 else ""
        prec += " exported" if self.exported else ""
        prec += f" for {self.export_size}" if self.export_size else ""
        prec += f" window={self.window}" if self.window > 1 else ""
        return f"{self.model} {self.width}x{self.height} {where}{prec} async={self.async_}"


def scenarios(gpu):
    base = [("small", 640, 360), ("sr2", 320, 180), ("invert", 1920, 1080)]
    out = [Scenario(m, w, h, async_=a) for m, w, h in base for a in (1, 0)]
    # default options (async=1, nireq=0) on a larger frame
    out.insert(1, Scenario("small", 1280, 720))
    if gpu:
        big = [("small", 1920, 1080), ("sr2", 960, 540), ("invert", 1920, 1080)]
        for m, w, h in big:
            for a in (1, 0):
                out.append(Scenario(m, w, h, "cuda", async_=a))
                # CUDA frames straight into the model: ours only
                out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), a))
        # half precision, channels-last: CUDA frames and CPU frames
        for m, w, h in big[:2]:
            out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), 1, precision="fp16"))
            out.append(Scenario(m, w, h, "cuda", builds=("ours",), precision="fp16"))
            # float32 NCHW: the model as it ran before the precision options
            out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), 1, channels_last=0))
            # half precision NCHW: the layout of the NCHW fp16 packages
            out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), 1, precision="fp16",
                                channels_last=0))
        # the same models as AOTInductor packages (fp32, fp16; NCHW and
        # exported channels-last), CUDA frames
        for m, w, h in big[:2]:
            for p in ("fp32", "fp16"):
                for cl in (-1, 1):
                    out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), 1, package=p,
                                        channels_last=cl))
        # decode to inference: NVDEC's CUDA frames, scale_cuda to rgb0, the model (ours);
        # upstream: hwdownload, rgb24 on the CPU, the model with device=cuda
        out.append(Scenario("small", 1920, 1080, "cuda", "nvdec"))
    return out + user_models(gpu)


def user_models(gpu):
    """Models of the size users run (a compact 4x SR net, an RRDB net), beside
    PyTorch eager; no heap counts (the model's own tensors dominate)."""
    big = dict(eager=True, heap=False)
    out = [Scenario("compact", 320, 180, async_=a, **big) for a in (1, 0)]
    # what tools/export-model.py writes for the CPU (its defaults) beside the
    # TorchScript rows below
    out.append(Scenario("compact", 240, 136, builds=("ours",), exported=True, heap=False))
    # bf16 on the CPU (its bf16 units: avx512_bf16, amx_bf16), fp32 beside it
    for w, h in ((240, 136), (480, 270)):
        for p in ("bf16", "fp32"):
            for a in (1, 0):
                out.append(Scenario("compact", w, h, builds=("ours",), async_=a,
                                    precision=p, **big))
    if gpu:
        for m, w, h in (("compact", 960, 540), ("rrdb", 1280, 720)):
            for p in ("fp32", "fp16"):
                out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), precision=p, **big))
        # the road README gives: tools/export-model.py's package for the frame
        # size, beside torch.compile of the same module in the same run
        out.append(Scenario("compact", 960, 540, "cuda", "cuda", ("ours",),
                            precision="fp16", exported=True, **big))
        # a size the package names no model for: its dynamic model
        out.append(Scenario("compact", 1280, 720, "cuda", "cuda", ("ours",),
                            precision="fp16", exported=True, export_size="960x540", **big))
        # the published ESRGAN shape (64 features, 4x; 6 RRDBs), 360p -> 1440p:
        # TorchScript, the package for the size, another size
        for exp, size in ((False, ""), (True, ""), (True, "640x360")):
            out.append(Scenario("rrdb6", 800 if size else 640, 448 if size else 360,
                                "cuda", "cuda", ("ours",), precision="fp16",
                                exported=exp, export_size=size, **big))
        # a 5-frame denoiser of FastDVDnet's size against its forward alone
        # on a resident window (the limit column); a parameter-free window
        # model against a one-frame model of no cost: what a window adds
        # (each frame is converted once)
        out.append(Scenario("win_denoise", 1920, 1080, "cuda", "cuda", ("ours",),
                            precision="fp16", window=5, heap=False))
        for m, n in (("win_pick2", 5), ("invert", 1)):
            out.append(Scenario(m, 1920, 1080, "cuda", "cuda", ("ours",), precision="fp16",
                                window=n, heap=False))
        # decode to inference: a 540p clip, so that the output (4K) and the
        # model's work match the CUDA frames row
        out.append(Scenario("compact", 960, 540, "cuda", "nvdec", ("ours",),
                            precision="fp16", **big))
        # NVDEC's YUV frames through scale_cuda=format=rgb0 at 1080p and 4K
        # (decode-bound), and uploaded nv12 frames (the conversion's cost)
        for w, h in ((1920, 1080), (3840, 2160)):
            for fr in ("nvdec", "cuda_nv12"):
                out.append(Scenario("small", w, h, "cuda", fr, ("ours",), precision="fp16"))
    return out


# --- running ffmpeg -----------------------------------------------------

def ffmpeg_cmd(ffmpeg, sc, model, frames=None, dnn=True, build="ours"):
    pre, chain = [], ["format=rgb24"]
    src = ["-f", "lavfi", "-i", f"testsrc2=s={sc.width}x{sc.height}:r=25"]
    if sc.frames.startswith("cuda"):
        pre = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"]
        chain = ["format=rgb0" if sc.frames == "cuda" else "format=nv12", "hwupload"]
    if sc.frames.startswith("nvdec"):
        src = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
               "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda",
               "-stream_loop", "-1", "-i", sc.clip]
        chain = ["hwdownload", "format=nv12", "format=rgb24"] if build != "ours" and dnn else []
        if dnn and build == "ours":
            chain = ["scale_cuda=format=rgb0"]
    else:
        chain.append("loop=loop=-1:size=1")
    if sc.frames == "cuda_nv12" and dnn:
        chain.append("scale_cuda=format=rgb0")
    if frames:
        chain.append(f"trim=end_frame={frames}")
    if dnn:
        opts = f"dnn_backend=torch:model={model}:async={sc.async_}"
        if model.endswith(".pt2"):
            opts += ":aoti=1"   # packages load only with it (ours alone has them)
        if sc.device != "cpu":
            opts += f":device={sc.device}"
        if sc.precision:
            opts += f":precision={sc.precision}"
        if sc.channels_last >= 0:
            opts += f":channels_last={sc.channels_last}"
        if sc.window > 1:
            opts += f":window={sc.window}"
        chain.append("dnn_processing=" + opts)
    return [ffmpeg, "-hide_banner", "-v", "error", "-nostats",
            "-progress", "pipe:1", "-stats_period", str(PERIOD), *pre, *src,
            "-vf", ",".join(chain or ["null"]), "-f", "null", "-"]


def gpu_mem():
    """MiB used on GPU 0, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                              "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20).stdout
        return int(out.split()[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def failure(status, stderr, after_end):
    """A short reason from the exit status and the end of stderr."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    what = [l for l in lines if l.startswith("what():")]
    lines = [l for l in lines if not re.match(r"(frame #|Exception raised|\(no backtrace)", l)]
    msg = re.sub(r'^what\(\):\s*|\s+at "[^"]*".*', "", (what or lines or [""])[-1])[:80]
    if os.WIFSIGNALED(status):
        why = signal.Signals(os.WTERMSIG(status)).name
        why += " at exit" if after_end else ""
    else:
        why = f"exit {os.WEXITSTATUS(status)}"
    return f"{why}: {msg}" if msg else why


def steady_fps(samples):
    """Frames per second between the first and the last report at which the
    count moved: at a frame or two per second, a span cut at any reports
    would count up to a frame's time too many or too few."""
    moved = [i for i in range(1, len(samples)) if samples[i][1] > samples[i - 1][1]]
    if len(moved) < 2:
        return None
    (ta, fa), (tb, fb) = samples[moved[0]], samples[moved[-1]]
    return (fb - fa) / (tb - ta)


def run_ffmpeg(cmd, seconds=None, env=None, gpu=False, timeout=120):
    """Run ffmpeg; with seconds, stop it with 'q' after that long of steady
    state; kill it after timeout.  Returns a dict: fps, frames, ok, reason,
    rss_mib, gpu_mib."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    killed = []
    watchdog = threading.Timer(timeout, lambda: killed.append(p.kill()))
    watchdog.start()
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()))
    reader.start()
    samples, frame, t0, quit_sent, ended, mem = [], 0, None, False, False, []
    for raw in p.stdout:
        key, _, val = raw.decode(errors="replace").strip().partition("=")
        if key == "frame":
            frame = int(val)
        if key != "progress":
            continue
        if val == "end":
            ended = True
            break
        now = time.monotonic()
        if frame and t0 is None:
            t0 = now
            if gpu:
                mem.append(gpu_mem())
        if t0 is not None and now >= t0 + WARM:
            samples.append((now, frame))
            if seconds and not quit_sent and now - samples[0][0] >= seconds:
                p.stdin.write(b"q")
                p.stdin.flush()
                quit_sent = True
    if gpu and t0 is not None:
        mem.append(gpu_mem())
    p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = status
    watchdog.cancel()
    reader.join()
    ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    reason = None
    if killed:
        reason = f"timed out after {timeout:g} s"
    elif not ok:
        reason = failure(status, err[0].decode(errors="replace"), ended or quit_sent)
    return {"fps": steady_fps(samples), "frames": frame, "ok": ok, "reason": reason,
            "rss_mib": usage.ru_maxrss / 1024, "gpu_mib": mem or None}


def heap_per_frame(sc, n1, args, run):
    """Heap bytes and big allocations per frame: run(n, env) processes n
    frames under the counter, for n1 and 3 * n1; returns (per frame, last
    run's result), or (None, None) when a run did not count."""
    big = sc.width * sc.height * 3
    path = os.path.join(args.out, "alloc.txt")
    counts, r = [], None
    for n in (n1, 3 * n1):
        if os.path.exists(path):
            os.remove(path)
        env = dict(os.environ, LD_PRELOAD=args.alloc, BENCH_ALLOC_OUT=path,
                   BENCH_ALLOC_BIG=str(big))
        r = run(n, env)
        if r is None or not os.path.exists(path):
            return None, None
        with open(path) as f:
            counts.append([int(x) for x in f.read().split()])
    per = [(b - a) / (2 * n1) for a, b in zip(*counts)]
    return {"bytes": per[0], "calls": per[1], "big_bytes": per[2],
            "big_calls": per[3], "big_size": big}, r


# --- contenders: ours, upstream, the limit ----------------------------------
# Each is a pair of functions: timed() runs once for args.seconds and returns
# a dict with fps (or a reason); counted(n, env) processes n frames under the
# heap counter and returns a dict, or None when it did not.

def ffmpeg_contender(ffmpeg, sc, model, args, gpu, build):
    def timed():
        return run_ffmpeg(ffmpeg_cmd(ffmpeg, sc, model, build=build), args.seconds,
                          timeout=args.timeout)

    def counted(n, env):
        r = run_ffmpeg(ffmpeg_cmd(ffmpeg, sc, model, frames=n, build=build), env=env,
                       gpu=gpu, timeout=args.timeout)
        return r if r["frames"] == n else None
    return timed, counted


def held_run(cmd, args, gpu):
    """Run a tool that prints "warm", then one JSON line of results, then
    waits for a line on stdin; GPU memory is read at each line."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = []
    watchdog = threading.Timer(args.timeout, lambda: killed.append(p.kill()))
    watchdog.start()
    mem, res = [], None
    for line in p.stdout:       # "warm", then the results
        if line.startswith("{"):
            res = json.loads(line)
        if gpu:
            mem.append(gpu_mem())
        if res:
            break
    err = p.communicate("\n")[1]
    watchdog.cancel()
    if killed:
        return {"reason": f"timed out after {args.timeout:g} s"}
    if not res or not res.get("frame_fps"):
        return {"reason": (err.strip().splitlines() or ["failed"])[-1]}
    return {"fps": res["frame_fps"], "forward_fps": res.get("forward_fps"),
            "reason": None, "gpu_mib": mem or None}


def limit_contender(sc, model, args, gpu):
    if sc.window > 1:
        # a window model's bound: its forward alone on a resident window
        return eager_contender(sc, args, gpu)
    # the model alone in the backend's precision and layout (channels-last
    # unless the row says nchw, as the backend's auto on both devices)
    cmd = [args.limit, model, str(sc.width), str(sc.height), sc.device,
           "cuda" if sc.frames not in ("cpu", "cuda") else sc.frames,
           str(max(1.0, args.seconds / 2)),
           "dtype=" + (sc.package or sc.precision or "fp32"),
           "cl=%d" % (sc.channels_last == 1 if sc.package else sc.channels_last != 0)]

    def timed():
        return held_run(cmd + ["hold"], args, gpu)

    def counted(n, env):
        try:
            r = subprocess.run(cmd + [f"count={n}"], env=env, timeout=args.timeout,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return None
        return {} if r.returncode == 0 else None
    return timed, counted


def eager_contender(sc, args, gpu, compiled=False):
    """PyTorch eager in Python (or torch.compile'd), the same model, precision,
    device and layout, from a uint8 rgb frame on the model's device
    (tools/bench/eager.py); no heap count.  A window model runs on a
    resident window of converted frames: its forward alone."""
    cmd = [args.python, args.eager, sc.model, str(sc.width), str(sc.height),
           "--device", sc.device, "--dtype", sc.precision or "fp32",
           "--cl", {-1: "auto", 0: "0", 1: "1"}[sc.channels_last],
           "--seconds", str(args.seconds), "--models", args.models, "--hold"]
    cmd += ["--compile"] if compiled else []
    cmd += ["--window", str(sc.window)] if sc.window > 1 else []
    return (lambda: held_run(cmd, args, gpu)), (lambda n, env: None)


def summarize(runs, counted, sc, args):
    """Median, min and max of the timed runs, then the heap per frame."""
    rates = [r["fps"] for r in runs if r.get("fps")]
    res = {"runs": rates, "reason": next((r["reason"] for r in runs if r["reason"]), None),
           "gpu_mib": next((r["gpu_mib"] for r in runs if r.get("gpu_mib")), None)}
    for key, pick in (("rss_mib", max), ("forward_fps", statistics.median)):
        vals = [r[key] for r in runs if r.get(key)]
        if vals:
            res[key] = pick(vals)
    if rates:
        res.update(fps=statistics.median(rates), min=min(rates), max=max(rates))
    if rates and sc.heap and args.heap:
        n1 = max(5, int(res["fps"] * args.seconds / 4))
        res["heap"], last = heap_per_frame(sc, n1, args, counted)
        if last and last.get("gpu_mib"):
            res["gpu_mib"] = last["gpu_mib"]
    return res


def bench(sc, model, args, gpu):
    """Runs of the contenders interleaved, so that they share the machine's
    moods; returns {name: summary}."""
    builds = {"ours": args.ours, "upstream": args.upstream, "master": args.master}
    contenders = {b: ffmpeg_contender(builds[b], sc, model, args, gpu, b)
                  for b in sc.builds if builds[b]}
    contenders["limit"] = limit_contender(sc, model, args, gpu)
    if sc.eager:
        contenders["eager"] = eager_contender(sc, args, gpu)
        if args.compile:
            contenders["compile"] = eager_contender(sc, args, gpu, compiled=True)
    runs = {name: [] for name in contenders}
    for _ in range(args.runs):
        for name, (timed, _) in contenders.items():
            runs[name].append(timed())
    return {name: summarize(runs[name], counted, sc, args)
            for name, (_, counted) in contenders.items()}


# --- environment ----------------------------------------------------------

def cuda_ok(python):
    if os.environ.get("BENCH_GPU", "auto") == "no":
        return False
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                             timeout=30).returncode == 0
        th = subprocess.run([python, "-c", "import torch;"
                             "print(torch.cuda.is_available())"],
                            capture_output=True, text=True, timeout=120)
        ok = smi and th.stdout.strip() == "True"
    except (OSError, subprocess.SubprocessError):
        ok = False
    if not ok and os.environ.get("BENCH_GPU") == "yes":
        sys.exit("bench: BENCH_GPU=yes but no usable CUDA device")
    return ok


def header(args, gpu):
    cpu = platform.processor() or "unknown CPU"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
        cpu = m.group(1) if m else cpu
    ver = subprocess.run([args.ours, "-version"], capture_output=True,
                         text=True).stdout.split("\n")[0].split()[2]
    torch_ver, cuda_ver = "unknown", None
    libtorch = os.environ.get("LIBTORCH", "")
    vfile = os.path.join(libtorch, "version.py")
    if os.path.exists(os.path.join(libtorch, "build-version")):
        torch_ver = open(os.path.join(libtorch, "build-version")).read().strip()
    elif os.path.exists(vfile):
        text = open(vfile).read()
        m = re.search(r"__version__\s*=\s*'([^']+)'", text)
        torch_ver = m.group(1) if m else torch_ver
        m = re.search(r"^cuda\s*(?::[^=]*)?=\s*'([^']+)'", text, re.M)
        cuda_ver = m.group(1) if m else None
    gpu_name = None
    if gpu:
        gpu_name = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                   "--format=csv,noheader", "-i", "0"],
                                  capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": cpu, "cores": os.cpu_count(), "ffmpeg": ver,
            "libtorch": torch_ver, "cuda": cuda_ver, "gpu": gpu_name,
            "seconds": args.seconds, "runs": args.runs,
            "load": [round(os.getloadavg()[0], 2)]}


# --- report -----------------------------------------------------------------

def fmt_fps(b):
    if not b or "fps" not in b:
        return "failed"
    d = 1 if b["min"] >= 10 else 2        # slow models: a frame or less a second
    return f"{b['fps']:.{d}f} ({b['min']:.{d}f}–{b['max']:.{d}f})"


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "–"


def joined(sources, key, fmt):
    """fmt(source[key]) of each source, joined with " / "."""
    vals = [(s or {}).get(key) for s in sources]
    return " / ".join(fmt(v) if v is not None else "–" for v in vals)


def eager_cells(r):
    """The PyTorch columns: eager's and torch.compile's fps, and ours / the
    better of the two."""
    ours, eager, comp = (r["builds"].get(k) for k in ("ours", "eager", "compile"))
    if eager is None:
        return ["n/a", "n/a", "–"]
    best = max([b.get("fps") or 0 for b in (eager, comp) if b] or [0]) or None
    return [fmt_fps(eager), fmt_fps(comp) if comp else "n/a",
            ratio((ours or {}).get("fps"), best)]


EAGER_NOTE = (" PyTorch eager: the same model in Python (tools/bench/eager.py), same"
              " device, precision and layout (channels-last unless the row says nchw),"
              " from a uint8 rgb frame already on that device to a packed uint8 output;"
              " steady state from runs of N and 3N frames; torch.compile: the same,"
              " compiled in its default mode; ours/PyTorch: against the better of the"
              " two.")


def markdown(head, results):
    gpu = any(r["device"] != "cpu" for r in results)
    eager = any("eager" in r["builds"] for r in results)
    lines = [f"Benchmark of {head['date']}: {head['cpu']}, {head['cores']} cores"
             f"{', ' + head['gpu'] if head['gpu'] else ''}; FFmpeg {head['ffmpeg']}, "
             f"LibTorch {head['libtorch']}"
             f"{', CUDA ' + head['cuda'] if head['cuda'] else ''}. "
             f"fps: median (min–max) of {head['runs']} runs of {head['seconds']:g} s;"
             f" load average {' → '.join(map(str, head['load']))}.", "",
             "| scenario | ours fps | upstream fps | master fps | limit fps (forward)"
             " | ours/upstream | ours/master | ours/limit | source fps | peak RSS MiB ours / up"
             " | heap per frame ours / up / limit | allocs ≥ frame per frame ours / up / limit"
             + (" | GPU MiB start→end ours / up / limit" if gpu else "")
             + (" | PyTorch eager fps | torch.compile fps | ours/PyTorch" if eager else "")
             + " | notes |",
             "|" + " --- |" * (13 + gpu + 3 * eager)]
    for r in results:
        b, lim = r["builds"], r["limit"]
        ours, up, ms = (b.get(k) or {} for k in ("ours", "upstream", "master"))
        ms_s = (fmt_fps(ms) if "master" in b else
                "not built" if "master" in r.get("wanted", ()) else "n/a")
        d = 1 if lim.get("fps", 10) >= 10 else 2
        lim_s = ("failed" if "fps" not in lim else f"{lim['fps']:.{d}f}" +
                 (f" ({lim['forward_fps']:.{d}f})" if lim.get("forward_fps") else ""))
        notes = [f"{k}: {v['reason']}" for k, v in [*b.items(), ("limit", lim)]
                 if v.get("reason")]
        if r["frames"].startswith("nvdec") and r["source_fps"] and lim.get("fps"):
            cap = min(r["source_fps"], lim["fps"])
            notes.insert(0, f"ours / min(decode alone, limit) = {ratio(ours.get('fps'), cap)}")
        row = [r["name"], fmt_fps(ours), fmt_fps(up) if "upstream" in b else "n/a", ms_s,
               lim_s, ratio(ours.get("fps"), up.get("fps")),
               ratio(ours.get("fps"), ms.get("fps")),
               ratio(ours.get("fps"), lim.get("fps")),
               f"{r['source_fps']:.0f}" if r["source_fps"] else "–",
               joined([ours, up], "rss_mib", lambda v: f"{v:.0f}"),
               joined([ours, up, lim], "heap", lambda v: fmt_bytes(v["bytes"])),
               joined([ours, up, lim], "heap", lambda v: f"{v['big_calls']:.2f}")]
        if gpu:
            row.append(joined([ours, up, lim], "gpu_mib",
                              lambda v: "→".join(str(x) for x in v)))
        if eager:
            row += eager_cells(r)
        row.append("; ".join(notes).replace("|", "/"))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "limit: LibTorch alone on the same model and device, uint8 frame in"
              " and out (the model's forward alone in parentheses). source: the same"
              " ffmpeg pipeline without dnn_processing. heap: bytes asked of malloc &"
              " co per frame in steady state; allocs ≥ frame: allocations of at least"
              " one input frame's size (W×H×3 bytes) per frame."
              + (EAGER_NOTE if eager else "")]
    return "\n".join(lines) + "\n"


def plot_bars(ax, results):
    series = [("ours", "tab:blue"), ("upstream", "tab:orange"), ("master", "tab:brown"),
              ("limit", "tab:green")]
    if any("eager" in r["builds"] for r in results):
        series.append(("eager", "tab:purple"))
    width, failed, top = 0.8 / len(series), [], 0
    mid = (len(series) - 1) / 2
    for i, (name, color) in enumerate(series):
        xs, ys, err = [], [], [[], []]
        for x, r in enumerate(results):
            b = r["limit"] if name == "limit" else r["builds"].get(name)
            if b is None:
                continue
            v = b.get("fps")
            if not v:
                failed.append(x + (i - mid) * width)
                continue
            xs.append(x + (i - mid) * width)
            ys.append(v)
            err[0].append(v - b.get("min", v))
            err[1].append(b.get("max", v) - v)
            top = max(top, b.get("max", v))
        ax.bar(xs, ys, width, yerr=err, label=name, color=color, capsize=2)
    for x in failed:
        ax.text(x, top * 0.02, "failed", rotation=90, ha="center", va="bottom",
                fontsize=7, color="tab:red")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([r["name"].replace(" async", "\nasync") for r in results],
                       rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("fps (median; bars: min to max)")
    ax.legend(fontsize=8)


def plot(results, path):
    """One bar chart per device: ours, upstream and the limit."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib, no plot")
        return
    devices = sorted({r["device"] for r in results})
    fig, axes = plt.subplots(len(devices), 1, squeeze=False,
                             figsize=(max(8, 1.2 * len(results) / len(devices)),
                                      4.5 * len(devices)))
    for ax, dev in zip(axes[:, 0], devices):
        plot_bars(ax, [r for r in results if r["device"] == dev])
        ax.set_title(f"dnn_processing, torch backend on {dev}: "
                     "ours, upstream 9.0.2, LibTorch alone", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def nvdec_clip(args, width, height):
    """An MPEG-2 clip for the NVDEC scenarios (looped with -stream_loop)."""
    clip = os.path.join(args.out, f"clip-mpeg2-{width}x{height}.mkv")
    os.makedirs(args.out, exist_ok=True)
    if not os.path.exists(clip):
        subprocess.run([args.ours, "-v", "error", "-y", "-f", "lavfi", "-i",
                        f"testsrc2=s={width}x{height}:r=25", "-frames:v", "250",
                        "-c:v", "mpeg2video", "-q:v", "4", "-g", "25", clip], check=True)
    return clip


# --- main -------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true",
                    help="print the scenarios that BENCH_ONLY selects (GPU ones"
                    " too) and what runs beside ours, then exit")
    needed = ("out", "ours", "upstream", "limit", "alloc")
    for name in needed:
        ap.add_argument("--" + name)
    ap.add_argument("--master", default="",
                    help="upstream master's ffmpeg, the second anchor (optional)")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__),
                                                     "..", "tests", "dnn", "models.py"))
    args = ap.parse_args()
    missing = ["--" + n for n in needed if getattr(args, n) is None]
    if missing and not args.list:
        ap.error("the following arguments are required: " + ", ".join(missing))
    args.python = os.environ.get("PYTHON", sys.executable)
    args.eager = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench", "eager.py")
    args.models = os.path.abspath(args.models)
    return args


def list_scenarios(only):
    for sc in scenarios(True):
        if only.search(sc.name):
            beside = [*sc.builds, "limit"] + (["eager", "compile"] if sc.eager else [])
            gpu = "GPU" if sc.device != "cpu" else "CPU"
            print(f"{gpu}  {sc.name}  [{', '.join(beside)}]")


def main():
    args = parse_args()
    only = re.compile(os.environ.get("BENCH_ONLY", ""))
    if args.list:
        return list_scenarios(only)
    python = args.python
    gpu = cuda_ok(python)
    args.seconds = float(os.environ.get("BENCH_SECONDS", 3 if gpu else 5))
    args.runs = int(os.environ.get("BENCH_RUNS", 3))
    args.heap = os.environ.get("BENCH_HEAP", "1") != "0"
    args.compile = os.environ.get("BENCH_COMPILE", "1") != "0"
    args.timeout = 60 + 4 * args.seconds
    args.alloc = os.path.abspath(args.alloc)
    if args.master and not os.access(args.master, os.X_OK):
        print(f"bench: no upstream master at {args.master}: its column says not built")
        args.master = ""
    todo = [s for s in scenarios(gpu) if only.search(s.name)]

    for sc in todo:
        if sc.frames.startswith("nvdec"):
            sc.clip = nvdec_clip(args, sc.width, sc.height)
    models = os.path.join(args.out, "models")
    subprocess.run([python, args.models, models] + sorted({s.model_name for s in todo}),
                   check=True)
    head = header(args, gpu)
    print(f"bench: {len(todo)} scenarios, {args.runs} runs of {args.seconds:g} s;"
          f" GPU: {head['gpu'] or 'none'}", flush=True)

    sources, results = {}, []
    for i, sc in enumerate(todo, 1):
        model = os.path.join(models, sc.model_file)
        key = (sc.width, sc.height, sc.frames)
        if key not in sources:
            sources[key] = run_ffmpeg(ffmpeg_cmd(args.ours, sc, model, dnn=False),
                                      min(2.0, args.seconds))["fps"]
        res = {"name": sc.name, "model": sc.model, "size": [sc.width, sc.height],
               "device": sc.device, "frames": sc.frames, "async": sc.async_,
               "source_fps": sources[key], "wanted": list(sc.builds)}
        res["builds"] = bench(sc, model, args, gpu and sc.device != "cpu")
        res["limit"] = res["builds"].pop("limit")
        results.append(res)
        done = [f"{b} {fmt_fps(v)}" + (f" ({v['reason']})" if v["reason"] else "")
                for b, v in [*res["builds"].items(), ("limit", res["limit"])]]
        print(f"[{i}/{len(todo)}] {sc.name}: " + ", ".join(done), flush=True)

    head["load"].append(round(os.getloadavg()[0], 2))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"header": head, "scenarios": results}, f, indent=1)
    table = markdown(head, results)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table)
    plot(results, os.path.join(args.out, "results.png"))
    print("\n" + table)
    print(f"bench: wrote {args.out}/results.json, results.md, results.png")


if __name__ == "__main__":
    main()
