/* The history page: one self-contained HTML file (see page.h). */
#include "config.h"

#include "lib/view/page.h"
#include "lib/view/page_impl.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "lib/view/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

static int cmp_run(const void *pa, const void *pb)
{
    const struct hrd_page_run *a = pa, *b = pb;
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
    struct hrd_page_run *runs;     /* distinct, in time order */
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
            l->runs[n++] = (struct hrd_page_run){ p->series[i].points[j].time,
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
    struct hrd_page_run key = { pt->time, str(pt->commit), str(pt->host),
                       str(pt->kernel) };
    const struct hrd_page_run *r = bsearch(&key, l->runs, l->nruns, sizeof *l->runs,
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

/* Point i's p10 (hi: p90) as its distance from the median, in units u
 * (0 at least). */
static long long distance(const struct hrd_page_point *pt, double u, int hi)
{
    long long d = hi ? units(pt->p90, u) - units(pt->median, u)
                     : units(pt->median, u) - units(pt->p10, u);

    return d > 0 ? d : 0;
}

/* The distances of pts[0..n) (distance), as an array, or as one number
 * when they are all the same (a series of one sample a run has no band). */
static void spread(FILE *f, const struct hrd_page_point *pts, size_t n,
                   double u, int hi)
{
    int same = 1;

    for (size_t i = 1; i < n && same; i++)
        same = distance(&pts[i], u, hi) == distance(&pts[0], u, hi);
    if (same && n > 0) {
        fprintf(f, "%lld", distance(&pts[0], u, hi));
        return;
    }
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%lld", i ? "," : "", distance(&pts[i], u, hi));
    fputc(']', f);
}

void hrd_page_line(FILE *f, size_t m, const size_t *run,
                   const struct hrd_page_point *pts, size_t n,
                   const struct hrd_page_segment *seg, size_t nseg)
{
    double top = 0, u;
    int contiguous = 1, same_count = 1;

    for (size_t i = 0; i < n; i++) {
        if (isfinite(pts[i].p90))
            top = fmax(top, fabs(pts[i].p90));
        if (isfinite(pts[i].median))
            top = fmax(top, fabs(pts[i].median));
    }
    /* Four significant digits of the largest value. */
    u = top > 0 ? pow(10, floor(log10(top)) - 3) : 1;
    for (size_t i = 1; i < n; i++) {
        contiguous &= run[i] == run[0] + i;
        same_count &= pts[i].count == pts[0].count;
    }
    fprintf(f, "{\"machine\":%zu,\"u\":", m);
    number(f, u);
    if (contiguous) {
        fprintf(f, ",\"r0\":%zu", n > 0 ? run[0] : 0);
    } else {
        fputs(",\"r\":[", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%zu", i ? "," : "", run[i]);
        fputc(']', f);
    }
    fputs(",\"m\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (isfinite(pts[i].median))
            fprintf(f, "%s%lld", i ? "," : "", units(pts[i].median, u));
        else
            fprintf(f, "%snull", i ? "," : "");
    }
    fputs("],\"lo\":", f);
    spread(f, pts, n, u, 0);
    fputs(",\"hi\":", f);
    spread(f, pts, n, u, 1);
    fputs(",\"n\":", f);
    if (same_count && n > 0) {
        fprintf(f, "%llu", (unsigned long long)pts[0].count);
    } else {
        fputc('[', f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%llu", i ? "," : "",
                    (unsigned long long)pts[i].count);
        fputc(']', f);
    }
    if (seg == NULL) {
        fputc('}', f);
        return;
    }
    fputs(",\"s\":[", f);
    for (size_t k = 0, written = 0; k < nseg; k++) {
        const struct hrd_page_segment *g = &seg[k];

        if (g->first > g->last || g->last >= n || !isfinite(g->median))
            continue;
        fprintf(f, "%s[%zu,%zu,", written++ ? "," : "", g->first, g->last);
        number(f, g->median / u);
        fputc(',', f);
        if (k > 0 && seg[k - 1].median > 0)
            fprintf(f, "%.4g", 100 * (g->median - seg[k - 1].median) /
                                   seg[k - 1].median);
        else
            fputs("null", f);
        fputc(']', f);
    }
    fputs("]}", f);
}

/* Writes one series as a line of its chart's data. Returns 0 or
 * -ENOMEM. */
static int write_line(FILE *f, const struct layout *l,
                      const struct hrd_page_series *s)
{
    size_t m, *run = malloc((s->npoints + 1) * sizeof *run);

    if (run == NULL)
        return -ENOMEM;
    for (m = 0; strcmp(l->machines[m], str(s->machine)) != 0; m++)
        ;
    for (size_t i = 0; i < s->npoints; i++)
        run[i] = run_index(l, &s->points[i]);
    hrd_page_line(f, m, run, s->points, s->npoints, s->segments,
                  s->nsegments);
    free(run);
    return 0;
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

void hrd_page_runs(FILE *f, const struct hrd_page_run *runs, size_t n)
{
    fputs("{\"c\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, str(runs[i].commit));
    }
    fputs("],\"t\":[", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%lld", i ? "," : "", (long long)runs[i].time);
    fputs("],\"h\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, str(runs[i].host));
    }
    fputs("],\"k\":[", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, str(runs[i].kernel));
    }
    fputs("]}", f);
}

void hrd_page_strings(FILE *f, const char *const *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", f);
        hrd_json_string_html(f, str(v[i]));
    }
    fputc(']', f);
}

void hrd_page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "\n<meta name=\"viewport\" content=\"width=device-width\">\n"
          "<title>", f);
    hrd_html_escape(f, str(title));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head><body>\n",
            hrd_page_style);
}

void hrd_page_tail(FILE *f)
{
    fprintf(f, "<div id=\"tip\"></div>\n<script>\n%s</script>\n"
            "</body></html>\n", hrd_page_script);
}

/* The data: runs, machines and every chart's lines. Returns 0 or
 * -ENOMEM. */
static int write_data(FILE *f, const struct layout *l)
{
    int rc = 0;

    fputs("<script type=\"application/json\" id=\"hr-data\">{\"runs\":", f);
    hrd_page_runs(f, l->runs, l->nruns);
    fputs(",\"machines\":", f);
    hrd_page_strings(f, l->machines, l->nmachines);
    fputs(",\"charts\":[\n", f);
    for (size_t c = 0; rc == 0 && c < l->ncharts; c++) {
        const struct chart *ch = &l->charts[c];

        fputs(c ? ",\n{\"lines\":[" : "{\"lines\":[", f);
        for (size_t i = 0; rc == 0 && i < ch->n; i++) {
            fputs(i ? "," : "", f);
            rc = write_line(f, l, ch->s[i]);
        }
        fputs("]}", f);
    }
    fputs("]}</script>\n", f);
    return rc;
}

int hrd_page_write(FILE *f, const struct hrd_page *p)
{
    struct layout l;
    int rc = layout_init(&l, p);

    if (rc != 0)
        return rc;
    hrd_page_head(f, p->title);
    write_body(f, &l);
    rc = write_data(f, &l);
    hrd_page_tail(f);
    layout_fini(&l);
    if (rc != 0)
        return rc;
    if (fflush(f) != 0 || ferror(f))
        return -EIO;
    return 0;
}
