/* hostrangectl history detect's findings: every series of the history
 * fed to one look (lib/history/look.h), its findings written as text,
 * JSONL, JUnit or Markdown (see ctl_history.h). */
#include "config.h"

#include "ctl/ctl_bisect.h"
#include "ctl/ctl_history.h"
#include "ctl/ctl_history_judge.h"
#include "lib/history/look.h"
#include "lib/view/escape.h"
#include "lib/view/gate.h"
#include "lib/view/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stored run: its id, commit, machine and place among its machine's
 * runs. */
struct run {
    char *id, *commit, *machine;
    size_t pos;
};

struct look_ctx {
    const struct hrd_ctl_look_opts *o;
    struct hrd_history_look *l;
    struct run *runs;     /* in the history's order, then sorted by id */
    size_t nruns, caprun;
    struct run **by_pos;  /* per machine's run place: a run (by machine) */
    /* The series being gathered. */
    int64_t key;
    char *machine;
    char *k[6];
    double *x;
    uint64_t *count;
    size_t *pos;
    size_t n, cap;
    size_t series;        /* series fed */
};

static int add_run(void *ctx, const struct hrd_history_runinfo *r)
{
    struct look_ctx *c = ctx;
    size_t pos = 0;

    if (c->nruns == c->caprun) {
        size_t cap = c->caprun ? 2 * c->caprun : 64;
        struct run *v = realloc(c->runs, cap * sizeof *v);

        if (v == NULL)
            return -ENOMEM;
        c->runs = v;
        c->caprun = cap;
    }
    for (size_t i = 0; i < c->nruns; i++)
        pos += strcmp(c->runs[i].machine, r->machine) == 0;
    c->runs[c->nruns].id = strdup(r->id);
    c->runs[c->nruns].commit = strdup(r->commit);
    c->runs[c->nruns].machine = strdup(r->machine);
    c->runs[c->nruns].pos = pos;
    c->nruns++;
    if (c->runs[c->nruns - 1].id == NULL ||
        c->runs[c->nruns - 1].commit == NULL ||
        c->runs[c->nruns - 1].machine == NULL)
        return -ENOMEM;
    return 0;
}

static int cmp_run_id(const void *a, const void *b)
{
    return strcmp(((const struct run *)a)->id, ((const struct run *)b)->id);
}

static const struct run *find_run(const struct look_ctx *c, const char *id)
{
    struct run k = { (char *)id, NULL, NULL, 0 };

    return bsearch(&k, c->runs, c->nruns, sizeof k, cmp_run_id);
}

/* The run at place pos among machine's runs. */
static const struct run *run_at(const struct look_ctx *c, const char *machine,
                                size_t pos)
{
    for (size_t i = 0; i < c->nruns; i++) {
        if (c->runs[i].pos == pos && strcmp(c->runs[i].machine, machine) == 0)
            return &c->runs[i];
    }
    return NULL;
}

static void series_clear(struct look_ctx *c)
{
    for (int i = 0; i < 6; i++) {
        free(c->k[i]);
        c->k[i] = NULL;
    }
    free(c->machine);
    c->machine = NULL;
    c->n = 0;
}

static int flush_series(struct look_ctx *c)
{
    if (c->n == 0)
        return 0;
    c->series++;
    return hrd_history_look_add(c->l, (const char *const *)c->k, c->machine,
                                c->x, c->count, c->pos, c->n);
}

static int look_point(void *ctx, const struct hrd_history_point *p)
{
    struct look_ctx *c = ctx;
    const struct run *r;
    int rc;

    if (!hrd_ctl_history_match(c->o->f, c->o->machine, p))
        return 0;
    if (c->machine == NULL || c->key != p->key ||
        strcmp(c->machine, p->machine) != 0) {
        const char *k[6] = { p->node, p->op, p->backend, p->phase,
                             p->range, p->metric };

        if ((rc = flush_series(c)) != 0)
            return rc;
        series_clear(c);
        c->key = p->key;
        if ((c->machine = strdup(p->machine)) == NULL)
            return -ENOMEM;
        for (int i = 0; i < 6; i++) {
            if ((c->k[i] = strdup(k[i])) == NULL)
                return -ENOMEM;
        }
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        double *x = realloc(c->x, cap * sizeof *x);
        uint64_t *n = realloc(c->count, cap * sizeof *n);
        size_t *pos = realloc(c->pos, cap * sizeof *pos);

        c->x = x != NULL ? x : c->x;
        c->count = n != NULL ? n : c->count;
        c->pos = pos != NULL ? pos : c->pos;
        if (x == NULL || n == NULL || pos == NULL)
            return -ENOMEM;
        c->cap = cap;
    }
    r = find_run(c, p->run);
    c->x[c->n] = p->median;
    c->count[c->n] = p->count;
    c->pos[c->n] = r != NULL ? r->pos : c->n;
    c->n++;
    return 0;
}

static void number(double v)
{
    char b[40];

    hrd_format_number(b, sizeof b, v);
    fputs(b, stdout);
}

/* Whether change ch slows its series beyond its --fail-above limit (its
 * newest change only: the newest run lies after it); names it on stderr
 * when it does. */
static int over_limit(const struct hrd_ctl_look_opts *o,
                      const struct hrd_history_change *ch)
{
    const struct hrd_limit *l;

    if (o->limits == NULL || !ch->newest || ch->cp.change <= 0)
        return 0;
    l = hrd_limits_find(o->limits, ch->key[4]);
    if (l == NULL || ch->cp.change * 100 <= l->pct)
        return 0;
    fputs("hostrangectl history detect: ", stderr);
    for (int i = 0; i < 6; i++) {
        hrd_text_put(stderr, ch->key[i]);
        fputc(' ', stderr);
    }
    fputs("on ", stderr);
    hrd_text_put(stderr, ch->machine);
    fprintf(stderr, ": %+.1f%% slower, above --fail-above %g%%\n",
            ch->cp.change * 100, l->pct);
    return 1;
}

static const char *const key_names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };

/* One change as a JSON object's fields (no braces). */
static void json_change(const struct hrd_history_change *ch,
                        const struct run *r)
{
    for (int i = 0; i < 6; i++) {
        printf("%s\"%s\":", i ? "," : "", key_names[i]);
        hrd_json_string(stdout, ch->key[i]);
    }
    printf(",\"commit\":");
    hrd_json_string(stdout, r != NULL ? r->commit : "");
    printf(",\"run\":");
    hrd_json_string(stdout, r != NULL ? r->id : "");
    printf(",\"before\":");
    number(ch->cp.before);
    printf(",\"after\":");
    number(ch->cp.after);
    printf(",\"change\":");
    number(ch->cp.change);
    printf(",\"p\":");
    number(ch->cp.p);
    printf(",\"direction\":\"%s\"", ch->cp.change > 0 ? "slower" : "faster");
}

/* One change as a line of text, as detect --series writes it. */
static void text_change(const struct hrd_history_change *ch,
                        const struct run *r)
{
    fputs("  ", stdout);
    hrd_ctl_change_line((char *const *)ch->key, ch->machine, &ch->cp,
                        r != NULL ? r->commit : "", r != NULL ? r->id : "-",
                        "");
}

/* The gate formats: findings and their rows, with the strings they
 * borrow kept here. */
struct gate_out {
    struct hrd_gate_finding *f;
    struct hrd_gate_row *rows;
    char **where;
};

static void gate_row(struct hrd_gate_row *g, const struct hrd_ctl_look_opts *o,
                     const struct hrd_history_change *ch, int fail)
{
    const struct hrd_limit *l =
        o->limits != NULL ? hrd_limits_find(o->limits, ch->key[4]) : NULL;

    memset(g, 0, sizeof *g);
    g->node = ch->key[0];
    g->op = ch->key[1];
    g->backend = ch->key[2];
    g->phase = ch->key[3];
    g->range = ch->key[4];
    g->metric = ch->key[5];
    g->before = ch->cp.before;
    g->after = ch->cp.after;
    g->change = ch->cp.change * 100;
    g->p = ch->cp.p;
    g->fail_pct = l != NULL ? l->pct : NAN;
    g->warn_pct = NAN;
    g->verdict = ch->cp.change > 0 ? HRD_GATE_SLOWER : HRD_GATE_FASTER;
    g->fail = fail;
}

/* Writes the findings of look c in o's format; *slower set when one is
 * slower than allowed. Returns 0 or a negative errno. */
static int write_findings(struct look_ctx *c, int *slower)
{
    const struct hrd_ctl_look_opts *o = c->o;
    size_t nf = hrd_history_look_nfindings(c->l), tested, total = 0;
    char rule[256];
    struct gate_out g = { NULL, NULL, NULL };
    int rc = 0;

    tested = hrd_history_look_tested(c->l);
    hrd_history_look_rule(rule, sizeof rule, o->cp.alpha, tested);
    for (size_t i = 0; i < nf; i++) {
        struct hrd_history_finding f;

        hrd_history_look_finding(c->l, i, &f);
        total += f.nchanges;
    }
    if (o->format == HRD_CTL_LOOK_JUNIT || o->format == HRD_CTL_LOOK_MARKDOWN) {
        g.f = calloc(nf + 1, sizeof *g.f);
        g.rows = calloc(total + 1, sizeof *g.rows);
        g.where = calloc(nf + 1, sizeof *g.where);
        if (g.f == NULL || g.rows == NULL || g.where == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    } else if (o->format == HRD_CTL_LOOK_JSONL) {
        printf("{\"rule\":");
        hrd_json_string(stdout, rule);
        printf(",\"series\":%zu,\"alpha\":", tested);
        number(o->cp.alpha);
        printf(",\"min_steps\":%d,\"findings\":%zu}\n", HRD_CP_MIN_STEPS, nf);
    } else {
        printf("history detect: %zu %s over %zu series (", nf,
               nf == 1 ? "finding" : "findings", tested);
        fputs(rule, stdout);
        fputs(")\n", stdout);
    }
    total = 0;
    for (size_t i = 0; i < nf; i++) {
        struct hrd_history_finding f;
        struct hrd_history_change st;
        const struct run *r, *rb;
        int fail = 0;

        hrd_history_look_finding(c->l, i, &f);
        hrd_history_look_change(c->l, i, f.start, &st);
        r = run_at(c, f.machine, f.pos);
        /* The run before the finding's: its commit is where a bisect
         * starts (commit_before; in text, the bisect command line). */
        rb = f.pos > 0 ? run_at(c, f.machine, f.pos - 1) : NULL;
        if (g.f != NULL) {
            char w[4096];
            struct hrd_gate_row *rows = g.rows + total;
            size_t k = 1;

            snprintf(w, sizeof w, "on %s at commit %s (run %s)", f.machine,
                     r != NULL && r->commit[0] != '\0' ? r->commit : "-",
                     r != NULL ? r->id : "-");
            if ((g.where[i] = strdup(w)) == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            for (size_t j = 0; j < f.nchanges; j++) {
                struct hrd_history_change ch;
                int over;

                hrd_history_look_change(c->l, i, j, &ch);
                over = over_limit(o, &ch);
                fail |= over;
                gate_row(&rows[j == f.start ? 0 : k], o, &ch, over);
                k += j != f.start;
            }
            g.f[i] = (struct hrd_gate_finding){ g.where[i], rows, f.nchanges,
                                                f.nodes, f.p, fail };
            total += f.nchanges;
            *slower |= fail;
            continue;
        }
        if (o->format == HRD_CTL_LOOK_JSONL) {
            printf("{\"finding\":%zu,\"machine\":", i + 1);
            hrd_json_string(stdout, f.machine);
            printf(",\"commit\":");
            hrd_json_string(stdout, r != NULL ? r->commit : "");
            if (rb != NULL) {
                printf(",\"commit_before\":");
                hrd_json_string(stdout, rb->commit);
            }
            printf(",\"run\":");
            hrd_json_string(stdout, r != NULL ? r->id : "");
            printf(",\"nodes\":%zu,\"p\":", f.nodes);
            number(f.p);
            printf(",\"start\":{");
            json_change(&st, r);
            printf("},\"series\":[");
        } else {
            printf("finding %zu: %s by %+.1f%% on ", i + 1,
                   st.cp.change > 0 ? "slower" : "faster",
                   st.cp.change * 100);
            hrd_text_put(stdout, f.machine);
            fputs(" at commit ", stdout);
            hrd_text_put(stdout,
                         r != NULL && r->commit[0] != '\0' ? r->commit : "-");
            fputs(" (run ", stdout);
            hrd_text_put(stdout, r != NULL ? r->id : "-");
            fputs("), starts in ", stdout);
            for (int k = 0; k < 6; k++) {
                if (k > 0)
                    fputc(' ', stdout);
                hrd_text_put(stdout, st.key[k]);
            }
            printf("; %zu series of %zu %s, p=%.2g\n", f.nchanges, f.nodes,
                   f.nodes == 1 ? "node" : "nodes", f.p);
            if (rb != NULL && r != NULL)
                bisect_suggest(stdout, rb->commit, r->commit, st.key[0],
                               st.key[3], st.key[4], st.key[5]);
        }
        for (size_t j = 0; j < f.nchanges; j++) {
            struct hrd_history_change ch;
            const struct run *cr;

            hrd_history_look_change(c->l, i, j, &ch);
            fail |= over_limit(o, &ch);
            cr = run_at(c, ch.machine, ch.pos);
            if (o->format == HRD_CTL_LOOK_JSONL) {
                printf("%s{", j ? "," : "");
                json_change(&ch, cr);
                putchar('}');
            } else {
                text_change(&ch, cr);
            }
        }
        if (o->format == HRD_CTL_LOOK_JSONL)
            printf("],\"fail\":%s}\n", fail ? "true" : "false");
        *slower |= fail;
    }
    if (g.f != NULL) {
        struct hrd_gate_findings gf = { "hostrangectl history detect", rule,
                                        g.f, nf, tested, o->limit };

        rc = o->format == HRD_CTL_LOOK_JUNIT
                 ? hrd_gate_findings_junit(stdout, &gf)
                 : hrd_gate_findings_markdown(stdout, &gf);
    }
out:
    for (size_t i = 0; g.where != NULL && i < nf; i++)
        free(g.where[i]);
    free(g.where);
    free(g.f);
    free(g.rows);
    return rc != 0 ? rc : ferror(stdout) ? -EIO : 0;
}

int hrd_ctl_history_look(const struct hrd_ctl_look_opts *o,
                         struct hrd_history *h, int *slower, char *err,
                         size_t errlen)
{
    struct look_ctx c;
    int rc;

    memset(&c, 0, sizeof c);
    c.o = o;
    *slower = 0;
    if ((c.l = hrd_history_look_new(&o->cp)) == NULL)
        return -ENOMEM;
    rc = hrd_history_runs(h, add_run, &c, err, errlen);
    if (rc == 0) {
        /* Sorted by id for the points' look-ups; run_at scans. */
        if (c.nruns > 1)
            qsort(c.runs, c.nruns, sizeof *c.runs, cmp_run_id);
        rc = hrd_history_points(h, look_point, &c, err, errlen);
    }
    if (rc == 0)
        rc = flush_series(&c);
    if (rc == 0)
        rc = hrd_history_look_finish(c.l);
    if (rc == 0)
        rc = write_findings(&c, slower);
    series_clear(&c);
    for (size_t i = 0; i < c.nruns; i++) {
        free(c.runs[i].id);
        free(c.runs[i].commit);
        free(c.runs[i].machine);
    }
    free(c.runs);
    free(c.x);
    free(c.count);
    free(c.pos);
    hrd_history_look_free(c.l);
    return rc;
}
