/* The lines of bisect's state file read back (bisectstate.h). */
#include "config.h"

#include "lib/stat/bisectstate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                        struct hrs_decide *d)
{
    const char *o = field(s, NULL, name), *end;
    char verdict[32];

    if (o == NULL || *o != '{' || (end = strchr(o, '}')) == NULL ||
        field_str(o, end, "verdict", verdict, sizeof verdict) != 0)
        return -1;
    d->verdict = strcmp(verdict, "slower") == 0   ? HRS_DECIDE_SLOWER
                 : strcmp(verdict, "faster") == 0 ? HRS_DECIDE_FASTER
                 : strcmp(verdict, "same") == 0   ? HRS_DECIDE_SAME
                                                  : HRS_DECIDE_UNDECIDED;
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

int hrs_bisect_state_ends(const char *line, struct hrs_bisect_state_ends *e)
{
    char verdict[32];

    memset(e, 0, sizeof *e);
    if (field_num(line, NULL, "step") != 0 ||
        field_str(line, NULL, "good", e->good, sizeof e->good) != 0 ||
        field_str(line, NULL, "commit", e->bad, sizeof e->bad) != 0 ||
        field_str(line, NULL, "verdict", verdict, sizeof verdict) != 0)
        return -EINVAL;
    e->have_key =
        field_str(line, NULL, "node", e->node, sizeof e->node) == 0 &&
        field_str(line, NULL, "operator", e->op, sizeof e->op) == 0 &&
        field_str(line, NULL, "backend", e->backend, sizeof e->backend) == 0 &&
        field_str(line, NULL, "range", e->range, sizeof e->range) == 0 &&
        field_str(line, NULL, "phase", e->phase, sizeof e->phase) == 0 &&
        field_str(line, NULL, "metric", e->metric, sizeof e->metric) == 0;
    e->step_ns = field_num(line, NULL, "clock_step_ns");
    e->ends.verdict = strcmp(verdict, "slower") == 0   ? HRS_DECIDE_SLOWER
                      : strcmp(verdict, "faster") == 0 ? HRS_DECIDE_FASTER
                                                       : HRS_DECIDE_UNDECIDED;
    e->ends.pairs = (size_t)field_num(line, NULL, "pairs");
    e->ends.change = field_num(line, NULL, "change");
    e->ends.lo = field_num(line, NULL, "lo");
    e->ends.hi = field_num(line, NULL, "hi");
    e->ends.p = field_num(line, NULL, "p");
    e->seconds = field_num(line, NULL, "seconds");
    return 0;
}

int hrs_bisect_state_step(const char *line, struct hrs_bisect_state_step *s)
{
    char verdict[32];

    memset(s, 0, sizeof *s);
    s->step = field_num(line, NULL, "step");
    if (!(s->step > 0) ||
        field_str(line, NULL, "commit", s->commit, sizeof s->commit) != 0 ||
        field_str(line, NULL, "verdict", verdict, sizeof verdict) != 0)
        return -EINVAL;
    s->verdict = hrs_bisect_parse(verdict);
    s->pairs = (size_t)field_num(line, NULL, "pairs");
    s->seconds = field_num(line, NULL, "seconds");
    s->vs_good_ok = field_decide(line, "vs_good", &s->vs_good) == 0;
    s->vs_bad_ok = s->vs_good_ok &&
                   field_decide(line, "vs_bad", &s->vs_bad) == 0;
    return 0;
}
