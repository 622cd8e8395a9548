#!/bin/sh
# history detect at a suite's size (issue 47): a SQLite history of 3,000
# test nodes x 40 series x 20 runs written straight through lib/history
# (tests/helpers/mkhistory, the suite of tests/lib/harness_suite.h), one
# node's layer7 self time slower from run 12 on. detect must report
# exactly one finding, at c12 (or c13), naming that node and starting in
# layer7's self time, and nothing on the 2,999 unchanged nodes; a history
# of pure noise, none.
set -u
: "${HOSTRANGECTL:?}"
mkhistory=${top_builddir:-.}/tests/helpers/mkhistory
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }

"$mkhistory" "$dir/step.db" 3000 20 1 1234:7:12:0.3 || fail mkhistory
ctl history detect --db "$dir/step.db" -f jsonl > "$dir/step.jsonl" \
    2> "$dir/err" || fail "detect: $(cat "$dir/err")"
[ "$(wc -l < "$dir/step.jsonl")" -eq 2 ] ||
    fail "not one finding: $(cut -c1-300 "$dir/step.jsonl")"
head -1 "$dir/step.jsonl" | grep -q '"series":120000,"alpha":0.01,"min_steps":2,"findings":1}$' ||
    fail "rule line: $(head -1 "$dir/step.jsonl")"
sed -n 2p "$dir/step.jsonl" | grep -q '^{"finding":1,"machine":"Test CPU 3000, 4 cores; clock fast","commit":"c1[23]","commit_before":"c1[12]","run":"s0*[cd]","nodes":1,"p":[0-9.e-]*,"start":{"node":"n1234","operator":"gemm","backend":"cpu","phase":"[a-z]*","range":"layer7","metric":"self",' ||
    fail "the finding: $(sed -n 2p "$dir/step.jsonl" | cut -c1-400)"
# Its series: the node's only, the warm inclusive times of layer0 to
# layer7 among them.
sed -n 2p "$dir/step.jsonl" | grep -o '"node":"[^"]*"' | sort -u |
    grep -qv '"node":"n1234"' && fail "another node in the finding"
for l in 0 1 2 3 4 5 6 7; do
    sed -n 2p "$dir/step.jsonl" | grep -q "\"phase\":\"warm\",\"range\":\"layer$l\",\"metric\":\"inclusive\"" ||
        fail "warm layer$l inclusive not in the finding"
done
# Text: the header and the finding's line.
ctl history detect --db "$dir/step.db" > "$dir/step.txt" ||
    fail "detect text"
grep -q '^history detect: 1 finding over 120000 series (a change moves its series by at least 2 clock steps of its machine; Benjamini-Hochberg false discovery rate q=0.01 over 120000 series)$' \
    "$dir/step.txt" || fail "text header: $(head -1 "$dir/step.txt")"
grep -q '^finding 1: slower by +[0-9.]*% on Test CPU 3000, 4 cores; clock fast at commit c1[23] (run s0*[cd]), starts in n1234 gemm cpu [a-z]* layer7 self; [0-9]* series of 1 node, p=' \
    "$dir/step.txt" || fail "text finding: $(sed -n 2p "$dir/step.txt")"

"$mkhistory" "$dir/noise.db" 3000 20 10 || fail mkhistory
ctl history detect --db "$dir/noise.db" > "$dir/noise.txt" ||
    fail "detect of noise"
[ "$(cat "$dir/noise.txt")" = "history detect: 0 findings over 120000 series (a change moves its series by at least 2 clock steps of its machine; Benjamini-Hochberg false discovery rate q=0.01 over 120000 series)" ] ||
    fail "noise: $(head -3 "$dir/noise.txt")"
exit 0
