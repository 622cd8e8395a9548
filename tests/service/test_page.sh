#!/bin/sh
# The history page (lib/view/pagedir.c, page.c) in headless chromium: the
# page of a made-up history (tests/helpers/pagegen: 6 charts of 2
# machines over 40 runs, 2 of them findings, names with < & " | ` ' a
# newline, a byte that is not UTF-8 and </script>) loads with no console
# message, holds one chart per series (node, phase, range and metric) with
# a legend line per machine, opens on the finding of the largest change,
# marks each change point at its run, shows a point's figures on hover,
# and its screenshot is not blank; it loads nothing from elsewhere but its
# own chunks. A page of 2,000 series x 500 runs stays under 20 MB in all
# and loads with no console message; the time its first charts took to
# draw is printed, not judged. Chromium is driven over the DevTools
# protocol on a pipe (page_check.mjs, with node).
set -u
: "${HOSTRANGE_TEST_PAGEGEN:?}"
dir=$(mktemp -d) || exit 99
cleanup() { rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3
browser=$(command -v chromium || command -v chromium-browser) ||
    fail "chromium is needed (./bootstrap installs it)"

# Headless chromium, driven over the DevTools protocol on a pipe
# (page_check.mjs): it loads file $1 and writes into directory $2 the
# console messages, the DOM once drawn, a screenshot and, with --hover, the
# tooltip of a hovered point.
check() {
    file=$1 out=$2
    shift 2
    mkdir -p "$out" &&
    node "${srcdir:-.}/tests/service/page_check.mjs" "$browser" \
        "$dir/profile" "file://$file" "$out" "$@"
}

mkdir "$dir/page" &&
"$HOSTRANGE_TEST_PAGEGEN" -H -o "$dir/page" > "$dir/expected" ||
    fail "pagegen"
# Self-contained: no script, style, font, image or frame from elsewhere
# (the script loads its chunks, data/NNNNNN.js, itself).
grep -n -i -E '<(link|img|iframe|object|embed)\b| src=|@import|url\(|fetch\(|XMLHttpRequest|@font-face' \
    "$dir/page/index.html" "$dir/page/data/"*.js &&
    fail "the page loads something"
# No name ends the data or the script early.
[ "$(grep -c '</script>' "$dir/page/index.html")" -eq 2 ] ||
    fail "a </script> too many"

check "$dir/page/index.html" "$dir/small" --all --hover 0 20 ||
    fail "chromium on the page"
[ "$(cat "$dir/small/console.json")" = "[]" ] ||
    fail "console messages: $(cat "$dir/small/console.json")"

"$py" - "$dir" <<'EOF' || fail "the page's DOM"
import re, sys
from html.parser import HTMLParser
d = sys.argv[1]

class Page(HTMLParser):
    """Figures (charts), their lines, legends, dots and change points."""
    def __init__(self):
        super().__init__()
        self.charts, self.line = [], None
        self.in_legend = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "figure" and "chart" in cls.split():
            self.charts.append({"name": a["data-name"], "most": "most" in cls,
                                "lines": {}, "legend": []})
        elif tag == "g" and cls == "line":
            self.line = {"dots": [], "cps": []}
            self.charts[-1]["lines"][a["data-machine"]] = self.line
        elif tag == "path" and cls == "dots":
            self.line["dots"] = [float(x) for x in
                                 re.findall(r"M([0-9.]+) [0-9.]+h0", a["d"])]
        elif tag == "g" and cls == "cp":
            self.line["cps"].append({"commit": a["data-commit"],
                                     "change": float(a["data-change"])})
        elif tag == "circle" and self.line and self.line["cps"] and \
                "cx" not in self.line["cps"][-1]:
            self.line["cps"][-1]["cx"] = float(a["cx"])
        elif tag == "div" and cls == "legend":
            self.in_legend = True
    def handle_endtag(self, tag):
        if tag == "div":
            self.in_legend = False
    def handle_data(self, data):
        if self.in_legend and data.strip():
            self.charts[-1]["legend"].append(data.strip())

page = Page()
page.feed(open(d + "/small/dom.html", encoding="utf-8").read())
cps, most = {}, None
for line in open(d + "/expected", encoding="utf-8", errors="replace"):
    f = line.rstrip("\n").replace("\x01", "\n").split("\t")
    if f[0] == "most":
        most = f[1]
    else:
        cps.setdefault(f[1], {})[f[2]] = (f[3], int(f[4]))
charts = page.charts
assert len(charts) == 6, len(charts)
assert len({c["name"] for c in charts}) == 6
# The page opens on the finding of the most changed chart; each finding's
# chart is marked where it starts.
assert charts[0]["name"] == most and charts[0]["most"], charts[0]["name"]
assert sum(c["most"] for c in charts) == 2
hostile = [c for c in charts if "</script>" in c["name"]]
assert len(hostile) == 1 and '<&"|`\'\n?' in hostile[0]["name"], hostile
for c in charts:
    # Both machines: a line each, in the legend too.
    assert sorted(c["lines"]) == ["machine-A", "machine-B"], c["lines"]
    assert c["legend"] == ["machine-A", "machine-B"], c["legend"]
    want = cps.get(c["name"], {})
    for machine, line in c["lines"].items():
        assert len(line["dots"]) == (40 if machine == "machine-A" else 27)
        if machine not in want:
            assert line["cps"] == [], (c["name"], line["cps"])
            continue
        commit, index = want[machine]
        assert len(line["cps"]) == 1, line["cps"]
        cp = line["cps"][0]
        # The marker at the run where the change begins: its commit, and
        # the x of that run's point.
        assert cp["commit"] == commit, (cp, commit)
        assert abs(cp["cx"] - line["dots"][index]) < 0.05, (cp, index)
        assert cp["change"] > 0
assert set(cps) <= {c["name"] for c in charts}
EOF

# Hover: point 20 of machine-A in the most changed chart (range.3, 4 us) shows
# that run's commit, time, median, p10-p90 and count; leaving hides it.
hover=$dir/small/hover.json
"$py" - "$hover" <<'EOF2' || fail "hover: $(cat "$hover")"
import json, re, sys
h = json.load(open(sys.argv[1]))
assert h["shown"]["visible"] and h["shown"]["rings"] == 1, h
assert not h["left"]["visible"] and h["left"]["rings"] == 0, h
# pagegen: run r is commit %08x%032x of 0xc0ffee00 + r and r * 2654435761,
# at 2026-01-01 00:00 UTC + r hours; p10 3% below the median, p90 4% above.
lines = h["shown"]["text"].split("\n")
commit = "%08x%032x" % (0xc0ffee00 + 20, (20 * 2654435761) % 2**32)
assert lines[:4] == ["machine-A", "commit " + commit,
                     "2026-01-01 20:00 UTC", "host -, kernel -"], lines
m = re.fullmatch(r"median ([0-9.]+) us", lines[4])
r = re.fullmatch(r"p10-p90 ([0-9.]+) us - ([0-9.]+) us", lines[5])
med, p10, p90 = float(m.group(1)), float(r.group(1)), float(r.group(2))
assert 3.9 < med < 4.1, med
assert abs(p10 / med - 0.97) < 0.001 and abs(p90 / med - 1.04) < 0.001, lines
assert lines[6] == "count 20", lines
EOF2

# A screenshot that is not blank: many colours, a good share of pixels
# not the background.
"$py" - "$dir/small/page.png" <<'EOF' || fail "the screenshot"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, head = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR":
        head = struct.unpack(">IIBBBBB", data[pos + 8:pos + 21])
    elif kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
w, h, depth, colour = head[:4]
assert depth == 8 and colour in (2, 6), head
bpp = 3 if colour == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
rows, prev = [], bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(
        raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else
                                  b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
pixels = [r[i:i + 3] for r in rows[::4] for i in range(0, stride, bpp * 4)]
background = max(set(pixels), key=pixels.count)
colours = len(set(pixels))
other = sum(p != background for p in pixels) / len(pixels)
print("screenshot: %dx%d, %d colours, %.0f%% not background" %
      (w, h, colours, 100 * other))
assert colours > 50 and other > 0.2, (colours, other)
EOF

# 2,000 series x 500 runs: under 20 MB in all; its first charts drawn.
mkdir "$dir/big" &&
"$HOSTRANGE_TEST_PAGEGEN" -c 1000 -m 2 -r 500 -o "$dir/big" > /dev/null ||
    fail "pagegen of the large page"
size=$(cat "$dir/big/index.html" "$dir/big/data/"*.js | wc -c)
echo "2,000 series x 500 runs: $size bytes"
[ "$size" -lt 20000000 ] || fail "the large page is $size bytes"
check "$dir/big/index.html" "$dir/big-seen" ||
    fail "chromium on the large page"
[ "$(cat "$dir/big-seen/console.json")" = "[]" ] ||
    fail "console messages (large): $(cat "$dir/big-seen/console.json")"
ms=$(grep -o 'data-drawn-ms="[0-9]*"' "$dir/big-seen/dom.html" | tr -dc 0-9)
[ -n "$ms" ] || fail "the large page drew no chart"
echo "the large page's first charts drawn after $ms ms"
echo "PASS"
