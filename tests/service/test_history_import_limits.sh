#!/bin/sh
# Other tools' results at the limits of a key's name (history add --from
# gbench, pytest-benchmark and csv): a benchmark's name (the key's range)
# of exactly 4,096 bytes is stored whole and shown back; one of 4,097
# bytes, an empty one, or one holding a NUL byte (JSON's \u0000, a raw
# NUL in CSV) is refused where it enters (exit 3, the benchmark and why
# named) with nothing of the file stored, never cut or merged with
# another; likewise a pytest-benchmark group (the key's operator) over
# the limit, while an empty group stays allowed; and a pytest-benchmark
# file holding one benchmark twice (a database error before). A gbench
# time that is there but negative or not finite is named as such. CSV
# runs and names interleaved keep each run's keys and rounds in the
# file's order. And a CSV file of 10,000 benchmarks is read in memory of
# its own size (peak RSS under 512 MB: 18 MB, 270 MB with AddressSanitizer;
# every field once held the rest of the file, 6.6 GB, and the list of what
# the import owns grew by one element a time, 1.5 GB and 60 s with
# AddressSanitizer), every key stored with the values of its lines. A
# directory given as a file is said to be one.
set -u
: "${HOSTRANGECTL:?}"
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
at() { printf 'line %s: ' "$1"; }

# The files, written by Python (the names' bytes exactly).
python3 - "$dir" <<'EOF' || fail "cannot write the files"
import json, sys
d = sys.argv[1]
def gbench(name, real=5, exe=None):
    ctx = {"date": "2026-01-01T00:00:00+00:00", "host_name": "h"}
    if exe is not None:
        ctx["executable"] = exe
    return {"context": ctx, "benchmarks": [
        {"name": name, "run_type": "iteration", "iterations": 10,
         "real_time": real, "cpu_time": 5, "time_unit": "ns"}]}
def pytest(name, group=None):
    return {"machine_info": {"node": "h", "cpu": {"brand_raw": "cpu"}},
            "datetime": "2026-01-01T00:00:00", "benchmarks": [
                {"fullname": name, "group": group, "stats": {
                    "rounds": 3, "mean": 1e-6, "median": 1e-6,
                    "q1": 1e-6, "q3": 1e-6}}]}
def write(f, doc):
    with open(f"{d}/{f}", "w") as o:
        json.dump(doc, o)
write("g4096.json", gbench("g" * 4096))
write("g4097.json", gbench("g" * 4097))
write("gempty.json", gbench(""))
write("gnul.json", gbench("BM_a\0b"))
write("gexe.json", gbench("BM_a", exe="/bin/" + "x" * 4097))
write("gneg.json", gbench("BM_a", real=-5))
write("p4096.json", pytest("p" * 4096, group=""))
write("p4097.json", pytest("p" * 4097))
write("pnul.json", pytest("test_a\0b"))
write("pgroup.json", pytest("test_a", group="q" * 4097))
dup = pytest("test_a")
dup["benchmarks"] *= 2
write("pdup.json", dup)
with open(f"{d}/c4096.csv", "w") as o:
    o.write("c1,1700000000,m,%s,5\n" % ("c" * 4096))
with open(f"{d}/c4097.csv", "w") as o:
    o.write("c1,1700000000,m,ok,5\nc1,1700000000,m,%s,5\n" % ("c" * 4097))
with open(f"{d}/cnul.csv", "wb") as o:
    o.write(b"c1,1700000000,m,ok,5\nc1,1700000000,m,bench_a\0b,5\n")
# 10,000 benchmarks of 2 lines each, interleaved: bench_i is i and 2i+1.
with open(f"{d}/big.csv", "w") as o:
    for i in range(10000):
        o.write("c1,1700000000,m,bench_%d,%d\n" % (i, i))
    for i in range(10000):
        o.write("c1,1700000000,m,bench_%d,%d\n" % (i, 2 * i + 1))
EOF

# add_ok FORMAT FILE: stored, the name read back whole (4,096 bytes).
add_ok() {
    rm -f "$dir/h.db"
    ctl history add --db "$dir/h.db" --from "$1" --machine m \
        --meta commit=c1 "$dir/$2" > "$dir/out" 2> "$dir/err" ||
        fail "$2 not stored: $(cat "$dir/err")"
    ctl history show --db "$dir/h.db" -f jsonl > "$dir/show" ||
        fail "show of $2"
    python3 - "$dir/show" "$3" <<'EOF' || fail "$2: the name not read back whole"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(len(r["range"]) == 4096 for r in rows), rows[:1]
assert all(r["range"] == sys.argv[2] * 4096 for r in rows)
EOF
}
add_ok gbench g4096.json g
add_ok pytest-benchmark p4096.json p
add_ok csv c4096.csv c

# add_refused FORMAT FILE WHY: exit 3, WHY said, nothing stored.
add_refused() {
    rm -f "$dir/h.db"
    ctl history add --db "$dir/h.db" --from "$1" --machine m \
        --meta commit=c1 "$dir/$2" > "$dir/out" 2> "$dir/err"
    rc=$?
    [ "$rc" -eq 3 ] || fail "$2: exit $rc, not 3: $(cat "$dir/out" "$dir/err")"
    grep -q -F -e "$3" "$dir/err" || fail "$2 said: $(cat "$dir/err")"
    grep -q 'nothing of it stored' "$dir/err" || fail "$2: $(cat "$dir/err")"
    [ -s "$dir/out" ] && fail "$2: $(cat "$dir/out")"
    if [ -e "$dir/h.db" ]; then
        [ -z "$(ctl history list --db "$dir/h.db")" ] ||
            fail "$2: a part stored: $(ctl history list --db "$dir/h.db")"
    fi
}
add_refused gbench g4097.json \
    "g4097.json: benchmark 0: its name is 4097 bytes, over the 4096 of a key's name"
add_refused gbench gempty.json "gempty.json: benchmark 0: its name is empty"
add_refused gbench gnul.json "gnul.json: benchmark 0: its name holds a NUL byte"
add_refused gbench gexe.json \
    "gexe.json: context: its executable is 4097 bytes, over the 4096"
add_refused gbench gneg.json \
    "gneg.json: benchmark BM_a: real_time -5 and cpu_time 5 are not both finite and at least 0"
add_refused pytest-benchmark p4097.json \
    "p4097.json: benchmark 0: its name is 4097 bytes, over the 4096"
add_refused pytest-benchmark pnul.json \
    "pnul.json: benchmark 0: its name holds a NUL byte"
add_refused pytest-benchmark pgroup.json \
    "pgroup.json: benchmark 0: its group is 4097 bytes, over the 4096"
add_refused pytest-benchmark pdup.json \
    "pdup.json: benchmark 1: test_a is there twice"
add_refused csv c4097.csv \
    "c4097.csv: line 2: its name is 4097 bytes, over the 4096"
add_refused csv cnul.csv "cnul.csv: line 2: a field holds a NUL byte"
mkdir "$dir/adir" || exit 99
LC_ALL=C add_refused csv adir "adir: cannot be read: Is a directory"

# Runs and names interleaved: each run's keys in the order of its first
# lines, each key's rounds in the order of its lines.
printf '%s\n' c1,1700000000,m,a,1 c2,1700000060,m,a,10 c1,1700000000,m,a,3 \
    c2,1700000060,m,b,20 c1,1700000000,m,b,5 c1,1700000000,m,a,2 \
    > "$dir/mixed.csv"
rm -f "$dir/h.db"
ctl history add --db "$dir/h.db" --from csv "$dir/mixed.csv" > "$dir/out" ||
    fail "mixed.csv not stored"
[ "$(grep -c '^added .*mixed.csv: run c[0-9a-f]*, 2 keys$' "$dir/out")" -eq 2 ] ||
    fail "mixed.csv: $(cat "$dir/out")"
ctl history show --db "$dir/h.db" -f csv | tail -n +2 |
    cut -d, -f5,9,13,15,19 | sort \
    > "$dir/show" || fail "show of mixed.csv"
printf '%s\n' 'a,c1,3,2.0,1.0;3.0;2.0' a,c2,1,10.0,10.0 b,c1,1,5.0,5.0 \
    b,c2,1,20.0,20.0 |
    cmp -s - "$dir/show" || fail "mixed.csv read back: $(cat "$dir/show")"

# 10,000 benchmarks: in memory of the file's size, every key with its two
# values (the median of i and 2i+1 is 1.5i+0.5).
rm -f "$dir/h.db"
python3 - "$HOSTRANGECTL" "$dir" <<'EOF' || fail "the large CSV file"
import json, resource, subprocess, sys
ctl, d = sys.argv[1], sys.argv[2]
subprocess.run([ctl, "history", "add", "--db", d + "/h.db", "--from", "csv",
                d + "/big.csv"], check=True, stdout=subprocess.DEVNULL)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
assert peak_mb < 512, "history add took %.0f MB" % peak_mb
out = subprocess.run([ctl, "history", "show", "--db", d + "/h.db", "-f",
                      "jsonl"], check=True, capture_output=True).stdout
rows = [json.loads(l) for l in out.splitlines()]
assert len(rows) == 10000, len(rows)
for r in rows:
    i = int(r["range"][len("bench_"):])
    assert r["count"] == 2 and r["median"] == 1.5 * i + 0.5, r
print("10,000 keys stored, peak RSS %.0f MB" % peak_mb)
EOF
exit 0
