#!/bin/sh
# hostrangectl plot end to end: the SVG picture of a node with a known tree
# (tests/helpers/pathtree.c; names with ;, a space, a newline, and XML's
# special characters) is well-formed (xmllint) and renders (rsvg-convert)
# to a PNG, from the daemon and from a run file; several nodes give one
# picture each and an index.html; plot --diff colours a slower range red.
# Skips (77) without xmllint (libxml2-utils) or rsvg-convert (librsvg2-bin).
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PATHTREE:?}"
for t in xmllint rsvg-convert; do
    command -v "$t" >/dev/null 2>&1 || { echo "$t not found: skipped"; exit 77; }
done
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# svg_ok FILE: well-formed, and renders to a PNG.
svg_ok() {
    xmllint --noout "$1" || fail "$1 is not well-formed"
    rsvg-convert -o "$1.png" "$1" || fail "$1 does not render"
    [ "$(head -c 8 "$1.png" | od -An -tx1 | tr -d ' \n')" = \
        89504e470d0a1a0a ] || fail "$1.png is not a PNG"
    grep -q '<script' "$1" && fail "$1 has a script"
    grep -q '<title>' "$1" || fail "$1 has no tooltips"
}

# run NAME C_NS NODES PREFIX: a daemon, pathtree, save, stop.
run() {
    export HOSTRANGE_RUNTIME_DIR="$dir/rt-$1"
    timeout 120 "$HOSTRANGED" -q & pid=$!
    "$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
    timeout 60 "$HOSTRANGE_TEST_PATHTREE" -c 40 -s "$2" -n "$3" -N "$4" ||
        fail "pathtree"
    if [ "$1" = base ]; then
        "$HOSTRANGECTL" plot -o "$dir/live.svg" --node '*node\[0\]' ||
            fail "plot from the daemon"
        svg_ok "$dir/live.svg"
    fi
    "$HOSTRANGECTL" save -o "$dir/$1.hrs" >/dev/null || fail "save $1"
    kill "$pid"; wait "$pid"; pid=
}
run base 2000 1 'tests/<plot> & "more"'
run slow 20000 1 'tests/<plot> & "more"'
# Node ids that are not valid UTF-8 and hold a control byte.
run many 2000 3 "$(printf 'tests/many\377\001\342\202')"

"$HOSTRANGECTL" plot -o "$dir/one.svg" --from "$dir/base.hrs" ||
    fail "plot --from"
svg_ok "$dir/one.svg"
grep -q 'we;ird name' "$dir/one.svg" || fail "the weird name is not drawn"
grep -q '&lt;plot&gt; &amp; &quot;more&quot;' "$dir/one.svg" ||
    fail "node id not escaped"
grep -q '>COLD<' "$dir/one.svg" && grep -q '>WARM<' "$dir/one.svg" ||
    fail "cold and warm panels"

# Several nodes: a directory of pictures and an index.
"$HOSTRANGECTL" plot -o "$dir/many.svg" --from "$dir/many.hrs" 2>/dev/null ||
    fail "plot of several nodes"
[ -f "$dir/many/index.html" ] || fail "no index.html"
for i in 001 002 003; do svg_ok "$dir/many/node-$i.svg"; done
[ -f "$dir/many/node-004.svg" ] && fail "a fourth picture"
xmllint --html --noout "$dir/many/index.html" 2>/dev/null ||
    fail "index.html does not parse"
[ "$(grep -c '<img src="node-00[123].svg"' "$dir/many/index.html")" -eq 3 ] ||
    fail "index.html lists the pictures"

# --diff: c is ten times slower in `slow`: red, its callers too; the base
# against itself is all grey.
"$HOSTRANGECTL" plot -o "$dir/diff.svg" --diff "$dir/base.hrs" \
    "$dir/slow.hrs" || fail "plot --diff"
svg_ok "$dir/diff.svg"
grep -q 'a ; b ; c&#10;.*: slower</title>' "$dir/diff.svg" ||
    fail "c not slower"
"$HOSTRANGECTL" plot -o "$dir/same.svg" --diff "$dir/base.hrs" \
    "$dir/base.hrs" || fail "plot --diff A A"
svg_ok "$dir/same.svg"
grep -q ': slower</title>\|: faster</title>' "$dir/same.svg" &&
    fail "a run differs from itself"
grep -q 'not significant</title>' "$dir/same.svg" || fail "A/A: grey"

# Usage errors.
"$HOSTRANGECTL" plot --from "$dir/base.hrs" 2>/dev/null
[ $? -eq 2 ] || fail "no -o: status 2"
"$HOSTRANGECTL" plot -o "$dir/x.svg" --diff "$dir/base.hrs" 2>/dev/null
[ $? -eq 2 ] || fail "--diff with one file: status 2"
exit 0
