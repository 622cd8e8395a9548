#!/bin/sh
# Every output format against the one set of hostile names
# (tests/lib/harness_hostile.c, printed by tests/helpers/hostile), read by
# the real readers: node ids, range names, host names, commits and file
# names that hold markup and script, Markdown's punctuation, terminal
# escapes, U+202E, control characters, bytes that are not UTF-8 and 4,096
# bytes, in made-up runs (tests/helpers/mkrun) through diff (table,
# markdown, junit, jsonl), dump --format table, history list, show (text,
# csv), detect and check (text, junit, markdown) and plot.
#   Text: no ESC, no other control but newline and tab, no bidirectional
#   control, valid UTF-8; each name there as its visible escapes.
#   Markdown: rendered by python3-markdown, then loaded in headless
#   chromium: no element but the table's and the lists', no script runs,
#   no image; each name reads back.
#   JUnit: read by python3-junitparser, each node a suite.
#   The history page in headless chromium: no script of a name runs, no
#   image, every name's direction isolated, nothing wider than the window.
set -u
: "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_HOSTILE:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
py=/usr/bin/python3
"$py" -c 'import junitparser, markdown' ||
    fail "python3-junitparser and python3-markdown are needed (./bootstrap)"
browser=$(command -v chromium || command -v chromium-browser) ||
    fail "chromium is needed (./bootstrap installs it)"
name() { "$HOSTRANGE_TEST_HOSTILE" "$1"; }
n=$("$HOSTRANGE_TEST_HOSTILE") || fail "hostile"

# The -k options of mkrun, NUL-separated: each name a node (range r) and
# a range (of node n), at $1 ns.
keys() {
    i=0
    while [ "$i" -lt "$n" ]; do
        nm=$(name "$i")
        printf -- '-k\0%s/r=%s\0-k\0n/%s=%s\0' "$nm" "$1" "$nm" "$1"
        i=$((i + 1))
    done
}
# run FILE ID HOST COMMIT NS T: a run of every hostile key at NS ns, at
# minute T; its branch a name too.
run() {
    keys "$5" > "$dir/keys" &&
    xargs -0 "$mkrun" -o "$1" -i "$2" -H "$3" -m "commit=$4" \
        -m "time=$((1700000000 + $6 * 60))" -m "branch=$(name 1)" \
        < "$dir/keys" || fail "mkrun $1"
}
# Files named by names; hosts and commits that are names.
base=$dir/$(name 0).hrs new=$dir/$(name 4).hrs
run "$base" 00000000000000000000000000000001 "$(name 5)" "$(name 0)" 1000 0
run "$new" 00000000000000000000000000000002 "$(name 4)" "$(name 7)" 1300 9
# A history of one machine (a hostile host, and a machine of the same
# name: history add --machine): 30% slower from run 4.
for i in 0 1 2 3 4 5 6 7; do
    v=1000; [ "$i" -ge 4 ] && v=1300
    c=c$i; [ "$i" -eq 7 ] && c=$(name 6)
    run "$dir/h$i.run" "$(printf '%032d' "$((10 + i))")" "$(name 5)" "$c" \
        $((v + i % 3)) "$i"
done
o=$dir/out
mkdir "$o" || exit 99

ctl diff "$base" "$new" > "$o/diff.txt" 2> "$o/diff.err"
ctl diff --fail-above 10 "$base" "$new" > /dev/null 2> "$o/diff-fail.err"
ctl diff --format markdown "$base" "$new" > "$o/diff.md" 2> /dev/null
ctl diff --format junit "$base" "$new" > "$o/diff.xml" 2> /dev/null
ctl diff --format jsonl "$base" "$new" > "$o/diff.jsonl" 2> /dev/null
ctl dump --from "$base" --format table > "$o/dump.txt" 2> "$o/dump.err" ||
    fail "dump: $(cat "$o/dump.err")"
db=$dir/h.db
ctl history add --db "$db" --machine "$(name 5)" "$dir"/h*.run \
    > /dev/null 2> "$dir/err" ||
    fail "history add: $(cat "$dir/err")"
ctl history list --db "$db" > "$o/list.txt" || fail "history list"
ctl history show --db "$db" > "$o/show.txt" || fail "history show"
ctl history show --db "$db" --format csv > "$o/show.csv" ||
    fail "history show --format csv"
ctl history detect --db "$db" > "$o/detect.txt" 2> "$o/detect.err"
ctl history detect --db "$db" --fail-above 5 > /dev/null \
    2> "$o/detect-fail.err"
ctl history detect --db "$db" --format markdown > "$o/detect.md" 2> /dev/null
ctl history detect --db "$db" --format junit > "$o/detect.xml" 2> /dev/null
# --series: each series a row of diff's gate, every node a suite.
ctl history detect --db "$db" --series --format markdown \
    > "$o/detect-series.md" 2> /dev/null
ctl history detect --db "$db" --series --format junit \
    > "$o/detect-series.xml" 2> /dev/null
ctl history check --db "$db" "$dir/h7.run" > "$o/check.txt" \
    2> "$o/check.err"
ctl history check --db "$db" --format markdown "$dir/h7.run" \
    > "$o/check.md" 2> /dev/null
ctl history check --db "$db" --format junit "$dir/h7.run" > "$o/check.xml" \
    2> /dev/null
ctl history plot --db "$db" -o "$dir/page" > "$o/plot.txt" 2> "$dir/err" ||
    fail "history plot: $(cat "$dir/err")"
for f in diff.txt diff.md diff.xml diff.jsonl list.txt show.txt detect.txt \
         detect.md detect.xml detect-series.md detect-series.xml check.txt \
         check.md check.xml; do
    [ -s "$o/$f" ] || fail "$f is empty"
done

"$py" - "$HOSTRANGE_TEST_HOSTILE" "$o" <<'EOF' || fail "the outputs"
import csv, io, json, os, re, subprocess, sys
from html.parser import HTMLParser
import markdown
from junitparser import JUnitXml
helper, o = sys.argv[1], sys.argv[2]
d = os.path.dirname(o)
n = int(subprocess.check_output([helper]))
names = [subprocess.check_output([helper, str(i)]) for i in range(n)]
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
bidi = re.compile("[%s]" % BIDI)

def text_rule(b):
    """The text rule of escape.h: how a name reads in text output."""
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff:
            out.append("\\x%02x" % (c - 0xdc00))
        elif ch in "\\\n\t\r":
            out.append({"\\": "\\\\", "\n": "\\n", "\t": "\\t",
                        "\r": "\\r"}[ch])
        elif c < 0x20 or c == 0x7f:
            out.append("\\x%02x" % c)
        elif 0x80 <= c <= 0x9f or bidi.match(ch):
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)

def read(f):
    return open("%s/%s" % (o, f), encoding="utf-8").read()

# Text: clean (valid UTF-8, or decoding raises), each name as its escape.
for f in ("diff.txt", "diff.err", "diff-fail.err", "dump.txt", "list.txt",
          "show.txt", "detect.txt", "detect-fail.err", "check.txt",
          "check.err"):
    text = read(f)
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or
           0x7f <= ord(c) <= 0x9f or bidi.match(c)]
    assert not bad, (f, bad)
for f in ("diff.txt", "dump.txt", "show.txt", "detect.txt", "diff-fail.err",
          "detect-fail.err"):
    text = read(f)
    for b in names:
        assert text_rule(b) in text, (f, text_rule(b)[:80])
diff = read("diff.txt")
assert "\\x1b[31mred\\x1b[0m" in diff and "\\u202edesrever" in diff
# The run lines: file names, hosts and commits escaped.
lines = diff.splitlines()
assert lines[-2].startswith("base %s/<img src=x onerror=alert(1)>.hrs: "
                            "left \\u202edesrever\\u202c right: " % d) and \
    "commit=<img src=x onerror=alert(1)>" in lines[-2], lines[-2]
assert lines[-1].startswith("new %s/%s.hrs: %s: " % (d, text_rule(names[4]),
                                                     text_rule(names[4]))) \
    and "commit=%s" % text_rule(names[7]) in lines[-1], lines[-1]
listed = [l.split("\t") for l in read("list.txt").splitlines()]
assert len(listed) == 8 and all(len(l) == 7 for l in listed), listed
assert sorted(l[2] for l in listed) == sorted(
    ["c%d" % i for i in range(7)] + [text_rule(names[6])]), listed
assert {l[3] for l in listed} == {text_rule(names[5])}, listed
assert {l[5] for l in listed} == {text_rule(names[5])}, listed

# JSON and CSV read back as the names.
want = {b.decode("utf-8", "replace") for b in names}
rows = [json.loads(l) for l in open(o + "/diff.jsonl")]
assert want <= {r["nodeid"] for r in rows}, "jsonl nodes"
assert want <= {r["range"] for r in rows}, "jsonl ranges"
got = list(csv.reader(io.StringIO(open(o + "/show.csv", encoding="utf-8",
                                       errors="replace", newline="").read())))
assert want <= {r[0] for r in got[1:]} and want <= {r[4] for r in got[1:]}

# JUnit: every node a suite, named as the XML rule writes it.
def xml_rule(b):
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff or (c < 0x20 and ch not in "\n\t\r") or \
                c == 0x7f:
            out.append("?")
        elif 0x80 <= c <= 0x9f:  # '?' a byte: two
            out.append("??")
        else:
            out.append(" " if ch in "\t\r" else ch)
    return "".join(out)
for f in ("diff.xml", "detect-series.xml", "check.xml"):
    suites = {s.name for s in JUnitXml.fromfile("%s/%s" % (o, f))}
    want = {xml_rule(b) for b in names} | {"n"}
    assert suites == want, (f, suites ^ want)
# detect's findings: one suite; every name in a finding's series listed.
suites = list(JUnitXml.fromfile("%s/detect.xml" % o))
assert [s.name for s in suites] == ["findings"], [s.name for s in suites]
listed = "\n".join(c.system_out for c in suites[0])
for b in names:
    assert xml_rule(b) in listed, ("detect.xml", xml_rule(b)[:80])

# Markdown: python3-markdown makes only the report's own elements; each
# name reads back (a newline, tab or CR a space; a control, a
# bidirectional control or a bad byte U+FFFD).
def md_rule(b):
    s = re.sub("[\n\t\r]", " ", b.decode("utf-8", "replace"))
    return re.sub("[\x00-\x1f\x7f-\x9f%s]" % BIDI, "\ufffd", s)

class Html(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.cells, self.cell = set(), set(), [], None
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs |= {k for k, _ in attrs}
        if tag in ("td", "th", "li"):
            self.cell = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th", "li") and self.cell is not None:
            self.cells.append(self.cell)
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

for f, named in (("diff.md", names), ("detect-series.md", names),
                 ("detect.md", []), ("check.md", [])):
    html = markdown.markdown(read(f), extensions=["tables"])
    p = Html()
    p.feed(html)
    assert p.tags <= {"p", "table", "thead", "tbody", "tr", "th", "td",
                      "strong", "ul", "li"}, (f, p.tags)
    assert p.attrs <= {"style"}, (f, p.attrs)
    cells = "\n".join(p.cells)
    for b in named:
        assert md_rule(b) in cells, (f, md_rule(b)[:80])
    with open("%s/%s.html" % (o, f), "w", encoding="utf-8") as out:
        out.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
                  "</head><body>%s</body></html>" % html)
md = markdown.markdown(read("diff.md"), extensions=["tables"])
p = Html()
p.feed(md)
runs = [c for c in p.cells if c.startswith(("base ", "new "))]
assert len(runs) == 2, runs
assert runs[0].startswith("base %s/<img src=x onerror=alert(1)>.hrs: "
                          "left \ufffddesrever\ufffd right: " % d) and \
    "commit=<img src=x onerror=alert(1)>" in runs[0], runs[0]
assert "branch=%s" % md_rule(names[1]) in runs[1], runs[1]
EOF

# The rendered Markdown in chromium: no dialog, no image, no script; the
# history page: no dialog or console message, no image, every name
# isolated, nothing wider than the window.
check() {
    mkdir -p "$2" && node "${srcdir:-.}/tests/service/page_check.mjs" \
        "$browser" "$dir/profile" "file://$1" "$2" "$3"
}
for f in diff detect check; do
    check "$o/$f.md.html" "$dir/seen-$f" --static ||
        fail "chromium on $f.md.html"
done
check "$dir/page/index.html" "$dir/seen-page" --all ||
    fail "chromium on the history page"
"$py" - "$dir" <<'EOF' || fail "in chromium"
import json, sys
d = sys.argv[1]
for f in ("diff", "detect", "check", "page"):
    said = json.load(open("%s/seen-%s/console.json" % (d, f)))
    assert said == [], (f, said)
    safety = json.load(open("%s/seen-%s/safety.json" % (d, f)))
    # (A bare rendering of Markdown has no style to wrap a long name:
    # its width is the viewer's.)
    assert safety == {"images": 0, "scripts": 2 if f == "page" else 0,
                      "wide": safety["wide"] if f != "page" else False,
                      "unisolated": []}, (f, safety)
dom = open(d + "/seen-page/dom.html", encoding="utf-8").read()
assert "<bdi>left \u202edesrever\u202c right</bdi>" in dom, \
    "the machine in the legend"
EOF
echo "PASS"
