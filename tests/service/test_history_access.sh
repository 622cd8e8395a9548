#!/bin/sh
# How the history is reached, against a SQLite file and a real PostgreSQL
# server (tests/helpers/pgserver.sh): names that are not UTF-8 stored byte
# for byte by both, answering alike; a key of names at their limit
# (4,096 bytes) stored by both as one key; a history of schema 3 in PostgreSQL
# migrated when first read; the commands that only read never
# make a history (a missing one: exit 3, naming history add) and read a
# read-only one (a SQLite file of mode 444 read by another user, a
# PostgreSQL role that may only select); a server that accepts and never
# answers: a connect timeout (PGCONNECT_TIMEOUT), one connection, exit 3;
# a password given on the command line hidden from /proc/PID/cmdline
# (history and record --history) with one warning; a full disk (a small
# tmpfs, where this test may mount one): "No space left on device", exit
# 5, nothing stored.
set -u
: "${HOSTRANGECTL:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
# Messages of libpq and grep's bytes, in the C locale.
LC_ALL=C
export LC_ALL
unset PGCONNECT_TIMEOUT PGPASSWORD
dir=$(mktemp -d) || exit 99
lpid=
cpid=
fail() { echo "FAIL: $*"; exit 1; }
. "${srcdir:-.}/tests/helpers/pgserver.sh"
cleanup() {
    [ -n "$cpid" ] && kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
    [ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
    pg_stop
    rm -rf "$dir"
}
trap cleanup EXIT
ctl() { "$HOSTRANGECTL" "$@"; }
pg_start

# --- runs whose names are not UTF-8 ----------------------------------------
# A node of bytes FF FE, a range of 80, a host and a commit in Latin-1.
node=$(printf 'n\377\376x')
range=$(printf 'r\200')
"$mkrun" -o "$dir/bad.hrs" -i "$(printf 'e%031x' 1)" -H "$(printf 'h\351')" \
    -m time=1700000000 -m commit="$(printf 'c\351')" -m "$(printf 'k\377')=v" \
    -k "$node/$range=5" -k "n1/r=7" || fail mkrun
# A run of UTF-8 names (é), for the database of the previous schema.
"$mkrun" -o "$dir/good.hrs" -i "$(printf 'e%031x' 2)" -H hostA \
    -m time=1700000060 -m commit=c2 -k "$(printf 'n\303\251')/r=9" ||
    fail mkrun
"$mkrun" -o "$dir/big.hrs" -i "$(printf 'e%031x' 3)" -K 2000 || fail mkrun

new_pg
pgdb=$db
sqdb=$dir/h.db
for db in "$sqdb" "$pgdb"; do
    ctl history add --db "$db" "$dir/bad.hrs" > "$dir/out" 2>&1 ||
        fail "add of names not UTF-8 to $db: $(cat "$dir/out")"
done
for f in "list" "show -f jsonl" "show -f csv" "show"; do
    ctl history $f --db "$sqdb" > "$dir/sq.out" || fail "sqlite: $f"
    ctl history $f --db "$pgdb" > "$dir/pg.out" || fail "pg: $f"
    cmp -s "$dir/sq.out" "$dir/pg.out" ||
        fail "$f differs: $(diff "$dir/sq.out" "$dir/pg.out")"
done
# The bytes themselves, in csv (which writes names as they are) and in
# the server's table.
want=$(printf '%s,op,cpu,warm,%s,inclusive,"Test CPU 3000, 4 cores; clock fast",2023-11-14T22:13:20Z,c\351,e0000000000000000000000000000001,h\351,Linux 6.1.0,5,' "$node" "$range")
ctl history show --db "$pgdb" -f csv | grep -qF "$want" ||
    fail "names changed: $(ctl history show --db "$pgdb" -f csv | od -c | head)"
[ "$(pg "$pgname" "COPY (SELECT encode(node, 'hex') || ' ' || encode(range, 'hex')
    FROM hostrange_key WHERE metric = 'inclusive' ORDER BY id) TO STDOUT")" = \
  "6efffe78 7280
6e31 72" ] || fail "the bytes in the server"
[ "$(pg "$pgname" "COPY (SELECT encode(key, 'hex') FROM hostrange_meta
    WHERE value = 'v') TO STDOUT")" = 6bff ] || fail "the meta's bytes"
# check of the run against itself finds the same keys in both.
ctl history check --db "$sqdb" "$dir/bad.hrs" > "$dir/sq.out" || fail "check sqlite"
ctl history check --db "$pgdb" "$dir/bad.hrs" > "$dir/pg.out" || fail "check pg"
cmp -s "$dir/sq.out" "$dir/pg.out" || fail "check differs"

# --- names at their limit ----------------------------------------------------
# A node and a range of 4,096 bytes each that do not compress, in two runs:
# stored by both, as one key (the second run's names found the first's).
hex4096() { awk -v s="$1" 'BEGIN { srand(s); for (i = 0; i < 4096; i++)
    printf "%x", int(rand() * 16) }'; }
long=$(hex4096 1)/$(hex4096 2)
for i in 4 5; do
    "$mkrun" -o "$dir/long$i.hrs" -i "$(printf 'e%031x' "$i")" \
        -m time=170000000$i -k "$long=5" || fail mkrun
done
for db in "$sqdb" "$pgdb"; do
    ctl history add --db "$db" "$dir/long4.hrs" "$dir/long5.hrs" \
        > "$dir/out" 2>&1 || fail "add of names at the limit to $db: $(cat "$dir/out")"
done
ctl history show --db "$sqdb" -f csv > "$dir/sq.out" || fail "sqlite: show"
ctl history show --db "$pgdb" -f csv > "$dir/pg.out" || fail "pg: show"
cmp -s "$dir/sq.out" "$dir/pg.out" ||
    fail "show of names at the limit differs: $(diff "$dir/sq.out" "$dir/pg.out")"
[ "$(grep -c "^${long%/*},op,cpu,warm,${long#*/},inclusive," "$dir/pg.out")" -eq 2 ] ||
    fail "names at the limit: not two runs"
[ "$(pg "$pgname" "COPY (SELECT count(*) FROM hostrange_key
    WHERE length(node) = 4096) TO STDOUT")" = 2 ] ||
    fail "names at the limit: not one key (of two metrics)"

# --- a PostgreSQL history of schema 3 (names as text) ----------------------
new_pg
ctl history add --db "$db" "$dir/good.hrs" > /dev/null || fail "add good"
ctl history show --db "$db" -f csv > "$dir/v4.csv" || fail "show v4"
# Schema 3's key names were unique by their columns' constraint.
pg "$pgname" "DROP INDEX hostrange_key_names;
    ALTER TABLE hostrange_key ADD UNIQUE (node, operator, backend, phase,
        range, metric)" || fail "back to the constraint"
for c in hostrange_machine.name hostrange_run.commit_id hostrange_run.host \
         hostrange_run.file hostrange_meta.key hostrange_meta.value \
         hostrange_key.node hostrange_key.operator hostrange_key.backend \
         hostrange_key.phase hostrange_key.range hostrange_key.metric; do
    pg "$pgname" "ALTER TABLE ${c%.*} ALTER COLUMN ${c#*.} TYPE TEXT
        USING convert_from(${c#*.}, 'UTF8')" || fail "back to text: $c"
done
# As schema 3 kept them: no kernel, the machine named by host and kernel.
pg "$pgname" "ALTER TABLE hostrange_run DROP COLUMN kernel;
    UPDATE hostrange_machine SET
        name = 'hostA: Test CPU 3000, 4 cores, Linux 6.1.0; clock fast';
    UPDATE hostrange_schema SET version = 3" || fail "version 3"
# A command that only reads, of a user who may write: migrated (in one
# transaction), and the same answers as before, machine and kernel
# included.
ctl history show --db "$db" -f csv > "$dir/v3.csv" || fail "show of version 3"
cmp -s "$dir/v3.csv" "$dir/v4.csv" || fail "version 3 read: $(cat "$dir/v3.csv")"
[ "$(pg "$pgname" 'COPY (SELECT version FROM hostrange_schema) TO STDOUT')" = 5 ] ||
    fail "version 3 not migrated"
[ "$(pg "$pgname" "COPY (SELECT data_type FROM information_schema.columns
    WHERE table_name = 'hostrange_key' AND column_name = 'node') TO STDOUT")" = bytea ] ||
    fail "node not bytea after the migration"
# add stores names not UTF-8 in it.
ctl history add --db "$db" "$dir/bad.hrs" > /dev/null || fail "add to version 3"
ctl history show --db "$db" -f csv --node "$(printf 'n\303\251')" > "$dir/m.csv" ||
    fail "show after migration"
cmp -s "$dir/m.csv" "$dir/v4.csv" || fail "the migrated run: $(cat "$dir/m.csv")"
ctl history show --db "$db" -f csv | grep -qF "$want" || fail "added after migration"
ctl history add --db "$db" "$dir/long4.hrs" > /dev/null ||
    fail "add of names at the limit after migration"

# --- the commands that only read never make a history ----------------------
cp "$dir/bad.hrs" "$dir/run.hrs"
for c in list show detect "check $dir/run.hrs" "plot -o $dir/page"; do
    name=${c%% *}
    ctl history $c --db "$dir/typo.db" > "$dir/out" 2> "$dir/err"
    [ $? -eq 3 ] || fail "$name of a missing history: exit status"
    [ "$(cat "$dir/err")" = "hostrangectl history $name: no history at $dir/typo.db (hostrangectl history add makes one)" ] ||
        fail "$name of a missing history: $(cat "$dir/err")"
    for f in "$dir/typo.db" "$dir/typo.db-wal" "$dir/typo.db-shm" "$dir/page"; do
        [ -e "$f" ] && fail "$name made $f"
    done
done
new_pg
ctl history list --db "$db" > /dev/null 2> "$dir/err"
[ $? -eq 3 ] || fail "list of an empty PostgreSQL database: exit status"
grep -qx "hostrangectl history list: no history at $db (hostrangectl history add makes one)" \
    "$dir/err" || fail "empty PostgreSQL database: $(cat "$dir/err")"
[ "$(pg "$pgname" "COPY (SELECT count(*) FROM information_schema.tables
    WHERE table_schema = current_schema()) TO STDOUT")" = 0 ] ||
    fail "list made tables"

# --- read-only histories ---------------------------------------------------
# PostgreSQL: a role that may only select reads.
pg "$(echo "$pgdb" | sed 's/.*dbname=//')" "CREATE ROLE reader LOGIN;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader" || fail "reader"
rodb=$(echo "$pgdb" | sed 's/user=hostrange/user=reader/')
for f in "list" "show -f csv" "check $dir/bad.hrs" "detect"; do
    ctl history $f --db "$pgdb" > "$dir/rw.out" || fail "pg: $f"
    ctl history $f --db "$rodb" > "$dir/ro.out" 2> "$dir/err" ||
        fail "pg, a role that may only select: $f: $(cat "$dir/err")"
    cmp -s "$dir/rw.out" "$dir/ro.out" || fail "pg, read-only $f differs"
done
# SQLite: a file of mode 444, read by another user, in a directory that
# user may not write (no WAL index can be made there) and in one it may.
if [ "$(id -u)" -eq 0 ] && command -v runuser > /dev/null 2>&1 &&
   runuser -u nobody -- "$HOSTRANGECTL" --version > /dev/null 2>&1; then
    chmod 711 "$dir"
    for mode in 755 1777; do
        ro=$dir/ro$mode
        mkdir "$ro" && chmod "$mode" "$ro" || fail mkdir
        cp "$sqdb" "$ro/h.db" && cp "$dir/bad.hrs" "$ro/run.hrs" || fail cp
        chmod 444 "$ro/h.db" "$ro/run.hrs"
        for f in "list" "show -f csv" "check $ro/run.hrs" "detect"; do
            ctl history $f --db "$sqdb" > "$dir/rw.out" || fail "$f"
            runuser -u nobody -- "$HOSTRANGECTL" history $f --db "$ro/h.db" \
                > "$dir/ro.out" 2> "$dir/err" ||
                fail "read-only file, directory $mode: $f: $(cat "$dir/err")"
            cmp -s "$dir/rw.out" "$dir/ro.out" ||
                fail "read-only file, directory $mode: $f differs"
        done
        [ "$(stat -c %a "$ro/h.db")" = 444 ] || fail "mode changed"
        cmp -s "$sqdb" "$ro/h.db" || fail "the read-only file changed"
    done
    runuser -u nobody -- "$HOSTRANGECTL" history add --db "$dir/ro755/h.db" \
        "$dir/ro755/run.hrs" > /dev/null 2>&1
    [ $? -eq 3 ] || fail "add to a read-only file"
else
    echo "# not root (or no runuser, or nobody cannot run $HOSTRANGECTL):" \
        "a read-only file as another user is not tried"
fi

# --- a server that accepts and never answers -------------------------------
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("accepted\n")
' "$dir/port" "$dir/accepts" & lpid=$!
while [ ! -s "$dir/port" ]; do
    kill -0 "$lpid" 2>/dev/null || fail "the listener did not start"
    sleep 0.1
done
port=$(cat "$dir/port")
accepts() { [ -e "$dir/accepts" ] && wc -l < "$dir/accepts" || echo 0; }
PGCONNECT_TIMEOUT=2 ctl history list \
    --db "postgresql://hostrange@127.0.0.1:$port/x" > "$dir/out" 2> "$dir/err"
[ $? -eq 3 ] || fail "a server that never answers: exit status"
grep -qx "hostrangectl history list: postgresql://hostrange@127.0.0.1:$port/x: cannot connect: .*timeout expired" \
    "$dir/err" || fail "never answers: $(cat "$dir/err")"
[ "$(accepts)" -eq 1 ] || fail "connected $(accepts) times, not once"
PGCONNECT_TIMEOUT=2 ctl history add \
    --db "postgresql://hostrange@127.0.0.1:$port/x" "$dir/bad.hrs" \
    > "$dir/out" 2> "$dir/err"
[ $? -eq 3 ] || fail "add to a server that never answers: exit status"
grep -q "cannot connect: .*timeout expired" "$dir/err" ||
    fail "add, never answers: $(cat "$dir/err")"

# A password on the command line: hidden from /proc/PID/cmdline while
# hostrangectl waits on the server, one warning.
PGCONNECT_TIMEOUT=600 "$HOSTRANGECTL" history show \
    --db "postgresql://hostrange:s3cr3tpw@127.0.0.1:$port/x" \
    > "$dir/out" 2> "$dir/err" & cpid=$!
while [ "$(accepts)" -lt 3 ]; do
    kill -0 "$cpid" 2>/dev/null || fail "show ended: $(cat "$dir/err")"
    sleep 0.1
done
tr '\0' ' ' < "/proc/$cpid/cmdline" > "$dir/cmdline"
kill "$cpid"; wait "$cpid"; cpid=
grep -q s3cr3tpw "$dir/cmdline" && fail "the password in argv: $(cat "$dir/cmdline")"
grep -qF -- "--db postgresql://hostrange:********@127.0.0.1:$port/x " \
    "$dir/cmdline" || fail "argv: $(cat "$dir/cmdline")"
[ "$(grep -c 'warning: a password on the command line can be seen by other users; PGPASSWORD or ~/.pgpass is safer' "$dir/err")" -eq 1 ] ||
    fail "the warning: $(cat "$dir/err")"
# record --history: hidden while the command runs; the add then times out.
PGCONNECT_TIMEOUT=2 "$HOSTRANGECTL" record -o /dev/null \
    --history="postgresql://hostrange:s3cr3tpw@127.0.0.1:$port/x" -- \
    sh -c "touch '$dir/started'; while [ ! -e '$dir/go' ]; do sleep 0.1; done" \
    > "$dir/out" 2> "$dir/err" & cpid=$!
while [ ! -e "$dir/started" ]; do
    kill -0 "$cpid" 2>/dev/null || fail "record ended: $(cat "$dir/err")"
    sleep 0.1
done
tr '\0' ' ' < "/proc/$cpid/cmdline" > "$dir/cmdline"
touch "$dir/go"
wait "$cpid"; st=$?; cpid=
grep -q s3cr3tpw "$dir/cmdline" && fail "record: the password in argv"
grep -qF -- "--history=postgresql://hostrange:********@" "$dir/cmdline" ||
    fail "record argv: $(cat "$dir/cmdline")"
[ "$st" -eq 1 ] || fail "record --history to a server that never answers: $st"
[ "$(grep -c 'warning: a password on the command line' "$dir/err")" -eq 1 ] ||
    fail "record's warning: $(cat "$dir/err")"
grep -q 'cannot connect: .*timeout expired' "$dir/err" ||
    fail "record: $(cat "$dir/err")"
grep -q s3cr3tpw "$dir/err" "$dir/out" && fail "record showed the password"

# --- a full disk -----------------------------------------------------------
# A tmpfs of 256 KiB in a mount namespace of its own (root only): the
# first run fits, the run of 2,000 keys does not.
mkdir "$dir/small" || fail mkdir
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null 2>&1 &&
   unshare -m sh -c "mount -t tmpfs -o size=256k tmpfs '$dir/small'" \
       2> /dev/null; then
    unshare -m sh -c "mount -t tmpfs -o size=256k tmpfs '$dir/small' || exit 99
        '$HOSTRANGECTL' history add --db '$dir/small/h.db' '$dir/good.hrs' \
            > /dev/null || exit 98
        '$HOSTRANGECTL' history add --db '$dir/small/h.db' '$dir/big.hrs' \
            > '$dir/out' 2> '$dir/err'
        echo \$? > '$dir/status'
        '$HOSTRANGECTL' history list --db '$dir/small/h.db' > '$dir/list'"
    [ $? -eq 0 ] || fail "the small tmpfs"
    [ "$(cat "$dir/status")" -eq 5 ] || fail "a full disk: exit $(cat "$dir/status")"
    grep -qx "hostrangectl history add: $dir/small/h.db: .*No space left on device.*; $dir/big.hrs not stored" \
        "$dir/err" || fail "a full disk: $(cat "$dir/err")"
    [ "$(wc -l < "$dir/list")" -eq 1 ] || fail "half-stored on a full disk"
else
    echo "# cannot mount a small tmpfs here (not root, or no mount" \
        "namespace): a full disk is not tried"
fi
exit 0
