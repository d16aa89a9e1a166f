#!/bin/sh
# Build doc/ffmpeg-filters.texi (which includes doc/filters.texi) of a
# patched FFmpeg tree as FFmpeg's doc/Makefile does (makeinfo --html with
# doc/t2h.pm), and as plain Info, and compare makeinfo's messages with
# those of the pristine tree: an error, or a message that pristine FFmpeg
# does not give (line numbers aside), fails.
#
# usage: check-doc.sh PRISTINE PATCHED   (two FFmpeg source trees)
# Without makeinfo it installs Debian's texinfo (tools/apt-install.sh);
# where it cannot, it says so and exits 0.

pristine=$1 patched=$2
doc=doc/ffmpeg-filters.texi

[ -f "$pristine/$doc" ] && [ -f "$patched/$doc" ] ||
    { echo "check-doc: usage: check-doc.sh PRISTINE PATCHED" >&2; exit 1; }
# as ./configure does for its tools (offline when it was given --deps-dir)
top=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v makeinfo >/dev/null 2>&1; then
    OFFLINE=$(grep -q '^CONFIGURE_ARGS = .*--deps-dir' "$top/build/config.mk" 2>/dev/null &&
              echo 1) "$top/tools/apt-install.sh" "$top/build/apt-install-texinfo.log" \
        texinfo | sed 's/^/   /'
fi
if ! command -v makeinfo >/dev/null 2>&1; then
    echo "   SKIP: makeinfo not found (install texinfo); $doc not checked"
    exit 0
fi

out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT

# messages of one tree, one per line, without line numbers, sorted
messages() {
    ( cd "$1" || exit 1
      makeinfo --html -I doc --no-split -D config-not-all \
          --init-file=doc/t2h.pm -o "$out/$2.html" $doc 2>&1 ||
          echo "makeinfo --html: exit status $?"
      makeinfo --no-split -I doc -o /dev/null $doc 2>&1 ||
          echo "makeinfo: exit status $?" ) |
        sed 's/^\([^:]*\):[0-9][0-9]*:/\1:/' | sort
}

messages "$pristine" pristine > "$out/pristine.txt"
messages "$patched" patched > "$out/patched.txt"
new=$(comm -13 "$out/pristine.txt" "$out/patched.txt")
if [ -n "$new" ]; then
    echo "   FAIL: makeinfo on the patched $doc, beyond pristine FFmpeg's:"
    echo "$new" | sed 's/^/     /'
    exit 1
fi
echo "   makeinfo: $doc builds (HTML and Info) with no message beyond" \
     "pristine FFmpeg's ($(wc -l < "$out/pristine.txt") there)"
