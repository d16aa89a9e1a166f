#!/bin/sh
# The quick half of "make check-series", for make check: write the series
# (tools/make-series.sh checks it rebuilds the prepared tree exactly), then
# apply it with git am to a fresh unpacked tarball.  Building the result is
# left to make check-series.
#
# usage: [UPSTREAM=master] series-test.sh BASE TREE WORKDIR
#   TREE   the prepared tree of that base; with UPSTREAM=master and TREE
#          "-", one is prepared in WORKDIR/tree (tools/prepare-tree.sh)
set -e

tarball=$1 tree=$2 work=$3
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/upstream.sh"

die() { echo "series-test: $*" >&2; exit 1; }

if [ "$tree" = - ]; then
    tree=$work/tree
    "$top/tools/prepare-tree.sh" "$tree" "$tarball" >/dev/null ||
        die "cannot prepare a $UPSTREAM tree"
fi
# The author and the MAINTAINERS entry are the git identity's: a test one
# here, given as git's command-line configuration (above any file's).  With
# none, make-series stops with one line before it writes anything.
as() {
    name=$1 email=$2
    shift 2
    GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=$name \
    GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1=$email "$@"
}
rm -rf "$work/series"
if err=$(as "" "" "$top/tools/make-series.sh" "$tarball" "$tree" "$work/make" \
         "$work/series" 2>&1 >/dev/null); then
    die "make-series wrote a series with no git identity"
fi
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [ ! -d "$work/series" ] &&
    case $err in *"no git identity"*) ;; *) false ;; esac ||
    die "with no git identity, make-series said: $err"
as "Series Test" series-test@localhost \
    "$top/tools/make-series.sh" "$tarball" "$tree" "$work/make" "$work/series" >/dev/null ||
    die "make-series failed"
noauthor=$(grep -L -x 'From: Series Test <series-test@localhost>' \
           "$work"/series/*.patch "$work"/series-*/*.patch || true)
[ -z "$noauthor" ] || die "not by the git identity: $noauthor"
grep -q -x '+  dnn/dnn_backend_torch\* *Series Test (CC <series-test@localhost>)' \
     "$work"/series/*-MAINTAINERS-*.patch ||
    die "no MAINTAINERS entry naming the git identity"
# An address no one reads names no one in MAINTAINERS: that commit is left
# out with one line, the others are the same.
rm -rf "$work"/series-noreply*
err=$(as "Series Test" series-test@users.noreply.example "$top/tools/make-series.sh" \
      "$tarball" "$tree" "$work/make-noreply" "$work/series-noreply" 2>&1 >/dev/null) ||
    die "make-series failed with a noreply address: $err"
case $err in *"no MAINTAINERS commit"*) ;; *) die "with a noreply address, make-series said: $err" ;; esac
! ls "$work"/series-noreply/*-MAINTAINERS-*.patch >/dev/null 2>&1 ||
    die "a MAINTAINERS entry naming a noreply address"
[ $(ls "$work"/series-noreply | wc -l) = $(($(ls "$work"/series | wc -l) - 1)) ] ||
    die "with a noreply address, more than the MAINTAINERS commit is left out"
rm -rf "$work"/series-noreply* "$work"/make-noreply*
patches=$(ls "$work"/series/*.patch | grep -v /0000-cover-letter.patch)
grep -q '^Subject: \[PATCH 00/' "$work/series/0000-cover-letter.patch" &&
    ! grep -q '\*\*\* .* HERE \*\*\*' "$work/series/0000-cover-letter.patch" ||
    die "no filled cover letter"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost
export GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost
rm -rf "$work/am"
mkdir -p "$work/am"
base_unpack "$tarball" "$work/am" || die "cannot unpack $tarball"
cd "$work/am"
git init -q -b series
git add -A -f
git commit -q -m base
git tag base
git am -q $patches || die "git am failed in $work/am"
# each series apart (tools/series.txt's Apart:) applies to the base alone,
# one marked "after" on top of the rest
afters=$(sed -n 's/^\(\[[^]]*\] \)\{0,1\}Apart: \(.*\) after$/\2/p' "$top/tools/series.txt")
for d in "$work"/series-*; do
    [ -d "$d" ] || continue
    from=base
    ! printf '%s\n' $afters | grep -qxF "${d##*/series-}" || from=series
    git checkout -q -b "${d##*/}" $from
    git am -q "$d"/*.patch || die "git am of ${d##*/} failed in $work/am"
    git checkout -q series
done
echo "$(git rev-list --count base..HEAD) patches applied with git am on $UPSTREAM:"
git log --reverse --format='%s' base..HEAD
