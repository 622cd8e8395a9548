#!/bin/sh
# pytest-benchmark's results in the history (history add --from
# pytest-benchmark), from the real producer: tests/data/import/test_work.py
# run with --benchmark-json at 8 "commits", its work four times as much
# from the fifth, timed in CPU time (--benchmark-timer: on a machine whose
# cores other jobs share, wall time is as noisy as the step); each file
# added with its commit and time from --meta; detect finds the step at c5,
# its only change; the machine is the CPU the
# file names, the key its fullname. Skips (77) where the interpreter
# (configure's, else python3) has no pytest-benchmark.
set -u
: "${HOSTRANGECTL:?}"
src=$(cd "${srcdir:-.}" && pwd)
top=${top_builddir:-.}
py=python3
if [ -f "$top/python/check.env" ]; then
    . "$top/python/check.env"
    py=$HR_PYTHON
fi
"$py" -c 'import pytest_benchmark' 2>/dev/null ||
    { echo "$py has no pytest-benchmark (python3-pytest-benchmark): skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
db=$dir/h.db

cp "$src/tests/data/import/test_work.py" "$dir/" || exit 99
for i in 1 2 3 4 5 6 7 8; do
    work=1; [ "$i" -ge 5 ] && work=4
    (cd "$dir" && HOSTRANGE_TEST_WORK=$work PYTHONDONTWRITEBYTECODE=1 \
        "$py" -m pytest -q -p no:cacheprovider --benchmark-json=c$i.json \
        --benchmark-min-rounds=7 --benchmark-max-time=0.01 \
        --benchmark-warmup=off --benchmark-timer=time.process_time \
        test_work.py > out 2>&1) ||
        fail "pytest: $(cat "$dir/out")"
    ctl history add --db "$db" --from pytest-benchmark --meta commit=c$i \
        --meta time=$((1700000000 + i * 60)) "$dir/c$i.json" > "$dir/out" ||
        fail "add c$i: $(cat "$dir/out")"
    grep -q "^added $dir/c$i.json: run c[0-9a-f]\{31\}, 1 keys$" "$dir/out" ||
        fail "add c$i said: $(cat "$dir/out")"
done
[ "$(ctl history list --db "$db" | cut -f3 | tr '\n' ' ')" = "c1 c2 c3 c4 c5 c6 c7 c8 " ] ||
    fail "list: $(ctl history list --db "$db")"
machine=$(ctl history list --db "$db" | head -1 | cut -f4)
[ -n "$machine" ] && [ "$(ctl history list --db "$db" | cut -f4 | sort -u | wc -l)" -eq 1 ] ||
    fail "machines: $(ctl history list --db "$db" | cut -f4 | sort -u)"
"$py" -c 'import json, sys
m = json.load(open(sys.argv[1]))["machine_info"]
cpu = m.get("cpu") or {}
brand = cpu.get("brand_raw") or cpu.get("brand") or m.get("processor") or m.get("machine")
print(brand + (", %d cores" % cpu["count"] if cpu.get("count") else ""))' \
    "$dir/c1.json" > "$dir/want" || fail "cannot read c1.json"
[ "$machine" = "$(cat "$dir/want")" ] || fail "machine '$machine', not '$(cat "$dir/want")'"

# One finding, at c5; judged alone (--series), the step of that series.
ctl history detect --db "$db" -f jsonl > "$dir/detect" || fail "detect exit $?"
[ "$(wc -l < "$dir/detect")" -eq 2 ] && head -1 "$dir/detect" | grep -q '"findings":1}$' &&
    sed -n 2p "$dir/detect" | grep -q "^{\"finding\":1,\"machine\":\"$machine\",\"commit\":\"c5\",.*\"start\":{\"node\":\"pytest-benchmark\",.*\"range\":\"test_work.py::test_work\",\"metric\":\"time\",\"commit\":\"c5\"," ||
    fail "detect: $(cat "$dir/detect"); the series:
$(ctl history show --db "$db" --format csv)"
ctl history detect --db "$db" --series -f jsonl > "$dir/detect" || fail "detect --series exit $?"
[ "$(wc -l < "$dir/detect")" -eq 1 ] || fail "detect --series: $(cat "$dir/detect")"
grep -q "^{\"node\":\"pytest-benchmark\",\"operator\":\"-\",\"backend\":\"-\",\"phase\":\"warm\",\"range\":\"test_work.py::test_work\",\"metric\":\"time\",\"machine\":\"$machine\",\"commit\":\"c5\",.*\"change\":[1-9]\.[0-9]*,.*\"direction\":\"slower\",\"commit_before\":\"c4\"}$" \
    "$dir/detect" || fail "no step at c5: $(cat "$dir/detect")"
# --fail-above gates on it as on any key.
ctl history detect --db "$db" --fail-above 50 > /dev/null 2>&1
[ $? -eq 1 ] || fail "--fail-above 50 did not fail"
# A file of the other tool: refused, exit 3.
ctl history add --db "$db" --from gbench "$dir/c1.json" 2> "$dir/err"
[ $? -eq 3 ] || fail "pytest-benchmark's file taken as gbench's"
grep -q "c1.json: not Google Benchmark's JSON (no context and benchmarks); nothing of it stored" \
    "$dir/err" || fail "$(cat "$dir/err")"
echo ok
