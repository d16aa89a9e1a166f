#!/bin/sh
# The quick half of "make check-series", for make check: write the series
# (tools/make-series.sh checks it rebuilds the prepared tree exactly), then
# apply it with git am to a fresh unpacked tarball.  Building the result is
# left to make check-series.
#
# usage: series-test.sh TARBALL TREE WORKDIR
set -e

tarball=$1 tree=$2 work=$3
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "series-test: $*" >&2; exit 1; }

"$top/tools/make-series.sh" "$tarball" "$tree" "$work/make" "$work/series" >/dev/null ||
    die "make-series failed"
patches=$(ls "$work"/series/*.patch)

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost
export GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost
rm -rf "$work/am"
mkdir -p "$work/am"
tar -xJf "$tarball" -C "$work/am" --strip-components=1 || die "cannot unpack $tarball"
cd "$work/am"
git init -q -b series
git add -A -f
git commit -q -m base
git tag base
git am -q $patches || die "git am failed in $work/am"
echo "$(git rev-list --count base..HEAD) patches applied with git am:"
git log --reverse --format='%s' base..HEAD
