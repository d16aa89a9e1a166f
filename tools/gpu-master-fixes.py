#!/usr/bin/env python3
"""The fixes of master's torch backend at the head of the master series
(tools/series-fixes/master, in tools/series.txt's order), on the GPU
machine: pristine master, then each fix on top of the ones before, each
run on CUDA frames against the CPU path of the same build.

usage (in the project, configured, on the GPU machine):
    python3 tools/gpu-master-fixes.py [--jobs N] [--out DIR]

It builds build/baseline/ffmpeg-master (make), copies it to
build/master-fixes, applies the fixes there one by one and rebuilds after
each.  A case prints: the variant, the case, ffmpeg's exit status (a
negative one is a signal), the largest difference from the CPU path's
frames (or none) and the last line ffmpeg wrote.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(TOP, "fate-suite", "dnn-torch")
HW = ["-init_hw_device", "cuda=cu:0", "-filter_hw_device", "cu"]

# name, model, sw_format of the CUDA frames, size
CASES = [
    ("shift rgb0 1080p", "shift.pt", "rgb0", "1920x1080"),
    ("invert rgb0 1080p", "invert.pt", "rgb0", "1920x1080"),
    ("shift bgr0 1080p", "shift.pt", "bgr0", "1920x1080"),
    ("shift 0rgb 1080p", "shift.pt", "0rgb", "1920x1080"),
    ("shift rgb24 64x64", "shift.pt", "rgb24", "64x64"),
    ("up2 rgb0 540p", "up2.pt", "rgb0", "960x540"),
]


def fixes():
    names = []
    with open(os.path.join(TOP, "tools", "series.txt")) as f:
        for line in f:
            m = re.match(r"\[master\] Fix: (\S+)", line)
            if m:
                names.append(m.group(1))
    return names


def patch_tool():
    """patch(1), or the one of the Debian package in build/deps (as
    tools/prepare-tree.sh does); git apply would ignore the paths, as the
    tree lies inside our repository."""
    if shutil.which("patch"):
        return "patch"
    debs = glob.glob(os.path.join(TOP, "build", "deps", "patch_*_amd64.deb"))
    if not debs:
        sys.exit("gpu-master-fixes: no patch(1) and no patch_*.deb in build/deps")
    dest = os.path.join(TOP, "build", "deps", "patch-tool")
    subprocess.run(["dpkg-deb", "-x", debs[0], dest], check=True)
    return os.path.join(dest, "usr", "bin", "patch")


def apply_diff(tree, name):
    diff = os.path.join(TOP, "tools", "series-fixes", "master", name + ".diff")
    subprocess.run([patch_tool(), "-p1", "-s", "--no-backup-if-mismatch", "-d", tree, "-i", diff], check=True)


def ffmpeg_run(ffmpeg, args):
    p = subprocess.run([ffmpeg, "-nostdin", "-v", "error", "-y"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode(errors="replace").strip().splitlines()
    # a c10::Error ends with LibTorch's backtrace: its first line says what
    what = [l for l in err if "what()" in l]
    return p.returncode, p.stdout, (what or err or [""])[0]


def case(ffmpeg, model, fmt, size, opts, frames=5):
    src = ["-f", "lavfi", "-i", "testsrc2=s=%s:r=25:d=%g" % (size, frames / 25)]
    dnn = "dnn_processing=dnn_backend=torch:model=%s" % os.path.join(SAMPLES, model)
    raw = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    rc, cpu, msg = ffmpeg_run(ffmpeg, src + ["-vf", "format=rgb24," + dnn] + raw)
    if rc != 0:
        return rc, None, "CPU path: " + msg
    vf = "format=%s,hwupload,%s:device=cuda%s,hwdownload,format=%s" % (fmt, dnn, opts, fmt)
    rc, out, msg = ffmpeg_run(ffmpeg, HW + src + ["-vf", vf] + raw)
    if len(out) != len(cpu):
        return rc, None, "%d of %d frames; %s" % (len(out) // (len(cpu) // frames), frames, msg)
    return rc, max(abs(a - b) for a, b in zip(out, cpu)), msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default=str(os.cpu_count()))
    ap.add_argument("--out")
    ap.add_argument("--opts", nargs="*", default=["", ":async=0"],
                    help="filter options added to each case (one run each)")
    ap.add_argument("--gdb", action="store_true",
                    help="then run the first case under gdb and print the backtrace")
    a = ap.parse_args()
    base = os.path.join(TOP, "build", "baseline", "ffmpeg-master")
    subprocess.run(["make", "-C", TOP, base + "/ffmpeg", "JOBS=" + a.jobs], check=True)
    tree = os.path.join(TOP, "build", "master-fixes")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(base, tree, symlinks=True)
    lines = []
    for variant in ["master"] + fixes():
        if variant != "master":
            apply_diff(tree, variant)
            subprocess.run(["make", "-C", tree, "-j" + a.jobs, "ffmpeg"], check=True,
                           stdout=subprocess.DEVNULL)
        for (name, model, fmt, size), opts in [(c, o) for c in CASES for o in a.opts]:
            rc, diff, msg = case(os.path.join(tree, "ffmpeg"), model, fmt, size, opts)
            line = "%-36s %-18s %-8s rc %4d  max diff %-4s %s" % (
                variant, name, opts.strip(":") or "async=1", rc,
                "-" if diff is None else diff, msg[:110])
            print(line, flush=True)
            lines.append(line)
    if a.gdb and shutil.which("gdb"):
        name, model, fmt, size = CASES[0]
        vf = "format=%s,hwupload,dnn_processing=dnn_backend=torch:model=%s:device=cuda," \
             "hwdownload,format=%s" % (fmt, os.path.join(SAMPLES, model), fmt)
        subprocess.run(["gdb", "-batch", "-ex", "run", "-ex", "bt 25", "--args",
                        os.path.join(tree, "ffmpeg"), "-nostdin", "-v", "error"] + HW +
                       ["-f", "lavfi", "-i", "testsrc2=s=%s:d=0.2" % size, "-vf", vf,
                        "-f", "null", "-"])
    if a.out:
        with open(os.path.join(a.out, "master-fixes.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
