#!/bin/sh
# make demo: sharpen a soft generated clip with a model we ship
# (tests/dnn/models.py, "sharpen": a fixed 3x3 unsharp kernel per channel).
# Writes the output video and a before/after PNG under OUTDIR.
set -e
out=${1:-build/demo}
ff="./ffmpeg -nostdin -hide_banner -loglevel error -y"
mkdir -p "$out"
[ -n "$PYTHON" ] || { echo "demo: PYTHON (with torch) not set; run ./configure"; exit 1; }
"$PYTHON" tests/dnn/models.py "$out" sharpen

# a soft clip: testsrc2 shrunk and blown up again
$ff -f lavfi -i testsrc2=s=320x180:r=25:d=4 -vf scale=640:360:flags=bilinear \
    -c:v mpeg4 -q:v 2 "$out/before.mp4"
$ff -i "$out/before.mp4" \
    -vf dnn_processing=model="$out/sharpen.pt" \
    -c:v mpeg4 -q:v 2 "$out/after.mp4"
$ff -i "$out/before.mp4" -i "$out/after.mp4" \
    -filter_complex "[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]hstack" \
    -frames:v 1 -update 1 "$out/before-after.png"

echo "demo: sharpened clip:   $out/after.mp4"
echo "demo: original clip:    $out/before.mp4"
echo "demo: before | after:   $out/before-after.png"
echo "demo: the model:        $out/sharpen.pt (tools/export-model.py writes it too)"
echo "demo: your own videos:  ./configure && make (the full profile), then"
echo "      ./ffmpeg -i in.mp4 -vf dnn_processing=model=$out/sharpen.pt -c:v libx264 -pix_fmt yuv420p out.mp4"
