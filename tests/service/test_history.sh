#!/bin/sh
# hostrangectl history end to end, the same checks against a SQLite file
# and against a real PostgreSQL server (started here by
# tests/helpers/pgserver.sh; a server that cannot be started fails the
# test): made-up runs of two machines added, listed,
# shown; a step found at its commit on its machine only; a run checked
# against its history; a run stored once; names with quotes, semicolons,
# %, backslashes and non-ASCII stored byte for byte; a damaged run file, a
# database of something else and a newer schema refused (exit 3) with
# nothing stored; an older schema read as it is by list and show and
# migrated by add; eight adds at once losing
# nothing; both backends giving the same answers; a password never shown.
# Rounds: runs of record --rounds 3 stored with each key's round medians,
# and check of such a run judged by its rounds; a database of schema 2
# migrated.
# Also: a real run saved by a daemon added, and hostranged linking neither
# database.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_WORKLOAD:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
dir=$(mktemp -d) || exit 99
. "${srcdir:-.}/tests/helpers/pgserver.sh"
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    pg_stop
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }

# hostranged links neither database.
if command -v ldd >/dev/null 2>&1; then
    ldd "$HOSTRANGED" | grep -E 'sqlite|libpq' && fail "hostranged links a database"
fi

# --- PostgreSQL: a server of our own, as an unprivileged user --------------
pg_start
n_sq=0
new_sqlite() { n_sq=$((n_sq + 1)); db="$dir/h$n_sq.db"; }

# --- runs: 30 of machine A (host hostA, CPU 3000; backend.submit 10%
# slower from run 20, commit c20; cache.lookup steady), 30 of machine B
# (host hostB, CPU 4000) at the slower level all along, interleaved in
# time -----------------------------------------------------------------
odd=$(printf 'n\047q"x;%%\\\303\251')
for i in $(seq 0 29); do
    v=1000; [ "$i" -ge 20 ] && v=1100
    t=$((1700000000 + i * 60))
    "$mkrun" -o "$dir/a$i.hrs" -i "$(printf 'a%031x' "$i")" -H hostA \
        -m time=$t -m commit=c$i -k "n1/backend.submit=$((v + (i * 7) % 11))" \
        -k "n1/cache.lookup=$((500 + (i * 3) % 7))" -k "$odd/r%;\\=7" ||
        fail mkrun
    "$mkrun" -o "$dir/b$i.hrs" -i "$(printf 'b%031x' "$i")" -H hostB -C "Test CPU 4000" \
        -m time=$((t + 30)) -m commit=c$i \
        -k "n1/backend.submit=$((1100 + (i * 5) % 11))" || fail mkrun
done
# A pull request's runs: much slower, and at the newest level.
"$mkrun" -o "$dir/pr-slow.hrs" -i "$(printf 'c%031x' 1)" -H hostA \
    -m commit=pr1 -k "n1/backend.submit=1300" || fail mkrun
"$mkrun" -o "$dir/pr-same.hrs" -i "$(printf 'c%031x' 2)" -H hostA \
    -m commit=pr2 -k "n1/backend.submit=1104" || fail mkrun
# Eight runs for adding at once, each of 40 keys.
for i in 1 2 3 4 5 6 7 8; do
    "$mkrun" -o "$dir/par$i.hrs" -i "$(printf 'd%031x' "$i")" -K 40 \
        -v $((1000 + i)) || fail mkrun
done
head -c 200 "$dir/a0.hrs" > "$dir/cut.hrs"
printf 'not a run\n' > "$dir/text.hrs"

# A real run: a daemon, the workload, save.
export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 60 "$HOSTRANGED" -q & pid=$!
ctl ping -w 10000 >/dev/null || fail "no daemon"
timeout 60 "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 50 -r 2 -N real >/dev/null ||
    fail workload
ctl save -o "$dir/real.hrs" --meta commit=real1 >/dev/null || fail save
kill "$pid"; wait "$pid"; pid=

# Runs of rounds (rounds-NAME.hrs), each round under a daemon of its own
# (record --rounds 3): hostrange-bench, then with binding.body 100% slower,
# with 3 rounds and with 1.
bench=${top_builddir:-.}/bench/hostrange-bench
for r in base:3: slow:3:--slow=binding.body=100 slow1:1:--slow=binding.body=100; do
    name=${r%%:*}; rest=${r#*:}; n=${rest%%:*}; knob=${rest#*:}
    TMPDIR=$dir ctl record --rounds "$n" --save "$dir/rounds-$name.hrs" \
        --meta commit="$name" -o /dev/null -- "$bench" --op gemm \
        --target-ms 5 --max-calls 100 $knob > /dev/null 2> "$dir/err" ||
        fail "record --rounds $n: $(cat "$dir/err")"
done
# The round medians of each key, as dump --fields rounds gives them.
ctl dump --from "$dir/rounds-base.hrs" --fields rounds -f jsonl |
    sed 's/^{"nodeid":\("[^"]*"\).*"phase":\("[^"]*"\),"range":\("[^"]*"\),"metric":\("[^"]*"\).*\("round_medians":\[[^]]*\]\).*/\1 \2 \3 \4 \5/' |
    sort > "$dir/base.rounds"
[ "$(grep -c '"round_medians":\[[0-9.e+]*,[0-9.e+]*,[0-9.e+]*\]$' "$dir/base.rounds")" -eq "$(wc -l < "$dir/base.rounds")" ] ||
    fail "base.hrs: not 3 round medians a key: $(cat "$dir/base.rounds")"
# Built with --disable-host-range-profiling, hostrange-bench reports
# nothing: the runs of rounds hold no key, and the checks that judge them
# are left to the builds with ranges (where they must hold keys).
bench_ranges=${HOSTRANGE_TEST_BENCH_HAS_RANGES:-1}
if [ "$bench_ranges" = 1 ]; then
    [ -s "$dir/base.rounds" ] || fail "base.hrs holds no key"
else
    [ -s "$dir/base.rounds" ] &&
        fail "a benchmark without ranges reported: $(cat "$dir/base.rounds")"
    echo "# hostrange-bench has no ranges: no check of runs of rounds by check"
fi

# suite KIND: every check against a new database of backend KIND.
suite() {
    kind=$1
    new_$kind
    echo "# $kind"
    out=$dir/$kind
    # add: 60 runs stored; each said once.
    ctl history add --db "$db" "$dir"/a*.hrs "$dir"/b*.hrs > "$out.add" ||
        fail "$kind: add"
    [ "$(grep -c '^added ' "$out.add")" -eq 60 ] || fail "$kind: added $(cat "$out.add")"
    # The same run again, under its name or another: stored once.
    cp "$dir/a3.hrs" "$dir/again.hrs"
    ctl history add --db "$db" "$dir/a3.hrs" "$dir/again.hrs" > "$out.again" ||
        fail "$kind: add again"
    [ "$(grep -c 'is stored already; nothing changed' "$out.again")" -eq 2 ] ||
        fail "$kind: again: $(cat "$out.again")"
    ctl history list --db "$db" > "$out.list" || fail "$kind: list"
    [ "$(wc -l < "$out.list")" -eq 60 ] || fail "$kind: list has $(wc -l < "$out.list") runs"
    # list: id, time, commit, machine, keys, host, kernel; in time order.
    printf 'a0000000000000000000000000000000\t2023-11-14T22:13:20Z\tc0\tTest CPU 3000, 4 cores; clock fast\t6\thostA\tLinux 6.1.0\n' |
        cmp -s - "$(head -1 "$out.list" > "$out.l1"; echo "$out.l1")" ||
        fail "$kind: first line: $(head -1 "$out.list")"
    sed -n 2p "$out.list" | grep -q '^b0000000000000000000000000000000	' ||
        fail "$kind: order: $(sed -n 2p "$out.list")"

    # detect: the step of hostA at c20, one finding: it starts in
    # backend.submit's self time, its inclusive time moved with it; not on
    # hostB. The first line states the rule over all series.
    ctl history detect --db "$db" -f jsonl > "$out.detect" ||
        fail "$kind: detect exit $?"
    [ "$(wc -l < "$out.detect")" -eq 2 ] || fail "$kind: detect: $(cat "$out.detect")"
    head -1 "$out.detect" | grep -q '^{"rule":"a change moves its series by at least 2 clock steps of its machine; Benjamini-Hochberg false discovery rate q=0.01 over [0-9]* series","series":[0-9]*,"alpha":0.01,"min_steps":2,"findings":1}$' ||
        fail "$kind: detect rule: $(head -1 "$out.detect")"
    sed -n 2p "$out.detect" | grep -q '^{"finding":1,"machine":"Test CPU 3000, 4 cores; clock fast","commit":"c20","commit_before":"c19","run":"a0000000000000000000000000000014","nodes":1,"p":[0-9.e-]*,"start":{"node":"n1","operator":"op","backend":"cpu","phase":"warm","range":"backend.submit","metric":"self",.*"series":\[.*"metric":"inclusive",.*\],"fail":false}$' ||
        fail "$kind: detect finding: $(sed -n 2p "$out.detect")"
    # --series: each series alone, a line each, as judged without the rule.
    ctl history detect --db "$db" --series -f jsonl > "$out.series" ||
        fail "$kind: detect --series exit $?"
    [ "$(wc -l < "$out.series")" -eq 2 ] || fail "$kind: detect --series: $(cat "$out.series")"
    grep -q '^{"node":"n1","operator":"op","backend":"cpu","phase":"warm","range":"backend.submit","metric":"inclusive","machine":"Test CPU 3000, 4 cores; clock fast","commit":"c20","run":"a0000000000000000000000000000014","before":1005.0,"after":1105.5,"change":0.1000000000000000[0-9],"p":8.4325[0-9]*e-33,"direction":"slower","commit_before":"c19"}$' \
        "$out.series" || fail "$kind: detect --series line: $(head -1 "$out.series")"
    grep -q '"metric":"self",.*"commit":"c20",.*"direction":"slower"' \
        "$out.series" || fail "$kind: detect self"
    ctl history detect --db "$db" --fail-above 5 > "$out.text" 2> "$out.err"
    [ $? -eq 1 ] || fail "$kind: --fail-above 5 did not fail"
    grep -q 'backend.submit inclusive on Test CPU 3000.*+10.0% slower, above --fail-above 5%' \
        "$out.err" || fail "$kind: --fail-above msg: $(cat "$out.err")"
    grep -q '^finding 1: slower by +[0-9.]*% on Test CPU 3000, 4 cores; clock fast at commit c20 (run a0000000000000000000000000000014), starts in n1 op cpu warm backend.submit self; 2 series of 1 node, p=' "$out.text" ||
        fail "$kind: text: $(cat "$out.text")"
    grep -q '^  n1 op cpu warm backend.submit inclusive on .*: slower by +10.0% at commit c20' "$out.text" || fail "$kind: text series"
    ctl history detect --db "$db" --fail-above 'backend.*=20,*=1' > /dev/null ||
        fail "$kind: --fail-above 20 failed"
    ctl history detect --db "$db" --machine 'Test CPU 4000*' > "$out.b"
    grep -q '^history detect: 0 findings over [0-9]* series' "$out.b" &&
        [ "$(wc -l < "$out.b")" -eq 1 ] || fail "$kind: a change on machine B: $(cat "$out.b")"
    [ -z "$(ctl history detect --db "$db" --series --range cache.lookup)" ] ||
        fail "$kind: a change of cache.lookup"

    # check: a slower run fails, one at the newest level passes.
    ctl history check --db "$db" -f jsonl --fail-above 5 "$dir/pr-slow.hrs" \
        > "$out.check" 2> "$out.err"
    [ $? -eq 1 ] || fail "$kind: check of a slower run"
    grep -q '"range":"backend.submit","metric":"inclusive",.*"commit":"pr1","run":"c0000000000000000000000000000001","before":1105.5,"after":1300.0,.*"direction":"slower","detectable":[0-9.e+-]*}$' \
        "$out.check" || fail "$kind: check line: $(cat "$out.check")"
    ctl history check --db "$db" --fail-above 5 "$dir/pr-same.hrs" \
        > "$out.check2" || fail "$kind: check of a run at the level"
    grep -q '^checked 2 keys of .*pr-same.hrs against the history of Test CPU 3000, 4 cores; clock fast: 0 differ' \
        "$out.check2" || fail "$kind: check summary: $(cat "$out.check2")"
    # Ten runs of the newest level, 1100 to 1110 ns: a change of 1% is
    # below what they let check detect (about 1.3%), so at --fail-above 1
    # both keys are not judged at this limit, neither passed nor failed.
    ctl history check --db "$db" --fail-above 1 "$dir/pr-same.hrs" \
        > "$out.check3" 2> "$out.err"
    [ $? -eq 7 ] || fail "$kind: check at a limit below the detectable change"
    [ "$(grep -c '^n1 op cpu warm backend.submit [a-z]* on .*: -0.1%, median .* ns, p=0.[0-9]*, detectable 1.[0-9]%; not judged at this limit$' "$out.check3")" -eq 2 ] ||
        fail "$kind: not judged at this limit: $(cat "$out.check3")"
    grep -q "; 2 not judged at this limit (detectable above --fail-above)$" \
        "$out.check3" || fail "$kind: not judged summary: $(cat "$out.check3")"
    grep -q "^hostrangectl history check: 2 keys not judged at their --fail-above limit" \
        "$out.err" || fail "$kind: not judged said: $(cat "$out.err")"
    ctl history check --db "$db" --fail-above 1 -f junit "$dir/pr-same.hrs" \
        > "$out.check4" 2> /dev/null
    [ $? -eq 7 ] || fail "$kind: junit check at a limit below the detectable change"
    [ "$(grep -c '<skipped message="not judged at this limit: detectable +1\.[0-9]%, limit 1% (before 1\.1[01] us, after 1\.10 us, change -0\.1%, p 0\.[0-9]*)"/>' "$out.check4")" -eq 1 ] ||
        fail "$kind: junit not judged: $(cat "$out.check4")"

    # Names byte for byte, through jsonl and csv.
    ctl history show --db "$db" -f jsonl --range 'r%;*' > "$out.odd" ||
        fail "$kind: show"
    [ "$(wc -l < "$out.odd")" -eq 60 ] || fail "$kind: show odd rows"
    python3 -c 'import json, sys
want = sys.argv[2]
for line in open(sys.argv[1], encoding="ascii"):
    r = json.loads(line)
    assert r["node"].encode("utf-8") == want.encode("utf-8", "surrogateescape"), r["node"]
    assert r["range"] == "r%;\\", r["range"]' "$out.odd" "$odd" ||
        fail "$kind: names changed"
    ctl history show --db "$db" -f csv --node "n'q\"x;%*" > "$out.csv" ||
        fail "$kind: csv"
    sed -n 2p "$out.csv" | grep -qF "\"n'q\"\"x;%\\$(printf '\303\251')\",op,cpu,warm,r%;\\,inclusive," ||
        fail "$kind: csv line: $(sed -n 2p "$out.csv")"

    # Bad input: exit 3, nothing stored.
    for bad in cut text; do
        ctl history add --db "$db" "$dir/$bad.hrs" > /dev/null 2> "$out.err"
        [ $? -eq 3 ] || fail "$kind: add of $bad.hrs: exit status"
        grep -q "^hostrangectl history add: .*$bad.hrs: " "$out.err" ||
            fail "$kind: $bad msg: $(cat "$out.err")"
    done
    [ "$(ctl history list --db "$db" | wc -l)" -eq 60 ] ||
        fail "$kind: a bad file stored something"

    # The real run.
    ctl history add --db "$db" "$dir/real.hrs" > /dev/null || fail "$kind: real"
    ctl history list --db "$db" | grep -q "	real1	.* cores; clock [a-z]*	[1-9][0-9]*	$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)	$(uname -s) $(uname -r)$" ||
        fail "$kind: the real run: $(ctl history list --db "$db" | tail -1)"

    # Rounds: each key's round medians stored as the run file holds them;
    # a run of one round shows its median as its one round.
    ctl history add --db "$db" "$dir/rounds-base.hrs" > /dev/null || fail "$kind: add base"
    ctl history show --db "$db" -f jsonl --node 'ops/*' |
        sed 's/^{"node":\("[^"]*"\).*"phase":\("[^"]*"\),"range":\("[^"]*"\),"metric":\("[^"]*"\).*"rounds":3,\("round_medians":\[[^]]*\]\)}$/\1 \2 \3 \4 \5/' |
        grep -v '^{' | sort > "$out.rounds"
    cmp -s "$out.rounds" "$dir/base.rounds" ||
        fail "$kind: round medians stored: $(diff "$out.rounds" "$dir/base.rounds")"
    ctl history show --db "$db" -f jsonl --range cache.lookup | head -1 |
        grep -q '"median":\([0-9.]*\),.*"rounds":1,"round_medians":\[\1\]}$' ||
        fail "$kind: one round: $(ctl history show --db "$db" -f jsonl --range cache.lookup | head -1)"
    ctl history show --db "$db" -f csv --range cache.lookup | head -2 | tail -1 |
        grep -q ',\([0-9.]*\),[0-9.]*,[0-9.]*,1,\1$' ||
        fail "$kind: one round, csv: $(ctl history show --db "$db" -f csv | head -2)"
    if [ "$bench_ranges" = 1 ]; then
        # check of a run of 3 rounds against a history of one run of 3 rounds:
        # judged by the rounds, binding.body apart in every round, so p = 1 /
        # C(6, 3) = 0.05 exactly (one-sided): found at --alpha 0.1, not at the
        # default 0.01. A run of one round against one run is not judged.
        ctl history check --db "$db" --alpha 0.1 --phase warm --range binding.body \
            "$dir/rounds-slow.hrs" > "$out.rcheck" || fail "$kind: check of rounds"
        grep -q "warm binding.body self on .*: slower by +[0-9.]*% at commit slow (run [0-9a-f]*): median .* ns, p=0.05 (by rounds: 3 against 3); detectable none; undecided at +-5% \[.*\]$" \
            "$out.rcheck" || fail "$kind: check by rounds: $(cat "$out.rcheck")"
        grep -q "^checked 2 keys of .*rounds-slow.hrs against .*: [12] differ (p < 0.1), [0-9]* not judged.*; 2 judged by their rounds (0 slower, 0 faster, 0 same, 2 undecided)$" \
            "$out.rcheck" || fail "$kind: check by rounds: $(cat "$out.rcheck")"
        ctl history check --db "$db" -f jsonl --alpha 0.1 --phase warm \
            --range binding.body "$dir/rounds-slow.hrs" | grep '"metric":"self"' |
            grep -q '"commit":"slow",.*"p":0.05,"direction":"slower","detectable":null,"verdict":"undecided","threshold_pct":5,.*"rounds":\[3,3\]}$' ||
            fail "$kind: check by rounds, jsonl"
        ctl history check --db "$db" --phase warm --range binding.body \
            "$dir/rounds-slow.hrs" | grep -q ": 0 differ (p < 0.01), [0-9]* not judged.*; 2 judged by their rounds (0 slower, 0 faster, 0 same, 2 undecided)$" ||
            fail "$kind: flagged below the floor of 3 rounds against 3"
        ctl history check --db "$db" --phase warm --range binding.body \
            "$dir/rounds-slow1.hrs" | grep -q "^checked 0 keys .*: 0 differ (p < 0.01), [0-9]* not judged (.*too short a history); 0 judged by their rounds$" ||
            fail "$kind: a run of one round judged against one run"
    fi

    # Eight adds at once: none fails, none lost.
    new_$kind
    for i in 1 2 3 4 5 6 7 8; do
        ctl history add --db "$db" "$dir/par$i.hrs" > "$out.par$i" 2>&1 &
        eval "p$i=\$!"
    done
    for i in 1 2 3 4 5 6 7 8; do
        eval "wait \$p$i" || fail "$kind: concurrent add $i: $(cat "$out.par$i")"
    done
    [ "$(ctl history list --db "$db" | wc -l)" -eq 8 ] ||
        fail "$kind: concurrent adds lost runs"
    [ "$(ctl history show --db "$db" -f csv | wc -l)" -eq $((8 * 80 + 1)) ] ||
        fail "$kind: concurrent adds lost keys"
}

suite sqlite
cp "$dir/sqlite.detect" "$dir/sqlite.detect.keep"
suite pg
cmp -s "$dir/sqlite.detect.keep" "$dir/pg.detect" ||
    fail "SQLite and PostgreSQL disagree: $(diff "$dir/sqlite.detect.keep" "$dir/pg.detect")"
for f in list odd csv check; do
    cmp -s "$dir/sqlite.$f" "$dir/pg.$f" || fail "$f differs between backends"
done

# The server going away in the middle of an add (its connection ended by a
# trigger on the points, after the run's row was written): the add fails,
# nothing of the run is stored, and the same add again completes.
new_pg
ctl history add --db "$db" "$dir/a0.hrs" > /dev/null || fail "add a0"
pg "h$n_pg" "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS
    \$\$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END \$\$;
    CREATE TRIGGER boom BEFORE INSERT ON hostrange_point
    FOR EACH STATEMENT EXECUTE FUNCTION boom()" > /dev/null || fail "trigger"
ctl history add --db "$db" "$dir/a1.hrs" > /dev/null 2> "$dir/err" &&
    fail "added while the server went away"
grep -q "a1.hrs not stored" "$dir/err" || fail "gone msg: $(cat "$dir/err")"
[ "$(ctl history list --db "$db" | wc -l)" -eq 1 ] || fail "half-stored run"
pg "h$n_pg" "DROP TRIGGER boom ON hostrange_point" > /dev/null || fail "drop"
ctl history add --db "$db" "$dir/a1.hrs" | grep -q '^added ' ||
    fail "the same add again"
[ "$(ctl history list --db "$db" | wc -l)" -eq 2 ] || fail "not stored again"

# check's verdict by rounds: a history of 4 runs of 3 rounds each (merges
# of mkrun's runs, 1000 to 1010 ns), against a run of 5 rounds at 1001 to
# 1005 ns (its 95% interval inside +-5%: same) and one at 1301 to 1305 ns
# (beyond every value of the segment, +30%: slower).
vdb=$dir/verdict.db
n=0
for r in 1 2 3 4; do
    for k in 1 2 3; do
        n=$((n + 1))
        "$mkrun" -o "$dir/hr$r-$k.hrs" -i "$(printf 'e%031x' "$n")" -H hostA \
            -m time=$((1700000000 + n * 60)) -m commit=c$r \
            -k "n1/backend.submit=$((1000 + (n * 7) % 11))" || fail mkrun
    done
    ctl merge -o "$dir/hr$r.hrs" "$dir/hr$r-1.hrs" "$dir/hr$r-2.hrs" \
        "$dir/hr$r-3.hrs" > /dev/null || fail "merge of rounds $r"
    ctl history add --db "$vdb" "$dir/hr$r.hrs" > /dev/null || fail "add hr$r"
done
for kind in same slow; do
    base=1000; [ "$kind" = slow ] && base=1300
    for k in 1 2 3 4 5; do
        n=$((n + 1))
        "$mkrun" -o "$dir/pr$kind-$k.hrs" -i "$(printf 'f%031x' "$n")" \
            -H hostA -m commit=pr -k "n1/backend.submit=$((base + k))" ||
            fail mkrun
    done
    ctl merge -o "$dir/pr$kind.hrs" "$dir"/pr$kind-[1-5].hrs > /dev/null ||
        fail "merge of pr$kind"
done
ctl history check --db "$vdb" "$dir/prsame.hrs" > "$dir/vsame" ||
    fail "check by rounds, same: $(cat "$dir/vsame")"
grep -q "; 2 judged by their rounds (0 slower, 0 faster, 2 same, 0 undecided)$" \
    "$dir/vsame" || fail "same by rounds: $(cat "$dir/vsame")"
ctl history check --db "$vdb" -f jsonl --fail-above 'backend.submit=20' \
    "$dir/prslow.hrs" > "$dir/vslow"
[ $? -eq 1 ] || fail "check by rounds, slower: $(cat "$dir/vslow")"
[ "$(grep -c '"direction":"slower","detectable":0\.[0-9]*,"verdict":"slower","threshold_pct":20,"verdict_lo_pct":2[0-9.]*,"verdict_hi_pct":3[0-9.]*,"rounds":\[12,5\]}$' "$dir/vslow")" -eq 2 ] ||
    fail "slower by rounds: $(cat "$dir/vslow")"
grep -q '"verdicts":{"slower":2,"faster":0,"same":0,"undecided":0},"not_judged_at_limit":0}$' \
    "$dir/vslow" || fail "slower by rounds, counts: $(cat "$dir/vslow")"

# A database of something else, and a newer schema: refused, exit 3.
sqlite3 "$dir/other.db" 'CREATE TABLE t (x INTEGER)' || fail sqlite3
new_pg
pg "h$n_pg" 'CREATE TABLE t (x INTEGER)' || fail psql
for other in "$dir/other.db" "$db" "$dir/text.hrs"; do
    ctl history add --db "$other" "$dir/a0.hrs" > /dev/null 2> "$dir/err"
    [ $? -eq 3 ] || fail "added into $other"
    grep -q 'not a hostrange history\|file is not a database' "$dir/err" ||
        fail "other database: $(cat "$dir/err")"
done
new_sqlite
ctl history add --db "$db" "$dir/a0.hrs" > /dev/null || fail "add"
sqlite3 "$db" 'UPDATE hostrange_schema SET version = 99' || fail sqlite3
ctl history list --db "$db" > /dev/null 2> "$dir/err"
[ $? -eq 3 ] || fail "a newer schema was opened"
grep -q "a history of schema version 99, newer than this hostrange's (5)" \
    "$dir/err" || fail "newer msg: $(cat "$dir/err")"
# An older schema (version 1: no index of the runs' order, no round
# medians) is read as it is by the commands that only read, and migrated
# by add (of a run stored already: nothing else changes).
sqlite3 "$db" 'UPDATE hostrange_schema SET version = 1; DROP INDEX hostrange_run_order;
    ALTER TABLE hostrange_point DROP COLUMN rounds;
    ALTER TABLE hostrange_run DROP COLUMN kernel' || fail sqlite3
ctl history list --db "$db" | grep -q '^a0' || fail "list of a history of version 1"
ctl history show --db "$db" -f jsonl --range cache.lookup | head -1 |
    grep -q '"rounds":1,"round_medians":\[50[0-9].0\]}$' ||
    fail "show of a history of version 1"
ctl history add --db "$db" "$dir/a0.hrs" | grep -q 'stored already' ||
    fail "add to version 1"
[ "$(sqlite3 "$db" 'SELECT version FROM hostrange_schema')" = 5 ] ||
    fail "not migrated"
sqlite3 "$db" .indexes | grep -q hostrange_run_order || fail "no index"
# Version 2 (no round medians), holding a run: migrated when a run of
# rounds is added; the old run shows one round, the new one its three.
sqlite3 "$db" 'UPDATE hostrange_schema SET version = 2;
    ALTER TABLE hostrange_point DROP COLUMN rounds;
    ALTER TABLE hostrange_run DROP COLUMN kernel' || fail sqlite3
ctl history add --db "$db" "$dir/rounds-base.hrs" > /dev/null || fail "add to version 2"
[ "$(sqlite3 "$db" 'SELECT version FROM hostrange_schema')" = 5 ] ||
    fail "version 2 not migrated"
ctl history show --db "$db" -f jsonl --range backend.submit --phase warm |
    grep -c '"rounds":1,"round_medians":\[1[0-9]*.0\]}$' | grep -qx 1 ||
    fail "the run of version 2: $(ctl history show --db "$db" -f jsonl)"
ctl history show --db "$db" -f jsonl --node 'ops/*' | grep -c '"rounds":3,' |
    grep -qx "$(wc -l < "$dir/base.rounds")" ||
    fail "the run of rounds after migration"

# A password never appears: a URL and key=value pairs that fail.
for url in "postgresql://hostrange:s3cr3t@/nosuchdb?host=$pgdir" \
           "postgres://hostrange:s3cr3t@localhost:1/h1" \
           "host=$pgdir user=hostrange password=s3cr3t dbname=nosuchdb" \
           "host=$pgdir user=hostrange password='s3cr3t x' dbname=nosuchdb" \
           "postgresql://hostrange:s3cr3t%zz@/nosuchdb?host=$pgdir"; do
    ctl history list --db "$url" > "$dir/out" 2> "$dir/err"
    [ $? -eq 3 ] || fail "an unreachable database: exit status"
    grep -q s3cr3t "$dir/out" "$dir/err" && fail "the password shown: $(cat "$dir/err")"
    grep -q '\*\*\*' "$dir/err" || fail "no masked password: $(cat "$dir/err")"
done
# record --history: the run added when the command ends, failed or not,
# with its --meta; with --save, the same run as the file.
ctl record -o /dev/null --history "$dir/rec.db" --meta commit=rec1 -- \
    "$HOSTRANGE_TEST_WORKLOAD" -n 1 -c 20 -r 1 -N rec > /dev/null 2>&1 ||
    fail "record --history"
ctl record -o /dev/null --history "$dir/rec.db" --save "$dir/rec.hrs" -- \
    sh -c 'exit 3' > /dev/null 2>&1
[ $? -eq 3 ] || fail "record --history: not the command's status"
ctl history list --db "$dir/rec.db" > "$dir/out" || fail "list rec"
[ "$(wc -l < "$dir/out")" -eq 2 ] || fail "record --history: $(cat "$dir/out")"
grep -q "	rec1	.*	[1-9][0-9]*	[^	]*	[^	]*$" "$dir/out" || fail "record's meta: $(cat "$dir/out")"
ctl history add --db "$dir/rec.db" "$dir/rec.hrs" | grep -q "stored already" ||
    fail "record --save and --history: not the same run"

# A disk that fills during an add (a file size limit): exit 5, nothing
# stored, and the same add again completes.
"$mkrun" -o "$dir/big.hrs" -i "$(printf 'f%031x' 8)" -K 2000 || fail mkrun
ctl history add --db "$dir/full.db" "$dir/a0.hrs" > /dev/null || fail "add"
sh -c "trap '' XFSZ; ulimit -f 64; exec '$HOSTRANGECTL' history add \
    --db '$dir/full.db' '$dir/big.hrs'" > /dev/null 2> "$dir/err"
[ $? -eq 5 ] || fail "an add past the file size limit: $(cat "$dir/err")"
grep -q "^hostrangectl history add: $dir/full.db: .*; $dir/big.hrs not stored$" \
    "$dir/err" || fail "full msg: $(cat "$dir/err")"
[ "$(ctl history list --db "$dir/full.db" | wc -l)" -eq 1 ] ||
    fail "half-stored on a full disk"
ctl history add --db "$dir/full.db" "$dir/big.hrs" | grep -q '^added ' ||
    fail "the same add again"
[ "$(ctl history list --db "$dir/full.db" | wc -l)" -eq 2 ] || fail "not stored"

# A run's place: its meta time as an ISO date (UTC) or Unix seconds, or
# --meta time=... over it; else when it was saved.
"$mkrun" -o "$dir/t1.hrs" -i "$(printf 'f%031x' 1)" -m time=2024-01-02T03:04:05Z \
    -k n/r=1 || fail mkrun
"$mkrun" -o "$dir/t2.hrs" -i "$(printf 'f%031x' 2)" -k n/r=1 || fail mkrun
ctl history add --db "$dir/t.db" "$dir/t1.hrs" > /dev/null || fail "add t1"
ctl history add --db "$dir/t.db" --meta time=1704164645.5 "$dir/t2.hrs" \
    > /dev/null || fail "add t2"
ctl history list --db "$dir/t.db" | cut -f 2 | tr '\n' ' ' |
    grep -qx '2024-01-02T03:04:05Z 2024-01-02T03:04:05Z ' ||
    fail "times: $(ctl history list --db "$dir/t.db")"

# Usage errors: exit 2, nothing opened.
for args in "" "nosuch" "detect --alpha 2" "detect --window 0" \
            "detect --min-change -1" "detect --fail-above x=" \
            "show --format xml" "check" "add" "add --meta time=yesterday x.hrs" \
            "list extra"; do
    ctl history $args --db "$dir/usage.db" > /dev/null 2>&1
    [ $? -eq 2 ] || fail "history $args: not a usage error"
done
[ -e "$dir/usage.db" ] && fail "a usage error opened the database"

# The default database: $HOSTRANGE_HISTORY.
HOSTRANGE_HISTORY="$dir/env.db" ctl history add "$dir/a0.hrs" > /dev/null ||
    fail "add to \$HOSTRANGE_HISTORY"
[ -s "$dir/env.db" ] || fail "\$HOSTRANGE_HISTORY not used"
exit 0
