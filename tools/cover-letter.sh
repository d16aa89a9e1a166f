#!/bin/sh
# Fill the cover letter that git format-patch --cover-letter wrote (its
# "*** SUBJECT HERE ***" and "*** BLURB HERE ***") from
# tools/cover-letter.txt, for the base UPSTREAM (tools/upstream.sh).
#
# The before/after table is tools/bench/results/cover-UPSTREAM.md when that
# file is there (a markdown table of a measurement on the H200); otherwise
# a marked placeholder, which this script fills when run again on the
# letter once the file is there: the numbers are never made up here.
#
# usage: [UPSTREAM=master] cover-letter.sh LETTER
set -e

letter=$1
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tools/upstream.sh"
results=$top/tools/bench/results/cover-$UPSTREAM.md
begin="<<< H200 TABLE ($UPSTREAM): not measured yet"
end=">>> END OF H200 TABLE"

[ -f "$letter" ] || { echo "cover-letter: no $letter" >&2; exit 1; }

# The table, or the placeholder with its markers.
table() {
    if [ -f "$results" ]; then
        cat "$results"
        return
    fi
    echo "$begin; fill with: tools/cover-letter.sh with"
    echo "tools/bench/results/cover-$UPSTREAM.md in place (see README.md)"
    echo "| scenario | before fps | after fps | after/before |"
    echo "| --- | --- | --- | --- |"
    echo "$end"
}

# The text for this base: comments dropped, base tags resolved.
text() {
    sed -e '/^#/d' -e "s/^\[$UPSTREAM\] \{0,1\}//" -e '/^\[9.0.2\]/d' \
        -e '/^\[master\]/d' "$top/tools/cover-letter.txt"
}

table > "$letter.table"
text > "$letter.text"
awk -v tf="$letter.table" -v xf="$letter.text" -v b="$begin" -v e="$end" '
    function put(f,  l) { while ((getline l < f) > 0) print l; close(f) }
    function blurb(  l, n) {
        while ((getline l < xf) > 0)
            if (++n > 2) { if (l == "@TABLE@") put(tf); else print l }
        close(xf)
    }
    /\*\*\* SUBJECT HERE \*\*\*/ { getline s < xf; close(xf); sub(/\*\*\* SUBJECT HERE \*\*\*/, s) }
    /^\*\*\* BLURB HERE \*\*\*$/ { blurb(); next }
    index($0, b) == 1 { put(tf); skip = 1; next }
    skip { if ($0 == e) skip = 0; next }
    { print }
' "$letter" > "$letter.new"
mv "$letter.new" "$letter"
rm -f "$letter.table" "$letter.text"
