#!/bin/sh
# make bench: tools/farm.sh under a Slurm cluster of this machine
# (tools/slurm-local.sh) against one ffmpeg over the whole input, the same
# work: the same frames through the same model, encoded the same way.
#
#   [FARM_SECONDS=S] [FARM_SIZE=WxH] tools/bench/farm.sh OUT BINDIR MODEL [PARTS]
#
# The input: S seconds (8) of WxH (128x72) at 25 fps.
# Measured in one run, in this order: the single process (the filter with
# its default threads: every core); split; the parts run by xargs, as many
# at once as there are cores, one thread each (the work of the tasks
# without a scheduler); the same parts as one Slurm job array (submitted,
# then squeue polled every 0.1 s until the job is gone); join.  The
# scheduling is the job's time less that of xargs, and the overhead per
# part is split + join + scheduling over the parts; both are given as
# ratios to the single run (its time per part, its time).  The join must
# give the single run's frames (framemd5), or the row says so.
# Writes OUT/farm.md.
set -e
out=$1 bin=$2 model=$3 parts=${4:-4}
tools=$(cd "$(dirname "$0")/.." && pwd)
export FFMPEG=$bin/ffmpeg FFPROBE=$bin/ffprobe
FF="$FFMPEG -nostdin -hide_banner -v error"
FARM=$tools/farm.sh
FILTER=format=rgb24,dnn_processing=dnn_backend=torch:model=$model
secs=${FARM_SECONDS:-8} size=${FARM_SIZE:-128x72} cores=$(nproc)

now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.2f", $1 - $2 }'; }

rm -rf "$out"
mkdir -p "$out"
cd "$out"
$FF -f lavfi -i testsrc2=s=$size:r=25:d=$secs -f lavfi -i sine=r=16000:d=$secs \
    -c:v mpeg4 -bf 2 -g 12 -q:v 4 -c:a pcm_s16le in.mkv

t=$(now)
$FF -i in.mkv -map 0:v -map 0:a -vf "$FILTER" -c:v ffv1 -c:a copy single.mkv
t_single=$(since $t)

t=$(now)
"$FARM" split in.mkv d --seconds $((secs / parts)) > split.log
t_split=$(since $t)
n=$(grep -c '^[0-9]' d/farm.parts)

t=$(now)
seq 0 $((n - 1)) | xargs -P "$cores" -I K "$FARM" run --index K d "$FILTER:threads=1" > xargs.log
t_xargs=$(since $t)
rm -rf d/out

"$tools/slurm-local.sh" install "$out/apt.log"
trap '"$tools/slurm-local.sh" stop "$out/slurm"' EXIT
trap 'exit 1' INT TERM HUP
"$tools/slurm-local.sh" start "$out/slurm"
. "$out/slurm/env"
t=$(now)
job=$(FARM=$FARM FARM_DIR=$out/d FARM_FILTER="$FILTER:threads=1" \
      sbatch --parsable --array=0-$((n - 1)) --export=ALL \
          --output="$out/task-%a.log" "$tools/farm.sbatch")
while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do sleep 0.1; done
t_slurm=$(since $t)

t=$(now)
"$FARM" join d joined.mkv > join.log
t_join=$(since $t)

same=yes
$FF -i single.mkv -map 0:v -f framemd5 single.md5
$FF -i joined.mkv -map 0:v -f framemd5 joined.md5
cmp -s single.md5 joined.md5 || same="NO: the frames differ"

awk -v n="$n" -v c="$cores" -v one="$t_single" -v s="$t_split" -v x="$t_xargs" \
    -v q="$t_slurm" -v j="$t_join" -v same="$same" -v size="$size" -v secs="$secs" '
BEGIN {
    sched = q - x; over = (s + j + sched) / n; total = s + q + j
    printf "### tools/farm.sh: %d parts under Slurm against one process (%d cores)\n\n", n, c
    printf "%ss of %s at 25 fps (MPEG-4, B-frames, open GOPs), the filter: %s\n\n", secs, size, "compact x4"
    print "| step | seconds |"
    print "|---|---|"
    printf "| one process, the whole input | %.2f |\n", one
    printf "| split | %.2f |\n", s
    printf "| %d parts by xargs, %d at once (no scheduler) | %.2f |\n", n, c, x
    printf "| %d parts as one Slurm job array | %.2f |\n", n, q
    printf "| join (checks every part, then joins) | %.2f |\n", j
    printf "| farm in all: split + Slurm + join | %.2f |\n\n", total
    printf "- speed-up of the farm over one process: %.2fx\n", one / total
    printf "- overhead per part (split + join + scheduling, %.2f s): %.3f of the single run'"'"'s time per part\n", over, over / (one / n)
    printf "- scheduling alone (Slurm less xargs): %.2f s, %.3f of the job\n", sched, sched / q
    printf "- joined frames identical to the single run'"'"'s: %s\n", same
}' > farm.md
cat farm.md
