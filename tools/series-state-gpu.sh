#!/bin/sh
# On a GPU machine (device run, $OUT set; build/deps carried): build upstream
# master with the series up to one commit (build/state-NAME.diff, written
# here by "git -C build/series-master-work diff base COMMIT"), then run CUDA
# frames (rgb0, bgr0 through hwupload) through it and compare their frames
# with CPU frames on the same GPU model; a size-changing model must be
# refused.  For the states between the rewrite and "take CUDA frames
# through CUDA units", which keep master's mapping.  Before "link
# LibTorch's CUDA libraries" pass EXTRA_LIBS to keep torch_cuda linked:
#   "-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed"
# usage: tools/series-state-gpu.sh NAME [EXTRA_LIBS]
name=$1 extra=$2
R=$PWD
S=/tmp/state-$name
M=$R/fate-suite/dnn-torch
TD=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')
{
nvidia-smi -L
if [ ! -x $S/ffmpeg ]; then
  rm -rf $S; mkdir -p $S /tmp/nvpc
  tar xf build/deps/ffmpeg-master-45bc2518.tar.xz -C $S --strip-components=1
  printf 'prefix=%s\nincludedir=${prefix}/include\n\nName: ffnvcodec\nDescription: x\nVersion: 12.1.14.0\nCflags: -I${includedir}\n' \
      $R/build/deps/nv-codec-headers/usr > /tmp/nvpc/ffnvcodec.pc
  cd $S && patch -s -p1 < $R/build/state-$name.diff || { echo "patch failed"; exit 1; }
  CF=; grep -q enable-libtorch-cuda configure && CF=--enable-libtorch-cuda
  PKG_CONFIG_PATH=/tmp/nvpc ./configure --enable-libtorch $CF --enable-nonfree --enable-ffnvcodec \
    --enable-cuda --disable-autodetect --disable-everything --disable-doc --disable-network \
    --enable-protocol=file,pipe --enable-indev=lavfi --enable-muxer=framemd5,null \
    --enable-encoder=rawvideo,wrapped_avframe --enable-decoder=rawvideo \
    --enable-filter=dnn_processing,format,hwupload,hwdownload,hwupload_cuda,testsrc2,null,scale \
    --extra-cxxflags="-isystem $TD/include -isystem $TD/include/torch/csrc/api/include -isystem /usr/local/cuda/include" \
    --extra-ldflags="-L$TD/lib -Wl,-rpath,$TD/lib" --extra-libs="$extra" > configure.log 2>&1 ||
    { tail -20 configure.log; exit 1; }
  make -j16 ffmpeg > build.log 2>&1 || { grep -m10 -i "error" build.log; tail -20 build.log; exit 1; }
  grep -i "warning" build.log | grep -i dnn_backend_torch | head
  cd $R
fi
F=$S/ffmpeg
md() { "$@" -f framemd5 - 2>/tmp/err.txt | grep -v '^#' | md5sum | cut -c1-12; }
src="-f lavfi -i testsrc2=s=318x238:r=5 -frames:v 6"
for dev in "cuda=cu:0" "cuda=cu:0,primary_ctx=1"; do
 for m in shift.pt invert.pt; do
  for o in "" ":async=0" ":async=1:nireq=3"; do
   for fmt in rgb0 bgr0; do
    cpu=$(md $F -nostdin -v error $src -vf format=$fmt,format=rgb24,dnn_processing=dnn_backend=torch:model=$M/$m:device=cuda$o)
    gpu=$(md $F -nostdin -v error -init_hw_device $dev -filter_hw_device cu $src \
          -vf format=$fmt,hwupload,dnn_processing=dnn_backend=torch:model=$M/$m:device=cuda$o,hwdownload,format=$fmt,format=rgb24)
    [ "$cpu" = "$gpu" ] && r=SAME || r="DIFF($(head -c 300 /tmp/err.txt))"
    echo "$name $dev $m$o $fmt: cpu $cpu cuda $gpu $r"
   done
  done
 done
done
$F -nostdin -v error -init_hw_device cuda=cu:0 -filter_hw_device cu $src \
   -vf format=rgb0,hwupload,dnn_processing=dnn_backend=torch:model=$M/up2.pt:device=cuda,hwdownload,format=rgb0 -f null - ; echo "up2 rc $?"
$F -nostdin -v error $src -vf format=rgb24,dnn_processing=dnn_backend=torch:model=$M/shift.pt -f framemd5 - | tail -1
} 2>&1 | tee $OUT/state-$name.txt | tail -70
