#!/bin/sh
# Summarise FATE reports: one line per failed test, then "N passed, N failed".
# A test with no report (its recipe never ran) counts as failed.
# usage: fate-summary.sh TREE PREFIX
tree=$1 prefix=$2
list=$tree/tests/data/fate-$prefix.list
passed=0 failed=0
for t in $(cat "$list" 2>/dev/null); do
    rep=$tree/tests/data/fate/${t#fate-}.rep
    if [ -f "$rep" ] && [ "$(cut -d: -f2 "$rep")" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $t"
    fi
done
[ -f "$list" ] || { echo "no test list at $list: the build did not get that far"; failed=1; }
echo "$passed passed, $failed failed"
[ $failed = 0 ]
