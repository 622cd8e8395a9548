#!/bin/sh
# A machine that survives hosted CI runners: real runs recorded under a
# host name of their own each (unshare --uts), as a hosted runner gets a
# new one every job, form one series in the history and are judged;
# --machine on record, save, ab and history add, and $HOSTRANGE_MACHINE,
# name the machine in the run and key its series; a bad name is a usage
# error (exit 2) before anything runs; diff does not warn of another host
# name; a history of schema 3, whose machines were keyed by host and
# kernel, is re-keyed when opened (its series joined up, host and kernel
# kept with each run), read as it is by a user who may not write it, and
# drawn with its kernel changes marked (headless chromium).
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir" 2>/dev/null || { sleep 1; rm -rf "$dir"; }; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
unset HOSTRANGE_MACHINE
export TMPDIR="$dir"
unshare --uts true 2>/dev/null ||
    fail "unshare --uts is needed (util-linux; as root)"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed (./bootstrap)"
work() { "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 30 -r 2 -N job; }

# --- four jobs, each on a host of its own name: one machine -------------
for i in 1 2 3 4; do
    unshare --uts sh -c "hostname runner-$i-\$\$ && exec \"\$0\" record \
        -o /dev/null --save '$dir/job$i.hrs' --meta commit=c$i -- \
        '$HOSTRANGE_TEST_WORKLOAD' -n 1 -c 30 -r 2 -N job" "$HOSTRANGECTL" \
        > /dev/null 2> "$dir/err" || fail "job $i: $(cat "$dir/err")"
done
ctl history add --db "$dir/h.db" "$dir"/job*.hrs > /dev/null ||
    fail "history add of the jobs"
ctl history list --db "$dir/h.db" > "$dir/list" || fail "list"
[ "$(wc -l < "$dir/list")" -eq 4 ] || fail "list: $(cat "$dir/list")"
[ "$(cut -f 4 "$dir/list" | sort -u | wc -l)" -eq 1 ] ||
    fail "four jobs, several machines: $(cut -f 4 "$dir/list")"
cores=$(getconf _NPROCESSORS_ONLN)
# (clock waiting where the processor's default reads wait for the work
# before them: hostrange(3), Clock paths)
cut -f 4 "$dir/list" | head -1 | grep -Eq ", $cores cores; clock (fast|waiting)$" ||
    fail "the machine: $(cut -f 4 "$dir/list" | head -1)"
grep -q "runner-" "$dir/list" || fail "no host kept: $(cat "$dir/list")"
[ "$(cut -f 6 "$dir/list" | sort -u | wc -l)" -eq 4 ] ||
    fail "the hosts: $(cut -f 6 "$dir/list")"
[ "$(cut -f 7 "$dir/list" | sort -u)" = "$(uname -s) $(uname -r)" ] ||
    fail "the kernel: $(cut -f 7 "$dir/list")"
# show: a series of four runs, each with its own host.
ctl history show --db "$dir/h.db" -f jsonl --node 'job*' --phase warm \
    --range workload.inner > "$dir/show" || fail show
[ "$(grep -c '"metric":"inclusive"' "$dir/show")" -eq 4 ] ||
    fail "the series: $(cat "$dir/show")"
[ "$(grep -o '"host":"runner-[0-9]*-[0-9]*"' "$dir/show" | sort -u | wc -l)" -eq 4 ] ||
    fail "show's hosts: $(cat "$dir/show")"
# check of a fifth job on yet another host: its keys judged, none left
# out for want of history; --min-history 4 passes, 5 refuses (6).
unshare --uts sh -c "hostname runner-5-\$\$ && exec \"\$0\" record -o /dev/null \
    --save '$dir/job5.hrs' -- '$HOSTRANGE_TEST_WORKLOAD' -n 1 -c 30 -r 2 -N job" \
    "$HOSTRANGECTL" > /dev/null 2>&1 || fail "job 5"
nkeys=$(ctl dump --from "$dir/job5.hrs" | wc -l)
[ "$nkeys" -gt 0 ] || fail "job 5 has no keys"
ctl history check --db "$dir/h.db" --min-history 4 "$dir/job5.hrs" \
    > "$dir/check" 2> "$dir/err" || fail "check: $(cat "$dir/err")"
grep -Eq "^checked $nkeys keys of .*job5.hrs against the history of .*, $cores cores; clock (fast|waiting): [0-9]* differ \(p < 0.01\), 0 not judged; 0 judged by their rounds$" \
    "$dir/check" || fail "check summary: $(cat "$dir/check")"
ctl history check --db "$dir/h.db" --min-history 5 "$dir/job5.hrs" \
    > /dev/null 2> "$dir/err"
[ $? -eq 6 ] || fail "--min-history 5 of four runs: not 6"
grep -q "^hostrangectl history check: $nkeys keys have fewer than 5 runs of history on " \
    "$dir/err" || fail "--min-history msg: $(cat "$dir/err")"
# diff of two jobs of two hosts: machines match, no warning.
ctl diff "$dir/job1.hrs" "$dir/job2.hrs" > /dev/null 2> "$dir/err" ||
    fail "diff of two jobs"
grep -q "fingerprints" "$dir/err" && fail "diff warned of another host: $(cat "$dir/err")"
ctl diff --strict "$dir/job1.hrs" "$dir/job2.hrs" > /dev/null 2>&1 ||
    fail "diff --strict refused two jobs of one machine"

# --- a named machine: --machine, $HOSTRANGE_MACHINE -----------------------
ctl record -o /dev/null --machine ci-pool --save "$dir/m1.hrs" -- \
    "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 -N named > /dev/null 2>&1 ||
    fail "record --machine"
HOSTRANGE_MACHINE=ci-pool ctl record -o /dev/null --save "$dir/m2.hrs" \
    --rounds 2 -- "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 -N named \
    > /dev/null 2>&1 || fail "record --rounds with \$HOSTRANGE_MACHINE"
# save --machine, of a daemon of our own.
export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 60 "$HOSTRANGED" -q & pid=$!
ctl ping -w 10000 > /dev/null || fail "no daemon"
"$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 -N named > /dev/null || fail workload
HOSTRANGE_MACHINE=other ctl save -o "$dir/m3.hrs" --machine 'ci-pool' \
    > /dev/null || fail "save --machine"
kill "$pid"; wait "$pid"
unset HOSTRANGE_RUNTIME_DIR
ctl ab --rounds 1 --machine ci-pool --save-a "$dir/ab-a.hrs" \
    --save-b "$dir/ab-b.hrs" -- "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 \
    -N named ::: "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 -N named \
    > /dev/null 2> "$dir/err" || fail "ab --machine: $(cat "$dir/err")"
for f in m1 m2 m3 ab-a ab-b; do
    ctl history add --db "$dir/named.db" "$dir/$f.hrs" > /dev/null ||
        fail "add $f"
done
[ "$(ctl history list --db "$dir/named.db" | cut -f 4 | sort -u)" = ci-pool ] ||
    fail "named runs: $(ctl history list --db "$dir/named.db")"
# history add --machine over the run's own name, and over none.
ctl history add --db "$dir/named.db" --machine 'lab 7 (Ryzen)' \
    "$dir/job1.hrs" > /dev/null || fail "add --machine"
ctl history list --db "$dir/named.db" | grep -q "	c1	lab 7 (Ryzen)	" ||
    fail "add --machine: $(ctl history list --db "$dir/named.db")"
# Machines of two names: check of one against the other's history judges
# nothing, saying so.
ctl history check --db "$dir/named.db" "$dir/job2.hrs" -f jsonl \
    > "$dir/cross" 2> /dev/null || fail "check across machines"
[ "$(grep -c '"not_judged":"no history of this machine"}$' "$dir/cross")" -eq "$(ctl dump --from "$dir/job2.hrs" | wc -l)" ] ||
    fail "across machines: $(cat "$dir/cross")"
# diff of runs of two names warns, and --strict refuses (4).
ctl diff "$dir/m1.hrs" "$dir/job1.hrs" > /dev/null 2> "$dir/err"
grep -q "machine 'ci-pool' vs ''" "$dir/err" || fail "diff names: $(cat "$dir/err")"
ctl diff --strict "$dir/m1.hrs" "$dir/job1.hrs" > /dev/null 2>&1
[ $? -eq 4 ] || fail "diff --strict of two names"

# --- bad names: a usage error, before anything runs ----------------------
long=$(printf '%0256d' 0)
for bad in "" "$long" "$(printf 'a\tb')" "$(printf 'a\033[31m')" \
           "$(printf 'a\377b')"; do
    ctl record --machine "$bad" -o /dev/null -- touch "$dir/ran" \
        > /dev/null 2> "$dir/err"
    [ $? -eq 2 ] || fail "record --machine '$bad': not 2"
    grep -q "^hostrangectl record: bad --machine: a machine's name " \
        "$dir/err" || fail "record msg: $(cat "$dir/err")"
    [ -e "$dir/ran" ] && fail "record --machine '$bad' ran its command"
    HOSTRANGE_MACHINE="$bad" ctl record -o /dev/null -- touch "$dir/ran" \
        > /dev/null 2> "$dir/err"
    rc=$?
    if [ -n "$bad" ]; then
        [ $rc -eq 2 ] || fail "\$HOSTRANGE_MACHINE='$bad': not 2"
        grep -q "bad \$HOSTRANGE_MACHINE" "$dir/err" || fail "env msg: $(cat "$dir/err")"
        [ -e "$dir/ran" ] && fail "\$HOSTRANGE_MACHINE='$bad' ran its command"
    else
        # An empty variable names no machine.
        [ $rc -eq 0 ] && [ -e "$dir/ran" ] ||
            fail "an empty \$HOSTRANGE_MACHINE: $(cat "$dir/err")"
        rm -f "$dir/ran"
    fi
    ctl save --machine "$bad" -o "$dir/x.hrs" > /dev/null 2>&1
    [ $? -eq 2 ] || fail "save --machine '$bad': not 2"
    ctl history add --machine "$bad" --db "$dir/bad.db" "$dir/job1.hrs" \
        > /dev/null 2>&1
    [ $? -eq 2 ] || fail "history add --machine '$bad': not 2"
    ctl ab --machine "$bad" --rounds 1 -- touch "$dir/ran" ::: true \
        > /dev/null 2>&1
    [ $? -eq 2 ] || fail "ab --machine '$bad': not 2"
    [ -e "$dir/ran" ] && fail "ab --machine '$bad' ran its command"
done
[ -e "$dir/x.hrs" ] && fail "a bad name saved a run"
[ -e "$dir/bad.db" ] && fail "a bad name made a history"
# The longest name is kept whole.
name=$(printf '%0255d' 7)
ctl history add --db "$dir/long.db" --machine "$name" "$dir/job1.hrs" \
    > /dev/null || fail "a name of 255 bytes"
[ "$(ctl history list --db "$dir/long.db" | cut -f 4)" = "$name" ] ||
    fail "the name of 255 bytes"

# --- a history of schema 3: machines keyed by host and kernel, re-keyed ---
old=$dir/old.db
sqlite3 "$old" "
CREATE TABLE hostrange_schema (version INTEGER NOT NULL);
CREATE TABLE hostrange_machine (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE hostrange_run (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,
  time_ns BIGINT NOT NULL, saved_ns BIGINT NOT NULL, commit_id TEXT NOT NULL,
  machine BIGINT NOT NULL REFERENCES hostrange_machine (id), host TEXT NOT NULL,
  file TEXT NOT NULL, parts TEXT NOT NULL, nkeys BIGINT NOT NULL);
CREATE TABLE hostrange_meta (run BIGINT NOT NULL REFERENCES hostrange_run (id),
  key TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE hostrange_key (id INTEGER PRIMARY KEY, node TEXT NOT NULL,
  operator TEXT NOT NULL, backend TEXT NOT NULL, phase TEXT NOT NULL,
  range TEXT NOT NULL, metric TEXT NOT NULL,
  UNIQUE (node, operator, backend, phase, range, metric));
CREATE TABLE hostrange_point (run BIGINT NOT NULL REFERENCES hostrange_run (id),
  key BIGINT NOT NULL REFERENCES hostrange_key (id), count BIGINT NOT NULL,
  mean DOUBLE PRECISION NOT NULL, median DOUBLE PRECISION NOT NULL,
  p10 DOUBLE PRECISION NOT NULL, p90 DOUBLE PRECISION NOT NULL,
  rounds TEXT NOT NULL DEFAULT '', PRIMARY KEY (key, run));
CREATE INDEX hostrange_run_order ON hostrange_run (time_ns, id);
INSERT INTO hostrange_schema VALUES (3);
INSERT INTO hostrange_machine VALUES
  (1, 'gh-1: AMD EPYC 7763 64-Core Processor, 4 cores, Linux 6.5.0-1025-azure; clock fast'),
  (2, 'gh-2: AMD EPYC 7763 64-Core Processor, 4 cores, Linux 6.8.0-1014-azure; clock fast'),
  (3, 'gh-3: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz, 4 cores, Linux 6.5.0; clock ordered'),
  (4, 'old-box (no fingerprint)');
INSERT INTO hostrange_key VALUES (1, 'n', 'op', 'cpu', 'warm', 'r', 'inclusive');
INSERT INTO hostrange_run VALUES
  (1, 'r1', 1000000000, 1, 'c1', 1, 'gh-1', 'a.hrs', '', 1),
  (2, 'r2', 2000000000, 2, 'c2', 2, 'gh-2', 'b.hrs', '', 1),
  (3, 'r3', 3000000000, 3, 'c3', 1, 'gh-1', 'c.hrs', '', 1),
  (4, 'r4', 4000000000, 4, 'c4', 3, 'gh-3', 'd.hrs', '', 1),
  (5, 'r5', 5000000000, 5, 'c5', 4, 'old-box', 'e.hrs', '', 1);
INSERT INTO hostrange_point VALUES (1, 1, 5, 100, 100, 99, 101, ''),
  (2, 1, 5, 101, 101, 99, 102, ''), (3, 1, 5, 102, 102, 99, 103, ''),
  (4, 1, 5, 200, 200, 199, 201, ''), (5, 1, 5, 300, 300, 299, 301, '');
" || fail "a history of schema 3"
# A user who may not write it reads it as it is: machines as schema 3
# named them, no kernel; nothing changed.
if [ "$(id -u)" -eq 0 ]; then
    mkdir "$dir/ro" && cp "$old" "$dir/ro/old.db" || exit 99
    chmod 711 "$dir" && chmod 755 "$dir/ro" && chmod 444 "$dir/ro/old.db" ||
        exit 99
    runuser -u nobody -- "$HOSTRANGECTL" history list --db "$dir/ro/old.db" \
        > "$dir/ro.list" 2> "$dir/err" || fail "list as nobody: $(cat "$dir/err")"
    grep -q '^r1	1970-01-01T00:00:01Z	c1	gh-1: AMD EPYC 7763 64-Core Processor, 4 cores, Linux 6.5.0-1025-azure; clock fast	1	gh-1	-$' \
        "$dir/ro.list" || fail "read as it is: $(cat "$dir/ro.list")"
    [ "$(sqlite3 "$dir/ro/old.db" 'SELECT version FROM hostrange_schema')" = 3 ] ||
        fail "a reader who may not write migrated it"
else
    echo "# not root: no other user to read a history it may not write"
fi
ctl history list --db "$old" > "$dir/old.list" 2> "$dir/err" ||
    fail "list of schema 3: $(cat "$dir/err")"
printf '%s\n' \
    'r1	1970-01-01T00:00:01Z	c1	AMD EPYC 7763 64-Core Processor, 4 cores; clock fast	1	gh-1	Linux 6.5.0-1025-azure' \
    'r2	1970-01-01T00:00:02Z	c2	AMD EPYC 7763 64-Core Processor, 4 cores; clock fast	1	gh-2	Linux 6.8.0-1014-azure' \
    'r3	1970-01-01T00:00:03Z	c3	AMD EPYC 7763 64-Core Processor, 4 cores; clock fast	1	gh-1	Linux 6.5.0-1025-azure' \
    'r4	1970-01-01T00:00:04Z	c4	Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz, 4 cores; clock ordered	1	gh-3	Linux 6.5.0' \
    'r5	1970-01-01T00:00:05Z	c5	old-box (no fingerprint)	1	old-box	-' |
    cmp -s - "$dir/old.list" || fail "re-keyed: $(cat "$dir/old.list")"
[ "$(sqlite3 "$old" 'SELECT version FROM hostrange_schema')" = 5 ] ||
    fail "schema 3 not migrated"
[ "$(sqlite3 "$old" 'SELECT count(*) FROM hostrange_machine')" = 3 ] ||
    fail "machines left: $(sqlite3 "$old" 'SELECT * FROM hostrange_machine')"
# The joined series: three runs of one machine in one series.
ctl history show --db "$old" -f csv | grep -c ',"AMD EPYC 7763 64-Core Processor, 4 cores; clock fast",' |
    grep -qx 3 || fail "the joined series: $(ctl history show --db "$old" -f csv)"
# Opened again: nothing changes.
ctl history list --db "$old" | cmp -s - "$dir/old.list" ||
    fail "a second open changed the history"

# The page of it, in headless chromium: the series of the AMD machine is
# one line, and its kernel changes are marked where they happen (runs 2
# and 3), nowhere else.
browser=$(command -v chromium || command -v chromium-browser) ||
    fail "chromium is needed (./bootstrap installs it)"
ctl history plot --db "$old" -o "$dir/page" > /dev/null 2> "$dir/err" ||
    fail "history plot: $(cat "$dir/err")"
mkdir "$dir/seen" && node "${srcdir:-.}/tests/service/page_check.mjs" \
    "$browser" "$dir/profile" "file://$dir/page/index.html" "$dir/seen" \
    --all || fail "chromium on the history page"
[ "$(cat "$dir/seen/console.json")" = "[]" ] ||
    fail "console messages: $(cat "$dir/seen/console.json")"
/usr/bin/python3 - "$dir/seen/dom.html" <<'EOF' || fail "the page's kernel marks"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
# (The page's own script holds the same words: its names are not drawn.)
lines = [l for l in re.findall(r'<g class="line" data-machine="([^"]*)"', dom)
         if "esc(" not in l]
assert sorted(lines) == sorted([
    "AMD EPYC 7763 64-Core Processor, 4 cores; clock fast",
    "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz, 4 cores; clock ordered",
    "old-box (no fingerprint)"]), lines
marks = re.findall(r'<g class="kernel" data-run="(\d+)"><title>([^<]*)</title>',
                   dom)
assert marks == [
    ("1", "kernel Linux 6.5.0-1025-azure \u2192 Linux 6.8.0-1014-azure"),
    ("2", "kernel Linux 6.8.0-1014-azure \u2192 Linux 6.5.0-1025-azure")], marks
EOF
exit 0
