#!/bin/sh
# A gate's result where CI and people look, read by real readers: diff
# --format junit read by python3-junitparser (every file) and rendered by
# the npm package xunit-viewer; diff --format markdown rendered by
# python3-markdown with its tables extension; --warn-above reported and
# never failing. The node names carry < & " | ` a newline and a byte that
# is not UTF-8.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PATHTREE:?}"
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
tree=$HOSTRANGE_TEST_PATHTREE
py=/usr/bin/python3
# xunit-viewer, installed by ./bootstrap and .ci/run with npm ci in
# tests/node (HOSTRANGE_TEST_NODE_MODULES names another folder).
modules=${HOSTRANGE_TEST_NODE_MODULES:-${srcdir:-.}/tests/node/node_modules}
viewer=$modules/.bin/xunit-viewer
"$py" -c 'import junitparser, markdown' ||
    fail "python3-junitparser and python3-markdown are needed (./bootstrap)"
[ -x "$viewer" ] || fail "no $viewer: run ./bootstrap (npm ci in tests/node)"

prefix=$(printf 'n<&"|`\n\377x')
# base: node[0]; slow: node[0] with c three times as long, and node[1],
# which base lacks (a key of one run only).
ctl record -o /dev/null --save "$dir/base.hrs" -- "$tree" -c 20 \
    -N "$prefix" 2> "$dir/err" || fail "record base: $(cat "$dir/err")"
ctl record -o /dev/null --save "$dir/slow.hrs" -- "$tree" -c 20 -s 6000 -n 2 \
    -N "$prefix" 2> "$dir/err" || fail "record slow: $(cat "$dir/err")"

# JUnit: a and b (which hold c) beyond 10%, c allowed 1000% but warned
# at 50%: status 1, and the failures are the keys named on stderr.
ctl diff --format junit --fail-above 'c=1000,*=10' --warn-above 'c=50' \
    "$dir/base.hrs" "$dir/slow.hrs" > "$dir/slow.xml" 2> "$dir/slow.err"
[ $? -eq 1 ] || fail "junit with a key over: not 1: $(cat "$dir/slow.err")"
# The same runs compared with themselves: nothing fails, status 0.
ctl diff --format junit --fail-above 10 "$dir/base.hrs" "$dir/base.hrs" \
    > "$dir/same.xml" 2> "$dir/err" || fail "junit A/A: $(cat "$dir/err")"

"$py" - "$dir" "$prefix" <<'EOF' || fail "junitparser"
import re, sys
from junitparser import JUnitXml, Failure, Skipped
d, prefix = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")
# hrv_xml_escape: a byte that XML cannot hold becomes '?'.
node = prefix.replace(b"\xff", b"?").decode() + "::node[%d]"

def load(name):
    xml = JUnitXml.fromfile("%s/%s" % (d, name))
    suites = list(xml)
    assert xml.tests == sum(s.tests for s in suites), name
    for s in suites:
        cases = list(s)
        assert s.tests == len(cases), (name, s.name)
        assert s.failures == sum(
            any(isinstance(r, Failure) for r in c.result) for c in cases)
        assert s.skipped == sum(
            any(isinstance(r, Skipped) for r in c.result) for c in cases)
        assert s.errors == 0
        for c in cases:
            assert c.classname == s.name, (c.classname, s.name)
    assert xml.failures == sum(s.failures for s in suites)
    assert xml.skipped == sum(s.skipped for s in suites)
    return suites

# The keys named on stderr as slower than allowed, and warned.
over, warned = set(), set()
for line in open(d + "/slow.err", encoding="utf-8", errors="replace"):
    m = re.search(r"tree/cpu (\w+) (\S+) (\w+) is [0-9.]+% slower, above "
                  r"--(fail|warn)-above", line)
    if m:
        key = "%s %s %s (tree/cpu)" % m.group(1, 2, 3)
        (over if m.group(4) == "fail" else warned).add(key)
assert {"warm a inclusive (tree/cpu)", "warm b inclusive (tree/cpu)"} <= over
assert "warm c self (tree/cpu)" in warned, warned

suites = load("slow.xml")
assert [s.name for s in suites] == [node % 0, node % 1], \
    [s.name for s in suites]
s0, s1 = suites
failed = {c.name for c in s0 if any(isinstance(r, Failure) for r in c.result)}
assert failed == over, (failed, over)
for c in s0:
    for r in c.result:
        if isinstance(r, Failure):
            assert r.type == "slower"
            # The unit follows the size (ns, us, ms, s): a short key
            # under a sanitizer can be below a microsecond.
            assert re.fullmatch(r"slower than allowed: before [0-9.]+ "
                                r"(ns|us|ms|s), after [0-9.]+ (ns|us|ms|s), "
                                r"change \+[0-9.]+%, "
                                r"p [0-9.e-]+, threshold 10%", r.message), \
                r.message
    out = c.system_out or ""
    if c.name in warned:
        assert out.startswith("warning: slower than the warning level: "), out
        assert out.endswith("threshold 50% (--warn-above)"), out
# The weird range name of pathtree, its newline kept.
assert "warm we;ird name\n self (tree/cpu)" in {c.name for c in s0}
assert s1.tests > 0 and s1.skipped == s1.tests
for c in s1:
    assert [r.message for r in c.result] == ["only in the new run"]

same = load("same.xml")
assert len(same) == 1 and same[0].failures == 0 and same[0].skipped == 0
assert same[0].tests == s0.tests
EOF

# xunit-viewer renders the file with failures, skips and odd names.
"$viewer" -r "$dir/slow.xml" -o "$dir/slow.html" > "$dir/viewer.out" 2>&1 ||
    fail "xunit-viewer: $(cat "$dir/viewer.out")"
grep -qi -E "error|failed to parse" "$dir/viewer.out" &&
    fail "xunit-viewer said: $(cat "$dir/viewer.out")"
[ -s "$dir/slow.html" ] || fail "xunit-viewer wrote nothing"

# Markdown: the verdict line, and the changed keys as a table, worst
# first; --limit 2 keeps two rows and says how many more.
ctl diff --format jsonl --fail-above 'c=1000,*=10' --warn-above 'c=50' \
    "$dir/base.hrs" "$dir/slow.hrs" > "$dir/slow.jsonl" 2> /dev/null
ctl diff --format markdown --fail-above 'c=1000,*=10' --warn-above 'c=50' \
    "$dir/base.hrs" "$dir/slow.hrs" > "$dir/all.md" 2> /dev/null
[ $? -eq 1 ] || fail "markdown with a key over: not 1"
ctl diff --format markdown --limit 2 --fail-above 'c=1000,*=10' \
    --warn-above 'c=50' "$dir/base.hrs" "$dir/slow.hrs" > "$dir/two.md" \
    2> /dev/null
"$py" - "$dir" "$prefix" <<'EOF' || fail "python3-markdown"
import json, re, sys
from html.parser import HTMLParser
import markdown
d, prefix = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")

class Tables(HTMLParser):
    """The text of each cell of each table, row by row."""
    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None
    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

def render(name):
    text = open("%s/%s" % (d, name), encoding="utf-8").read()
    p = Tables()
    p.feed(markdown.markdown(text, extensions=["tables"]))
    return text.splitlines(), p.tables

rows = [json.loads(l) for l in open(d + "/slow.jsonl")]
changed = [r for r in rows if r.get("flag")]
only = [r for r in rows if "only" in r]
lines, tables = render("all.md")
m = re.fullmatch(r"(\d+) keys? slower than allowed"
                 r"(?:, (\d+) slower than the warning level)?"
                 r"(?:, (\d+) slower)?(?:, (\d+) faster)?, (\d+) unchanged"
                 r"(?:, (\d+) in one run only)?; machines match", lines[0])
assert m, lines[0]
n = [int(g or 0) for g in m.groups()]
assert n[0] >= 2 and n[1] >= 1, lines[0]
assert sum(n[:4]) == len(changed), (lines[0], len(changed))
assert n[4] == len(rows) - len(changed) - len(only), lines[0]
assert n[5] == len(only) > 0, (lines[0], len(only))
assert len(tables) == 1, len(tables)
header, body = tables[0][0], tables[0][1:]
assert header[:4] == ["node", "phase", "range", "metric"], header
assert len(body) == len(changed), (len(body), len(changed))
assert all(r[8].startswith("slower than allowed") for r in body[:2]), body
# The node's cell reads as the name: the newline a space, the byte that
# is not UTF-8 as U+FFFD.
name = prefix.replace(b"\n", b" ").decode("utf-8", "replace") + "::node[0]"
assert body[0][0] == name, (body[0][0], name)

lines, tables = render("two.md")
assert len(tables) == 1 and len(tables[0]) == 3, tables
more = "%d more changed keys not shown (--limit 2)." % (len(changed) - 2)
assert more in lines, lines
EOF

# --warn-above alone: the keys beyond it named as warnings, status 0.
ctl diff --warn-above 10 "$dir/base.hrs" "$dir/slow.hrs" > /dev/null \
    2> "$dir/err" || fail "--warn-above changed the status"
# (The node's newline is written as \n: one line a warning.)
grep -q "warm a inclusive is [0-9.]*% slower, above --warn-above 10%$" \
    "$dir/err" || fail "no warning for a: $(cat "$dir/err")"
[ "$(grep -c '^hostrangectl diff: warning: ' "$dir/err")" = \
  "$(grep -c 'above --warn-above 10%$' "$dir/err")" ] ||
    fail "not warnings: $(cat "$dir/err")"
ctl diff --limit 2.5 "$dir/base.hrs" "$dir/slow.hrs" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--limit 2.5 accepted"
ctl diff --format xml "$dir/base.hrs" "$dir/slow.hrs" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--format xml accepted"
echo "PASS"
