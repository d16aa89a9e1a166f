#!/bin/sh
# The tests of tools/farm.sh (make check, tests/fate/dnn-torch-farm.mak).
#
#   farm-test.sh MODE WORK BINDIR MODEL
#
# On an MPEG-4 input with B-frames in open GOPs (the leading B-frames of
# each keyframe refer to the GOP before it) and PCM audio, cut into parts:
#   join       every part run, joined: the video frames (framemd5: pixels,
#              count, timestamps), the audio packets and the title are
#              those of one ffmpeg over the whole input with the same filter
#   missing    a part not run: join fails, naming it, and writes nothing
#   truncated  a part cut short: the same
#   rerun      a task run again (chosen by JOB_COMPLETION_INDEX) writes
#              the same bytes, and the join is still exact
#   slurm      the parts run as one sbatch --array job on a Slurm cluster
#              of this machine (tools/slurm-local.sh), then joined as above
# BINDIR holds ffmpeg and ffprobe; MODEL is a TorchScript model (invert.pt).
set -e
mode=$1 work=$2 bin=$3 model=$4
tools=$(cd "$(dirname "$0")" && pwd)
export FFMPEG=$bin/ffmpeg FFPROBE=$bin/ffprobe
FF="$FFMPEG -nostdin -hide_banner -v error"
FARM=$tools/farm.sh
FILTER=format=rgb24,dnn_processing=dnn_backend=torch:model=$model

fail() { echo "farm-test: $mode: $*"; exit 1; }

# the input, its parts in $work/d and the single run to compare with
setup() {
    rm -rf "$work"
    mkdir -p "$work"
    cd "$work"
    $FF -f lavfi -i testsrc2=s=128x96:r=25:d=8 -f lavfi -i sine=f=440:r=16000:d=8 \
        -c:v mpeg4 -bf 2 -g 12 -q:v 4 -c:a pcm_s16le -metadata title=farm-test in.mkv
    $FF -i in.mkv -map 0:v -map 0:a -vf "$FILTER" -c:v ffv1 -c:a copy single.mkv
    "$FARM" split in.mkv d --seconds 2 > split.log
    parts=$(grep -c '^[0-9]' d/farm.parts)
    [ "$parts" -ge 4 ] || fail "$parts parts, not at least 4"
    # the cuts must be on open-GOP keyframes, or this proves nothing
    awk '$1 ~ /^[0-9]/ && $6 != "-" { n++ } END { exit n < 3 }' d/farm.parts ||
        fail "the split found no leading B-frames at the cuts: $(cat d/farm.parts)"
}

run_all() {
    k=0
    while [ $k -lt $parts ]; do
        [ $k = "$1" ] || "$FARM" run --index $k d "$FILTER" > run-$k.log ||
            fail "task $k failed: $(cat run-$k.log)"
        k=$((k + 1))
    done
}

# same_as_single OUT: the video frames, audio packets and title of OUT are
# those of single.mkv
same_as_single() {
    for f in single.mkv "$1"; do
        $FF -i $f -map 0:v -f framemd5 $f.v.md5
        $FF -i $f -map 0:a -c copy -f framemd5 $f.a.md5
        $FFPROBE -v error -show_entries format_tags=title -of csv=p=0 $f > $f.title
    done
    [ "$(grep -vc '^#' single.mkv.v.md5)" = 200 ] || fail "the single run gave not 200 frames"
    cmp -s single.mkv.v.md5 "$1.v.md5" ||
        fail "video frames differ from one run: $(diff single.mkv.v.md5 "$1.v.md5" | head -n 3)"
    cmp -s single.mkv.a.md5 "$1.a.md5" ||
        fail "audio packets differ from the input's: $(diff single.mkv.a.md5 "$1.a.md5" | head -n 3)"
    cmp -s single.mkv.title "$1.title" || fail "title '$(cat "$1.title")', not farm-test"
    # the filter ran: the frames are not those of the input
    $FF -i in.mkv -map 0:v -vf format=rgb24 -c:v ffv1 -f nut plain.nut
    $FF -i plain.nut -f framemd5 in.v.md5
    ! cmp -s in.v.md5 "$1.v.md5" || fail "the frames are the input's: the filter did not run"
}

# join_fails PATTERN: join fails with a line matching PATTERN, no output
join_fails() {
    ! "$FARM" join d out.mkv > join.log 2>&1 || fail "join did not fail: $(cat join.log)"
    grep -q "$1" join.log || fail "join said '$(cat join.log)', not '$1'"
    [ ! -e out.mkv ] || fail "join failed but wrote out.mkv"
}

mode_join() {
    setup
    run_all
    "$FARM" join d out.mkv > join.log
    same_as_single out.mkv
}

mode_missing() {
    setup
    run_all 1
    join_fails "^farm: part 1 (d/out/part00001.nut) is missing"
}

mode_truncated() {
    setup
    run_all
    size=$(wc -c < d/out/part00002.nut)
    head -c $((size / 2)) d/out/part00002.nut > cut.nut
    mv cut.nut d/out/part00002.nut
    join_fails "^farm: part 2 (d/out/part00002.nut) is damaged: "
}

mode_rerun() {
    setup
    run_all
    cp d/out/part00002.nut first.nut
    JOB_COMPLETION_INDEX=2 "$FARM" run d "$FILTER" > rerun.log
    cmp first.nut d/out/part00002.nut || fail "task 2 run again wrote other bytes"
    [ -z "$(ls -A d/out | grep -v '^part[0-9]*\.nut$')" ] ||
        fail "left behind in d/out: $(ls -A d/out)"
    "$FARM" join d out.mkv > join.log
    same_as_single out.mkv
}

mode_slurm() {
    "$tools/slurm-local.sh" install "$work.apt.log" || fail "cannot run Slurm here"
    setup
    trap '"$tools/slurm-local.sh" stop "$work/slurm"' EXIT
    trap 'exit 1' INT TERM HUP
    "$tools/slurm-local.sh" start "$work/slurm" || fail "no Slurm cluster"
    . "$work/slurm/env"
    FARM_DIR=$work/d FARM_FILTER=$FILTER FARM=$FARM \
        timeout 300 sbatch --wait --time=5 --array=0-$((parts - 1)) --export=ALL \
            --output="$work/task-%a.log" "$tools/farm.sbatch" > sbatch.log 2>&1 ||
        fail "the job failed: $(cat sbatch.log task-*.log)"
    n=$(cat task-*.log | grep -c "^farm: part [0-9]* done") || n=0
    [ "$n" = "$parts" ] || fail "$n of $parts tasks ran: $(cat task-*.log)"
    "$FARM" join d out.mkv > join.log
    same_as_single out.mkv
}

case $mode in
join|missing|truncated|rerun|slurm) mode_$mode ;;
*) fail "unknown mode" ;;
esac
echo "farm-test: $mode: ok"
