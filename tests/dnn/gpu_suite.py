"""GPU suite of the torch backend (make check-gpu): CUDA frames through
dnn_processing against the CPU path on the same frames, both CUDA context
cases, odd sizes, an x2 model, errors, GPU memory over a long run and a
compute-sanitizer memcheck.

    python3 gpu_suite.py --ffmpeg FFMPEG --workdir DIR [--prior FILE] [--quick]

Prints one line per test and, last, "N passed, N failed" (adding the counts
of the last line of --prior, the CPU suite's summary, when given).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

# sw_formats a CUDA frames context of FFmpeg 9.0.2 can hold (hwupload makes
# them); rgb24, bgr24, 0rgb and 0bgr are accepted by the filter but no CUDA
# frames context of this FFmpeg can be created with them.
SW_FORMATS = ["rgb0", "bgr0", "rgba", "bgra"]


class Suite:
    def __init__(self, args):
        self.ffmpeg = args.ffmpeg
        self.dir = args.workdir
        self.passed = 0
        self.failed = 0
        os.makedirs(self.dir, exist_ok=True)
        for name in ("conv", "sr2", "small", "conv1"):
            path = self.model(name)
            if not os.path.exists(path):
                models.build(name).save(path)

    def model(self, name):
        return os.path.join(self.dir, name + ".pt")

    def path(self, name):
        return os.path.join(self.dir, name)

    def ff(self, args, timeout=600, prefix=()):
        cmd = list(prefix) + [self.ffmpeg, "-nostdin", "-hide_banner", "-y"] + args
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr + p.stdout

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print("PASS  %s %s" % (name, detail), flush=True)
        else:
            self.failed += 1
            print("FAIL  %s %s" % (name, detail), flush=True)

    def source(self, w, h, frames=3):
        path = self.path("in-%dx%d.rgb" % (w, h))
        if not os.path.exists(path):
            rc, err = self.ff(["-f", "lavfi", "-i", "testsrc2=s=%dx%d:r=5" % (w, h),
                               "-frames:v", str(frames), "-pix_fmt", "rgb24",
                               "-f", "rawvideo", path])
            if rc:
                raise SystemExit("cannot make test frames: " + err)
        return path

    def cpu_path(self, model, w, h):
        out = self.path("cpu-%s-%dx%d.rgb" % (model, w, h))
        rc, err = self.ff(["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h),
                           "-i", self.source(w, h), "-vf",
                           "dnn_processing=dnn_backend=torch:model=%s" % self.model(model),
                           "-f", "rawvideo", "-pix_fmt", "rgb24", out])
        return out if rc == 0 else None

    def cuda_path(self, model, sw, w, h, primary=False, extra=""):
        out = self.path("gpu-%s-%s-%dx%d-%d.rgb" % (model, sw, w, h, primary))
        dev = "cuda=cu:0" + (",primary_ctx=1" if primary else "")
        rc, err = self.ff(["-v", "verbose", "-init_hw_device", dev, "-filter_hw_device", "cu",
                           "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h),
                           "-i", self.source(w, h), "-vf",
                           "format=%s,hwupload,dnn_processing=dnn_backend=torch:model=%s%s,"
                           "hwdownload,format=%s" % (sw, self.model(model), extra, sw),
                           "-f", "rawvideo", "-pix_fmt", "rgb24", out])
        return (out if rc == 0 else None), rc, err

    def compare(self, name, a, b, tol):
        if not a or not b:
            self.check(name, False, "(a run failed)")
            return
        x = torch.frombuffer(bytearray(open(a, "rb").read()), dtype=torch.uint8)
        y = torch.frombuffer(bytearray(open(b, "rb").read()), dtype=torch.uint8)
        if x.numel() != y.numel():
            self.check(name, False, "size %d != %d" % (x.numel(), y.numel()))
            return
        diff = int((x.short() - y.short()).abs().max()) if x.numel() else 0
        self.check(name, x.numel() > 0 and diff <= tol, "max diff %d LSB (<= %d)" % (diff, tol))

    def gpu_memory(self, pid):
        p = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            f = [v.strip() for v in line.split(",")]
            if len(f) == 2 and f[0] == str(pid):
                return int(f[1])
        return None


def run_formats(s):
    w, h = 96, 64
    ref = s.cpu_path("conv", w, h)
    for sw in SW_FORMATS:
        out, rc, err = s.cuda_path("conv", sw, w, h)
        s.compare("cuda-%s-vs-cpu" % sw, ref, out, 1)


def run_sizes_and_contexts(s):
    for (w, h) in ((1918, 1078), (318, 238)):
        ref = s.cpu_path("conv", w, h)
        for primary in (False, True):
            out, rc, err = s.cuda_path("conv", "rgb0", w, h, primary)
            s.compare("cuda-rgb0-%dx%d-%s" % (w, h, "primary" if primary else "ownctx"),
                      ref, out, 1)
            want = "primary context" if primary else "its own context"
            s.check("cuda-log-%dx%d-%s" % (w, h, "primary" if primary else "ownctx"),
                    want in err, "(verbose log names the case)")
    ref = s.cpu_path("sr2", 160, 90)
    for primary in (False, True):
        out, rc, err = s.cuda_path("sr2", "rgb0", 160, 90, primary)
        s.compare("cuda-x2-%s" % ("primary" if primary else "ownctx"), ref, out, 1)
    for async_ in (0, 1):
        out, rc, err = s.cuda_path("conv", "bgr0", 96, 64, False, ":async=%d:nireq=3" % async_)
        s.compare("cuda-async%d-nireq3" % async_, s.cpu_path("conv", 96, 64), out, 1)


def run_errors(s):
    w, h = 96, 64
    out, rc, err = s.cuda_path("conv", "rgb0", w, h, False, ":device=cpu")
    s.check("cuda-error-device-mismatch", rc > 0 and "CUDA frames are on cuda:0" in err,
            "(rc %d)" % rc)
    out, rc, err = s.cuda_path("conv", "yuv422p", w, h)
    s.check("cuda-error-sw-format", rc > 0 and "sw_format yuv422p" in err, "(rc %d)" % rc)
    out, rc, err = s.cuda_path("conv1", "rgb0", w, h)
    s.check("cuda-error-model-channels", rc > 0 and "model" in err, "(rc %d)" % rc)


# YUV CUDA frames: (sw_format, colorspace, range) uploaded from raw frames,
# and NVDEC-decoded clips (mpeg2video limited range, mjpeg full range)
YUV_CASES = [("nv12", "bt709", "tv"), ("nv12", "smpte170m", "pc"),
             ("p010le", "bt709", "tv"), ("yuv420p", "bt709", "tv"),
             ("yuv444p", "smpte170m", "tv")]


def yuv_cpu_chain(model, sw, spc, rng, channels):
    dnn = "dnn_processing=dnn_backend=torch:model=%s" % model
    if channels == 1 and sw in ("nv12", "yuv420p", "yuv444p"):
        return dnn
    flags = "flags=bilinear+full_chroma_int+full_chroma_inp+accurate_rnd"
    to_rgb = "scale=in_color_matrix=%s:in_range=%s:%s,format=rgb24" % (spc, rng, flags)
    back = "scale=out_color_matrix=%s:out_range=%s:%s,format=%s" % (spc, rng, flags, sw)
    return "%s,%s,%s" % (to_rgb, dnn, back)


def run_yuv(s):
    w, h = 318, 238
    src = s.path("yuv-src.rgb")
    s.ff(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=5", "-frames:v", "3",
          "-vf", "scale=%d:%d:flags=bilinear" % (w, h), "-pix_fmt", "rgb24",
          "-f", "rawvideo", src])
    for sw, spc, rng in YUV_CASES:
        raw = s.path("yuv-%s-%s-%s.raw" % (sw, spc, rng))
        s.ff(["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h), "-i", src,
              "-vf", "scale=out_color_matrix=%s:out_range=%s,format=%s" % (spc, rng, sw),
              "-f", "rawvideo", raw])
        inp = ["-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h),
               "-colorspace", spc, "-color_range", rng, "-i", raw]
        for model, channels in (("conv", 3), ("conv1", 1), ("sr2", 3)):
            tag = "cuda-yuv-%s-%s-%s-%s" % (sw, spc, rng, model)
            ref, out = s.path(tag + ".ref"), s.path(tag + ".out")
            if channels == 1 and sw == "p010le":
                continue    # the CPU path has no 10-bit YUV to compare with
            rc1, e1 = s.ff(inp + ["-vf", yuv_cpu_chain(s.model(model), sw, spc, rng, channels),
                                  "-f", "rawvideo", "-pix_fmt", sw, ref])
            rc2, e2 = s.ff(["-init_hw_device", "cuda=cu:0", "-filter_hw_device", "cu"] + inp +
                           ["-vf", "hwupload,dnn_processing=dnn_backend=torch:model=%s,"
                            "hwdownload,format=%s" % (s.model(model), sw),
                            "-f", "rawvideo", "-pix_fmt", sw, out])
            if rc1 or rc2:
                s.check(tag, False, "(cpu rc %d, gpu rc %d: %s)" % (rc1, rc2,
                        (e2 or e1).strip().splitlines()[-1:] if (e1 or e2) else ""))
                continue
            s.compare(tag, ref, out, 2)
    # NVDEC: decode straight to CUDA frames, model on the GPU, against the CPU path
    for codec, ext, rng, size in (("mpeg2video", "mkv", "tv", "1920x1080"),
                                  ("mjpeg", "mkv", "pc", "854x480")):
        clip = s.path("clip-%s.%s" % (codec, ext))
        enc = ["-c:v", codec, "-q:v", "3"] + (["-pix_fmt", "yuvj420p"] if codec == "mjpeg" else [])
        s.ff(["-f", "lavfi", "-i", "testsrc2=s=%s:r=25" % size, "-frames:v", "5",
              "-vf", "scale=iw/4:ih/4,scale=%s:flags=bilinear" % size.replace("x", ":"),
              "-colorspace", "bt709", "-color_range", rng] + enc + [clip])
        for model, channels in (("conv", 3), ("conv1", 1)):
            tag = "nvdec-%s-%s" % (codec, model)
            ref, out = s.path(tag + ".ref"), s.path(tag + ".out")
            dec = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda", "-i", clip]
            chain = yuv_cpu_chain(s.model(model), "nv12", "bt709", rng, channels)
            rc1, e1 = s.ff(dec + ["-vf", "hwdownload,format=nv12," + chain,
                                  "-f", "rawvideo", "-pix_fmt", "nv12", ref])
            rc2, e2 = s.ff(["-v", "verbose"] + dec +
                           ["-vf", "dnn_processing=dnn_backend=torch:model=%s,"
                            "hwdownload,format=nv12" % s.model(model),
                            "-f", "rawvideo", "-pix_fmt", "nv12", out])
            if rc1 or rc2:
                s.check(tag, False, "(cpu rc %d, gpu rc %d)" % (rc1, rc2))
                continue
            s.compare(tag, ref, out, 2)


def run_memory(s, frames):
    cmd = [s.ffmpeg, "-nostdin", "-hide_banner", "-y", "-init_hw_device", "cuda=cu:0",
           "-filter_hw_device", "cu", "-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=25:d=1",
           "-vf", "trim=end_frame=1,"
           "format=rgb0,hwupload,loop=loop=%d:size=1,dnn_processing=dnn_backend=torch:"
           "model=%s" % (frames - 1, s.model("small")), "-f", "null", "-"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []
    err = []
    t = threading.Thread(target=lambda: err.append(p.stderr.read()))
    t.start()
    while p.poll() is None:
        m = s.gpu_memory(p.pid)
        if m is not None:
            samples.append(m)
        time.sleep(0.2)
    t.join()
    frames_out = re.findall(r"frame= *(\d+)", err[0] if err else "")
    ok = (p.returncode == 0 and len(samples) >= 4 and frames_out and
          int(frames_out[-1]) == frames)
    # steady state: the largest reading of the second quarter of the run
    # against the largest of its last fifth before teardown
    n = len(samples)
    first = max(samples[n // 4:n // 2] or [0])
    last = max(samples[n * 7 // 10:n * 9 // 10] or [0])
    s.check("cuda-memory-flat-%d-frames" % frames, ok and abs(last - first) <= 8,
            "(rc %d, %s frames, MiB after warm-up %d, at end %d, %d samples)"
            % (p.returncode, frames_out[-1] if frames_out else "no", first, last,
               len(samples)))


def run_sanitizer(s):
    cs = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(cs):
        s.check("cuda-memcheck", False, "(compute-sanitizer not found)")
        return
    for primary in (False, True):
        dev = "cuda=cu:0" + (",primary_ctx=1" if primary else "")
        rc, err = s.ff(["-init_hw_device", dev, "-filter_hw_device", "cu",
                        "-f", "lavfi", "-i", "testsrc2=s=318x238:r=5", "-frames:v", "3",
                        "-vf", "format=rgb0,hwupload,dnn_processing=dnn_backend=torch:"
                        "model=%s,hwdownload,format=rgb0" % s.model("conv"),
                        "-f", "null", "-"], timeout=900,
                       prefix=(cs, "--tool", "memcheck", "--error-exitcode", "99"))
        m = re.search(r"ERROR SUMMARY: (\d+) error", err)
        s.check("cuda-memcheck-%s" % ("primary" if primary else "ownctx"),
                rc == 0 and m is not None and m.group(1) == "0",
                "(rc %d, %s)" % (rc, m.group(0) if m else "no summary"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--prior")
    ap.add_argument("--frames", type=int, default=30000)
    ap.add_argument("--no-sanitizer", action="store_true")
    args = ap.parse_args()

    s = Suite(args)
    run_formats(s)
    run_sizes_and_contexts(s)
    run_errors(s)
    run_yuv(s)
    run_memory(s, args.frames)
    if not args.no_sanitizer:
        run_sanitizer(s)

    passed, failed = s.passed, s.failed
    if args.prior and os.path.exists(args.prior):
        lines = open(args.prior).read().split("\n")
        for line in reversed(lines):
            m = re.match(r"^(\d+) passed, (\d+) failed$", line.strip())
            if m:
                print("CPU suite: " + line.strip())
                passed += int(m.group(1))
                failed += int(m.group(2))
                break
        else:
            failed += 1
            print("CPU suite: no summary")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
