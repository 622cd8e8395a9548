#!/bin/sh
# Google Benchmark's results in the history (history add --from gbench),
# from the real producer: tests/data/import/bench_work.cc built against
# libbenchmark (pkg-config benchmark), run with --benchmark_format=json
# and 3 repetitions at 10 "commits", its work four times as much from the
# sixth; each file added; detect finds the step at c6 in cpu_time (its
# only change there), on the machine the files name; a file added twice
# is stored once; the repetitions are the rounds of show --format jsonl;
# a file that is not JSON is refused. Skips (77) without a
# C++ compiler or libbenchmark-dev.
set -u
: "${HOSTRANGECTL:?}"
cxx=${HOSTRANGE_TEST_CXX:-c++}
src=${srcdir:-.}
command -v "${cxx%% *}" >/dev/null 2>&1 || { echo "no C++ compiler: skipped"; exit 77; }
pkg-config --exists benchmark 2>/dev/null ||
    { echo "no libbenchmark-dev (pkg-config benchmark): skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
db=$dir/h.db

# shellcheck disable=SC2046
$cxx -O2 -o "$dir/bench_work" "$src/tests/data/import/bench_work.cc" \
    $(pkg-config --cflags --libs benchmark) || fail "cannot build the benchmark"
for i in 1 2 3 4 5 6 7 8 9 10; do
    work=1; [ "$i" -ge 6 ] && work=4
    HOSTRANGE_TEST_WORK=$work "$dir/bench_work" --benchmark_format=json \
        --benchmark_repetitions=3 --benchmark_min_time=0.01 \
        --benchmark_context=commit=c$i > "$dir/c$i.json" 2> "$dir/err" ||
        fail "bench_work: $(cat "$dir/err")"
    ctl history add --db "$db" --from gbench --meta time=$((1700000000 + i * 60)) \
        "$dir/c$i.json" > "$dir/out" || fail "add c$i: $(cat "$dir/out")"
    grep -q "^added $dir/c$i.json: run c[0-9a-f]\{31\}, 2 keys$" "$dir/out" ||
        fail "add c$i said: $(cat "$dir/out")"
done
machine=$(ctl history list --db "$db" | head -1 | cut -f4)
echo "$machine" | grep -q '^[0-9]* cpus, [0-9]* MHz$' || fail "machine '$machine'"
[ "$(ctl history list --db "$db" | cut -f3 | tr '\n' ' ')" = "c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 " ] ||
    fail "list: $(ctl history list --db "$db")"

# One finding, at c6, its series cpu_time's (and real_time's where the
# machine let it show); judged alone (--series), cpu_time's step.
ctl history detect --db "$db" -f jsonl > "$dir/detect" || fail "detect exit $?"
[ "$(wc -l < "$dir/detect")" -eq 2 ] && head -1 "$dir/detect" | grep -q '"findings":1}$' &&
    sed -n 2p "$dir/detect" | grep -q "^{\"finding\":1,\"machine\":\"$machine\",\"commit\":\"c6\",.*\"series\":\[.*\"range\":\"BM_Work/20000\",\"metric\":\"cpu_time\",\"commit\":\"c6\"," ||
    fail "detect: $(cat "$dir/detect")"
ctl history detect --db "$db" --series -f jsonl > "$dir/detect" || fail "detect --series exit $?"
# CPU time is judged: on a machine whose cores other jobs share, real
# time is as noisy as the step itself, and detect may or may not find it.
grep '"metric":"cpu_time"' "$dir/detect" > "$dir/cpu"
[ "$(wc -l < "$dir/cpu")" -eq 1 ] || fail "detect: $(cat "$dir/detect")"
grep -q "^{\"node\":\"gbench\",\"operator\":\"bench_work\",\"backend\":\"-\",\"phase\":\"warm\",\"range\":\"BM_Work/20000\",\"metric\":\"cpu_time\",\"machine\":\"$machine\",\"commit\":\"c6\",.*\"change\":[1-9]\.[0-9]*,.*\"direction\":\"slower\",\"commit_before\":\"c5\"}$" \
    "$dir/cpu" || fail "no step at c6: $(cat "$dir/cpu")"

# The same file again: stored already.
ctl history add --db "$db" --from google-benchmark --meta time=1700000060 \
    "$dir/c1.json" > "$dir/out" || fail "add again"
grep -q 'is stored already; nothing changed$' "$dir/out" || fail "again: $(cat "$dir/out")"
[ "$(ctl history list --db "$db" | wc -l)" -eq 10 ] || fail "a run stored twice"
# The repetitions are its rounds.
ctl history show --db "$db" -f jsonl --range BM_Work/20000 > "$dir/show" || fail show
grep -c '"metric":"real_time".*"rounds":3' "$dir/show" | grep -qx 10 ||
    fail "rounds: $(head -1 "$dir/show")"
# A file that is not JSON: exit 3, nothing stored.
printf '{"context": {}, "benchmarks": [}' > "$dir/bad.json"
ctl history add --db "$db" --from gbench "$dir/bad.json" 2> "$dir/err"
[ $? -eq 3 ] || fail "a bad file not refused with 3"
grep -q "bad.json: not JSON: line 1, column 32: not a value; nothing of it stored" "$dir/err" ||
    fail "bad file: $(cat "$dir/err")"
echo "ok"
