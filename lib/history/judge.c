/* A run judged against the history (see judge.h). */
#include "config.h"

#include "lib/history/judge.h"
#include "lib/history/gate.h"
#include "lib/history/look.h"
#include "lib/stat/fdr.h"
#include "lib/stat/rounds.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hrh_judge_init(struct hrh_judge *jg,
                           const struct hrs_cp_opts *cp, size_t min_history,
                           const struct hrs_limits *limits,
                           double threshold)
{
    memset(jg, 0, sizeof *jg);
    jg->cp = *cp;
    jg->min_history = min_history;
    jg->limits = limits;
    jg->threshold = threshold;
    jg->sample = malloc(HRH_LOOK_STEP_SAMPLE * sizeof *jg->sample);
    return jg->sample == NULL ? -ENOMEM : 0;
}

void hrh_judge_fini(struct hrh_judge *jg)
{
    for (size_t i = 0; i < jg->npend; i++) {
        for (int k = 0; k < 6; k++)
            free(jg->pend[i].key[k]);
    }
    free(jg->pend);
    free(jg->sample);
    free(jg->order);
    free(jg->seen);
    memset(jg, 0, sizeof *jg);
}

static int key_cmp6(const char *const *a, const struct hrh_point *p)
{
    const char *b[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };

    for (int i = 0; i < 6; i++) {
        int c = strcmp(a[i], b[i]);
        if (c != 0)
            return c;
    }
    return 0;
}

/* The points being sorted (qsort has no context). */
static const struct hrh_point *sort_points;

static int cmp_points(const void *x, const void *y)
{
    const struct hrh_point *a = &sort_points[*(const size_t *)x];
    const char *k[6] = { a->node, a->op, a->backend, a->phase, a->range,
                         a->metric };

    return key_cmp6(k, &sort_points[*(const size_t *)y]);
}

int hrh_judge_run(struct hrh_judge *jg,
                          const struct hrh_point *p, size_t n)
{
    jg->p = p;
    jg->n = n;
    jg->order = malloc((n + 1) * sizeof *jg->order);
    jg->seen = calloc(n + 1, 1);
    if (jg->order == NULL || jg->seen == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        jg->order[i] = i;
    sort_points = p;
    qsort(jg->order, n, sizeof *jg->order, cmp_points);
    return 0;
}

const struct hrh_point *
hrh_judge_find(struct hrh_judge *jg,
                       const struct hrh_series *s)
{
    size_t lo = 0, hi = jg->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = key_cmp6((const char *const *)s->key,
                           &jg->p[jg->order[mid]]);

        if (cmp == 0) {
            jg->seen[jg->order[mid]] = 1;
            return &jg->p[jg->order[mid]];
        }
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/*
 * The run-level test (see hostrangectl-history(1)): the run's
 * round medians p->rounds against the values of the segment of s from
 * run `from` on (each run's round medians, or its median when it has one
 * round), by the exact Mann-Whitney test of lib/stat/rounds.h, one-sided
 * (slower): half its two-sided p when the run's rounds lie above, else
 * 1 - half. Returns 1 with *out filled (and the base's number of values
 * in *nbase), 0 when either side has fewer than HRS_ROUNDS_MIN values or
 * a value that is not positive (the run not judged this way), or -ENOMEM.
 */
static int judge_rounds(struct hrh_judge *c,
                        const struct hrh_series *s, size_t from,
                        const struct hrh_point *p,
                        double step, struct hrs_cp *out, size_t *nbase,
                        struct hrh_judged *j)
{
    struct hrs_rounds_cmp cmp;
    double *base, sd;
    size_t nb = 0, k0, k1;
    int rc;

    for (size_t i = from; i < s->n; i++)
        nb += s->nrounds[i] > 0 ? s->nrounds[i] : 1;
    if (p->nrounds < HRS_ROUNDS_MIN || nb < HRS_ROUNDS_MIN)
        return 0;
    /* The test's ratios need positive values (a self time may be 0). */
    for (size_t k = 0; k < p->nrounds; k++) {
        if (!(p->rounds[k] > 0))
            return 0;
    }
    for (size_t i = from; i < s->n; i++) {
        if (s->nrounds[i] == 0 && !(s->x[i] > 0))
            return 0;
        for (size_t k = 0; k < s->nrounds[i]; k++) {
            if (!(s->rounds[i][k] > 0))
                return 0;
        }
    }
    if ((base = malloc(nb * sizeof *base)) == NULL)
        return -ENOMEM;
    nb = 0;
    for (size_t i = from; i < s->n; i++) {
        if (s->nrounds[i] == 0)
            base[nb++] = s->x[i];
        for (size_t k = 0; k < s->nrounds[i]; k++)
            base[nb++] = s->rounds[i][k];
    }
    rc = hrs_rounds_compare(base, nb, p->rounds, p->nrounds, &cmp);
    /* The decision rule of diff, at one look (decide.h), and the change
     * the fastest-half test could detect with these rounds' noise. */
    if (rc == 0)
        rc = hrs_decide_once(base, nb, p->rounds, p->nrounds, j->threshold,
                             step, c->cp.alpha, &j->dec);
    k0 = nb < HRS_DETECT_MAX_ROUNDS ? nb : HRS_DETECT_MAX_ROUNDS;
    k1 = p->nrounds < HRS_DETECT_MAX_ROUNDS ? p->nrounds
                                            : HRS_DETECT_MAX_ROUNDS;
    if (rc == 0 && c->shift_sd[k0][k1] == 0) {
        c->shift_sd[k0][k1] = hrs_detect_shift_sd(k0, k1, c->cp.alpha);
        if (isnan(c->shift_sd[k0][k1])) {
            c->shift_sd[k0][k1] = 0;
            rc = -ENOMEM;
        }
    }
    if (rc == 0) {
        sd = hrs_detect_log_sd(base, nb, p->rounds, p->nrounds);
        j->detectable = hrs_detect_change(c->shift_sd[k0][k1], sd);
        j->by_rounds = 1;
        j->rounds[0] = nb;
        j->rounds[1] = p->nrounds;
    }
    free(base);
    if (rc != 0)
        return rc;
    out->at = 0;
    out->before = cmp.base_median;
    out->after = cmp.new_median;
    out->change = cmp.change / 100;
    out->p = cmp.u > (double)nb * (double)p->nrounds / 2 ? cmp.p / 2
                                                          : 1 - cmp.p / 2;
    *nbase = nb;
    return 1;
}

/* Keeps series s's key, which differs at alpha by res, for the rule.
 * Returns 0 or -ENOMEM. */
static int pend_push(struct hrh_judge *c,
                     const struct hrh_series *s,
                     const struct hrs_cp *res,
                     const struct hrh_judged *j)
{
    struct hrh_pending *p;

    if (hru_grow(&c->pend, &c->cappend, c->npend + 1, sizeof *c->pend,
                 64) != 0)
        return -ENOMEM;
    p = &c->pend[c->npend];
    memset(p, 0, sizeof *p);
    c->npend++;
    for (int i = 0; i < 6; i++) {
        if ((p->key[i] = strdup(s->key[i])) == NULL)
            return -ENOMEM;
    }
    p->res = *res;
    p->j = *j;
    return 0;
}

int hrh_judge_point(struct hrh_judge *c,
                            const struct hrh_series *s,
                            const struct hrh_point *p,
                            struct hrs_cp *res, struct hrh_judged *j)
{
    const struct hrs_limit *l;
    struct hrs_cp *cp;
    size_t from = 0, nbase = 0;
    double step, floor;
    int n, by_rounds;

    if (s->n < c->min_history)
        return HRH_JUDGE_FEW;
    cp = malloc(s->n * sizeof *cp);
    if (cp == NULL)
        return -ENOMEM;
    n = hrs_cp_detect(s->x, s->n, &c->cp, cp, s->n);
    if (n > 0)
        from = cp[n - 1].at;
    free(cp);
    if (n < 0)
        return n;
    memset(j, 0, sizeof *j);
    l = c->limits != NULL ? hrs_limits_find(c->limits, s->key[4]) : NULL;
    j->limited = l != NULL;
    j->gated = c->limits == NULL || l != NULL;
    j->threshold = l != NULL ? l->pct : c->threshold;
    step = hrs_cp_clock_step(s->x, s->n);
    by_rounds = judge_rounds(c, s, from, p, step, res, &nbase, j);
    if (by_rounds < 0)
        return by_rounds;
    if (by_rounds) {
        c->by_rounds++;
    } else if (hrs_cp_check(s->x + from, s->n - from, p->median, res) != 0) {
        return HRH_JUDGE_SHORT;
    } else {
        j->detectable = hrs_cp_check_detectable(
            s->x + from, s->n - from, c->cp.alpha, HRS_DETECT_POWER);
        if (isnan(j->detectable))
            return -ENOMEM;
    }
    /* Never less than the clock steps a change must move by. */
    floor = step > 0 && res->before > 0
                ? 100 * HRS_CP_MIN_STEPS * step / res->before : 0;
    if (!(j->detectable >= floor))
        j->detectable = floor;
    c->judged++;
    for (size_t i = 0; i < s->n && c->nsample < HRH_LOOK_STEP_SAMPLE;
         i++)
        c->sample[c->nsample++] = s->x[i];
    if (res->p > c->cp.alpha || res->change == 0)
        return HRH_JUDGE_SAME;
    n = pend_push(c, s, res, j);
    return n != 0 ? n : HRH_JUDGE_DIFFERS;
}

/* Union-find over the pending keys. */
static size_t pend_root(struct hrh_pending *p, size_t i)
{
    while (p[i].up != i) {
        p[i].up = p[p[i].up].up;
        i = p[i].up;
    }
    return i;
}

/* The pending keys being sorted and the key field they are sorted by
 * (qsort has no context). */
static const struct hrh_pending *sort_pend;
static int sort_pend_field;

static int cmp_pend(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int k = strcmp(sort_pend[x].key[sort_pend_field],
                   sort_pend[y].key[sort_pend_field]);

    return k != 0 ? k : x < y ? -1 : x > y;
}

/* Joins the kept keys that share key field `field` (all are of one run:
 * a node's layers, or one layer across nodes, are one finding). */
static void pend_link(struct hrh_judge *c, size_t *order, size_t n,
                      int field)
{
    sort_pend = c->pend;
    sort_pend_field = field;
    qsort(order, n, sizeof *order, cmp_pend);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(c->pend[order[i - 1]].key[field],
                   c->pend[order[i]].key[field]) == 0) {
            size_t a = pend_root(c->pend, order[i - 1]);
            size_t b = pend_root(c->pend, order[i]);

            if (a != b)
                c->pend[a > b ? a : b].up = a < b ? a : b;
        }
    }
}

/* Whether pending key a is a better start of its finding than b: a self
 * time that moved more in ns, else an inclusive time that moved less. */
static int better_start(const struct hrh_pending *a,
                        const struct hrh_pending *b)
{
    int sa = strcmp(a->key[5], "self") == 0;
    int sb = strcmp(b->key[5], "self") == 0;
    double ma = fabs(a->res.after - a->res.before);
    double mb = fabs(b->res.after - b->res.before);

    if (sa != sb)
        return sa;
    return sa ? ma > mb : ma < mb;
}

int hrh_judge_rule(struct hrh_judge *c)
{
    double step = hrs_cp_clock_step(c->sample, c->nsample), level;
    double *ps = malloc((c->npend + 1) * sizeof *ps);
    size_t *order = malloc((c->npend + 1) * sizeof *order), np = 0, nk = 0;
    int rc = 0;

    if (ps == NULL || order == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < c->npend; i++) {
        struct hrh_pending *p = &c->pend[i];

        p->keep = fabs(p->res.after - p->res.before) >=
                  HRS_CP_MIN_STEPS * step;
        if (p->keep)
            ps[np++] = p->res.p;
    }
    level = hrs_fdr_level(ps, np, c->judged, c->cp.alpha);
    for (size_t i = 0; i < c->npend; i++) {
        struct hrh_pending *p = &c->pend[i];

        p->keep = p->keep && p->res.p <= level;
        p->up = i;
        if (p->keep)
            order[nk++] = i;
    }
    c->found = nk;
    pend_link(c, order, nk, 0);
    pend_link(c, order, nk, 4);
out:
    free(ps);
    free(order);
    return rc;
}

size_t hrh_judge_root(struct hrh_judge *jg, size_t i)
{
    return pend_root(jg->pend, i);
}

void hrh_judge_finding(struct hrh_judge *c, size_t i,
                               size_t *keys, size_t *nodes, size_t *start)
{
    *keys = *nodes = 0;
    *start = i;
    for (size_t j = i; j < c->npend; j++) {
        size_t k;

        if (!c->pend[j].keep || pend_root(c->pend, j) != i)
            continue;
        (*keys)++;
        for (k = i; k < j; k++) {
            if (c->pend[k].keep && pend_root(c->pend, k) == i &&
                strcmp(c->pend[k].key[0], c->pend[j].key[0]) == 0)
                break;
        }
        *nodes += k == j;
        if (better_start(&c->pend[j], &c->pend[*start]))
            *start = j;
    }
}

int hrh_judged_at_limit(const struct hrh_judged *j,
                                int over)
{
    return j->limited && !over && !(j->detectable <= j->threshold);
}

int hrh_judged_undecided(const struct hrh_judged *j)
{
    return j->by_rounds && j->gated && j->dec.verdict == HRS_DECIDE_UNDECIDED;
}

int hrh_check_init(struct hrh_check *c, const struct hrs_cp_opts *cp,
                   size_t min_history, const struct hrs_limits *limits,
                   double threshold, const struct hra_filter *f,
                   const char *glob, const char *machine,
                   struct hrh_point *p, size_t n)
{
    int rc;

    memset(c, 0, sizeof *c);
    c->machine = machine;
    c->f = f;
    c->glob = glob;
    for (size_t i = 0; i < n; i++)
        p[i].machine = machine;
    rc = hrh_judge_init(&c->jg, cp, min_history, limits, threshold);
    if (rc == 0)
        rc = hrh_judge_run(&c->jg, p, n);
    return rc;
}

void hrh_check_fini(struct hrh_check *c)
{
    hrh_judge_fini(&c->jg);
}

int hrh_check_keep(struct hrh_check *c, const struct hrh_point *p)
{
    if (strcmp(p->machine, c->machine) != 0 ||
        (c->exclude != NULL && strcmp(p->run, c->exclude) == 0))
        return 0;
    c->machine_seen = 1;
    return hrh_match(c->f, c->glob, p);
}

int hrh_check_series(struct hrh_check *c, const struct hrh_series *s,
                     const struct hrh_point **p, struct hrs_cp *res,
                     struct hrh_judged *j, enum hrh_unjudged *why)
{
    int rc;

    if ((*p = hrh_judge_find(&c->jg, s)) == NULL)
        return HRH_CHECK_LATER;
    rc = hrh_judge_point(&c->jg, s, *p, res, j);
    if (rc == HRH_JUDGE_FEW || rc == HRH_JUDGE_SHORT) {
        *why = rc == HRH_JUDGE_FEW ? HRH_UNJUDGED_FEW_RUNS
                                   : HRH_UNJUDGED_TOO_SHORT;
        c->unjudged[*why]++;
        return HRH_CHECK_UNJUDGED;
    }
    if (rc == HRH_JUDGE_SAME)
        return HRH_CHECK_SAME;
    return rc < 0 ? rc : HRH_CHECK_LATER;
}

/* Counts key j with said's verdict. */
static void count_said(struct hrh_check *c, const struct hrh_judged *j,
                       struct hrh_check_said *said)
{
    said->undecided = hrh_judged_undecided(j);
    if (j->by_rounds && (unsigned)j->dec.verdict < HRH_CHECK_VERDICTS)
        c->verdicts[j->dec.verdict]++;
    c->not_judged_limit += said->not_judged != 0;
    c->slower += said->over != 0;
}

void hrh_check_settle(struct hrh_check *c, const struct hrh_judged *j,
                      struct hrh_check_said *said)
{
    said->over = 0;
    said->not_judged = hrh_judged_at_limit(j, 0);
    count_said(c, j, said);
}

void hrh_check_pending(struct hrh_check *c, const struct hrh_pending *p,
                       struct hrh_check_said *said)
{
    said->over = hrh_over_limit(c->jg.limits, p->key[4], &p->res) != NULL;
    /* A limit the check could not have seen broken is not passed. */
    said->not_judged = hrh_judged_at_limit(&p->j, said->over);
    count_said(c, &p->j, said);
}

int hrh_check_said_line(const struct hrh_check_said *said)
{
    return said->not_judged || said->undecided;
}

const struct hrh_point *hrh_check_unseen(struct hrh_check *c, size_t *k,
                                         enum hrh_unjudged *why)
{
    for (; *k < c->jg.n; (*k)++) {
        size_t i = c->jg.order[*k];
        const struct hrh_point *p = &c->jg.p[i];

        if (c->jg.seen[i] || !hrh_match(c->f, c->glob, p))
            continue;
        (*k)++;
        *why = c->machine_seen ? HRH_UNJUDGED_NO_KEY
                               : HRH_UNJUDGED_NO_MACHINE;
        c->unjudged[*why]++;
        return p;
    }
    return NULL;
}

int hrh_check_next_finding(struct hrh_check *c, struct hrh_check_finding *f)
{
    struct hrh_judge *jg = &c->jg;

    for (size_t i = f->number == 0 ? 0 : f->root + 1; i < jg->npend; i++) {
        if (!jg->pend[i].keep || pend_root(jg->pend, i) != i)
            continue;
        f->root = i;
        f->number = ++c->findings;
        hrh_judge_finding(jg, i, &f->keys, &f->nodes, &f->start);
        return 1;
    }
    return 0;
}

int hrh_check_in_finding(struct hrh_check *c, const struct hrh_check_finding *f,
                         size_t i)
{
    return c->jg.pend[i].keep && pend_root(c->jg.pend, i) == f->root;
}

size_t hrh_check_unjudged_total(const struct hrh_check *c)
{
    size_t n = 0;

    for (int i = 0; i < HRH_UNJUDGED_COUNT; i++)
        n += c->unjudged[i];
    return n;
}

size_t hrh_check_refused(const struct hrh_check *c)
{
    /* With min_history, a key of no series has too few runs too. */
    if (c->jg.min_history == 0)
        return 0;
    return c->unjudged[HRH_UNJUDGED_FEW_RUNS] +
           c->unjudged[HRH_UNJUDGED_NO_KEY] +
           c->unjudged[HRH_UNJUDGED_NO_MACHINE];
}

enum hrh_check_verdict hrh_check_verdict(const struct hrh_check *c)
{
    return c->slower > 0                ? HRH_CHECK_SLOWER
           : hrh_check_refused(c) > 0   ? HRH_CHECK_REFUSED
           : c->not_judged_limit > 0    ? HRH_CHECK_NOT_JUDGED
                                        : HRH_CHECK_PASSED;
}
