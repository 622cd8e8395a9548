#!/bin/sh
# dump --format bmf (Bencher Metric Format) and --format benchmark-action
# (github-action-benchmark's customSmallerIsBetter) of a made-up run
# (tests/helpers/mkrun) with hostile names: read back by Python's json
# module, not by our own parser; every key there once, with its median,
# min and max in ns; a name with quotes, a backslash, a newline and
# non-ASCII kept byte for byte; an empty report an empty document; a
# format that dump has and other commands do not refused by them.
set -u
: "${HOSTRANGECTL:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
py=python3
if [ -f "${top_builddir:-.}/python/check.env" ]; then
    . "${top_builddir:-.}/python/check.env"
    py=$HR_PYTHON
fi
command -v "$py" >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }

odd=$(printf 'q"b\\\\n\nl\303\251')
"$mkrun" -o "$dir/r.hrs" -k "n1/backend.submit=1000" -k "$odd/cache.lookup=500" ||
    fail mkrun
ctl dump --from "$dir/r.hrs" --format bmf -o "$dir/bmf.json" || fail "dump bmf"
ctl dump --from "$dir/r.hrs" --format benchmark-action > "$dir/action.json" ||
    fail "dump benchmark-action"
"$py" - "$dir/bmf.json" "$dir/action.json" "$odd" <<'PY' || fail "the readers disagree"
import json, sys
bmf = json.load(open(sys.argv[1], encoding="utf-8"))
action = json.load(open(sys.argv[2], encoding="utf-8"))
odd = sys.argv[3]
want = {
    "n1 op/cpu warm backend.submit": {
        "inclusive": {"value": 1000.0, "lower_value": 998.0, "upper_value": 1002.0},
        "self": {"value": 500.0, "lower_value": 499.0, "upper_value": 501.0}},
    odd + " op/cpu warm cache.lookup": {
        "inclusive": {"value": 500.0, "lower_value": 498.0, "upper_value": 502.0},
        "self": {"value": 250.0, "lower_value": 249.0, "upper_value": 251.0}},
}
assert bmf == want, bmf
assert list(bmf) == list(want)
assert isinstance(action, list) and len(action) == 4, action
for entry in action:
    assert set(entry) == {"name", "unit", "value", "extra"}, entry
    assert entry["unit"] == "ns" and isinstance(entry["value"], float)
    assert isinstance(entry["name"], str) and isinstance(entry["extra"], str)
assert action[0] == {"name": "n1 op/cpu warm backend.submit inclusive",
                     "unit": "ns", "value": 1000.0,
                     "extra": "count 5, mean 1000.0 ns, min 998.0 ns, max 1002.0 ns"}, action[0]
assert [e["name"] for e in action[1:]] == [
    "n1 op/cpu warm backend.submit self",
    odd + " op/cpu warm cache.lookup inclusive",
    odd + " op/cpu warm cache.lookup self"]
assert [e["value"] for e in action] == [1000.0, 500.0, 500.0, 250.0]
PY
# A filter that keeps nothing: empty documents.
[ "$(ctl dump --from "$dir/r.hrs" -f bmf --range none)" = "{}" ] || fail "empty bmf"
[ "$(ctl dump --from "$dir/r.hrs" -f benchmark-action --range none)" = "[]" ] ||
    fail "empty benchmark-action"
# history show keeps its own formats.
ctl history show --db "$dir/h.db" -f bmf 2> "$dir/err"
[ $? -eq 2 ] || fail "history show took bmf"
ctl dump --from "$dir/r.hrs" -f bmff 2> "$dir/err"
[ $? -eq 2 ] && grep -q "bad format 'bmff' (jsonl, csv or table, folded, tree, pprof, bmf or benchmark-action)" \
    "$dir/err" || fail "bad format: $(cat "$dir/err")"
echo ok
