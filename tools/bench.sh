#!/bin/sh
# make bench: build the helpers of tools/bench/, then run tools/bench.py.
#
# usage: PYTHON=... LIBTORCH=... [TORCH_CUDA=yes] BASELINE=upstream-ffmpeg \
#        [MASTER=upstream-master-ffmpeg] tools/bench.sh [OUTDIR]
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/bench}
: "${PYTHON:?PYTHON is not set: run ./configure and make bench}"
: "${LIBTORCH:?LIBTORCH is not set: run ./configure and make bench}"
: "${BASELINE:?BASELINE (upstream ffmpeg) is not set: run make bench}"
mkdir -p "$out"
out=$(cd "$out" && pwd)   # the farm bench works in a folder of its own
cd "$top"

# newer(SRC, OUT): OUT is missing or older than SRC
newer() { [ ! -e "$2" ] || [ "$1" -nt "$2" ]; }

if newer tools/bench/th_limit.cpp "$out/th_limit"; then
    cuda_libs=
    [ "$TORCH_CUDA" = yes ] &&
        cuda_libs="-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed"
    echo "CXX	$out/th_limit"
    c++ -std=c++17 -O2 -isystem "$LIBTORCH/include" \
        -isystem "$LIBTORCH/include/torch/csrc/api/include" \
        tools/bench/th_limit.cpp -o "$out/th_limit" \
        -L"$LIBTORCH/lib" -Wl,-rpath,"$LIBTORCH/lib" $cuda_libs \
        -ltorch -ltorch_cpu -lc10
fi
if newer tools/bench/alloc_count.c "$out/alloc_count.so"; then
    echo "CC	$out/alloc_count.so"
    cc -O2 -shared -fPIC tools/bench/alloc_count.c -o "$out/alloc_count.so"
fi

# matplotlib for the plot, installed under build/ rather than into PYTHON's
# environment, which may be shared
pylib=$top/build/pylib
export PYTHONPATH="$pylib${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -c 'import matplotlib' 2>/dev/null ||
    "$PYTHON" -m pip install -q --target "$pylib" matplotlib ||
    echo "bench: could not install matplotlib: no plot"

"$PYTHON" tools/bench.py --out "$out" --ours ./ffmpeg \
    --upstream "$BASELINE" ${MASTER:+--master "$MASTER"} --limit "$out/th_limit" \
    --alloc "$out/alloc_count.so"

# tools/farm.sh: N parts under a Slurm cluster of this machine against one
# process over the whole input (tools/bench/farm.sh; OUT/farm/farm.md)
"$PYTHON" tests/dnn/models.py "$out/farm-models" compact > /dev/null
sh tools/bench/farm.sh "$out/farm" "$top" "$out/farm-models/compact.pt" ||
    echo "bench: the farm bench failed (see $out/farm)"

# two GPUs or more: one GPU alone, two processes, one process on both
# (tools/bench/multigpu.py; its table in OUT/multigpu/multigpu.md)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${gpus:-0}" -ge 2 ]; then
    "$PYTHON" tools/bench/multigpu.py --ffmpeg ./ffmpeg --model small \
        --out "$out/multigpu"
fi
