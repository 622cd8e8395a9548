#!/bin/sh
# Stopping record, record --rounds and ab loses nothing and leaves
# nothing (lib/runner/cleanup.h), through real daemons and real commands:
# SIGTERM, SIGINT and SIGHUP to record while its command runs (the
# command stopped, the run saved and marked stopped=SIGNAME, exit 128+N),
# SIGPIPE from a closed pipe, record --rounds and ab stopped or failing in
# a round (the completed rounds kept), record --history without --save,
# record stopped at random moments, record of a command that cannot be
# run (127 not found, 126 not runnable), and record under a TMPDIR too
# long for a daemon's sockets (its runtime directory made in /tmp): no
# hostranged, command or temporary directory outlives any of them.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
W=$HOSTRANGE_TEST_WORKLOAD
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
# Every runtime and round directory is made here.
export TMPDIR="$dir"

# left: fails when a daemon of this test still runs (its --runtime-dir is
# under $dir), a process of a command of this test (sleep 1000), or a
# directory record or ab made.
left() {
    ps -eo pid=,args= | grep -F -e "--runtime-dir $dir/" -e "sleep 1000$1" |
        grep -v grep && fail "$2: processes left"
    ls "$dir" | grep '^hostrange-' && fail "$2: directories left"
    return 0
}

# The warm workload.inner inclusive row of run file $1 as count,rounds.
inner() {
    ctl dump --from "$1" --fields rounds |
        grep '"phase":"warm","range":"workload.inner","metric":"inclusive"' |
        sed 's/.*"count":\([0-9]*\),.*"rounds":\([0-9]*\),.*/\1,\2/'
}

# A command that records 50 warm calls, then signals record (its parent)
# and waits: what it sent is in the run, and only the signal ends it.
stopper() {
    echo "\"$W\" -n 1 -c 50 -N t > /dev/null; kill -$1 \$PPID; exec sleep 1000$2"
}

# record stopped by SIGTERM, SIGINT, SIGHUP and SIGPIPE while its command
# runs: exit 128+N, the command stopped, the run saved with what was sent
# (50 warm calls) and marked stopped=SIGNAME, said on stderr; the daemon
# stopped and its directory removed.
for s in TERM:143 INT:130 HUP:129 PIPE:141; do
    sig=${s%:*}
    rm -f "$dir/s.hrs"
    ctl record --save "$dir/s.hrs" -o "$dir/r.jsonl" -- sh -c \
        "$(stopper "$sig" 1)" > /dev/null 2> "$dir/err"
    rc=$?
    [ "$rc" -eq "${s#*:}" ] || fail "SIG$sig: exit $rc: $(cat "$dir/err")"
    grep -qx "hostrangectl record: stopped by SIG$sig; the run saved in $dir/s.hrs is partial" \
        "$dir/err" || fail "SIG$sig said: $(cat "$dir/err")"
    [ "$(inner "$dir/s.hrs")" = "50,1" ] ||
        fail "SIG$sig: run: $(ctl dump --from "$dir/s.hrs" 2>&1)"
    grep -q '"phase":"warm","range":"workload.inner","metric":"inclusive","count":50,' \
        "$dir/r.jsonl" || fail "SIG$sig: report: $(cat "$dir/r.jsonl")"
    ctl diff "$dir/s.hrs" "$dir/s.hrs" 2> /dev/null |
        grep -q "^base $dir/s.hrs: .*; stopped=SIG$sig$" ||
        fail "SIG$sig: no stopped=SIG$sig in the run"
    left 1 "SIG$sig"
done

# SIGPIPE from the pipe: the command's output goes to `head -c1`, which
# has gone when the command writes again. The run is whole (the command
# ended before record wrote to the pipe): exit 141, and said so.
rm -f "$dir/s.hrs"
{
    ctl record --save "$dir/s.hrs" -- sh -c \
        "\"$W\" -n 1 -c 50 -N t; while :; do echo more; done" 2> "$dir/err"
    echo $? > "$dir/rc"
} | head -c1 > /dev/null
[ "$(cat "$dir/rc")" -eq 141 ] || fail "| head: exit $(cat "$dir/rc")"
grep -qx "hostrangectl record: stopped by SIGPIPE after COMMAND ended; the run saved in $dir/s.hrs is whole" \
    "$dir/err" || fail "| head said: $(cat "$dir/err")"
[ "$(inner "$dir/s.hrs")" = "50,1" ] || fail "| head: run"
left 1 "| head"

# record --history without --save: the run is added, and its file goes
# with the runtime directory.
ctl record --history "$dir/h.db" -o /dev/null -- "$W" -n 1 -c 50 -N t \
    > /dev/null 2> "$dir/err" || fail "record --history: $(cat "$dir/err")"
grep -q "^added run [0-9a-f]* to the history $dir/h.db" "$dir/err" ||
    fail "record --history said: $(cat "$dir/err")"
left 1 "record --history"
# Stopped while its command runs: the partial run is not added.
ctl record --history "$dir/h.db" -o /dev/null -- sh -c "$(stopper TERM 1)" \
    > /dev/null 2> "$dir/err"
[ $? -eq 143 ] || fail "record --history stopped: exit: $(cat "$dir/err")"
grep -qx "hostrangectl record: stopped by SIGTERM; the run, partial, was not added to the history $dir/h.db" \
    "$dir/err" || fail "record --history stopped said: $(cat "$dir/err")"
[ "$(ctl history list --db "$dir/h.db" | wc -l)" -eq 1 ] ||
    fail "a partial run added: $(ctl history list --db "$dir/h.db")"
left 1 "record --history stopped"

# record --rounds 3 stopped in round 3: the two completed rounds are
# merged and reported; the round cut short is not one of them.
rm -f "$dir/r.hrs" "$dir/n"
ctl record --rounds 3 --save "$dir/r.hrs" --fields rounds -o "$dir/r.jsonl" \
    -- sh -c "echo >> \"$dir/n\"; if [ \$(wc -l < \"$dir/n\") -eq 3 ]; then $(stopper TERM 2); fi; \"$W\" -n 1 -c 50 -N t > /dev/null" \
    > /dev/null 2> "$dir/err"
[ $? -eq 143 ] || fail "record --rounds: exit: $(cat "$dir/err")"
grep -qx "hostrangectl record: stopped by SIGTERM in round 3 of 3; the run saved in $dir/r.hrs keeps the 2 completed rounds" \
    "$dir/err" || fail "record --rounds said: $(cat "$dir/err")"
[ "$(inner "$dir/r.hrs")" = "100,2" ] || fail "record --rounds: run"
grep -q '"phase":"warm","range":"workload.inner","metric":"inclusive","count":100,.*"rounds":2,' \
    "$dir/r.jsonl" || fail "record --rounds: report: $(cat "$dir/r.jsonl")"
left 2 "record --rounds"

# ab --rounds 3 runs A B B A A B: A fails from round 4, its second
# round, on: each round run again once, then its pair dropped (B's round 3
# with it); the second pair dropped stops ab. Exit 5, the rounds named;
# the rounds of the completed pair kept: A's first, B's first.
rm -f "$dir/a.hrs" "$dir/b.hrs" "$dir/n"
ctl ab --rounds 3 --save-a "$dir/a.hrs" --save-b "$dir/b.hrs" -- sh -c \
    "\"$W\" -n 1 -c 50 -N a > /dev/null; echo >> \"$dir/n\"; [ \$(wc -l < \"$dir/n\") -lt 2 ]" \
    ::: "$W" -n 1 -c 50 -N b > /dev/null 2> "$dir/err"
[ $? -eq 5 ] || fail "ab with a failing round: exit: $(cat "$dir/err")"
grep -v '^timer_ns=' "$dir/err" > "$dir/said"
cat > "$dir/want" <<EOF
hostrangectl ab: round 4 (A: sh) failed with status 1; running it again
hostrangectl ab: round 4 (A: sh) failed with status 1
hostrangectl ab: pair 2 dropped: round 4 (A: sh) failed twice
hostrangectl ab: round 5 (A: sh) failed with status 1; running it again
hostrangectl ab: round 5 (A: sh) failed with status 1
hostrangectl ab: pair 3 dropped: round 5 (A: sh) failed twice; stopping
hostrangectl ab: the 1 completed round of A saved in $dir/a.hrs
hostrangectl ab: the 1 completed round of B saved in $dir/b.hrs
EOF
cmp -s "$dir/said" "$dir/want" || fail "ab said: $(cat "$dir/err")"
[ "$(inner "$dir/a.hrs")" = "50,1" ] || fail "ab: A's run"
[ "$(inner "$dir/b.hrs")" = "50,1" ] || fail "ab: B's run"
left 2 "ab, a failing round"

# A round that fails once (A's second) and then completes: the pair
# stands, and ab compares its 3 pairs (--max-rounds 3).
rm -f "$dir/a.hrs" "$dir/b.hrs" "$dir/n"
ctl ab --rounds 3 --max-rounds 3 --save-a "$dir/a.hrs" --save-b "$dir/b.hrs" -- sh -c \
    "\"$W\" -n 1 -c 50 -N a > /dev/null; echo >> \"$dir/n\"; [ \$(wc -l < \"$dir/n\") -ne 2 ]" \
    ::: "$W" -n 1 -c 50 -N b > /dev/null 2> "$dir/err"
[ $? -eq 0 ] || fail "ab with a round run again: exit: $(cat "$dir/err")"
grep -v '^timer_ns=' "$dir/err" > "$dir/said"
cat > "$dir/want" <<EOF
hostrangectl ab: round 4 (A: sh) failed with status 1; running it again
EOF
cmp -s "$dir/said" "$dir/want" || fail "ab run again said: $(cat "$dir/err")"
[ "$(inner "$dir/a.hrs")" = "150,3" ] || fail "ab run again: A's run"
[ "$(inner "$dir/b.hrs")" = "150,3" ] || fail "ab run again: B's run"
left 2 "ab, a round run again"

# ab stopped by SIGHUP in round 4: exit 129, the same rounds kept.
rm -f "$dir/a.hrs" "$dir/b.hrs" "$dir/n"
ctl ab --rounds 3 --save-a "$dir/a.hrs" --save-b "$dir/b.hrs" -- sh -c \
    "echo >> \"$dir/n\"; if [ \$(wc -l < \"$dir/n\") -eq 2 ]; then $(stopper HUP 3); fi; \"$W\" -n 1 -c 50 -N a > /dev/null" \
    ::: "$W" -n 1 -c 50 -N b > /dev/null 2> "$dir/err"
[ $? -eq 129 ] || fail "ab stopped: exit: $(cat "$dir/err")"
grep -v '^timer_ns=' "$dir/err" > "$dir/said"
cat > "$dir/want" <<EOF
hostrangectl ab: stopped by SIGHUP in round 4 (A: sh)
hostrangectl ab: the 1 completed round of A saved in $dir/a.hrs
hostrangectl ab: the 2 completed rounds of B saved in $dir/b.hrs
EOF
cmp -s "$dir/said" "$dir/want" || fail "ab stopped said: $(cat "$dir/err")"
[ "$(inner "$dir/a.hrs")" = "50,1" ] || fail "ab stopped: A's run"
[ "$(inner "$dir/b.hrs")" = "100,2" ] || fail "ab stopped: B's run"
left 3 "ab stopped"

# record and record --rounds 3 stopped at random moments (0 to 300 ms
# after the start: before the daemon answers, while the command runs,
# while the run is saved, after): each ends with 0 (it finished first)
# or 128+N, leaves a run file that reads back whole or none, and leaves
# no process and no directory.
i=0
while [ "$i" -lt 30 ]; do
    r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
    set -- TERM:143 INT:130 HUP:129
    shift $((r % 3))
    sig=${1%:*}
    rounds=$((1 + 2 * (i % 2)))
    f="$dir/k$i.hrs"
    # (not through ctl: a function run in the background is a shell of
    # its own, which the signal would stop in record's place)
    "$HOSTRANGECTL" record --rounds "$rounds" --save "$f" -o /dev/null -- sh -c \
        "\"$W\" -n 1 -c 50 -N t > /dev/null; sleep 0.05" > /dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf %03d $((r % 300)))"
    kill -"$sig" "$pid" 2> /dev/null
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq "${1#*:}" ] ||
        fail "try $i (--rounds $rounds, SIG$sig): exit $rc"
    if [ "$rc" -eq 0 ]; then
        [ "$(inner "$f")" = "$((50 * rounds)),$rounds" ] ||
            fail "try $i: a finished run: $(inner "$f")"
    elif [ -e "$f" ]; then
        ctl dump --from "$f" > /dev/null || fail "try $i: $f unreadable"
    fi
    left "" "try $i (--rounds $rounds, SIG$sig, exit $rc)"
    i=$((i + 1))
done

# A command that cannot be run, as a shell says: 127 when it is not
# found, 126 when it is there but cannot be run (a directory, a file
# without x); named on stderr, the daemon stopped, nothing left.
touch "$dir/noexec"
for c in "$dir/none:127:No such file" "$dir:126:Permission denied" \
         "$dir/noexec:126:Permission denied"; do
    cmd=${c%%:*} want=${c#*:}
    LC_ALL=C ctl record -o "$dir/x.jsonl" -- "$cmd" 2> "$dir/err"
    rc=$?
    [ "$rc" -eq "${want%%:*}" ] ||
        fail "record -- $cmd: exit $rc, not ${want%%:*}: $(cat "$dir/err")"
    grep -q -F "hostrangectl record: cannot run $cmd: ${want#*:}" \
        "$dir/err" || fail "record -- $cmd said: $(cat "$dir/err")"
    left "" "record -- $cmd"
done

# A temporary directory too long a path for a private daemon's sockets
# (DIR/hostrange-record-XXXXXX/control over a Unix socket address): the
# runtime directory is made in /tmp instead, the run is whole, and
# nothing is left in either.
long=$dir/$(printf '%0100d' 0)
mkdir "$long" || exit 99
ls -d /tmp/hostrange-record-* > "$dir/before" 2> /dev/null
TMPDIR=$long ctl record -o "$dir/long.jsonl" -- "$W" -n 1 -c 5 -N t \
    > /dev/null 2> "$dir/err" || fail "record under a long TMPDIR: $(cat "$dir/err")"
grep -q '"nodeid":"t::node\[0\]",.*"phase":"warm","range":"workload.inner","metric":"inclusive","count":5,' \
    "$dir/long.jsonl" || fail "long TMPDIR: $(cat "$dir/long.jsonl")"
[ -z "$(ls "$long")" ] || fail "left in the long TMPDIR: $(ls "$long")"
ls -d /tmp/hostrange-record-* 2> /dev/null | cmp -s - "$dir/before" ||
    fail "left in /tmp: $(ls -d /tmp/hostrange-record-*)"
exit 0
