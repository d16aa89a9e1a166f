#!/bin/sh
# Install missing Debian packages the one way the build does: as root, with
# apt-get, from the sources the machine's apt already uses (only read),
# never offline.  It never fails: the caller checks afterwards for what it
# needs and says what is missing.
#
# usage: [OFFLINE=1] apt-install.sh LOG PKG...   (apt's output goes to LOG)

log=$1
shift
[ $# -gt 0 ] && [ "${OFFLINE:-0}" != 1 ] && [ "$(id -u)" = 0 ] &&
    command -v apt-get >/dev/null 2>&1 || exit 0
echo "installing $* from Debian"
{ apt-get -qq update && apt-get -qq install -y --no-install-recommends "$@"; } \
    >"$log" 2>&1
exit 0
