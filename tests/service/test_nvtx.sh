#!/bin/sh
# The NVTX tool end to end: programs marked with NVTX only, run unchanged
# under `hostrangectl record --nvtx` (a real hostranged), report the ranges
# they mark with the phase of each calling path (its first occurrence in a
# process cold, later ones warm); and a program whose tool is missing or
# reaches no daemon runs normally and prints only its own output. Skips
# (77) when hostrange was built without the NVTX headers.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${top_builddir:?}"
prog="$top_builddir/tests/helpers/nvtx_prog"
tool="$top_builddir/nvtx/.libs/libhostrange-nvtx.so"
libs="$top_builddir/tests/helpers/.libs"
if [ ! -x "$prog" ] || [ ! -f "$tool" ]; then
    echo "SKIP: built without the NVTX headers (no $prog or $tool)"
    exit 77
fi
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/r.csv" ] && cat "$dir/r.csv"; exit 1; }

# record NAME [OPTION]... -- ARG...: the program under record --nvtx; the
# report in $dir/r.csv, the program's stdout in $dir/out.
record() {
    timeout 120 "$HOSTRANGECTL" record --nvtx -f csv -o "$dir/r.csv" "$@" \
        > "$dir/out" || fail "record $*"
}
# row PHASE RANGE METRIC COUNT: the report has that row (node nvtx_prog).
row() {
    grep -q "^nvtx_prog,nvtx,host,$1,$2,$3,$4,ns," "$dir/r.csv" ||
        fail "no row $1 $2 $3 count $4"
}
# rows N: the report has N rows.
rows() {
    [ "$(tail -n +2 "$dir/r.csv" | wc -l)" -eq "$1" ] ||
        fail "$(tail -n +2 "$dir/r.csv" | wc -l) rows, not $1"
}

# Nested push/pop: each path's first range cold, the others warm; self
# times beside inclusive ones.
record -- "$prog" nested 10
for m in inclusive self; do
    row cold outer $m 1
    row warm outer $m 9
    row cold inner $m 1
    row warm inner $m 19
    row cold leaf $m 1
    row warm leaf $m 19
done
rows 12
[ ! -s "$dir/out" ] || fail "output on stdout: $(cat "$dir/out")"

# Domains: DOMAIN:name for registered and ASCII messages, a wide message
# in the default domain; a domain and string registered twice are one
# range; marks are no ranges.
record -- "$prog" domains
row cold dom:reg inclusive 1
row warm dom:reg inclusive 5
row cold dom:asc inclusive 1
row warm dom:asc inclusive 2
row cold wide self 1
row warm wide self 1
rows 12
grep -q ',mark,' "$dir/r.csv" && fail "a mark reported as a range"

# Start/end ranges, ended on another thread or not: inclusive only.
record -- "$prog" threads 50
row cold handoff inclusive 1
row warm handoff inclusive 49
row cold local inclusive 1
row warm local inclusive 49
rows 4

# Two shared objects, each with its own NVTX, and the program's own: one
# tool, one process. lib.inner has a path under each library's range.
record -- "$prog" libs "$libs/libnvtx_a.so" "$libs/libnvtx_b.so"
row cold lib.a inclusive 1
row warm lib.a inclusive 2
row cold lib.b self 1
row warm lib.b self 2
row cold lib.inner inclusive 2
row warm lib.inner inclusive 4
row cold main inclusive 1
rows 14

# A forked child is a process of its own: its first "parent" is cold too.
record -- "$prog" fork
row cold parent inclusive 2
row warm parent inclusive 1
row cold child inclusive 1
row warm child inclusive 1
rows 8

# Messages over the limit of a name: cut at a character's boundary and
# marked with U+2026 and a hash of the whole message, so that two long
# messages stay two ranges; the good range around them is whole, and
# record says how many names it cut.
timeout 120 "$HOSTRANGECTL" record --nvtx -f csv -o "$dir/r.csv" -- \
    "$prog" long 10 > "$dir/out" 2> "$dir/err" || fail "record long"
row cold ok.outer inclusive 1
row warm ok.outer inclusive 9
row warm ok.outer self 9
rows 12
grep -qx 'hostrange: 2 names cut to 4096 bytes' "$dir/err" ||
    fail "record did not say the names were cut: $(cat "$dir/err")"
tail -n +2 "$dir/r.csv" | cut -d, -f5 | grep -v '^ok.outer$' | sort -u \
    > "$dir/cut"
[ "$(wc -l < "$dir/cut")" -eq 2 ] || fail "not two cut names"
while read -r name; do
    # 4096 bytes, or one less where that cut a character (U+00E9).
    len=$(printf %s "$name" | wc -c)
    [ "$len" -eq 4096 ] || [ "$len" -eq 4095 ] ||
        fail "a cut name of $len bytes"
    printf %s "$name" | grep -q "$(printf '\342\200\246')[0-9a-f]\{16\}\$" ||
        fail "a cut name without its mark and hash"
    printf %s "$name" | iconv -f UTF-8 -t UTF-8 > /dev/null 2>&1 ||
        fail "a cut name that is not UTF-8"
done < "$dir/cut"

# --nvtx-window: only the extent of the named range is collected.
record --nvtx-window=step -- "$prog" window 7
row cold step inclusive 1
row cold inside inclusive 1
row warm inside inclusive 6
rows 6

# The labels from the environment.
HOSTRANGE_NODE=suite/case HOSTRANGE_BACKEND=cuda HOSTRANGE_OPERATOR=op \
    record -- "$prog" plain 3
grep -q '^suite/case,op,cuda,warm,plain,inclusive,2,' "$dir/r.csv" ||
    fail "labels from the environment"
[ "$(cat "$dir/out")" = done ] || fail "stdout: $(cat "$dir/out")"

# HOSTRANGE=0: the tool detaches and the program runs.
HOSTRANGE=0 record -- "$prog" plain 3
rows 0
[ "$(cat "$dir/out")" = done ] || fail "stdout with HOSTRANGE=0"

# Usage errors.
"$HOSTRANGECTL" record --nvtx-window=x -- true 2>/dev/null
[ $? -eq 2 ] || fail "--nvtx-window without --nvtx is a usage error"

# NVTX_INJECTION64_PATH names a missing file: NVTX drops it, the program
# runs normally, nothing is reported.
NVTX_INJECTION64_PATH="$dir/missing.so" timeout 120 "$HOSTRANGECTL" record \
    -f csv -o "$dir/r.csv" -- "$prog" nested 5 > "$dir/out" ||
    fail "missing tool: the program failed"
rows 0
[ ! -s "$dir/out" ] || fail "missing tool: output on stdout"

# No daemon at all: the program runs to its end (a hang is caught by the
# timeout), prints only its own output and exits 0; there is no socket, so
# it does not wait to flush.
HOSTRANGE_RUNTIME_DIR="$dir/no-daemon" NVTX_INJECTION64_PATH="$tool" \
    timeout 120 "$prog" plain 100000 > "$dir/out" 2> "$dir/err" ||
    fail "no daemon: the program failed"
[ "$(cat "$dir/out")" = done ] || fail "no daemon: stdout: $(cat "$dir/out")"
[ ! -s "$dir/err" ] || fail "no daemon: stderr: $(cat "$dir/err")"

# A daemon of our own, for stats: the marks are counted there (3 in the
# domain, 1 in the default one).
export HOSTRANGE_RUNTIME_DIR="$dir/rt"
# Not under timeout: the kill -9 below must reach the daemon itself (killing
# a wrapper would leave it running); the exit trap stops it otherwise.
"$HOSTRANGED" -q & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
NVTX_INJECTION64_PATH="$tool" timeout 120 "$prog" domains ||
    fail "domains under a daemon"
"$HOSTRANGECTL" stats > "$dir/stats" || fail "stats"
grep -q '^client\.1\.label nvtx_prog$' "$dir/stats" || fail "stats: label"
grep -q '^client\.1\.marks 4$' "$dir/stats" ||
    fail "stats: marks: $(grep marks "$dir/stats")"

# The daemon dies, its socket stays: the program still runs to its end,
# waiting at most HOSTRANGE_FLUSH_TIMEOUT_MS at exit, and prints only its
# own output.
kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
HOSTRANGE_FLUSH_TIMEOUT_MS=200 NVTX_INJECTION64_PATH="$tool" \
    timeout 120 "$prog" plain 1000 > "$dir/out" 2> "$dir/err" ||
    fail "dead daemon: the program failed"
[ "$(cat "$dir/out")" = done ] || fail "dead daemon: stdout: $(cat "$dir/out")"
[ ! -s "$dir/err" ] || fail "dead daemon: stderr: $(cat "$dir/err")"
echo "PASS"
