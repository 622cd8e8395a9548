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
    const struct hrc_look_opts *o;
    struct hrh_look *l;
    struct hrh_lookread rd;
};

/* Whether detect's filters keep point p. */
static int keep_point(void *ctx, const struct hrh_point *p)
{
    const struct hrc_look_opts *o = ctx;

    return hrh_match(o->f, o->machine, p);
}

/* The run at place pos among machine's runs. */
static const struct hrh_lookrun *run_at(const struct look_ctx *c,
                                                const char *machine,
                                                size_t pos)
{
    return hrh_lookread_run_at(&c->rd, machine, pos);
}

static void number(double v)
{
    char b[40];

    hrv_format_number(b, sizeof b, v);
    fputs(b, stdout);
}

/* Whether change ch slows its series beyond its --fail-above limit (its
 * newest change only: the newest run lies after it); names it on stderr
 * when it does. */
static int over_limit(const struct hrc_look_opts *o,
                      const struct hrh_change *ch)
{
    const struct hrs_limit *l;

    if (!ch->newest ||
        (l = hrh_over_limit(o->limits, ch->key[4], &ch->cp)) == NULL)
        return 0;
    fputs("hostrangectl history detect: ", stderr);
    for (int i = 0; i < 6; i++) {
        hrv_text_put(stderr, ch->key[i]);
        fputc(' ', stderr);
    }
    fputs("on ", stderr);
    hrv_text_put(stderr, ch->machine);
    fprintf(stderr, ": %+.1f%% slower, above --fail-above %g%%\n",
            ch->cp.change * 100, l->pct);
    return 1;
}

static const char *const key_names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };

/* One change as a JSON object's fields (no braces). */
static void json_change(const struct hrh_change *ch,
                        const struct hrh_lookrun *r)
{
    for (int i = 0; i < 6; i++) {
        printf("%s\"%s\":", i ? "," : "", key_names[i]);
        hrv_json_string(stdout, ch->key[i]);
    }
    printf(",\"commit\":");
    hrv_json_string(stdout, r != NULL ? r->commit : "");
    printf(",\"run\":");
    hrv_json_string(stdout, r != NULL ? r->id : "");
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
static void text_change(const struct hrh_change *ch,
                        const struct hrh_lookrun *r)
{
    fputs("  ", stdout);
    hrc_change_line((char *const *)ch->key, ch->machine, &ch->cp,
                        r != NULL ? r->commit : "", r != NULL ? r->id : "-",
                        "");
}

/* The gate formats: findings and their rows, with the strings they
 * borrow kept here. */
struct gate_out {
    struct hrv_gate_finding *f;
    struct hrv_gate_row *rows;
    char **where;
};

/* Writes the findings of look c in o's format; *slower set when one is
 * slower than allowed. Returns 0 or a negative errno. */
static int write_findings(struct look_ctx *c, int *slower)
{
    const struct hrc_look_opts *o = c->o;
    size_t nf = hrh_look_nfindings(c->l), tested, total = 0;
    char rule[256];
    struct gate_out g = { NULL, NULL, NULL };
    int rc = 0;

    tested = hrh_look_tested(c->l);
    hrh_look_rule(rule, sizeof rule, o->cp.alpha, tested);
    for (size_t i = 0; i < nf; i++) {
        struct hrh_finding f;

        hrh_look_finding(c->l, i, &f);
        total += f.nchanges;
    }
    if (o->format == HRC_LOOK_JUNIT || o->format == HRC_LOOK_MARKDOWN) {
        g.f = calloc(nf + 1, sizeof *g.f);
        g.rows = calloc(total + 1, sizeof *g.rows);
        g.where = calloc(nf + 1, sizeof *g.where);
        if (g.f == NULL || g.rows == NULL || g.where == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    } else if (o->format == HRC_LOOK_JSONL) {
        printf("{\"rule\":");
        hrv_json_string(stdout, rule);
        printf(",\"series\":%zu,\"alpha\":", tested);
        number(o->cp.alpha);
        printf(",\"min_steps\":%d,\"findings\":%zu}\n", HRS_CP_MIN_STEPS, nf);
    } else {
        printf("history detect: %zu %s over %zu series (", nf,
               nf == 1 ? "finding" : "findings", tested);
        fputs(rule, stdout);
        fputs(")\n", stdout);
    }
    total = 0;
    for (size_t i = 0; i < nf; i++) {
        struct hrh_finding f;
        struct hrh_change st;
        const struct hrh_lookrun *r, *rb;
        int fail = 0;

        hrh_look_finding(c->l, i, &f);
        hrh_look_change(c->l, i, f.start, &st);
        r = run_at(c, f.machine, f.pos);
        /* The run before the finding's: its commit is where a bisect
         * starts (commit_before; in text, the bisect command line). */
        rb = f.pos > 0 ? run_at(c, f.machine, f.pos - 1) : NULL;
        if (g.f != NULL) {
            char w[4096];
            struct hrv_gate_row *rows = g.rows + total;
            size_t k = 1;

            snprintf(w, sizeof w, "on %s at commit %s (run %s)", f.machine,
                     r != NULL && r->commit[0] != '\0' ? r->commit : "-",
                     r != NULL ? r->id : "-");
            if ((g.where[i] = strdup(w)) == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            for (size_t j = 0; j < f.nchanges; j++) {
                struct hrh_change ch;
                int over;

                hrh_look_change(c->l, i, j, &ch);
                over = over_limit(o, &ch);
                fail |= over;
                hrh_gate_change(&rows[j == f.start ? 0 : k],
                                        o->limits, &ch, over);
                k += j != f.start;
            }
            g.f[i] = (struct hrv_gate_finding){ g.where[i], rows, f.nchanges,
                                                f.nodes, f.p, fail };
            total += f.nchanges;
            *slower |= fail;
            continue;
        }
        if (o->format == HRC_LOOK_JSONL) {
            printf("{\"finding\":%zu,\"machine\":", i + 1);
            hrv_json_string(stdout, f.machine);
            printf(",\"commit\":");
            hrv_json_string(stdout, r != NULL ? r->commit : "");
            if (rb != NULL) {
                printf(",\"commit_before\":");
                hrv_json_string(stdout, rb->commit);
            }
            printf(",\"run\":");
            hrv_json_string(stdout, r != NULL ? r->id : "");
            printf(",\"nodes\":%zu,\"p\":", f.nodes);
            number(f.p);
            printf(",\"start\":{");
            json_change(&st, r);
            printf("},\"series\":[");
        } else {
            printf("finding %zu: %s by %+.1f%% on ", i + 1,
                   st.cp.change > 0 ? "slower" : "faster",
                   st.cp.change * 100);
            hrv_text_put(stdout, f.machine);
            fputs(" at commit ", stdout);
            hrv_text_put(stdout,
                         r != NULL && r->commit[0] != '\0' ? r->commit : "-");
            fputs(" (run ", stdout);
            hrv_text_put(stdout, r != NULL ? r->id : "-");
            fputs("), starts in ", stdout);
            for (int k = 0; k < 6; k++) {
                if (k > 0)
                    fputc(' ', stdout);
                hrv_text_put(stdout, st.key[k]);
            }
            printf("; %zu series of %zu %s, p=%.2g\n", f.nchanges, f.nodes,
                   f.nodes == 1 ? "node" : "nodes", f.p);
            if (rb != NULL && r != NULL)
                bisect_suggest(stdout, rb->commit, r->commit, st.key[0],
                               st.key[3], st.key[4], st.key[5]);
        }
        for (size_t j = 0; j < f.nchanges; j++) {
            struct hrh_change ch;
            const struct hrh_lookrun *cr;

            hrh_look_change(c->l, i, j, &ch);
            fail |= over_limit(o, &ch);
            cr = run_at(c, ch.machine, ch.pos);
            if (o->format == HRC_LOOK_JSONL) {
                printf("%s{", j ? "," : "");
                json_change(&ch, cr);
                putchar('}');
            } else {
                text_change(&ch, cr);
            }
        }
        if (o->format == HRC_LOOK_JSONL)
            printf("],\"fail\":%s}\n", fail ? "true" : "false");
        *slower |= fail;
    }
    if (g.f != NULL) {
        struct hrv_gate_findings gf = { "hostrangectl history detect", rule,
                                        g.f, nf, tested, o->limit };

        rc = o->format == HRC_LOOK_JUNIT
                 ? hrv_gate_findings_junit(stdout, &gf)
                 : hrv_gate_findings_markdown(stdout, &gf);
    }
out:
    for (size_t i = 0; g.where != NULL && i < nf; i++)
        free(g.where[i]);
    free(g.where);
    free(g.f);
    free(g.rows);
    return rc != 0 ? rc : ferror(stdout) ? -EIO : 0;
}

int hrc_history_look(const struct hrc_look_opts *o,
                         struct hrh_history *h, int *slower, char *err,
                         size_t errlen)
{
    struct look_ctx c;
    int rc;

    memset(&c, 0, sizeof c);
    c.o = o;
    *slower = 0;
    if ((c.l = hrh_look_new(&o->cp)) == NULL)
        return -ENOMEM;
    rc = hrh_lookread(&c.rd, c.l, h, keep_point, (void *)o, err,
                              errlen);
    if (rc == 0)
        rc = write_findings(&c, slower);
    hrh_lookread_fini(&c.rd);
    hrh_look_free(c.l);
    return rc;
}
