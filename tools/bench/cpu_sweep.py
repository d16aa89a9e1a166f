"""CPU frames: steady fps of dnn_processing for several splits of nireq
and intra-op threads per request, to choose the defaults and to say which split a
machine needs.

    python3 tools/bench/cpu_sweep.py --ffmpeg ./ffmpeg --model M.pt
        [--size WxH] [--frames F1,F2] [--splits N:T,...] [--ref FFMPEG]

Each split N:T runs the filter with nireq=N and T intra-op threads per
request, through the filter's generic option threads=N*T (T=0: the
backend's default), async=1, on one testsrc2 frame looped to F frames, -f
null (-frames:v F); the rate is (F2 - F1) / (t2 - t1) over the wall
times of the two runs (tools/bench/steady.py), so start-up cancels.
--ref adds another ffmpeg (upstream master, say) with its default
options, as the first row's reference.  Prints a Markdown table: split,
fps, ratio to the reference.
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steady import steady_fps  # noqa: E402


def steady(ffmpeg, model, size, frames, opts, threads=0):
    """Steady fps of the model on one looped testsrc2 frame, or why not."""
    vf = ("format=rgb24,loop=loop=-1:size=1,"
          "dnn_processing=dnn_backend=torch:model=%s%s" % (model, opts))
    # -filter_threads: the graph's cap on a filter's threads option
    cap = ["-filter_threads", str(threads)] if threads else []
    cmd = [ffmpeg, "-hide_banner", "-v", "error", "-nostdin"] + cap + ["-f", "lavfi", "-i",
           "testsrc2=s=%s:r=25" % size, "-vf", vf, "-f", "null", "-"]
    try:
        return steady_fps(cmd, *frames)
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        return str(e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--frames", default="300,900")
    ap.add_argument("--splits", default="0:0,1:0,2:0,4:0,8:0,16:0,4:2,8:1,8:2,16:1")
    ap.add_argument("--ref")
    args = ap.parse_args()
    frames = [int(f) for f in args.frames.split(",")]
    rows = []
    if args.ref:
        rows.append(("reference, default options", steady(args.ref, args.model,
                                                          args.size, frames, ":async=1")))
    for split in args.splits.split(","):
        n, t = split.split(":")
        threads = int(n) * int(t)
        rows.append(("nireq=%s, %s thread%s each" % (n, t or "default", "" if t == "1" else "s"),
                     steady(args.ffmpeg, args.model, args.size, frames,
                            ":async=1:nireq=%s%s" % (n, ":threads=%d" % threads if threads else ""),
                            threads)))
    ref = rows[0][1] if args.ref and isinstance(rows[0][1], float) else None
    print("| %s %s, frames %s | fps | vs reference |" % (args.model, args.size, args.frames))
    print("| --- | --- | --- |")
    for name, fps in rows:
        if not isinstance(fps, float):
            print("| %s | %s | |" % (name, fps))
            continue
        print("| %s | %.1f | %s |" % (name, fps, "%.2f" % (fps / ref) if ref else ""))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
