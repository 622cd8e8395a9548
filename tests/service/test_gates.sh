#!/bin/sh
# CI gates end to end through real daemons: record --save writes the run
# file with the report from the same samples, also when the command fails,
# and nothing when it cannot; every saved run carries this machine's
# fingerprint; diff's exit statuses (0 within limits, 1 a key slower than
# allowed, 2 a usage error, 3 a file that cannot be read, 4 --strict and
# machines that differ), --fail-above per range, and the warning when
# fingerprints differ (a run on the other clock path, a merge of both).
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PATHTREE:?}"
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
tree=$HOSTRANGE_TEST_PATHTREE

# record --save: the command fails (status 3) after its ranges; the report
# and the run file are both written, from the same samples, and the file
# holds the --meta notes.
ctl record -o "$dir/base.jsonl" --save "$dir/base.hrs" --meta commit=abc \
    --meta branch=main -- sh -c "'$tree' -c 10 && exit 3" 2> "$dir/err"
[ $? -eq 3 ] || fail "record --save: not the command's status"
grep -q "^saved 9 keys to $dir/base.hrs$" "$dir/err" ||
    fail "record --save said: $(cat "$dir/err")"
ctl dump --from "$dir/base.hrs" | cmp -s - "$dir/base.jsonl" ||
    fail "the run file and the report differ"
ls "$dir" | grep -q '\.tmp\.' && fail "a temporary file left"
# A run file that cannot be written: status 1, the report still written,
# no file left.
ctl record -o "$dir/r2.jsonl" --save "$dir/none/run.hrs" -- "$tree" -c 2 \
    2> "$dir/err" && fail "record --save into a missing directory"
grep -q "^hostrangectl record: .*none/run.hrs" "$dir/err" ||
    fail "unwritable run file: $(cat "$dir/err")"
[ -s "$dir/r2.jsonl" ] || fail "no report beside the failed save"
[ -e "$dir/none" ] && fail "a directory made"
# Options that need --save.
ctl record --meta a=b -- true 2> "$dir/err"
[ $? -eq 2 ] && grep -q "meta needs --save" "$dir/err" || fail "--meta alone"
ctl record --unsorted -- true 2> "$dir/err"
[ $? -eq 2 ] || fail "--unsorted alone"

# The fingerprint: this machine, as diff prints it after its table.
ctl diff "$dir/base.hrs" "$dir/base.hrs" > "$dir/aa.txt" 2> "$dir/err" ||
    fail "A/A diff: $(cat "$dir/err")"
[ -s "$dir/err" ] && fail "A/A diff warns: $(cat "$dir/err")"
line=$(grep "^base $dir/base.hrs: " "$dir/aa.txt")
host=$(hostname)
cores=$(getconf _NPROCESSORS_ONLN)
kernel="$(uname -s) $(uname -r)"
version=$(ctl -V | sed 's/^hostrangectl //')
model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null |
        head -1 | sed 's/ *$//')
# The clock path: fast, or waiting where the processor's default reads wait
# for the work before them (hostrange(3), Clock paths).
case $line in
    "base $dir/base.hrs: $host: "*", $cores cores, $kernel; clock fast"*"; hostrange $version; commit=abc, branch=main") ;;
    "base $dir/base.hrs: $host: "*", $cores cores, $kernel; clock waiting"*"; hostrange $version; commit=abc, branch=main") ;;
    *) fail "fingerprint line: $line" ;;
esac
[ -z "$model" ] || echo "$line" | grep -qF ": $host: $model, $cores cores" ||
    fail "CPU model not '$model': $line"
echo "$line" | grep -qE "clock (fast|waiting) \(.*step [0-9.]+ ns\)" ||
    fail "clock step: $line"

# A second run whose range c spins three times as long.
ctl record -o /dev/null --save "$dir/slow.hrs" -- "$tree" -c 10 -s 6000 ||
    fail "record the slow run"
ctl diff "$dir/base.hrs" "$dir/slow.hrs" > "$dir/d.txt" 2> "$dir/err"
[ $? -eq 0 ] || fail "diff without limits: $(cat "$dir/err")"
# One limit for all: every slower key named, status 1.
ctl diff --fail-above 10 "$dir/base.hrs" "$dir/slow.hrs" > /dev/null \
    2> "$dir/err"
[ $? -eq 1 ] || fail "--fail-above 10: not 1"
grep -q "warm c self is [0-9.]*% slower, above --fail-above 10%$" \
    "$dir/err" || fail "c self not named: $(cat "$dir/err")"
grep -q "warm a inclusive is [0-9.]*% slower" "$dir/err" ||
    fail "a inclusive not named"
# Per range: c allowed 1000%, the rest 10%: a and b (which hold c) fail,
# c does not.
ctl diff --fail-above 'c=1000,*=10' "$dir/base.hrs" "$dir/slow.hrs" \
    > /dev/null 2> "$dir/err"
[ $? -eq 1 ] || fail "per range: not 1"
grep -q " c \(inclusive\|self\) is" "$dir/err" && fail "c over its 1000%"
grep -q "warm a inclusive is [0-9.]*% slower, above --fail-above 10%$" \
    "$dir/err" || fail "per range: $(cat "$dir/err")"
# Limits only for ranges that did not slow down, or high enough: 0.
for limits in 'x*=1' 'c=1000,a=1000,b=1000,d=1000'; do
    ctl diff --fail-above "$limits" "$dir/base.hrs" "$dir/slow.hrs" \
        > /dev/null 2> "$dir/err" || fail "--fail-above '$limits'"
done
# A limit under the threshold still gates (and flags) its key.
ctl diff -f jsonl --threshold 1000 --fail-above 'c=10' "$dir/base.hrs" \
    "$dir/slow.hrs" > "$dir/d.jsonl" 2>/dev/null
[ $? -eq 1 ] || fail "a limit under the threshold"
grep -q '"phase":"warm","range":"c","metric":"self",.*"flag":"slower"' \
    "$dir/d.jsonl" || fail "c not flagged under a high threshold"

# Usage errors: 2.
for bad in '=3' 'c=' 'c=x' 'c=-1' ''; do
    ctl diff --fail-above "$bad" "$dir/base.hrs" "$dir/slow.hrs" \
        > /dev/null 2> "$dir/err"
    [ $? -eq 2 ] || fail "--fail-above '$bad': not 2"
    grep -q "bad --fail-above" "$dir/err" || fail "bad limit msg '$bad'"
done
# A count of rounds out of range: 2, the message naming the option given.
for opt in --min-rounds --max-rounds --first-look; do
    for bad in 0 1001 -1 x ''; do
        ctl diff "$opt=$bad" "$dir/base.hrs" "$dir/slow.hrs" \
            > /dev/null 2> "$dir/err"
        [ $? -eq 2 ] || fail "$opt '$bad': not 2"
        grep -q "^hostrangectl diff: bad $opt '$bad' (a number from 1 to 1000)$" \
            "$dir/err" || fail "$opt '$bad': $(cat "$dir/err")"
    done
done
ctl diff "$dir/base.hrs" 2> /dev/null
[ $? -eq 2 ] || fail "one file: not 2"
# Files that cannot be read: 3, whichever side.
head -c 100 "$dir/slow.hrs" > "$dir/cut.hrs"
printf 'not a run\n' > "$dir/foreign.hrs"
for f in missing.hrs cut.hrs foreign.hrs; do
    ctl diff --fail-above 10 "$dir/base.hrs" "$dir/$f" > /dev/null \
        2> "$dir/err"
    [ $? -eq 3 ] || fail "new $f: not 3"
    grep -q "$f" "$dir/err" || fail "$f not named"
    ctl diff "$dir/$f" "$dir/base.hrs" > /dev/null 2>&1
    [ $? -eq 3 ] || fail "base $f: not 3"
done

# Another clock path: the fingerprints differ; a warning, and --strict
# refuses (4) before reading any key.
HOSTRANGE_CLOCK=ordered ctl record -o /dev/null --save "$dir/ord.hrs" -- \
    "$tree" -c 10 || fail "record on the ordered path"
ctl diff "$dir/base.hrs" "$dir/ord.hrs" > /dev/null 2> "$dir/err" ||
    fail "diff of two paths"
# (The base's path is fast, or waiting where the processor's default reads
# wait: hostrange(3), Clock paths.)
grep -Eq "^hostrangectl diff: warning: the machine fingerprints of $dir/base.hrs and $dir/ord.hrs differ: clock_path '(fast|waiting)' vs 'ordered'" \
    "$dir/err" || fail "no warning: $(cat "$dir/err")"
ctl diff --strict "$dir/base.hrs" "$dir/ord.hrs" > "$dir/out" 2> "$dir/err"
[ $? -eq 4 ] || fail "--strict: not 4"
grep -q "refused (--strict)$" "$dir/err" || fail "--strict msg"
[ -s "$dir/out" ] && fail "--strict compared all the same"
ctl diff --strict "$dir/base.hrs" "$dir/slow.hrs" > /dev/null ||
    fail "--strict on the same machine"

# A merge keeps the machine its inputs share, and none when they differ.
ctl merge -o "$dir/same.hrs" "$dir/base.hrs" "$dir/slow.hrs" > /dev/null ||
    fail "merge"
ctl diff --strict "$dir/same.hrs" "$dir/base.hrs" > /dev/null ||
    fail "a merge of one machine"
ctl merge -o "$dir/mixed.hrs" "$dir/base.hrs" "$dir/ord.hrs" > /dev/null ||
    fail "merge of two"
ctl diff "$dir/mixed.hrs" "$dir/base.hrs" > "$dir/out" 2> "$dir/err" ||
    fail "diff of a mixed merge"
grep -q "warning: $dir/mixed.hrs is a merge of runs from different machines$" \
    "$dir/err" || fail "mixed: $(cat "$dir/err")"
grep -q "^base $dir/mixed.hrs: a merge of 2 runs from different machines" \
    "$dir/out" || fail "mixed line"
ctl diff --strict "$dir/mixed.hrs" "$dir/base.hrs" > /dev/null 2>&1
[ $? -eq 4 ] || fail "--strict on a mixed merge"
exit 0
