#!/bin/sh
# Run files end to end through real daemons: two shards saved, merged,
# dumped (from the file and from a daemon serving it) and diffed, sorted
# (the default, format 1) and --unsorted (format 2) alike; bad files
# refused with one line naming them, and nothing half-written.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# shard NAME PREFIX NODES: a daemon, the workload, save, stop.
shard() {
    export HOSTRANGE_RUNTIME_DIR="$dir/rt-$1"
    timeout 60 "$HOSTRANGED" -q & pid=$!
    "$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
    timeout 60 "$HOSTRANGE_TEST_WORKLOAD" -n "$3" -c 200 -r 5 -N "$2" \
        >/dev/null || fail "workload"
    "$HOSTRANGECTL" save -o "$dir/$1.hrs" --meta shard="$1" >/dev/null ||
        fail "save $1"
    "$HOSTRANGECTL" save --unsorted -o "$dir/$1.u.hrs" >/dev/null ||
        fail "save --unsorted $1"
    "$HOSTRANGECTL" dump > "$dir/$1.live.jsonl" || fail "dump $1"
    "$HOSTRANGECTL" dump --by path > "$dir/$1.live.paths" || fail "paths $1"
    # On a terminal (script gives one), save shows its progress; into a
    # file it shows nothing.
    if [ "$1" = a ] && command -v script >/dev/null 2>&1; then
        script -qefc "'$HOSTRANGECTL' save -o '$dir/tty.hrs'" /dev/null \
            > "$dir/tty.out" 2>&1 || fail "save on a terminal"
        grep -q "save: $dir/tty.hrs, [0-9]* keys, 0 MiB" "$dir/tty.out" ||
            fail "no progress of save: $(cat "$dir/tty.out")"
        "$HOSTRANGECTL" save -o "$dir/tty.hrs" 2> "$dir/err" >/dev/null &&
            [ ! -s "$dir/err" ] || fail "progress into a file"
    fi
    kill "$pid"; wait "$pid"; pid=
}
shard a t 2
shard b t 1

# The file reports exactly what the daemon did, in either format, per
# range name and per calling path.
cmp -s "$dir/a.hrs" "$dir/a.u.hrs" && fail "--unsorted wrote the same file"
for f in a a.u; do
    "$HOSTRANGECTL" dump --from "$dir/$f.hrs" > "$dir/$f.file.jsonl" ||
        fail "dump $f"
    cmp -s "$dir/a.live.jsonl" "$dir/$f.file.jsonl" ||
        fail "dump --from $f differs"
    "$HOSTRANGECTL" dump --by path --from "$dir/$f.hrs" > "$dir/$f.paths" ||
        fail "dump --by path $f"
    cmp -s "$dir/a.live.paths" "$dir/$f.paths" || fail "paths of $f differ"
done

# The union: node[0] appears in both shards, so its counts add.
"$HOSTRANGECTL" merge -o "$dir/m.hrs" "$dir/a.hrs" "$dir/b.hrs" >/dev/null ||
    fail merge
"$HOSTRANGECTL" dump --from "$dir/m.hrs" > "$dir/m.jsonl" || fail "dump m"
[ "$(wc -l < "$dir/m.jsonl")" -eq 18 ] || fail "merged rows"
grep -q '"nodeid":"t::node\[0\]".*"phase":"warm","range":"workload.outer","metric":"inclusive","count":400,' \
    "$dir/m.jsonl" || fail "merged warm count"
grep -q '"nodeid":"t::node\[0\]".*"phase":"cold","range":"workload.inner","metric":"self","count":2,' \
    "$dir/m.jsonl" || fail "merged cold count"
grep -q '"nodeid":"t::node\[1\]".*"phase":"warm","range":"workload.outer","metric":"inclusive","count":200,' \
    "$dir/m.jsonl" || fail "node[1] count"
# The same union from unsorted files, from both kinds at once, and written
# unsorted.
for how in "u.hrs b.u.hrs" "u.hrs b.hrs --unsorted" "hrs b.u.hrs --unsorted"; do
    set -- $how
    "$HOSTRANGECTL" merge ${3-} -o "$dir/mu.hrs" "$dir/a.$1" "$dir/$2" \
        >/dev/null || fail "merge $how"
    "$HOSTRANGECTL" dump --from "$dir/mu.hrs" | cmp -s - "$dir/m.jsonl" ||
        fail "merge $how differs"
done

# A run is counted once: the same file twice, a copy under another name,
# or a merge and one of its parts are refused with both files named (exit
# 3), and nothing is written; --allow-duplicates merges anyway and says so.
# Two merges of the same parts carry the same id.
cp "$dir/a.hrs" "$dir/a-copy.hrs"
for pair in "a.hrs a.hrs" "a.hrs a-copy.hrs" "m.hrs a-copy.hrs" "b.hrs m.hrs"; do
    set -- $pair
    "$HOSTRANGECTL" merge -o "$dir/dup.hrs" "$dir/$1" "$dir/$2" \
        > /dev/null 2> "$dir/err"
    [ $? -eq 3 ] || fail "merge $pair: exit status"
    grep -q "^hostrangectl merge: $dir/$2 holds run [0-9a-f]\{32\}, which $dir/$1 holds already" \
        "$dir/err" || fail "merge $pair: $(cat "$dir/err")"
    ls "$dir" | grep -q '^dup.hrs' && fail "merge $pair wrote its output"
done
"$HOSTRANGECTL" merge --allow-duplicates -o "$dir/dup.hrs" "$dir/a.hrs" \
    "$dir/a-copy.hrs" > /dev/null 2> "$dir/err" || fail "--allow-duplicates"
grep -q "a-copy.hrs holds run .* merged anyway (--allow-duplicates)" \
    "$dir/err" || fail "--allow-duplicates said nothing"
"$HOSTRANGECTL" dump --from "$dir/dup.hrs" |
    grep -q '"nodeid":"t::node\[1\]".*"phase":"warm","range":"workload.outer","metric":"inclusive","count":400,' ||
    fail "--allow-duplicates did not count twice"
"$HOSTRANGECTL" merge -o "$dir/m2.hrs" "$dir/b.hrs" "$dir/a-copy.hrs" \
    > /dev/null || fail "merge again"
id_of() { LC_ALL=C grep -ao '[0-9a-f]\{32\}' "$1" | sort -u | tr '\n' ' '; }
[ "$(id_of "$dir/m.hrs")" = "$(id_of "$dir/m2.hrs")" ] ||
    fail "two merges of the same parts: $(id_of "$dir/m.hrs") vs $(id_of "$dir/m2.hrs")"
[ "$(id_of "$dir/a.hrs" | wc -w)" -eq 1 ] || fail "a saved run has no id"
[ "$(id_of "$dir/a.hrs")" != "$(id_of "$dir/b.hrs")" ] || fail "ids alike"

# A daemon serving the merged run reports the same.
export HOSTRANGE_RUNTIME_DIR="$dir/rt-load"
timeout 60 "$HOSTRANGED" -q --load "$dir/m.hrs" & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no loading daemon"
"$HOSTRANGECTL" dump | cmp -s - "$dir/m.jsonl" || fail "--load differs"
kill "$pid"; wait "$pid"; pid=

# diff: node[1] is in a only; each side's 10 rows of node[0] are compared.
"$HOSTRANGECTL" diff -f jsonl "$dir/a.hrs" "$dir/b.hrs" > "$dir/d.jsonl" ||
    fail "diff"
[ "$(grep -c '"only":"base"' "$dir/d.jsonl")" -eq 9 ] || fail "only in base"
[ "$(grep -c '"base_count":200,"new_count":200' "$dir/d.jsonl")" -eq 4 ] ||
    fail "compared rows"
"$HOSTRANGECTL" diff -f jsonl "$dir/a.u.hrs" "$dir/b.u.hrs" |
    cmp -s - "$dir/d.jsonl" || fail "diff of unsorted files differs"
# The table: the key column is as wide as the widest key (no wider), so
# that the medians of every compared row end where the header's "new us"
# ends.
"$HOSTRANGECTL" diff "$dir/a.hrs" "$dir/b.hrs" > "$dir/d.txt" || fail "table"
awk '/^key +base us/ { end = index($0, "new us") + 5; next }
     / p=/ { rows++; k = substr($0, 1, end - 22)
             if (substr($0, end, 1) !~ /[0-9]/ ||
                 substr($0, end + 1, 1) != " ") bad++ }
     / only in / { k = substr($0, 1, index($0, " only in") - 1) }
     / p=| only in / { sub(/ +$/, "", k); if (length(k) > w) w = length(k) }
     END { exit !(end > 22 && rows == 9 && bad == 0 && w == end - 22) }' \
    "$dir/d.txt" || fail "table columns: $(cat "$dir/d.txt")"
# On a terminal, diff and dump --from show how much they have read.
if command -v script >/dev/null 2>&1; then
    script -qefc "'$HOSTRANGECTL' diff -f jsonl '$dir/a.hrs' '$dir/b.hrs'" \
        /dev/null > "$dir/tty.out" 2>&1 || fail "diff on a terminal"
    grep -q "diff: 0 of 0 MiB read and compared" "$dir/tty.out" ||
        fail "no progress of diff: $(cat "$dir/tty.out")"
    script -qefc "'$HOSTRANGECTL' dump --from '$dir/a.hrs'" /dev/null \
        > "$dir/tty.out" 2>&1 || fail "dump --from on a terminal"
    grep -q "dump: reading $dir/a.hrs, 0 of 0 MiB" "$dir/tty.out" ||
        fail "no progress of dump --from: $(cat "$dir/tty.out")"
fi
"$HOSTRANGECTL" diff -f jsonl "$dir/a.hrs" "$dir/b.hrs" 2> "$dir/err" \
    >/dev/null && [ ! -s "$dir/err" ] || fail "diff's progress into a file"
# A run against itself: no change, p = 1, nothing flagged.
"$HOSTRANGECTL" diff -f jsonl --fail-above 0 "$dir/a.hrs" "$dir/a.hrs" \
    > "$dir/aa.jsonl" || fail "A/A diff failed"
[ "$(grep -c '"shift_ns":0.0,.*"p":1.0,.*"flag":null' "$dir/aa.jsonl")" -eq 18 ] ||
    fail "A/A rows"

# Names with a quote, a backslash, a tab, a non-ASCII letter and a byte
# that is not UTF-8: diff writes each JSON string as the report does,
# escaped the same way (valid JSON, ASCII only).
odd=$(printf 'o\303\251"\\\t\377')
shard c "$odd" 1
"$HOSTRANGECTL" dump --from "$dir/c.hrs" > "$dir/c.jsonl" || fail "dump c"
"$HOSTRANGECTL" diff -f jsonl "$dir/c.hrs" "$dir/c.hrs" > "$dir/cc.jsonl" ||
    fail "diff c"
want='"nodeid":"o\u00e9\"\\\t\ufffd::node[0]"'
grep -qF "$want" "$dir/c.jsonl" || fail "dump's name: $(head -1 "$dir/c.jsonl")"
grep -qF "$want" "$dir/cc.jsonl" || fail "diff's name: $(head -1 "$dir/cc.jsonl")"
LC_ALL=C grep -q '[^ -~]' "$dir/cc.jsonl" && fail "diff wrote non-ASCII"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    json.loads(line)' "$dir/cc.jsonl" || fail "diff's JSON does not parse"
fi

# A merge holds every input open: it lifts its soft limit on open files as
# far as the hard one allows, and past that says what to do.
set -- $(for i in $(seq 40); do echo "$dir/a.hrs"; done)
( ulimit -Sn 30 && "$HOSTRANGECTL" merge --allow-duplicates \
    -o "$dir/many.hrs" "$@" ) > /dev/null 2>&1 || fail "merge of 40 inputs under a soft limit of 30"
( ulimit -n 30 && "$HOSTRANGECTL" merge --allow-duplicates \
    -o "$dir/many2.hrs" "$@" ) \
    2> "$dir/err" && fail "merged 40 inputs with 30 files"
grep -q "a merge holds its 40 inputs open at once; this process may open 30 files" \
    "$dir/err" || fail "open files: $(cat "$dir/err")"
ls "$dir" | grep -q '^many2.hrs' && fail "half-written output"
set --

# Bad files: one line naming the file; the output is not written.
head -c 100 "$dir/m.hrs" > "$dir/trunc.hrs"
printf 'HRSRUN9\n' > "$dir/future.hrs"
"$HOSTRANGECTL" merge -o "$dir/x.hrs" "$dir/a.hrs" "$dir/trunc.hrs" \
    2> "$dir/err" && fail "merged a truncated file"
grep -q "trunc.hrs: truncated at byte 8" "$dir/err" || fail "truncated msg"
[ "$(wc -l < "$dir/err")" -eq 1 ] || fail "one line"
ls "$dir" | grep -q '^x.hrs' && fail "half-written output"
"$HOSTRANGECTL" dump --from "$dir/a.live.jsonl" 2> "$dir/err" && fail foreign
grep -q "a.live.jsonl: not a hostrange run file" "$dir/err" || fail "foreign"
"$HOSTRANGECTL" diff "$dir/future.hrs" "$dir/a.hrs" 2> "$dir/err"
[ $? -eq 3 ] || fail "future exit status"
grep -q "future.hrs: written in run file layout 9, newer" "$dir/err" ||
    fail "future msg"
[ "$(wc -l < "$dir/err")" -eq 1 ] || fail "one line (future)"
# Cut inside a key: refused by dump --from and by hostranged --load.
size=$(wc -c < "$dir/m.hrs")
head -c $((size - 20)) "$dir/m.hrs" > "$dir/cut.hrs"
"$HOSTRANGECTL" dump --from "$dir/cut.hrs" > "$dir/out" 2> "$dir/err" &&
    fail "dumped a cut file"
grep -q "^hostrangectl dump: .*cut.hrs: truncated at byte [0-9]*" "$dir/err" ||
    fail "cut msg"
[ "$(wc -l < "$dir/err")" -eq 1 ] || fail "one line (cut)"
timeout 60 "$HOSTRANGED" -q --runtime-dir "$dir/rt-cut" --load "$dir/cut.hrs" \
    2> "$dir/err" && fail "served a cut file"
grep -q "cut.hrs: truncated at byte" "$dir/err" || fail "--load cut msg"
[ "$(wc -l < "$dir/err")" -eq 1 ] || fail "one line (--load)"
# An existing output stays as it was when an input is bad.
cp "$dir/a.hrs" "$dir/keep.hrs"
"$HOSTRANGECTL" merge -o "$dir/keep.hrs" "$dir/b.hrs" "$dir/cut.hrs" \
    2> "$dir/err" && fail "merged a cut file"
cmp -s "$dir/a.hrs" "$dir/keep.hrs" || fail "output changed"
# save with no daemon: an error naming the file, and no file at all.
"$HOSTRANGECTL" -r "$dir/rt-none" save -o "$dir/none.hrs" 2> "$dir/err" &&
    fail "saved without a daemon"
grep -q "none.hrs not written" "$dir/err" || fail "save msg"
ls "$dir" | grep -q '^none.hrs' && fail "half-written save"
exit 0
