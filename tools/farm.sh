#!/bin/sh
# Process one video on many machines: cut it at keyframes, run a filter on
# each part as its own task (a Slurm job array, a Kubernetes Indexed Job),
# join the parts into what one ffmpeg over the whole input gives.
#
#   farm.sh split IN DIR [--seconds S]
#       cut the first video stream of IN at keyframes about every S seconds
#       [60], without re-encoding (the segment muxer), into DIR/parts/;
#       DIR/farm.parts says where each part starts and ends
#   farm.sh run [--index K] DIR FILTER [FFMPEG-OUTPUT-OPTIONS...]
#       run FILTER (an -vf graph) over part K into DIR/out/partK.nut,
#       encoded with the options [-c:v ffv1]; K is --index, else
#       SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX; the part appears
#       under its name only once it is complete
#   farm.sh join DIR OUT
#       check that every part is there and decodes to the frames it must
#       hold (else fail, naming the part), then join them without
#       re-encoding, with the audio, metadata and chapters of IN
#
# A part starts on a keyframe.  Frames before it in display order (the
# leading B-frames of an open GOP) belong to the part before: the run of a
# part decodes the head of the next part too, up to its first frame that
# is not a leading one, and keeps only the frames of its own time range.
# So the frames of the join are those of one run, with the same
# timestamps.  The filter must give one frame out per frame in and hold
# no state from frame to frame (no frame crosses a part boundary).
#
# FFMPEG and FFPROBE name the programs [the build's at the repository
# root, else the ones on the PATH].
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
if [ -z "$FFMPEG" ]; then
    FFMPEG=ffmpeg
    [ -x "$top/ffmpeg" ] && FFMPEG=$top/ffmpeg
fi
if [ -z "$FFPROBE" ]; then
    FFPROBE=ffprobe
    [ -x "$top/ffprobe" ] && FFPROBE=$top/ffprobe
fi
FF="$FFMPEG -nostdin -hide_banner -v error"

die() { echo "farm: $*" >&2; exit 1; }

# seconds SECONDS-AS-MICROSECONDS: the decimal form that the concat
# demuxer and trim read back to the same microsecond
seconds() {
    printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000))
}

# The packets of the first video stream of FILE: "pts dts key" in decode
# order, pts and dts in microseconds (rounded to the nearest; a tick of
# the stream is longer, so the rounding is exact back in ticks), dts "-"
# where the file gives none.
packets() {
    $FFPROBE -v error -select_streams v:0 -show_entries stream=time_base:packet=pts,dts,flags \
        -of csv "$1" |
    awk -F, '
        function us(t) { return t == "N/A" ? "-" : sprintf("%.0f", t * n * 1e6 / d) }
        $1 == "stream" { split($2, r, "/"); n = r[1]; d = r[2] }
        $1 == "packet" { pts[++np] = $2; dts[np] = $3; key[np] = ($4 ~ /K/) }
        END { for (i = 1; i <= np; i++) print us(pts[i]), us(dts[i]), key[i] }'
}

# each FILE...: "$@" FILE, as many at once as there are cores (every
# process of ours starts LibTorch: about a second each on a GPU host)
each() {
    xargs -P "$(nproc)" -n 1 "$@"
}

# part_info K FILE NEXT: the line of farm.parts for part K in FILE (the
# next part NEXT, "" for the last) from their FILE.pkts: index, file,
# start, end, frames and the end of the next part's head ("-": no head to
# read), in microseconds.
part_info() {
    awk -v k="$1" -v f="${2##*/}" -v nxt="${3:+$3.pkts}" '
        FILENAME != nxt {
            if (FNR == 1) { if (!$3) bad = 1; start = $1 }
            all[FNR] = $1; nall = FNR; next }
        FNR == 1 { end = $1; next }
        !done && $1 < end { lead++; next }
        !done { head = $2; done = 1 }
        END {
            if (bad) { print "not a keyframe"; exit 1 }
            if (nxt == "") end = -1
            for (i = 1; i <= nall; i++)
                if (all[i] >= start && (end < 0 || all[i] < end)) frames++
            frames += lead
            if (!lead || head == "") head = "-"
            print k, f, start, end < 0 ? "-" : end, frames, head }' \
        "$2.pkts" ${3:+"$3.pkts"}
}

cmd_split() {
    [ $# -ge 2 ] || die "usage: farm.sh split IN DIR [--seconds S]"
    in=$1 dir=$2 secs=60
    shift 2
    [ "$1" = --seconds ] && secs=$2
    [ -f "$in" ] || die "no input $in"
    [ ! -e "$dir/farm.parts" ] || die "$dir is split already: remove $dir/farm.parts and $dir/parts first"
    mkdir -p "$dir/parts"
    $FF -i "$in" -map 0:v:0 -c copy -f segment -segment_time "$secs" \
        -segment_format nut -reset_timestamps 0 "$dir/parts/part%05d.nut" ||
        die "the segment muxer failed on $in"
    ls "$dir"/parts/part*.nut | each sh "$self" _packets ||
        die "ffprobe failed on the parts in $dir/parts"
    case $in in /*) ;; *) in=$(pwd)/$in ;; esac
    offset=$($FFPROBE -v error -select_streams v:0 \
                 -show_entries stream=start_time:format=start_time -of csv=p=0 "$in" |
             awk 'NR == 1 { v = $1 } NR == 2 { f = $1 }
                  END { if (v == "N/A" || f == "N/A") v = f = 0
                        printf "%.0f", (v - f) * 1e6 }')
    {
        echo "input $in"
        echo "offset $offset"
        set -- "$dir"/parts/part*.nut
        k=0
        while [ $# -gt 0 ]; do
            part_info $k "$1" "$2" || die "part $k ($1) does not start on a keyframe"
            k=$((k + 1))
            shift
        done
    } > "$dir/farm.parts.tmp"
    rm -f "$dir"/parts/*.pkts
    mv "$dir/farm.parts.tmp" "$dir/farm.parts"
    echo "farm: $k parts in $dir/parts"
}

# part_field K N: field N of part K's line in farm.parts (DIR set)
part_field() {
    awk -v k="$1" -v n="$2" '$1 == k { print $n; found = 1 } END { exit !found }' \
        "$dir/farm.parts"
}

# concat_list K: the concat demuxer's list for the run of part K: the part
# from its keyframe, then the head of the next part where it has one, all
# on one timeline that starts at 0 on the keyframe of part K
concat_list() {
    start=$(part_field $1 3) end=$(part_field $1 4) head=$(part_field $1 6)
    echo "ffconcat version 1.0"
    echo "file 'parts/$(part_field $1 2)'"
    echo "inpoint $(seconds $start)"
    [ "$head" = - ] && return
    echo "duration $(seconds $((end - start)))"
    echo "file 'parts/$(part_field $(($1 + 1)) 2)'"
    echo "inpoint $(seconds $end)"
    echo "outpoint $(seconds $head)"
}

cmd_run() {
    k=
    [ "$1" = --index ] && { k=$2; shift 2; }
    k=${k:-${SLURM_ARRAY_TASK_ID:-$JOB_COMPLETION_INDEX}}
    [ $# -ge 2 ] || die "usage: farm.sh run [--index K] DIR FILTER [FFMPEG-OUTPUT-OPTIONS...]"
    [ -n "$k" ] || die "no part index: give --index K, or run as a task of a Slurm job array or a Kubernetes Indexed Job"
    dir=$1 filter=$2
    shift 2
    [ $# -gt 0 ] || set -- -c:v ffv1
    [ -f "$dir/farm.parts" ] || die "$dir has no farm.parts: run farm.sh split first"
    start=$(part_field $k 3) || die "no part $k in $dir/farm.parts"
    end=$(part_field $k 4) name=$(part_field $k 2)
    trim="trim=start=0"
    [ "$end" = - ] || trim="$trim:end=$(seconds $((end - start)))"
    mkdir -p "$dir/out"
    tmp=$dir/out/.$(hostname).$$.$name list=$dir/.$(hostname).$$.$name.txt
    concat_list $k > "$list"
    # -copyts: the timeline of the list as it is (the leading frames of
    # the part, before 0, are not shifted in); trim keeps [0, end - start)
    $FF -copyts -f concat -safe 0 -i "$list" -map 0:v:0 \
        -vf "$trim,$filter" "$@" -f nut -y "$tmp" ||
        { rm -f "$tmp" "$list"; die "part $k: ffmpeg failed"; }
    rm -f "$list"
    check_part "$tmp" $k || { rm -f "$tmp"; die "part $k: $why"; }
    mv -f "$tmp" "$dir/out/$name"
    echo "farm: part $k done: $dir/out/$name"
}

# check_part FILE K: FILE decodes without error to the frames of part K;
# else why says what is wrong
check_part() {
    why= want=$(part_field $2 5)
    if $FF -xerror -i "$1" -map 0:v:0 -f framecrc -y "$1.crc" 2> "$1.err" &&
       [ ! -s "$1.err" ]; then
        got=$(grep -vc '^#' "$1.crc") || got=0
        [ "$got" = "$want" ] || why="it has $got frames, not $want"
    else
        why=$(sed -n "1s/^\[[^]]*\] //p" "$1.err")
        why="it does not decode (${why:-ffmpeg failed})"
    fi
    rm -f "$1.crc" "$1.err"
    [ -z "$why" ]
}

# join_list: the concat demuxer's list of the processed parts, each placed
# at the start of its time range
join_list() {
    echo "ffconcat version 1.0"
    while read -r k f start end frames head; do
        [ "$k" = input ] || [ "$k" = offset ] && continue
        echo "file 'out/$f'"
        [ "$end" = - ] || echo "duration $(seconds $((end - start)))"
    done < "$dir/farm.parts"
}

cmd_join() {
    [ $# = 2 ] || die "usage: farm.sh join DIR OUT"
    dir=$1 out=$2
    [ -f "$dir/farm.parts" ] || die "$dir has no farm.parts: run farm.sh split first"
    in=$(awk '$1 == "input" { sub(/^input /, ""); print }' "$dir/farm.parts")
    offset=$(awk '$1 == "offset" { print $2 }' "$dir/farm.parts")
    bad=$(awk '$1 ~ /^[0-9]+$/ { print $1 }' "$dir/farm.parts" |
          each sh "$self" _check "$dir" | sort -n | head -n 1) || true
    [ -z "$bad" ] || die "${bad#* }: run its task again"
    [ -f "$in" ] || die "the input $in is gone: it gives the join its audio and metadata"
    join_list > "$dir/join.txt"
    tmp=$(dirname "$out")/.farm.$$.$(basename "$out")
    $FF -itsoffset "$(seconds $offset)" -f concat -safe 0 -i "$dir/join.txt" \
        -i "$in" -map 0:v -map '1:a?' -map_metadata 1 -map_chapters 1 -c copy -y "$tmp" ||
        { rm -f "$tmp"; die "the join into $out failed"; }
    mv -f "$tmp" "$out"
    echo "farm: joined $(grep -c '^file' "$dir/join.txt") parts into $out"
}

# _check DIR K (join's, for each part at once): say what is wrong with
# part K, after its index, or nothing
cmd__check() {
    dir=$1 f=$1/out/$(part_field $2 2)
    if [ ! -f "$f" ]; then echo "$2 part $2 ($f) is missing"
    elif ! check_part "$f" $2; then echo "$2 part $2 ($f) is damaged: $why"; fi
}

case $1 in
split|run|join) c=$1; shift; cmd_$c "$@" ;;
_packets) packets "$2" > "$2.pkts" ;;
_check) shift; cmd__check "$@" ;;
*) die "usage: farm.sh split IN DIR [--seconds S] | run [--index K] DIR FILTER [OPTIONS...] | join DIR OUT" ;;
esac
