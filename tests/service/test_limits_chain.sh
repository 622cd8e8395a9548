#!/bin/sh
# Names at their limits through every stage after the daemon took them: a
# real hostranged fed by tests/helpers/limits (chain mode: node ids,
# operators, backends and range names of exactly HR_MAX_NAME bytes, an
# empty operator and backend, bytes that are not UTF-8, control
# characters, range names of HR_MAX_NAME bytes nested as deep as a thread
# goes, 2,000 range names), then restarts from the journal (SIGKILL) and
# from the snapshot (SIGTERM), save, dump --from (the save and the
# snapshot), merge of two saves, diff of the two, history add, show,
# check, detect and plot, plot, and every report format: each key comes
# through every stage with the same count (merge: twice it), and the
# counts of samples kept without their path (too deep, a full table)
# survive restarts. Names one byte over the limit are refused where they
# enter (hr_labels_set, hr_record: -ENAMETOOLONG, counted), never later.
# Events lost under such labels (a client whose spool is full) are said
# by every stage that says losses; stats writes node ids as terminal
# text; a label (HOSTRANGE_LABEL) over 255 bytes is cut at a character.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}"
limits=${top_builddir:-.}/tests/helpers/limits
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }

# start NAME [OPTION]...: a daemon serving the runtime directory rt-NAME.
start() {
    HOSTRANGE_RUNTIME_DIR=$dir/rt-$1
    export HOSTRANGE_RUNTIME_DIR
    shift
    "$HOSTRANGED" -q "$@" & pid=$!
    ctl ping -w 10000 >/dev/null || fail "no daemon ($*)"
}
# stop SIGNAL
stop() { kill -"$1" "$pid"; wait "$pid" 2>/dev/null; pid=; }

# The key and count of each row of a JSONL report, sorted: the rest of a
# row is timing, which differs from run to run.
keys() { sed 's/\("count":[0-9]*\),.*/\1/' "$@" | LC_ALL=C sort; }
# The closing lines of dump --format table that say losses, sorted.
losses() { ctl dump --format table "$@" | grep -a '^lost: ' | LC_ALL=C sort; }
# same WHAT FILE: FILE holds the keys of the first daemon's report.
same() { cmp -s "$2" "$dir/a.keys" || fail "$1: keys or counts differ"; }

n4096=$(printf '%4096s' '' | tr ' ' n)

# --- the first daemon, with a state directory --------------------------
start a -s "$dir/state"
# Its label, HOSTRANGE_LABEL, 254 bytes and a character of two: cut at
# 255 bytes, so before the character, never inside it.
l254=$(printf '%254s' '' | tr ' ' l)
HOSTRANGE_LABEL="$l254$(printf '\303\251')" "$limits" chain > "$dir/chain.out" ||
    fail "limits chain"
# One byte over: refused where it entered, and counted there.
grep -q '^rc labels=-36 window=-36 record=-36 flush=0$' "$dir/chain.out" ||
    fail "over the limit not refused: $(cat "$dir/chain.out")"
grep -q '^counters samples=2232 delivered=2232 lost=0 bad_name=11 bad_label=2 ' \
    "$dir/chain.out" || fail "counters: $(cat "$dir/chain.out")"
ctl stats > "$dir/stats" || fail stats
grep -q '^rejected.string 0$' "$dir/stats" || fail "a string refused later"
grep -q "^client\.[0-9]*\.label $l254\$" "$dir/stats" ||
    fail "label: $(grep -a '^client\.[0-9]*\.label ' "$dir/stats")"
ctl dump > "$dir/a.live.jsonl" || fail dump
keys "$dir/a.live.jsonl" > "$dir/a.keys"
ctl dump --by path > "$dir/a.live.paths" || fail "dump --by path"
keys "$dir/a.live.paths" > "$dir/a.pkeys"
# The samples deeper than the daemon's paths go kept without their path,
# and counted; a restart keeps the count.
pathstats() { ctl stats | grep '^paths\.\(too_deep\|table_full\) '; }
pathstats > "$dir/a.pstats"
grep -q '^paths.too_deep [1-9]' "$dir/a.pstats" || fail "paths.too_deep"

# Every key at its limit is there, and nothing of the names over it.
rows() { grep -c "$1" "$dir/a.live.jsonl"; }
[ "$(wc -l < "$dir/a.live.jsonl")" -eq 4276 ] || fail "rows"
[ "$(rows "^{\"nodeid\":\"$n4096\",\"operator\":\"op\",")" -eq 2 ] ||
    fail "node id of 4096 bytes"
[ "$(rows "^{\"nodeid\":\"probe/max-op\",\"operator\":\"n\{4096\}\",\"backend\":\"n\{4096\}\",")" -eq 2 ] ||
    fail "operator and backend of 4096 bytes"
[ "$(rows '^{"nodeid":"probe/empty-op","operator":"","backend":"",')" -eq 4 ] ||
    fail "empty operator and backend"
[ "$(rows '^{"nodeid":"probe/empty-backend","operator":"op","backend":"",')" -eq 2 ] ||
    fail "empty backend"
[ "$(rows '^{"nodeid":"bytes \\ufffd\\ufffd \\ufffd( \\ufffd\\ufffd\\ufffd end","operator":"bytes ')" -eq 4 ] ||
    fail "names not UTF-8"
[ "$(rows '^{"nodeid":"ctl \\u0001\\u001b\[31m\\t\\n\\r\\u007f end","operator":"ctl ')" -eq 4 ] ||
    fail "names of control characters"
[ "$(rows '"nodeid":"probe/deep".*"range":"level-[0-9]*r\{4087\}"')" -eq 252 ] ||
    fail "range names of 4096 bytes, nested"
[ "$(rows '"nodeid":"probe/deep".*"range":"\(bytes\|ctl\) .*r\{4000\}"')" -eq 4 ] ||
    fail "odd range names of 4096 bytes, deepest"
[ "$(rows '"nodeid":"probe/many"')" -eq 4000 ] || fail "2000 range names"
[ "$(rows '"nodeid":"probe/over-range".*"range":"ok.range"')" -eq 2 ] ||
    fail "the ranges around a name over the limit"
grep -q 'ooooo\|over-op\|over-backend' "$dir/a.live.jsonl" &&
    fail "a name over the limit was taken"

# --- save, restarts, the snapshot --------------------------------------
ctl save -o "$dir/a.hrs" >/dev/null || fail "save"
ctl dump --from "$dir/a.hrs" | keys > "$dir/k" || fail "dump --from"
same "dump --from the save" "$dir/k"
ctl dump --by path --from "$dir/a.hrs" | keys | cmp -s - "$dir/a.pkeys" ||
    fail "paths of the save differ"
# restarted FROM: the daemon started again on the state holds the same
# keys, paths and paths' counts, read back from FROM.
restarted() {
    start a -s "$dir/state"
    ctl dump | keys > "$dir/k"
    same "restart from the $1" "$dir/k"
    ctl dump --by path | keys | cmp -s - "$dir/a.pkeys" ||
        fail "paths after the $1 differ"
    pathstats | cmp -s - "$dir/a.pstats" ||
        fail "paths' counts after the $1: $(pathstats)"
}
stop KILL
restarted journal
stop TERM
ctl dump --from "$dir/state/snapshot" | keys > "$dir/k" ||
    fail "dump --from the snapshot"
same "dump --from the snapshot" "$dir/k"
restarted snapshot
stop KILL
start a -s "$dir/state"
ctl dump | keys > "$dir/k"
same "killed after the snapshot" "$dir/k"
stop TERM

# Every format of the report takes every key.
for f in csv table folded tree pprof; do
    ctl dump --from "$dir/a.hrs" --format "$f" -o "$dir/a.$f" ||
        fail "dump --format $f"
    [ -s "$dir/a.$f" ] || fail "dump --format $f: empty"
done
[ "$(grep -c "^probe/many;warm;many\.[0-9]* " "$dir/a.folded")" -eq 2000 ] ||
    fail "folded: 2000 range names"
grep -q "^$n4096;warm;ok.range " "$dir/a.folded" || fail "folded: long node"
# plot: a picture per node, each well-formed XML (xmllint, where there).
ctl plot -o "$dir/plot.svg" --from "$dir/a.hrs" >/dev/null 2>&1 ||
    fail "plot"
[ "$(ls "$dir/plot" | grep -c '^node-[0-9]*\.svg$')" -eq 9 ] ||
    fail "plot: not a picture per node"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$dir"/plot/*.svg || fail "plot: not XML"
fi

# --- a second run: merge, diff ------------------------------------------
start b
# stats and its losses write a client's node ids as terminal text: an
# escape or a newline of a name never reaches the terminal as it is.
odd=$(printf 'ctl \033[31m\nnext')
"$limits" names 1 "$odd" >/dev/null || fail "limits names"
"$limits" hang "$odd" > "$dir/hang.out" & hpid=$!
i=0
until grep -q flushed "$dir/hang.out" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || fail "hang: not flushed"
    sleep 0.1
done
kill -KILL "$hpid"
wait "$hpid" 2>/dev/null
ctl stats > "$dir/stats" || fail stats
ctl stats --losses > "$dir/losses"
grep -q "$(printf '\033')" "$dir/stats" "$dir/losses" &&
    fail "stats: an escape of a name reached the terminal"
[ "$(grep -c '^client\.[0-9]*\.node ctl \\x1b\[31m\\nnext$' "$dir/stats")" -eq 2 ] ||
    fail "stats: node ids: $(grep '\.node ' "$dir/stats")"
grep -q 'node ids: ctl \\x1b\[31m\\nnext$' "$dir/losses" ||
    fail "stats --losses: $(cat "$dir/losses")"
ctl reset >/dev/null || fail reset
"$limits" chain > /dev/null || fail "limits chain (b)"
ctl save -o "$dir/b.hrs" >/dev/null || fail "save b"
stop TERM
ctl merge -o "$dir/m.hrs" "$dir/a.hrs" "$dir/b.hrs" >/dev/null || fail merge
ctl dump --from "$dir/m.hrs" | keys |
    sed 's/"count":\([0-9]*\)$/\1/' > "$dir/k" || fail "dump merged"
sed 's/"count":\([0-9]*\)$/\1/' "$dir/a.keys" |
    awk '{ n = $0; sub(/.*[^0-9]/, "", n); sub(/[0-9]*$/, ""); print $0 2 * n }' |
    cmp -s - "$dir/k" || fail "merge: a key missing or not counted twice"
ctl diff --format jsonl "$dir/a.hrs" "$dir/b.hrs" > "$dir/diff.jsonl" ||
    fail "diff"
sed -n 's/,"base_count":\([0-9]*\),"new_count":\1,.*/,"count":\1/p' \
    "$dir/diff.jsonl" | LC_ALL=C sort > "$dir/k"
same "diff: a key unpaired or miscounted" "$dir/k"

# --- the history ----------------------------------------------------------
ctl history add --db "$dir/h.db" "$dir/a.hrs" "$dir/b.hrs" >/dev/null ||
    fail "history add"
ctl history show --db "$dir/h.db" --format jsonl > "$dir/show.jsonl" ||
    fail "history show"
for run in $(sed 's/.*"run":"\([0-9a-f]*\)".*/\1/' "$dir/show.jsonl" |
             sort -u); do
    grep "\"run\":\"$run\"" "$dir/show.jsonl" |
        sed 's/^{"node":/{"nodeid":/; s/,"machine":.*\("count":[0-9]*\),.*/,\1/' |
        LC_ALL=C sort > "$dir/k"
    same "history show of run $run" "$dir/k"
done
[ "$(sed 's/.*"run":"\([0-9a-f]*\)".*/\1/' "$dir/show.jsonl" | sort -u |
     wc -l)" -eq 2 ] || fail "history show: runs"
# The merge of the two, judged against them: every key has a series.
ctl history check --db "$dir/h.db" --format jsonl "$dir/m.hrs" \
    > "$dir/check.jsonl" || fail "history check"
grep -q '"judged":4276,.*"not_judged":0,' "$dir/check.jsonl" ||
    fail "history check: not every key judged: $(tail -n 1 "$dir/check.jsonl")"
ctl history detect --db "$dir/h.db" --format jsonl >/dev/null ||
    fail "history detect"
ctl history plot --db "$dir/h.db" -o "$dir/page" > "$dir/page.out" ||
    fail "history plot"
grep -q ': 4276 series,' "$dir/page.out" ||
    fail "history plot: $(cat "$dir/page.out")"

# --- losses under labels at their limits -----------------------------------
# A client with no daemon and a spool of 1 MiB: what does not fit is
# counted lost under its labels, which the next daemon says, and so does
# every stage after it.
start c
stop TERM
HOSTRANGE_SPOOL_MB=1 HOSTRANGE_FLUSH_TIMEOUT_MS=100 \
    "$limits" chain labels-last >/dev/null || fail "limits chain (c)"
start c -s "$dir/state-c"
losses > "$dir/c.lost"
grep -q '^lost: 20 events of node probe/empty-op$' "$dir/c.lost" ||
    fail "no loss under an empty operator: $(cat "$dir/c.lost")"
grep -q "^lost: 10 events of node $n4096\$" "$dir/c.lost" ||
    fail "no loss under a node id of 4096 bytes"
ctl save -o "$dir/c.hrs" >/dev/null || fail "save c"
stop KILL
start c -s "$dir/state-c"
losses | cmp -s - "$dir/c.lost" || fail "losses after the journal differ"
stop TERM
start c -s "$dir/state-c"
losses | cmp -s - "$dir/c.lost" || fail "losses after the snapshot differ"
stop TERM
losses --from "$dir/c.hrs" | cmp -s - "$dir/c.lost" ||
    fail "losses of the save differ: $(losses --from "$dir/c.hrs")"
losses --from "$dir/state-c/snapshot" | cmp -s - "$dir/c.lost" ||
    fail "losses of the snapshot differ"
ctl merge -o "$dir/ac.hrs" "$dir/a.hrs" "$dir/c.hrs" >/dev/null ||
    fail "merge a c"
losses --from "$dir/ac.hrs" | cmp -s - "$dir/c.lost" ||
    fail "losses of a merge differ"
# --- the daemon's path table full ---------------------------------------
start d -s "$dir/state-d"
"$limits" names 66000 probe/full >/dev/null || fail "limits names"
pathstats > "$dir/d.pstats"
grep -q '^paths.table_full [1-9]' "$dir/d.pstats" || fail "paths.table_full"
stop TERM
start d -s "$dir/state-d"
pathstats | cmp -s - "$dir/d.pstats" ||
    fail "paths' counts of a full table after the snapshot: $(pathstats)"
stop TERM
echo "PASS"
