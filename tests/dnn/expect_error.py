"""Run a command that must fail cleanly: exit status > 0 and a message.

    python3 expect_error.py REGEX COMMAND [ARG...]

Passes (exit 0, one line on stdout) when COMMAND exits with a status above
0, was killed by no signal (Python reports a signal as a negative status)
and REGEX matches its stderr (re.search, '.' matching newlines too).
Otherwise prints what went wrong and the command's stderr, and exits 1.
"""

import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    regex, cmd = sys.argv[1], sys.argv[2:]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=300)
    err = proc.stderr.decode("utf-8", "replace")
    rc = proc.returncode
    problems = []
    if rc < 0:
        problems.append("killed by signal %d" % -rc)
    elif rc == 0:
        problems.append("exit status 0, expected a failure")
    if not re.search(regex, err, re.S):
        problems.append("stderr does not match /%s/" % regex)
    if problems:
        print("FAIL: " + "; ".join(problems))
        print("--- stderr ---")
        print(err, end="")
        return 1
    print("failed as expected: status > 0, no signal, stderr matches /%s/" % regex)
    return 0


if __name__ == "__main__":
    sys.exit(main())
