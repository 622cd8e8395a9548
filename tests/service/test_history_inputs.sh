#!/bin/sh
# hostrangectl history at the edges of its inputs:
# - a --meta time past what 64-bit nanoseconds hold, or a date that does
#   not exist: a usage error (exit 2) before anything is opened, and
#   refused in a run file (exit 3, nothing stored), where it was stored
#   as another century or another day; the last second that fits stored
#   as it is; record --history refusing such a time before COMMAND runs
#   (it ran, and its run was lost after); a time before 1970 with a
#   fraction shown in its own second, not the next;
# - history check --from: a --machine that is no machine's name a usage
#   error; --machine a name, not a pattern; a run without a time read
#   (check has no --meta time=T, which the refusal asked for); a
#   directory for its FILE named as one;
# - history plot: -o '' a usage error; a page that cannot be written said
#   of its file, not of the history;
# - --window, --min-history and --threshold naming their bounds;
# - an empty --db (record --history) a usage error, never the default
#   history;
# - list, show, detect, check and plot leaving no -wal or -shm file
#   beside the history.
set -u
: "${HOSTRANGECTL:?}" "${HOSTRANGED:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }

"$mkrun" -o "$dir/a.hrs" -i "$(printf 'a%031x' 1)" -k n/r=100 ||
    fail mkrun

# --meta time=T on the command line: exit 2, the database not made.
for t in 9999-12-31T23:59:59Z 2262-04-11T23:47:17Z 0000-01-01T00:00:00Z \
         2026-02-30T00:00:00 2026-12-31T12:00:60Z 9223372037 \
         2026-01-01T00:00:00+24:00 nan 1e3 " 5" -1 ""; do
    ctl history add --db "$dir/u.db" --meta "time=$t" "$dir/a.hrs" \
        > /dev/null 2> "$dir/err"
    [ $? -eq 2 ] || fail "time '$t': not a usage error"
    grep -q "^hostrangectl history add: bad --meta 'time=$t' (a time: .*2262-04-11)$" \
        "$dir/err" || fail "time '$t': $(cat "$dir/err")"
done
[ -e "$dir/u.db" ] && fail "a refused time made the database"

# The last second that fits is stored as given; a leap second as the
# next second.
ctl history add --db "$dir/t.db" --meta time=2262-04-11T23:47:16Z \
    "$dir/a.hrs" > /dev/null || fail "add at the last second"
[ "$(ctl history list --db "$dir/t.db" | cut -f 2)" = 2262-04-11T23:47:16Z ] ||
    fail "last second: $(ctl history list --db "$dir/t.db")"
"$mkrun" -o "$dir/b.hrs" -i "$(printf 'b%031x' 1)" -k n/r=100 ||
    fail mkrun
ctl history add --db "$dir/t.db" --meta time=2016-12-31T23:59:60Z \
    "$dir/b.hrs" > /dev/null || fail "add at a leap second"
ctl history list --db "$dir/t.db" | cut -f 2 | head -1 |
    grep -qx 2017-01-01T00:00:00Z || fail "leap second: $(ctl history list \
    --db "$dir/t.db")"

# A time before 1970 with a fraction is shown in its own second, in list,
# show and the page (it was shown a second late, as 23:59:59).
"$mkrun" -o "$dir/c.hrs" -i "$(printf 'c%031x' 1)" -k n/r=100 ||
    fail mkrun
ctl history add --db "$dir/n.db" --meta time=1969-12-31T23:59:58.5Z \
    "$dir/c.hrs" > /dev/null || fail "add before 1970"
[ "$(ctl history list --db "$dir/n.db" | cut -f 2)" = 1969-12-31T23:59:58Z ] ||
    fail "list before 1970: $(ctl history list --db "$dir/n.db")"
ctl history show --db "$dir/n.db" --format jsonl |
    grep -q '"time":"1969-12-31T23:59:58Z"' || fail "show before 1970"
ctl history plot --db "$dir/n.db" -o "$dir/np" > /dev/null ||
    fail "plot before 1970"
grep -q '"t":\[-2\]' "$dir/np/index.html" || fail "page before 1970"

# The same times in a run file: exit 3, named, nothing stored.
i=0
for t in 9999-12-31T23:59:59Z 2026-02-30T00:00:00; do
    i=$((i + 1))
    "$mkrun" -o "$dir/f$i.hrs" -i "$(printf 'f%031x' "$i")" -m "time=$t" \
        -k n/r=100 || fail mkrun
    ctl history add --db "$dir/t.db" "$dir/f$i.hrs" > /dev/null 2> "$dir/err"
    [ $? -eq 3 ] || fail "run file of time $t: not refused"
    grep -q "^hostrangectl history add: $dir/f$i.hrs: meta time '$t' is not a time" \
        "$dir/err" || fail "run file of time $t: $(cat "$dir/err")"
done
[ "$(ctl history list --db "$dir/t.db" | wc -l)" -eq 2 ] ||
    fail "a refused run stored: $(ctl history list --db "$dir/t.db")"

# record --history: the time refused before COMMAND runs.
ctl record --history "$dir/r.db" --meta time=2026-02-30T00:00:00 \
    -- touch "$dir/ran" > /dev/null 2> "$dir/err"
[ $? -eq 2 ] || fail "record --meta time=2026-02-30: not a usage error"
[ -e "$dir/ran" ] && fail "record ran COMMAND with a time it refuses"
[ -e "$dir/r.db" ] && fail "record made the history"
grep -q "^hostrangectl record: bad --meta 'time=2026-02-30T00:00:00' (a time: " \
    "$dir/err" || fail "record's message: $(cat "$dir/err")"
# Without --history, a time is a note like any other.
ctl record --save "$dir/s.hrs" --meta time=whenever -- true > /dev/null \
    2> "$dir/err" || fail "record --save --meta time=whenever: $(cat "$dir/err")"

# history check --from: --machine names the run's machine, so a bad
# name is a usage error (it was 'no machine in the file', exit 3).
printf 'commit,time,machine,name,value\nc1,1700000000,m1,b1,100\n' \
    > "$dir/r.csv"
for m in "" "$(printf 'a\tb')"; do
    ctl history check --db "$dir/t.db" --from csv --machine "$m" \
        "$dir/r.csv" > /dev/null 2> "$dir/err"
    [ $? -eq 2 ] || fail "check --from --machine '$m': not a usage error"
    grep -q "^hostrangectl history check: bad --machine: a machine's name" \
        "$dir/err" || fail "check --machine '$m': $(cat "$dir/err")"
done
ctl history check --db "$dir/t.db" --from csv --machine m2 "$dir/r.csv" \
    > /dev/null 2>&1 || fail "check --from --machine m2"
# --machine with --from is a name, not a pattern: a machine named
# ci[1] is checked against its own history (its key was dropped unsaid:
# "checked 0 keys", "0 not judged").
for i in 0 1 2 3 4 5; do
    echo "c$i,$((1700000000 + i * 60)),x,b1,$((100 + i % 3))"
done > "$dir/g.csv"
ctl history add --db "$dir/g.db" --from csv --machine 'ci[1]' "$dir/g.csv" \
    > /dev/null || fail "add --machine 'ci[1]'"
ctl history check --db "$dir/g.db" --from csv --machine 'ci[1]' \
    "$dir/r.csv" > "$dir/out" 2> "$dir/err" ||
    fail "check --machine 'ci[1]': $(cat "$dir/err")"
grep -q "^checked 1 keys of $dir/r.csv against the history of ci\[1\]: 0 differ" \
    "$dir/out" || fail "check --machine 'ci[1]': $(cat "$dir/out")"
# A run to check needs no time (check has no --meta time=T, which the
# refusal asked for, and uses none), in CSV and in gbench's JSON alike.
printf 'c9,,x,b1,101\n' > "$dir/notime.csv"
ctl history check --db "$dir/g.db" --from csv --machine 'ci[1]' \
    "$dir/notime.csv" > "$dir/out" 2> "$dir/err" ||
    fail "check a CSV run without a time: $(cat "$dir/err")"
grep -q "^checked 1 keys of $dir/notime.csv against the history of ci\[1\]" \
    "$dir/out" || fail "check without a time: $(cat "$dir/out")"
printf '%s\n' '{"context": {"host_name": "h"}, "benchmarks": [{"name": "b1",' \
    '"run_type": "iteration", "iterations": 10, "real_time": 5,' \
    '"cpu_time": 5, "time_unit": "ns"}]}' > "$dir/nodate.json"
ctl history check --db "$dir/g.db" --from gbench --machine m \
    "$dir/nodate.json" > "$dir/out" 2> "$dir/err" ||
    fail "check a gbench run without a date: $(cat "$dir/err")"
grep -q "^checked 0 keys of $dir/nodate.json against the history of m: 0 differ (p < 0.01), 2 not judged" \
    "$dir/out" || fail "check gbench without a date: $(cat "$dir/out")"
# history add still needs one.
ctl history add --db "$dir/g.db" --from gbench --machine m \
    "$dir/nodate.json" > /dev/null 2> "$dir/err"
[ $? -eq 3 ] || fail "add of a run without a time"
grep -q "no time in the file (--meta time=T gives one)" "$dir/err" ||
    fail "add without a time: $(cat "$dir/err")"
# A directory for FILE: exit 3, said so (it was 'cannot be read').
mkdir "$dir/d"
for fmt in csv gbench; do
    ctl history check --db "$dir/t.db" --from $fmt "$dir/d" > /dev/null \
        2> "$dir/err"
    [ $? -eq 3 ] || fail "check --from $fmt DIR"
    grep -qx "hostrangectl history check: $dir/d: cannot be read: Is a directory" \
        "$dir/err" || fail "check --from $fmt DIR: $(cat "$dir/err")"
done

# history plot -o '': no directory given (it was exit 5, "cannot make").
ctl history plot --db "$dir/t.db" -o '' > /dev/null 2> "$dir/err"
[ $? -eq 2 ] || fail "plot -o '': not a usage error"
grep -qx "hostrangectl history plot: give the directory to write in, -o DIR (see --help)" \
    "$dir/err" || fail "plot -o '': $(cat "$dir/err")"
# -o naming a file: exit 5, said.
: > "$dir/file"
ctl history plot --db "$dir/t.db" -o "$dir/file" > /dev/null 2> "$dir/err"
[ $? -eq 5 ] || fail "plot -o FILE"
grep -q "cannot make $dir/file: Not a directory" "$dir/err" ||
    fail "plot -o FILE: $(cat "$dir/err")"
# A page that cannot be written: exit 5, said of the file alone (the
# history's name was put before it, as if the history had failed).
mkdir -p "$dir/p/index.html"
ctl history plot --db "$dir/t.db" -o "$dir/p" > /dev/null 2> "$dir/err"
[ $? -eq 5 ] || fail "plot over a directory index.html"
grep -qx "hostrangectl history plot: cannot replace $dir/p/index.html: Is a directory" \
    "$dir/err" || fail "plot over index.html/: $(cat "$dir/err")"

# Numbers past their bound are refused with the bound named.
ctl history detect --db "$dir/t.db" --window 100001 2> "$dir/err"
[ $? -eq 2 ] || fail "--window 100001"
grep -q "bad --window '100001' (a whole number of runs, 1 to 100000)" \
    "$dir/err" || fail "--window: $(cat "$dir/err")"
ctl history detect --db "$dir/t.db" --window 100000 > /dev/null ||
    fail "--window 100000"
ctl history check --db "$dir/t.db" --min-history 1000001 "$dir/a.hrs" \
    2> "$dir/err"
[ $? -eq 2 ] || fail "--min-history 1000001"
grep -q "(a whole number of runs, 1 to 1000000)" "$dir/err" ||
    fail "--min-history: $(cat "$dir/err")"
ctl history check --db "$dir/t.db" --threshold 2e6 "$dir/a.hrs" 2> "$dir/err"
[ $? -eq 2 ] || fail "--threshold 2e6"
grep -q "(a percentage, above 0 and at most 1000000)" "$dir/err" ||
    fail "--threshold: $(cat "$dir/err")"

# An empty --db (or record --history) is a usage error, where it read as
# none given: the default history, made in the current directory.
mkdir "$dir/cwd" || exit 99
for c in "history add" "history list" "history show" "history detect" \
         "history check" "history plot" "record" "bisect"; do
    case $c in
    "history add"|"history check") set -- --db "" "$dir/a.hrs" ;;
    "history plot") set -- --db "" -o "$dir/p2" ;;
    record) set -- --history "" -- true ;;
    bisect) set -- --from-detect "r inclusive" --db "" -- true ;;
    *) set -- --db "" ;;
    esac
    (cd "$dir/cwd" && HOSTRANGE_HISTORY= "$HOSTRANGECTL" $c "$@") \
        > /dev/null 2> "$dir/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "bad --[a-z]* ''" "$dir/err" ||
        fail "$c with an empty history: exit $rc: $(cat "$dir/err")"
    [ -z "$(ls -A "$dir/cwd")" ] || fail "$c made $(ls -A "$dir/cwd")"
done

# The commands that only read leave nothing beside the history (a
# read-only connection left its -wal and -shm files there for good).
rm -f "$dir"/r.db*
ctl history add --db "$dir/r.db" "$dir/a.hrs" > /dev/null || fail "add r.db"
for c in list show detect check plot; do
    case $c in
    check) set -- "$dir/a.hrs" ;;
    plot) set -- -o "$dir/page" ;;
    *) set -- ;;
    esac
    ctl history $c --db "$dir/r.db" "$@" > /dev/null 2>&1
    [ "$(cd "$dir" && echo r.db*)" = r.db ] ||
        fail "history $c left: $(cd "$dir" && echo r.db*)"
done
exit 0
