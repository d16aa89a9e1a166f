#!/bin/sh
# On the GPU machine (device run, $OUT set; build/deps and build/ab/A.tar carried,
# A.tar from "git archive COMMIT"): builds A and this tree side by side, then
# times four pipelines (tools/bench/steady.py) in rounds that alternate the
# order A/B, then torch.compile of the same modules (tools/bench/eager.py).
T=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')
D=$PWD/build/deps
cfg() { ./configure --profile=lean --libtorch="$T" --python=python3 --deps-dir="$D" \
      --disable-ccache --extra-ffmpeg-flags='--enable-cuda-nvcc --enable-nonfree' && make ffmpeg-build JOBS=8; }
mkdir -p /tmp/A && tar xf build/ab/A.tar -C /tmp/A
t0=$(date +%s)
(cd /tmp/A && cfg) > "$OUT/buildA.txt" 2>&1 & pa=$!
cfg > "$OUT/buildB.txt" 2>&1 || { tail -30 "$OUT/buildB.txt"; exit 1; }
wait $pa || { tail -30 "$OUT/buildA.txt"; exit 1; }
echo "builds: $(( $(date +%s) - t0 )) s"
mkdir -p /tmp/m
python3 -c "import sys; sys.path.insert(0,'tests/dnn'); import models
for n in ('small','compact'): models.build(n).save('/tmp/m/%s.pt'%n)"
HW="-init_hw_device cuda=cu:0 -filter_hw_device cu"
row() {  # label bin args...
  l=$1; b=$2; shift 2
  printf "%s %s " "$l" "$b"
  python3 tools/bench/steady.py --frames "$F" -- $BIN "$@" -f null - | awk -F'|' '{print $3}'
}
for r in 0 1 2 3; do
  for b in A B; do
    [ $((r % 2)) = 1 ] && b=$(echo $b | tr AB BA)
    BIN=/tmp/A/ffmpeg; [ $b = B ] && BIN=$PWD/ffmpeg
    echo "round $r"
    F=300,900 row "cpu-small-640x360-async" $b -f lavfi -i testsrc2=s=640x360 -vf format=rgb24,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:async=1
    F=600,2400 row "cudaframes-small-1080p-fp16" $b $HW -f lavfi -i testsrc2=s=1920x1080 -vf format=rgb0,hwupload,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:device=cuda:precision=fp16
    F=600,1800 row "cpuframes-cuda-small-1080p-fp16" $b -f lavfi -i testsrc2=s=1920x1080 -vf format=rgb24,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/small.pt:device=cuda:precision=fp16
    F=200,800 row "cudaframes-compact-x4-540p-fp16" $b $HW -f lavfi -i testsrc2=s=960x540 -vf format=rgb0,hwupload,loop=loop=-1:size=1,dnn_processing=dnn_backend=torch:model=/tmp/m/compact.pt:device=cuda:precision=fp16
  done
done
for wh in "small 1920 1080" "compact 960 540"; do
  timeout 120 python3 tools/bench/eager.py --device cuda --dtype fp16 --compile --seconds 3 $wh 2>/dev/null | tail -1
done
