/* What history detect and check judge as gate rows, and the
 * --fail-above verdict (gate.h). */
#include "config.h"

#include "lib/history/gate.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *keep(struct hrh_gate *g, const char *s)
{
    char *c = strdup(s != NULL ? s : "");

    if (c != NULL)
        g->strs[g->nstrs++] = c;
    return c;
}

/* Appends the row of key `key` on machine `machine` to g: its key, where
 * (machine, and commit when not NULL), and its verdict with cp's figures
 * (cp NULL: unchanged, or with `reason` not judged). Returns 0 or
 * -ENOMEM. */
int hrh_gate_add(struct hrh_gate *g,
                         const struct hrs_limits *limits, char *const *key,
                         const char *machine, const char *commit,
                         const struct hrs_cp *cp, int fail,
                         const char *reason)
{
    struct hrv_gate_row *r;
    const struct hrs_limit *l;
    char where[4096];

    if (g->n == g->cap) {
        size_t cap = hru_grow_room(g->cap, g->n + 1, sizeof *g->v, 64);

        /* Eight strings a row. */
        if (cap == 0 || hru_resize(&g->v, cap, sizeof *g->v) != 0 ||
            hru_resize(&g->strs, cap, 8 * sizeof *g->strs) != 0)
            return -ENOMEM;
        g->cap = cap;
    }
    r = &g->v[g->n];
    memset(r, 0, sizeof *r);
    if (commit != NULL)
        snprintf(where, sizeof where, "on %s at commit %s", machine,
                 commit[0] != '\0' ? commit : "-");
    else
        snprintf(where, sizeof where, "on %s", machine);
    r->node = keep(g, key[0]);
    r->op = keep(g, key[1]);
    r->backend = keep(g, key[2]);
    r->phase = keep(g, key[3]);
    r->range = keep(g, key[4]);
    r->metric = keep(g, key[5]);
    r->where = keep(g, where);
    r->reason = reason != NULL ? keep(g, reason) : NULL;
    if (r->node == NULL || r->op == NULL || r->backend == NULL ||
        r->phase == NULL || r->range == NULL || r->metric == NULL ||
        r->where == NULL || (reason != NULL && r->reason == NULL))
        return -ENOMEM;
    l = limits != NULL ? hrs_limits_find(limits, key[4]) : NULL;
    r->fail_pct = l != NULL ? l->pct : NAN;
    r->warn_pct = NAN;
    r->before = r->after = r->change = r->p = NAN;
    r->verdict = reason != NULL ? HRV_GATE_ONLY : HRV_GATE_UNCHANGED;
    if (cp != NULL) {
        r->before = cp->before;
        r->after = cp->after;
        r->change = cp->change * 100;
        r->p = cp->p;
        r->verdict = cp->change > 0 ? HRV_GATE_SLOWER : HRV_GATE_FASTER;
        r->fail = fail;
    }
    g->n++;
    return 0;
}

int hrh_gate_add_judged(struct hrh_gate *g, const struct hrs_limits *limits,
                        char *const *key, const char *machine,
                        const struct hrs_cp *cp, int differs,
                        const struct hrh_judged *j,
                        const struct hrh_check_said *said)
{
    struct hrv_gate_row *r;
    int rc = hrh_gate_add(g, limits, key, machine, NULL,
                          differs ? cp : NULL, said->over, NULL);

    if (rc != 0)
        return rc;
    r = &g->v[g->n - 1];
    if (!differs) {
        /* Unchanged, with its figures. */
        r->before = cp->before;
        r->after = cp->after;
        r->change = cp->change * 100;
        r->p = cp->p;
    }
    r->detectable = j->detectable;
    r->not_judged = said->not_judged;
    r->undecided = said->undecided;
    r->pairs = 0;
    return 0;
}

void hrh_gate_fini(struct hrh_gate *g)
{
    for (size_t i = 0; i < g->nstrs; i++)
        free(g->strs[i]);
    free(g->strs);
    free(g->v);
}

void hrh_gate_change(struct hrv_gate_row *g,
                             const struct hrs_limits *limits,
                             const struct hrh_change *ch, int fail)
{
    const struct hrs_limit *l =
        limits != NULL ? hrs_limits_find(limits, ch->key[4]) : NULL;

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
    g->verdict = ch->cp.change > 0 ? HRV_GATE_SLOWER : HRV_GATE_FASTER;
    g->fail = fail;
}

const struct hrs_limit *hrh_over_limit(const struct hrs_limits *limits,
                                               const char *range,
                                               const struct hrs_cp *cp)
{
    const struct hrs_limit *l;

    if (limits == NULL || cp->change <= 0)
        return NULL;
    l = hrs_limits_find(limits, range);
    if (l == NULL || cp->change * 100 <= l->pct)
        return NULL;
    return l;
}
