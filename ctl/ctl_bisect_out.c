/* hostrangectl bisect: what it writes (text, JSONL, Markdown) and its
 * state file (see ctl_bisect.h). */
#include "config.h"

#include "ctl/ctl_bisect.h"
#include "lib/stat/bisectstate.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- Output ------------------------------------------------------------ */

/* A JSON number, or null when it is not finite. */
static void json_num(FILE *f, double v)
{
    char b[32];

    if (!isfinite(v) || hrv_format_number(b, sizeof b, v) < 0)
        fputs("null", f);
    else
        fputs(b, f);
}

static void json_key(FILE *f, const struct bisect_key *k)
{
    fputs("{\"node\":", f);
    hrv_json_string(f, k->node);
    fputs(",\"operator\":", f);
    hrv_json_string(f, k->op);
    fputs(",\"backend\":", f);
    hrv_json_string(f, k->backend);
    fprintf(f, ",\"phase\":\"%s\",\"range\":", hrp_phase_name(k->phase));
    hrv_json_string(f, k->range);
    fprintf(f, ",\"metric\":\"%s\"}", hrp_metric_name(k->metric));
}

/* The figures of a decision: "change":…,"lo":…,"hi":…,"p":… */
static void json_figures(FILE *f, const struct hrs_decide *d)
{
    fputs("\"change\":", f);
    json_num(f, d->change);
    fputs(",\"lo\":", f);
    json_num(f, d->lo);
    fputs(",\"hi\":", f);
    json_num(f, d->hi);
    fputs(",\"p\":", f);
    json_num(f, d->p);
}

static void json_decide(FILE *f, const char *name, const struct hrs_decide *d)
{
    fprintf(f, ",\"%s\":{\"verdict\":\"%s\",\"pairs\":%zu,", name,
            hrs_decide_name(d->verdict), d->pairs);
    json_figures(f, d);
    fputc('}', f);
}

/* The ends' line (step 0). */
void bisect_put_ends(FILE *f, const struct bisect *b)
{
    const struct hrx_bisect_commit *g = &b->m.c[0], *bad = &b->m.c[b->m.n - 1];

    fprintf(f, "{\"step\":0,\"good\":\"%s\",\"commit\":\"%s\",\"key\":",
            g->hash, bad->hash);
    json_key(f, &b->run.key);
    fputs(",\"clock_step_ns\":", f);
    json_num(f, b->run.step_ns);
    fprintf(f, ",\"verdict\":\"%s\",\"pairs\":%zu,\"seconds\":",
            hrs_decide_name(b->m.ends.verdict), b->m.ends.pairs);
    json_num(f, round(b->m.ends_seconds * 100) / 100);
    fputc(',', f);
    json_figures(f, &b->m.ends);
    fputs("}\n", f);
}

/* A step's line. */
void bisect_put_step(FILE *f, const struct hrx_bisect_commit *c)
{
    char *subject = hrx_bisect_subject(c->hash);

    fprintf(f, "{\"step\":%d,\"commit\":\"%s\",\"subject\":", c->step,
            c->hash);
    hrv_json_string(f, subject);
    fprintf(f, ",\"verdict\":\"%s\",\"pairs\":%zu,\"seconds\":",
            hrs_bisect_name(c->verdict), c->pairs);
    json_num(f, round(c->seconds * 100) / 100);
    if (c->verdict == HRS_BISECT_SKIPPED) {
        fputs(",\"why\":", f);
        hrv_json_string(f, c->why);
    } else {
        json_decide(f, "vs_good", &c->vs_good);
        json_decide(f, "vs_bad", &c->vs_bad);
    }
    fputs("}\n", f);
    free(subject);
}

/* A change as text: "+10.2% [+9.8%, +10.6%]". */
void bisect_text_change(FILE *f, const struct hrs_decide *d)
{
    fprintf(f, "%+.1f%% [%+.1f%%, %+.1f%%]", d->change, d->lo, d->hi);
}

/* The state file gets every line, written through at once. */
void bisect_state_put(struct bisect *b, void (*put)(FILE *, const void *),
                      const void *what)
{
    if (b->state == NULL)
        return;
    put(b->state, what);
    if (fflush(b->state) != 0 || fsync(fileno(b->state)) != 0)
        fprintf(stderr, "hostrangectl bisect: cannot write the state file: "
                "%s\n", strerror(errno));
}

void bisect_ends_line(FILE *f, const void *b)
{
    bisect_put_ends(f, b);
}

void bisect_step_line(FILE *f, const void *c)
{
    bisect_put_step(f, c);
}

/* --- The state file ----------------------------------------------------- */

/*
 * Reads the state file's steps of the same ends and key into b (the key
 * then known). Returns the steps read (0 when the file is empty or
 * absent), or -1 after saying why the file does not fit. Its lines are
 * read by lib/stat/bisectstate.h.
 */
int bisect_state_load(struct bisect *b, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    int lines = 0, rc = 0;

    if (f == NULL)
        return errno == ENOENT ? 0 : (fprintf(stderr, "hostrangectl bisect: "
                                              "cannot read %s: %s\n", path,
                                              strerror(errno)),
                                      -1);
    while (rc >= 0 && getline(&line, &cap, f) > 0) {
        struct hrs_bisect_state_step s;

        lines++;
        if (lines == 1) {
            struct hrs_bisect_state_ends e;

            /* The ends must be this bisect's, and the key's range, phase
             * and metric those asked for; the key (its node, operator
             * and backend) becomes this bisect's. */
            if (hrs_bisect_state_ends(line, &e) != 0 ||
                strcmp(e.good, b->m.c[0].hash) != 0 ||
                strcmp(e.bad, b->m.c[b->m.n - 1].hash) != 0) {
                fprintf(stderr, "hostrangectl bisect: %s holds the steps of "
                        "another bisect (other ends); remove it or name "
                        "another --state\n", path);
                rc = -1;
                break;
            }
            if (!e.have_key || strcmp(e.range, b->run.range) != 0 ||
                hrp_phase_parse(e.phase) != b->run.phase ||
                hrp_metric_parse(e.metric) != b->run.metric ||
                (b->run.node_glob != NULL &&
                 fnmatch(b->run.node_glob, e.node, 0) != 0)) {
                fprintf(stderr, "hostrangectl bisect: %s holds the steps of "
                        "another key; remove it or name another --state\n",
                        path);
                rc = -1;
                break;
            }
            b->run.key.node = strdup(e.node);
            b->run.key.op = strdup(e.op);
            b->run.key.backend = strdup(e.backend);
            b->run.key.range = strdup(e.range);
            b->run.key.phase = b->run.phase;
            b->run.key.metric = b->run.metric;
            b->run.have_key = 1;
            b->run.step_ns = e.step_ns;
            if (!(b->run.step_ns >= 0))
                b->run.step_ns = 0;
            b->m.ends = e.ends;
            b->m.ends_seconds = e.seconds;
            b->earlier += b->m.ends_seconds;
            b->m.have_ends = 1;
            continue;
        }
        if (hrs_bisect_state_step(line, &s) != 0)
            continue;
        for (size_t i = 1; i + 1 < b->m.n; i++) {
            struct hrx_bisect_commit *c = &b->m.c[i];
            int v = s.verdict;

            if (strcmp(c->hash, s.commit) != 0 || v <= HRS_BISECT_UNTESTED)
                continue;
            c->verdict = (enum hrs_bisect_verdict)v;
            b->m.v[i] = c->verdict;
            c->step = (int)s.step;
            c->pairs = s.pairs;
            c->seconds = s.seconds;
            if (c->verdict == HRS_BISECT_SKIPPED) {
                c->why = strdup("skipped in an earlier run");
            } else if (!s.vs_good_ok || !s.vs_bad_ok) {
                if (s.vs_good_ok)
                    c->vs_good = s.vs_good;
                c->verdict = HRS_BISECT_UNTESTED;
                b->m.v[i] = c->verdict;
                continue;
            } else {
                c->vs_good = s.vs_good;
                c->vs_bad = s.vs_bad;
            }
            if (c->step > b->m.steps)
                b->m.steps = c->step;
            b->earlier += c->seconds;
            rc++;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* --- The answer --------------------------------------------------------- */


/* The change from the good end to commit i: its step's, or the ends'. */
static const struct hrs_decide *change_at(const struct bisect *b, size_t i)
{
    if (i == b->m.n - 1 || b->m.c[i].verdict == HRS_BISECT_UNTESTED)
        return &b->m.ends;
    return &b->m.c[i].vs_good;
}

static void answer_text(FILE *f, const struct bisect *b,
                        const struct hrx_bisect_answer *a, double seconds)
{
    char *subject = hrx_bisect_subject(b->m.c[a->hi].hash);

    fprintf(f, "first bad commit: %s ", b->m.c[a->hi].hash);
    hrv_text_put(f, subject);
    fputc('\n', f);
    free(subject);
    fputs("  ", f);
    hrv_text_put(f, b->run.key.range);
    fprintf(f, " %s (", hrp_metric_name(b->run.key.metric));
    hrv_text_put(f, b->run.key.node);
    fprintf(f, ", %s): ", hrp_phase_name(b->run.key.phase));
    bisect_text_change(f, change_at(b, a->hi));
    fputs(" from the good end\n", f);
    if (a->hi > a->lo + 1) {
        fprintf(f, "  or one of the %zu commits before it, not judged:\n",
                a->hi - a->lo - 1);
        for (size_t i = a->lo + 1; i < a->hi; i++)
            fprintf(f, "    %s (%s)\n", b->m.c[i].hash,
                    b->m.c[i].verdict == HRS_BISECT_SKIPPED && b->m.c[i].why
                        ? b->m.c[i].why
                        : hrs_bisect_name(b->m.c[i].verdict));
    }
    if (a->two) {
        char *s2 = hrx_bisect_subject(b->m.c[a->hi2].hash);

        fputs("the change came in two steps: the commits from it are "
              "neither like good nor like bad, up to\n", f);
        fprintf(f, "second bad commit: %s ", b->m.c[a->hi2].hash);
        hrv_text_put(f, s2);
        fputs("\n  ", f);
        bisect_text_change(f, change_at(b, a->hi2));
        fputs(" from the good end\n", f);
        free(s2);
    }
    fprintf(f, "%d steps (%d skipped, %d unclear), %.1f s\n", b->m.steps,
            a->skipped, a->unclear, seconds);
}

static void answer_jsonl(FILE *f, const struct bisect *b,
                         const struct hrx_bisect_answer *a, double seconds)
{
    char *subject = hrx_bisect_subject(b->m.c[a->hi].hash);
    const struct hrs_decide *d = change_at(b, a->hi);

    fprintf(f, "{\"first_bad\":\"%s\",\"subject\":", b->m.c[a->hi].hash);
    hrv_json_string(f, subject);
    free(subject);
    fprintf(f, ",\"certain\":%s,\"candidates\":[",
            a->hi == a->lo + 1 ? "true" : "false");
    for (size_t i = a->lo + 1; i <= a->hi; i++)
        fprintf(f, "%s\"%s\"", i > a->lo + 1 ? "," : "", b->m.c[i].hash);
    fputs("],\"key\":", f);
    json_key(f, &b->run.key);
    fputc(',', f);
    json_figures(f, d);
    fputs(",\"two_step\":", f);
    if (a->two) {
        fprintf(f, "{\"second_bad\":\"%s\",", b->m.c[a->hi2].hash);
        json_figures(f, change_at(b, a->hi2));
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\"steps\":%d,\"skipped\":%d,\"unclear\":%d,\"seconds\":",
            b->m.steps, a->skipped, a->unclear);
    json_num(f, round(seconds * 100) / 100);
    fputs("}\n", f);
}

static void md_change(FILE *f, const struct hrs_decide *d)
{
    fprintf(f, "%+.1f%% [%+.1f%%, %+.1f%%]", d->change, d->lo, d->hi);
}

static void answer_markdown(FILE *f, const struct bisect *b,
                            const struct hrx_bisect_answer *a, double seconds)
{
    char *subject = hrx_bisect_subject(b->m.c[a->hi].hash);

    fputs("### bisect: ", f);
    hrv_md_escape(f, b->run.key.range);
    fprintf(f, " %s (", hrp_metric_name(b->run.key.metric));
    hrv_md_escape(f, b->run.key.node);
    fprintf(f, ", %s)\n\n", hrp_phase_name(b->run.key.phase));
    fprintf(f, "First bad commit: `%s` ", b->m.c[a->hi].hash);
    hrv_md_escape(f, subject);
    free(subject);
    fputs(": ", f);
    md_change(f, change_at(b, a->hi));
    fputs(" from the good end", f);
    if (a->hi > a->lo + 1)
        fprintf(f, ", or one of the %zu commits before it (not judged)",
                a->hi - a->lo - 1);
    fputs(".\n\n", f);
    if (a->two) {
        fprintf(f, "The change came in two steps; second bad commit: `%s`: ",
                b->m.c[a->hi2].hash);
        md_change(f, change_at(b, a->hi2));
        fputs(" from the good end.\n\n", f);
    }
    fputs("| step | commit | verdict | pairs | seconds | against good | "
          "against bad |\n|---:|---|---|---:|---:|---|---|\n", f);
    fprintf(f, "| 0 | `%.12s` (bad end) | %s | %zu | %.1f | ",
            b->m.c[b->m.n - 1].hash, hrs_decide_name(b->m.ends.verdict),
            b->m.ends.pairs, b->m.ends_seconds);
    md_change(f, &b->m.ends);
    fputs(" | |\n", f);
    for (int s = 1; s <= b->m.steps; s++) {
        for (size_t i = 1; i + 1 < b->m.n; i++) {
            const struct hrx_bisect_commit *c = &b->m.c[i];

            if (c->step != s)
                continue;
            fprintf(f, "| %d | `%.12s` | %s | %zu | %.1f | ", s, c->hash,
                    hrs_bisect_name(c->verdict), c->pairs, c->seconds);
            if (c->verdict == HRS_BISECT_SKIPPED) {
                hrv_md_escape(f, c->why);
                fputs(" | |\n", f);
                continue;
            }
            md_change(f, &c->vs_good);
            fputs(" | ", f);
            md_change(f, &c->vs_bad);
            fputs(" |\n", f);
        }
    }
    fprintf(f, "\n%d steps (%d skipped, %d unclear), %.1f s.\n", b->m.steps,
            a->skipped, a->unclear, seconds);
}

/* The ends do not differ: said in the format asked for. */
void bisect_no_change(FILE *f, const struct bisect *b, double seconds)
{
    if (b->format == FORMAT_JSONL) {
        fputs("{\"first_bad\":null,\"key\":", f);
        json_key(f, &b->run.key);
        fputc(',', f);
        json_figures(f, &b->m.ends);
        fprintf(f, ",\"steps\":0,\"seconds\":");
        json_num(f, round(seconds * 100) / 100);
        fputs("}\n", f);
        return;
    }
    fprintf(f, "%sthe ends do not differ by more than %g%% (%s after %zu "
            "pairs: ", b->format == FORMAT_MARKDOWN ? "No bisect: " : "",
            b->m.threshold, hrs_decide_name(b->m.ends.verdict), b->m.ends.pairs);
    bisect_text_change(f, &b->m.ends);
    fputs("): nothing to search\n", f);
}

void bisect_answer(FILE *f, const struct bisect *b, const struct hrx_bisect_answer *a,
                   double seconds)
{
    if (b->format == FORMAT_TEXT)
        answer_text(f, b, a, seconds);
    else if (b->format == FORMAT_JSONL)
        answer_jsonl(f, b, a, seconds);
    else
        answer_markdown(f, b, a, seconds);
}
