"""Several GPUs: steady fps of dnn_processing on CUDA frames, one GPU alone
against two GPUs driven by two processes and by one process.

    python3 tools/bench/multigpu.py --ffmpeg ./ffmpeg --model M --out DIR
        [--size WxH] [--frames F1,F2] [--runs N] [--opts :OPT=V...] [--python PY]

M is a model of tests/dnn/models.py (small, sr2, ...), written to
DIR/models/M.pt by PY (default: this Python, which then needs torch), or the
path of a .pt file.  Each chain: one testsrc2 frame, hwupload to GPU N
(opened with -init_hw_device cuda=cu:N,primary_ctx=1: the filter takes
CUDA frames of the primary context only, so hwupload_cuda=device=N, which
opens a context of its own, is not used), looped to F frames, the model,
-f null.  The cases:

  alone       one process, one chain, on GPU 0, then on GPU 1
  processes   two processes at once, one per GPU
  hwupload    one process, -init_hw_device cuda=c0:0,primary_ctx=1
              -init_hw_device cuda=c1:1,primary_ctx=1 and a split with
              hwupload in each chain: ffmpeg
              gives every hwupload the last device, so both chains share
              GPU 1 (the "GPUs" column says which GPU each chain ran on)

Steady state: every case runs with F1 and F2 frames per chain and the rate
is (F2 - F1) / (t2 - t1), t the wall time of the process, so start-up (CUDA,
model load: 1-1.5 s a process) cancels; a short run at -v verbose first
tells which GPU each chain's frames are on.  In one process both chains run F
frames, so each chain's figure is that of the slower one.  With N runs the
median rate is kept.  Writes DIR/multigpu.json and DIR/multigpu.md and prints
the table.  With fewer than two GPUs only GPU 0 alone runs.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_PY = os.path.join(HERE, "..", "..", "tests", "dnn", "models.py")


def gpu_count():
    """GPUs ffmpeg can use: nvidia-smi -L, limited by CUDA_VISIBLE_DEVICES."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    n = len([l for l in out.splitlines() if l.startswith("GPU ")])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        n = min(n, len([v for v in visible.split(",") if v.strip()]))
    return n


def model_path(args):
    if os.path.isfile(args.model):
        return os.path.abspath(args.model)
    out = os.path.join(args.out, "models")
    subprocess.run([args.python, MODELS_PY, out, args.model], check=True)
    return os.path.join(out, args.model + ".pt")


class Cases:
    """The ffmpeg command lines of each case, for F frames per chain."""

    def __init__(self, args, model):
        self.ffmpeg, self.model, self.opts = args.ffmpeg, model, args.opts
        self.src = ["-f", "lavfi", "-i", "testsrc2=s=%s:r=25:d=1" % args.size]
        self.level = "error"

    def base(self):
        return [self.ffmpeg, "-nostdin", "-hide_banner", "-v", self.level, "-nostats"]

    def chain(self, frames, up):
        return ("%s,loop=loop=%d:size=1,dnn_processing=dnn_backend=torch:model=%s%s"
                % (up, frames - 1, self.model, self.opts))

    def alone(self, frames, gpu):
        vf = "trim=end_frame=1,format=rgb0," + self.chain(frames, "hwupload")
        dev = ["-init_hw_device", "cuda=cu:%d,primary_ctx=1" % gpu, "-filter_hw_device", "cu"]
        return [self.base() + dev + self.src + ["-vf", vf, "-f", "null", "-"]]

    def processes(self, frames):
        return self.alone(frames, 0) + self.alone(frames, 1)

    def split(self, frames, ups, pre=()):
        graph = "[0:v]trim=end_frame=1,format=rgb0,split[a][b];[a]%s[o0];[b]%s[o1]" % (
            self.chain(frames, ups[0]), self.chain(frames, ups[1]))
        return [self.base() + list(pre) + self.src + [
            "-filter_complex", graph, "-map", "[o0]", "-f", "null", "-",
            "-map", "[o1]", "-f", "null", "-"]]

    def hwupload(self, frames):
        return self.split(frames, ["hwupload", "hwupload"],
                          ["-init_hw_device", "cuda=c0:0,primary_ctx=1",
                           "-init_hw_device", "cuda=c1:1,primary_ctx=1"])


def run_at_once(cmds, timeout):
    """Start every command, wait for all; per command (seconds, rc, log)."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for c in cmds]
    res = []
    for p in procs:
        try:
            err = p.communicate(timeout=max(1, timeout - (time.monotonic() - t0)))[1]
        except subprocess.TimeoutExpired:
            p.kill()
            err = p.communicate()[1] + "\ntimed out"
        res.append((time.monotonic() - t0, p.returncode, err))
    return res


def first_error(log):
    """The first line of the log that says what failed."""
    lines = [l for l in log.strip().splitlines()
             if re.search(r"rror|Cannot|[Ff]ailed|does not|timed out", l)]
    return (lines or log.strip().splitlines()[-1:] or ["failed"])[0].strip()[:120]


def gpus_of(make, cases):
    """The GPU of each filter's CUDA frames, from the verbose log of a short
    run; or a string saying why the run failed."""
    cases.level = "verbose"
    res = run_at_once(make(2), 120)
    cases.level = "error"
    bad = [r for r in res if r[1] != 0]
    if bad:
        return "rc %d: %s" % (bad[0][1], first_error(bad[0][2]))
    return [g for r in res for g in re.findall(r"CUDA frames \(\w+\) on cuda:(\d+)", r[2])]


def measure(make, cases, args):
    """Steady fps per process of a case (a list, or a string saying why
    not) and the GPUs its chains ran on."""
    f1, f2 = args.frames
    gpus = gpus_of(make, cases)
    if isinstance(gpus, str):
        return gpus, []
    rates = []
    for _ in range(args.runs):
        t = []
        for frames in (f1, f2):
            res = run_at_once(make(frames), 120 + 4 * f2 / 100)
            bad = [r for r in res if r[1] != 0]
            if bad:
                return "rc %d: %s" % (bad[0][1], first_error(bad[0][2])), gpus
            t.append([r[0] for r in res])
        if any(b <= a for a, b in zip(*t)):
            return "the longer run was not slower: use larger --frames", gpus
        rates.append([(f2 - f1) / (b - a) for a, b in zip(*t)])
    return [statistics.median(col) for col in zip(*rates)], gpus

CASES = [("alone0", "one GPU alone (GPU 0)", lambda c: lambda f: c.alone(f, 0)),
         ("alone1", "one GPU alone (GPU 1)", lambda c: lambda f: c.alone(f, 1)),
         ("processes", "two processes, one per GPU", lambda c: c.processes),
         ("hwupload", "one process, split, hwupload after two -init_hw_device",
          lambda c: c.hwupload)]


def row(key, name, rates, gpus, alone):
    """A result: fps of each chain, together, and each against its GPU alone."""
    if isinstance(rates, str):
        return {"case": key, "name": name, "failed": rates, "gpus": gpus}
    chains = rates if len(rates) == len(gpus) else [rates[0]] * max(1, len(gpus))
    ratios = [r / alone[g] if alone.get(g) else None for r, g in zip(chains, gpus)]
    both = sum(alone.get(g, 0) for g in ("0", "1"))
    return {"case": key, "name": name, "gpus": gpus, "chain_fps": chains,
            "together_fps": sum(chains), "vs_alone": ratios,
            "together_vs_both_alone": sum(chains) / both if both and len(chains) > 1 else None}


def markdown(head, rows):
    def num(v, fmt):
        return fmt % v if v is not None else "–"
    lines = [head, "",
             "| case | GPUs (log) | fps per chain | together fps | each / alone on its GPU"
             " | together / (GPU 0 + GPU 1 alone) |", "|" + " --- |" * 6]
    for r in rows:
        if "failed" in r:
            lines.append("| %s | %s | failed: %s | – | – | – |" % (
                r["name"], ", ".join(r["gpus"]) or "–", r["failed"].replace("|", "/")))
            continue
        lines.append("| %s | %s | %s | %.0f | %s | %s |" % (
            r["name"], ", ".join(r["gpus"]) or "–",
            " / ".join("%.0f" % v for v in r["chain_fps"]), r["together_fps"],
            " / ".join(num(v, "%.2f") for v in r["vs_alone"]),
            num(r["together_vs_both_alone"], "%.2f")))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--frames", default="1000,5000")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--opts", default="", help="more dnn_processing options, as :k=v")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    args.frames = [int(v) for v in args.frames.split(",")]
    if len(args.frames) != 2 or not 0 < args.frames[0] < args.frames[1]:
        sys.exit("multigpu: --frames wants F1,F2 with 0 < F1 < F2")
    args.ffmpeg = os.path.abspath(args.ffmpeg)
    os.makedirs(args.out, exist_ok=True)
    cases = Cases(args, model_path(args))
    n = gpu_count()
    todo = CASES if n >= 2 else CASES[:1]
    if n < 2:
        print("multigpu: %d GPU%s: only GPU 0 alone runs" % (n, "" if n == 1 else "s"))

    alone, rows = {}, []
    for key, name, make in todo:
        rates, gpus = measure(make(cases), cases, args)
        if key.startswith("alone") and not isinstance(rates, str):
            alone[key[-1]] = rates[0]
        rows.append(row(key, name, rates, gpus, alone))
        print("%s: %s" % (name, rates if isinstance(rates, str) else
                          ", ".join("%.1f fps" % r for r in rates)), flush=True)

    head = ("dnn_processing on CUDA frames (rgb0 %s, model %s%s), %d GPUs, steady fps "
            "from runs of %d and %d frames per chain, median of %d; %s UTC"
            % (args.size, os.path.basename(cases.model), args.opts, n, args.frames[0],
               args.frames[1], args.runs, time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    table = markdown(head, rows)
    with open(os.path.join(args.out, "multigpu.json"), "w") as f:
        json.dump({"header": head, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "multigpu.md"), "w") as f:
        f.write(table)
    print("\n" + table)


if __name__ == "__main__":
    main()
