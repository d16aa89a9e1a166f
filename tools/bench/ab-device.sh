#!/bin/sh
# On the GPU machine (device run, $OUT set; build/deps and build/ab carried):
# builds A (build/ab/A.tar, from "git archive COMMIT"), this tree (B) and,
# where build/ab/C.tar is there, a variant C, side by side; then times four
# pipelines (tools/bench/steady.py) in 3 rounds that rotate the order (C
# only on the CPU row), then torch.compile of the same modules
# (tools/bench/eager.py).
T=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')
D=$PWD/build/deps
cfg() { ./configure --profile=lean --libtorch="$T" --python=python3 --deps-dir="$D" \
      --disable-ccache --extra-ffmpeg-flags='--enable-cuda-nvcc --enable-nonfree' && make ffmpeg-build JOBS=6; }
V="A B"; [ -f build/ab/C.tar ] && V="A B C"
for v in $V; do [ $v = B ] || { mkdir -p /tmp/$v && tar xf build/ab/$v.tar -C /tmp/$v; }; done
t0=$(date +%s)
(cd /tmp/A && cfg) > "$OUT/buildA.txt" 2>&1 & pa=$!
pc=; case $V in *C) (cd /tmp/C && cfg) > "$OUT/buildC.txt" 2>&1 & pc=$! ;; esac
cfg > "$OUT/buildB.txt" 2>&1 || { tail -30 "$OUT/buildB.txt"; exit 1; }
wait $pa || { tail -30 "$OUT/buildA.txt"; exit 1; }
[ -z "$pc" ] || wait $pc || { tail -30 "$OUT/buildC.txt"; exit 1; }
echo "builds: $(( $(date +%s) - t0 )) s"
cc -O2 -pthread tools/bench/thread_handoff.c -o /tmp/th && /tmp/th && /tmp/th
mkdir -p /tmp/m
python3 -c "import sys; sys.path.insert(0,'tests/dnn'); import models
for n in ('small','compact'): models.build(n).save('/tmp/m/%s.pt'%n)"
HW="-init_hw_device cuda=cu:0 -filter_hw_device cu"
row() {  # label build args...
  l=$1; b=$2; shift 2
  printf "%s %s " "$l" "$b"
  python3 tools/bench/steady.py --frames "$F" -- $BIN "$@" -f null - | awk -F'|' '{print $3}'
}
bin() { case $1 in A) echo /tmp/A/ffmpeg ;; B) echo $PWD/ffmpeg ;; C) echo /tmp/C/ffmpeg ;; esac; }
for r in 0 1 2; do
  echo "round $r"
  case $r in 0) o="A B C" ;; 1) o="C B A" ;; 2) o="B A C" ;; esac
  for b in $o; do
    case " $V " in *" $b "*) ;; *) continue ;; esac
    BIN=$(bin $b)
    F=300,900 row "cpu-small-640x360-async" $b -f lavfi -i testsrc2=s=640x360 -vf format=rgb24,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:async=1
    [ $b = C ] && continue
    F=600,2400 row "cudaframes-small-1080p-fp16" $b $HW -f lavfi -i testsrc2=s=1920x1080 -vf format=rgb0,hwupload,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:device=cuda:precision=fp16
    F=600,1800 row "cpuframes-cuda-small-1080p-fp16" $b -f lavfi -i testsrc2=s=1920x1080 -vf format=rgb24,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:device=cuda:precision=fp16
    F=200,800 row "cudaframes-compact-x4-540p-fp16" $b $HW -f lavfi -i testsrc2=s=960x540 -vf format=rgb0,hwupload,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/compact.pt:device=cuda:precision=fp16
  done
done
for wh in "small 1920 1080" "compact 960 540"; do
  timeout 120 python3 tools/bench/eager.py --device cuda --dtype fp16 --compile --seconds 3 $wh 2>/dev/null | tail -1
done
echo "total: $(( $(date +%s) - t0 )) s"
