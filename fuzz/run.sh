#!/bin/sh
# Runs one libFuzzer target of the build directory for a bounded time:
#   run.sh SECONDS "EXTRA-OPTIONS" NAME
# with fuzz/found/NAME for new inputs and fuzz/corpus/NAME for the seeds.
# Any crash, leak, sanitizer report or failed check ends it with a failure
# status, the input saved as fuzz/artifacts/NAME-*, and the end of the log
# shown; otherwise prints how many inputs were run.
set -u
seconds=$1
extra=$2
name=$3
log=fuzz/fuzz-$name.log
mkdir -p "fuzz/found/$name" fuzz/artifacts
echo "fuzz: $name for $seconds s"
# shellcheck disable=SC2086 # extra options are words
if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$name-" $extra \
        "fuzz/found/$name" "fuzz/corpus/$name" >"$log" 2>&1; then
    tail -n 80 "$log"
    echo "fuzz: $name FAILED (log: $log; input: fuzz/artifacts/$name-*)"
    exit 1
fi
# A sanitizer report that did not end the run still fails it.
if grep -q -E "ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:" "$log"; then
    grep -E -A 20 "ERROR: |runtime error:" "$log" | head -n 80
    echo "fuzz: $name FAILED: a sanitizer report (log: $log)"
    exit 1
fi
grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$log" |
    sed "s/^/fuzz: $name: /"
