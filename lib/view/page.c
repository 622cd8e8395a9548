/* The history page: one self-contained HTML file (see page.h). */
#include "config.h"

#include "lib/view/page.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "lib/view/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The page's style: a light page, charts in cards. */
static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 24px 48px;"
    "color:#1d232a;background:#f6f7f9}\n"
    "h1{font-size:20px;margin:18px 0 4px;overflow-wrap:anywhere}\n"
    "h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ccd;"
    "padding-bottom:4px;overflow-wrap:anywhere}\n"
    "bdi{unicode-bidi:isolate}\n"
    ".summary{color:#4a5560;margin:0 0 10px}\n"
    "#filter{font:inherit;width:28em;max-width:100%;padding:5px 8px;"
    "border:1px solid #aab;border-radius:4px}\n"
    "#shown{color:#4a5560;margin-left:10px}\n"
    ".charts{display:flex;flex-wrap:wrap;gap:14px}\n"
    "figure.chart{margin:0;background:#fff;border:1px solid #d5d9de;"
    "border-radius:6px;padding:8px 10px;width:740px;max-width:100%;"
    "min-height:250px;box-sizing:border-box}\n"
    "figure.chart.most{border:2px solid #c0392b}\n"
    "figcaption{font-weight:600;overflow-wrap:anywhere}\n"
    "figcaption .metric{font-weight:400;color:#4a5560}\n"
    "figcaption .change{float:right;font-weight:400}\n"
    "figcaption .tag{color:#c0392b;font-weight:600;margin-left:8px}\n"
    "svg{display:block;width:100%;height:auto}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#4a5560}\n"
    "svg .grid{stroke:#e3e6ea}\n"
    "svg .band{opacity:.15;stroke:none}\n"
    "svg .median{fill:none;stroke-width:1.5}\n"
    "svg .dots{fill:none;stroke-width:4;stroke-linecap:round}\n"
    "svg .steps{fill:none;stroke:#1d232a;stroke-width:1.5;"
    "stroke-dasharray:5 3}\n"
    "svg .cp circle{fill:#fff;stroke:#c0392b;stroke-width:2}\n"
    "svg .cp text{fill:#c0392b;font-weight:600}\n"
    "svg .hover{fill:none;stroke:#1d232a;stroke-width:1.5}\n"
    "svg .kernel line{stroke:#7f8c8d;stroke-width:1;stroke-dasharray:2 3}\n"
    "svg .kernel text{fill:#7f8c8d;font-size:10px}\n"
    ".legend{font-size:12px;color:#4a5560;overflow-wrap:anywhere}\n"
    ".legend span{margin-right:14px}\n"
    ".legend i{display:inline-block;width:14px;height:3px;"
    "vertical-align:middle;margin-right:4px}\n"
    "#tip{position:fixed;pointer-events:none;background:#1d232a;"
    "color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;"
    "white-space:pre-wrap;overflow-wrap:anywhere;max-width:40em;"
    "display:none;z-index:2}\n";

/* The page's script: draws each chart from the data, shows a point's
 * figures on hover, filters the charts by name. Written here, kept
 * readable; it loads nothing. */
static const char script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var data = JSON.parse(document.getElementById('hr-data').textContent);\n"
    "  var runs = data.runs, machines = data.machines;\n"
    "  var W = 720, H = 210, L = 66, R = 70, T = 14, B = 36;\n"
    "  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd',\n"
    "                 '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];\n"
    "\n"
    "  function colour(m) {\n"
    "    return m < palette.length ? palette[m]\n"
    "                              : 'hsl(' + (m * 137 % 360) + ',60%,40%)';\n"
    "  }\n"
    "  /* HTML text: the rule of hrd_html_escape (escape.h) for names the\n"
    "   * script writes; a name as element content goes in <bdi>. */\n"
    "  function esc(s) {\n"
    "    return String(s).replace(/[&<>\"']/g, function (c) {\n"
    "      return '&#' + c.charCodeAt(0) + ';';\n"
    "    });\n"
    "  }\n"
    "  function bdi(s) {\n"
    "    var e = document.createElement('bdi');\n"
    "    e.textContent = s;\n"
    "    return e;\n"
    "  }\n"
    "  function duration(ns) {\n"
    "    var a = Math.abs(ns);\n"
    "    if (a < 1e3) return ns.toFixed(1) + ' ns';\n"
    "    if (a < 1e6) return (ns / 1e3).toPrecision(4) + ' us';\n"
    "    if (a < 1e9) return (ns / 1e6).toPrecision(4) + ' ms';\n"
    "    return (ns / 1e9).toPrecision(4) + ' s';\n"
    "  }\n"
    "  function when(t) {\n"
    "    return new Date(t * 1000).toISOString().slice(0, 16)\n"
    "        .replace('T', ' ') + ' UTC';\n"
    "  }\n"
    "  function percent(p) { return (p > 0 ? '+' : '') + p.toFixed(1) + '%'; }\n"
    "\n"
    "  /* Point i of a line: its run and figures in ns (null: no median). */\n"
    "  function runOf(line, i) { return line.r ? line.r[i] : line.r0 + i; }\n"
    "  function point(line, i) {\n"
    "    var m = line.m[i];\n"
    "    if (m === null) return null;\n"
    "    return { run: runOf(line, i), median: m * line.u,\n"
    "             p10: (m - line.lo[i]) * line.u,\n"
    "             p90: (m + line.hi[i]) * line.u,\n"
    "             count: Array.isArray(line.n) ? line.n[i] : line.n };\n"
    "  }\n"
    "\n"
    "  /* The scales of a chart: runs to x, nanoseconds to y. */\n"
    "  function scales(chart) {\n"
    "    var lo = Infinity, hi = -Infinity, r0 = Infinity, r1 = -Infinity;\n"
    "    chart.lines.forEach(function (line) {\n"
    "      for (var i = 0; i < line.m.length; i++) {\n"
    "        var p = point(line, i);\n"
    "        if (p === null) continue;\n"
    "        lo = Math.min(lo, p.p10);\n"
    "        hi = Math.max(hi, p.p90);\n"
    "        r0 = Math.min(r0, p.run);\n"
    "        r1 = Math.max(r1, p.run);\n"
    "      }\n"
    "    });\n"
    "    if (!(hi >= lo)) { lo = 0; hi = 1; r0 = 0; r1 = 1; }\n"
    "    var pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;\n"
    "    lo = Math.max(0, lo - pad);\n"
    "    hi += pad;\n"
    "    return {\n"
    "      r0: r0, r1: r1, lo: lo, hi: hi,\n"
    "      x: function (run) {\n"
    "        return L + (r1 > r0 ? (run - r0) / (r1 - r0) : 0.5) * (W - L - R);\n"
    "      },\n"
    "      y: function (v) { return T + (1 - (v - lo) / (hi - lo)) * (H - T - B); }\n"
    "    };\n"
    "  }\n"
    "\n"
    "  /* The axes: four levels of y, up to six runs on x by short commit. */\n"
    "  function axes(s) {\n"
    "    var out = [], i;\n"
    "    for (i = 0; i <= 3; i++) {\n"
    "      var v = s.lo + (s.hi - s.lo) * i / 3, y = s.y(v).toFixed(1);\n"
    "      out.push('<line class=\"grid\" x1=\"' + L + '\" x2=\"' + (W - R) +\n"
    "               '\" y1=\"' + y + '\" y2=\"' + y + '\"/>');\n"
    "      out.push('<text x=\"' + (L - 6) + '\" y=\"' + y +\n"
    "               '\" text-anchor=\"end\" dy=\"4\">' + duration(v) + '</text>');\n"
    "    }\n"
    "    var n = Math.min(6, s.r1 - s.r0 + 1);\n"
    "    for (i = 0; i < n; i++) {\n"
    "      var run = n > 1 ? Math.round(s.r0 + (s.r1 - s.r0) * i / (n - 1)) : s.r0;\n"
    "      out.push('<text class=\"commit\" x=\"' + s.x(run).toFixed(1) + '\" y=\"' +\n"
    "               (H - B + 16) + '\" text-anchor=\"middle\">' +\n"
    "               esc(runs.c[run].slice(0, 10)) + '</text>');\n"
    "    }\n"
    "    return out.join('');\n"
    "  }\n"
    "\n"
    "  /* One machine's line: its p10-p90 band, median, points, the\n"
    "   * segments as steps and each change point marked with its change. */\n"
    "  function line(s, l) {\n"
    "    var up = [], down = [], med = [], dots = [], steps = [], marks = [];\n"
    "    var c = colour(l.machine), i, last = null;\n"
    "    for (i = 0; i < l.m.length; i++) {\n"
    "      var p = point(l, i);\n"
    "      if (p === null) continue;\n"
    "      var x = s.x(p.run).toFixed(1), y = s.y(p.median).toFixed(1);\n"
    "      /* A new kernel under the line: marked where it starts. */\n"
    "      if (last !== null && runs.k[p.run] !== runs.k[last]) {\n"
    "        var was = runs.k[last] || 'unknown', now = runs.k[p.run] || 'unknown';\n"
    "        marks.push('<g class=\"kernel\" data-run=\"' + p.run + '\"><title>' +\n"
    "                   esc('kernel ' + was + ' \u2192 ' + now) +\n"
    "                   '</title><line x1=\"' + x + '\" x2=\"' + x + '\" y1=\"' + T +\n"
    "                   '\" y2=\"' + (H - B) + '\"/><text x=\"' + x + '\" y=\"' +\n"
    "                   (T + 8) + '\" text-anchor=\"middle\">kernel</text></g>');\n"
    "      }\n"
    "      last = p.run;\n"
    "      med.push((med.length ? 'L' : 'M') + x + ' ' + y);\n"
    "      dots.push('M' + x + ' ' + y + 'h0');\n"
    "      up.push(x + ' ' + s.y(p.p90).toFixed(1));\n"
    "      down.unshift(x + ' ' + s.y(p.p10).toFixed(1));\n"
    "    }\n"
    "    l.s.forEach(function (seg, k) {\n"
    "      var x0 = s.x(runOf(l, seg[0])), x1 = s.x(runOf(l, seg[1]));\n"
    "      var y = s.y(seg[2] * l.u);\n"
    "      if (k > 0)\n"
    "        steps.push('H' + x0.toFixed(1) + 'V' + y.toFixed(1));\n"
    "      else\n"
    "        steps.push('M' + x0.toFixed(1) + ' ' + y.toFixed(1));\n"
    "      steps.push('H' + x1.toFixed(1));\n"
    "      if (k > 0 && seg[3] !== null) {\n"
    "        var run = runOf(l, seg[0]);\n"
    "        marks.push('<g class=\"cp\" data-run=\"' + run +\n"
    "                   '\" data-commit=\"' + esc(runs.c[run]) +\n"
    "                   '\" data-change=\"' + seg[3] + '\"><circle cx=\"' +\n"
    "                   x0.toFixed(1) + '\" cy=\"' + y.toFixed(1) +\n"
    "                   '\" r=\"4.5\"/><text x=\"' + (x0 + 7).toFixed(1) +\n"
    "                   '\" y=\"' + (y - 7).toFixed(1) + '\">' +\n"
    "                   percent(seg[3]) + '</text></g>');\n"
    "      }\n"
    "    });\n"
    "    return '<g class=\"line\" data-machine=\"' + esc(machines[l.machine]) +\n"
    "           '\">' +\n"
    "           (up.length ? '<path class=\"band\" fill=\"' + c + '\" d=\"M' +\n"
    "                        up.concat(down).join('L') + 'Z\"/>' : '') +\n"
    "           '<path class=\"median\" stroke=\"' + c + '\" d=\"' +\n"
    "           med.join('') + '\"/><path class=\"dots\" stroke=\"' + c +\n"
    "           '\" d=\"' + dots.join('') + '\"/>' +\n"
    "           (steps.length ? '<path class=\"steps\" d=\"' + steps.join('') +\n"
    "                           '\"/>' : '') + marks.join('') + '</g>';\n"
    "  }\n"
    "\n"
    "  function draw(fig) {\n"
    "    var chart = data.charts[+fig.getAttribute('data-chart')];\n"
    "    var s = scales(chart);\n"
    "    var svg = '<svg viewBox=\"0 0 ' + W + ' ' + H + '\" role=\"img\">' +\n"
    "              axes(s) + chart.lines.map(function (l) {\n"
    "                return line(s, l);\n"
    "              }).join('') + '</svg>';\n"
    "    var legend = chart.lines.map(function (l) {\n"
    "      return '<span><i style=\"background:' + colour(l.machine) +\n"
    "             '\"></i><bdi>' + esc(machines[l.machine]) + '</bdi></span>';\n"
    "    }).join('');\n"
    "    fig.insertAdjacentHTML('beforeend', svg + '<div class=\"legend\">' +\n"
    "                           legend + '</div>');\n"
    "    fig.hrScales = s;\n"
    "  }\n"
    "\n"
    "  /* Hover: the point nearest the pointer, on the nearest line. */\n"
    "  var tip = document.getElementById('tip');\n"
    "  function hover(ev) {\n"
    "    var svg = ev.currentTarget, fig = svg.parentNode, s = fig.hrScales;\n"
    "    var chart = data.charts[+fig.getAttribute('data-chart')];\n"
    "    var box = svg.getBoundingClientRect();\n"
    "    var px = (ev.clientX - box.left) * W / box.width;\n"
    "    var py = (ev.clientY - box.top) * H / box.height;\n"
    "    var best = null, bestD = Infinity;\n"
    "    chart.lines.forEach(function (l) {\n"
    "      for (var i = 0; i < l.m.length; i++) {\n"
    "        var p = point(l, i);\n"
    "        if (p === null) continue;\n"
    "        var dx = s.x(p.run) - px, dy = s.y(p.median) - py;\n"
    "        var d = dx * dx + dy * dy / 16;\n"
    "        if (d < bestD) { bestD = d; best = { l: l, p: p }; }\n"
    "      }\n"
    "    });\n"
    "    var ring = svg.querySelector('.hover');\n"
    "    if (best === null) return;\n"
    "    if (ring === null) {\n"
    "      ring = document.createElementNS('http://www.w3.org/2000/svg',\n"
    "                                      'circle');\n"
    "      ring.setAttribute('class', 'hover');\n"
    "      ring.setAttribute('r', '6');\n"
    "      svg.appendChild(ring);\n"
    "    }\n"
    "    ring.setAttribute('cx', s.x(best.p.run));\n"
    "    ring.setAttribute('cy', s.y(best.p.median));\n"
    "    tip.replaceChildren(bdi(machines[best.l.machine]), '\\ncommit ',\n"
    "        bdi(runs.c[best.p.run]), '\\n' + when(runs.t[best.p.run]) +\n"
    "        '\\nhost ', bdi(runs.h[best.p.run] || '-'), ', kernel ',\n"
    "        bdi(runs.k[best.p.run] || '-'),\n"
    "        '\\nmedian ' + duration(best.p.median) + '\\np10-p90 ' +\n"
    "        duration(best.p.p10) + ' - ' + duration(best.p.p90) +\n"
    "        '\\ncount ' + best.p.count);\n"
    "    tip.style.display = 'block';\n"
    "    tip.style.left = Math.min(ev.clientX + 14,\n"
    "                              window.innerWidth - tip.offsetWidth - 4) + 'px';\n"
    "    tip.style.top = (ev.clientY + 14) + 'px';\n"
    "  }\n"
    "  function leave(ev) {\n"
    "    var ring = ev.currentTarget.querySelector('.hover');\n"
    "    if (ring !== null) ring.remove();\n"
    "    tip.style.display = 'none';\n"
    "  }\n"
    "\n"
    "  /* The filter: every word typed must be in a chart's name. */\n"
    "  var figures = Array.prototype.slice.call(\n"
    "      document.querySelectorAll('figure.chart'));\n"
    "  var shown = document.getElementById('shown');\n"
    "  function filter() {\n"
    "    var words = document.getElementById('filter').value.toLowerCase()\n"
    "        .split(/\\s+/).filter(Boolean), n = 0;\n"
    "    figures.forEach(function (fig) {\n"
    "      var name = fig.getAttribute('data-name').toLowerCase();\n"
    "      fig.hidden = !words.every(function (w) {\n"
    "        return name.indexOf(w) >= 0;\n"
    "      });\n"
    "      n += !fig.hidden;\n"
    "    });\n"
    "    document.querySelectorAll('section.group').forEach(function (sec) {\n"
    "      sec.hidden = sec.querySelector('figure.chart:not([hidden])') === null;\n"
    "    });\n"
    "    shown.textContent = n + ' of ' + figures.length + ' charts';\n"
    "  }\n"
    "\n"
    "  /* A chart is drawn when it comes near the window: a page of\n"
    "   * thousands opens as fast as one of a few. */\n"
    "  var first = true;\n"
    "  var near = new IntersectionObserver(function (entries) {\n"
    "    entries.forEach(function (e) {\n"
    "      if (!e.isIntersecting) return;\n"
    "      near.unobserve(e.target);\n"
    "      draw(e.target);\n"
    "      var svg = e.target.querySelector('svg');\n"
    "      svg.addEventListener('mousemove', hover);\n"
    "      svg.addEventListener('mouseleave', leave);\n"
    "    });\n"
    "    if (first) {\n"
    "      /* When the first charts were drawn, in ms from the page's start\n"
    "       * (for its tests). */\n"
    "      document.documentElement.setAttribute('data-drawn-ms',\n"
    "          Math.round(performance.now()));\n"
    "      first = false;\n"
    "    }\n"
    "  }, { rootMargin: '600px' });\n"
    "  figures.forEach(function (fig) { near.observe(fig); });\n"
    "  document.getElementById('filter').addEventListener('input', filter);\n"
    "  filter();\n"
    "})();\n";

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

/* A run of the history: a commit at a time. */
struct run {
    int64_t time;
    const char *commit, *host, *kernel;
};

static int cmp_run(const void *pa, const void *pb)
{
    const struct run *a = pa, *b = pb;
    int c;

    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if ((c = strcmp(a->commit, b->commit)) != 0 ||
        (c = strcmp(a->host, b->host)) != 0)
        return c;
    return strcmp(a->kernel, b->kernel);
}

/* A chart: the series of one node, phase, range and metric. */
struct chart {
    const struct hrd_page_series *const *s; /* its n series, in order */
    size_t n;
    double change;        /* its largest relative step, % (signed) */
    double group_change;  /* the largest |change| of its node and phase */
};

/* What the writer works out before writing. */
struct layout {
    const struct hrd_page *p;
    struct run *runs;     /* distinct, in time order */
    size_t nruns;
    const char **machines;
    size_t nmachines;
    const struct hrd_page_series **order; /* the series, grouped by chart */
    struct chart *charts;
    size_t ncharts;
};

static int cmp_key(const struct hrd_page_series *a,
                   const struct hrd_page_series *b, int with_range)
{
    int c;

    if ((c = strcmp(str(a->node), str(b->node))) != 0 ||
        (c = strcmp(str(a->phase), str(b->phase))) != 0)
        return c;
    if (!with_range)
        return 0;
    if ((c = strcmp(str(a->range), str(b->range))) != 0 ||
        (c = strcmp(str(a->op), str(b->op))) != 0 ||
        (c = strcmp(str(a->backend), str(b->backend))) != 0)
        return c;
    return strcmp(str(a->metric), str(b->metric));
}

/* Series by chart, then machine, then their place in the model. */
static int cmp_series(const void *pa, const void *pb)
{
    typedef const struct hrd_page_series *const *ref;
    const struct hrd_page_series *a = *(ref)pa, *b = *(ref)pb;
    int c = cmp_key(a, b, 1);

    if (c != 0)
        return c;
    if ((c = strcmp(str(a->machine), str(b->machine))) != 0)
        return c;
    return a < b ? -1 : a > b;
}

/* Charts: node and phase by their largest change, then the charts of one
 * by theirs, most first; ties by name. */
static int cmp_chart(const void *pa, const void *pb)
{
    const struct chart *a = pa, *b = pb;
    const struct hrd_page_series *x = a->s[0], *y = b->s[0];
    int c;

    if (a->group_change != b->group_change)
        return a->group_change > b->group_change ? -1 : 1;
    if ((c = cmp_key(x, y, 0)) != 0)
        return c;
    if (fabs(a->change) != fabs(b->change))
        return fabs(a->change) > fabs(b->change) ? -1 : 1;
    return cmp_key(x, y, 1);
}

/* The largest relative step between consecutive segments of s, in %
 * (signed), or 0. */
static double series_change(const struct hrd_page_series *s)
{
    double best = 0;

    for (size_t k = 1; k < s->nsegments; k++) {
        double a = s->segments[k - 1].median, b = s->segments[k].median;
        double c = a > 0 ? 100 * (b - a) / a : 0;

        if (isfinite(c) && fabs(c) > fabs(best))
            best = c;
    }
    return best;
}

static void layout_fini(struct layout *l)
{
    free(l->runs);
    free(l->machines);
    free(l->order);
    free(l->charts);
}

/* Works out the runs, machines and charts of p. Returns 0 or -ENOMEM. */
static int layout_init(struct layout *l, const struct hrd_page *p)
{
    size_t npoints = 0, n;

    memset(l, 0, sizeof *l);
    l->p = p;
    for (size_t i = 0; i < p->n; i++)
        npoints += p->series[i].npoints;
    l->runs = malloc((npoints + 1) * sizeof *l->runs);
    l->machines = malloc((p->n + 1) * sizeof *l->machines);
    l->order = malloc((p->n + 1) * sizeof *l->order);
    l->charts = malloc((p->n + 1) * sizeof *l->charts);
    if (l->runs == NULL || l->machines == NULL || l->order == NULL ||
        l->charts == NULL) {
        layout_fini(l);
        return -ENOMEM;
    }
    n = 0;
    for (size_t i = 0; i < p->n; i++) {
        for (size_t j = 0; j < p->series[i].npoints; j++)
            l->runs[n++] = (struct run){ p->series[i].points[j].time,
                                         str(p->series[i].points[j].commit),
                                         str(p->series[i].points[j].host),
                                         str(p->series[i].points[j].kernel) };
    }
    qsort(l->runs, n, sizeof *l->runs, cmp_run);
    for (size_t i = 0; i < n; i++) {
        if (l->nruns == 0 || cmp_run(&l->runs[l->nruns - 1], &l->runs[i]) != 0)
            l->runs[l->nruns++] = l->runs[i];
    }
    for (size_t i = 0; i < p->n; i++) {
        size_t m;

        for (m = 0; m < l->nmachines &&
                    strcmp(l->machines[m], str(p->series[i].machine)) != 0;
             m++)
            ;
        if (m == l->nmachines)
            l->machines[l->nmachines++] = str(p->series[i].machine);
        l->order[i] = &p->series[i];
    }
    qsort(l->order, p->n, sizeof *l->order, cmp_series);
    for (size_t i = 0; i < p->n;) {
        struct chart *c = &l->charts[l->ncharts++];

        c->s = &l->order[i];
        c->n = i;
        c->change = 0;
        for (; i < p->n && cmp_key(c->s[0], l->order[i], 1) == 0; i++) {
            double ch = series_change(l->order[i]);

            if (fabs(ch) > fabs(c->change))
                c->change = ch;
        }
        c->n = i - c->n;
    }
    for (size_t i = 0; i < l->ncharts;) {
        size_t j;
        double g = 0;

        for (j = i; j < l->ncharts &&
                    cmp_key(l->charts[i].s[0], l->charts[j].s[0], 0) == 0;
             j++)
            g = fmax(g, fabs(l->charts[j].change));
        for (; i < j; i++)
            l->charts[i].group_change = g;
    }
    qsort(l->charts, l->ncharts, sizeof *l->charts, cmp_chart);
    return 0;
}

/* The index of the run of point pt. */
static size_t run_index(const struct layout *l,
                        const struct hrd_page_point *pt)
{
    struct run key = { pt->time, str(pt->commit), str(pt->host),
                       str(pt->kernel) };
    const struct run *r = bsearch(&key, l->runs, l->nruns, sizeof *l->runs,
                                  cmp_run);

    return (size_t)(r - l->runs);
}

static void number(FILE *f, double v)
{
    char buf[32];

    hrd_format_number(buf, sizeof buf, v);
    fputs(buf, f);
}

/* v in units of u, rounded; 0 when not finite. */
static long long units(double v, double u)
{
    double q = v / u;

    return isfinite(q) ? llround(q) : 0;
}

/* Writes one series as a line of its chart's data. */
static void write_line(FILE *f, const struct layout *l,
                       const struct hrd_page_series *s)
{
    double top = 0, u;
    size_t m, r0;
    int contiguous = 1, same_count = 1;

    for (size_t i = 0; i < s->npoints; i++) {
        if (isfinite(s->points[i].p90))
            top = fmax(top, fabs(s->points[i].p90));
        if (isfinite(s->points[i].median))
            top = fmax(top, fabs(s->points[i].median));
    }
    /* Four significant digits of the largest value. */
    u = top > 0 ? pow(10, floor(log10(top)) - 3) : 1;
    for (m = 0; strcmp(l->machines[m], str(s->machine)) != 0; m++)
        ;
    r0 = s->npoints > 0 ? run_index(l, &s->points[0]) : 0;
    for (size_t i = 1; i < s->npoints; i++) {
        contiguous &= run_index(l, &s->points[i]) == r0 + i;
        same_count &= s->points[i].count == s->points[0].count;
    }
    fprintf(f, "{\"machine\":%zu,\"u\":", m);
    number(f, u);
    if (contiguous) {
        fprintf(f, ",\"r0\":%zu", r0);
    } else {
        fputs(",\"r\":[", f);
        for (size_t i = 0; i < s->npoints; i++)
            fprintf(f, "%s%zu", i ? "," : "", run_index(l, &s->points[i]));
        fputc(']', f);
    }
    fputs(",\"m\":[", f);
    for (size_t i = 0; i < s->npoints; i++) {
        if (isfinite(s->points[i].median))
            fprintf(f, "%s%lld", i ? "," : "", units(s->points[i].median, u));
        else
            fprintf(f, "%snull", i ? "," : "");
    }
    fputs("],\"lo\":[", f);
    for (size_t i = 0; i < s->npoints; i++) {
        long long d = units(s->points[i].median, u) -
                      units(s->points[i].p10, u);

        fprintf(f, "%s%lld", i ? "," : "", d > 0 ? d : 0);
    }
    fputs("],\"hi\":[", f);
    for (size_t i = 0; i < s->npoints; i++) {
        long long d = units(s->points[i].p90, u) -
                      units(s->points[i].median, u);

        fprintf(f, "%s%lld", i ? "," : "", d > 0 ? d : 0);
    }
    fputs("],\"n\":", f);
    if (same_count && s->npoints > 0) {
        fprintf(f, "%llu", (unsigned long long)s->points[0].count);
    } else {
        fputc('[', f);
        for (size_t i = 0; i < s->npoints; i++)
            fprintf(f, "%s%llu", i ? "," : "",
                    (unsigned long long)s->points[i].count);
        fputc(']', f);
    }
    /* Segments: [first, last, median in units, change from the previous
     * segment in % or null]. */
    fputs(",\"s\":[", f);
    for (size_t k = 0, written = 0; k < s->nsegments; k++) {
        const struct hrd_page_segment *g = &s->segments[k];

        if (g->first > g->last || g->last >= s->npoints ||
            !isfinite(g->median))
            continue;
        fprintf(f, "%s[%zu,%zu,", written++ ? "," : "", g->first, g->last);
        number(f, g->median / u);
        fputc(',', f);
        if (k > 0 && s->segments[k - 1].median > 0 &&
            isfinite(g->median))
            fprintf(f, "%.4g", 100 * (g->median - s->segments[k - 1].median) /
                                   s->segments[k - 1].median);
        else
            fputs("null", f);
        fputc(']', f);
    }
    fputs("]}", f);
}

static int has_op(const struct hrd_page_series *s)
{
    return str(s->op)[0] != '\0' || str(s->backend)[0] != '\0';
}

/* The name of chart c as one line: "node phase range (op/backend)
 * metric". */
static void chart_name(FILE *f, const struct hrd_page_series *s)
{
    hrd_html_escape(f, str(s->node));
    fputc(' ', f);
    hrd_html_escape(f, str(s->phase));
    fputc(' ', f);
    hrd_html_escape(f, str(s->range));
    if (has_op(s)) {
        fputs(" (", f);
        hrd_html_escape(f, str(s->op));
        fputc('/', f);
        hrd_html_escape(f, str(s->backend));
        fputc(')', f);
    }
    fputc(' ', f);
    hrd_html_escape(f, str(s->metric));
}

static void write_body(FILE *f, const struct layout *l)
{
    const struct hrd_page *p = l->p;
    const struct hrd_page_series *prev = NULL;

    fputs("<h1>", f);
    hrd_html_name(f, str(p->title));
    fprintf(f, "</h1>\n<p class=\"summary\">%zu charts of %zu series, %zu "
            "runs, %zu machine%s. Each chart is one range of one node and "
            "phase: its median run by run (the band is p10 to p90), the "
            "segments found as dashed steps, each change point marked with "
            "its change. Most changed first.</p>\n<p><input id=\"filter\" "
            "type=\"search\" placeholder=\"filter by node, phase, range, "
            "metric\" aria-label=\"filter\"><span id=\"shown\"></span></p>\n",
            l->ncharts, p->n, l->nruns, l->nmachines,
            l->nmachines == 1 ? "" : "s");
    for (size_t c = 0; c < l->ncharts; c++) {
        const struct chart *ch = &l->charts[c];
        const struct hrd_page_series *s = ch->s[0];

        if (prev == NULL || cmp_key(prev, s, 0) != 0) {
            fputs(prev == NULL ? "" : "</div></section>\n", f);
            fputs("<section class=\"group\"><h2>", f);
            hrd_html_name(f, str(s->node));
            fputs(" &#183; ", f);
            hrd_html_name(f, str(s->phase));
            fputs("</h2><div class=\"charts\">\n", f);
        }
        prev = s;
        fprintf(f, "<figure class=\"chart%s\" id=\"c%zu\" data-chart=\"%zu\" "
                "data-change=\"%.4g\" data-name=\"", c == 0 ? " most" : "", c,
                c, ch->change);
        chart_name(f, s);
        fputs("\"><figcaption>", f);
        hrd_html_name(f, str(s->range));
        if (has_op(s)) {
            fputs(" (", f);
            hrd_html_name(f, str(s->op));
            fputc('/', f);
            hrd_html_name(f, str(s->backend));
            fputc(')', f);
        }
        fputs(" <span class=\"metric\">", f);
        hrd_html_name(f, str(s->metric));
        fputs("</span>", f);
        if (c == 0 && ch->change != 0)
            fputs("<span class=\"tag\">most changed</span>", f);
        if (ch->change != 0)
            fprintf(f, "<span class=\"change\">largest step %+.1f%%</span>",
                    ch->change);
        fputs("</figcaption></figure>\n", f);
    }
    if (prev != NULL)
        fputs("</div></section>\n", f);
}

static void write_data(FILE *f, const struct layout *l)
{
    fputs("<script type=\"application/json\" id=\"hr-data\">{\"runs\":"
          "{\"c\":[", f);
    for (size_t i = 0; i < l->nruns; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, l->runs[i].commit);
    }
    fputs("],\"t\":[", f);
    for (size_t i = 0; i < l->nruns; i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)l->runs[i].time);
    fputs("],\"h\":[", f);
    for (size_t i = 0; i < l->nruns; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, l->runs[i].host);
    }
    fputs("],\"k\":[", f);
    for (size_t i = 0; i < l->nruns; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, l->runs[i].kernel);
    }
    fputs("]},\"machines\":[", f);
    for (size_t i = 0; i < l->nmachines; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, l->machines[i]);
    }
    fputs("],\"charts\":[\n", f);
    for (size_t c = 0; c < l->ncharts; c++) {
        const struct chart *ch = &l->charts[c];

        fputs(c ? ",\n{\"lines\":[" : "{\"lines\":[", f);
        for (size_t i = 0; i < ch->n; i++) {
            fputs(i ? "," : "", f);
            write_line(f, l, ch->s[i]);
        }
        fputs("]}", f);
    }
    fputs("]}</script>\n", f);
}

int hrd_page_write(FILE *f, const struct hrd_page *p)
{
    struct layout l;
    int rc = layout_init(&l, p);

    if (rc != 0)
        return rc;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "\n<meta name=\"viewport\" content=\"width=device-width\">\n"
          "<title>", f);
    hrd_html_escape(f, str(p->title));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head><body>\n", style);
    write_body(f, &l);
    fputs("<div id=\"tip\"></div>\n", f);
    write_data(f, &l);
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", script);
    layout_fini(&l);
    if (fflush(f) != 0 || ferror(f))
        return -EIO;
    return 0;
}
