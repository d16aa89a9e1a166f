#!/bin/sh
# Fetch one pinned file from Debian's package registry through a private apt
# configuration under build/apt, built from the mirror the machine's apt uses.
# The system's apt sources are read, never written.
#
# usage: fetch-debian.sh KIND NAME VERSION SUITE FILE POOLDIR SHA256 OUT
#   KIND     source (an orig tarball of a source package) or binary (a .deb)
#   NAME     source or binary package name
#   VERSION  Debian version of the package (binary) or upstream version (source)
#   SUITE    suite whose index names the file (unstable, trixie, ...)
#   FILE     file name in the pool
#   POOLDIR  pool directory, relative to the mirror (pool/main/f/ffmpeg)
#   SHA256   pinned hash, checked before OUT is written
#   OUT      destination path
set -e

kind=$1 name=$2 version=$3 suite=$4 file=$5 pooldir=$6 sha=$7 out=$8
top=$(cd "$(dirname "$0")/.." && pwd)
aptdir=${APT_PRIVATE_DIR:-$top/build/apt}

die() { echo "fetch-debian: $*" >&2; exit 1; }

command -v apt-get >/dev/null 2>&1 ||
    die "apt-get not found; pass the file with --deps-dir=DIR or --ffmpeg-tarball=FILE"

# The first non-security mirror of the system's apt sources.
find_mirror() {
    if [ -n "$DEBIAN_MIRROR" ]; then echo "$DEBIAN_MIRROR"; return; fi
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f"
    done | grep -v -e security -e '^cdrom:' | head -n 1 | grep . && return
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i !~ /=/) { print $i; break } }' |
        grep -v -e security -e '^cdrom:' | head -n 1
}

mirror=$(find_mirror | sed 's,/*$,,')
[ -n "$mirror" ] || die "no Debian mirror found in the system's apt sources; pass the file with --deps-dir=DIR"

mkdir -p "$aptdir/state/lists/partial" "$aptdir/cache/archives/partial" \
         "$aptdir/sources.list.d" "$aptdir/preferences.d"
: > "$aptdir/state/status"
if [ "$kind" = source ]; then
    echo "deb-src $mirror $suite main" > "$aptdir/sources.list"
else
    echo "deb [arch=amd64] $mirror $suite main" > "$aptdir/sources.list"
fi
cat > "$aptdir/apt.conf" <<CONF
Dir::State "$aptdir/state";
Dir::State::status "$aptdir/state/status";
Dir::Cache "$aptdir/cache";
Dir::Etc::SourceList "$aptdir/sources.list";
Dir::Etc::SourceParts "$aptdir/sources.list.d";
Dir::Etc::Preferences "$aptdir/preferences";
Dir::Etc::PreferencesParts "$aptdir/preferences.d";
Acquire::Languages "none";
APT::Get::List-Cleanup "false";
CONF
export APT_CONFIG="$aptdir/apt.conf"

# Ask the index where the file is; the index may lag the pool, so fall back
# to the pool path itself when it does not name the file.
uri=
if apt-get -q update >"$aptdir/update.log" 2>&1; then
    if [ "$kind" = source ]; then
        uri=$(apt-get -qq --print-uris source "$name" 2>/dev/null |
              tr -d "'" | awk -v f="$file" '$2 == f { print $1 }' | head -n 1)
    else
        uri=$(apt-get -qq --print-uris download "$name=$version" 2>/dev/null |
              tr -d "'" | awk -v f="$file" '$2 == f { print $1 }' | head -n 1)
    fi
fi
[ -n "$uri" ] || uri="$mirror/$pooldir/$file"

tmp="$out.part"
rm -f "$tmp"
echo "fetching $file from Debian's registry ($suite)" >&2
if ! /usr/lib/apt/apt-helper download-file "$uri" "$tmp" "SHA256:$sha" >"$aptdir/fetch.log" 2>&1; then
    rm -f "$tmp"
    echo "fetch-debian: could not fetch $file (see $aptdir/fetch.log)" >&2
    exit 1
fi
mv "$tmp" "$out"
