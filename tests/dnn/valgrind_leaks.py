"""Run ffmpeg under valgrind; fail on memory definitely lost by our code.

    python3 valgrind_leaks.py [--all] [--fails] LOG FFMPEG [ARG...]

FFMPEG must carry its symbols (ffmpeg_g).  LibTorch keeps static
allocations of its own, so only "definitely lost" records whose stack goes
through libavfilter/dnn/ (the torch backend and the DNN glue) count; with
--all every one does (for programs that lose nothing: the API example).
Also fails when ffmpeg or valgrind fails (with --fails: when ffmpeg does
not fail with a status above 0, as for a model that raises), when it
runs longer than 1500 s, or when valgrind's leak summary is missing.  The
full valgrind log is left in LOG.
"""

import re
import subprocess
import sys

OURS = re.compile(r"libavfilter/dnn/|dnn_backend_torch")
RECORD = re.compile(r"are definitely lost in loss record")


def records(lines):
    """Yield each loss record: its header line and the stack below it."""
    block = None
    for line in lines:
        text = re.sub(r"^==\d+== ?", "", line.rstrip("\n"))
        if block is not None:
            if not text.strip():
                yield block
                block = None
            else:
                block.append(text)
        if block is None and RECORD.search(text):
            block = [text]
    if block:
        yield block


def main():
    args = sys.argv[1:]
    every = "--all" in args[:2]
    fails = "--fails" in args[:2]
    args = args[every + fails:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    log, cmd = args[0], args[1:]
    vg = ["valgrind", "--leak-check=full", "--show-leak-kinds=definite",
          "--num-callers=40", "--fullpath-after=", "--log-file=" + log]
    rc = subprocess.run(vg + cmd, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, timeout=1500).returncode
    with open(log, errors="replace") as f:
        lines = f.readlines()
    if (rc <= 0) if fails else (rc != 0):
        print("FAIL: valgrind/ffmpeg exit status %d%s (see %s)"
              % (rc, ", expected a failure" if fails else "", log))
        return 1
    if not any("LEAK SUMMARY" in l or "All heap blocks were freed" in l
               for l in lines):
        print("FAIL: no leak summary in %s" % log)
        return 1
    lost = list(records(lines))
    ours = [b for b in lost if every or any(OURS.search(l) for l in b)]
    for b in ours:
        print("\n".join(b) + "\n")
    print("definitely lost: %d record%s in all, %d %s"
          % (len(lost), "" if len(lost) == 1 else "s", len(ours),
             "counted" if every else "through libavfilter/dnn/"))
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
