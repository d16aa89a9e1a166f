#!/bin/sh
# The lean and full profiles never mix: in a scratch copy of the project,
# run ./configure and make in the order a user might (lean as for the demo,
# full, lean again, lean with other flags) and check that each profile
# builds in its own folder, that ./ffmpeg is the binary of the last
# configure, that going back to a profile reconfigures nothing and that new
# flags empty the profile's folder.  FFmpeg itself is replaced by a stub
# (a configure that records its flags, a Makefile that writes programs
# printing them), so the whole test takes seconds; that FFmpeg's configure
# takes the flags is checked by the real builds.
#
# usage: profiles-test.sh WORKDIR   (LibTorch, Python and the tarball are
#        the ones of build/config.mk)
set -e

work=$1
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "profiles-test: FAIL: $*" >&2; exit 1; }
[ -n "$work" ] || die "usage: profiles-test.sh WORKDIR"
case $work in /*) ;; *) work=$PWD/$work ;; esac
conf() { sed -n "s/^$1 = //p" "$top/build/config.mk"; }
libtorch=$(conf LIBTORCH) python=$(conf PYTHON) tarball=$(conf FFMPEG_TARBALL)
[ -f "$tarball" ] || die "no build/config.mk with a tarball: run ./configure"
# a make of its own, not a sub-make of the one running the tests
unset MAKEFLAGS MFLAGS MAKELEVEL

rm -rf "$work"
mkdir -p "$work/src" "$work/deps"
(cd "$top" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -C "$work/src" -xf -
ln "$tarball" "$work/deps/" 2>/dev/null || cp "$tarball" "$work/deps/"
src=$work/src
version=$(sed -n 's/^FFMPEG_VERSION=//p' "$src/configure")

# The stub FFmpeg tree, already "patched" with the current series.
tree=$src/build/ffmpeg-$version
mkdir -p "$tree"
"$src/tools/prepare-tree.sh" --sum > "$tree/.patched"
cat > "$tree/configure" <<'EOF'
#!/bin/sh
mkdir -p ffbuild
echo "FLAGS = $*" > ffbuild/config.mak
echo "$*" >> configure-runs
cat > Makefile <<'MK'
include ffbuild/config.mak
ffmpeg ffprobe doc/examples/dnn_torch_graph:
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\necho "%s | %s"\n' "$(CURDIR)" "$(FLAGS)" > $@
	@chmod +x $@
MK
EOF
chmod +x "$tree/configure"

args="--libtorch=$libtorch --python=$python --deps-dir=$work/deps --disable-cuda --disable-ccache"
cd "$src"
step() {
    echo "== $*"
    ./configure $args "$@" > "$work/configure.log" 2>&1 ||
        { cat "$work/configure.log"; die "./configure $* failed"; }
}
build() { make -s > "$work/make.log" 2>&1 || { cat "$work/make.log"; die "make failed"; }; }
runs() { wc -l < "build/$1/configure-runs" 2>/dev/null || echo 0; }

step --profile=lean
[ "$(readlink ffmpeg)" = build/lean/ffmpeg ] || die "after configure lean, ffmpeg -> $(readlink ffmpeg)"
build
grep -q "building the lean profile in build/lean" "$work/make.log" || die "make does not say it builds lean"
./ffmpeg | grep -q "^$src/build/lean | .*--disable-everything" || die "lean ffmpeg: $(./ffmpeg)"
touch build/lean/sentinel.o

step
[ "$(readlink ffmpeg)" = build/full/ffmpeg ] || die "after configure, ffmpeg -> $(readlink ffmpeg)"
build
grep -q "building the full profile in build/full" "$work/make.log" || die "make does not say it builds full"
out=$(./ffmpeg)
case $out in "$src/build/full | "*--disable-everything*) die "full ffmpeg has lean flags: $out" ;;
             "$src/build/full | "*) ;; *) die "full ffmpeg: $out" ;; esac
[ -f build/lean/sentinel.o ] || die "the full build touched build/lean"
[ ! -e build/full/sentinel.o ] || die "build/full holds lean objects"

step --profile=lean
build
./ffmpeg | grep -q "^$src/build/lean | " || die "back to lean, ffmpeg: $(./ffmpeg)"
[ "$(runs lean)" = 1 ] || die "going back to lean ran FFmpeg's configure again"
[ -f build/lean/sentinel.o ] || die "going back to lean emptied build/lean"

step --profile=lean --extra-ffmpeg-flags=--disable-debug
build
grep -q "flags of the lean profile changed: emptying build/lean" "$work/make.log" ||
    die "make does not say it empties build/lean"
[ ! -e build/lean/sentinel.o ] || die "new lean flags kept the old objects"
./ffmpeg | grep -q -- "--disable-debug" || die "lean ffmpeg lacks the new flag: $(./ffmpeg)"

# the GPL codec libraries and their licence, when this machine has them
step
if grep -q "^CODEC_LIBS = .*libx264" build/config.mk; then
    grep -q "^FF_FLAGS = .*--enable-gpl .*--enable-libx264" build/config.mk ||
        die "libx264 without --enable-gpl"
    step --disable-gpl-codecs
    ! grep -q -- "--enable-gpl\|--enable-libx26[45]" build/config.mk ||
        die "--disable-gpl-codecs kept a GPL library"
    ! grep -q "^LICENCE = GPL" build/config.mk || die "--disable-gpl-codecs: still GPL"
fi
step --disable-codec-libs
! grep -q -- "--enable-lib\(x26\|dav1d\|svtav1\|vpx\|opus\|mp3lame\)" build/config.mk ||
    die "--disable-codec-libs kept a codec library"

echo "profiles-test: passed (lean and full in their own folders, ./ffmpeg follows configure)"
