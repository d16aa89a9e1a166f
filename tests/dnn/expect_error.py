"""Run a command that must fail cleanly: exit status > 0 and a message.

    python3 expect_error.py [--one-line] [--not-status N] REGEX COMMAND [ARG...]

Passes (exit 0, one line on stdout) when COMMAND exits with a status above
0, was killed by no signal (Python reports a signal as a negative status)
and REGEX matches its stderr (re.search, '.' matching newlines too).
With --one-line, REGEX must match within one line of stderr and no line
may be part of a TorchScript traceback (those belong to the verbose level).
With --not-status N, status N fails too (valgrind's --error-exitcode).
Otherwise prints what went wrong and the command's stderr, and exits 1.
"""

import re
import subprocess
import sys


def one_line_problems(regex, err):
    """What is wrong with a message that must be one line."""
    problems = []
    if not any(re.search(regex, line) for line in err.splitlines()):
        problems.append("no single line of stderr matches /%s/" % regex)
    if re.search(r"Traceback|<--- HERE|^\s+File \"", err, re.M):
        problems.append("stderr holds a TorchScript traceback")
    return problems


def main():
    args = sys.argv[1:]
    one_line = args[:1] == ["--one-line"]
    if one_line:
        args = args[1:]
    not_status = None
    if args[:1] == ["--not-status"] and len(args) > 1:
        not_status, args = int(args[1]), args[2:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    regex, cmd = args[0], args[1:]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=300)
    err = proc.stderr.decode("utf-8", "replace")
    rc = proc.returncode
    problems = []
    if rc < 0:
        problems.append("killed by signal %d" % -rc)
    elif rc == 0:
        problems.append("exit status 0, expected a failure")
    elif rc == not_status:
        problems.append("exit status %d (--not-status)" % rc)
    if not re.search(regex, err, re.S):
        problems.append("stderr does not match /%s/" % regex)
    elif one_line:
        problems += one_line_problems(regex, err)
    if problems:
        print("FAIL: " + "; ".join(problems))
        print("--- stderr ---")
        print(err, end="")
        return 1
    print("failed as expected: status > 0, no signal, stderr matches /%s/" % regex)
    return 0


if __name__ == "__main__":
    sys.exit(main())
