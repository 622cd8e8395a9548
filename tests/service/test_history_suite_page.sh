#!/bin/sh
# history plot at a suite's size (issue 47): the page of a SQLite history
# of 3,000 test nodes x 40 series x 20 runs (120,000 series, written by
# tests/helpers/mkhistory), one node's layer7 self time slower from run 12
# on, its runs 1 us apart (all in one second, where by name commit c10
# sorts before c2: a line drawn in any order but the runs' goes
# backwards). In headless chromium (page_check.mjs):
# - it opens on the one finding, its first chart the layer the change
#   starts in (n1234 layer7 self) with its change point at c12 or c13,
#   with no console message, having loaded no chunk but the finding's;
# - index.html, which names every chart and holds no point, is under
#   INDEX_MB (the size of the whole directory is printed);
# - hovering the finding's point of c12 names its commit, host and kernel;
# - scrolling to a chunk in the middle loads it and draws its charts;
# - the filter finds a chart of the last chunk, not loaded, and draws it;
# - no line drawn runs backwards.
# The time to the first screen (data-drawn-ms) is printed, not judged.
set -u
: "${HOSTRANGECTL:?}"
mkhistory=${top_builddir:-.}/tests/helpers/mkhistory
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
py=/usr/bin/python3
browser=$(command -v chromium || command -v chromium-browser) ||
    fail "chromium is needed (./bootstrap installs it)"
# The most index.html of 120,000 charts may weigh, MB: every chart's name
# as two numbers, each node's name once; no point.
INDEX_MB=2

"$mkhistory" -g 1000 "$dir/step.db" 3000 20 1 1234:7:12:0.3 ||
    fail mkhistory
ctl history plot --db "$dir/step.db" -o "$dir/page" > "$dir/plot.out" \
    2> "$dir/err" || fail "history plot: $(cat "$dir/err")"
grep -q "^wrote $dir/page/index.html: 120000 series, 1 finding$" \
    "$dir/plot.out" || fail "history plot said: $(cat "$dir/plot.out")"
index=$(wc -c < "$dir/page/index.html")
[ "$index" -lt $((INDEX_MB * 1000000)) ] ||
    fail "index.html is $index bytes"
total=$(cat "$dir/page/index.html" "$dir/page/data/"*.js | wc -c)
last=$(ls "$dir/page/data" | tail -1)
echo "index.html $index bytes, the page $total bytes in" \
    "$(ls "$dir/page/data" | wc -l) chunks"
middle=$(( $(ls "$dir/page/data" | wc -l) / 2 ))

mkdir "$dir/seen" && node "${srcdir:-.}/tests/service/page_check.mjs" \
    "$browser" "$dir/profile" "file://$dir/page/index.html" "$dir/seen" \
    --hover 0 12 --scroll "$middle" --filter "n2999 warm layer9 self" ||
    fail "chromium on the page"
[ "$(cat "$dir/seen/console.json")" = "[]" ] ||
    fail "console messages: $(cat "$dir/seen/console.json")"
"$py" - "$dir/seen" "$last" "$middle" <<'EOF' || fail "the page in chromium"
import json, re, sys
d, last, middle = sys.argv[1], "data/" + sys.argv[2], int(sys.argv[3])
dom = open(d + "/dom.html", encoding="utf-8").read()
print("first screen drawn after %s ms" %
      re.search(r'data-drawn-ms="(\d+)"', dom).group(1))
# The finding first: its heading, then its first chart, where it starts.
h2 = re.search(r'<h2>(finding 1: [^<]*(?:<bdi>[^<]*</bdi>[^<]*)*)</h2>', dom)
assert h2, "no finding"
text = re.sub(r"</?bdi>", "", h2.group(1))
assert re.fullmatch(r"finding 1: slower by \+[0-9.]+% on Test CPU 3000, 4 "
                    r"cores; clock fast at commit c1[23], starts in n1234 "
                    r"(cold|warm) layer7 self", text), text
figs = re.findall(r'<figure class="(chart[^"]*)" data-chart="\d+" '
                  r'data-name="([^"]*)"', dom)
assert figs and figs[0][0] == "chart most" and re.fullmatch(
    r"n1234 (cold|warm) layer7 \(gemm/cpu\) self", figs[0][1]), figs[:2]
assert dom.index("finding 1:") < dom.index("Every other chart")
first = dom[dom.index('data-name="%s"' % figs[0][1]):]
first = first[:first.index("</figure>")]
assert re.findall(r'<g class="cp" data-run="\d+" data-commit="(c1[23])"',
                  first), "no change point on the first chart"
assert all(n.startswith("n1234 ") for _, n in figs), \
    [n for _, n in figs if not n.startswith("n1234 ")]
chunks = json.load(open(d + "/chunks.json"))
assert len(chunks) == 1, chunks
# Hover: the point of c12 on the first chart.
tip = json.load(open(d + "/hover.json"))
lines = tip["shown"]["text"].split("\n")
assert tip["shown"]["visible"] and lines[1] == "commit c12" and \
    lines[3] == "host hostA, kernel Linux 6.1.0", lines
# Scrolled to the middle chunk: loaded, drawn, and few chunks besides.
sc = json.load(open(d + "/scroll.json"))
assert sc["loaded"] and sc["charts"] and sc["charts"][0]["drawn"], sc
mid = "data/%06d.js" % middle
assert mid in sc["chunks"] and len(sc["chunks"]) <= 4, sc["chunks"]
# The filter: the chart of the last chunk, found and drawn.
f = json.load(open(d + "/filter.json"))
assert f["charts"] == [{"name": "n2999 warm layer9 (gemm/cpu) self",
                        "drawn": True}], f["charts"]
assert f["count"] == "1 of 120000 charts", f["count"]
assert f["chunks"][-1] == last and len(f["chunks"]) <= 5, f["chunks"]
# No line runs backwards: every median path's x never decreases.
drawn = 0
for path in sc["medians"]:
    xs = [float(x) for x in re.findall(r"[ML]([0-9.]+) ", path)]
    assert len(xs) == 20 and xs == sorted(xs), path
    drawn += 1
assert drawn >= 10, drawn
EOF
exit 0
