#!/bin/sh
# Write the project as a patch series against pristine FFmpeg, in
# git format-patch form: unpack the tarball into a scratch git repository,
# commit it as the base, make the commits listed in tools/series.txt (our
# quilt patches applied with git apply, our files copied in), then
# format-patch them with a cover letter.  The result must equal the
# prepared tree.
#
# usage: [UPSTREAM=master] make-series.sh BASE TREE WORKDIR OUTDIR
#   BASE     the tarball, or on master a master checkout (tools/upstream.sh)
#   TREE     the prepared tree of that base, to check the result against
set -e

tarball=$1 tree=$2 work=$3 out=$4
top=$(cd "$(dirname "$0")/.." && pwd)
list=$top/tools/series.txt
. "$top/tools/upstream.sh"

die() { echo "make-series: $*" >&2; exit 1; }

[ -e "$tarball" ] && [ -d "$tree" ] && [ -n "$work" ] && [ -n "$out" ] ||
    die "usage: make-series.sh TARBALL TREE WORKDIR OUTDIR"
tree=$(cd "$tree" && pwd)
case $work in /*) ;; *) work=$PWD/$work ;; esac
case $out in /*) ;; *) out=$PWD/$out ;; esac

# The author is the user's git identity (the one who sends the series and
# whom the MAINTAINERS entry names); without one there is no series, as
# any name put in its place would be sent as if it were someone's.
# Fixed dates: the same tree and author give the same patches.
GIT_AUTHOR_NAME=$(git -C "$top" config user.name || true)
GIT_AUTHOR_EMAIL=$(git -C "$top" config user.email || true)
[ -n "$GIT_AUTHOR_NAME" ] && [ -n "$GIT_AUTHOR_EMAIL" ] ||
    die "no git identity: set git config user.name and user.email (the patches' author and the MAINTAINERS entry)"
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME"
export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
# SIGNOFF=1: a Signed-off-by line of the author on every patch, which
# certifies the Developer's Certificate of Origin: the author's choice
signoff=
[ "$SIGNOFF" != 1 ] || signoff=--signoff

rm -rf "$work" "$out"
mkdir -p "$work" "$out"
base_unpack "$tarball" "$work" || die "cannot unpack $tarball"
git -C "$work" init -q -b series
git -C "$work" add -A -f
git -C "$work" commit -q -m "FFmpeg $(cat "$work/VERSION" 2>/dev/null || echo release)"
git -C "$work" tag base

used=$work.used      # "patch NAME PATH" and "file PATH", one a line
msg=$work.msg
locals=$work.local    # patches and files of ours that the series leaves out
aparts=$work.apart    # "COMMIT NAME": commits sent as a series of their own
afters=$work.after    # the NAMEs of those that go on top of the rest
fixed=$work.fixed     # the paths that fixes of upstream's code touch
: > "$fixed"
: > "$aparts"
: > "$afters"
: > "$used"
: > "$locals"

# paths that a quilt patch touches
patch_paths() {
    sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$(base_patch "$1")"
}

apply_patch() {
    name=$1; shift
    file=$(base_patch "$name")
    [ -f "$file" ] || die "$list: no patches/$name"
    [ "$(head -c 6 "$file")" = "--- a/" ] ||
        die "${file#$top/}: text before its hunks (its message belongs in $list)"
    [ $# -gt 0 ] || set -- $(patch_paths "$name")
    inc=
    for p in "$@"; do
        patch_paths "$name" | grep -qx "$p" || die "patches/$name does not touch $p"
        inc="$inc --include=$p"
        echo "patch $name $p" >> "$used"
    done
    git -C "$work" apply $inc "$file" ||
        die "${file#$top/} ($*) does not apply to $UPSTREAM"
}

copy_file() {
    [ -f "$top/$1" ] || die "$list: no file $1"
    mkdir -p "$(dirname "$work/$1")"
    if [ -f "$stage/$1" ]; then cp "$stage/$1" "$work/$1"; else cp "$top/$1" "$work/$1"; fi
    echo "file $1" >> "$used"
}

# A fix of upstream's code in a file that a later commit replaces with ours
# (tools/series-fixes/BASE/NAME.diff): a small change for that base's own
# branch, in the series first; the file it touches must be a File: later.
apply_fix() {
    diff=$top/tools/series-fixes/$UPSTREAM/$1.diff
    [ -f "$diff" ] || die "$list: no tools/series-fixes/$UPSTREAM/$1.diff"
    git -C "$work" apply "$diff" ||
        die "tools/series-fixes/$UPSTREAM/$1.diff does not apply where $list puts it"
    echo "fix $1" >> "$used"
    sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$diff" >> "$fixed"
}

# A step: a later commit that changes our files (tools/series-steps/NAME.diff).
apply_step() {
    git -C "$work" apply "$top/tools/series-steps/$1.diff" ||
        die "tools/series-steps/$1.diff does not apply where $list puts it"
    echo "step $1" >> "$used"
}

# Our files as the series first adds them: the files as they are, with the
# steps that the series makes later taken back, the last one first.  A step
# that no longer takes back is to be made again from the earlier state of
# its files (see tools/series.txt).
stage_files() {
    rm -rf "$stage"
    git init -q "$stage"
    for s in $(sed -n 's/^Step: *//p' "$list" | sed -n '1!G;h;$p'); do
        diff=$top/tools/series-steps/$s.diff
        [ -f "$diff" ] || die "$list: no tools/series-steps/$s.diff"
        for f in $(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$diff"); do
            [ -f "$stage/$f" ] && continue
            mkdir -p "$(dirname "$stage/$f")"
            cp "$top/$f" "$stage/$f"
        done
        git -C "$stage" apply -R "$diff" ||
            die "tools/series-steps/$s.diff no longer takes back from our files"
    done
}

# A MAINTAINERS line for our files under upstream's "dnn" entry, naming
# the series' author (its git identity: the one who answers for it), with
# the address to copy in upstream's form for it, "Name (CC <address>)".
# An address no one reads (a noreply one, or of a domain reserved for
# examples: RFC 2606) names no one who can answer: the commit is left
# out, with one line saying so, and the rest of the series is the same.
unreachable() {
    case $1 in
    *noreply*|*no-reply*|*.example|*.invalid|*@example.com|*@example.net|*@example.org) ;;
    *) return 1 ;;
    esac
}

add_maintainer() {
    if unreachable "$GIT_AUTHOR_EMAIL"; then
        echo "make-series: no MAINTAINERS commit: $GIT_AUTHOR_EMAIL is an address no one reads (set git config user.email)" >&2
        skip=1
        return
    fi
    awk -v line="$(printf '  %-38s%s (CC <%s>)' "$1" "$GIT_AUTHOR_NAME" "$GIT_AUTHOR_EMAIL")" \
        '{ print } /^dnn  / { print line; n++ } END { exit n != 1 }' \
        "$work/MAINTAINERS" > "$work/MAINTAINERS.new" ||
        die "no single dnn entry in MAINTAINERS"
    mv "$work/MAINTAINERS.new" "$work/MAINTAINERS"
}

commit() {
    git -C "$work" add -A -f
    git -C "$work" diff --cached --quiet && die "commit '$subject' changes nothing"
    git -C "$work" commit -q -F "$msg"
    [ -z "$apart" ] || echo "$(git -C "$work" rev-parse HEAD) $apart" >> "$aparts"
    echo "  $subject"
}

# A commit left out (add_maintainer) must have had nothing else in it.
leave_out() {
    git -C "$work" add -A -f
    git -C "$work" diff --cached --quiet ||
        die "'$subject' is left out but changes more than MAINTAINERS"
}

# A line that starts with "[BASE] " counts only on that base.
for_base() {
    case $1 in
    "[$UPSTREAM]")   line= ;;
    "[$UPSTREAM] "*) line=${1#* } ;;
    \[9.0.2\]*|\[master\]*) return 1 ;;
    esac
}

stage=$work.stage
stage_files
state=none subject= skip=
while IFS= read -r line; do
    for_base "$line" || continue
    case $state:$line in
    none:'#'*|none:) ;;
    none:Local:\ *) echo "${line#Local: }" >> "$locals" ;;
    none:Subject:\ *)
        subject=${line#Subject: } apart=
        printf '%s\n\n' "$subject" > "$msg"
        state=head ;;
    head:Patch:\ *) apply_patch ${line#Patch: } ;;
    head:File:\ *)  copy_file ${line#File: } ;;
    head:Step:\ *)  apply_step ${line#Step: } ;;
    head:Fix:\ *)   apply_fix ${line#Fix: } ;;
    head:Maintainer:\ *) add_maintainer "${line#Maintainer: }" ;;
    head:Apart:\ *) apart=${line#Apart: }
                    case $apart in *" after") apart=${apart% after}; echo "$apart" >> "$afters" ;; esac ;;
    head:)          state=body ;;
    body:---)       if [ -n "$skip" ]; then leave_out; else commit; fi; state=none skip= ;;
    body:*)         printf '%s\n' "$line" >> "$msg" ;;
    *) die "$list: unexpected line '$line'" ;;
    esac
done < "$list"
[ $state = none ] || die "$list: the last commit has no closing ---"

# A master variant of a patch the series no longer has is a leftover.
for f in "$top"/patches/master/*.patch; do
    [ -f "$f" ] || continue
    base_series | grep -qxF "${f##*/}" ||
        die "patches/master/${f##*/} is the variant of no patch in patches/series"
done

# Everything used, and only once; the result is the prepared tree.
base_series | grep -vxF -f "$locals" | while read -r p; do
    for f in $(patch_paths "$p"); do echo "patch $p $f"; done
done > "$work.want"
cd "$top"
git ls-files --cached --others --exclude-standard -- \
    libavfilter libavutil libavcodec libavformat tests doc/examples tools/python |
    grep -vxF -f "$locals" | sed 's/^/file /' >> "$work.want"
for f in tools/series-steps/*.diff; do
    [ -f "$f" ] && basename "$f" .diff | sed 's/^/step /'
done >> "$work.want"
for f in tools/series-fixes/"$UPSTREAM"/*.diff; do
    [ -f "$f" ] && basename "$f" .diff | sed 's/^/fix /'
done >> "$work.want"
sort -u "$fixed" | while read -r f; do
    grep -qxF "file $f" "$used" ||
        die "a fix in tools/series-fixes/$UPSTREAM touches $f, which no File: replaces"
done
sort "$work.want" > "$work.want.s"
sort "$used" > "$work.used.s"
if ! cmp -s "$work.want.s" "$work.used.s"; then
    diff "$work.want.s" "$work.used.s" | sed -n -e 's/^< /  not in the series: /p' \
        -e 's/^> /  not ours or used twice: /p' >&2
    die "tools/series.txt does not cover patches/series and our files once each"
fi
# Our local patches (not sent) go on top, uncommitted, for the comparison.
for p in $(base_series | grep -xF -f "$locals"); do
    git -C "$work" apply "$(base_patch "$p")" || die "local patch $p does not apply"
done
awk '$1 != "step" && $1 != "fix" { print $NF }' "$work.want.s" | sort -u | while read -r f; do
    cmp -s "$work/$f" "$tree/$f" ||
        die "$f differs from the prepared tree (make prepare, or fix tools/series.txt)"
done
rm -rf "$used" "$msg" "$locals" "$fixed" "$work.want" "$work.want.s" "$work.used.s" "$stage"

# The commits marked Apart: go out as series of their own, and the rest
# without them: so the rest must not need them.  Each applies to base, or
# with "Apart: NAME after" on top of the rest (kept, not sent: the
# cover letter does not count it).
git -C "$work" reset -q --hard HEAD
pick() {
    git -C "$work" checkout -q -b "$1" "$3"
    for c in $(git -C "$work" rev-list --reverse base..series); do
        [ "$(sed -n "s/^$c //p" "$aparts")" = "$2" ] || continue
        git -C "$work" cherry-pick "$c" >/dev/null 2>&1 ||
            die "'$(git -C "$work" log -1 --format=%s "$c")' needs a commit of another series"
    done
}
pick sent "" base
git -C "$work" format-patch -q --no-signature $signoff --cover-letter -o "$out" base..sent
for name in $(cut -d' ' -f2 "$aparts" | sort -u); do
    from=base
    ! grep -qxF "$name" "$afters" || from=sent
    pick "apart-$name" "$name" $from
    rm -rf "$out-$name"
    git -C "$work" format-patch -q --no-signature $signoff \
        -o "$out-$name" $from.."apart-$name"
    echo "make-series: $(ls "$out-$name" | wc -l) patch(es) apart in $out-$name"
done
rm -f "$aparts" "$afters"
"$top/tools/cover-letter.sh" "$out/0000-cover-letter.patch" ||
    die "cannot fill the cover letter"
echo "make-series: $(ls "$out" | grep -vc '^0000-') patches and a cover letter in $out"
