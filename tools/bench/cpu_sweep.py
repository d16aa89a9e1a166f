"""CPU frames: steady fps of dnn_processing for several nireq and
intra_op_threads splits, to choose the defaults and to say which split a
machine needs.

    python3 tools/bench/cpu_sweep.py --ffmpeg ./ffmpeg --model M.pt
        [--size WxH] [--frames F1,F2] [--splits N:T,...] [--ref FFMPEG]

Each split N:T runs the filter with nireq=N and intra_op_threads=T (0: the
backend's default), async=1, on one testsrc2 frame looped to F frames, -f
null; the rate is (F2 - F1) / (t2 - t1) over the wall times of the two
runs, so start-up cancels.  --ref adds another ffmpeg (upstream master,
say) with its default options, as the first row's reference.  Prints a
Markdown table: split, fps, ratio to the reference.
"""

import argparse
import subprocess
import sys
import time


def wall(ffmpeg, model, size, frames, opts):
    vf = ("format=rgb24,loop=loop=-1:size=1,trim=end_frame=%d,"
          "dnn_processing=dnn_backend=torch:model=%s%s" % (frames, model, opts))
    cmd = [ffmpeg, "-hide_banner", "-v", "error", "-nostdin", "-f", "lavfi", "-i",
           "testsrc2=s=%s:r=25" % size, "-vf", vf, "-f", "null", "-"]
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise RuntimeError("exit %d: %s" % (r.returncode, r.stderr.strip()[-200:]))
    return time.monotonic() - t


def steady(ffmpeg, model, size, frames, opts):
    (f1, f2) = frames
    try:
        t1 = wall(ffmpeg, model, size, f1, opts)
        t2 = wall(ffmpeg, model, size, f2, opts)
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        return str(e)
    return (f2 - f1) / (t2 - t1)


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
        rows.append(("nireq=%s intra_op_threads=%s" % (n, t),
                     steady(args.ffmpeg, args.model, args.size, frames,
                            ":async=1:nireq=%s:intra_op_threads=%s" % (n, t))))
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
