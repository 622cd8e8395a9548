#!/bin/sh
# The gate that does not cry wolf (make bench): hostrange-bench compared
# with itself, and with itself made 10% slower in one range, under
# hostrangectl ab at the defaults (--alpha 0.01, --threshold 5), and what
# rounds cost. Prints JSON lines {"bench":...,"value":...}:
#   rounds.aa.flagged_share   flagged rows of all compared rows, over
#                             COMPARISONS A/A comparisons (goal <= 0.01)
#   rounds.aa.exit1           A/A comparisons that exit 1 with
#                             --fail-above '*=5' (goal 0)
#   rounds.ab.target_hits     A/B comparisons in which the warm
#                             binding.body inclusive row of every case is
#                             flagged slower (goal >= 9 of 10), and of all
#                             the cases compared, those flagged
#                             (case_hits of cases)
#   rounds.ab.other_share     flagged rows of the A/B comparisons outside
#                             binding.body and end_to_end, of all their
#                             rows (goal: no more than the A/A share)
#   rounds.cost               wall time of ab --rounds N (2N runs) against
#                             two single runs (baseline)
# Usage: gate_rounds.sh [COMPARISONS [ROUNDS [SLOW_PCT]]] (default 10 5
# 10). With $BENCH_ROUNDS_KEEP set to a directory, each comparison's
# report is kept there (aa-I.jsonl, ab-I.jsonl). hostrangectl and hostrange-bench: $HOSTRANGECTL and
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

# count FILE: "ROWS FLAGGED TARGET OTHER CASES HIT" of an ab -f jsonl
# report: TARGET 1 when the warm binding.body inclusive row of every case
# is flagged slower, CASES and HIT how many cases there are and how many
# of them are.
count() {
    awk '/"flag":/ { rows++ }
         /"flag":"(slower|faster)"/ { flagged++
             if ($0 ~ /"range":"(binding\.body|end_to_end)"/) ; else other++ }
         /"phase":"warm","range":"binding\.body","metric":"inclusive"/ {
             cases++; if ($0 ~ /"flag":"slower"/) hit++ }
         END { printf "%d %d %d %d %d %d\n", rows, flagged,
               (cases > 0 && hit == cases), other, cases, hit }' "$1"
}

aa_rows=0 aa_flagged=0 aa_exit1=0
ab_rows=0 ab_hits=0 ab_other=0 ab_time=0 ab_cases=0 ab_case_hits=0
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    "$ctl" ab --rounds "$rounds" -f jsonl --fail-above '*=5' -- "$bench" \
        ::: "$bench" > "$dir/aa.jsonl" 2> "$dir/aa.err"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || {
        cat "$dir/aa.err" >&2; exit 1; }
    [ "$rc" -eq 1 ] && aa_exit1=$((aa_exit1 + 1))
    set -- $(count "$dir/aa.jsonl")
    aa_rows=$((aa_rows + $1)) aa_flagged=$((aa_flagged + $2))
    echo "A/A $i: $2 of $1 rows flagged, exit $rc" >&2
    [ -n "${BENCH_ROUNDS_KEEP:-}" ] && cp "$dir/aa.jsonl" \
        "$BENCH_ROUNDS_KEEP/aa-$i.jsonl"

    t0=$(now)
    "$ctl" ab --rounds "$rounds" -f jsonl -- "$bench" ::: "$bench" \
        --slow "binding.body=$pct" > "$dir/ab.jsonl" 2> "$dir/ab.err" ||
        { cat "$dir/ab.err" >&2; exit 1; }
    t1=$(now)
    ab_time=$(echo "$ab_time $t0 $t1" | awk '{ print $1 + $3 - $2 }')
    set -- $(count "$dir/ab.jsonl")
    ab_rows=$((ab_rows + $1)) ab_hits=$((ab_hits + $3))
    ab_other=$((ab_other + $4)) ab_cases=$((ab_cases + $5))
    ab_case_hits=$((ab_case_hits + $6))
    echo "A/B $i: target $3 ($6 of $5 cases), $4 other rows of $1 flagged" >&2
    [ -n "${BENCH_ROUNDS_KEEP:-}" ] && cp "$dir/ab.jsonl" \
        "$BENCH_ROUNDS_KEEP/ab-$i.jsonl"
done
# The cost: two single runs (one a side) against the ab runs' mean.
t0=$(now)
"$ctl" record -o /dev/null -- "$bench" > /dev/null 2>&1
"$ctl" record -o /dev/null -- "$bench" --slow "binding.body=$pct" \
    > /dev/null 2>&1
t1=$(now)
awk -v aar="$aa_rows" -v aaf="$aa_flagged" -v aae="$aa_exit1" \
    -v abr="$ab_rows" -v abh="$ab_hits" -v abo="$ab_other" -v n="$n" \
    -v abt="$ab_time" -v one="$t0 $t1" -v r="$rounds" \
    -v abc="$ab_cases" -v abch="$ab_case_hits" 'BEGIN {
    split(one, t, " "); base = t[2] - t[1]
    printf "{\"bench\":\"rounds.aa.flagged_share\",\"value\":%.4f," \
        "\"flagged\":%d,\"rows\":%d,\"comparisons\":%d,\"rounds\":%d}\n",
        aar ? aaf / aar : 0, aaf, aar, n, r
    printf "{\"bench\":\"rounds.aa.exit1\",\"value\":%d,\"comparisons\":%d}\n",
        aae, n
    printf "{\"bench\":\"rounds.ab.target_hits\",\"value\":%d," \
        "\"comparisons\":%d,\"case_hits\":%d,\"cases\":%d}\n", abh, n,
        abch, abc
    printf "{\"bench\":\"rounds.ab.other_share\",\"value\":%.4f," \
        "\"flagged\":%d,\"rows\":%d}\n", abr ? abo / abr : 0, abo, abr
    printf "{\"bench\":\"rounds.cost\",\"value\":%.2f,\"unit\":\"s\"," \
        "\"baseline\":%.2f,\"ratio\":%.2f,\"rounds\":%d}\n",
        abt / n, base, (base>0 ? abt / n / base : 0), r
}'
