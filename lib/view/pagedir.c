/* The history page as a directory: index.html and its chunks (see
 * pagedir.h). */
#include "config.h"

#include "lib/view/pagedir.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "lib/view/page_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The height a chart takes on the page, px, for a chunk's room before it
 * is loaded. */
#define CHART_HEIGHT 264

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

void hrv_page_chunk_begin(FILE *f, size_t chunk)
{
    fprintf(f, "hrChunk(%zu,[", chunk);
}

void hrv_page_chunk_chart(FILE *f, size_t i, const struct hrv_page_line *l,
                          size_t n)
{
    fputs(i ? ",\n[" : "\n[", f);
    for (size_t j = 0; j < n; j++) {
        fputs(j ? "," : "", f);
        hrv_page_line(f, l[j].machine, l[j].run, l[j].points, l[j].n);
    }
    fputc(']', f);
}

int hrv_page_chunk_end(FILE *f)
{
    fputs("]);\n", f);
    return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

static void number(FILE *f, double v)
{
    char buf[32];

    hrv_format_number(buf, sizeof buf, v);
    fputs(buf, f);
}

/* The parts of chart c: node, phase, range, op, backend, metric. */
static void parts(const struct hrv_page_dir *d, size_t c, const char *p[6])
{
    const char *const *k = d->kinds[d->charts[2 * c + 1]];

    p[0] = str(d->nodes[d->charts[2 * c]]);
    for (int i = 0; i < 5; i++)
        p[i + 1] = str(k[i]);
}

/* A finding's chart, drawn when it comes into view: its figure, named as
 * the script names the others (data-name), its caption the node, phase
 * and range. */
static void figure(FILE *f, const struct hrv_page_dir *d, size_t c,
                   int start)
{
    const char *p[6];
    int op;

    parts(d, c, p);
    op = p[3][0] != '\0' || p[4][0] != '\0';
    fprintf(f, "<figure class=\"chart%s\" data-chart=\"%zu\" data-name=\"",
            start ? " most" : "", c);
    for (int i = 0; i < 3; i++) {
        hrv_html_escape(f, p[i]);
        fputc(' ', f);
    }
    if (op) {
        fputc('(', f);
        hrv_html_escape(f, p[3]);
        fputc('/', f);
        hrv_html_escape(f, p[4]);
        fputs(") ", f);
    }
    hrv_html_escape(f, p[5]);
    fputs("\"><figcaption>", f);
    hrv_html_name(f, p[0]);
    fputs(" &#183; ", f);
    hrv_html_name(f, p[1]);
    fputs(" &#183; ", f);
    hrv_html_name(f, p[2]);
    if (op) {
        fputs(" (", f);
        hrv_html_name(f, p[3]);
        fputc('/', f);
        hrv_html_name(f, p[4]);
        fputc(')', f);
    }
    fputs(" <span class=\"metric\">", f);
    hrv_html_name(f, p[5]);
    fputs("</span>", f);
    if (start)
        fputs("<span class=\"tag\">starts here</span>", f);
    fputs("</figcaption></figure>\n", f);
}

static void write_finding(FILE *f, const struct hrv_page_dir *d, size_t i)
{
    const struct hrv_page_finding *g = &d->findings[i];
    const struct hrv_page_run *r = g->run < d->nruns ? &d->runs[g->run]
                                                     : NULL;
    const char *p[6];
    size_t shown = g->ncharts < HRV_PAGE_FINDING_CHARTS
                       ? g->ncharts : HRV_PAGE_FINDING_CHARTS;

    fprintf(f, "<section class=\"group finding\" id=\"finding%zu\"><h2>"
            "finding %zu: %s by %+.1f%% on ", i + 1, i + 1,
            g->change > 0 ? "slower" : "faster", g->change);
    hrv_html_name(f, g->machine < d->nmachines ? str(d->machines[g->machine])
                                               : "");
    fputs(" at commit ", f);
    hrv_html_name(f, r != NULL && str(r->commit)[0] != '\0' ? r->commit
                                                             : "-");
    fputs(", starts in ", f);
    if (g->ncharts > 0) {
        parts(d, g->charts[0], p);
        for (int k = 0; k < 6; k++) {
            if (k == 3 || k == 4) /* operator and backend: in the caption */
                continue;
            fputs(k ? " " : "", f);
            hrv_html_name(f, p[k]);
        }
    }
    fprintf(f, "</h2><p class=\"summary\">%zu series of %zu %s, p=%.2g; "
            "the layer it starts in first, then what moved with it.</p>"
            "<div class=\"charts\">\n", g->nseries, g->nodes,
            g->nodes == 1 ? "node" : "nodes", g->p);
    for (size_t j = 0; j < shown; j++)
        figure(f, d, g->charts[j], j == 0);
    fputs("</div>", f);
    if (g->ncharts > shown)
        fprintf(f, "<p class=\"more\">%zu more charts of this finding are "
                "among the others below; the filter finds each.</p>",
                g->ncharts - shown);
    fputs("</section>\n", f);
}

static void write_body(FILE *f, const struct hrv_page_dir *d)
{
    size_t shown = d->nfindings < HRV_PAGE_FINDINGS_SHOWN
                       ? d->nfindings : HRV_PAGE_FINDINGS_SHOWN;

    fputs("<h1>", f);
    hrv_html_name(f, str(d->title));
    fprintf(f, "</h1>\n<p class=\"summary\">%zu %s over %zu series (",
            d->nfindings, d->nfindings == 1 ? "finding" : "findings",
            d->nseries);
    hrv_html_escape(f, str(d->rule));
    fprintf(f, "); %zu charts, %zu runs, %zu machine%s. Each finding "
            "first, with its charts: the layer its change starts in, then "
            "what moved with it; then every other chart, node by node, "
            "drawn as it comes into view. Each chart is one range of one "
            "node and phase: its median run by run (the band is p10 to "
            "p90), a line per machine; a change point of a finding is "
            "marked with its change.</p>\n<p><input id=\"filter\" "
            "type=\"search\" placeholder=\"find any chart by node, phase, "
            "range, metric\" aria-label=\"filter\"><span id=\"shown\">"
            "</span></p>\n<section id=\"findings\">\n", d->ncharts,
            d->nruns, d->nmachines, d->nmachines == 1 ? "" : "s");
    if (d->nfindings == 0)
        fputs("<p class=\"summary\">No findings.</p>\n", f);
    for (size_t i = 0; i < shown; i++)
        write_finding(f, d, i);
    if (d->nfindings > shown)
        fprintf(f, "<p class=\"more\">%zu more findings: history detect "
                "lists them all.</p>\n", d->nfindings - shown);
    fputs("</section>\n<section id=\"found\" hidden></section>\n"
          "<section id=\"rest\"><h2>Every other chart</h2>\n", f);
    for (size_t j = 0; j < d->nchunks; j++)
        fprintf(f, "<section class=\"chunk\" data-chunk=\"%zu\" "
                "style=\"min-height:%zupx\"></section>\n", j,
                (d->chunks[j + 1] - d->chunks[j]) * CHART_HEIGHT);
    fputs("</section>\n", f);
}

static void write_data(FILE *f, const struct hrv_page_dir *d)
{
    fputs("<script type=\"application/json\" id=\"hr-data\">{\"runs\":", f);
    hrv_page_runs(f, d->runs, d->nruns);
    fputs(",\"machines\":", f);
    hrv_page_strings(f, d->machines, d->nmachines);
    fputs(",\n\"names\":{\"nodes\":", f);
    hrv_page_strings(f, d->nodes, d->nnodes);
    fputs(",\n\"kinds\":[", f);
    for (size_t i = 0; i < d->nkinds; i++) {
        fputs(i ? "," : "", f);
        hrv_page_strings(f, d->kinds[i], 5);
    }
    fputs("],\n\"c\":[", f);
    for (size_t i = 0; i < 2 * d->ncharts; i++)
        fprintf(f, "%s%zu", i ? "," : "", d->charts[i]);
    fputs("]},\n\"chunks\":[", f);
    for (size_t j = 0; j <= d->nchunks; j++)
        fprintf(f, "%s%zu", j ? "," : "", d->chunks[j]);
    fputs("],\n\"changes\":[", f);
    for (size_t i = 0; i < d->nchanges; i++) {
        const struct hrv_page_change *c = &d->changes[i];

        fprintf(f, "%s[%zu,%zu,%zu,", i ? "," : "", c->chart, c->machine,
                c->run);
        number(f, c->before);
        fputc(',', f);
        number(f, c->after);
        fprintf(f, ",%.4g]", isfinite(c->change) ? c->change : 0);
    }
    fputs("]}</script>\n", f);
}

int hrv_page_dir_write(FILE *f, const struct hrv_page_dir *d)
{
    hrv_page_head(f, d->title);
    write_body(f, d);
    write_data(f, d);
    hrv_page_tail(f);
    return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
