#!/bin/sh
# The sequential comparison (make bench): hostrangectl ab at its defaults
# (first look after 5 pairs, at most 20, --fail-above '*=5'), against
# today's fixed ab --rounds 5 --max-rounds 5 in the same run, on
# hostrange-bench --spin-control compared with itself (A/A), and with
# itself slowed down: --slow binding.body=10 (the add and the gemm case),
# --slow binding.body=5 and --slow-ns dispatch.call=20 (the add case).
# Prints JSON lines {"bench":...,"value":...}, for RULE in seq and fixed:
#   decide.RULE.aa.flagged_share  flagged rows of all compared A/A rows
#                                 (goal <= 0.01); exit1: A/A comparisons
#                                 that exit 1 (goal 0)
#   decide.RULE.aa.warm_same      warm A/A rows whose 95% interval lies
#                                 inside +-10% (goal >= 0.8);
#                                 decided_same_5: those decided same at
#                                 +-5% (seq)
#   decide.RULE.CASE.hits         comparisons in which the target row is
#                                 found slower: CASE s10.add and s10.gemm
#                                 (warm binding.body inclusive), s5.add,
#                                 ns20.add (warm dispatch.call inclusive
#                                 or self); other_share: rows flagged
#                                 outside the slowed range and the ranges
#                                 around it
#   decide.RULE.cost              the mean wall time of a comparison, and
#                                 of seq against fixed (ratio), pairs: the
#                                 mean pairs of seq
#   decide.load                   the load average (1 min) at the start
#                                 and the end
# Usage: gate_decide.sh [COMPARISONS] (default 10). With
# $BENCH_DECIDE_KEEP set to a directory, the reports are kept there.
# hostrangectl and hostrange-bench: $HOSTRANGECTL and $HOSTRANGE_BENCH,
# else those of the build tree this script is in.
set -u
here=$(cd "$(dirname "$0")" && pwd)
ctl=${HOSTRANGECTL:-$here/../ctl/hostrangectl}
bench=${HOSTRANGE_BENCH:-$here/../bench/hostrange-bench}
n=${1:-10}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
unset HOSTRANGE_RUNTIME_DIR

now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }

# one RULE CASE I [SLOW OPTION]...: one comparison, its report in
# $dir/RULE.CASE.I.jsonl, its wall time and exit status appended to
# $dir/RULE.CASE.times.
one() {
    rule=$1 case=$2 i=$3
    shift 3
    rep=$dir/$rule.$case.$i.jsonl
    t0=$(now)
    if [ "$rule" = fixed ]; then
        "$ctl" ab --rounds 5 --max-rounds 5 -f jsonl --fail-above '*=5' -- \
            "$bench" --spin-control ::: "$bench" --spin-control "$@" \
            > "$rep" 2> "$dir/err"
    else
        "$ctl" ab -f jsonl --fail-above '*=5' -- "$bench" --spin-control \
            ::: "$bench" --spin-control "$@" > "$rep" 2> "$dir/err"
    fi
    rc=$?
    t1=$(now)
    case $rc in 0|1|7|8) ;; *) cat "$dir/err" >&2; exit 1 ;; esac
    pairs=$(sed -n 's/.*"rounds":\[\([0-9]*\),.*/\1/p' "$rep" | sort -n | tail -1)
    echo "$t0 $t1 $rc ${pairs:-0}" |
        awk '{ print $2 - $1, $3, $4 }' >> "$dir/$rule.$case.times"
    [ -n "${BENCH_DECIDE_KEEP:-}" ] && cp "$rep" "$BENCH_DECIDE_KEEP/"
    echo "$rule $case $i: exit $rc, ${pairs:-0} pairs, $(echo "$t0 $t1" |
        awk '{ printf "%.1f", $2 - $1 }') s, load $(load)" >&2
}

load0=$(load)
i=0
while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    for rule in seq fixed; do
        one "$rule" aa "$i"
        one "$rule" s10 "$i" --slow binding.body=10
        one "$rule" s5 "$i" --slow binding.body=5
        one "$rule" ns20 "$i" --slow-ns dispatch.call=20
    done
done
load1=$(load)

# flagged FILE...: "ROWS FLAGGED WARM SAME10 SAME5" of A/A reports: a row
# is flagged when its flag is slower or faster; SAME5 warm rows decided
# same (seq), SAME10 warm rows whose interval lies inside +-10%.
tally() {
    cat "$@" | awk 'function num(name,   v) {
             if (!match($0, "\"" name "\":[-0-9.e+]+")) return "x"
             v = substr($0, RSTART, RLENGTH); sub(/.*:/, "", v); return v + 0 }
        /"flag":/ { rows++ }
        /"flag":"(slower|faster)"/ { flagged++ }
        /"flag":/ && /"phase":"warm"/ { warm++
             b = num("base_median"); lo = num("shift_lo_ns"); hi = num("shift_hi_ns")
             if (b != "x" && lo != "x" && hi != "x" && b > 0 &&
                 100 * lo / b > -10 && 100 * hi / b < 10) same10++
             if ($0 ~ /"verdict":"same"/) same5++ }
        END { printf "%d %d %d %d %d\n", rows, flagged, warm, same10, same5 }'
}

# hit FILE PATTERN: 1 when a row matching PATTERN is flagged slower.
hit() { grep -E "$2" "$1" | grep -q '"flag":"slower"' && echo 1 || echo 0; }

# other FILE RANGES: "ROWS FLAGGED" of the rows outside RANGES (an ERE).
other() {
    awk -v r="\"range\":\"($2)\"" '/"flag":/ && $0 !~ r { rows++
        if ($0 ~ /"flag":"(slower|faster)"/) f++ }
        END { printf "%d %d\n", rows, f }' "$1"
}

add='"nodeid":"ops/add[^"]*","operator":"[^"]*","backend":"[^"]*","phase":"warm"'
gemm='"nodeid":"ops/gemm[^"]*","operator":"[^"]*","backend":"[^"]*","phase":"warm"'
for rule in seq fixed; do
    set -- $(tally "$dir"/$rule.aa.*.jsonl)
    e1=$(awk '$2 == 1' "$dir/$rule.aa.times" | wc -l)
    printf '{"bench":"decide.%s.aa.flagged_share","value":%s,"flagged":%d,"rows":%d,"comparisons":%d,"exit1":%d}\n' \
        "$rule" "$(awk -v f="$2" -v r="$1" 'BEGIN { printf "%.4f", r ? f / r : 0 }')" "$2" "$1" "$n" "$e1"
    printf '{"bench":"decide.%s.aa.warm_same","value":%s,"warm_rows":%d,"same_10":%d,"decided_same_5":%d}\n' \
        "$rule" "$(awk -v s10="$4" -v w="$3" 'BEGIN { printf "%.4f", w ? s10 / w : 0 }')" "$3" "$4" "$5"
    for c in s10.add s10.gemm s5.add ns20.add; do
        kind=${c%.*} node=${c#*.}
        eval "pat=\$$node"
        case $kind in
        ns20) pat="$pat,\"range\":\"dispatch\\.call\"" ranges='dispatch\.call|binding\.body|end_to_end|ops\.[a-z]*' ;;
        *) pat="$pat,\"range\":\"binding\\.body\",\"metric\":\"inclusive\"" ranges='binding\.body|end_to_end' ;;
        esac
        h=0 orows=0 of=0
        for f in "$dir"/$rule.$kind.*.jsonl; do
            h=$((h + $(hit "$f" "$pat")))
            set -- $(other "$f" "$ranges")
            orows=$((orows + $1)) of=$((of + $2))
        done
        printf '{"bench":"decide.%s.%s.hits","value":%d,"comparisons":%d,"other_flagged":%d,"other_rows":%d}\n' \
            "$rule" "$c" "$h" "$n" "$of" "$orows"
    done
done
for c in aa s10 s5 ns20; do
    paste "$dir/seq.$c.times" "$dir/fixed.$c.times" | awk -v c="$c" '
        { s += $1; p += $3; f += $4 } END {
        printf "{\"bench\":\"decide.cost.%s\",\"value\":%.2f,\"unit\":\"s\",\"fixed\":%.2f,\"ratio\":%.2f,\"pairs\":%.1f}\n",
            c, s / NR, f / NR, (f > 0 ? s / f : 0), p / NR }'
done
[ -n "${BENCH_DECIDE_KEEP:-}" ] && cp "$dir"/*.times "$BENCH_DECIDE_KEEP/"
printf '{"bench":"decide.load","value":%s,"end":%s}\n' "$load0" "$load1"
