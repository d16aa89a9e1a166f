#!/bin/sh
# Prove the patch series of "make series": apply it with git am to a fresh
# unpacked FFmpeg tarball, build doc/ffmpeg-filters.texi with makeinfo and
# compare with pristine FFmpeg's (tools/check-doc.sh), run FFmpeg's
# tools/patcheck on every patch (its complaints are printed;
# tools/patcheck-notes.txt explains the ones we keep), configure with our
# flags (build/config.mk), build ffmpeg and the API example and run
# fate-dnn-torch there.
#
# usage: [UPSTREAM=master] [BASE=...] check-series.sh SERIESDIR WORKDIR [--each]
#   --each   also build every commit of the series on its own
#   BASE     the tarball or master checkout the series was made on
#            (tools/upstream.sh) [build/config.mk's FFMPEG_TARBALL]
set -e

series=$1 work=$2 each=$3
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/upstream.sh"
config=$top/build/config.mk
jobs=${JOBS:-2}

die() { echo "check-series: $*" >&2; exit 1; }
val() { sed -n "s/^$1 = //p" "$config"; }

[ -d "$series" ] && [ -n "$work" ] || die "usage: check-series.sh SERIESDIR WORKDIR [--each]"
[ -f "$config" ] || die "not configured: run ./configure first"
case $series in /*) ;; *) series=$PWD/$series ;; esac
case $work in /*) ;; *) work=$PWD/$work ;; esac
patches=$(ls "$series"/*.patch 2>/dev/null | grep -v /0000-cover-letter.patch) ||
    die "no patches in $series: run make series"
tarball=${BASE:-$(val FFMPEG_TARBALL)}
export PKG_CONFIG_PATH="$(val NVCODEC_PC)${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export CCACHE_NOHASHDIR=1
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost
export GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost

echo "== git am: $(echo "$patches" | wc -l) patches on a fresh FFmpeg tree ($UPSTREAM)"
rm -rf "$work"
mkdir -p "$work"
base_unpack "$tarball" "$work" || die "cannot unpack $tarball"
cd "$work"
git init -q -b series
git add -A -f
git commit -q -m base
git tag base
git am -q $patches || die "git am failed; see $work"
git log --reverse --format='   %s' base..HEAD

echo "== the filters doc against pristine FFmpeg's (tools/check-doc.sh)"
rm -rf "$work.doc-base"
mkdir -p "$work.doc-base"
git archive base doc | tar -x -C "$work.doc-base"
"$top/tools/check-doc.sh" "$work.doc-base" "$work" ||
    die "makeinfo on doc/ffmpeg-filters.texi: see above"
rm -rf "$work.doc-base"

echo "== tools/patcheck: its hints, with how many lines each (hints only;"
echo "   see tools/patcheck-notes.txt; the full output is in $work.patcheck/)"
rm -rf "$work.patcheck"
mkdir -p "$work.patcheck"
for p in $patches; do
    name=$(basename "$p")
    cp "$p" "$work.patcheck/$name"
    # skip the banner; drop grep's colours
    (cd "$work.patcheck" && sh "$work/tools/patcheck" "$name" 2>&1) |
        sed -e '1,6d' -e 's/\x1b\[[0-9;]*[mK]//g' -e '/^$/d' > "$work.patcheck/$name.txt"
    rm -f "$work.patcheck/$name" "$work.patcheck/patcheck.tmp"
    echo "-- $name"
    # a hint is a line that is not a location (NAME:line: or NAME-line-),
    # a "possibly ..." variable, a "--" separator or patcheck's stray NULL
    awk -v n="$name" '
        /^--$/ || /^NULL$/ { next }
        (index($0, n) == 1 || /^possibly /) && !/^possibly unused variables$/ {
            if (h != "") c[h]++
            next
        }
        { h = $0; sub(/^ +/, "", h); if (!(h in c)) { c[h] = 0; order[++k] = h } }
        END {
            for (i = 1; i <= k; i++)
                printf c[order[i]] ? "   %s (%d)\n" : "   %s\n", order[i], c[order[i]]
        }
    ' "$work.patcheck/$name.txt"
done

# our flags; before the commit that adds --enable-libtorch-cuda (--each),
# or --enable-libtorch-aoti (the series kept apart), without it
configure() {
    flags=$(val FF_FLAGS)
    for o in --enable-libtorch-cuda --enable-libtorch-aoti; do
        grep -q -e "$o" configure || flags=$(echo "$flags" | sed "s/$o//")
    done
    eval "./configure $flags" > configure.log 2>&1 ||
        { tail -n 20 configure.log; die "FFmpeg's configure failed at $1"; }
}

build() {
    make -j"$jobs" ffmpeg "$@" > build.log 2>&1 ||
        { tail -n 30 build.log; die "the build failed at $(git log -1 --format=%s)"; }
}

if [ "$each" = --each ]; then
    echo "== every commit builds on its own"
    for c in $(git rev-list --reverse base..HEAD); do
        git checkout -q "$c"
        echo "   $(git log -1 --format=%s)"
        # configure again when configure changed (the first time, always)
        if [ ! -f ffbuild/config.mak ] || ! git diff --quiet "$c~1" "$c" -- configure; then
            configure "$(git log -1 --format=%s)"
        fi
        build
    done
    git checkout -q series
fi

echo "== configure and build the whole series"
[ -f ffbuild/config.mak ] || configure "the end of the series"
# the API example is ours, left out of the series (tools/series.txt)
if [ -f doc/examples/dnn_torch_graph.c ]; then
    build doc/examples/dnn_torch_graph
    echo "   built ffmpeg and doc/examples/dnn_torch_graph"
else
    build
    echo "   built ffmpeg"
fi

echo "== fate-dnn-torch on the result (samples in fate-suite/, no Python on the PATH)"
rm -rf tests/data/fate/dnn-torch-*
mkdir -p tests/data
ls tests/ref/fate | sed -n 's/^dnn-torch-/fate-dnn-torch-/p' > tests/data/fate-dnn-torch.list
PATH="$top/build/no-python:$PATH" make -k -j"$jobs" fate-dnn-torch \
    SAMPLES="$top/fate-suite" > fate.log 2>&1 || true
"$top/tools/fate-summary.sh" "$work" dnn-torch
