#!/bin/sh
# Prepare the FFmpeg tree under build/: unpack the pinned tarball, apply
# patches/series (quilt when present, else patch), link our own files over it.
#
# usage: prepare-tree.sh TREE BASE [pristine]
#        prepare-tree.sh --sum     the series' hash that TREE/.patched holds
# With "pristine", no patch is applied and no file linked (the baseline).
# BASE is the tarball, or with UPSTREAM=master a master checkout too
# (tools/upstream.sh); on master the patches are master's variants where
# patches/master/ has one, and the tree is unpacked again when BASE changes.
set -e

tree=$1 tarball=$2 mode=${3:-ours}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/upstream.sh"
patches=$top/patches
if [ "$UPSTREAM" = master ] && [ "$mode" != pristine ] && [ "$tree" != --sum ]; then
    patches=$top/build/patches-master
    base_patch_dir "$patches"
fi

die() { echo "prepare-tree: $*" >&2; exit 1; }

sum=$(cat "$patches/series" $(sed -e 's/#.*//' -e '/^ *$/d' -e "s|^|$patches/|" "$patches/series") | sha256sum | cut -d' ' -f1)
[ "$tree" = --sum ] && { echo "$sum"; exit 0; }
[ "$mode" = pristine ] && sum=pristine

unpack() {
    rm -rf "$tree" "$tree.part"
    mkdir -p "$tree.part"
    base_unpack "$tarball" "$tree.part" ||
        { rm -rf "$tree.part"; die "could not unpack $tarball"; }
    mv "$tree.part" "$tree"
    echo none > "$tree/.patched"
    [ "$UPSTREAM" != master ] || base_id "$tarball" > "$tree/.base"
}

[ -f "$tree/.patched" ] || unpack
[ "$UPSTREAM" != master ] || [ "$(cat "$tree/.base")" = "$(base_id "$tarball")" ] || unpack

# The tree is the source of out-of-tree builds (build/lean, build/full):
# a build made in the tree itself (older layout) would stop them.
if [ "$mode" != pristine ] && [ -f "$tree/config.h" ]; then
    echo "prepare-tree: removing an in-tree build from $tree"
    make -C "$tree" -s distclean >/dev/null 2>&1 || rm -f "$tree/config.h"
fi

if [ "$(cat "$tree/.patched")" != "$sum" ]; then
    if [ "$mode" != pristine ]; then
        if command -v quilt >/dev/null 2>&1; then
            ( cd "$tree"
              export QUILT_PATCHES="$patches" QUILT_PC=.pc
              [ -d .pc ] && quilt pop -a -f -q >/dev/null 2>&1 || true
              quilt push -a -q >/dev/null ) || {
                echo none > "$tree/.patched"
                die "a patch in patches/series does not apply; see 'quilt push' in $tree"
              }
        else
            patch=patch
            if ! command -v patch >/dev/null 2>&1; then
                deb=$(ls "$top"/build/deps/patch_*_amd64.deb 2>/dev/null | head -n 1)
                [ -n "$deb" ] || die "neither quilt nor patch found"
                mkdir -p "$top/build/deps/patch-tool"
                dpkg-deb -x "$deb" "$top/build/deps/patch-tool"
                patch=$top/build/deps/patch-tool/usr/bin/patch
            fi
            [ "$(cat "$tree/.patched")" = none ] || unpack
            for p in $(sed -e 's/#.*//' -e '/^ *$/d' "$patches/series"); do
                $patch -d "$tree" -p1 -s --no-backup-if-mismatch < "$patches/$p" ||
                    { rm -rf "$tree"; die "$p does not apply"; }
            done
        fi
    fi
    echo "$sum" > "$tree/.patched"
fi

[ "$mode" = pristine ] && exit 0

# Link our own files (at FFmpeg's paths) over the tree; an edit to one of them
# is then seen by FFmpeg's make at once.
cd "$top"
find libavfilter libavutil libavcodec libavformat tests doc/examples tools/python -type f 2>/dev/null |
while read -r f; do
    dest=$tree/$f
    [ -L "$dest" ] && [ "$(readlink "$dest")" = "$top/$f" ] && continue
    mkdir -p "$(dirname "$dest")"
    rm -f "$dest"
    ln -s "$top/$f" "$dest"
done
# drop links to files we no longer have
find "$tree" -type l | while read -r l; do
    case $(readlink "$l") in "$top"/*) [ -e "$l" ] || rm -f "$l" ;; esac
done
