"""Steady fps of one ffmpeg pipeline: run it for F1 and F2 output frames
(-frames:v before the output) and divide (F2 - F1) by the difference of
the wall times, so start-up (CUDA, model load) cancels.

    python3 tools/bench/steady.py [--frames F1,F2] [--label TEXT] -- FFMPEG ARGS... OUTPUT

ARGS are ffmpeg's arguments up to the output (which comes last, e.g. -f
null -).  Prints one Markdown table row: label, fps.
"""

import argparse
import subprocess
import time


def wall(cmd, frames):
    cmd = cmd[:-1] + ["-frames:v", str(frames), cmd[-1]]
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise RuntimeError("exit %d: %s" % (r.returncode, r.stderr.strip()[-160:]))
    return time.monotonic() - t


def steady_fps(cmd, f1, f2):
    """(f2 - f1) / the difference of the wall times of cmd for f2 and f1
    output frames; cmd ends with the output."""
    return (f2 - f1) / (wall(cmd, f2) - wall(cmd, f1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", default="300,900")
    ap.add_argument("--label", default="")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    cmd = cmd[:1] + ["-nostdin", "-hide_banner", "-v", "error", "-y"] + cmd[1:]
    f1, f2 = (int(f) for f in args.frames.split(","))
    try:
        fps = "%.1f" % steady_fps(cmd, f1, f2)
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        fps = str(e)
    print("| %s | %s |" % (args.label or " ".join(cmd[1:]), fps), flush=True)


if __name__ == "__main__":
    main()
