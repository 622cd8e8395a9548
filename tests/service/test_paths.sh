#!/bin/sh
# Calling contexts end to end through a real daemon: a program with a known
# tree (tests/helpers/pathtree.c) gives exact folded paths and counts, from
# the daemon and from a saved run file; folded totals read under
# speedscope's rule (one space, before an integer) and add up to the rows
# per range name, which stay as they were; dump --by path names each path;
# the tree fits 100 columns; a recursion 1000 deep stays bounded, counted
# in stats.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PATHTREE:?}"
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 120 "$HOSTRANGED" -q & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
timeout 60 "$HOSTRANGE_TEST_PATHTREE" -c 10 || fail "pathtree"

cat > "$dir/want.folded" <<'END'
tests/paths::node[0];cold;a 1
tests/paths::node[0];cold;a;b 1
tests/paths::node[0];cold;a;b;c 2
tests/paths::node[0];cold;a;c 1
tests/paths::node[0];cold;a;we%3Bird%20name%0A 1
tests/paths::node[0];warm;a 10
tests/paths::node[0];warm;a;b 10
tests/paths::node[0];warm;a;b;c 20
tests/paths::node[0];warm;a;c 10
tests/paths::node[0];warm;a;we%3Bird%20name%0A 10
tests/paths::node[0];warm;d 5
tests/paths::node[0];warm;d;b 5
tests/paths::node[0];warm;d;b;c 5
END
"$HOSTRANGECTL" dump --format folded --value count > "$dir/count.folded" ||
    fail "dump --format folded --value count"
diff "$dir/want.folded" "$dir/count.folded" || fail "folded counts"

# Totals: speedscope's rule (the last space separates an integer; with
# names escaped there is exactly one), and per range name they add up to
# the self time of the range's row (mean x count, to within rounding).
"$HOSTRANGECTL" dump --format folded > "$dir/total.folded" || fail folded
[ "$(wc -l < "$dir/total.folded")" -eq 13 ] || fail "folded lines"
grep -vqE '^[^ ]+ [0-9]+$' "$dir/total.folded" && fail "folded syntax"
"$HOSTRANGECTL" dump -f csv > "$dir/rows.csv" || fail "dump csv"
for r in a b c d; do
    folded=$(awk -v r="$r" '{ n = split($1, f, ";");
        if (f[2] == "warm" && f[n] == r) s += $2 } END { print s + 0 }' \
        "$dir/total.folded")
    row=$(awk -F, -v r="$r" '$4 == "warm" && $5 == r && $6 == "self" {
        printf "%.0f", $7 * $9 }' "$dir/rows.csv")
    [ -n "$row" ] || fail "no self row of $r"
    d=$((folded - row))
    [ "$d" -ge -2 ] && [ "$d" -le 2 ] ||
        fail "range $r: folded $folded, row $row"
done
head -1 "$dir/rows.csv" | grep -q '^nodeid,operator,backend,phase,range,metric,count,unit,mean' ||
    fail "csv columns moved: $(head -1 "$dir/rows.csv")"

# The report per range name: as before (no path field), merged over paths.
"$HOSTRANGECTL" dump > "$dir/rows.jsonl" || fail dump
grep -q '"path"' "$dir/rows.jsonl" && fail "path field in the default report"
grep -q '"phase":"warm","range":"c","metric":"self","count":35,' \
    "$dir/rows.jsonl" || fail "c merged over its paths"
# By path: each calling context, with its path.
"$HOSTRANGECTL" dump --by path > "$dir/paths.jsonl" || fail "dump --by path"
[ "$(wc -l < "$dir/paths.jsonl")" -eq 26 ] || fail "rows by path"
grep -q '"phase":"warm","range":"c","path":"a;b;c","metric":"inclusive","count":20,' \
    "$dir/paths.jsonl" || fail "a;b;c by path"
grep -q '"range":"we;ird name\\n","path":"a;we%3Bird name\\n","metric"' \
    "$dir/paths.jsonl" || fail "escaped path"
"$HOSTRANGECTL" dump --by path --range c --phase warm > "$dir/c.jsonl" ||
    fail "filtered by path"
[ "$(wc -l < "$dir/c.jsonl")" -eq 6 ] || fail "filtered rows by path"

# The tree: 100 columns, every path, shares of the parent.
"$HOSTRANGECTL" dump --format tree > "$dir/tree.txt" || fail "tree"
awk 'length($0) > 100 { exit 1 }' "$dir/tree.txt" || fail "tree too wide"
grep -q '^    c ' "$dir/tree.txt" || fail "tree depth 3"
grep -q '^  we;ird name? ' "$dir/tree.txt" || fail "tree: weird name"
grep -qE '^  b +10 .*%$' "$dir/tree.txt" || fail "tree: b's share"

# A run file keeps the paths.
"$HOSTRANGECTL" save -o "$dir/run.hrs" >/dev/null || fail save
"$HOSTRANGECTL" dump --from "$dir/run.hrs" --format folded --value count |
    diff "$dir/want.folded" - || fail "folded from the file"
"$HOSTRANGECTL" dump --from "$dir/run.hrs" --by path |
    cmp -s - "$dir/paths.jsonl" || fail "--by path from the file"

# Recursion 1000 deep: the client cuts it at its depth cap, the daemon at
# its own; stats count what was kept per range name only.
timeout 60 "$HOSTRANGE_TEST_PATHTREE" -c 2 -R 1000 -N tests/deep ||
    fail "pathtree -R"
"$HOSTRANGECTL" stats > "$dir/stats" || fail stats
limit=$(awk '$1 == "paths.depth_limit" { print $2 }' "$dir/stats")
count=$(awk '$1 == "paths.count" { print $2 }' "$dir/stats")
deep=$(awk '$1 == "paths.too_deep" { print $2 }' "$dir/stats")
[ -n "$limit" ] && [ "$count" -le $((limit + 8)) ] || fail "paths: $count"
[ "$deep" -gt 0 ] || fail "nothing counted too deep"
"$HOSTRANGECTL" dump --format folded --node 'tests/deep*' --value count \
    > "$dir/deep.folded" || fail "deep folded"
[ "$(grep -c ';rec' "$dir/deep.folded")" -eq "$limit" ] ||
    fail "deep paths: $(grep -c ';rec' "$dir/deep.folded")"
"$HOSTRANGECTL" ping >/dev/null || fail "daemon gone"
exit 0
