#!/bin/sh
# CSV results in the history (history add --from csv), as any tool can
# write them: 8 commits of two benchmarks on one machine, one 20% slower
# from c5; detect finds that step and nothing else; check --from judges a
# pull request's file against it; a file that grew adds
# only its new runs; --machine and --meta commit= win over the file's;
# show reads the values back in ns; a bad line, or a machine's name that
# --machine would refuse, is refused (exit 3) with nothing of the file
# stored.
set -u
: "${HOSTRANGECTL:?}"
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
db=$dir/h.db

echo 'commit,time,machine,name,value,unit' > "$dir/r.csv"
for i in 1 2 3 4 5 6 7 8; do
    v=100; [ "$i" -ge 5 ] && v=120
    for r in 0 1 2; do
        echo "c$i,$((1700000000 + i * 60)),ci-large,\"parse, \"\"big\"\"\",$((v + (i + r) % 3)),us"
        echo "c$i,$((1700000000 + i * 60)),ci-large,steady,$((50 + (i * 7 + r) % 3))"
    done >> "$dir/r.csv"
done
head -n 19 "$dir/r.csv" > "$dir/first.csv"
ctl history add --db "$db" --from csv "$dir/first.csv" > "$dir/out" || fail "add first"
[ "$(grep -c '^added .*first.csv: run c[0-9a-f]\{31\}, 2 keys$' "$dir/out")" -eq 3 ] ||
    fail "first: $(cat "$dir/out")"
ctl history add --db "$db" --from csv "$dir/r.csv" > "$dir/out" || fail "add all"
[ "$(grep -c 'is stored already; nothing changed$' "$dir/out")" -eq 3 ] &&
    [ "$(grep -c '^added ' "$dir/out")" -eq 5 ] || fail "grown: $(cat "$dir/out")"
[ "$(ctl history list --db "$db" | cut -f3,4 | sort -u | wc -l)" -eq 8 ] ||
    fail "list: $(ctl history list --db "$db")"
ctl history show --db "$db" -f csv --range steady > "$dir/show" || fail show
grep -q '^csv,-,-,warm,steady,time,ci-large,2023-11-14T22:14:20Z,c1,c[0-9a-f]*,,,3,51.0,51.0,' \
    "$dir/show" || fail "show: $(head -2 "$dir/show")"

# One finding, at c5; judged alone (--series), the step of that one series.
ctl history detect --db "$db" -f jsonl > "$dir/detect" || fail "detect exit $?"
[ "$(wc -l < "$dir/detect")" -eq 2 ] && head -1 "$dir/detect" | grep -q '"findings":1}$' &&
    sed -n 2p "$dir/detect" | grep -q '^{"finding":1,"machine":"ci-large","commit":"c5",.*"start":{"node":"csv",.*"range":"parse, \\"big\\"","metric":"time","commit":"c5",' ||
    fail "detect: $(cat "$dir/detect")"
ctl history detect --db "$db" --series -f jsonl > "$dir/detect" || fail "detect --series exit $?"
[ "$(wc -l < "$dir/detect")" -eq 1 ] || fail "detect --series: $(cat "$dir/detect")"
grep -q '^{"node":"csv","operator":"-","backend":"-","phase":"warm","range":"parse, \\"big\\"","metric":"time","machine":"ci-large","commit":"c5",.*"before":101000.0,"after":121000.0,.*"direction":"slower","commit_before":"c4"}$' \
    "$dir/detect" || fail "no step at c5: $(cat "$dir/detect")"

# check --from: a pull request's results against the history; --machine
# names the run's machine.
printf 'pr,1700009000,,"parse, ""big""",150,us\npr,1700009000,,"parse, ""big""",151,us\npr,1700009000,,"parse, ""big""",149,us\n' \
    > "$dir/slow.csv"
ctl history check --db "$db" --from csv --machine ci-large --fail-above 10 \
    "$dir/slow.csv" > "$dir/check" 2> "$dir/err"
[ $? -eq 1 ] || fail "check of a slower run: $(cat "$dir/check" "$dir/err")"
grep -q 'parse, "big".* slower' "$dir/check" || fail "check said: $(cat "$dir/check")"
sed 's/15[01]/121/; s/149/120/' "$dir/slow.csv" > "$dir/same.csv"
ctl history check --db "$db" --from csv --machine ci-large --fail-above 10 \
    "$dir/same.csv" > "$dir/check" 2> "$dir/err" ||
    fail "check of a run at the level: $(cat "$dir/check" "$dir/err")"
grep -q '^checked 1 keys of .*same.csv against the history of ci-large: 0 differ' \
    "$dir/check" || fail "check said: $(cat "$dir/check")"

# The options over the file: one run on machine m2 of commit pr1.
printf 'x,1700009999,,a,5,ms\nx,1700009999,,a,7,ms\n' > "$dir/pr.csv"
ctl history add --db "$db" --from csv --machine m2 --meta commit=pr1 "$dir/pr.csv" > /dev/null ||
    fail "add pr"
ctl history list --db "$db" | grep -q "	pr1	m2	1	" || fail "pr: $(ctl history list --db "$db")"
ctl history show --db "$db" -f csv --machine m2 | grep -q ',2,6000000.0,6000000.0,' ||
    fail "pr show: $(ctl history show --db "$db" -f csv --machine m2)"

# A bad line: nothing of the file stored.
printf 'y,1700010000,m3,a,5\ny,1700010000,m3,a,five\n' > "$dir/bad.csv"
ctl history add --db "$db" --from csv "$dir/bad.csv" 2> "$dir/err"
[ $? -eq 3 ] || fail "bad line not refused with 3"
grep -q "bad.csv: line 2: value 'five' is not a number of at least 0; nothing of it stored" \
    "$dir/err" || fail "bad: $(cat "$dir/err")"
ctl history list --db "$db" | grep -q m3 && fail "a part of a bad file stored"
# A machine's name held to --machine's rules, from the file as from
# --machine: no control character (exit 3, nothing stored).
printf 'z,1700010000,m4,a,5\nz,1700010001,m4\033[2J,a,5\n' > "$dir/esc.csv"
ctl history add --db "$db" --from csv "$dir/esc.csv" > /dev/null 2> "$dir/err"
[ $? -eq 3 ] || fail "a machine with ESC not refused with 3"
grep -q "esc.csv: machine 'm4\\\\x1b\[2J' of run [0-9a-f]*: a machine's name holds no control character: byte 3 is one" \
    "$dir/err" || fail "esc: $(cat "$dir/err")"
ctl history list --db "$db" | grep -q m4 && fail "a part of a file of a bad machine stored"
# --machine's own name is a usage error (exit 2), as with add --from.
ctl history check --db "$db" --from csv --machine "$(printf 'ci\tlarge')" \
    "$dir/same.csv" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] || fail "check --from --machine with a tab not refused with 2"
grep -qx "hostrangectl history check: bad --machine: a machine's name holds no control character: byte 3 is one" \
    "$dir/err" || fail "check tab: $(cat "$dir/err")"
ctl history add --db "$db" --from json "$dir/bad.csv" 2> /dev/null
[ $? -eq 2 ] || fail "--from json not a usage error"
echo ok
