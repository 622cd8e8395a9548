#!/bin/sh
# history detect and check as a gate's result where CI and people look:
# --format junit read by python3-junitparser, --format markdown rendered by
# python3-markdown with its tables extension. A SQLite history of 30
# made-up runs of one machine (tests/helpers/mkrun) where backend.submit
# gets 10% slower from commit c20, cache.lookup stays, and rare is in the
# last run only; a pull request's run 50% slower, with a key the history
# lacks; the same run of a machine the history lacks. Every key check
# does not judge is listed, with why, in every format.
set -u
: "${HOSTRANGECTL:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
py=/usr/bin/python3
"$py" -c 'import junitparser, markdown' ||
    fail "python3-junitparser and python3-markdown are needed (./bootstrap)"

for i in $(seq 0 29); do
    v=1000; [ "$i" -ge 20 ] && v=1100
    rare=; [ "$i" -eq 29 ] && rare="-k n1/rare=300"
    "$mkrun" -o "$dir/a$i.hrs" -i "$(printf 'a%031x' "$i")" -H hostA \
        -m time=$((1700000000 + i * 60)) -m commit=c$i \
        -k "n1/backend.submit=$((v + (i * 7) % 11))" \
        -k "n1/cache.lookup=$((500 + (i * 3) % 7))" $rare || fail mkrun
done
for m in pr:hostA:3000 other:hostZ:9999; do
    name=${m%%:*}; rest=${m#*:}
    "$mkrun" -o "$dir/$name.hrs" -i "$(printf 'c%031x' ${#name})" \
        -H "${rest%%:*}" -C "Test CPU ${rest#*:}" \
        -m time=1800000000 -m commit=pr -k "n1/backend.submit=1650" \
        -k "n1/cache.lookup=500" -k "n1/rare=300" -k "n1/brand.new=40" ||
        fail mkrun
done
db=$dir/h.db
ctl history add --db "$db" "$dir"/a*.hrs > /dev/null 2> "$dir/err" ||
    fail "history add: $(cat "$dir/err")"

ctl history detect --db "$db" --fail-above 5 --format junit \
    > "$dir/detect.xml" 2> "$dir/detect.err"
[ $? -eq 1 ] || fail "detect --fail-above 5: not 1: $(cat "$dir/detect.err")"
ctl history detect --db "$db" --fail-above 5 --format markdown \
    > "$dir/detect.md" 2> /dev/null
[ $? -eq 1 ] || fail "detect --format markdown: not 1"
# --series: each series alone, written as diff writes a gate.
ctl history detect --db "$db" --series --fail-above 5 --format junit \
    > "$dir/series.xml" 2> /dev/null
[ $? -eq 1 ] || fail "detect --series --fail-above 5: not 1"
ctl history detect --db "$db" --series --fail-above 5 --format markdown \
    --limit 1 > "$dir/series.md" 2> /dev/null
[ $? -eq 1 ] || fail "detect --series --format markdown: not 1"
ctl history check --db "$db" --fail-above 10 --format junit "$dir/pr.hrs" \
    > "$dir/check.xml" 2> "$dir/check.err"
[ $? -eq 1 ] || fail "check --fail-above 10: not 1: $(cat "$dir/check.err")"
ctl history check --db "$db" --fail-above 100 --format markdown \
    "$dir/pr.hrs" > "$dir/check.md" 2> /dev/null ||
    fail "check within its limits: not 0"
# A machine the history lacks: nothing judged, every key said so, and
# --min-history refuses to pass it (exit 6) in every format.
for f in junit markdown jsonl text; do
    ctl history check --db "$db" --format $f "$dir/other.hrs" \
        > "$dir/other.$f" 2> "$dir/other.err" ||
        fail "check of another machine, $f: $(cat "$dir/other.err")"
    grep -q "^hostrangectl history check: .*other.hrs: no key judged against the history of Test CPU 9999, 4 cores; clock fast: 8 not judged (8 no history of this machine); --min-history N makes this an error$" \
        "$dir/other.err" || fail "no key judged, $f: $(cat "$dir/other.err")"
    ctl history check --db "$db" --format $f --min-history 2 \
        "$dir/other.hrs" > /dev/null 2> "$dir/other.err"
    [ $? -eq 6 ] || fail "--min-history 2 of another machine, $f: not 6"
    grep -q "^hostrangectl history check: 8 keys have fewer than 2 runs of history on Test CPU 9999, 4 cores; clock fast: not judged (--min-history)$" \
        "$dir/other.err" || fail "--min-history msg: $(cat "$dir/other.err")"
done
[ "$(grep -c ': not judged (no history of this machine)$' "$dir/other.text")" -eq 8 ] ||
    fail "text: $(cat "$dir/other.text")"
grep -q "^checked 0 keys of .*other.hrs against the history of Test CPU 9999, 4 cores; clock fast: 0 differ (p < 0.01), 8 not judged (8 no history of this machine); 0 judged by their rounds$" \
    "$dir/other.text" || fail "text summary: $(tail -1 "$dir/other.text")"
# --min-history 31: more than the history holds on this machine, so no
# key is judged, each refused (the key the history lacks saying so); 30
# judges; a slower key still fails (1).
ctl history check --db "$db" --min-history 31 -f jsonl "$dir/pr.hrs" \
    > "$dir/min31.jsonl" 2> /dev/null
[ $? -eq 6 ] || fail "--min-history 31: not 6"
[ "$(grep -c '"not_judged":"fewer than 31 runs of history on this machine, --min-history 31"}$' "$dir/min31.jsonl")" -eq 6 ] ||
    fail "--min-history 31: $(cat "$dir/min31.jsonl")"
ctl history check --db "$db" --min-history 30 --fail-above 10 \
    "$dir/pr.hrs" > "$dir/min30.txt" 2> /dev/null
[ $? -eq 1 ] || fail "--min-history 30 --fail-above 10: not 1"
grep -q "^checked 4 keys .* 2 differ (p < 0.01), 4 not judged (2 a key the history lacks, 2 fewer runs than --min-history); 0 judged by their rounds$" \
    "$dir/min30.txt" || fail "--min-history 30: $(tail -1 "$dir/min30.txt")"
ctl history detect --db "$db" --format xml > /dev/null 2>&1
[ $? -eq 2 ] || fail "--format xml accepted"

"$py" - "$dir" <<'EOF' || fail "the reports"
import re, sys
from html.parser import HTMLParser
import markdown
from junitparser import JUnitXml, Failure, Skipped
d = sys.argv[1]
where = " on Test CPU 3000, 4 cores; clock fast"

def cases(name):
    xml = JUnitXml.fromfile("%s/%s" % (d, name))
    suites = list(xml)
    assert [s.name for s in suites] == ["n1"], [s.name for s in suites]
    out = {}
    for c in suites[0]:
        kind = [type(r).__name__ for r in c.result]
        out[c.name] = (kind, [r.message for r in c.result])
        assert c.classname == "n1"
    s = suites[0]
    assert s.tests == len(out)
    assert s.failures == sum(k == ["Failure"] for k, _ in out.values())
    assert s.skipped == sum(k == ["Skipped"] for k, _ in out.values())
    return out

# detect: one finding, a testcase, starting in backend.submit's self time
# at c20, failing (both its series are 10% slower), its series listed; the
# rule a property of the suite.
xml = JUnitXml.fromfile("%s/detect.xml" % d)
suites = list(xml)
assert [s.name for s in suites] == ["findings"], [s.name for s in suites]
props = {p.name: p.value for p in suites[0].properties()}
assert props["rule"] == ("a change moves its series by at least 2 clock "
                         "steps of its machine; Benjamini-Hochberg false "
                         "discovery rate q=0.01 over 4 series"), props
tc = list(suites[0])
assert len(tc) == 1 and suites[0].tests == 1 and suites[0].failures == 1
assert re.fullmatch(r"finding 1: starts in warm backend.submit self "
                    r"\(op/cpu\) on Test CPU 3000, 4 cores; clock fast at "
                    r"commit c20 \(run a0+14\)", tc[0].name), tc[0].name
assert tc[0].classname == "n1"
assert [type(r).__name__ for r in tc[0].result] == ["Failure"], tc[0].result
out = tc[0].system_out.splitlines()
assert out[0].startswith("slower: 2 series of 1 node, p "), out
assert [l.split(":")[0] for l in out[1:]] == [
    "n1 op cpu warm backend.submit self",
    "n1 op cpu warm backend.submit inclusive"], out

# detect --series: each series once, failing on its newest change, named
# by the commit where it begins.
got = cases("series.xml")
for metric in ("inclusive", "self"):
    name = "warm backend.submit %s (op/cpu)%s at commit c20" % (metric, where)
    assert got[name][0] == ["Failure"], got
    assert re.fullmatch(r"slower than allowed: before [0-9.]+ (ns|us), after "
                        r"[0-9.]+ (ns|us), change \+10\.\d%, p [0-9.e-]+, "
                        r"threshold 5%", got[name][1][0]), got[name]
    assert got["warm cache.lookup %s (op/cpu)%s" % (metric, where)] == \
        ([], []), got
    assert got["warm rare %s (op/cpu)%s" % (metric, where)] == ([], []), got
assert len(got) == 6, got

# check: the pull request's run against each series' latest segment; the
# key with one run in its history skipped, saying why.
got = cases("check.xml")
for metric in ("inclusive", "self"):
    assert got["warm backend.submit %s (op/cpu)%s" % (metric, where)][0] \
        == ["Failure"], got
    assert got["warm cache.lookup %s (op/cpu)%s" % (metric, where)] == \
        ([], []), got
    assert got["warm rare %s (op/cpu)%s" % (metric, where)] == (
        ["Skipped"], ["too short a history: fewer than 2 runs in the latest "
                      "segment"]), got
    assert got["warm brand.new %s (op/cpu)%s" % (metric, where)] == (
        ["Skipped"], ["a key the history lacks on this machine"]), got
assert len(got) == 8, got
# Another machine: every key a testcase, skipped, saying why.
got = cases("other.junit")
assert len(got) == 8, got
for name, v in got.items():
    assert name.endswith(" on Test CPU 9999, 4 cores; clock fast"), name
    assert v == (["Skipped"], ["no history of this machine"]), (name, v)

class Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.rows = 0, 0
    def handle_starttag(self, tag, attrs):
        self.tables += tag == "table"
        self.rows += tag == "tr"

def render(name):
    text = open("%s/%s" % (d, name), encoding="utf-8").read()
    p = Rows()
    p.feed(markdown.markdown(text, extensions=["tables"]))
    return text.splitlines(), p

lines, p = render("detect.md")
assert lines[0] == "1 finding (1 slower than allowed) over 4 series", lines
assert lines[2] == props["rule"], lines
assert p.tables == 1 and p.rows == 2, (p.tables, p.rows)  # header + 1
assert lines[6].startswith("| n1 warm backend.submit self | on Test CPU "
                           "3000, 4 cores; clock fast at commit c20 (run "), lines
assert lines[6].endswith(" | **slower than allowed** |"), lines
lines, p = render("series.md")
assert lines[0] == "2 keys slower than allowed, 4 unchanged", lines[0]
assert p.tables == 1 and p.rows == 2, (p.tables, p.rows)  # header + 1
assert "1 more changed key not shown (--limit 1)." in lines, lines
lines, p = render("check.md")
assert lines[0] == ("0 keys slower than allowed, 2 slower, 2 unchanged, "
                    "4 not judged"), lines[0]
assert lines[2:5] == [
    "not judged: 2 keys (too short a history: fewer than 2 runs in the "
    "latest segment)", "",
    "not judged: 2 keys (a key the history lacks on this machine)"], lines
assert p.tables == 1 and p.rows == 3, (p.tables, p.rows)
lines, p = render("other.markdown")
assert lines[0] == ("0 keys slower than allowed, 0 unchanged, 8 not judged"), \
    lines[0]
assert lines[2] == "not judged: 8 keys (no history of this machine)", lines
assert p.tables == 0, p.tables
import json
rows = [json.loads(l) for l in open("%s/other.jsonl" % d, encoding="utf-8")]
# The last line: the counts and the rule over the keys judged (none).
assert rows[-1] == {"rule": "a change moves its series by at least 2 clock "
                    "steps of its machine; Benjamini-Hochberg false "
                    "discovery rate q=0.01 over 0 series", "judged": 0,
                    "differ": 0, "findings": 0, "not_judged": 8,
                    "by_rounds": 0, "verdicts": {"slower": 0, "faster": 0,
                                                 "same": 0, "undecided": 0},
                    "not_judged_at_limit": 0}, rows[-1]
rows = rows[:-1]
assert len(rows) == 8 and all(
    r["not_judged"] == "no history of this machine" and
    r["machine"] == "Test CPU 9999, 4 cores; clock fast" for r in rows), rows
EOF
# history plot: the page of the same history, in headless chromium
# (tests/service/page_check.mjs): no console message, a chart per key (one
# machine), the most changed first, the change at c20 marked on both
# backend.submit charts and nowhere else.
browser=$(command -v chromium || command -v chromium-browser) ||
    fail "chromium is needed (./bootstrap installs it)"
ctl history plot --db "$db" -o "$dir/page" > "$dir/plot.out" 2> "$dir/err" ||
    fail "history plot: $(cat "$dir/err")"
grep -q "^wrote $dir/page/index.html: 6 series, 1 finding$" "$dir/plot.out" ||
    fail "history plot said: $(cat "$dir/plot.out")"
mkdir "$dir/seen" && node "${srcdir:-.}/tests/service/page_check.mjs" \
    "$browser" "$dir/profile" "file://$dir/page/index.html" "$dir/seen" \
    --all || fail "chromium on the history page"
[ "$(cat "$dir/seen/console.json")" = "[]" ] ||
    fail "console messages: $(cat "$dir/seen/console.json")"
"$py" - "$dir/seen/dom.html" <<'EOF' || fail "the history page's DOM"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
figs = re.findall(r'<figure class="chart[^"]*"[^>]*data-name="([^"]*)"', dom)
assert len(figs) == 6, figs
assert figs[0].startswith("n1 warm backend.submit (op/cpu) "), figs
marks = re.findall(r'<g class="cp" data-run="\d+" data-commit="([^"]*)"', dom)
assert marks == ["c20", "c20"], marks
EOF
# Into the same directory again: the page replaced, the chunks it does
# not name (left by larger pages) removed, any other file kept.
echo 'hrChunk(1,[]);' > "$dir/page/data/000001.js"
echo 'hrChunk(7,[]);' > "$dir/page/data/000007.js"
echo notes > "$dir/page/notes.txt"
ctl history plot --db "$db" -o "$dir/page" > "$dir/plot2.out" 2> "$dir/err" ||
    fail "history plot again: $(cat "$dir/err")"
cmp -s "$dir/plot.out" "$dir/plot2.out" ||
    fail "history plot again said: $(cat "$dir/plot2.out")"
[ "$(ls "$dir/page/data")" = "000000.js" ] ||
    fail "chunks after a second plot: $(ls "$dir/page/data")"
[ "$(cat "$dir/page/notes.txt")" = notes ] || fail "another file touched"
# A plot that fails there (its chunks cannot be written) leaves no page,
# rather than the old index over new chunks.
rm -r "$dir/page/data" && : > "$dir/page/data"
ctl history plot --db "$db" -o "$dir/page" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 5 ] && grep -q "cannot write $dir/page/data/000000.js" \
    "$dir/err" || fail "plot over a broken page: $rc $(cat "$dir/err")"
[ ! -e "$dir/page/index.html" ] || fail "an index.html left to a failed plot"
# A file where the directory should be: a clear error, exit 5.
: > "$dir/file"
ctl history plot --db "$db" -o "$dir/file" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 5 ] && grep -q "cannot make $dir/file: Not a directory" \
    "$dir/err" || fail "plot into a file: $rc $(cat "$dir/err")"
ctl history plot --db "$db" > /dev/null 2>&1
[ $? -eq 2 ] || fail "history plot without -o"
echo "PASS"
