#!/bin/sh
# pprof profiles read by the real reader, go tool pprof (Debian's golang-go):
# a program with a known tree (tests/helpers/pathtree.c) through a real
# daemon; -raw shows one sample per path with its four labels; -top's self
# total is the folded stacks' total, and -sample_index=calls counts the
# calls; -tagfocus phase=warm keeps the warm paths only; the profile of a
# saved run (--from) is the live one byte for byte; the filters of dump
# apply; and -diff_base of two runs puts the slowed range first. Skips (77)
# without go.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PATHTREE:?}"
command -v go >/dev/null 2>&1 || { echo "go not found: skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# go keeps its cache and pprof its downloads under HOME: a private one.
export HOME="$dir/home" GOCACHE="$dir/home/gocache" PPROF_TMPDIR="$dir/home"
mkdir -p "$HOME"
go tool pprof -h >/dev/null 2>&1 ||
    { echo "go tool pprof does not run: skipped"; exit 77; }
pprof() { go tool pprof -nodefraction=0 "$@" 2>"$dir/pprof.err" ||
              { cat "$dir/pprof.err"; fail "go tool pprof $*"; }; }
# The "N total" of a -top with -unit=ns (or without a unit: counts).
top_total() { sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)\(ns\)\{0,1\} total$/\1/p'; }
folded_total() { awk '{ s += $NF } END { print s + 0 }'; }

export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 300 "$HOSTRANGED" -q & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
timeout 60 "$HOSTRANGE_TEST_PATHTREE" -c 10 || fail "pathtree"

"$HOSTRANGECTL" dump --format pprof -o "$dir/run.pb.gz" ||
    fail "dump --format pprof"
"$HOSTRANGECTL" dump --format pprof > "$dir/stdout.pb.gz" ||
    fail "dump --format pprof to a pipe"
cmp -s "$dir/run.pb.gz" "$dir/stdout.pb.gz" || fail "-o and stdout differ"
"$HOSTRANGECTL" dump --format folded > "$dir/run.folded" || fail folded

# -raw: 13 samples (one per path of the folded stacks), each labelled.
pprof -raw "$dir/run.pb.gz" > "$dir/raw.txt"
grep -q '^calls/count self/nanoseconds\[dflt\]$' "$dir/raw.txt" ||
    fail "sample types: $(sed -n 5p "$dir/raw.txt")"
n=$(grep -c 'backend:\[cpu\] nodeid:\[tests/paths::node\[0\]\] operator:\[tree\] phase:\[\(cold\|warm\)\]' "$dir/raw.txt")
[ "$n" -eq "$(wc -l < "$dir/run.folded")" ] || fail "labelled samples: $n"
# The calls of a;b;c in the warm window: 20, leaf first (c b a).
loc() { awk -v n="$1" '$3 == "M=1" && $4 == n { sub(":", "", $1); print $1 }' \
        "$dir/raw.txt"; }
grep -qE "^ +20 +[0-9]+: $(loc c) $(loc b) $(loc a) \$" "$dir/raw.txt" ||
    fail "a;b;c: 20 calls, leaf first"
grep -q "we;ird name" "$dir/raw.txt" || fail "the escaped name as it is"

# -top: self totals as the folded stacks', calls as counted.
want=$(folded_total < "$dir/run.folded")
got=$(pprof -top -unit=ns "$dir/run.pb.gz" | top_total)
[ "$got" = "$want" ] || fail "self total: pprof $got, folded $want"
"$HOSTRANGECTL" dump --format folded --value count > "$dir/count.folded"
want=$(folded_total < "$dir/count.folded")
got=$(pprof -top -sample_index=calls "$dir/run.pb.gz" | top_total)
[ "$got" = "$want" ] || fail "calls: pprof $got, folded $want"
# Flat is self, cumulative inclusive: a's cumulative holds all of a's tree.
pprof -top -unit=ns "$dir/run.pb.gz" > "$dir/top.txt"
a_cum=$(awk '$NF == "a" { sub("ns", "", $4); print $4 }' "$dir/top.txt")
a_tree=$(awk '{ split($1, f, ";"); if (f[3] == "a") s += $NF }
              END { print s + 0 }' "$dir/run.folded")
[ "$a_cum" = "$a_tree" ] || fail "a cumulative $a_cum, its paths $a_tree"

# -tagfocus phase=warm: the warm paths only.
want=$(grep ';warm;' "$dir/run.folded" | folded_total)
got=$(pprof -top -unit=ns -tagfocus phase=warm "$dir/run.pb.gz" |
      sed -n 's/^Showing nodes accounting for \([0-9]*\)ns, .*/\1/p')
[ "$got" = "$want" ] || fail "tagfocus phase=warm: $got, folded $want"

# The same filters as dump.
"$HOSTRANGECTL" dump --format pprof --phase cold -o "$dir/cold.pb.gz" ||
    fail "dump --format pprof --phase cold"
pprof -raw "$dir/cold.pb.gz" > "$dir/cold.txt"
grep -q 'phase:\[warm\]' "$dir/cold.txt" && fail "warm samples in --phase cold"
[ "$(grep -c 'phase:\[cold\]' "$dir/cold.txt")" -eq 5 ] ||
    fail "cold samples"

# A saved run gives the very same profile.
"$HOSTRANGECTL" save -o "$dir/base.hrs" >/dev/null || fail save
"$HOSTRANGECTL" dump --from "$dir/base.hrs" --format pprof \
    -o "$dir/base.pb.gz" || fail "dump --from --format pprof"
cmp -s "$dir/base.pb.gz" "$dir/run.pb.gz" || fail "--from differs from live"

# -diff_base: a second run whose c spins 1 ms instead of 2 us, about 40 ms
# more in all: more than a busy machine's preemption of another range in
# either run can move that range's self total (a time slice is a few ms;
# with c spinning three times as long, about 0.2 ms more, one preemption
# in d's body put d first).
"$HOSTRANGECTL" reset >/dev/null || fail reset
timeout 60 "$HOSTRANGE_TEST_PATHTREE" -c 10 -s 1000000 || fail "pathtree -s"
"$HOSTRANGECTL" dump --format pprof -o "$dir/new.pb.gz" || fail "new run"
"$HOSTRANGECTL" dump --format folded > "$dir/new.folded" || fail folded
pprof -top -unit=ns -diff_base "$dir/base.pb.gz" "$dir/new.pb.gz" \
    > "$dir/diff.txt"
first=$(awk '/^ *flat/ { getline; print $NF; exit }' "$dir/diff.txt")
[ "$first" = c ] || { cat "$dir/diff.txt"; fail "diff: $first first, not c"; }
got=$(sed -n 's/^Showing nodes accounting for \(-\{0,1\}[0-9]*\)ns, .*/\1/p' \
      "$dir/diff.txt")
want=$(($(folded_total < "$dir/new.folded") - $(folded_total < "$dir/run.folded")))
[ "$got" = "$want" ] || fail "diff total $got, want $want"
exit 0
