/* hostrangectl history detect's findings: every series of the history
 * fed to one look (lib/history/look.h), its findings written as text,
 * JSONL, JUnit or Markdown (see ctl_history.h). */
#include "config.h"

#include "ctl/ctl_bisect.h"
#include "ctl/ctl_history.h"
#include "ctl/ctl_history_judge.h"
#include "lib/history/gate.h"
#include "lib/history/look.h"
#include "lib/history/lookread.h"
#include "lib/view/escape.h"
#include "lib/view/gate.h"
#include "lib/view/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct look_ctx {
    const struct hrd_ctl_look_opts *o;
    struct hrd_history_look *l;
    struct hrd_history_lookread rd;
};

/* Whether detect's filters keep point p. */
static int keep_point(void *ctx, const struct hrd_history_point *p)
{
    const struct hrd_ctl_look_opts *o = ctx;

    return hrd_history_match(o->f, o->machine, p);
}

/* The run at place pos among machine's runs. */
static const struct hrd_history_lookrun *run_at(const struct look_ctx *c,
                                                const char *machine,
                                                size_t pos)
{
    return hrd_history_lookread_run_at(&c->rd, machine, pos);
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

    if (!ch->newest ||
        (l = hrd_history_over_limit(o->limits, ch->key[4], &ch->cp)) == NULL)
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
                        const struct hrd_history_lookrun *r)
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
                        const struct hrd_history_lookrun *r)
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
        const struct hrd_history_lookrun *r, *rb;
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
                hrd_history_gate_change(&rows[j == f.start ? 0 : k],
                                        o->limits, &ch, over);
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
            const struct hrd_history_lookrun *cr;

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
    rc = hrd_history_lookread(&c.rd, c.l, h, keep_point, (void *)o, err,
                              errlen);
    if (rc == 0)
        rc = write_findings(&c, slower);
    hrd_history_lookread_fini(&c.rd);
    hrd_history_look_free(c.l);
    return rc;
}
