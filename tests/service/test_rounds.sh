#!/bin/sh
# Rounds end to end, through real daemons and real runs: record --rounds
# (one report pooling the rounds, one run file keeping each round's count
# and median), merge of runs of the same keys as rounds and of shards as
# shards, diff at the run level (rounds 3/3: exact p of the round medians)
# and without rounds (every row says the noise is not measured),
# --min-rounds, hostrangectl ab on hostrange-bench made slower on
# purpose (--slow), and diff --normalize by a control each round times.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
: "${top_builddir:?}"
bench=$top_builddir/bench/hostrange-bench
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
export TMPDIR="$dir"

# record --rounds 3: the pooled count is three rounds' (50 warm calls a
# round), each row has three round medians, and the run file reports the
# same pooled rows.
ctl record --rounds 3 --save "$dir/r.hrs" --fields rounds -- \
    "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 50 -r 2 -N t \
    > "$dir/r.out" 2> "$dir/err" || fail "record --rounds: $(cat "$dir/err")"
# (the workload prints its timer's cost on stdout)
grep '^{' "$dir/r.out" > "$dir/r.jsonl"
[ -s "$dir/err" ] && fail "record --rounds said: $(cat "$dir/err")"
grep -q '"phase":"warm","range":"workload.inner","metric":"inclusive","count":150,' \
    "$dir/r.jsonl" || fail "pooled count: $(cat "$dir/r.jsonl")"
rows=$(grep -c . "$dir/r.jsonl")
[ "$(grep -c '"rounds":3,"round_medians":\[[0-9.e+]*,[0-9.e+]*,[0-9.e+]*\],"round_spread":' "$dir/r.jsonl")" -eq "$rows" ] ||
    fail "round fields: $(cat "$dir/r.jsonl")"
ctl dump --from "$dir/r.hrs" > "$dir/from.jsonl" || fail "dump --from"
sed 's/,"rounds":.*}$/}/' "$dir/r.jsonl" | cmp -s - "$dir/from.jsonl" ||
    fail "the run file's report differs from record's"
# No round directories are left behind.
[ -z "$(ls "$dir" | grep hostrange-)" ] || fail "left: $(ls "$dir")"

# merge: two runs of the same keys are rounds (3 + 3); shards of other
# keys are not (and their merge has no rounds). The same run twice is
# refused: a run is counted once.
ctl record --rounds 3 --save "$dir/r2.hrs" -o /dev/null -- \
    "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 50 -r 2 -N t > /dev/null 2>&1 ||
    fail "record --rounds, second run"
ctl merge -o "$dir/dup.hrs" "$dir/r.hrs" "$dir/r.hrs" > /dev/null 2>&1
[ $? -eq 3 ] || fail "the same run merged twice was not refused"
ctl merge -o "$dir/m.hrs" "$dir/r.hrs" "$dir/r2.hrs" > "$dir/out" ||
    fail "merge"
grep -q ", 6 rounds$" "$dir/out" || fail "merge of rounds: $(cat "$dir/out")"
ctl dump --from "$dir/m.hrs" --fields rounds | grep -q '"count":300,.*"rounds":6,' ||
    fail "6 rounds not reported"
ctl record --save "$dir/s1.hrs" -o /dev/null -- "$HOSTRANGE_TEST_WORKLOAD" \
    -n 1 -c 50 -N s1 >/dev/null 2> /dev/null || fail "shard 1"
ctl record --save "$dir/s2.hrs" -o /dev/null -- "$HOSTRANGE_TEST_WORKLOAD" \
    -n 1 -c 50 -N s2 >/dev/null 2> /dev/null || fail "shard 2"
ctl merge -o "$dir/s.hrs" "$dir/s1.hrs" "$dir/s2.hrs" > "$dir/out" ||
    fail "merge of shards"
grep -q "rounds" "$dir/out" && fail "shards became rounds: $(cat "$dir/out")"
ctl dump --from "$dir/s.hrs" --fields rounds | grep -v '"rounds":1,' &&
    fail "a shard's row has rounds"

# diff without rounds: the header and every compared row say so, and the
# JSON rows carry rounds [1,1].
ctl diff "$dir/s1.hrs" "$dir/s1.hrs" > "$dir/d.txt" || fail "diff 1/1"
head -n 1 "$dir/d.txt" | grep -q "^rounds 1/1: run-to-run noise not measured" ||
    fail "header: $(head -n 1 "$dir/d.txt")"
n=$(grep -c " p=" "$dir/d.txt")
[ "$n" -gt 0 ] && [ "$(grep -c " p=.* rounds 1/1: run-to-run noise not measured$" "$dir/d.txt")" -eq "$n" ] ||
    fail "rows: $(cat "$dir/d.txt")"
ctl diff -f jsonl "$dir/s1.hrs" "$dir/s1.hrs" | grep -v '"rounds":\[1,1\].*"noise":"run-to-run noise not measured"}$' &&
    fail "a JSON row without rounds [1,1]"
# --min-rounds refuses to judge them: exit 6, each row marked.
ctl diff --min-rounds 3 "$dir/s1.hrs" "$dir/s1.hrs" > "$dir/d.txt" \
    2> "$dir/err"
[ $? -eq 6 ] || fail "--min-rounds did not exit 6"
grep -q "keys have fewer than 3 rounds a side: not judged" "$dir/err" ||
    fail "--min-rounds said: $(cat "$dir/err")"
[ "$(grep -c "not judged (--min-rounds)" "$dir/d.txt")" -eq "$n" ] ||
    fail "--min-rounds rows: $(cat "$dir/d.txt")"

# diff at the run level: a run against itself, 3 rounds a side: every key
# tested on its round medians, no change, p = 1 (the two sets of round
# medians are the same).
ctl diff -f jsonl "$dir/r.hrs" "$dir/r.hrs" > "$dir/d.jsonl" || fail "diff 3/3"
rows=$(grep -c . "$dir/d.jsonl")
[ "$(grep -c '"change_pct":0.0,.*"p":1.0,"test":"rounds-fast-half","rounds":\[3,3\],"flag":null' "$dir/d.jsonl")" -eq "$rows" ] ||
    fail "run level: $(cat "$dir/d.jsonl")"
ctl diff "$dir/r.hrs" "$dir/r.hrs" | head -n 1 |
    grep -q "^rounds 3/3: p and interval from the round medians" ||
    fail "run-level header"
ctl diff --min-rounds 3 "$dir/r.hrs" "$dir/r.hrs" > /dev/null ||
    fail "--min-rounds 3 refused 3 rounds"

# The detectable change: with 3 rounds a side the exact test cannot reach
# p < 0.01 (its smallest p is 0.1), so no change is detectable (null,
# `none`), every key with a --fail-above limit is not judged at it, and
# diff exits 7; at --alpha 0.2 every row states a finite figure (a run
# against itself: its rounds' own spread, at least two clock steps).
ctl diff -f jsonl --fail-above '*=5' "$dir/r.hrs" "$dir/r.hrs" \
    > "$dir/d.jsonl" 2> "$dir/err"
[ $? -eq 7 ] || fail "not judged: exit $?, $(cat "$dir/err")"
[ "$(grep -c '"detectable":null,"judged":"not judged at this limit"}$' "$dir/d.jsonl")" -eq "$rows" ] ||
    fail "not judged rows: $(cat "$dir/d.jsonl")"
grep -q "^hostrangectl diff: $rows keys not judged at this limit: " "$dir/err" ||
    fail "not judged on stderr: $(cat "$dir/err")"
[ "$(ctl diff "$dir/r.hrs" "$dir/r.hrs" | grep -c " detectable none p=1 ")" -eq "$rows" ] ||
    fail "table: detectable none"
ctl diff -f jsonl --alpha 0.2 "$dir/r.hrs" "$dir/r.hrs" > "$dir/d.jsonl" ||
    fail "diff --alpha 0.2"
[ "$(grep -c '"detectable":[0-9][0-9.e+-]*}$' "$dir/d.jsonl")" -eq "$rows" ] ||
    fail "detectable at 0.2: $(cat "$dir/d.jsonl")"

# diff --max-rounds: a plan of one look at 3 pairs. The 95% interval of 3
# rounds a side is unbounded, so no key is same, and none slower: every
# key undecided after 3 pairs, exit 8; with --fail-above naming no range,
# no key is gated, exit 0. A first look beyond --max-rounds is refused.
ctl diff -f jsonl --max-rounds 3 --first-look 3 "$dir/r.hrs" "$dir/r.hrs" \
    > "$dir/d.jsonl" 2> "$dir/err"
[ $? -eq 8 ] || fail "undecided: exit $?, $(cat "$dir/err")"
[ "$(grep -c '"verdict":"undecided","pairs":3,.*"gated":true' "$dir/d.jsonl")" -eq "$rows" ] ||
    fail "undecided rows: $(cat "$dir/d.jsonl")"
grep -qx "hostrangectl diff: $rows gated keys undecided after 3 pairs (--max-rounds 3)" \
    "$dir/err" || fail "undecided on stderr: $(cat "$dir/err")"
ctl diff --max-rounds 3 --first-look 3 --fail-above 'no.such=5' \
    "$dir/r.hrs" "$dir/r.hrs" > "$dir/d.txt" 2> "$dir/err" ||
    fail "ungated: exit $?, $(cat "$dir/err")"
head -n 1 "$dir/d.txt" | grep -q "; sequential: looks at 3 pairs, each at p < 0.01 (alpha 0.01 over 1 looks)$" ||
    fail "sequential header: $(head -n 1 "$dir/d.txt")"
[ "$(grep -c " undecided after 3 pairs rounds 3/3$" "$dir/d.txt")" -eq "$rows" ] ||
    fail "undecided in the table: $(cat "$dir/d.txt")"
ctl diff --max-rounds 3 "$dir/r.hrs" "$dir/r.hrs" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] || fail "--first-look 5 above --max-rounds 3 accepted"
# Looks at 3 and 4 pairs, each at p < 0.005: 4 rounds a side cannot
# reach it (their smallest p is 2/70), so after 3 pairs every key is
# hopeless, nothing detectable at 4 pairs, and undecided (exit 8).
ctl diff -f jsonl --max-rounds 4 --first-look 3 "$dir/r.hrs" "$dir/r.hrs" \
    > "$dir/d.jsonl" 2> "$dir/err"
[ $? -eq 8 ] || fail "hopeless: exit $?, $(cat "$dir/err")"
[ "$(grep -c '"verdict":"undecided","pairs":3,.*"gated":true,"decidable":false,"detectable_at_max":null' "$dir/d.jsonl")" -eq "$rows" ] ||
    fail "hopeless rows: $(cat "$dir/d.jsonl")"
ctl diff --max-rounds 4 --first-look 3 "$dir/r.hrs" "$dir/r.hrs" \
    > "$dir/d.txt" 2> "$dir/err"
[ "$(grep -c " undecided after 3 pairs (hopeless: detectable none at 4 pairs) rounds 3/3$" "$dir/d.txt")" -eq "$rows" ] ||
    fail "hopeless in the table: $(cat "$dir/d.txt")"

# ab: hostrange-bench against itself with binding.body 50% slower, 3
# rounds each: the warm binding.body self rows are apart in every round,
# so p = 2/C(6,3) = 0.1 exactly, flagged at --alpha 0.2 and not at the
# default 0.01. Both sides are saved with their rounds.
if ctl record -o "$dir/b.jsonl" -- "$bench" --op gemm --target-ms 5 \
        --max-calls 100 2> /dev/null && [ -s "$dir/b.jsonl" ]; then
    ctl ab --rounds 3 --max-rounds 3 --alpha 0.2 -f jsonl --save-a "$dir/a.hrs" \
        --save-b "$dir/b.hrs" -- "$bench" --op gemm --target-ms 5 \
        --max-calls 100 --spin-control ::: "$bench" --op gemm \
        --target-ms 5 --max-calls 100 --spin-control \
        --slow binding.body=50 > "$dir/ab.jsonl" \
        2> "$dir/err" || fail "ab: $(cat "$dir/err")"
    grep '"phase":"warm","range":"binding.body","metric":"self"' "$dir/ab.jsonl" |
        grep -q '"p":0.1,"test":"rounds-fast-half","rounds":\[3,3\],"flag":"slower"' ||
        fail "ab: $(cat "$dir/ab.jsonl")"
    for s in a b; do
        ctl dump --from "$dir/$s.hrs" --fields rounds |
            grep -q '"phase":"warm","range":"binding.body","metric":"self",.*"rounds":3,' ||
            fail "ab's side $s has no rounds"
    done
    ctl diff --alpha 0.2 "$dir/a.hrs" "$dir/b.hrs" |
        grep -q "warm binding.body self .* p=0.1 slower rounds 3/3$" ||
        fail "diff of ab's saves"
    ctl diff "$dir/a.hrs" "$dir/b.hrs" | grep "warm binding.body self" |
        grep -q slower && fail "flagged at p = 0.1 with --alpha 0.01"
    # --normalize: the warm rows' round medians divided by the round's
    # control. backend.submit is a leaf, so its self time is its inclusive
    # time in every round: normalized by backend.submit, the self row is
    # 1 in every round of both sides, scaled back to the base's median:
    # no change, p = 1, whatever the raw rows say. The control's own
    # inclusive rows stay as they are, and so do the rows of a phase
    # without the control (control.spin is warm only).
    grep -q '"phase":"warm","range":"control.spin","metric":"inclusive"' \
        "$dir/ab.jsonl" || fail "no control.spin row: $(cat "$dir/ab.jsonl")"
    ctl diff -f jsonl --alpha 0.2 --normalize backend.submit "$dir/a.hrs" \
        "$dir/b.hrs" \
        > "$dir/n.jsonl" || fail "diff --normalize"
    ctl diff -f jsonl "$dir/a.hrs" "$dir/b.hrs" > "$dir/p.jsonl" ||
        fail "diff"
    row() { grep "\"phase\":\"$2\",\"range\":\"$3\",\"metric\":\"$4\"" "$1"; }
    field() { sed -n "s/.*\"$1\":\([^,]*\),.*/\1/p"; }
    self=$(row "$dir/n.jsonl" warm backend.submit self)
    echo "$self" | grep -q '"change_pct":0.0,.*"p":1.0,"test":"rounds-fast-half","rounds":\[3,3\],"flag":null,.*"normalized":"backend.submit"}$' ||
        fail "normalized leaf: $self"
    [ "$(echo "$self" | field base_median)" = "$(row "$dir/p.jsonl" warm backend.submit self | field base_median)" ] ||
        fail "normalized rows not scaled to the base's median: $self"
    row "$dir/n.jsonl" warm backend.submit inclusive | grep -q normalized &&
        fail "the control's own row was normalized"
    ctl diff -f jsonl --normalize control.spin "$dir/a.hrs" "$dir/b.hrs" \
        > "$dir/s.jsonl" || fail "diff --normalize control.spin"
    row "$dir/s.jsonl" cold binding.body inclusive | grep -q normalized &&
        fail "a cold row was normalized by a warm control"
    row "$dir/s.jsonl" warm binding.body inclusive |
        grep -q '"normalized":"control.spin"}$' ||
        fail "not normalized by control.spin: $(cat "$dir/s.jsonl")"
    row "$dir/n.jsonl" warm binding.body self |
        grep -q '"flag":"slower",.*"normalized":"backend.submit"}$' ||
        fail "normalized slowdown: $(row "$dir/n.jsonl" warm binding.body self)"
    # Every row but the control's (cold and warm) is normalized, and the
    # first line says so; a control that is not there normalizes nothing.
    warm=$(($(grep -c . "$dir/n.jsonl") - 1))
    [ "$(grep -c '"normalized":"backend.submit"' "$dir/n.jsonl")" -eq $((warm - 1)) ] ||
        fail "normalized rows: $(cat "$dir/n.jsonl")"
    ctl diff --normalize backend.submit "$dir/a.hrs" "$dir/b.hrs" |
        head -n 1 | grep -q "; $((warm - 1)) keys normalized by backend.submit (each round's median divided by that round's backend.submit median of the same node" ||
        fail "normalized header"
    ctl diff --normalize no.such "$dir/a.hrs" "$dir/b.hrs" > "$dir/d.txt"
    head -n 1 "$dir/d.txt" | grep -q "; --normalize no.such: not in 3 rounds a side of both runs, nothing normalized$" ||
        fail "missing control: $(head -n 1 "$dir/d.txt")"
    sed 1d "$dir/d.txt" | grep -q " normalized" &&
        fail "normalized without a control: $(cat "$dir/d.txt")"
    # Sequential: looks at 3 and 4 pairs, each at p < 0.2 / 2. The warm
    # binding.body self rows are apart in every round: p = 0.1 at 3 pairs
    # is not below 0.1, p = 2/70 at 4 is: slower after 4 pairs, and ab
    # exits 1 (--fail-above).
    ctl ab --rounds 3 --max-rounds 4 --alpha 0.2 -f jsonl \
        --fail-above 'binding.body=5' -- "$bench" --op gemm --target-ms 5 \
        --max-calls 100 ::: "$bench" --op gemm --target-ms 5 \
        --max-calls 100 --slow binding.body=50 > "$dir/seq.jsonl" \
        2> "$dir/err"
    [ $? -eq 1 ] || fail "sequential ab: exit $?, $(cat "$dir/err")"
    grep '"phase":"warm","range":"binding.body","metric":"self"' "$dir/seq.jsonl" |
        grep -q '"rounds":\[4,4\],"flag":"slower",.*"verdict":"slower","pairs":4,' ||
        fail "sequential ab: $(cat "$dir/seq.jsonl")"
    grep -q "^hostrangectl ab: undecided after 3 pairs: going on to 4$" \
        "$dir/err" || fail "sequential ab said: $(cat "$dir/err")"
    # A command that always fails: each round run twice, each pair
    # dropped (the second one with B's completed round); the second
    # stops ab with 5.
    ctl ab --rounds 1 -- false ::: true > /dev/null 2> "$dir/err"
    [ $? -eq 5 ] || fail "ab of a failing command"
    grep -v '^timer_ns=' "$dir/err" > "$dir/said"
    cat > "$dir/want" <<EOF
hostrangectl ab: round 1 (A: false) failed with status 1; running it again
hostrangectl ab: round 1 (A: false) failed with status 1
hostrangectl ab: pair 1 dropped: round 1 (A: false) failed twice
hostrangectl ab: round 4 (A: false) failed with status 1; running it again
hostrangectl ab: round 4 (A: false) failed with status 1
hostrangectl ab: pair 2 dropped: round 4 (A: false) failed twice; stopping
EOF
    cmp -s "$dir/said" "$dir/want" || fail "ab said: $(cat "$dir/err")"
fi
# ab alternates A B B A A B, whatever the commands.
ctl ab --rounds 3 -- sh -c "echo A >> '$dir/order'" ::: \
    sh -c "echo B >> '$dir/order'" > "$dir/out" 2> "$dir/err" ||
    fail "ab of two shell commands: $(cat "$dir/err")"
[ "$(tr '\n' ' ' < "$dir/order")" = "A B B A A B " ] ||
    fail "ab's order: $(cat "$dir/order")"
grep -q "^0 keys compared" "$dir/out" || fail "ab of no keys: $(cat "$dir/out")"
# Usage errors.
ctl ab -- true > /dev/null 2>&1
[ $? -eq 2 ] || fail "ab without ':::'"
ctl record --rounds 0 -- true > /dev/null 2>&1
[ $? -eq 2 ] || fail "record --rounds 0"
ctl record --fields rounds -- true > /dev/null 2>&1
[ $? -eq 2 ] || fail "--fields rounds without --rounds"
exit 0
