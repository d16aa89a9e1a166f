"""Where the time of NVDEC -> dnn_processing goes: steady fps of the decode
to inference pipeline next to its parts, on one 1080p MPEG-2 clip (looped).

    python3 tools/bench/nvdec_breakdown.py FFMPEG MODELDIR [SECONDS]

MODELDIR holds small.pt and invert.pt (tests/dnn/models.py writes them).
Prints one line per pipeline and a markdown table.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402


def main():
    ffmpeg, models = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    args = type("A", (), {"ours": ffmpeg, "out": models})()
    clip = bench.nvdec_clip(args)
    dec = ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda", "-stream_loop", "-1",
           "-i", clip]
    dec_primary = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-hwaccel", "cuda",
                   "-hwaccel_device", "cu", "-hwaccel_output_format", "cuda",
                   "-stream_loop", "-1", "-i", clip]
    upload = ["-init_hw_device", "cuda=cu:0,primary_ctx=1", "-filter_hw_device", "cu", "-f", "lavfi",
              "-i", "testsrc2=s=1920x1080:r=25"]
    loop = "format=nv12,hwupload,loop=loop=-1:size=1,"

    def dnn(model, extra=""):
        return "dnn_processing=dnn_backend=torch:model=%s%s" % (
            os.path.join(models, model + ".pt"), extra)

    rows = [
        ("NVDEC decode alone", dec, "null"),
        ("NVDEC -> invert (YUV<->RGB conversions, no real model)", dec_primary, dnn("invert")),
        ("NVDEC -> small, async=1", dec_primary, dnn("small")),
        ("NVDEC -> small, async=0", dec_primary, dnn("small", ":async=0")),
        ("uploaded nv12 frame, looped -> invert (no decoder)", upload, loop + dnn("invert")),
        ("uploaded nv12 frame, looped -> small (no decoder)", upload, loop + dnn("small")),
    ]
    out = ["| pipeline (1920x1080) | fps |", "| --- | --- |"]
    for name, inp, vf in rows:
        cmd = [ffmpeg, "-hide_banner", "-v", "error", "-nostats", "-progress", "pipe:1",
               "-stats_period", str(bench.PERIOD)] + inp + ["-vf", vf, "-f", "null", "-"]
        r = bench.run_ffmpeg(cmd, seconds, timeout=60 + 4 * seconds)
        fps = "%.1f" % r["fps"] if r["fps"] else "failed: %s" % r["reason"]
        print("%s: %s" % (name, fps), flush=True)
        out.append("| %s | %s |" % (name, fps))
    print("\n" + "\n".join(out))


if __name__ == "__main__":
    main()
