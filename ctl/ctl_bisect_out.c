/* hostrangectl bisect: what it writes (text, JSONL, Markdown) and its
 * state file (see ctl_bisect.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "ctl/ctl_bisect.h"
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

    if (!isfinite(v) || hrd_format_number(b, sizeof b, v) < 0)
        fputs("null", f);
    else
        fputs(b, f);
}

static void json_key(FILE *f, const struct bisect_key *k)
{
    fputs("{\"node\":", f);
    hrd_json_string(f, k->node);
    fputs(",\"operator\":", f);
    hrd_json_string(f, k->op);
    fputs(",\"backend\":", f);
    hrd_json_string(f, k->backend);
    fprintf(f, ",\"phase\":\"%s\",\"range\":", hrp_phase_name(k->phase));
    hrd_json_string(f, k->range);
    fprintf(f, ",\"metric\":\"%s\"}", hrp_metric_name(k->metric));
}

/* The figures of a decision: "change":…,"lo":…,"hi":…,"p":… */
static void json_figures(FILE *f, const struct hrd_decide *d)
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

static void json_decide(FILE *f, const char *name, const struct hrd_decide *d)
{
    fprintf(f, ",\"%s\":{\"verdict\":\"%s\",\"pairs\":%zu,", name,
            hrd_decide_name(d->verdict), d->pairs);
    json_figures(f, d);
    fputc('}', f);
}

/* The ends' line (step 0). */
void bisect_put_ends(FILE *f, const struct bisect *b)
{
    const struct bisect_commit *g = &b->c[0], *bad = &b->c[b->n - 1];

    fprintf(f, "{\"step\":0,\"good\":\"%s\",\"commit\":\"%s\",\"key\":",
            g->hash, bad->hash);
    json_key(f, &b->run.key);
    fputs(",\"clock_step_ns\":", f);
    json_num(f, b->run.step_ns);
    fprintf(f, ",\"verdict\":\"%s\",\"pairs\":%zu,\"seconds\":",
            hrd_decide_name(b->ends.verdict), b->ends.pairs);
    json_num(f, round(b->ends_seconds * 100) / 100);
    fputc(',', f);
    json_figures(f, &b->ends);
    fputs("}\n", f);
}

/* A step's line. */
void bisect_put_step(FILE *f, const struct bisect_commit *c)
{
    char *subject = bisect_subject(c->hash);

    fprintf(f, "{\"step\":%d,\"commit\":\"%s\",\"subject\":", c->step,
            c->hash);
    hrd_json_string(f, subject);
    fprintf(f, ",\"verdict\":\"%s\",\"pairs\":%zu,\"seconds\":",
            hrd_bisect_name(c->verdict), c->pairs);
    json_num(f, round(c->seconds * 100) / 100);
    if (c->verdict == HRD_BISECT_SKIPPED) {
        fputs(",\"why\":", f);
        hrd_json_string(f, c->why);
    } else {
        json_decide(f, "vs_good", &c->vs_good);
        json_decide(f, "vs_bad", &c->vs_bad);
    }
    fputs("}\n", f);
    free(subject);
}

/* A change as text: "+10.2% [+9.8%, +10.6%]". */
void bisect_text_change(FILE *f, const struct hrd_decide *d)
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

/* The value after "name": in s (up to end, or the string's end), or NULL. */
static const char *field(const char *s, const char *end, const char *name)
{
    char pat[64];
    const char *at;

    snprintf(pat, sizeof pat, "\"%s\":", name);
    at = strstr(s, pat);
    if (at == NULL || (end != NULL && at >= end))
        return NULL;
    return at + strlen(pat);
}

static double field_num(const char *s, const char *end, const char *name)
{
    const char *v = field(s, end, name);

    if (v == NULL || strncmp(v, "null", 4) == 0)
        return NAN;
    return strtod(v, NULL);
}

/* A string field's value (no escapes: hashes and verdicts) into out. */
static int field_str(const char *s, const char *end, const char *name,
                     char *out, size_t len)
{
    const char *v = field(s, end, name);
    size_t n;

    if (v == NULL || *v != '"')
        return -1;
    n = strcspn(v + 1, "\"\\");
    if (n >= len || v[1 + n] != '"')
        return -1;
    memcpy(out, v + 1, n);
    out[n] = '\0';
    return 0;
}

/* A decision written by json_decide: "name":{...}. */
static int field_decide(const char *s, const char *name,
                        struct hrd_decide *d)
{
    const char *o = field(s, NULL, name), *end;
    char verdict[32];

    if (o == NULL || *o != '{' || (end = strchr(o, '}')) == NULL ||
        field_str(o, end, "verdict", verdict, sizeof verdict) != 0)
        return -1;
    d->verdict = strcmp(verdict, "slower") == 0   ? HRD_DECIDE_SLOWER
                 : strcmp(verdict, "faster") == 0 ? HRD_DECIDE_FASTER
                 : strcmp(verdict, "same") == 0   ? HRD_DECIDE_SAME
                                                  : HRD_DECIDE_UNDECIDED;
    d->pairs = (size_t)field_num(o, end, "pairs");
    d->change = field_num(o, end, "change");
    d->lo = field_num(o, end, "lo");
    d->hi = field_num(o, end, "hi");
    d->p = field_num(o, end, "p");
    if (isnan(d->lo))
        d->lo = -INFINITY;
    if (isnan(d->hi))
        d->hi = INFINITY;
    return 0;
}

/*
 * Reads the state file's steps of the same ends and key into b (the key
 * then known). Returns the steps read (0 when the file is empty or
 * absent), or -1 after saying why the file does not fit.
 */
int bisect_state_load(struct bisect *b, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, hash[BISECT_HASH_MAX], verdict[32];
    size_t cap = 0;
    int lines = 0, rc = 0;

    if (f == NULL)
        return errno == ENOENT ? 0 : (fprintf(stderr, "hostrangectl bisect: "
                                              "cannot read %s: %s\n", path,
                                              strerror(errno)),
                                      -1);
    while (rc >= 0 && getline(&line, &cap, f) > 0) {
        double step = field_num(line, NULL, "step");

        lines++;
        if (lines == 1) {
            char good[BISECT_HASH_MAX];
            char node[4096], op[4096], be[4096], range[4096], ph[16], me[16];

            /* The ends must be this bisect's, and the key's range, phase
             * and metric those asked for; the key (its node, operator
             * and backend) becomes this bisect's. */
            if (step != 0 || field_str(line, NULL, "good", good,
                                       sizeof good) != 0 ||
                field_str(line, NULL, "commit", hash, sizeof hash) != 0 ||
                strcmp(good, b->c[0].hash) != 0 ||
                strcmp(hash, b->c[b->n - 1].hash) != 0 ||
                field_str(line, NULL, "verdict", verdict,
                          sizeof verdict) != 0) {
                fprintf(stderr, "hostrangectl bisect: %s holds the steps of "
                        "another bisect (other ends); remove it or name "
                        "another --state\n", path);
                rc = -1;
                break;
            }
            if (field_str(line, NULL, "node", node, sizeof node) != 0 ||
                field_str(line, NULL, "operator", op, sizeof op) != 0 ||
                field_str(line, NULL, "backend", be, sizeof be) != 0 ||
                field_str(line, NULL, "range", range, sizeof range) != 0 ||
                field_str(line, NULL, "phase", ph, sizeof ph) != 0 ||
                field_str(line, NULL, "metric", me, sizeof me) != 0 ||
                strcmp(range, b->run.range) != 0 ||
                hrp_phase_parse(ph) != b->run.phase ||
                hrp_metric_parse(me) != b->run.metric ||
                (b->run.node_glob != NULL &&
                 fnmatch(b->run.node_glob, node, 0) != 0)) {
                fprintf(stderr, "hostrangectl bisect: %s holds the steps of "
                        "another key; remove it or name another --state\n",
                        path);
                rc = -1;
                break;
            }
            b->run.key.node = strdup(node);
            b->run.key.op = strdup(op);
            b->run.key.backend = strdup(be);
            b->run.key.range = strdup(range);
            b->run.key.phase = b->run.phase;
            b->run.key.metric = b->run.metric;
            b->run.have_key = 1;
            b->run.step_ns = field_num(line, NULL, "clock_step_ns");
            if (!(b->run.step_ns >= 0))
                b->run.step_ns = 0;
            b->ends.verdict = strcmp(verdict, "slower") == 0
                                  ? HRD_DECIDE_SLOWER
                                  : strcmp(verdict, "faster") == 0
                                        ? HRD_DECIDE_FASTER
                                        : HRD_DECIDE_UNDECIDED;
            b->ends.pairs = (size_t)field_num(line, NULL, "pairs");
            b->ends.change = field_num(line, NULL, "change");
            b->ends.lo = field_num(line, NULL, "lo");
            b->ends.hi = field_num(line, NULL, "hi");
            b->ends.p = field_num(line, NULL, "p");
            b->ends_seconds = field_num(line, NULL, "seconds");
            b->earlier += b->ends_seconds;
            b->have_ends = 1;
            continue;
        }
        if (!(step > 0) ||
            field_str(line, NULL, "commit", hash, sizeof hash) != 0 ||
            field_str(line, NULL, "verdict", verdict, sizeof verdict) != 0)
            continue;
        for (size_t i = 1; i + 1 < b->n; i++) {
            struct bisect_commit *c = &b->c[i];
            int v = hrd_bisect_parse(verdict);

            if (strcmp(c->hash, hash) != 0 || v <= HRD_BISECT_UNTESTED)
                continue;
            c->verdict = (enum hrd_bisect_verdict)v;
            b->v[i] = c->verdict;
            c->step = (int)step;
            c->pairs = (size_t)field_num(line, NULL, "pairs");
            c->seconds = field_num(line, NULL, "seconds");
            if (c->verdict == HRD_BISECT_SKIPPED) {
                c->why = strdup("skipped in an earlier run");
            } else if (field_decide(line, "vs_good", &c->vs_good) != 0 ||
                       field_decide(line, "vs_bad", &c->vs_bad) != 0) {
                c->verdict = HRD_BISECT_UNTESTED;
                b->v[i] = c->verdict;
                continue;
            }
            if (c->step > b->steps)
                b->steps = c->step;
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
static const struct hrd_decide *change_at(const struct bisect *b, size_t i)
{
    if (i == b->n - 1 || b->c[i].verdict == HRD_BISECT_UNTESTED)
        return &b->ends;
    return &b->c[i].vs_good;
}

static void answer_text(FILE *f, const struct bisect *b,
                        const struct answer *a, double seconds)
{
    char *subject = bisect_subject(b->c[a->hi].hash);

    fprintf(f, "first bad commit: %s ", b->c[a->hi].hash);
    hrd_text_put(f, subject);
    fputc('\n', f);
    free(subject);
    fputs("  ", f);
    hrd_text_put(f, b->run.key.range);
    fprintf(f, " %s (", hrp_metric_name(b->run.key.metric));
    hrd_text_put(f, b->run.key.node);
    fprintf(f, ", %s): ", hrp_phase_name(b->run.key.phase));
    bisect_text_change(f, change_at(b, a->hi));
    fputs(" from the good end\n", f);
    if (a->hi > a->lo + 1) {
        fprintf(f, "  or one of the %zu commits before it, not judged:\n",
                a->hi - a->lo - 1);
        for (size_t i = a->lo + 1; i < a->hi; i++)
            fprintf(f, "    %s (%s)\n", b->c[i].hash,
                    b->c[i].verdict == HRD_BISECT_SKIPPED && b->c[i].why
                        ? b->c[i].why
                        : hrd_bisect_name(b->c[i].verdict));
    }
    if (a->two) {
        char *s2 = bisect_subject(b->c[a->hi2].hash);

        fputs("the change came in two steps: the commits from it are "
              "neither like good nor like bad, up to\n", f);
        fprintf(f, "second bad commit: %s ", b->c[a->hi2].hash);
        hrd_text_put(f, s2);
        fputs("\n  ", f);
        bisect_text_change(f, change_at(b, a->hi2));
        fputs(" from the good end\n", f);
        free(s2);
    }
    fprintf(f, "%d steps (%d skipped, %d unclear), %.1f s\n", b->steps,
            a->skipped, a->unclear, seconds);
}

static void answer_jsonl(FILE *f, const struct bisect *b,
                         const struct answer *a, double seconds)
{
    char *subject = bisect_subject(b->c[a->hi].hash);
    const struct hrd_decide *d = change_at(b, a->hi);

    fprintf(f, "{\"first_bad\":\"%s\",\"subject\":", b->c[a->hi].hash);
    hrd_json_string(f, subject);
    free(subject);
    fprintf(f, ",\"certain\":%s,\"candidates\":[",
            a->hi == a->lo + 1 ? "true" : "false");
    for (size_t i = a->lo + 1; i <= a->hi; i++)
        fprintf(f, "%s\"%s\"", i > a->lo + 1 ? "," : "", b->c[i].hash);
    fputs("],\"key\":", f);
    json_key(f, &b->run.key);
    fputc(',', f);
    json_figures(f, d);
    fputs(",\"two_step\":", f);
    if (a->two) {
        fprintf(f, "{\"second_bad\":\"%s\",", b->c[a->hi2].hash);
        json_figures(f, change_at(b, a->hi2));
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\"steps\":%d,\"skipped\":%d,\"unclear\":%d,\"seconds\":",
            b->steps, a->skipped, a->unclear);
    json_num(f, round(seconds * 100) / 100);
    fputs("}\n", f);
}

static void md_change(FILE *f, const struct hrd_decide *d)
{
    fprintf(f, "%+.1f%% [%+.1f%%, %+.1f%%]", d->change, d->lo, d->hi);
}

static void answer_markdown(FILE *f, const struct bisect *b,
                            const struct answer *a, double seconds)
{
    char *subject = bisect_subject(b->c[a->hi].hash);

    fputs("### bisect: ", f);
    hrd_md_escape(f, b->run.key.range);
    fprintf(f, " %s (", hrp_metric_name(b->run.key.metric));
    hrd_md_escape(f, b->run.key.node);
    fprintf(f, ", %s)\n\n", hrp_phase_name(b->run.key.phase));
    fprintf(f, "First bad commit: `%s` ", b->c[a->hi].hash);
    hrd_md_escape(f, subject);
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
                b->c[a->hi2].hash);
        md_change(f, change_at(b, a->hi2));
        fputs(" from the good end.\n\n", f);
    }
    fputs("| step | commit | verdict | pairs | seconds | against good | "
          "against bad |\n|---:|---|---|---:|---:|---|---|\n", f);
    fprintf(f, "| 0 | `%.12s` (bad end) | %s | %zu | %.1f | ",
            b->c[b->n - 1].hash, hrd_decide_name(b->ends.verdict),
            b->ends.pairs, b->ends_seconds);
    md_change(f, &b->ends);
    fputs(" | |\n", f);
    for (int s = 1; s <= b->steps; s++) {
        for (size_t i = 1; i + 1 < b->n; i++) {
            const struct bisect_commit *c = &b->c[i];

            if (c->step != s)
                continue;
            fprintf(f, "| %d | `%.12s` | %s | %zu | %.1f | ", s, c->hash,
                    hrd_bisect_name(c->verdict), c->pairs, c->seconds);
            if (c->verdict == HRD_BISECT_SKIPPED) {
                hrd_md_escape(f, c->why);
                fputs(" | |\n", f);
                continue;
            }
            md_change(f, &c->vs_good);
            fputs(" | ", f);
            md_change(f, &c->vs_bad);
            fputs(" |\n", f);
        }
    }
    fprintf(f, "\n%d steps (%d skipped, %d unclear), %.1f s.\n", b->steps,
            a->skipped, a->unclear, seconds);
}

/* The ends do not differ: said in the format asked for. */
void bisect_no_change(FILE *f, const struct bisect *b, double seconds)
{
    if (b->format == FORMAT_JSONL) {
        fputs("{\"first_bad\":null,\"key\":", f);
        json_key(f, &b->run.key);
        fputc(',', f);
        json_figures(f, &b->ends);
        fprintf(f, ",\"steps\":0,\"seconds\":");
        json_num(f, round(seconds * 100) / 100);
        fputs("}\n", f);
        return;
    }
    fprintf(f, "%sthe ends do not differ by more than %g%% (%s after %zu "
            "pairs: ", b->format == FORMAT_MARKDOWN ? "No bisect: " : "",
            b->threshold, hrd_decide_name(b->ends.verdict), b->ends.pairs);
    bisect_text_change(f, &b->ends);
    fputs("): nothing to search\n", f);
}

void bisect_answer(FILE *f, const struct bisect *b, const struct answer *a,
                   double seconds)
{
    if (b->format == FORMAT_TEXT)
        answer_text(f, b, a, seconds);
    else if (b->format == FORMAT_JSONL)
        answer_jsonl(f, b, a, seconds);
    else
        answer_markdown(f, b, a, seconds);
}
