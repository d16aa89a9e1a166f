#!/bin/sh
# Master + the series on the GPU machine: the GPU suite's CUDA-frames cases
# (tests/dnn/gpu_suite.py) against upstream master with our series applied.
#
#   tools/gpu-master.sh pack   here: make the master series, apply it with
#                              git am to a fresh master tree (as make check
#                              does) and write that source as
#                              build/deps/ffmpeg-master-series.tar.xz
#   tools/gpu-master.sh build  there: only the build step of run, below
#   tools/gpu-master.sh run    there (no git, quilt or network needed), in
#                              the tree with build/deps carried: ./configure
#                              against that machine's LibTorch unless
#                              build/config.mk is there, build that source
#                              with its flags (--enable-libtorch-cuda with a
#                              CUDA LibTorch) in build/master-series unless
#                              its ffmpeg is newer than that source, run the
#                              suite's groups GROUPS [rgb] on its ffmpeg
#
#   tools/gpu-master.sh bench  there, after run: pristine master
#                              (build/baseline/ffmpeg-master) against master
#                              + series with tools/bench.py (BENCH_ONLY
#                              [cuda]), and the cover letter's table from it
#                              in tools/bench/results/cover-master.md
#
# Environment: GROUPS (gpu_suite.py --groups), JOBS [nproc], OUT (where
# run and bench copy their logs and results, when set).
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/deps/ffmpeg-master-series.tar.xz
tree=$top/build/master-series

die() { echo "gpu-master: $*" >&2; exit 1; }
val() { sed -n "s/^$1 = //p" "$top/build/config.mk"; }

pack() {
    [ -f "$top/build/config.mk" ] || die "not configured: run ./configure first"
    master=$(val MASTER_TARBALL)
    [ -n "$master" ] || die "no master snapshot: ./configure --master-tarball=FILE"
    UPSTREAM=master MASTER_COMMIT=$(val MASTER_COMMIT) "$top/tools/series-test.sh" \
        "$master" - "$top/build/gpu-master-pack" > "$top/build/gpu-master-pack.log" ||
        die "the master series does not apply: see build/gpu-master-pack.log"
    git -C "$top/build/gpu-master-pack/am" archive --format=tar \
        --prefix=ffmpeg-master-series/ HEAD | xz -T0 > "$src.part"
    mv "$src.part" "$src"
    echo "gpu-master: $src ($(tail -n +2 "$top/build/gpu-master-pack.log" | wc -l) patches on master)"
}

# configure (ours, then FFmpeg's with its flags) and build ffmpeg
build() {
    if [ ! -f "$top/build/config.mk" ]; then
        lt=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
        (cd "$top" && ./configure --profile=lean --libtorch="$lt" --python=python3 \
            --deps-dir=build/deps --disable-ccache) || die "./configure failed"
    fi
    rm -rf "$tree"
    mkdir -p "$tree"
    tar -xJf "$src" -C "$tree" --strip-components=1
    cd "$tree"
    export PKG_CONFIG_PATH="$(val NVCODEC_PC)${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" CCACHE_NOHASHDIR=1
    eval "./configure $(val FF_FLAGS)" > configure.log 2>&1 ||
        { tail -n 20 configure.log; die "FFmpeg's configure failed"; }
    grep -q '^CONFIG_LIBTORCH_CUDA=yes' ffbuild/config.mak ||
        echo "gpu-master: warning: built without --enable-libtorch-cuda (no CUDA LibTorch)"
    make -j"${JOBS:-$(nproc)}" ffmpeg > build.log 2>&1 ||
        { tail -n 30 build.log; die "the build of master + series failed"; }
}

run() {
    [ -f "$src" ] || die "no $src: run tools/gpu-master.sh pack first and carry build/deps"
    [ "$tree/ffmpeg" -nt "$src" ] || (build)
    echo "gpu-master: built ${tree#"$top"/}/ffmpeg"
    cd "$top"
    "$(val PYTHON)" tests/dnn/gpu_suite.py --ffmpeg "$tree/ffmpeg" --workdir build/gpu-master \
        --groups "${GROUPS:-rgb}" 2>&1 | tee build/gpu-master.txt
    [ -z "$OUT" ] || cp build/gpu-master.txt "$tree/configure.log" "$tree/build.log" "$OUT/"
    tail -n 1 build/gpu-master.txt | grep -q ' 0 failed$'
}

bench() {
    [ -x "$tree/ffmpeg" ] || die "no $tree/ffmpeg: run tools/gpu-master.sh run first"
    cd "$top"
    make "$top/build/baseline/ffmpeg-master/ffmpeg" JOBS="${JOBS:-$(nproc)}" ||
        die "pristine master did not build"
    [ -x build/baseline/ffmpeg-master/ffmpeg ] || die "pristine master did not build"
    lt=$(val LIBTORCH)
    out=build/bench-master
    mkdir -p "$out"
    c++ -std=c++17 -O2 -isystem "$lt/include" -isystem "$lt/include/torch/csrc/api/include" \
        tools/bench/th_limit.cpp -o "$out/th_limit" -L"$lt/lib" -Wl,-rpath,"$lt/lib" \
        -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed -ltorch -ltorch_cpu -lc10
    cc -O2 -shared -fPIC tools/bench/alloc_count.c -o "$out/alloc_count.so"
    LIBTORCH=$lt BENCH_ONLY="${BENCH_ONLY:-cuda}" BENCH_GPU=yes python3 tools/bench.py --out "$out" \
        --ours "$tree/ffmpeg" --upstream build/baseline/ffmpeg-master/ffmpeg \
        --limit "$out/th_limit" --alloc "$out/alloc_count.so"
    python3 tools/bench/cover_table.py "$out/results.json" > tools/bench/results/cover-master.md
    cat tools/bench/results/cover-master.md
    [ -z "$OUT" ] || cp "$out/results.json" "$out/results.md" tools/bench/results/cover-master.md "$OUT/"
}

case $1 in
pack)  pack ;;
build) build ;;
run)   run ;;
bench) bench ;;
*)     die "usage: tools/gpu-master.sh pack|build|run|bench" ;;
esac
