#!/bin/sh
# The gate that does not cry wolf (make bench): hostrange-bench compared
# with itself, and with itself made PCT% slower in one range
# (binding.body), under hostrangectl ab at the defaults (--alpha 0.01,
# --threshold 5), each comparison judged three times from the same runs:
# on the plain round medians ("plain"), and normalized by each of the
# controls each round times for itself (hostrange-bench --spin-control;
# diff --normalize control.spin: "spin", --normalize control.stream:
# "stream"); and what rounds cost. Prints JSON lines
# {"bench":...,"value":...}, for TEST in plain, spin and stream:
#   rounds.TEST.aa.flagged_share  flagged rows of all compared rows, over
#                                 COMPARISONS A/A comparisons (goal <= 0.01)
#   rounds.TEST.aa.exit1          A/A comparisons that exit 1 with
#                                 --fail-above '*=5' (goal 0)
#   rounds.TEST.ab.target_hits    A/B comparisons in which the warm
#                                 binding.body inclusive row of every case
#                                 is flagged slower (goal >= 9 of 10), and
#                                 of all the cases compared, those flagged
#                                 (case_hits of cases); self_hits: the same
#                                 for the self rows
#   rounds.TEST.ab.other_share    flagged rows of the A/B comparisons
#                                 outside binding.body and end_to_end, of
#                                 all their rows (goal: no more than the
#                                 A/A share)
#   rounds.TEST.aa.warm_same      warm rows of the A/A comparisons whose
#                                 95% interval lies inside +-10% ("same";
#                                 goal >= 0.8), warm_detectable_10: those
#                                 whose detectable change (diff's
#                                 "detectable") is 10% or less, and
#                                 not_judged: rows not judged at
#                                 --fail-above '*=5' (exit 7)
#   rounds.TEST.ab.target_detectable
#                                 the median over the A/B comparisons of
#                                 the warm binding.body inclusive rows'
#                                 detectable change, in %
#   rounds.cost                   wall time of ab --rounds N (2N runs)
#                                 against two single runs (baseline)
#   rounds.load                   the load average (1 min) at the start
#                                 and the end
# Usage: gate_rounds.sh [COMPARISONS [ROUNDS [SLOW_PCT]]] (default 10 5
# 10). With $BENCH_ROUNDS_KEEP set to a directory, each comparison's
# reports are kept there (aa-I.jsonl, ab-I.jsonl, and aa-I.spin.jsonl
# and so on for the normalized ones). hostrangectl and hostrange-bench: $HOSTRANGECTL and
# $HOSTRANGE_BENCH, else those of the build tree this script is in.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ctl=${HOSTRANGECTL:-$here/../ctl/hostrangectl}
bench=${HOSTRANGE_BENCH:-$here/../bench/hostrange-bench}
n=${1:-10}
rounds=${2:-5}
pct=${3:-10}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# Each round under a daemon of its own, not the one make bench starts.
unset HOSTRANGE_RUNTIME_DIR

now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }

# count FILE: "ROWS FLAGGED TARGET OTHER CASES HIT SELF_HIT WARM SAME DET10
# NOTJUDGED" of a diff -f jsonl report: TARGET 1 when the warm
# binding.body inclusive row of every case is flagged slower, CASES and
# HIT how many cases there are and how many of them are, SELF_HIT how many
# of their self rows are; WARM the warm rows, SAME those whose interval
# lies inside +-10%, DET10 those whose detectable change is 10% or less;
# NOTJUDGED the rows not judged at their limit.
count() {
    awk 'function num(name,   v) {
             if (!match($0, "\"" name "\":[-0-9.e+]+")) return "x"
             v = substr($0, RSTART, RLENGTH); sub(/.*:/, "", v); return v + 0 }
         /"flag":/ && /"phase":"warm"/ { warm++
             b = num("base_median"); lo = num("shift_lo_ns"); hi = num("shift_hi_ns")
             if (b != "x" && lo != "x" && hi != "x" && b > 0 &&
                 100 * lo / b > -10 && 100 * hi / b < 10) same++
             d = num("detectable"); if (d != "x" && d <= 10) det10++ }
         /"judged":"not judged at this limit"/ { notj++ }
         /"flag":/ { rows++ }
         /"flag":"(slower|faster)"/ { flagged++
             if ($0 ~ /"range":"(binding\.body|end_to_end)"/) ; else other++ }
         /"phase":"warm","range":"binding\.body","metric":"inclusive"/ {
             cases++; if ($0 ~ /"flag":"slower"/) hit++ }
         /"phase":"warm","range":"binding\.body","metric":"self"/ {
             if ($0 ~ /"flag":"slower"/) self++ }
         END { printf "%d %d %d %d %d %d %d %d %d %d %d\n", rows, flagged,
               (cases > 0 && hit == cases), other, cases, hit, self, warm,
               same, det10, notj }' "$1"
}

# detectables FILE: the detectable change of each warm binding.body
# inclusive row of a diff -f jsonl report, one a line ("inf" for none).
detectables() {
    grep '"phase":"warm","range":"binding\.body","metric":"inclusive"' "$1" |
        sed -n 's/.*"detectable":\([^,}]*\).*/\1/p' | sed 's/null/inf/'
}

# judge KIND I TEST [DIFF OPTION]...: diffs $dir/KIND-a.hrs and -b.hrs,
# adds the counts to KIND_TEST_*.
judge() {
    kind=$1 i=$2 test=$3
    shift 3
    "$ctl" diff -f jsonl --fail-above '*=5' "$@" "$dir/$kind-a.hrs" \
        "$dir/$kind-b.hrs" > "$dir/$kind.$test.jsonl" 2> "$dir/diff.err"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 7 ] ||
        { cat "$dir/diff.err" >&2; exit 1; }
    [ "$kind" = ab ] && detectables "$dir/$kind.$test.jsonl" >> "$dir/det.$test"
    set -- $(count "$dir/$kind.$test.jsonl")
    eval "${kind}_${test}_rows=\$((\${${kind}_${test}_rows:-0} + $1))"
    eval "${kind}_${test}_flagged=\$((\${${kind}_${test}_flagged:-0} + $2))"
    eval "${kind}_${test}_hits=\$((\${${kind}_${test}_hits:-0} + $3))"
    eval "${kind}_${test}_other=\$((\${${kind}_${test}_other:-0} + $4))"
    eval "${kind}_${test}_cases=\$((\${${kind}_${test}_cases:-0} + $5))"
    eval "${kind}_${test}_case_hits=\$((\${${kind}_${test}_case_hits:-0} + $6))"
    eval "${kind}_${test}_self=\$((\${${kind}_${test}_self:-0} + $7))"
    eval "${kind}_${test}_warm=\$((\${${kind}_${test}_warm:-0} + $8))"
    eval "${kind}_${test}_same=\$((\${${kind}_${test}_same:-0} + $9))"
    eval "${kind}_${test}_det10=\$((\${${kind}_${test}_det10:-0} + ${10}))"
    eval "${kind}_${test}_notj=\$((\${${kind}_${test}_notj:-0} + ${11}))"
    [ "$kind" = aa ] && [ "$rc" -eq 1 ] &&
        eval "aa_${test}_exit1=\$((\${aa_${test}_exit1:-0} + 1))"
    echo "$kind $i $test: $2 of $1 rows flagged, target $3 ($6 of $5" \
        "cases, self $7), $4 other rows flagged, $9 of $8 warm rows" \
        "same at +-10%, ${10} detectable at 10%, ${11} not judged at 5%," \
        "exit $rc" >&2
    if [ -n "${BENCH_ROUNDS_KEEP:-}" ]; then
        suffix=
        [ "$test" = plain ] || suffix=.$test
        cp "$dir/$kind.$test.jsonl" "$BENCH_ROUNDS_KEEP/$kind-$i$suffix.jsonl"
    fi
}

load0=$(load)
ab_time=0
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    "$ctl" ab --rounds "$rounds" --max-rounds "$rounds" -f jsonl --save-a "$dir/aa-a.hrs" \
        --save-b "$dir/aa-b.hrs" -- "$bench" --spin-control \
        ::: "$bench" --spin-control > /dev/null 2> "$dir/ab.err"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 7 ] ||
        { cat "$dir/ab.err" >&2; exit 1; }
    judge aa "$i" plain
    judge aa "$i" spin --normalize control.spin
    judge aa "$i" stream --normalize control.stream

    t0=$(now)
    "$ctl" ab --rounds "$rounds" --max-rounds "$rounds" -f jsonl --save-a "$dir/ab-a.hrs" \
        --save-b "$dir/ab-b.hrs" -- "$bench" --spin-control \
        ::: "$bench" --spin-control --slow "binding.body=$pct" \
        > /dev/null 2> "$dir/ab.err"
    rc=$?
    t1=$(now)
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 7 ] ||
        { cat "$dir/ab.err" >&2; exit 1; }
    ab_time=$(echo "$ab_time $t0 $t1" | awk '{ print $1 + $3 - $2 }')
    judge ab "$i" plain
    judge ab "$i" spin --normalize control.spin
    judge ab "$i" stream --normalize control.stream
done
load1=$(load)
# The cost: two single runs (one a side) against the ab runs' mean.
t0=$(now)
"$ctl" record -o /dev/null -- "$bench" --spin-control > /dev/null 2>&1
"$ctl" record -o /dev/null -- "$bench" --spin-control \
    --slow "binding.body=$pct" > /dev/null 2>&1
t1=$(now)
for test in plain spin stream; do
    eval "aar=\${aa_${test}_rows:-0} aaf=\${aa_${test}_flagged:-0}"
    eval "aae=\${aa_${test}_exit1:-0} abr=\${ab_${test}_rows:-0}"
    eval "abh=\${ab_${test}_hits:-0} abo=\${ab_${test}_other:-0}"
    eval "abc=\${ab_${test}_cases:-0} abch=\${ab_${test}_case_hits:-0}"
    eval "abs=\${ab_${test}_self:-0}"
    eval "aaw=\${aa_${test}_warm:-0} aas=\${aa_${test}_same:-0}"
    eval "aad=\${aa_${test}_det10:-0} aan=\${aa_${test}_notj:-0}"
    tdet=$(sort -g "$dir/det.$test" 2>/dev/null |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "null";
             else if (NR % 2) print v[(NR + 1) / 2];
             else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    [ "$tdet" = inf ] && tdet=null
    awk -v t="$test" -v aar="$aar" -v aaf="$aaf" -v aae="$aae" \
        -v abr="$abr" -v abh="$abh" -v abo="$abo" -v n="$n" -v r="$rounds" \
        -v abc="$abc" -v abch="$abch" -v abs="$abs" -v aaw="$aaw" \
        -v aas="$aas" -v aad="$aad" -v aan="$aan" -v tdet="$tdet" 'BEGIN {
    printf "{\"bench\":\"rounds.%s.aa.flagged_share\",\"value\":%.4f," \
        "\"flagged\":%d,\"rows\":%d,\"comparisons\":%d,\"rounds\":%d}\n",
        t, aar ? aaf / aar : 0, aaf, aar, n, r
    printf "{\"bench\":\"rounds.%s.aa.exit1\",\"value\":%d," \
        "\"comparisons\":%d}\n", t, aae, n
    printf "{\"bench\":\"rounds.%s.ab.target_hits\",\"value\":%d," \
        "\"comparisons\":%d,\"case_hits\":%d,\"cases\":%d," \
        "\"self_hits\":%d}\n", t, abh, n, abch, abc, abs
    printf "{\"bench\":\"rounds.%s.ab.other_share\",\"value\":%.4f," \
        "\"flagged\":%d,\"rows\":%d}\n", t, abr ? abo / abr : 0, abo, abr
    printf "{\"bench\":\"rounds.%s.aa.warm_same\",\"value\":%.4f," \
        "\"same\":%d,\"warm_rows\":%d,\"warm_detectable_10\":%d," \
        "\"not_judged\":%d,\"rows\":%d}\n", t, aaw ? aas / aaw : 0, aas, aaw,
        aad, aan, aar
    printf "{\"bench\":\"rounds.%s.ab.target_detectable\",\"value\":%s," \
        "\"unit\":\"%%\"}\n", t, tdet
}'
done
awk -v n="$n" -v abt="$ab_time" -v one="$t0 $t1" -v r="$rounds" \
    -v l0="$load0" -v l1="$load1" 'BEGIN {
    split(one, t, " "); base = t[2] - t[1]
    printf "{\"bench\":\"rounds.cost\",\"value\":%.2f,\"unit\":\"s\"," \
        "\"baseline\":%.2f,\"ratio\":%.2f,\"rounds\":%d}\n",
        abt / n, base, (base>0 ? abt / n / base : 0), r
    printf "{\"bench\":\"rounds.load\",\"value\":%s,\"end\":%s}\n", l0, l1
}'
