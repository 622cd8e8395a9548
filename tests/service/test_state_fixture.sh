#!/bin/sh
# A daemon started on a state directory written by an earlier hostranged
# (tests/data/state-v4: snapshot format 5, the last before the run file)
# comes up with the same report, per range name and per calling context,
# writes its state again at once as a run file (which hostrangectl reads
# as any run), and reports it again the same after a stop and a start on
# the state it wrote itself.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${srcdir:?}"
data="$srcdir/tests/data/state-v4"
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

export HOSTRANGE_RUNTIME_DIR="$dir/rt"
mkdir -m 700 "$dir/state" || exit 99
cp "$data/snapshot" "$dir/state/snapshot" || exit 99
chmod 600 "$dir/state/snapshot"

for round in first again; do
    timeout 120 "$HOSTRANGED" -q -s "$dir/state" & pid=$!
    "$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "$round: no daemon"
    "$HOSTRANGECTL" dump > "$dir/dump.jsonl" || fail "$round: dump"
    "$HOSTRANGECTL" dump --by=path > "$dir/path.jsonl" ||
        fail "$round: dump --by=path"
    cmp "$data/dump.jsonl" "$dir/dump.jsonl" || fail "$round: report"
    cmp "$data/dump-by-path.jsonl" "$dir/path.jsonl" ||
        fail "$round: report by path"
    "$HOSTRANGECTL" stats | grep -qx 'daemon.clients 1' ||
        fail "$round: the client table"
    # The old format is read once: the snapshot is a run file now, and
    # reads as the same run.
    [ "$(head -c 7 "$dir/state/snapshot")" = HRSRUN1 ] ||
        fail "$round: the snapshot was not written as a run file"
    "$HOSTRANGECTL" dump --from "$dir/state/snapshot" > "$dir/from.jsonl" ||
        fail "$round: dump --from the snapshot"
    cmp "$data/dump.jsonl" "$dir/from.jsonl" ||
        fail "$round: dump --from the snapshot"
    "$HOSTRANGECTL" dump --by=path --from "$dir/state/snapshot" \
        > "$dir/from.jsonl" || fail "$round: dump --by=path --from"
    cmp "$data/dump-by-path.jsonl" "$dir/from.jsonl" ||
        fail "$round: dump --by=path --from the snapshot"
    rm -f "$dir/merged.hrs"
    "$HOSTRANGECTL" merge -o "$dir/merged.hrs" "$dir/state/snapshot" \
        >/dev/null || fail "$round: merge of the snapshot"
    "$HOSTRANGECTL" dump --from "$dir/merged.hrs" > "$dir/from.jsonl" ||
        fail "$round: dump --from its merge"
    cmp "$data/dump.jsonl" "$dir/from.jsonl" ||
        fail "$round: dump --from the snapshot's merge"
    kill "$pid" && wait "$pid" || fail "$round: stop"
    pid=
    [ "$(head -c 7 "$dir/state/snapshot")" = HRSRUN1 ] ||
        fail "$round: the final snapshot is not a run file"
done

# A second SIGTERM while the daemon stops (timeout(1) signals the process
# and then its group; an impatient user presses Ctrl-C twice) must not
# kill it while it writes its final snapshot: it exits 0 each time and the
# state it leaves reports the same. Before the fix, about half the stops
# died of the second signal.
i=0
while [ $i -lt 20 ]; do
    "$HOSTRANGED" -q -s "$dir/state" & pid=$!
    "$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "twice $i: no daemon"
    kill -TERM "$pid"
    [ $((i % 2)) -eq 1 ] && sleep 0.00$((i % 7))
    kill -$( [ $((i % 3)) -eq 0 ] && echo INT || echo TERM ) "$pid" \
        2>/dev/null
    wait "$pid" || fail "twice $i: the daemon died of a second signal ($?)"
    pid=
    i=$((i + 1))
done
"$HOSTRANGED" -q -s "$dir/state" & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "after: no daemon"
"$HOSTRANGECTL" dump > "$dir/dump.jsonl" || fail "after: dump"
cmp "$data/dump.jsonl" "$dir/dump.jsonl" || fail "after: report"
kill "$pid" && wait "$pid" || fail "after: stop"
pid=
exit 0
