#!/bin/sh
# A clean exit is never a crash. Programs that make their samples, then sit
# idle for 0, 1, 3, 10 and 30 s before a normal exit, each under
# `hostrangectl record --strict` with a real daemon, deliver their final
# counters: record says nothing on stderr, exits 0, and reports exactly the
# samples each program made. Beside them, a program killed with SIGKILL
# while idle after its work is still named as one that ended without its
# final counters, and --strict fails on it (exit 3). The records run side
# by side, so the test lasts about as long as the longest idle time.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
dir=$(mktemp -d) || exit 99
pids=
cleanup() {
    for p in $pids; do
        kill "$p" 2>/dev/null
    done
    wait
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# record's runtime directories, under the test's own.
export TMPDIR="$dir"

IDLE_S="0 1 3 10 30"
CALLS=200
RECORDS=5
# What the workload makes for one node: a cold call and CALLS warm calls of
# two ranges each, and RECORDS end_to_end values.
SAMPLES=$((2 * (1 + CALLS) + RECORDS))

# record_bg NAME COMMAND...: `record --strict` of COMMAND in the
# background; its report in NAME.jsonl, its stderr in NAME.err, its exit
# status in NAME.rc. timeout only stops a record that hangs.
record_bg() {
    name=$1
    shift
    (
        timeout 300 "$HOSTRANGECTL" record --strict -o "$dir/$name.jsonl" \
            -- "$@" > /dev/null 2> "$dir/$name.err"
        echo $? > "$dir/$name.rc"
    ) &
    pids="$pids $!"
}

for s in $IDLE_S; do
    record_bg "idle-$s" "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c $CALLS \
        -r $RECORDS -N "exit/idle-$s" -I "${s}000"
done
# The killed program flushes (-p prints its counters once its samples are
# delivered), idles past the daemon's last answer, and is killed (the
# shell's word for the killed job goes nowhere: record's stderr is
# compared whole).
record_bg killed /bin/sh -c '
    HOSTRANGE_LABEL=killed "$1" -n 1 -c "$2" -r "$3" -N exit/killed -p \
        -I 600000 > "$4.out" &
    echo $! > "$4.pid"
    until grep -q "^flush=" "$4.out"; do sleep 0.05; done
    sleep 3
    kill -9 $! && wait $! 2> /dev/null
    exit 0' sh "$HOSTRANGE_TEST_WORKLOAD" $CALLS $RECORDS "$dir/killed"
wait
pids=

# expect NODE: the report's rows for NODE, cut after their count.
expect() {
    for phase in cold warm; do
        count=1
        [ $phase = warm ] && count=$CALLS
        for range in workload.outer workload.inner; do
            for metric in inclusive self; do
                printf '{"nodeid":"%s::node[0]","operator":"synthetic",' "$1"
                printf '"backend":"cpu","phase":"%s","range":"%s",' \
                    $phase $range
                printf '"metric":"%s","count":%d\n' $metric $count
            done
        done
    done
    printf '{"nodeid":"%s::node[0]","operator":"synthetic",' "$1"
    printf '"backend":"cpu","phase":"warm","range":"end_to_end",'
    printf '"metric":"inclusive","count":%d\n' $RECORDS
}

# rows NAME: NAME's report cut after each row's count.
rows() { sed 's/,"unit":.*$//' "$dir/$1.jsonl"; }

# inclusive NAME: the sum of the inclusive counts of NAME's report (each
# sample once).
inclusive() {
    rows "$1" | sed -n 's/.*"metric":"inclusive","count":\([0-9]*\)$/\1/p' |
        awk '{ n += $1 } END { print n + 0 }'
}

for s in $IDLE_S; do
    rc=$(cat "$dir/idle-$s.rc")
    [ "$rc" = 0 ] ||
        fail "idle ${s} s: record exited $rc: $(cat "$dir/idle-$s.err")"
    [ -s "$dir/idle-$s.err" ] &&
        fail "idle ${s} s: record said: $(cat "$dir/idle-$s.err")"
    expect "exit/idle-$s" > "$dir/idle-$s.want"
    rows "idle-$s" | cmp -s - "$dir/idle-$s.want" ||
        fail "idle ${s} s: the report: $(cat "$dir/idle-$s.jsonl")"
    [ "$(inclusive "idle-$s")" = $SAMPLES ] ||
        fail "idle ${s} s: $(inclusive "idle-$s") samples, not $SAMPLES"
done

# The killed program delivered its samples before it was killed; it sent
# no final counters, and record says so.
rc=$(cat "$dir/killed.rc")
[ "$rc" = 3 ] || fail "killed: record exited $rc: $(cat "$dir/killed.err")"
grep -q "^flush=0 samples=$SAMPLES delivered=$SAMPLES lost=0\$" \
    "$dir/killed.out" || fail "killed: its counters: $(cat "$dir/killed.out")"
expect exit/killed > "$dir/killed.want"
rows killed | cmp -s - "$dir/killed.want" ||
    fail "killed: the report: $(cat "$dir/killed.jsonl")"
pid=$(cat "$dir/killed.pid")
printf 'hostrange: process %s (killed) ended without its final counters %s\n' \
    "$pid" "(killed or crashed): its last events may be missing; node ids: exit/killed::node[0]" \
    > "$dir/killed.want-err"
cmp -s "$dir/killed.err" "$dir/killed.want-err" ||
    fail "killed: record said: $(cat "$dir/killed.err")"
exit 0
