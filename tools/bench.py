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

Environment: BENCH_SECONDS (5 on the CPU, 3 with a GPU), BENCH_RUNS (3),
BENCH_GPU (auto|yes|no), BENCH_ONLY (a regular expression on scenario names).
Nothing is asserted: the numbers are reported in results.{json,md,png}.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
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
    frames: str = "cpu"         # where the frames live: cpu, or cuda (hwupload)
    builds: tuple = ("ours", "upstream")
    async_: int = 1

    @property
    def name(self):
        where = self.device + (" frames" if self.frames != "cpu" else "")
        return f"{self.model} {self.width}x{self.height} {where} async={self.async_}"


def scenarios(gpu):
    base = [("small", 640, 360), ("sr2", 320, 180), ("invert", 1920, 1080)]
    out = [Scenario(m, w, h, async_=a) for m, w, h in base for a in (1, 0)]
    if gpu:
        big = [("small", 1920, 1080), ("sr2", 960, 540), ("invert", 1920, 1080)]
        for m, w, h in big:
            for a in (1, 0):
                out.append(Scenario(m, w, h, "cuda", async_=a))
                # CUDA frames straight into the model: ours only
                out.append(Scenario(m, w, h, "cuda", "cuda", ("ours",), a))
    return out


# --- running ffmpeg -----------------------------------------------------

def ffmpeg_cmd(ffmpeg, sc, model, frames=None, dnn=True):
    pre, chain = [], ["format=rgb24"]
    if sc.frames == "cuda":
        pre = ["-init_hw_device", "cuda=cu:0", "-filter_hw_device", "cu"]
        chain = ["format=rgb0", "hwupload"]
    chain.append("loop=loop=-1:size=1")
    if frames:
        chain.append(f"trim=end_frame={frames}")
    if dnn:
        opts = f"dnn_backend=torch:model={model}:async={sc.async_}"
        if sc.device != "cpu":
            opts += f":device={sc.device}"
        chain.append("dnn_processing=" + opts)
    return [ffmpeg, "-hide_banner", "-v", "error", "-nostats",
            "-progress", "pipe:1", "-stats_period", str(PERIOD), *pre,
            "-f", "lavfi", "-i", f"testsrc2=s={sc.width}x{sc.height}:r=25",
            "-vf", ",".join(chain), "-f", "null", "-"]


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
    msg = (what or lines or [""])[-1][:120]
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        return f"{sig}{' at exit' if after_end else ''}: {msg}"
    return f"exit {os.WEXITSTATUS(status)}: {msg}"


def run_ffmpeg(cmd, seconds=None, env=None, gpu=False, timeout=600):
    """Run ffmpeg; with seconds, stop it with 'q' after that long of steady
    state.  Returns a dict: fps, frames, ok, reason, rss_mib, gpu_mib."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    watchdog = threading.Timer(timeout, p.kill)
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
    fps = None
    if len(samples) >= 2 and samples[-1][1] > samples[0][1]:
        (ta, fa), (tb, fb) = samples[0], samples[-1]
        fps = (fb - fa) / (tb - ta)
    return {"fps": fps, "frames": frame, "ok": ok,
            "reason": None if ok else failure(status, err[0].decode(errors="replace"),
                                              ended or quit_sent),
            "rss_mib": usage.ru_maxrss / 1024, "gpu_mib": mem or None}


def heap_per_frame(ffmpeg, sc, model, n1, alloc_so, out, gpu):
    """Heap bytes and big allocations per frame between runs of n1 and n2."""
    big = sc.width * sc.height * 3
    counts, mem = [], None
    for n in (n1, 3 * n1):
        path = os.path.join(out, "alloc.txt")
        if os.path.exists(path):
            os.remove(path)
        env = dict(os.environ, LD_PRELOAD=alloc_so, BENCH_ALLOC_OUT=path,
                   BENCH_ALLOC_BIG=str(big))
        r = run_ffmpeg(ffmpeg_cmd(ffmpeg, sc, model, frames=n), env=env, gpu=gpu)
        if r["frames"] != n or not os.path.exists(path):
            return None, None
        with open(path) as f:
            counts.append((n, [int(x) for x in f.read().split()]))
        mem = r["gpu_mib"]
    (na, a), (nb, b) = counts
    per = [(y - x) / (nb - na) for x, y in zip(a, b)]
    return {"bytes": per[0], "calls": per[1], "big_bytes": per[2],
            "big_calls": per[3], "big_size": big}, mem


def bench_build(ffmpeg, sc, model, args, out, gpu):
    runs = [run_ffmpeg(ffmpeg_cmd(ffmpeg, sc, model), args.seconds)
            for _ in range(args.runs)]
    rates = [r["fps"] for r in runs if r["fps"]]
    res = {"runs": rates, "rss_mib": max(r["rss_mib"] for r in runs),
           "reason": next((r["reason"] for r in runs if r["reason"]), None)}
    if rates:
        res.update(fps=statistics.median(rates), min=min(rates), max=max(rates))
        n1 = max(5, int(res["fps"] * args.seconds / 4))
        res["heap"], res["gpu_mib"] = heap_per_frame(ffmpeg, sc, model, n1,
                                                     args.alloc, out, gpu)
    return res


# --- the limit ------------------------------------------------------------

def limit(args, sc, model, gpu):
    """Run th_limit; its results, or a reason."""
    cmd = [args.limit, model, str(sc.width), str(sc.height), sc.device,
           sc.frames, str(max(1.0, args.seconds / 2)), "hold"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(600, p.kill)
    watchdog.start()
    mem, res = [], None
    for line in p.stdout:
        if line.startswith("{"):
            res = json.loads(line)
        if gpu:
            mem.append(gpu_mem())
        if res:
            break
    err = p.communicate("\n")[1]
    watchdog.cancel()
    if not res:
        return {"reason": (err.strip().splitlines() or ["failed"])[-1]}
    res["gpu_mib"] = mem or None
    return res


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
            "seconds": args.seconds, "runs": args.runs}


# --- report -----------------------------------------------------------------

def fmt_fps(b):
    if not b or "fps" not in b:
        return "failed"
    return f"{b['fps']:.1f} ({b['min']:.1f}–{b['max']:.1f})"


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "–"


def pair(res, key, fmt):
    vals = []
    for name in ("ours", "upstream"):
        b = res["builds"].get(name)
        v = b and b.get(key)
        vals.append(fmt(v) if v is not None else "–")
    return " / ".join(vals)


def markdown(head, results):
    gpu = any(r["device"] != "cpu" for r in results)
    lines = [f"Benchmark of {head['date']}: {head['cpu']}, {head['cores']} cores"
             f"{', ' + head['gpu'] if head['gpu'] else ''}; FFmpeg {head['ffmpeg']}, "
             f"LibTorch {head['libtorch']}"
             f"{', CUDA ' + head['cuda'] if head['cuda'] else ''}. "
             f"fps: median (min–max) of {head['runs']} runs of {head['seconds']:g} s.", "",
             "| scenario | ours fps | upstream fps | limit fps (forward) | ours/upstream"
             " | ours/limit | source fps | peak RSS MiB ours / up | heap per frame ours / up"
             " | allocs ≥ frame per frame ours / up" + (" | GPU MiB start→end ours / up" if gpu else "")
             + " | notes |",
             "|" + " --- |" * (11 + gpu)]
    for r in results:
        b, lim = r["builds"], r["limit"]
        ours, up = b.get("ours") or {}, b.get("upstream") or {}
        lim_s = (f"{lim['frame_fps']:.1f} ({lim['forward_fps']:.1f})"
                 if "frame_fps" in lim else "failed")
        notes = [f"{k}: {v['reason']}" for k, v in b.items() if v and v.get("reason")]
        if "reason" in lim:
            notes.append(f"limit: {lim['reason']}")
        row = [r["name"], fmt_fps(ours), fmt_fps(up) if "upstream" in b else "n/a", lim_s,
               ratio(ours.get("fps"), up.get("fps")),
               ratio(ours.get("fps"), lim.get("frame_fps")),
               f"{r['source_fps']:.0f}" if r["source_fps"] else "–",
               pair(r, "rss_mib", lambda v: f"{v:.0f}"),
               pair(r, "heap", lambda v: fmt_bytes(v["bytes"])),
               pair(r, "heap", lambda v: f"{v['big_calls']:.2f}")]
        if gpu:
            row.append(pair(r, "gpu_mib", lambda v: "→".join(str(x) for x in v)))
        row.append("; ".join(notes).replace("|", "/"))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib, no plot")
        return
    series = [("ours", "tab:blue"), ("upstream", "tab:orange"), ("limit", "tab:green")]
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(results)), 5))
    width = 0.27
    for i, (name, color) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for x, r in enumerate(results):
            if name == "limit":
                v = r["limit"].get("frame_fps")
                mn = mx = v
            else:
                b = r["builds"].get(name) or {}
                v, mn, mx = b.get("fps"), b.get("min"), b.get("max")
            if v:
                xs.append(x + (i - 1) * width)
                ys.append(v)
                lo.append(v - mn)
                hi.append(mx - v)
        ax.bar(xs, ys, width, yerr=[lo, hi], label=name, color=color, capsize=2)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([r["name"].replace(" async", "\nasync") for r in results],
                       rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("frames per second (log)")
    ax.set_title("dnn_processing, torch backend: ours, upstream 9.0.2, LibTorch alone")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# --- main -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--limit", required=True)
    ap.add_argument("--alloc", required=True)
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__),
                                                     "..", "tests", "dnn", "models.py"))
    args = ap.parse_args()
    python = os.environ.get("PYTHON", sys.executable)
    gpu = cuda_ok(python)
    args.seconds = float(os.environ.get("BENCH_SECONDS", 3 if gpu else 5))
    args.runs = int(os.environ.get("BENCH_RUNS", 3))
    args.alloc = os.path.abspath(args.alloc)
    only = re.compile(os.environ.get("BENCH_ONLY", ""))
    todo = [s for s in scenarios(gpu) if only.search(s.name)]

    models = os.path.join(args.out, "models")
    subprocess.run([python, args.models, models] + sorted({s.model for s in todo}),
                   check=True)
    head = header(args, gpu)
    print(f"bench: {len(todo)} scenarios, {args.runs} runs of {args.seconds:g} s;"
          f" GPU: {head['gpu'] or 'none'}", flush=True)

    builds = {"ours": args.ours, "upstream": args.upstream}
    sources, limits, results = {}, {}, []
    for i, sc in enumerate(todo, 1):
        model = os.path.join(models, sc.model + ".pt")
        key = (sc.width, sc.height, sc.frames)
        if key not in sources:
            sources[key] = run_ffmpeg(ffmpeg_cmd(args.ours, sc, model, dnn=False),
                                      min(2.0, args.seconds))["fps"]
        key = (sc.model, sc.width, sc.height, sc.device, sc.frames)
        if key not in limits:
            limits[key] = limit(args, sc, model, gpu and sc.device != "cpu")
        res = {"name": sc.name, "model": sc.model, "size": [sc.width, sc.height],
               "device": sc.device, "frames": sc.frames, "async": sc.async_,
               "source_fps": sources[(sc.width, sc.height, sc.frames)],
               "limit": limits[key], "builds": {}}
        for b in sc.builds:
            res["builds"][b] = bench_build(builds[b], sc, model, args, args.out,
                                           gpu and sc.device != "cpu")
        results.append(res)
        lim = res["limit"].get("frame_fps")
        done = [f"{b} {fmt_fps(v)}" + (f" ({v['reason']})" if v["reason"] else "")
                for b, v in res["builds"].items()]
        done.append(f"limit {lim:.1f}" if lim else "limit failed")
        print(f"[{i}/{len(todo)}] {sc.name}: " + ", ".join(done), flush=True)

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
