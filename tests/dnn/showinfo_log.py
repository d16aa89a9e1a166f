"""Run an ffmpeg command whose graph ends in showinfo and print what
showinfo says of each frame (its properties, side data and colour
lines), without the filter instance's prefix, so that two runs compare
line by line.

    python3 showinfo_log.py -- FFMPEG [ARG...]

Exits with the command's status; prints its log too when that is not 0.
"""

import re
import subprocess
import sys

PREFIX = re.compile(r"^\[Parsed_showinfo_\d+ @ (0x)?[0-9a-fA-F]+\] ")


def main():
    args = sys.argv[1:]
    if args[:1] != ["--"] or len(args) < 2:
        raise SystemExit(__doc__)
    proc = subprocess.run(args[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=300)
    log = proc.stderr.decode("utf-8", "replace").splitlines()
    if proc.returncode:
        print("\n".join(log))
        return proc.returncode
    for line in log:
        m = PREFIX.match(line)
        if m and not line[m.end():].startswith("config "):
            print(line[m.end():])
    return 0


if __name__ == "__main__":
    sys.exit(main())
