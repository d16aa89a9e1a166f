"""GPU suite of the torch backend (make check-gpu): CUDA frames through
dnn_processing against the CPU path on the same frames, both CUDA context
cases, odd sizes, an x2 model, errors, streams that change size mid-way
(uploaded and NVDEC frames: no frame lost), temporal models (window), two GPUs (skipped, in one line,
with fewer), GPU memory over a long run and a compute-sanitizer memcheck.

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
import yuv_ref  # noqa: E402

# sw_formats a CUDA frames context of FFmpeg 9.0.2 can hold (hwupload makes
# them); rgb24, bgr24, 0rgb and 0bgr are accepted by the filter but no CUDA
# frames context of this FFmpeg can be created with them.
SW_FORMATS = ["rgb0", "bgr0", "rgba", "bgra"]


class Suite:
    def __init__(self, args):
        self.ffmpeg = args.ffmpeg
        self.dir = os.path.abspath(args.workdir)    # concat lists name files in it
        self.passed = 0
        self.failed = 0
        os.makedirs(self.dir, exist_ok=True)
        for name in ("conv", "sr2", "small", "conv1", "sr2y", "conv_w_half", "nan_inf",
                     "batch_first"):
            path = self.model(name)
            if not os.path.exists(path):
                models.build(name).save(path, _extra_files=models.EXTRA.get(name, {}))

    def model(self, name):
        return os.path.join(self.dir, name + ".pt")

    def model_opt(self, name):
        """The model's path for model=, with aoti=1 for the AOTInductor
        packages (aoti_*, export_*), which load only with it."""
        aoti = name.startswith(("aoti_", "export_"))
        return self.model(name) + (":aoti=1" if aoti else "")

    def models(self, *names):
        """Write the models of tests/dnn/models.py that are not there yet."""
        for name in names:
            if not os.path.exists(self.model(name)):
                models.build(name).save(self.model(name),
                                        _extra_files=models.EXTRA.get(name, {}))

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

    def cpu_frames(self, model, pix, w, h, extra="", out_fmt="rgb24"):
        """CPU frames of pix through the model (device= in extra), as out_fmt."""
        out = self.path("cpuf-%s-%s-%dx%d-%s.rgb" % (model, pix, w, h,
                                                     re.sub(r"\W", "_", extra)))
        rc, err = self.ff(["-v", "verbose", "-f", "rawvideo", "-pix_fmt", "rgb24",
                           "-s", "%dx%d" % (w, h), "-i", self.source(w, h), "-vf",
                           "format=%s,dnn_processing=dnn_backend=torch:model=%s%s"
                           % (pix, self.model_opt(model), extra),
                           "-f", "rawvideo", "-pix_fmt", out_fmt, out])
        return (out if rc == 0 else None), rc, err

    def cuda_path(self, model, sw, w, h, primary=True, extra=""):
        out = self.path("gpu-%s-%s-%dx%d-%d-%s.rgb" % (model, sw, w, h, primary,
                                                       re.sub(r"\W", "_", extra)))
        dev = "cuda=cu:0" + (",primary_ctx=1" if primary else "")
        rc, err = self.ff(["-v", "verbose", "-init_hw_device", dev, "-filter_hw_device", "cu",
                           "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h),
                           "-i", self.source(w, h), "-vf",
                           "format=%s,hwupload,dnn_processing=dnn_backend=torch:model=%s%s,"
                           "hwdownload,format=%s" % (sw, self.model_opt(model), extra, sw),
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
        if sw in ("rgb0", "bgra"):
            s.check("cuda-%s-one-pass-output" % sw, "backend's CUDA kernel" in err,
                    "(verbose log: output written by our kernel)")
    run_alpha(s, w, h)


def run_alpha(s, w, h):
    """rgba and bgra: a same-size model keeps the input's alpha (random
    bytes here), an x2 model gives 255."""
    src = s.path("alpha-%dx%d.raw" % (w, h))
    gen = torch.Generator().manual_seed(7)
    frames = torch.randint(0, 256, (3, h, w, 4), dtype=torch.uint8, generator=gen)
    open(src, "wb").write(bytes(frames.flatten().tolist()))
    for sw in ("rgba", "bgra"):
        for model, scale in (("conv", 1), ("sr2", 2)):
            out = s.path("alpha-%s-%s.raw" % (sw, model))
            rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu",
                            "-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h),
                            "-i", src, "-vf", "hwupload,dnn_processing=dnn_backend=torch:"
                            "model=%s,hwdownload,format=%s" % (s.model_opt(model), sw),
                            "-f", "rawvideo", out])
            name = "cuda-%s-%s-alpha" % (sw, model)
            data = open(out, "rb").read() if rc == 0 else b""
            if len(data) != 3 * h * scale * w * scale * 4:
                s.check(name, False, "(rc %d, %d bytes)" % (rc, len(data)))
                continue
            got = torch.frombuffer(bytearray(data), dtype=torch.uint8).view(
                3, h * scale, w * scale, 4)[..., 3]
            want = frames[..., 3] if scale == 1 else torch.full_like(got, 255)
            s.check(name, bool((got == want).all()),
                    "(alpha %s)" % ("kept" if scale == 1 else "255 after x2"))


def run_sizes_and_contexts(s):
    for (w, h) in ((1918, 1078), (318, 238)):
        ref = s.cpu_path("conv", w, h)
        out, rc, err = s.cuda_path("conv", "rgb0", w, h)
        s.compare("cuda-rgb0-%dx%d-primary" % (w, h), ref, out, 1)
        s.check("cuda-log-%dx%d-primary" % (w, h), "in its primary context" in err,
                "(verbose log names the context)")
        # a context of FFmpeg's own (no primary_ctx=1): the same frames,
        # LibTorch on its own stream
        out, rc, err = s.cuda_path("conv", "rgb0", w, h, False)
        s.compare("cuda-rgb0-%dx%d-ownctx" % (w, h), ref, out, 1)
        s.check("cuda-log-%dx%d-ownctx" % (w, h),
                "in a context of FFmpeg's own: LibTorch runs on its own stream" in err,
                "(verbose log names the context)")
    ref = s.cpu_path("sr2", 160, 90)
    for primary in (True, False):
        out, rc, err = s.cuda_path("sr2", "rgb0", 160, 90, primary)
        s.compare("cuda-x2-" + ("primary" if primary else "ownctx"), ref, out, 1)
    for async_ in (0, 1):
        out, rc, err = s.cuda_path("conv", "bgr0", 96, 64, True, ":async=%d:nireq=3" % async_)
        s.compare("cuda-async%d-nireq3" % async_, s.cpu_path("conv", 96, 64), out, 1)


# precision and channels_last: fp16 within 2 LSB of 8 bits of the fp32 CPU
# path on the conv test model, bf16 within 4; channels_last 0 and 1 within 1
PRECISIONS = [("fp16", 2), ("bf16", 4)]


def run_precision(s):
    w, h = 318, 238
    ref = s.cpu_path("conv", w, h)
    for prec, tol in PRECISIONS:
        for sw in ("rgb0", "bgra"):
            out, rc, err = s.cuda_path("conv", sw, w, h, extra=":precision=" + prec)
            s.compare("prec-%s-cuda-%s" % (prec, sw), ref, out, tol)
        for pix in ("rgb24", "bgr24"):
            out, rc, err = s.cpu_frames("conv", pix, w, h, ":device=cuda:precision=" + prec)
            s.compare("prec-%s-cpuframes-%s-device-cuda" % (prec, pix), ref, out, tol)
        for sw, model in (("nv12", "conv"), ("p010le", "conv1")):
            precision_yuv(s, sw, model, prec, tol)
    for cl in (0, 1):
        out, rc, err = s.cuda_path("conv", "rgb0", w, h, extra=":precision=fp16:channels_last=%d" % cl)
        s.check("prec-fp16-channels-last-%d-log" % cl,
                ("channels-last" in err) == bool(cl), "(verbose log)")
        s.compare("prec-fp16-channels-last-%d" % cl, s.cuda_path(
            "conv", "rgb0", w, h, extra=":precision=fp16")[0], out, 1)
    out, rc, err = s.cuda_path("conv_w_half", "rgb0", w, h)
    s.check("prec-half-model-auto-log", "in fp16" in err, "(verbose log: runs in fp16)")
    s.compare("prec-half-model-auto", ref, out, 2)
    for async_, nireq in ((0, 1), (1, 1), (1, 3)):
        opt = ":precision=fp16:async=%d:nireq=%d" % (async_, nireq)
        s.compare("prec-fp16-cuda-async%d-nireq%d" % (async_, nireq), ref,
                  s.cuda_path("conv", "rgb0", w, h, extra=opt)[0], 2)
        s.compare("prec-fp16-cpuframes-async%d-nireq%d" % (async_, nireq), ref,
                  s.cpu_frames("conv", "rgb24", w, h, ":device=cuda" + opt)[0], 2)
    run_staged(s)
    run_overflow(s)


def precision_yuv(s, sw, model, prec, tol):
    """YUV CUDA frames (through scale_cuda for a 3-channel model, the Y plane
    for a 1-channel one) in fp32 and in prec, compared."""
    w, h, spc, rng = 318, 238, "bt709", "tv"
    raw = raw_yuv(s, sw, w, h, spc, rng)
    vf, out_fmt = yuv_gpu_vf(s, model, ":precision=%s", sw, model_channels(model))
    outs = []
    for p in ("fp32", prec):
        out = s.path("prec-yuv-%s-%s.out" % (sw, p))
        rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu",
                        "-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h),
                        "-colorspace", spc, "-color_range", rng, "-i", raw, "-vf",
                        "hwupload," + vf % p, "-f", "rawvideo", "-pix_fmt", out_fmt, out])
        outs.append(out if rc == 0 else None)
    compare_out(s, "prec-%s-cuda-%s-vs-fp32" % (prec, sw), out_fmt, w, h, outs[0], outs[1], tol)


def run_staged(s):
    """CPU frames, model on CUDA (page-locked staging, a stream per request):
    every format of the CPU path and an x2 model, against the CPU path."""
    for model, pix, w, h in (("conv", "rgb24", 318, 238), ("conv", "bgr24", 317, 237),
                             ("conv1", "gray8", 317, 237), ("conv1", "yuv420p", 318, 238),
                             ("sr2", "rgb24", 160, 90), ("sr2y", "gray8", 160, 90)):
        ref = s.cpu_frames(model, pix, w, h, out_fmt=pix)[0]
        out = s.cpu_frames(model, pix, w, h, ":device=cuda:nireq=3", out_fmt=pix)[0]
        s.compare("staged-%s-%s-%dx%d" % (model, pix, w, h), ref, out, 1)


def run_overflow(s):
    """A model whose fp16 output overflows (inf, inf - inf = NaN): inf clamps
    to 255 and NaN is written 0, as fp32 gives for the same frames."""
    w, h = 96, 64
    ref = s.cpu_frames("nan_inf", "rgb24", w, h)[0]
    for name, out in (
            ("cuda-rgb0", s.cuda_path("nan_inf", "rgb0", w, h, extra=":precision=fp16")[0]),
            ("cpuframes", s.cpu_frames("nan_inf", "rgb24", w, h,
                                       ":device=cuda:precision=fp16")[0])):
        s.compare("prec-fp16-overflow-" + name, ref, out, 2)


def run_errors(s):
    w, h = 96, 64
    out, rc, err = s.cuda_path("conv", "rgb0", w, h, True, ":device=cpu")
    s.check("cuda-error-device-mismatch", rc > 0 and "CUDA frames are on GPU 0; drop the "
            "option or write device=cuda:device_id=0" in err, "(rc %d)" % rc)
    out, rc, err = s.cuda_path("conv", "yuv422p", w, h)
    s.check("cuda-error-sw-format", rc > 0 and "sw_format yuv422p" in err, "(rc %d)" % rc)
    out, rc, err = s.cuda_path("conv1", "rgb0", w, h)
    s.check("cuda-error-model-channels", rc > 0 and "model" in err, "(rc %d)" % rc)


# YUV CUDA frames against the CPU path: hwdownload (or the raw frames),
# swscale to rgb24, the model on the CPU, swscale back to the same format.
# flags=area gives swscale's linear chroma upsampling and area-average
# downsampling, the GPU path's filters; in/out_chroma_loc give swscale the
# frame's chroma siting (vf_scale of FFmpeg 9.0.2 would assume center).
YUV_FORMATS = ["nv12", "p010le", "yuv420p", "yuv444p"]
COLORS = [("bt709", "tv"), ("smpte170m", "pc"), ("bt709", "pc"), ("smpte170m", "tv")]
SWS_FLAGS = "flags=area+full_chroma_int+full_chroma_inp+accurate_rnd"


def yuv_cpu_chain(model, sw, spc, rng, loc, channels):
    dnn = "dnn_processing=dnn_backend=torch:model=%s" % model
    if channels == 1:
        return dnn      # the CPU path runs the Y plane and carries chroma itself
    c = "in_chroma_loc=" + loc
    if spc:
        c += ":in_color_matrix=%s:in_range=%s" % (spc, rng)
    o = c.replace("in_", "out_")
    return "scale=%s:%s,format=rgb24,%s,scale=%s:%s,format=%s" % (c, SWS_FLAGS, dnn, o,
                                                                   SWS_FLAGS, sw)


def compare_yuv(s, name, sw, w, h, a, b, tol=2):
    """Every plane within tol LSB of 8 bits (the CPU path works in rgb24)."""
    if not a or not b or not os.path.exists(a) or not os.path.exists(b):
        s.check(name, False, "(a run failed)")
        return
    fmt = yuv_ref.Format(sw, w, h)
    da, db = open(a, "rb").read(), open(b, "rb").read()
    fsize = fmt.frame_bytes
    if len(da) != len(db) or not da or len(da) % fsize:
        s.check(name, False, "(sizes %d, %d; frame %d)" % (len(da), len(db), fsize))
        return
    worst = [0.0, 0.0, 0.0]
    for i in range(0, len(da), fsize):
        pa = fmt.unpack(da[i:i + fsize])
        pb = fmt.unpack(db[i:i + fsize])
        for p in range(3):
            worst[p] = max(worst[p], float((pa[p] - pb[p]).abs().max()))
    scale = 1 << (fmt.depth - 8)
    s.check(name, max(worst) <= tol * scale,
            "(max diff Y %g U %g V %g LSB of %d bits, <= %d)" % (
                worst[0], worst[1], worst[2], fmt.depth, tol * scale))


def model_channels(model):
    """The channels a test model takes (the Y-plane ones end in y or 1)."""
    return 1 if re.search(r"(1|y)$", model) else 3


def yuv_gpu_vf(s, model, opts, sw, channels):
    """The GPU chain for YUV CUDA frames and the format it writes: a
    1-channel model takes the Y plane; a 3-channel one RGB from scale_cuda."""
    dnn = "dnn_processing=dnn_backend=torch:model=%s%s" % (s.model_opt(model), opts)
    if channels == 1:
        return dnn + ",hwdownload,format=" + sw, sw
    return "scale_cuda=format=rgb0,%s,hwdownload,format=rgb0" % dnn, "rgb0"


def compare_out(s, name, fmt, w, h, a, b, tol):
    if fmt in SW_FORMATS:
        s.compare(name, a, b, tol)
    else:
        compare_yuv(s, name, fmt, w, h, a, b, tol)


def yuv_pair(s, tag, inp, sw, w, h, model, channels, spc, rng, loc, decoded=False,
             opts=""):
    """inp through the GPU path and through the CPU path, compared; decoded:
    inp gives CUDA frames (NVDEC), else CPU frames that are uploaded; opts:
    the filter's options after the model, on both paths.  A 3-channel model
    gets RGB from scale_cuda on both (its conversion is the scale_cuda
    group's test); a 1-channel one the Y plane, the CPU path's chroma checked
    (the model keeps the size: get_output_th refuses others)."""
    ref, out = s.path(tag + ".ref"), s.path(tag + ".out")
    up = "" if decoded else "hwupload,"
    dev = [] if decoded else ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"]
    vf, out_fmt = yuv_gpu_vf(s, model, opts, sw, channels)
    if channels == 1:
        cpu = ("hwdownload,format=%s," % sw if decoded else "") + \
            yuv_cpu_chain(s.model_opt(model) + opts, sw, spc, rng, loc, channels)
    else:
        cpu = "%sscale_cuda=format=rgb0,hwdownload,format=rgb0,format=rgb24," \
              "dnn_processing=dnn_backend=torch:model=%s%s" % (up, s.model_opt(model), opts)
    rc1, e1 = s.ff(dev + inp + ["-vf", cpu, "-f", "rawvideo", "-pix_fmt", out_fmt, ref])
    rc2, e2 = s.ff(dev + inp + ["-vf", up + vf, "-f", "rawvideo", "-pix_fmt", out_fmt, out])
    if rc1 or rc2:
        last = (e2 if rc2 else e1).strip().splitlines()[-1:]
        s.check(tag, False, "(cpu rc %d, gpu rc %d: %s)" % (rc1, rc2, last))
        return
    if channels == 3:
        s.compare(tag, ref, out, 2)     # as the YUV pairs have always allowed
        return
    compare_yuv(s, tag, sw, w, h, ref, out)


def raw_yuv(s, sw, w, h, spc, rng):
    src = s.path("yuv-src-%dx%d.rgb" % (w, h))
    if not os.path.exists(src):
        s.ff(["-f", "lavfi", "-i", "testsrc2=s=160x120:r=5", "-frames:v", "3",
              "-vf", "scale=%d:%d:flags=bilinear" % (w, h), "-pix_fmt", "rgb24",
              "-f", "rawvideo", src])
    raw = s.path("yuv-%s-%s-%s-%dx%d.raw" % (sw, spc, rng, w, h))
    s.ff(["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h), "-i", src,
          "-vf", "scale=out_color_matrix=%s:out_range=%s,format=%s" % (spc, rng, sw),
          "-f", "rawvideo", raw])
    return raw


def yuv_refused(s, tag, model, w, h, message):
    """Uploaded nv12 frames into model: a non-zero exit with message, no
    traceback."""
    raw = raw_yuv(s, "nv12", w, h, "bt709", "tv")
    rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu", "-f", "rawvideo",
                    "-pix_fmt", "nv12", "-s", "%dx%d" % (w, h), "-i", raw, "-vf",
                    "hwupload,dnn_processing=dnn_backend=torch:model=%s" % s.model_opt(model),
                    "-f", "null", "-"])
    s.check(tag, rc > 0 and message in err and "Traceback" not in err, "(rc %d)" % rc)


def run_yuv(s):
    cases = []      # (sw, spc, rng, loc, model, w, h)
    for sw in YUV_FORMATS:
        cases += [(sw, spc, rng, "center", "conv", 318, 238) for spc, rng in COLORS[:2]]
        cases.append((sw, "bt709", "tv", "center", "sr2", 160, 90))
    for sw in ("nv12", "yuv420p", "yuv444p"):
        cases += [(sw, spc, rng, "center", "conv1", 318, 238) for spc, rng in COLORS[:2]]
    cases += [(sw, "bt709", "tv", "left", "conv", 318, 238)
              for sw in ("nv12", "p010le", "yuv420p")]
    # odd width; not odd height: FFmpeg 9.0.2's hwupload and hwdownload copy
    # height >> 1 chroma rows (hwcontext_cuda.c), dropping the last one
    cases += [(sw, "bt709", "tv", "center", "conv", 317, 238)
              for sw in ("nv12", "p010le", "yuv420p")]
    cases.append(("nv12", "smpte170m", "pc", "left", "conv", 317, 238))
    for sw, spc, rng, loc, model, w, h in cases:
        raw = raw_yuv(s, sw, w, h, spc, rng)
        inp = ["-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h), "-colorspace", spc,
               "-color_range", rng] + (["-chroma_sample_location", loc] if loc != "center"
                                       else []) + ["-i", raw]
        tag = "cuda-yuv-%s-%s-%s-%s-%s-%dx%d" % (sw, spc, rng, loc, model, w, h)
        yuv_pair(s, tag, inp, sw, w, h, model, model_channels(model), spc, rng, loc)
    yuv_refused(s, "cuda-yuv-three-channels-refused", "conv", 318, 238,
                "YUV CUDA frames go only to a model known to take one channel; "
                "put scale_cuda=format=rgb0")
    yuv_refused(s, "cuda-yuv-size-change-refused", "sr2y", 160, 90,
                "a model that changes the size takes YUV CUDA frames' Y plane only "
                "on the CPU: put hwdownload")
    run_p010_precision(s)
    run_nvdec(s)


def run_p010_precision(s):
    """P010 keeps 10 bits: the Y plane through a 1-channel model against the
    model run here on the same samples, within 1 LSB of 10 bits, the two low
    bits used, the chroma the input's."""
    model = torch.jit.load(s.model("conv1")).eval()
    for (w, h) in ((318, 238), (317, 238)):
        sw, spc, rng = "p010le", "bt709", "tv"
        raw = raw_yuv(s, sw, w, h, spc, rng)
        out = s.path("p010-precision-%dx%d.out" % (w, h))
        tag = "cuda-p010-10bit-%dx%d" % (w, h)
        rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu",
                        "-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h),
                        "-colorspace", spc, "-color_range", rng, "-i", raw, "-frames:v", "1",
                        "-vf", "hwupload,dnn_processing=dnn_backend=torch:model=%s,"
                        "hwdownload,format=%s" % (s.model("conv1"), sw),
                        "-f", "rawvideo", out])
        if rc:
            s.check(tag, False, "(rc %d)" % rc)
            continue
        fmt = yuv_ref.Format(sw, w, h)
        y, u, v = fmt.unpack(open(raw, "rb").read()[:fmt.frame_bytes])
        with torch.no_grad():
            want_y = model((y / 1023)[None, None].float())[0, 0].double().clamp(0, 1) * 1023
        want = fmt.pack(want_y, u, v)
        got = fmt.pack(*fmt.unpack(open(out, "rb").read()))
        diff = int((want - got).abs().max())
        low = int((got[:w * h] & 3).unique().numel())
        s.check(tag, diff <= 1 and low == 4,
                "(max diff %d LSB of 10 bits, <= 1; %d of 4 low-bit patterns)" % (diff, low))


def probe_chroma_location(s, clip):
    """The chroma location a clip's frames carry (vf_scale must be told it)."""
    ffprobe = os.path.join(os.path.dirname(os.path.realpath(s.ffmpeg)), "ffprobe")
    p = subprocess.run([ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries",
                        "stream=chroma_location", "-of",
                        "default=noprint_wrappers=1:nokey=1", clip],
                       capture_output=True, text=True)
    loc = p.stdout.strip()
    return loc if loc in yuv_ref.LOCATION else "center"


# NVDEC: clips made here, decoded straight to CUDA frames (nv12)
NVDEC_CLIPS = [("mpeg2video", "1920x1080", "bt709", "tv", ("conv", "conv1", "sr2")),
               ("mpeg2video", "718x478", "smpte170m", "tv", ("conv", "conv1")),
               ("mjpeg", "854x480", "bt709", "pc", ("conv", "conv1")),
               ("mjpeg", "718x478", "smpte170m", "pc", ("conv",))]


def nvdec_clip(s, codec, size, spc, rng, frames=5):
    clip = s.path("clip-%s-%s-%s%s.mkv" % (codec, size, spc,
                                          "" if frames == 5 else "-%d" % frames))
    if not os.path.exists(clip):
        w, h = size.split("x")
        enc = ["-c:v", codec, "-q:v", "3"] + (["-pix_fmt", "yuvj420p"] if codec == "mjpeg"
                                              else ["-pix_fmt", "yuv420p"])
        s.ff(["-f", "lavfi", "-i", "testsrc2=s=%s:r=25" % size, "-frames:v", str(frames),
              "-vf", "scale=iw/4:ih/4,scale=%s:%s:flags=bilinear,"
              "scale=out_color_matrix=%s:out_range=%s" % (w, h, spc, rng),
              "-colorspace", spc, "-color_range", rng] + enc + [clip])
    return clip


def run_nvdec(s):
    for codec, size, spc, rng, nets in NVDEC_CLIPS:
        clip = nvdec_clip(s, codec, size, spc, rng)
        loc = probe_chroma_location(s, clip)
        w, h = (int(v) for v in size.split("x"))
        dec = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
           "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda", "-i", clip]
        for model in nets:
            tag = "nvdec-%s-%s-%s-%s-%s-%s" % (codec, size, spc, rng, model, loc)
            yuv_pair(s, tag, dec, "nv12", w, h, model, model_channels(model),
                     None, None, loc, decoded=True)
    # ffmpeg's default: the decoder's device in a context of FFmpeg's own
    codec, size, spc, rng, nets = NVDEC_CLIPS[0]
    clip = nvdec_clip(s, codec, size, spc, rng)
    w, h = (int(v) for v in size.split("x"))
    dec = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda", "-i", clip]
    yuv_pair(s, "nvdec-%s-%s-ownctx" % (codec, nets[0]), dec, "nv12", w, h, nets[0],
             model_channels(nets[0]), None, None, probe_chroma_location(s, clip),
             decoded=True)


# A stream that changes size mid-way, which also gives it a new hardware
# frames context: ffmpeg builds a new filter graph and, with -reinit_drain 1
# (patches/fftools-ffmpeg_filter-drain-on-reinit.patch), drains the old one
# first.  Parts of two sizes are joined by the concat demuxer (A, B, A: two
# changes); with the filter's default options (async) and with four
# requests, every frame must come out, each equal to the same frame through
# the same chain alone.
JOIN_MODELS = (("conv", 1), ("sr2", 2))         # (model, output scale)
JOIN_OPTIONS = (("default", ""), ("nireq4", ":nireq=4"))


def frame_bytes(sw, w, h):
    return w * h * 4 if sw in SW_FORMATS else yuv_ref.Format(sw, w, h).frame_bytes


def concat_list(s, name, parts, fps):
    """An ffconcat list of parts [(clip, w, h, frames)], each with its duration."""
    path = s.path(name + ".ffconcat")
    with open(path, "w") as f:
        f.write("ffconcat version 1.0\n")
        for clip, w, h, frames in parts:
            f.write("file '%s'\nduration %g\n" % (clip, frames / fps))
    return path


def join_check(s, tag, sw, scale, parts, joined, alone):
    """joined: the output of the joined stream; alone: that of each part."""
    want = [frame_bytes(sw, scale * w, scale * h) * n for _, w, h, n in parts]
    got = [os.path.getsize(a) if a else -1 for a in alone]
    total = os.path.getsize(joined) if joined else -1
    frames = sum(n for _, _, _, n in parts)
    s.check(tag + "-every-frame", got == want and total == sum(want),
            "(joined: %d bytes out, %d for its %d frames; parts alone: %s, want %s)"
            % (total, sum(want), frames, got, want))
    if got != want or total != sum(want):
        return
    data, off = open(joined, "rb").read(), 0
    for i, ((_, w, h, n), a) in enumerate(zip(parts, alone)):
        part = s.path("%s.part%d" % (tag, i))
        with open(part, "wb") as f:
            f.write(data[off:off + want[i]])
        off += want[i]
        name = "%s-part%d-vs-alone" % (tag, i)
        if sw in SW_FORMATS:
            s.compare(name, a, part, 1)
        else:
            compare_yuv(s, name, sw, scale * w, scale * h, a, part)


def join_pair(s, tag, pre, parts, fps, vf, sw, scale):
    """parts joined and each alone through pre + -i INPUT + vf, compared."""
    inputs = [("joined", ["-reinit_drain", "1", "-f", "concat", "-safe", "0",
                          "-i", concat_list(s, tag, parts, fps)])]
    inputs += [("alone%d" % i, ["-i", p[0]]) for i, p in enumerate(parts)]
    outs = []
    for name, inp in inputs:
        out = s.path("%s.%s" % (tag, name))
        # passthrough: a lost frame must not be hidden by a duplicated one
        rc, err = s.ff(pre + inp + ["-vf", vf, "-noautoscale", "-fps_mode", "passthrough",
                                    "-f", "rawvideo", out])
        if rc:
            last = err.strip().splitlines()[-1:]
            s.check(tag + "-" + name, False, "(rc %d: %s)" % (rc, last))
        outs.append(out if rc == 0 else None)
    join_check(s, tag, sw, scale, parts, outs[0], outs[1:])


def png_clip(s, w, h, first, frames=5):
    """A NUT clip of PNG frames (rgb24) of testsrc2, from frame first on."""
    clip = s.path("clip-png-%dx%d-%d.nut" % (w, h, first))
    if not os.path.exists(clip):
        s.ff(["-f", "lavfi", "-i", "testsrc2=s=%dx%d:r=5" % (w, h), "-vf",
              "trim=start_frame=%d,format=rgb24" % first, "-frames:v", str(frames),
              "-c:v", "png", clip])
    return clip


# nv12 from rgb24 tagged with its matrix and range: after a reinit FFmpeg
# 9.0.2's format filter leaves the RGB source's tags (gbr, pc) on the nv12
# frames it makes, which scale_cuda would then read
NV12_TAGGED = "scale=out_color_matrix=bt601:out_range=tv,format=nv12"


def run_reinit(s):
    a = (png_clip(s, 160, 90, 0), 160, 90, 5)
    b = (png_clip(s, 318, 238, 5), 318, 238, 5)
    up = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"]
    for sw in ("rgb0", "nv12"):
        for model, scale in JOIN_MODELS:
            for oname, opts in JOIN_OPTIONS:
                vf, out_fmt = yuv_gpu_vf(s, model, opts, "rgb0", 3)
                vf = "%s,hwupload,%s" % (NV12_TAGGED if sw == "nv12" else "format=" + sw,
                                               vf if sw == "nv12" else
                                               vf.replace("scale_cuda=format=rgb0,", ""))
                join_pair(s, "reinit-hwupload-%s-%s-%s" % (sw, model, oname), up,
                          [a, b, a], 5, vf, out_fmt, scale)
    # MJPEG: FFmpeg 9.0.2's MPEG-2 decoder drops its delayed last picture at
    # a sequence change inside one stream (concat of two sizes: 13 frames of
    # 15 decoded, with or without any filter), MJPEG has no delay
    a = (nvdec_clip(s, "mjpeg", "640x360", "bt709", "pc"), 640, 360, 5)
    b = (nvdec_clip(s, "mjpeg", "1280x720", "bt709", "pc"), 1280, 720, 5)
    dec = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
           "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda"]
    for model, scale in JOIN_MODELS:
        for oname, opts in JOIN_OPTIONS:
            vf, out_fmt = yuv_gpu_vf(s, model, opts, "nv12", 3)
            join_pair(s, "reinit-nvdec-%s-%s" % (model, oname), dec, [a, b, a], 25, vf,
                      out_fmt, scale)


# batch_size on CUDA: 7 frames, 3 a forward (the last batch partly filled),
# against the same run with batch_size 1 (cuDNN may pick other kernels for
# N = 3: 1 LSB); CUDA frames packed and YUV, x2, fp16, sync and async, and
# CPU frames for a model on CUDA; parts of other sizes joined (a batch
# goes at each change); an output batch that is not the input's.
BATCH_CASES = [  # (name, upload, frame format, model, options)
    ("cuda-rgb0", True, "rgb0", "conv", ""),
    ("cuda-rgb0-sync", True, "rgb0", "conv", ":async=0"),
    ("cuda-bgra-nireq4", True, "bgra", "conv", ":nireq=4"),
    ("cuda-nv12", True, "nv12", "scale_cuda=format=rgb0,conv", ""),
    ("cuda-nv12-y", True, "nv12", "conv1", ""),
    ("cuda-rgb0-x2", True, "rgb0", "sr2", ""),
    ("cuda-rgb0-fp16", True, "rgb0", "conv", ":precision=fp16"),
    ("cpuframes-rgb24", False, "rgb24", "conv", ":device=cuda"),
    ("cpuframes-gray8-sync", False, "gray8", "conv1", ":device=cuda:async=0"),
    ("cpuframes-bgr24-fp16", False, "bgr24", "conv", ":device=cuda:precision=fp16"),
]


def batch_run(s, tag, upload, fmt, model, opts):
    w, h = 318, 238
    src = s.path("batch-in-%dx%d.rgb" % (w, h))
    if not os.path.exists(src):
        s.ff(["-f", "lavfi", "-i", "testsrc2=s=%dx%d:r=5" % (w, h), "-frames:v", "7",
              "-pix_fmt", "rgb24", "-f", "rawvideo", src])
    up = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"] if upload else []
    pre, _, model = model.rpartition(",")    # scale_cuda=format=rgb0: RGB from YUV
    down = "rgb0" if pre else fmt
    chain = "format=%s,%s%sdnn_processing=dnn_backend=torch:model=%s%s%s" % (
        fmt, "hwupload," if upload else "", pre + "," if pre else "", s.model_opt(model), opts,
        ",hwdownload,format=%s" % down if upload else "")
    out = s.path("batch-%s.out" % tag)
    rc, err = s.ff(["-v", "verbose"] + up + ["-f", "rawvideo", "-pix_fmt", "rgb24",
                    "-s", "%dx%d" % (w, h), "-i", src, "-vf", chain,
                    "-f", "rawvideo", "-pix_fmt", down, out])
    if rc:
        s.check("batch-" + tag, False, "(rc %d: %s)" % (rc, err.strip().splitlines()[-1:]))
    return (out if rc == 0 else None), err


def batch_nvdec(s):
    """NVDEC frames in batches of 3: the decoder's surfaces must outlast the
    frames the filter holds (2 batches), hence -extra_hw_frames."""
    clip = nvdec_clip(s, "mjpeg", "640x360", "bt709", "pc")
    outs = []
    for b in (1, 3):
        out = s.path("batch-nvdec-b%d.rgb0" % b)
        rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
           "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda",
                        "-extra_hw_frames", "8", "-i", clip, "-vf",
                        "scale_cuda=format=rgb0,dnn_processing=dnn_backend=torch:model=%s:"
                        "batch_size=%d,hwdownload,format=rgb0" % (s.model("conv"), b),
                        "-f", "rawvideo", out])
        outs.append(out if rc == 0 else None)
        if rc:
            s.check("batch-nvdec-b%d" % b, False, "(rc %d: %s)" % (
                rc, err.strip().splitlines()[-1:]))
    s.compare("batch-nvdec-b3-vs-b1", outs[0], outs[1], 1)


def run_batch(s):
    for name, upload, fmt, model, opts in BATCH_CASES:
        one, _ = batch_run(s, name + "-b1", upload, fmt, model, opts)
        three, err = batch_run(s, name + "-b3", upload, fmt, model, opts + ":batch_size=3")
        if one and three:
            s.check("batch-%s-log" % name, "batch size 3" in err, "(verbose log)")
            s.compare("batch-%s-b3-vs-b1" % name, one, three, 1)
    a = (png_clip(s, 160, 90, 0), 160, 90, 5)
    b = (png_clip(s, 318, 238, 5), 318, 238, 5)
    up = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"]
    for sw in ("rgb0", "nv12"):
        vf = "%s,hwupload,%sdnn_processing=dnn_backend=torch:model=%s:batch_size=3," \
             "hwdownload,format=rgb0" % (NV12_TAGGED if sw == "nv12" else "format=" + sw,
                                         "scale_cuda=format=rgb0," if sw == "nv12" else "",
                                         s.model("conv"))
        join_pair(s, "batch-reinit-hwupload-%s" % sw, up, [a, b, a], 5, vf, "rgb0", 1)
    batch_nvdec(s)
    _, rc, err = s.cuda_path("batch_first", "rgb0", 96, 64, extra=":batch_size=3")
    s.check("batch-cuda-error-output-batch", rc > 0 and "model output has batch size 1; "
            "expected 3" in err and "Traceback" not in err, "(rc %d)" % rc)


def run_host_copies(s):
    """NVDEC -> model -> null moves no frame data to the host: CUPTI counts the
    device-to-host copies (tests/dnn/cuda_copies.c); hwdownload is the control."""
    lib = build_copy_counter(s)
    if not lib:
        s.check("nvdec-no-host-copy", False, "(could not build the CUPTI counter)")
        return
    clip = nvdec_clip(s, "mpeg2video", "1920x1080", "bt709", "tv")
    frame = 1920 * 1080 * 3 // 2
    s.models("win_conv5")
    for name, vf, want_copies in (
            ("nvdec-no-host-copy", "scale_cuda=format=rgb0,dnn_processing=dnn_backend=torch:"
             "model=%s" % s.model("conv"), False),
            ("nvdec-window5-no-host-copy", "scale_cuda=format=rgb0,dnn_processing="
             "dnn_backend=torch:model=%s:window=5" % s.model("win_conv5"), False),
            ("nvdec-host-copy-control", "scale_cuda=format=rgb0,dnn_processing="
             "dnn_backend=torch:model=%s,hwdownload,format=rgb0" % s.model("conv"), True)):
        log = s.path(name + ".log")
        if os.path.exists(log):
            os.remove(log)
        env = dict(os.environ, CUDA_INJECTION64_PATH=lib, CUDA_COPIES_LOG=log)
        p = subprocess.run([s.ffmpeg, "-nostdin", "-hide_banner", "-y",
                            "-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
                            "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda", "-i", clip, "-vf", vf,
                            "-f", "null", "-"], capture_output=True, text=True, env=env)
        counts = {}
        if os.path.exists(log):
            for line in open(log):
                f = line.split()
                if len(f) == 4:
                    counts[f[1]] = (int(f[2]), int(f[3]))
        n, b = counts.get("DtoH", (-1, -1))
        ok = p.returncode == 0 and n >= 0 and ((b >= 5 * frame) if want_copies else b < frame)
        s.check(name, ok, "(rc %d, DtoH %d copies %d bytes, HtoD %s, DtoD %s)" % (
            p.returncode, n, b, counts.get("HtoD"), counts.get("DtoD")))


def build_copy_counter(s):
    """tests/dnn/cuda_copies.c built against the CUPTI of torch's CUDA wheels."""
    base = os.path.join(os.path.dirname(torch.__file__), "..", "nvidia")
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        inc, libdir = os.path.join(base, d, "include"), os.path.join(base, d, "lib")
        cupti = [f for f in sorted(os.listdir(libdir)) if f.startswith("libcupti.so")] \
            if os.path.isdir(libdir) else []
        if os.path.exists(os.path.join(inc, "cupti.h")) and cupti:
            lib = s.path("cuda_copies.so")
            cmd = ["cc", "-shared", "-fPIC", "-I" + inc, "-I/usr/local/cuda/include",
                   os.path.join(HERE, "cuda_copies.c"), "-L" + libdir, "-l:" + cupti[-1],
                   "-Wl,-rpath," + libdir, "-o", lib]
            return lib if subprocess.run(cmd).returncode == 0 else None
    return None


def run_memory(s, frames):
    cmd = [s.ffmpeg, "-nostdin", "-hide_banner", "-y", "-init_hw_device", "cuda=cu:0,primary_ctx=1",
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


def memcheck(s, name, primary, sw, model, size="318x238"):
    """compute-sanitizer memcheck on 3 CUDA frames of sw through model (a
    model name, then options: "conv:precision=fp16")."""
    cs = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(cs):
        s.check("cuda-memcheck-" + name, False, "(compute-sanitizer not found)")
        return
    base, _, opts = model.partition(":")
    pre = "scale_cuda=format=rgb0," if model_channels(base) == 3 and sw not in SW_FORMATS else ""
    dev = "cuda=cu:0" + (",primary_ctx=1" if primary else "")
    rc, err = s.ff(["-init_hw_device", dev, "-filter_hw_device", "cu",
                    "-f", "lavfi", "-i", "testsrc2=s=%s:r=5" % size, "-frames:v", "3",
                    "-vf", "format=%s,hwupload,%sdnn_processing=dnn_backend=torch:"
                    "model=%s%s,hwdownload,format=%s" % (sw, pre, s.model_opt(base),
                                                        ":" + opts if opts else "",
                                                        "rgb0" if pre else sw),
                    "-f", "null", "-"], timeout=900,
                   prefix=(cs, "--tool", "memcheck", "--error-exitcode", "99"))
    m = re.search(r"ERROR SUMMARY: (\d+) error", err)
    s.check("cuda-memcheck-" + name, rc == 0 and m is not None and m.group(1) == "0",
            "(rc %d, %s)" % (rc, m.group(0) if m else "no summary"))


def run_sanitizer(s):
    # RGB in the primary context and in one of FFmpeg's own; nv12 through
    # scale_cuda into a three-channel model, and the Y plane of nv12 into a
    # one-channel model (chroma copied)
    cases = [("primary", True, "rgb0", "conv"), ("ownctx", False, "rgb0", "conv"),
             ("ownctx-nv12-conv1", False, "nv12", "conv1"),
             ("nv12-conv", True, "nv12", "conv"), ("nv12-conv1", True, "nv12", "conv1"),
             ("fp16", True, "rgb0", "conv:precision=fp16"),
             ("fp16-nv12", True, "nv12", "conv:precision=fp16"),
             ("window5", True, "rgb0", "win_conv5:window=5:async=1:nireq=2"),
             ("window3-nv12-y", True, "nv12", "win_conv3y:window=3:window_anchor=last")]
    s.models("win_conv5", "win_conv3y")
    for case in cases:
        memcheck(s, *case)


# Two GPUs.  On a machine with one, the group says so in one line and runs
# nothing.  FFmpeg 9.0.2's ffmpeg gives every hwupload of a process the same
# device (-filter_hw_device, else the last -init_hw_device), and hwupload_cuda=
# device=N opens a context of FFmpeg's own (where each batch waits for both
# streams), so two chains of one process get a GPU each from NVDEC, an input
# per GPU, in the primary contexts.
def gpu_count():
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def dnn(s, model, opts=""):
    return "dnn_processing=dnn_backend=torch:model=%s%s" % (s.model_opt(model), opts)


def on_gpu(gpu, name="cu"):
    """Options that open GPU gpu in its primary context for hwupload."""
    return ["-init_hw_device", "cuda=%s:%d,primary_ctx=1" % (name, gpu),
            "-filter_hw_device", name]


def gpu_chain(s, opts="", up="hwupload"):
    """rgb0 frames uploaded, the conv model, downloaded."""
    return "format=rgb0,%s,%s,hwdownload,format=rgb0" % (up, dnn(s, "conv", opts))


def gpus_seen(log):
    """The GPU of each filter's CUDA frames, from the verbose log."""
    return re.findall(r"CUDA frames \(\w+\) on cuda:(\d+)", log)


def multi_run(s, name, pre, outputs, w=318, h=238):
    """The test frames through outputs [(map or None, -vf or None)], each
    written to a file of its own; returns ([file or None], rc, log)."""
    args = ["-v", "verbose"] + pre + ["-f", "rawvideo", "-pix_fmt", "rgb24",
                                      "-s", "%dx%d" % (w, h), "-i", s.source(w, h)]
    files = []
    for i, (label, vf) in enumerate(outputs):
        files.append(s.path("multi-%s-%d.rgb" % (name, i)))
        args += ["-map", label] if label else []
        args += ["-vf", vf] if vf else []
        args += ["-f", "rawvideo", "-pix_fmt", "rgb24", files[-1]]
    rc, log = s.ff(args)
    return [f if rc == 0 else None for f in files], rc, log


def run_multigpu(s):
    n = gpu_count()
    if n < 2:
        print("SKIP  multigpu: %d GPU%s visible; these cases need two (GPU 1 against "
              "the CPU path, device mismatches, two chains on two GPUs)"
              % (n, "" if n == 1 else "s"), flush=True)
        return
    multigpu_gpu1(s)
    multigpu_mismatch(s)
    multigpu_two_chains(s)


def multigpu_gpu1(s):
    """Frames and model on GPU 1, however the GPU is named, against the CPU."""
    ref = s.cpu_path("conv", 318, 238)
    cases = [("primary-ctx", on_gpu(1), gpu_chain(s)),
             ("device-cuda-follows", on_gpu(1), gpu_chain(s, ":device=cuda")),
             ("device-id", on_gpu(1), gpu_chain(s, ":device=cuda:device_id=1")),
             ("device-escaped", on_gpu(1), gpu_chain(s, r":device=cuda\\\:1"))]
    for name, pre, vf in cases:
        (out,), rc, log = multi_run(s, "gpu1-" + name, pre, [(None, vf)])
        s.compare("multigpu-gpu1-%s-vs-cpu" % name, ref, out, 1)
        s.check("multigpu-gpu1-%s-on-gpu1" % name, gpus_seen(log) == ["1"],
                "(GPU of the frames in the verbose log: %s)" % gpus_seen(log))
    # CPU frames, model on GPU 1 (staged through page-locked buffers)
    (out,), rc, log = multi_run(s, "gpu1-cpu-frames", [],
                                [(None, "format=rgb24," + dnn(s, "conv", ":device=cuda:device_id=1"))])
    s.compare("multigpu-gpu1-cpu-frames-vs-cpu", ref, out, 1)
    s.check("multigpu-gpu1-cpu-frames-model-on-gpu1", "on cuda:1 in" in log, "(verbose log)")
    # NVDEC on GPU 1 against NVDEC on GPU 0
    clip = nvdec_clip(s, "mjpeg", "640x360", "bt709", "pc")
    outs = []
    for gpu in (0, 1):
        out = s.path("multi-nvdec-gpu%d.rgb0" % gpu)
        rc, log = s.ff(["-v", "verbose", "-init_hw_device", "cuda=cu:%d,primary_ctx=1" % gpu,
                        "-hwaccel", "cuda", "-hwaccel_device", "cu",
                        "-hwaccel_output_format", "cuda", "-i", clip, "-vf",
                        "scale_cuda=format=rgb0," + dnn(s, "conv") + ",hwdownload,format=rgb0",
                        "-f", "rawvideo", out])
        outs.append(out if rc == 0 else None)
    s.check("multigpu-nvdec-gpu1-on-gpu1", gpus_seen(log) == ["1"],
            "(GPU of the frames in the verbose log: %s)" % gpus_seen(log))
    s.compare("multigpu-nvdec-gpu1-vs-gpu0", outs[0], outs[1], 0)


def multigpu_mismatch(s):
    """A GPU the options name that is not the frames': one clear line."""
    cases = [("device-escaped1-frames-gpu0", 0, r":device=cuda\\\:1", "device=cuda:1"),
             ("device-escaped0-frames-gpu1", 1, r":device=cuda\\\:0", "device=cuda:0"),
             ("device-id1-frames-gpu0", 0, ":device_id=1", "device_id=1")]
    for name, gpu, opts, said in cases:
        _, rc, log = multi_run(s, "mismatch-" + name, on_gpu(gpu), [(None, gpu_chain(s, opts))])
        want = "%s, but the CUDA frames are on GPU %d; drop the option or write " \
               "device=cuda:device_id=%d" % (said, gpu, gpu)
        s.check("multigpu-error-" + name, rc > 0 and want in log and "Traceback" not in log,
                "(rc %d; wants the line '%s')" % (rc, want))


def multigpu_two_chains(s):
    """One process, a chain per GPU: NVDEC decodes an input on each GPU, an
    output each (a graph each), each output the same as its GPU alone; a
    chain made by hwupload_cuda=device=1 (a context of FFmpeg's own) runs
    on GPU 1 with the CPU path's frames; two -init_hw_device and a hwupload
    in each chain put both chains on the last device, as ffmpeg does."""
    clip = nvdec_clip(s, "mjpeg", "640x360", "bt709", "pc")
    vf = "scale_cuda=format=rgb0," + dnn(s, "conv") + ",hwdownload,format=rgb0"
    devs = ["-init_hw_device", "cuda=c0:0,primary_ctx=1",
            "-init_hw_device", "cuda=c1:1,primary_ctx=1"]
    dec = lambda gpu: ["-hwaccel", "cuda", "-hwaccel_device", "c%d" % gpu,
                       "-hwaccel_output_format", "cuda", "-i", clip]
    alone, outs = [], []
    for gpu in (0, 1):
        alone.append(s.path("multi-alone-gpu%d.rgb0" % gpu))
        rc, _ = s.ff(devs + dec(gpu) + ["-vf", vf, "-f", "rawvideo", alone[-1]])
        alone[-1] = alone[-1] if rc == 0 else None
    args = ["-v", "verbose"] + devs + dec(0) + dec(1)
    for gpu in (0, 1):
        outs.append(s.path("multi-two-inputs-gpu%d.rgb0" % gpu))
        args += ["-map", "%d:v" % gpu, "-vf", vf, "-f", "rawvideo", outs[-1]]
    rc, log = s.ff(args)
    s.check("multigpu-two-inputs-on-two-gpus", rc == 0 and sorted(gpus_seen(log)) == ["0", "1"],
            "(rc %d; GPUs of the frames in the verbose log: %s)" % (rc, gpus_seen(log)))
    for gpu in (0, 1):
        s.compare("multigpu-two-inputs-gpu%d-vs-alone" % gpu, alone[gpu],
                  outs[gpu] if rc == 0 else None, 0)
    (out,), rc, log = multi_run(s, "hwupload-cuda-device", [],
                                [(None, gpu_chain(s, up="hwupload_cuda=device=1"))])
    s.compare("multigpu-hwupload-cuda-device-vs-cpu", s.cpu_path("conv", 318, 238), out, 1)
    s.check("multigpu-hwupload-cuda-device-on-gpu1", gpus_seen(log) == ["1"] and
            "in a context of FFmpeg's own" in log,
            "(rc %d; GPUs of the frames in the verbose log: %s)" % (rc, gpus_seen(log)))
    up = gpu_chain(s)
    _, rc, log = multi_run(s, "hwupload-two-devices", devs + ["-filter_complex",
        "[0:v]split[a][b];[a]%s[o0];[b]%s[o1]" % (up, up)], [("[o0]", None), ("[o1]", None)])
    s.check("multigpu-hwupload-one-device-per-process", gpus_seen(log) == ["1", "1"],
            "(rc %d; GPUs of the frames in the verbose log: %s)" % (rc, gpus_seen(log)))


def aoti_package(s, name):
    """aoti_NAME[_fp16][_cl]: that model as a CUDA package (compiled here once,
    about a minute; named .pt: the backend tells packages by content), or None."""
    pkg = s.model(name)
    if not os.path.exists(pkg):
        model, dtype, cl = models.package_variant(name[len("aoti_"):])
        try:
            models.package(model, pkg + "2", "cuda", dtype=dtype, channels_last=cl)
            os.rename(pkg + "2", pkg)
        except Exception as e:      # noqa: BLE001 - reported as a failure
            s.check(name + "-compile", False, "(%s)" % str(e).splitlines()[0][:200])
            return None
    return pkg


def run_aoti(s):
    """CUDA AOTInductor packages of the conv model on CUDA frames and on CPU
    frames, against the TorchScript model on the CPU; nv12 frames against
    the TorchScript model on the same frames; a float16 package, NCHW and
    exported channels-last (its frames go in as NHWC views, no copy)."""
    w, h = 96, 64
    if not aoti_package(s, "aoti_conv"):
        return
    ref = s.cpu_path("conv", w, h)
    out, rc, err = s.cuda_path("aoti_conv", "rgb0", w, h)
    s.compare("aoti-cuda-frames-rgb0-vs-cpu", ref, out, 1)
    out, rc, err = s.cuda_path("aoti_conv", "bgr0", w, h, True)
    s.compare("aoti-cuda-frames-primary-bgr0-vs-cpu", ref, out, 1)
    out, rc, err = s.cpu_frames("aoti_conv", "rgb24", w, h)
    s.compare("aoti-cuda-cpuframes-vs-cpu", ref, out, 1)
    s.check("aoti-cuda-cpuframes-log", "AOTInductor package for cuda" in err,
            "(verbose log: a CUDA package, run on CUDA without a device option)")
    out, rc, err = s.cpu_frames("aoti_conv", "rgb24", w, h, ":device=cpu")
    s.check("aoti-cuda-device-cpu-error", rc > 0 and "compiled for cuda" in err,
            "(rc %d)" % rc)
    out, rc, err = s.cuda_path("aoti_conv", "rgb0", 128, 48)
    s.check("aoti-cuda-size-error", rc > 0 and "exported for width 16..96" in err,
            "(rc %d)" % rc)
    aoti_nv12(s, w, h)
    memcheck(s, "aoti", True, "rgb0", "aoti_conv", "%dx%d" % (w, h))
    if aoti_package(s, "aoti_conv_fp16"):
        out, rc, err = s.cuda_path("aoti_conv_fp16", "rgb0", w, h)
        s.compare("aoti-cuda-fp16-rgb0-vs-cpu", ref, out, 2)
        out, rc, err = s.cpu_frames("aoti_conv_fp16", "rgb24", w, h)
        s.compare("aoti-cuda-fp16-cpuframes-vs-cpu", ref, out, 2)
    if aoti_package(s, "aoti_conv_fp16_cl"):
        out, rc, err = s.cuda_path("aoti_conv_fp16_cl", "rgb0", w, h)
        s.compare("aoti-cuda-fp16-cl-rgb0-vs-cpu", ref, out, 2)
        s.check("aoti-cuda-fp16-cl-log", "xHxW channels-last" in err,
                "(verbose log: the package takes channels-last input)")
        aoti_nv12(s, w, h, "aoti_conv_fp16_cl", 2)


def nv12_cuda(s, model, raw, w, h):
    """bt709 tv nv12 frames uploaded, made RGB by scale_cuda, through model,
    downloaded as rgb0."""
    out = s.path("nv12-%s-%dx%d.out" % (model, w, h))
    rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu",
                    "-f", "rawvideo", "-pix_fmt", "nv12", "-s", "%dx%d" % (w, h),
                    "-colorspace", "bt709", "-color_range", "tv", "-i", raw, "-vf",
                    "hwupload,scale_cuda=format=rgb0,dnn_processing=dnn_backend=torch:"
                    "model=%s,hwdownload,format=rgb0" % s.model_opt(model),
                    "-f", "rawvideo", "-pix_fmt", "rgb0", out])
    return out if rc == 0 else None


def aoti_nv12(s, w, h, pkg="aoti_conv", lsb=1):
    """nv12 CUDA frames: the package against the TorchScript model."""
    raw = raw_yuv(s, "nv12", w, h, "bt709", "tv")
    outs = [nv12_cuda(s, m, raw, w, h) for m in ("conv", pkg)]
    name = "aoti-cuda-nv12-vs-torchscript" + pkg[len("aoti_conv"):].replace("_", "-")
    s.compare(name, outs[0], outs[1], lsb)


def run_export(s):
    """tools/export-model.py for CUDA, as a user runs it on a module of
    theirs: the compact 4x net of the benchmarks (tests/dnn/models.py:Compact,
    its seeded weights as a state dict), the defaults for cuda (a .pt2 in
    fp16) with a model for 64x48 beside the dynamic one, on CUDA frames of
    that size and of another, against the same module as TorchScript in
    float32 through the CPU path; fp16 costs a few LSB."""
    pkg, weights = s.path("export_compact.pt2"), s.path("compact_weights.pt")
    if not os.path.exists(pkg):
        p = subprocess.run(models.export_cmd("compact", pkg, weights, 64, 48),
                           capture_output=True, text=True)
        s.check("export-cuda-default", p.returncode == 0 and
                "pt2 for cuda, fp16" in p.stdout, (p.stdout + p.stderr).strip()[-300:])
        if p.returncode:
            return
    if not os.path.exists(s.model("export_compact")):
        os.symlink(pkg, s.model("export_compact"))
    if not os.path.exists(s.model("compact")):
        models.build("compact").save(s.model("compact"))
    for w, h, name in ((64, 48, "s64x48"), (80, 48, "model")):
        ref = s.cpu_path("compact", w, h)
        out, rc, err = s.cuda_path("export_compact", "rgb0", w, h)
        s.compare("export-cuda-frames-%dx%d-vs-cpu" % (w, h), ref, out, 3)
        s.check("export-cuda-frames-%dx%d-model" % (w, h),
                "package model '%s' for %dx%d" % (name, w, h) in err, "(the verbose line)")
    # nv12 CUDA frames (RGB from scale_cuda) against the TorchScript module on
    # the same frames; CPU frames with device=cuda; a memcheck
    raw = raw_yuv(s, "nv12", 64, 48, "bt709", "tv")
    outs = [nv12_cuda(s, m, raw, 64, 48) for m in ("compact", "export_compact")]
    s.compare("export-cuda-nv12-vs-torchscript", outs[0], outs[1], 3)
    out, rc, err = s.cpu_frames("export_compact", "rgb24", 64, 48, ":device=cuda")
    s.compare("export-cpuframes-device-cuda-vs-cpu", s.cpu_path("compact", 64, 48), out, 3)
    memcheck(s, "export", True, "rgb0", "export_compact", "64x48")


def run_window(s):
    """Temporal models (window=3 and 5, center and last): rgb0 CUDA frames
    (hwupload) through a conv net over the stacked frames, and the Y plane
    of nv12 CUDA frames through its 1-channel twin, against the CPU path on
    the same 7 frames (the edges repeated alike), sync and async; then
    window=5 on NVDEC frames and a CUDA .pt2 window package."""
    s.models("win_conv3", "win_conv3y", "win_conv5", "win_conv5y")
    w, h = 158, 118
    s.source(w, h, frames=7)
    dev = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"]
    for n, anchor in ((3, "center"), (3, "last"), (5, "center"), (5, "last")):
        opts = ":window=%d:window_anchor=%s" % (n, anchor)
        net, tag = "win_conv%d" % n, "%s%s" % (anchor, "" if n == 3 else "-n5")
        ref = s.cpu_frames(net, "rgb24", w, h, opts)[0]
        for sub, mode in (("sync", ":async=0"), ("async-nireq2", ":async=1:nireq=2")):
            out = s.cuda_path(net, "rgb0", w, h, True, opts + mode)[0]
            s.compare("window-rgb0-%s-%s" % (tag, sub), ref, out, 1)
        ref = s.cpu_frames(net + "y", "nv12", w, h, opts, out_fmt="nv12")[0]
        out = s.path("window-nv12-%s.out" % tag)
        rc, err = s.ff(dev + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "%dx%d" % (w, h),
                              "-i", s.source(w, h), "-vf",
                              "format=nv12,hwupload,dnn_processing=dnn_backend=torch:"
                              "model=%s%s,hwdownload,format=nv12" % (s.model_opt(net + "y"), opts),
                              "-f", "rawvideo", "-pix_fmt", "nv12", out])
        compare_yuv(s, "window-nv12-y-%s" % tag, "nv12", w, h, ref,
                    out if rc == 0 else None, 1)
    window_nvdec(s)
    window_package(s, w, h)


def window_nvdec(s):
    """window=5 on NVDEC frames (9 frames of 1080p MPEG-2): the 3-channel net
    (RGB from scale_cuda) and its Y-plane twin, against hwdownload and the
    CPU path, async with two requests."""
    clip = nvdec_clip(s, "mpeg2video", "1920x1080", "bt709", "tv", frames=9)
    loc = probe_chroma_location(s, clip)
    dec = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
           "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda", "-i", clip]
    for model, channels in (("win_conv5", 3), ("win_conv5y", 1)):
        yuv_pair(s, "window5-nvdec-%s" % model, dec, "nv12", 1920, 1080, model, channels,
                 None, None, loc, decoded=True, opts=":window=5:async=1:nireq=2")


def window_package(s, w, h):
    """tools/export-model.py --window 3 --device cuda (fp16, channels-last,
    the dynamic model alone): rgb0 CUDA frames against the TorchScript net on
    the CPU path; fp16 costs a few LSB."""
    pkg, weights = s.path("export_win_conv3.pt2"), s.path("win_conv3_weights.pt")
    if not os.path.exists(pkg):
        torch.save(models.module("win_conv3").state_dict(), weights)
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools",
                                                         "export-model.py"),
                            os.path.join(HERE, "models.py") + ":WinConv(n=3)", pkg,
                            "--weights", weights, "--device", "cuda", "--window", "3"],
                           capture_output=True, text=True)
        s.check("window-export-cuda", p.returncode == 0,
                (p.stdout + p.stderr).strip()[-300:])
        if p.returncode:
            return
    if not os.path.exists(s.model("export_win_conv3")):
        os.symlink(pkg, s.model("export_win_conv3"))
    ref = s.cpu_frames("win_conv3", "rgb24", w, h, ":window=3")[0]
    out = s.cuda_path("export_win_conv3", "rgb0", w, h, True, ":window=3:async=1")[0]
    s.compare("window-pt2-cuda-rgb0-vs-cpu", ref, out, 3)


# scale_cuda=format=rgb0 (our patch to scale_cuda): YUV CUDA frames to RGB
# with its default algorithm (bicubic) against the float64 reference of
# tests/dnn/yuv_ref.py, upsampling chroma as that bicubic does (two taps of
# weights 3f^2 - 2f^3, rounded to sample values).  Within 3 LSB: the
# sampler rounds chroma to its sample type before the matrix, and a chroma
# value rounded the other way moves R or B by up to 2.14 LSB (BT.2020,
# limited range), plus the final rounding; a chroma siting off by a
# quarter sample, or another matrix or range, is tens of LSB off.
SCALE_CUDA_CASES = [("nv12", "bt709", "tv", "center", 318, 238),
                    ("nv12", "bt709", "tv", "left", 318, 238),
                    ("nv12", "smpte170m", "pc", "left", 317, 238),
                    ("yuv420p", "smpte170m", "pc", "topleft", 318, 238),
                    ("p010le", "bt2020nc", "tv", "left", 318, 238),
                    ("yuv444p", "bt709", "pc", "center", 318, 238),
                    ("yuv444p", "bt470bg", "tv", "center", 318, 238)]


def yuv_input(sw, w, h, spc, rng, loc, raw):
    return ["-f", "rawvideo", "-pix_fmt", sw, "-s", "%dx%d" % (w, h), "-colorspace", spc,
            "-color_range", rng] + (["-chroma_sample_location", loc] if loc != "center"
                                    else []) + ["-i", raw]


def scale_cuda_rgb(s, tag, inp, chain, out_fmt="rgb0"):
    out = s.path(tag + ".rgb")
    rc, err = s.ff(["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu"] + inp +
                   ["-vf", "hwupload," + chain + ",hwdownload,format=" + out_fmt,
                    "-f", "rawvideo", out])
    return (out if rc == 0 else None), rc, err


def scale_cuda_vs_ref(s, sw, spc, rng, loc, w, h, order):
    raw = raw_yuv(s, sw, w, h, spc, rng)
    tag = "scale_cuda-%s-%s-%s-%s-%s-%dx%d" % (sw, spc, rng, loc, order, w, h)
    out, rc, err = scale_cuda_rgb(s, tag, yuv_input(sw, w, h, spc, rng, loc, raw),
                                  "scale_cuda=format=" + order, order)
    if not out:
        s.check(tag, False, "(rc %d: %s)" % (rc, err.strip().splitlines()[-1:]))
        return
    fmt = yuv_ref.Format(sw, w, h)
    data, got = open(raw, "rb").read(), open(out, "rb").read()
    n = len(data) // fmt.frame_bytes
    worst, pad = 0.0, True
    for i in range(n):
        planes = fmt.unpack(data[i * fmt.frame_bytes:(i + 1) * fmt.frame_bytes])
        want = yuv_ref.to_rgb(fmt, *planes, spc, rng == "pc", loc, True, True) * 255
        frame = torch.frombuffer(bytearray(got[i * w * h * 4:(i + 1) * w * h * 4]),
                                 dtype=torch.uint8).view(h, w, 4).permute(2, 0, 1).double()
        rgb = frame[[2, 1, 0]] if order == "bgr0" else frame[:3]
        worst = max(worst, float((rgb - want).abs().max()))
        pad = pad and bool((frame[3] == 255).all())
    s.check(tag, len(got) == n * w * h * 4 and worst <= 3 and pad,
            "(max diff %.2f LSB, <= 3; padding 255: %s)" % (worst, pad))


def run_scale_cuda(s):
    for sw, spc, rng, loc, w, h in SCALE_CUDA_CASES:
        scale_cuda_vs_ref(s, sw, spc, rng, loc, w, h, "rgb0")
    scale_cuda_vs_ref(s, "nv12", "bt709", "tv", "left", 318, 238, "bgr0")
    # then into the model on CUDA frames, against the same RGB frames
    # through the model on the CPU
    raw = raw_yuv(s, "nv12", 318, 238, "bt709", "tv")
    inp = yuv_input("nv12", 318, 238, "bt709", "tv", "left", raw)
    conv = "scale_cuda=format=rgb0,"
    dnn = "dnn_processing=dnn_backend=torch:model=" + s.model("conv")
    gpu, rc1, e1 = scale_cuda_rgb(s, "scale_cuda-conv-gpu", inp, conv + dnn)
    cpu, rc2, e2 = scale_cuda_rgb(s, "scale_cuda-conv-cpu", inp,
                                  conv + "hwdownload,format=rgb0,format=rgb24," + dnn +
                                  ",format=rgb0,hwupload")
    s.compare("scale_cuda-nv12-rgb0-conv-cuda-vs-cpu", cpu, gpu, 2)
    out, rc, err = scale_cuda_rgb(s, "scale_cuda-filters", inp,
                                  "scale_cuda=format=rgb0:use_filters=1")
    s.check("scale_cuda-use_filters-rgb-error",
            rc != 0 and "use_filters cannot convert YUV to RGB" in err, "(rc %d)" % rc)
    ycgco = yuv_input("nv12", 318, 238, "ycgco", "tv", "center", raw)
    out, rc, err = scale_cuda_rgb(s, "scale_cuda-ycgco", ycgco, "scale_cuda=format=rgb0")
    s.check("scale_cuda-ycgco-rgb-error",
            rc != 0 and "Cannot convert YUV of colorspace ycgco to RGB" in err, "(rc %d)" % rc)
    rgb = ["-f", "lavfi", "-i", "testsrc2=s=318x238:r=5,format=rgb0", "-frames:v", "2"]
    out, rc, err = scale_cuda_rgb(s, "scale_cuda-rgb-yuv", rgb, "scale_cuda=format=nv12", "nv12")
    s.check("scale_cuda-rgb-to-yuv-error",
            rc != 0 and "Cannot convert RGB to YUV" in err, "(rc %d)" % rc)


GROUPS = ["rgb", "precision", "yuv", "scale_cuda", "reinit", "batch", "multigpu", "aoti", "export",
          "copies", "window", "memory", "sanitizer"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--prior")
    ap.add_argument("--frames", type=int, default=30000)
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--groups",
                    default=",".join(GROUPS),
                    help="which groups of tests to run (default: all)")
    args = ap.parse_args()
    groups = args.groups.split(",")

    s = Suite(args)
    runs = {"rgb": (run_formats, run_sizes_and_contexts, run_errors),
            "precision": (run_precision,), "yuv": (run_yuv,),
            "scale_cuda": (run_scale_cuda,), "reinit": (run_reinit,),
            "batch": (run_batch,), "multigpu": (run_multigpu,), "aoti": (run_aoti,),
            "export": (run_export,), "copies": (run_host_copies,),
            "window": (run_window,),
            "memory": (lambda s: run_memory(s, args.frames),),
            "sanitizer": () if args.no_sanitizer else (run_sanitizer,)}
    for group in GROUPS:
        for run in runs[group] if group in groups else ():
            run(s)

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
