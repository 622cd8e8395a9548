/* A gate's result as JUnit XML and as Markdown (see gate.h). */
#include "config.h"

#include "lib/view/gate.h"
#include "lib/view/report.h"
#include "lib/view/svg.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const char *s)
{
    return s != NULL ? s : "";
}

void hrv_gate_count(const struct hrv_gate *g, struct hrv_gate_counts *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < g->n; i++) {
        const struct hrv_gate_row *r = &g->rows[i];

        if (r->fail)
            c->fail++;
        else if (r->warn)
            c->warn++;
        else if (r->not_judged)
            c->not_judged++;
        else if (r->undecided)
            c->undecided++;
        else if (r->verdict == HRV_GATE_SLOWER)
            c->slower++;
        else if (r->verdict == HRV_GATE_FASTER)
            c->faster++;
        else if (r->verdict == HRV_GATE_ONLY)
            c->only++;
        else
            c->unchanged++;
    }
}

/* A duration of ns nanoseconds for people: "812.0 ns", "3.25 us", "-". */
static void duration(char *buf, size_t len, double ns)
{
    double a = fabs(ns);

    if (!isfinite(ns))
        snprintf(buf, len, "-");
    else if (a < 1e3)
        snprintf(buf, len, "%.1f ns", ns);
    else if (a < 1e6)
        snprintf(buf, len, "%.2f us", ns / 1e3);
    else if (a < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.2f s", ns / 1e9);
}

static void percent(char *buf, size_t len, double pct)
{
    if (isfinite(pct))
        snprintf(buf, len, "%+.1f%%", pct);
    else if (isnan(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%s", pct > 0 ? "+inf%" : "-inf%");
}

static void pvalue(char *buf, size_t len, double p)
{
    if (isnan(p))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2g", p);
}

/* The figures of a compared row, in words: "before 1.20 us, after 3.40 us,
 * change +183.3%, p 0.0001". */
static void figures(char *buf, size_t len, const struct hrv_gate_row *r)
{
    char b[32], a[32], c[32], p[32];

    duration(b, sizeof b, r->before);
    duration(a, sizeof a, r->after);
    percent(c, sizeof c, r->change);
    pvalue(p, sizeof p, r->p);
    snprintf(buf, len, "before %s, after %s, change %s, p %s", b, a, c, p);
}

/* ---- JUnit ------------------------------------------------------------ */

/* The testcase name of r: "warm backend.gemm self", with " (op/backend)"
 * when the key has them. */
static void junit_name(FILE *f, const struct hrv_gate_row *r)
{
    hrv_xml_escape(f, str(r->phase));
    fputc(' ', f);
    hrv_xml_escape(f, str(r->range));
    fputc(' ', f);
    hrv_xml_escape(f, str(r->metric));
    if (str(r->op)[0] != '\0' || str(r->backend)[0] != '\0') {
        fputs(" (", f);
        hrv_xml_escape(f, str(r->op));
        fputc('/', f);
        hrv_xml_escape(f, str(r->backend));
        fputc(')', f);
    }
    if (str(r->where)[0] != '\0') {
        fputc(' ', f);
        hrv_xml_escape(f, r->where);
    }
}

static void junit_case(FILE *f, const struct hrv_gate_row *r)
{
    char fig[192];

    fputs("    <testcase name=\"", f);
    junit_name(f, r);
    fputs("\" classname=\"", f);
    hrv_xml_escape(f, str(r->node));
    fputs("\" time=\"0\"", f);
    if (r->verdict == HRV_GATE_ONLY) {
        fputs(">\n      <skipped message=\"", f);
        hrv_xml_escape(f, r->reason != NULL ? r->reason : "in one run only");
        fputs("\"/>\n    </testcase>\n", f);
        return;
    }
    figures(fig, sizeof fig, r);
    if (r->undecided && !r->fail) {
        fprintf(f, ">\n      <skipped message=\"undecided after %zu pairs "
                "(%s)\"/>\n    </testcase>\n", r->pairs, fig);
        return;
    }
    if (r->not_judged && !r->fail) {
        char det[32];

        percent(det, sizeof det, r->detectable);
        fprintf(f, ">\n      <skipped message=\"" HRV_GATE_NOT_JUDGED
                ": detectable %s, limit %g%% (%s)\"/>\n    </testcase>\n",
                det, r->fail_pct, fig);
        return;
    }
    if (r->fail) {
        fprintf(f, ">\n      <failure type=\"slower\" message=\"slower than "
                "allowed: %s, threshold %g%%\">", fig, r->fail_pct);
        fprintf(f, "slower than allowed: %s, threshold %g%% (--fail-above)"
                "</failure>\n    </testcase>\n", fig, r->fail_pct);
        return;
    }
    if (r->warn)
        fprintf(f, ">\n      <system-out>warning: slower than the warning "
                "level: %s, threshold %g%% (--warn-above)</system-out>\n"
                "    </testcase>\n", fig, r->warn_pct);
    else if (r->verdict != HRV_GATE_UNCHANGED)
        fprintf(f, ">\n      <system-out>%s: %s</system-out>\n"
                "    </testcase>\n",
                r->verdict == HRV_GATE_SLOWER ? "slower" : "faster", fig);
    else
        fputs("/>\n", f);
}

/* A row's place: the index of the first row of its node, and its own. */
struct place {
    size_t first, idx;
};

static int cmp_place(const void *pa, const void *pb)
{
    const struct place *a = pa, *b = pb;

    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/*
 * The row indexes of g grouped by node (nodes in order of first
 * appearance, rows in report order within one), in *order (caller frees).
 * Returns 0 or -ENOMEM.
 */
static int group_by_node(const struct hrv_gate *g, size_t **order)
{
    size_t cap = 16, *slot, *idx;
    struct place *pl;

    while (cap < 2 * g->n)
        cap *= 2;
    pl = malloc((g->n + 1) * sizeof *pl);
    idx = malloc((g->n + 1) * sizeof *idx);
    slot = malloc(cap * sizeof *slot);
    if (pl == NULL || idx == NULL || slot == NULL) {
        free(pl);
        free(idx);
        free(slot);
        return -ENOMEM;
    }
    for (size_t i = 0; i < cap; i++)
        slot[i] = SIZE_MAX;
    for (size_t i = 0; i < g->n; i++) {
        const char *node = str(g->rows[i].node);
        size_t at = hash_str(node) & (cap - 1);

        while (slot[at] != SIZE_MAX &&
               strcmp(str(g->rows[slot[at]].node), node) != 0)
            at = (at + 1) & (cap - 1);
        if (slot[at] == SIZE_MAX)
            slot[at] = i;
        pl[i] = (struct place){ slot[at], i };
    }
    free(slot);
    qsort(pl, g->n, sizeof *pl, cmp_place);
    for (size_t i = 0; i < g->n; i++)
        idx[i] = pl[i].idx;
    free(pl);
    *order = idx;
    return 0;
}

static int finish(FILE *f)
{
    if (fflush(f) != 0 || ferror(f))
        return -EIO;
    return 0;
}

int hrv_gate_junit(FILE *f, const struct hrv_gate *g)
{
    struct hrv_gate_counts all;
    size_t *order;
    int rc = group_by_node(g, &order);

    if (rc != 0)
        return rc;
    hrv_gate_count(g, &all);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"",
          f);
    hrv_xml_escape(f, str(g->title));
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\" time=\"0\">\n", g->n, all.fail, all.only);
    for (size_t i = 0; i < g->n;) {
        const char *node = str(g->rows[order[i]].node);
        size_t end = i, fail = 0, only = 0;

        while (end < g->n &&
               strcmp(str(g->rows[order[end]].node), node) == 0) {
            fail += g->rows[order[end]].fail != 0;
            only += g->rows[order[end]].verdict == HRV_GATE_ONLY ||
                    ((g->rows[order[end]].not_judged ||
                      g->rows[order[end]].undecided) &&
                     !g->rows[order[end]].fail);
            end++;
        }
        fputs("  <testsuite name=\"", f);
        hrv_xml_escape(f, node);
        fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                "skipped=\"%zu\" time=\"0\">\n", end - i, fail, only);
        for (; i < end; i++)
            junit_case(f, &g->rows[order[i]]);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    free(order);
    return finish(f);
}

/* ---- Markdown --------------------------------------------------------- */

/* Worst first: failures, then warnings, then by change, largest first
 * (the most slowed down first, the most sped up last). */
static int cmp_worst(const void *pa, const void *pb)
{
    const struct hrv_gate_row *a = *(const struct hrv_gate_row *const *)pa;
    const struct hrv_gate_row *b = *(const struct hrv_gate_row *const *)pb;

    if (a->fail != b->fail)
        return a->fail ? -1 : 1;
    if (a->warn != b->warn)
        return a->warn ? -1 : 1;
    if (a->not_judged != b->not_judged)
        return a->not_judged ? 1 : -1;
    if (a->change != b->change)
        return a->change > b->change ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* "N keys WHAT" for the first part of the verdict, ", N WHAT" after it;
 * nothing for a zero count unless `always`. */
static void part(FILE *f, int *first, size_t n, const char *what, int always)
{
    if (n == 0 && !always)
        return;
    if (*first)
        fprintf(f, "%zu %s %s", n, n == 1 ? "key" : "keys", what);
    else
        fprintf(f, ", %zu %s", n, what);
    *first = 0;
}

/* The reasons of g's rows that were not judged, one line each under the
 * verdict, in the order they first appear: "not judged: 3 keys (no
 * history of this machine)". */
static void unjudged_lines(FILE *f, const struct hrv_gate *g)
{
    enum { MAX_REASONS = 16 };
    const char *reason[MAX_REASONS];
    size_t count[MAX_REASONS], n = 0, other = 0;
    const char *what = g->skipped != NULL ? g->skipped : "in one run only";

    for (size_t i = 0; i < g->n; i++) {
        const char *r = str(g->rows[i].reason);
        size_t k;

        if (g->rows[i].verdict != HRV_GATE_ONLY)
            continue;
        for (k = 0; k < n && strcmp(reason[k], r) != 0; k++)
            ;
        if (k == n && n == MAX_REASONS) {
            other++;
            continue;
        }
        if (k == n) {
            reason[n] = r;
            count[n++] = 0;
        }
        count[k]++;
    }
    for (size_t k = 0; k < n; k++) {
        fprintf(f, "\n%s: %zu %s (", what, count[k],
                count[k] == 1 ? "key" : "keys");
        hrv_md_escape(f, reason[k][0] != '\0' ? reason[k] : "no reason");
        fputs(")\n", f);
    }
    if (other > 0)
        fprintf(f, "\n%s: %zu %s for other reasons\n", what, other,
                other == 1 ? "key" : "keys");
}

int hrv_gate_markdown(FILE *f, const struct hrv_gate *g)
{
    struct hrv_gate_counts c;
    const struct hrv_gate_row **changed;
    size_t nchanged = 0, shown;
    int first = 1, with_det = 0;

    hrv_gate_count(g, &c);
    changed = malloc((g->n + 1) * sizeof *changed);
    if (changed == NULL)
        return -ENOMEM;
    part(f, &first, c.fail, "slower than allowed", 1);
    part(f, &first, c.warn, "slower than the warning level", 0);
    part(f, &first, c.slower, "slower", 0);
    part(f, &first, c.faster, "faster", 0);
    part(f, &first, c.not_judged, HRV_GATE_NOT_JUDGED, 0);
    part(f, &first, c.undecided, "undecided", 0);
    part(f, &first, c.unchanged, "unchanged", 1);
    part(f, &first, c.only,
         g->skipped != NULL ? g->skipped : "in one run only", 0);
    if (g->machines == NULL) {
        fputs("; machines match\n", f);
    } else if (g->machines[0] == '\0') {
        fputc('\n', f);
    } else {
        fputs("; machines differ: ", f);
        hrv_md_escape(f, g->machines);
        fputc('\n', f);
    }
    unjudged_lines(f, g);
    for (size_t i = 0; i < g->n; i++) {
        if (g->rows[i].verdict == HRV_GATE_SLOWER ||
            g->rows[i].verdict == HRV_GATE_FASTER || g->rows[i].fail ||
            g->rows[i].warn || g->rows[i].not_judged ||
            g->rows[i].undecided)
            changed[nchanged++] = &g->rows[i];
    }
    qsort(changed, nchanged, sizeof *changed, cmp_worst);
    shown = nchanged < g->limit ? nchanged : g->limit;
    for (size_t i = 0; i < shown; i++)
        with_det |= changed[i]->detectable != 0;
    if (shown > 0 && with_det)
        fputs("\n| node | phase | range | metric | before | after | change "
              "| detectable | p | verdict |\n"
              "|---|---|---|---|---:|---:|---:|---:|---:|---|\n", f);
    else if (shown > 0)
        fputs("\n| node | phase | range | metric | before | after | change "
              "| p | verdict |\n|---|---|---|---|---:|---:|---:|---:|---|\n",
              f);
    for (size_t i = 0; i < shown; i++) {
        const struct hrv_gate_row *r = changed[i];
        char b[32], a[32], ch[32], p[32], det[32];

        duration(b, sizeof b, r->before);
        duration(a, sizeof a, r->after);
        percent(ch, sizeof ch, r->change);
        pvalue(p, sizeof p, r->p);
        fputs("| ", f);
        hrv_md_escape(f, r->node);
        fputs(" | ", f);
        hrv_md_escape(f, r->phase);
        fputs(" | ", f);
        hrv_md_escape(f, r->range);
        if (str(r->op)[0] != '\0' || str(r->backend)[0] != '\0') {
            fputs(" (", f);
            hrv_md_escape(f, r->op);
            fputc('/', f);
            hrv_md_escape(f, r->backend);
            fputc(')', f);
        }
        if (str(r->where)[0] != '\0') {
            fputc(' ', f);
            hrv_md_escape(f, r->where);
        }
        fputs(" | ", f);
        hrv_md_escape(f, r->metric);
        fprintf(f, " | %s | %s | %s | ", b, a, ch);
        if (with_det) {
            if (isinf(r->detectable))
                snprintf(det, sizeof det, "none");
            else if (r->detectable != 0)
                snprintf(det, sizeof det, "%.1f%%", r->detectable);
            else
                snprintf(det, sizeof det, "-");
            fprintf(f, "%s | ", det);
        }
        fprintf(f, "%s | ", p);
        if (r->fail)
            fprintf(f, "**slower than allowed** (%g%%)", r->fail_pct);
        else if (r->not_judged)
            fprintf(f, HRV_GATE_NOT_JUDGED " (%g%%)", r->fail_pct);
        else if (r->warn)
            fprintf(f, "slower than the warning level (%g%%)", r->warn_pct);
        else if (r->undecided)
            fputs("undecided", f);
        else
            fputs(r->verdict == HRV_GATE_SLOWER ? "slower" : "faster", f);
        if (r->pairs > 0)
            fprintf(f, " after %zu pairs", r->pairs);
        fputs(" |\n", f);
    }
    if (nchanged > shown)
        fprintf(f, "\n%zu more changed %s not shown (--limit %zu).\n",
                nchanged - shown, nchanged - shown == 1 ? "key" : "keys",
                g->limit);
    free(changed);
    return finish(f);
}

/* ---- Findings --------------------------------------------------------- */

/* A series of a finding in words, for JUnit's system-out: "NODE OP
 * BACKEND PHASE RANGE METRIC: before ..., after ..., change ..., p ...". */
static void finding_series_xml(FILE *f, const struct hrv_gate_row *r)
{
    const char *k[6] = { r->node, r->op, r->backend, r->phase, r->range,
                         r->metric };
    char fig[192];

    for (int i = 0; i < 6; i++) {
        if (str(k[i])[0] == '\0')
            continue;
        if (i > 0)
            fputc(' ', f);
        hrv_xml_escape(f, k[i]);
    }
    figures(fig, sizeof fig, r);
    fprintf(f, ": %s\n", fig);
}

static size_t count_failing(const struct hrv_gate_findings *g)
{
    size_t n = 0;

    for (size_t i = 0; i < g->n; i++)
        n += g->f[i].fail != 0;
    return n;
}

int hrv_gate_findings_junit(FILE *f, const struct hrv_gate_findings *g)
{
    size_t fail = count_failing(g);

    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"",
          f);
    hrv_xml_escape(f, str(g->title));
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"0\" time=\"0\">\n  <testsuite name=\"findings\" "
            "tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" "
            "time=\"0\">\n    <properties>\n      <property name=\"rule\" "
            "value=\"", g->n, fail, g->n, fail);
    hrv_xml_escape(f, str(g->rule));
    fprintf(f, "\"/>\n      <property name=\"series\" value=\"%zu\"/>\n"
            "    </properties>\n", g->series);
    for (size_t i = 0; i < g->n; i++) {
        const struct hrv_gate_finding *x = &g->f[i];
        const struct hrv_gate_row *s = &x->rows[0];
        char fig[192];

        fprintf(f, "    <testcase name=\"finding %zu: starts in ", i + 1);
        junit_name(f, s);
        fputc(' ', f);
        hrv_xml_escape(f, str(x->where));
        fputs("\" classname=\"", f);
        hrv_xml_escape(f, str(s->node));
        fputs("\" time=\"0\">\n", f);
        figures(fig, sizeof fig, s);
        if (x->fail)
            fprintf(f, "      <failure type=\"slower\" message=\"slower "
                    "than allowed: %zu series of %zu %s, starting %s\">"
                    "a series slower than its --fail-above limit"
                    "</failure>\n", x->n, x->nodes,
                    x->nodes == 1 ? "node" : "nodes", fig);
        fprintf(f, "      <system-out>%s: %zu series of %zu %s, p %.2g\n",
                s->verdict == HRV_GATE_SLOWER ? "slower" : "faster", x->n,
                x->nodes, x->nodes == 1 ? "node" : "nodes", x->p);
        for (size_t j = 0; j < x->n; j++)
            finding_series_xml(f, &x->rows[j]);
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return finish(f);
}

/* Worst first: failing, then by the change of the series it starts in,
 * largest first. */
static int cmp_finding(const void *pa, const void *pb)
{
    const struct hrv_gate_finding *a =
        *(const struct hrv_gate_finding *const *)pa;
    const struct hrv_gate_finding *b =
        *(const struct hrv_gate_finding *const *)pb;

    if (a->fail != b->fail)
        return a->fail ? -1 : 1;
    if (a->rows[0].change != b->rows[0].change)
        return a->rows[0].change > b->rows[0].change ? -1 : 1;
    return a < b ? -1 : a > b;
}

int hrv_gate_findings_markdown(FILE *f, const struct hrv_gate_findings *g)
{
    const struct hrv_gate_finding **v = malloc((g->n + 1) * sizeof *v);
    size_t fail = count_failing(g), shown;

    if (v == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < g->n; i++)
        v[i] = &g->f[i];
    qsort(v, g->n, sizeof *v, cmp_finding);
    fprintf(f, "%zu %s (%zu slower than allowed) over %zu series\n\n",
            g->n, g->n == 1 ? "finding" : "findings", fail, g->series);
    hrv_md_escape(f, str(g->rule));
    fputc('\n', f);
    shown = g->n < g->limit ? g->n : g->limit;
    if (shown > 0)
        fputs("\n| starts in | where | nodes | series | before | after "
              "| change | p | verdict |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---|\n", f);
    for (size_t i = 0; i < shown; i++) {
        const struct hrv_gate_row *r = &v[i]->rows[0];
        char b[32], a[32], ch[32], p[32];

        duration(b, sizeof b, r->before);
        duration(a, sizeof a, r->after);
        percent(ch, sizeof ch, r->change);
        pvalue(p, sizeof p, v[i]->p);
        fputs("| ", f);
        hrv_md_escape(f, r->node);
        fputc(' ', f);
        hrv_md_escape(f, r->phase);
        fputc(' ', f);
        hrv_md_escape(f, r->range);
        fputc(' ', f);
        hrv_md_escape(f, r->metric);
        fputs(" | ", f);
        hrv_md_escape(f, str(v[i]->where));
        fprintf(f, " | %zu | %zu | %s | %s | %s | %s | %s |\n",
                v[i]->nodes, v[i]->n, b, a, ch, p,
                v[i]->fail ? "**slower than allowed**"
                : r->verdict == HRV_GATE_SLOWER ? "slower" : "faster");
    }
    if (g->n > shown)
        fprintf(f, "\n%zu more %s not shown (--limit %zu).\n", g->n - shown,
                g->n - shown == 1 ? "finding" : "findings", g->limit);
    free(v);
    return finish(f);
}
