#!/usr/bin/env python3
"""The cover letter's before/after table from a bench's results.json.

tools/bench.py run with --upstream BEFORE (e.g. pristine master) and --ours
AFTER (the same base with the series) writes results.json; this prints a
markdown table of it: scenario, before fps, after fps, after/before.  A
build that failed shows its reason; one not run there (CUDA frames, which
bench.py gives to ours only) shows "not run".  Nothing is made up: a
number is bench.py's median of its runs.

usage: cover_table.py results.json > tools/bench/results/cover-BASE.md
"""
import json
import os
import sys


def cell(build):
    if build is None:
        return "not run"
    if build.get("fps"):
        return "%.1f" % build["fps"]
    return "failed: " + (build.get("reason") or "no frames")


def ratio(before, after):
    if before and after and before.get("fps") and after.get("fps"):
        return "%.2f" % (after["fps"] / before["fps"])
    return "–"


def main():
    data = json.load(open(sys.argv[1]))
    head = data["header"]
    print("%s, %s; LibTorch %s; fps: median of %s runs of %s s (%s)."
          % (head.get("gpu", "no GPU"), head.get("date", ""), head.get("libtorch", "?"),
             head.get("runs", "?"), head.get("seconds", "?"), os.path.basename(sys.argv[1])))
    print()
    print("| scenario | before fps | after fps | after/before |")
    print("| --- | --- | --- | --- |")
    for sc in data["scenarios"]:
        b = sc.get("builds", {})
        before, after = b.get("upstream"), b.get("ours")
        print("| %s | %s | %s | %s |" % (sc["name"], cell(before), cell(after),
                                         ratio(before, after)))


if __name__ == "__main__":
    main()
