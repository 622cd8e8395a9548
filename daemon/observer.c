/* Calibrations and the observer cost of report rows (see observer.h). */
#include "config.h"

#include "daemon/observer.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The keys of one (label, clock) pair under the calibration node. */
struct group {
    uint32_t op, backend;
    const struct hrd_key *mid, *inner, *timer;
    uint32_t serial;
};

enum { MID, INNER, TIMER, NONE };

static int range_role(const char *range)
{
    if (strcmp(range, HRP_CALIB_MID) == 0)
        return MID;
    if (strcmp(range, HRP_CALIB_INNER) == 0)
        return INNER;
    if (strcmp(range, HRP_CALIB_TIMER) == 0)
        return TIMER;
    return NONE;
}

/* The group of (op, backend) in g[0..*n), added when missing (g has room
 * for every key). */
static struct group *group_of(struct group *g, size_t *n, uint32_t op,
                              uint32_t backend)
{
    for (size_t i = 0; i < *n; i++) {
        if (g[i].op == op && g[i].backend == backend)
            return &g[i];
    }
    memset(&g[*n], 0, sizeof g[*n]);
    g[*n].op = op;
    g[*n].backend = backend;
    return &g[(*n)++];
}

static double at_least_0(double x)
{
    return x > 0 ? x : 0.0;
}

static int cmp_recent(const void *pa, const void *pb)
{
    const struct hrd_calib *x = pa, *y = pb;

    return (x->serial < y->serial) - (x->serial > y->serial);
}

int hrd_calib_collect(struct hrd_agg *a, struct hrd_calib **out, size_t *n)
{
    struct group *g;
    struct hrd_calib *c = NULL;
    size_t ng = 0, nc = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    g = malloc((a->nkeys + 1) * sizeof *g);
    if (g == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        const struct hrd_key *k = a->keys[i];
        struct group *x;
        int role;

        if (k->phase != HRP_PHASE_WARM ||
            strcmp(hrd_agg_str_get(a, k->node), HRP_CALIB_NODE) != 0)
            continue;
        role = range_role(hrd_agg_str_get(a, k->range));
        if (role == NONE)
            continue;
        x = group_of(g, &ng, k->op, k->backend);
        if (role == MID)
            x->mid = k;
        else if (role == INNER)
            x->inner = k;
        else
            x->timer = k;
        if (k->serial >= x->serial)
            x->serial = k->serial;
    }
    c = calloc(ng + 1, sizeof *c);
    if (c == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < ng; i++) {
        struct hrd_summary mi, ms, ii, is, ti, ts;

        if (g[i].mid == NULL || g[i].inner == NULL || g[i].timer == NULL ||
            g[i].mid->pairs == 0 || g[i].inner->pairs == 0 ||
            g[i].timer->pairs + g[i].timer->records == 0)
            continue;
        if (hrd_agg_key_summaries(a, g[i].mid, &mi, &ms) != 0 ||
            hrd_agg_key_summaries(a, g[i].inner, &ii, &is) != 0 ||
            hrd_agg_key_summaries(a, g[i].timer, &ti, &ts) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        c[nc].label = hrd_agg_str_get(a, g[i].op);
        c[nc].clock = hrd_agg_str_get(a, g[i].backend);
        c[nc].child_ns = at_least_0(mi.median - ii.median);
        c[nc].residue_ns = at_least_0(ms.median - is.median);
        c[nc].empty_ns = at_least_0(ii.median);
        c[nc].timer_ns = at_least_0(ti.median);
        c[nc].calls = ii.count;
        c[nc].serial = g[i].serial;
        nc++;
    }
    qsort(c, nc, sizeof *c, cmp_recent);
out:
    free(g);
    if (rc != 0 || nc == 0) {
        free(c);
        return rc;
    }
    *out = c;
    *n = nc;
    return 0;
}

/* x less d, never below 0. */
static double less(double x, double d)
{
    return x > d ? x - d : 0.0;
}

void hrd_observer_apply(struct hrd_row *row, const struct hrd_calib *cal,
                        int correct)
{
    double per_call, cost;
    int self;

    row->observer_known = 0;
    row->observer_ns = 0;
    row->observer_share = 0;
    row->unstable = 0;
    row->corrected = 0;
    if (cal == NULL || row->calls == 0)
        return;
    self = row->metric != NULL && strcmp(row->metric, "self") == 0;
    per_call = (double)row->children / (double)row->calls;
    cost = per_call * (self ? cal->residue_ns : cal->child_ns);
    row->observer_known = 1;
    row->observer_ns = cost;
    /* A median of 0 that holds a cost is all observer. */
    row->observer_share = row->median > 0 ? cost / row->median
                          : cost > 0      ? 1.0
                                          : 0.0;
    row->unstable = row->observer_share >= HRD_OBSERVER_UNSTABLE;
    if (!correct)
        return;
    cost += cal->empty_ns;
    row->mean = less(row->mean, cost);
    row->median = less(row->median, cost);
    row->min = less(row->min, cost);
    row->max = less(row->max, cost);
    row->p90 = less(row->p90, cost);
    row->p99 = less(row->p99, cost);
    row->corrected = 1;
}
