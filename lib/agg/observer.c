/* Calibrations and the observer cost of report rows (see observer.h). */
#include "config.h"

#include "lib/agg/observer.h"
#include "lib/agg/agg_impl.h"
#include "proto/protocol.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The keys of one (label, clock) pair under the calibration node, and the
 * clock paths of their clients. */
struct group {
    uint32_t op, backend;
    const struct hra_key *mid, *inner, *timer, *fan, *fan_child, *flat;
    uint32_t serial;
    unsigned clock_paths;
};

enum { MID, INNER, TIMER, FAN, FAN_CHILD, FLAT, NONE };

static int range_role(const char *range)
{
    if (strcmp(range, HRP_CALIB_MID) == 0)
        return MID;
    if (strcmp(range, HRP_CALIB_INNER) == 0)
        return INNER;
    if (strcmp(range, HRP_CALIB_TIMER) == 0)
        return TIMER;
    if (strcmp(range, HRP_CALIB_FAN) == 0)
        return FAN;
    if (strcmp(range, HRP_CALIB_FAN_CHILD) == 0)
        return FAN_CHILD;
    if (strcmp(range, HRP_CALIB_FLAT) == 0)
        return FLAT;
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
    const struct hra_calib *x = pa, *y = pb;

    return (x->serial < y->serial) - (x->serial > y->serial);
}

/*
 * A population's robust mean, the standard error of that mean, and the
 * smallest gap between two of its distinct values. Exact keys: the mean of
 * the values up to HRA_CALIB_CUT x the 90th percentile plus
 * HRA_CALIB_CUT_NS (what lies beyond is an interruption, not the cost
 * measured). Because the clock's phase at a scope's start is random, the
 * mean of many readings resolves a fraction of the clock's step where a
 * median cannot. A key kept in a histogram gives its median, with an
 * unknown (0) error and step.
 */
struct robust {
    double mean, err, step;
    uint64_t n;
};

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;

    return (x > y) - (x < y);
}

/*
 * The standard error of the mean of the values of v[0..n) up to cut, in
 * arrival order, from the spread of the means of HRA_CALIB_BLOCKS
 * consecutive blocks of them: what a drift of the machine during the
 * calibration (its clock rate, a neighbour) does to the mean, which the
 * spread of single values, taken as independent, does not show. 0 with
 * too few values.
 */
static double block_err(const uint64_t *v, size_t n, double cut)
{
    double m[HRA_CALIB_BLOCKS], all = 0, ss = 0;

    if (n < HRA_CALIB_BLOCKS * HRA_CALIB_BLOCK_MIN)
        return 0;
    for (size_t b = 0; b < HRA_CALIB_BLOCKS; b++) {
        size_t lo = n * b / HRA_CALIB_BLOCKS;
        size_t hi = n * (b + 1) / HRA_CALIB_BLOCKS, k = 0;
        double s = 0;

        for (size_t i = lo; i < hi; i++) {
            if ((double)v[i] <= cut) {
                s += (double)v[i];
                k++;
            }
        }
        if (k == 0)
            return 0;
        m[b] = s / (double)k;
        all += m[b];
    }
    all /= HRA_CALIB_BLOCKS;
    for (size_t b = 0; b < HRA_CALIB_BLOCKS; b++)
        ss += (m[b] - all) * (m[b] - all);
    return sqrt(ss / (HRA_CALIB_BLOCKS - 1) / HRA_CALIB_BLOCKS);
}

void hra_calib_robust(uint64_t *v, size_t n, double *mean, double *err,
                      double *step)
{
    double s = 0, ss = 0, cut, drift = 0;
    uint64_t gap = 0, *sorted = v;
    size_t k = 0;

    *mean = *err = *step = 0;
    if (n == 0)
        return;
    /* The blocks need the arrival order: sorted is a copy when there are
     * enough values for them (without memory, the error of single values
     * alone). */
    if (n >= HRA_CALIB_BLOCKS * HRA_CALIB_BLOCK_MIN &&
        (sorted = malloc(n * sizeof *sorted)) != NULL)
        memcpy(sorted, v, n * sizeof *v);
    else
        sorted = v;
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    cut = HRA_CALIB_CUT * (double)sorted[n * 9 / 10] + HRA_CALIB_CUT_NS;
    if (sorted != v) {
        drift = block_err(v, n, cut);
        memcpy(v, sorted, n * sizeof *v);
        free(sorted);
    }
    for (size_t i = 0; i < n && (double)v[i] <= cut; i++) {
        s += (double)v[i];
        k++;
        if (i > 0 && v[i] != v[i - 1] && (gap == 0 || v[i] - v[i - 1] < gap))
            gap = v[i] - v[i - 1];
    }
    *mean = s / (double)k;
    for (size_t i = 0; i < k; i++) {
        double d = (double)v[i] - *mean;
        ss += d * d;
    }
    *err = k > 1 ? sqrt(ss / (double)(k - 1) / (double)k) : 0;
    if (drift > *err)
        *err = drift;
    *step = (double)gap;
}

/* The robust figures of key k's inclusive (self = 0) or self times. */
static int robust_of(struct hra_agg *a, const struct hra_key *k, int self,
                     struct robust *r)
{
    struct hrs_summary si, ss;
    size_t ni, ns;
    uint64_t *incl, *selfv;

    memset(r, 0, sizeof *r);
    if (!k->exact) {
        if (hra_key_summaries(a, k, &si, &ss) != 0)
            return -ENOMEM;
        r->mean = self ? ss.median : si.median;
        r->n = self ? ss.count : si.count;
        return 0;
    }
    incl = malloc((k->pairs + k->records + 1) * sizeof *incl);
    selfv = malloc((k->pairs + 1) * sizeof *selfv);
    if (incl == NULL || selfv == NULL) {
        free(incl);
        free(selfv);
        return -ENOMEM;
    }
    hra_key_values(k, incl, &ni, selfv, &ns);
    if (self)
        hra_calib_robust(selfv, ns, &r->mean, &r->err, &r->step);
    else
        hra_calib_robust(incl, ni, &r->mean, &r->err, &r->step);
    r->n = self ? ns : ni;
    free(incl);
    free(selfv);
    return 0;
}

/*
 * With a fan (k child scopes, each around work w, per call) and its flat
 * twin (the same work, no scope), the cost of a child scope where it has
 * work around it, which is what real ranges have:
 *
 *   child_ns   = (fan inclusive - flat inclusive) / k
 *   residue_ns = (fan self - empty_ns) / k
 *   bias_ns    = (k x fan.child inclusive - flat inclusive) / (k - 1)
 *                (fast path)
 *
 * (a child's inclusive time is its work and the bias of its pair of
 * reads; what its scope costs beyond is in its parent's self time, which
 * in the fan holds nothing else but the parent's own pair). k is the fan's
 * children per call. With exact means this residue equals child_ns less
 * the child's bias, (fan.child inclusive - (flat inclusive - empty_ns) / k),
 * but it is the mean of one population, the fan's self times, which an
 * interruption of a child's work does not touch: its uncertainty is about
 * a tenth of that difference of three. Without a fan (an older
 * calibration), the figures of the empty nesting stay.
 *
 * The bias: a child measures w + b and the flat range k w + b, b being what
 * a pair of reads around work adds to it, so b = (k x child - flat) /
 * (k - 1). On the ordered path b is empty_ns within a nanosecond (its
 * reads are fenced), which stays; on the fast path plain reads overlap
 * the work (the end read may run before the work is done): b, measured
 * here around short children in a loop, is below 0 where empty_ns is the
 * cost of a read, and it is about +10 ns for children between long runs
 * of their parent's work. It is kept as a bound of what the fast path
 * leaves uncertain (hra_observer_apply).
 */
static int fan_figures(struct hra_agg *a, const struct group *g,
                       struct hra_calib *c, double empty)
{
    struct robust fi, fs, li, ci;
    double k;

    if (g->fan == NULL || g->fan_child == NULL || g->flat == NULL ||
        g->fan->pairs == 0 || g->flat->pairs == 0 ||
        g->fan_child->pairs == 0 || g->fan->children == 0)
        return 0;
    if (robust_of(a, g->fan, 0, &fi) != 0 ||
        robust_of(a, g->fan, 1, &fs) != 0 ||
        robust_of(a, g->flat, 0, &li) != 0)
        return -ENOMEM;
    k = (double)g->fan->children / (double)g->fan->pairs;
    c->child_ns = at_least_0((fi.mean - li.mean) / k);
    c->child_err_ns = hypot(fi.err, li.err) / k;
    c->residue_ns = at_least_0((fs.mean - empty) / k);
    c->residue_err_ns = hypot(fs.err, c->empty_err_ns) / k;
    if (hrp_clock_paths_fast(c->clock_paths) && k > 1) {
        if (robust_of(a, g->fan_child, 0, &ci) != 0)
            return -ENOMEM;
        /* Below 0 where the end read runs ahead of the work; 0 would
         * read as not known. */
        c->bias_ns = (k * ci.mean - li.mean) / (k - 1);
        if (c->bias_ns == 0)
            c->bias_ns = 1e-9;
    }
    return 0;
}

int hra_calib_collect(struct hra_agg *a, struct hra_calib **out, size_t *n)
{
    struct group *g;
    struct hra_calib *c = NULL;
    size_t ng = 0, nc = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    g = malloc((a->nkeys + 1) * sizeof *g);
    if (g == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        const struct hra_key *k = a->keys[i];
        struct group *x;
        int role;

        if (k->phase != HRP_PHASE_WARM ||
            strcmp(hra_str_get(a, k->node), HRP_CALIB_NODE) != 0)
            continue;
        role = range_role(hra_str_get(a, k->range));
        if (role == NONE)
            continue;
        x = group_of(g, &ng, k->op, k->backend);
        if (role == MID)
            x->mid = k;
        else if (role == INNER)
            x->inner = k;
        else if (role == TIMER)
            x->timer = k;
        else if (role == FAN)
            x->fan = k;
        else if (role == FAN_CHILD)
            x->fan_child = k;
        else
            x->flat = k;
        if (k->serial >= x->serial)
            x->serial = k->serial;
        x->clock_paths |= k->clock_paths;
    }
    c = calloc(ng + 1, sizeof *c);
    if (c == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < ng; i++) {
        struct robust mi, ms, ii, is, ti;

        if (g[i].mid == NULL || g[i].inner == NULL || g[i].timer == NULL ||
            g[i].mid->pairs == 0 || g[i].inner->pairs == 0 ||
            g[i].timer->pairs + g[i].timer->records == 0)
            continue;
        if (robust_of(a, g[i].mid, 0, &mi) != 0 ||
            robust_of(a, g[i].mid, 1, &ms) != 0 ||
            robust_of(a, g[i].inner, 0, &ii) != 0 ||
            robust_of(a, g[i].inner, 1, &is) != 0 ||
            robust_of(a, g[i].timer, 0, &ti) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        c[nc].label = hra_str_get(a, g[i].op);
        c[nc].clock = hra_str_get(a, g[i].backend);
        c[nc].child_ns = at_least_0(mi.mean - ii.mean);
        c[nc].residue_ns = at_least_0(ms.mean - is.mean);
        c[nc].empty_ns = at_least_0(ii.mean);
        c[nc].timer_ns = at_least_0(ti.mean);
        c[nc].calls = ii.n;
        c[nc].serial = g[i].serial;
        c[nc].child_err_ns = hypot(mi.err, ii.err);
        c[nc].residue_err_ns = hypot(ms.err, is.err);
        c[nc].empty_err_ns = ii.err;
        /* Back-to-back plain reads (the fast path) may all read the same
         * gap: the empty scopes' then show the step. */
        c[nc].step_ns = ti.step > 0 ? ti.step : ii.step;
        c[nc].clock_paths = g[i].clock_paths;
        c[nc].bias_ns = c[nc].empty_ns;
        rc = fan_figures(a, &g[i], &c[nc], ii.mean);
        if (rc != 0)
            goto out;
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

void hra_calib_from_message(struct hra_calib *cal,
                            const Hostrange__Calibration *m)
{
    memset(cal, 0, sizeof *cal);
    cal->label = m->label;
    cal->clock = m->clock;
    cal->child_ns = m->child_ns;
    cal->residue_ns = m->residue_ns;
    cal->empty_ns = m->empty_ns;
    cal->timer_ns = m->timer_ns;
    cal->calls = m->calls;
    cal->child_err_ns = m->child_err_ns;
    cal->residue_err_ns = m->residue_err_ns;
    cal->empty_err_ns = m->empty_err_ns;
    cal->step_ns = m->step_ns;
    cal->clock_paths = hrp_clock_paths_parse(m->clock_path);
    cal->bias_ns = m->bias_ns;
}

double hra_calib_bias(const struct hra_calib *cal)
{
    return cal->bias_ns != 0 ? cal->bias_ns : cal->empty_ns;
}

void hra_calib_to_message(Hostrange__Calibration *m,
                          const struct hra_calib *cal)
{
    hostrange__calibration__init(m);
    m->label = (char *)cal->label;
    m->clock = (char *)cal->clock;
    m->child_ns = cal->child_ns;
    m->residue_ns = cal->residue_ns;
    m->empty_ns = cal->empty_ns;
    m->timer_ns = cal->timer_ns;
    m->calls = cal->calls;
    m->child_err_ns = cal->child_err_ns;
    m->residue_err_ns = cal->residue_err_ns;
    m->empty_err_ns = cal->empty_err_ns;
    m->step_ns = cal->step_ns;
    m->clock_path = (char *)hrp_clock_path_name(cal->clock_paths);
    m->bias_ns = cal->bias_ns;
}

const struct hra_calib *hra_calib_for(const struct hra_calib *cal, size_t n,
                                      const char *label, unsigned paths)
{
    paths &= HRP_PATHS_ALL;
    if (hrp_clock_paths_mixed(paths))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (label != NULL && strcmp(cal[i].label, label) != 0)
            continue;
        if (!hrp_clock_paths_mixed(cal[i].clock_paths) &&
            (paths == 0 || cal[i].clock_paths == paths))
            return &cal[i];
        if (label != NULL)
            return NULL; /* one calibration per label */
    }
    return NULL;
}

/* x less d, never below 0. */
static double less(double x, double d)
{
    return x > d ? x - d : 0.0;
}

void hra_observer_apply(struct hra_row *row, const struct hra_calib *cal,
                        int correct)
{
    double per_call, cost;
    int self, fast;

    row->observer_known = 0;
    row->observer_ns = 0;
    row->observer_share = 0;
    row->unstable = 0;
    row->resolution_limited = 0;
    row->corrected = 0;
    if (cal == NULL || row->calls == 0)
        return;
    self = hrp_metric_parse(row->metric) == HRP_METRIC_SELF;
    fast = hrp_clock_paths_fast(cal->clock_paths);
    /* A self time holds the residue of each direct child; an inclusive
     * time the whole cost of every descendant's scope (a grandchild's is
     * in its parent's inclusive time, and so in this one). Rows from
     * before descendants were kept count direct children only. */
    per_call = (double)(self || row->descendants < row->children
                            ? row->children
                            : row->descendants) /
               (double)row->calls;
    cost = per_call * (self ? cal->residue_ns : cal->child_ns);
    row->observer_known = 1;
    row->observer_ns = cost;
    /* A median of 0 that holds a cost is all observer. */
    row->observer_share = row->median > 0 ? cost / row->median
                          : cost > 0      ? 1.0
                                          : 0.0;
    if (fast) {
        /* What the correction leaves uncertain (observer.h): the
         * correction, the plain reads, and the step of the clock a
         * median of its readings is known to. */
        double u = cost + fmax(cal->empty_ns, fabs(hra_calib_bias(cal))) +
                   (cal->step_ns > 0 ? cal->step_ns : 0.0);

        row->unstable = row->median > 0
                            ? u / row->median >= HRA_OBSERVER_UNSTABLE_FAST
                            : u > 0;
    } else {
        row->unstable = row->observer_share >= HRA_OBSERVER_UNSTABLE;
    }
    row->resolution_limited =
        cal->step_ns > 0 && row->median < HRA_RESOLUTION_STEPS * cal->step_ns;
    if (!correct)
        return;
    /* The reads' own bias: constant on the ordered path; about 0 on the
     * fast one (observer.h). */
    if (!fast)
        cost += cal->empty_ns;
    row->mean = less(row->mean, cost);
    row->median = less(row->median, cost);
    row->min = less(row->min, cost);
    row->max = less(row->max, cost);
    row->p90 = less(row->p90, cost);
    row->p99 = less(row->p99, cost);
    row->corrected = 1;
}
