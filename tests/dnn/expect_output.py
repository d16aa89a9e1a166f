"""Run a command that must succeed and print each of some patterns.

    python3 expect_output.py REGEX [REGEX...] -- COMMAND [ARG...]

Passes (exit 0, one line on stdout) when COMMAND exits with status 0 and
every REGEX matches its stdout and stderr together (re.search, multiline),
except that a REGEX written !REGEX must not match.  Otherwise prints what
went wrong and the output, and exits 1.
"""

import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if "--" not in args or args.index("--") == 0 or args[-1] == "--":
        raise SystemExit(__doc__)
    regexes, cmd = args[:args.index("--")], args[args.index("--") + 1:]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=300)
    out = proc.stdout.decode("utf-8", "replace")
    problems = ["exit status %d" % proc.returncode] if proc.returncode else []
    for r in regexes:
        want = not r.startswith("!")
        pattern = r if want else r[1:]
        if bool(re.search(pattern, out, re.M)) != want:
            problems.append("%s match for /%s/" % ("no" if want else "a", pattern))
    if problems:
        print("FAIL: " + "; ".join(problems))
        print("--- output ---")
        print(out, end="")
        return 1
    print("status 0, output matches all %d patterns" % len(regexes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
