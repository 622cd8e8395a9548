/* Two run files compared key by key: their populations paired as they are
 * read, each pair tested, each row judged (see rundiff.h). */
#include "config.h"

#include "lib/run/rundiff.h"
#include "lib/agg/observer.h"
#include "lib/stat/detect.h"
#include "lib/stat/hist.h"
#include "proto/protocol.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_report(const void *pa, const void *pb)
{
    const struct hrr_diff_pop *x = pa, *y = pb;
    uint32_t a[6] = { x->node_rank, x->phase, !x->scopes, x->range_rank,
                      x->order, x->metric };
    uint32_t b[6] = { y->node_rank, y->phase, !y->scopes, y->range_rank,
                      y->order, y->metric };

    for (int i = 0; i < 6; i++) {
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

static int cmp_name(const struct hrr_diff_pop *x, const struct hrr_diff_pop *y)
{
    int c;

    if ((c = strcmp(x->node, y->node)) != 0 ||
        (c = strcmp(x->op, y->op)) != 0 ||
        (c = strcmp(x->backend, y->backend)) != 0 ||
        (c = strcmp(x->range, y->range)) != 0)
        return c;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    return x->metric < y->metric ? -1 : x->metric > y->metric;
}

/* Puts a population's distinct values into histogram buckets. */
static void bucket(struct hrr_diff_pop *p)
{
    if (!p->hist)
        p->n = hrs_hist_bucket_weighted(p->v, p->w, p->n);
}

/* Whether the population's row is unstable (observer.h), by calibration c. */
static int unstable(const struct hrr_diff_pop *p, const Hostrange__Calibration *c)
{
    struct hra_calib cal;
    struct hra_row row = { 0 };

    if (c == NULL)
        return 0;
    hra_calib_from_message(&cal, c);
    row.metric = hrp_metric_name(p->metric);
    row.median = p->median;
    row.calls = p->metric == HRP_METRIC_INCLUSIVE && !p->scopes ? 0 : p->calls;
    HRA_KEY_ROW_COUNTERS_COPY(&row, p);
    hra_observer_apply(&row, &cal, 0);
    return row.observer_known && row.unstable;
}

/*
 * Populations waiting for their counterpart in the other file. Both files
 * are read a key at a time, in turn; a population whose counterpart has
 * been read already is compared at once and both give back their values,
 * so that files whose keys come in about the same order (the usual case)
 * are compared holding a few keys, not two whole runs.
 */
struct waiting {
    struct slot {
        uint64_t hash;
        size_t idx;
        int side;    /* 0 base, 1 new; -1 empty, -2 a removed entry */
    } *s;
    size_t cap, used;  /* used counts removed entries too */
};

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t pop_hash(const struct hrr_diff_pop *p)
{
    uint64_t h = 0xcbf29ce484222325ull;

    h = hash_str(h, p->node);
    h = hash_str(h, p->op);
    h = hash_str(h, p->backend);
    h = hash_str(h, p->range);
    return (h ^ (p->phase << 2 | p->metric)) * 0x100000001b3ull;
}

/* Makes room: drops the removed entries, and doubles the table when more
 * than a quarter of it waits. Returns 0 or -ENOMEM. */
static int waiting_grow(struct waiting *t)
{
    size_t live = 0, cap;
    struct slot *ns;

    for (size_t i = 0; i < t->cap; i++)
        live += t->s[i].side >= 0;
    cap = t->cap == 0 ? 1024 : 4 * (live + 1) > t->cap ? 2 * t->cap : t->cap;
    ns = malloc(cap * sizeof *ns);

    if (ns == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < cap; i++)
        ns[i].side = -1;
    t->used = 0;
    for (size_t i = 0; i < t->cap; i++) {
        size_t at;

        if (t->s[i].side < 0)
            continue;
        for (at = t->s[i].hash & (cap - 1); ns[at].side != -1;
             at = (at + 1) & (cap - 1))
            ;
        ns[at] = t->s[i];
        t->used++;
    }
    free(t->s);
    t->s = ns;
    t->cap = cap;
    return 0;
}

/* Compares base population b with new population n and lets both give
 * back their values. Returns 0 or -ENOMEM. */
static int compare_pair(struct hrr_diff_pop *b, struct hrr_diff_pop *n)
{
    int rc;

    if (b->hist || n->hist) {
        bucket(b);
        bucket(n);
    }
    rc = hrs_signif_compare(&(struct hrs_wsample){ b->v, b->w, b->n,
                                                   b->total },
                            &(struct hrs_wsample){ n->v, n->w, n->n,
                                                   n->total },
                            &b->s);
    if (rc != 0)
        return rc;
    b->matched = n->matched = 1;
    b->partner = n->id;
    free(b->v);
    free(b->w);
    free(n->v);
    free(n->w);
    b->v = n->v = NULL;
    b->w = n->w = NULL;
    return 0;
}

/* Pairs the populations sides[which]->p[first..) with those waiting from
 * the other side (comparing each pair), and puts the others to wait.
 * Returns 0 or -ENOMEM. */
static int pair_up(struct hrr_diff_side *const sides[2], int which, size_t first,
                   struct waiting *t)
{
    struct hrr_diff_side *s = sides[which], *o = sides[!which];
    int rc;

    for (size_t i = first; i < s->n; i++) {
        struct hrr_diff_pop *p = &s->p[i];
        uint64_t h = pop_hash(p);
        size_t at, free_at = SIZE_MAX;

        for (at = t->cap ? h & (t->cap - 1) : 0;
             t->cap > 0 && t->s[at].side != -1; at = (at + 1) & (t->cap - 1)) {
            struct slot *e = &t->s[at];

            if (e->side == -2) {
                if (free_at == SIZE_MAX)
                    free_at = at;
                continue;
            }
            if (e->side == !which && e->hash == h &&
                cmp_name(&o->p[e->idx], p) == 0)
                break;
        }
        if (t->cap > 0 && t->s[at].side != -1) {
            struct hrr_diff_pop *other = &o->p[t->s[at].idx];

            t->s[at].side = -2;
            rc = compare_pair(which ? other : p, which ? p : other);
            if (rc != 0)
                return rc;
            continue;
        }
        if (free_at == SIZE_MAX) {
            if (2 * (t->used + 1) > t->cap) {
                if ((rc = waiting_grow(t)) != 0)
                    return rc;
                for (at = h & (t->cap - 1); t->s[at].side != -1;
                     at = (at + 1) & (t->cap - 1))
                    ;
            }
            free_at = at;
            t->used++;
        }
        t->s[free_at] = (struct slot){ h, i, which };
    }
    return 0;
}



int hrr_rundiff_read(struct hrr_diff_side *base, struct hrr_diff_side *new,
                     hrr_rundiff_progress_fn progress, void *ctx, char *err,
                     size_t errlen)
{
    struct hrr_diff_side *const sides[2] = { base, new };
    uint64_t size = base->r.size + new->r.size;
    struct waiting wait = { NULL, 0, 0 };
    int rc = 0;

    while (rc == 0 && (!base->ended || !new->ended)) {
        progress(ctx, base->r.offset + new->r.offset, size, 0);
        for (int which = 0; which < 2 && rc == 0; which++) {
            size_t first = sides[which]->n;

            if (sides[which]->ended)
                continue;
            rc = hrr_runside_next(sides[which], err, errlen);
            if (rc == 0)
                rc = pair_up(sides, which, first, &wait);
        }
    }
    if (rc == 0)
        progress(ctx, size, size, 1);
    free(wait.s);
    return rc;
}

/* What judging a row needs besides the options: each side's rounds and
 * clock step (0: unknown), and room for a key's round medians. */
struct judging {
    struct hrr_round_index idx[2];
    double step[2];
    double *med[2];
    double *norm[2];   /* --normalize: room for the normalized medians */
    double *tmp;       /* room for a copy of a side's medians */
    size_t cap;
    size_t shift_n[2]; /* the rounds of the last detectable shift (0: none) */
    double shift_sd;   /* its shift in standard deviations (detect.h) */
    double max_shift_sd; /* the shift at the plan's most pairs a side and
                            its look's alpha (0: not yet computed) */
};

/*
 * The smallest change the row's run-level test could have flagged, in %
 * of the base: the change the rounds' noise lets the test see at alpha
 * with HRS_DETECT_POWER (detect.h), and never less than
 * HRS_ROUNDS_MIN_STEPS clock steps. NaN when out of memory.
 */
static double detectable(struct hrr_rundiff_row *r,
                         const struct hrr_rundiff_opts *o,
                         struct judging *j, const size_t nr[2], double step)
{
    double change, floor;

    if (j->shift_n[0] != nr[0] || j->shift_n[1] != nr[1]) {
        j->shift_sd = hrs_detect_shift_sd(nr[0], nr[1], o->alpha);
        j->shift_n[0] = nr[0];
        j->shift_n[1] = nr[1];
    }
    change = hrs_detect_change(j->shift_sd, hrs_detect_log_sd(
                                   j->med[0], nr[0], j->med[1], nr[1]));
    floor = hrs_rounds_steps_floor_pct(step, r->rc.base_median);
    return change > floor ? change : floor;
}

/* The clock step of a key: the runs' (the larger), else the smallest gap
 * between the values of either side. */
static double key_step(const struct judging *j, const struct hrr_diff_pop *b,
                       const struct hrr_diff_pop *n)
{
    double st = j->step[0] > j->step[1] ? j->step[0] : j->step[1];

    if (st > 0)
        return st;
    st = isfinite(b->step) ? b->step : 0;
    if (isfinite(n->step) && (st == 0 || n->step < st))
        st = n->step;
    return st;
}

/*
 * --normalize: replaces the row's round medians (j->med, nr of them a
 * side) by each round's median divided by the same round's median of the
 * control range, scaled so that the base's median of them is the base's
 * median of its round medians (the new side then reads as ns at the
 * base's control speed). Only when both sides have the control in
 * HRS_ROUNDS_MIN rounds or more; the control's own row stays as it is.
 */
static void normalize(struct hrr_rundiff_row *r,
                      const struct hrr_rundiff_opts *o,
                      struct judging *j, size_t nr[2])
{
    const struct hrr_diff_pop *k[2] = { r->b, r->n };
    size_t nn[2];
    double raw, scaled;

    if (o->normalize == NULL || (strcmp(r->b->range, o->normalize) == 0 &&
                                 r->b->metric == HRP_METRIC_INCLUSIVE))
        return;
    for (int i = 0; i < 2; i++) {
        nn[i] = hrr_round_medians_normalized(
            &j->idx[i], k[i]->node, k[i]->op, k[i]->backend, k[i]->phase,
            k[i]->range, k[i]->metric, o->normalize, j->norm[i], j->cap);
        if (nn[i] < HRS_ROUNDS_MIN)
            return;
    }
    /* The medians of copies: the rounds keep their order (pairs). */
    memcpy(j->tmp, j->med[0], nr[0] * sizeof *j->tmp);
    raw = hrs_rounds_median(j->tmp, nr[0]);
    memcpy(j->tmp, j->norm[0], nn[0] * sizeof *j->tmp);
    scaled = hrs_rounds_median(j->tmp, nn[0]);
    if (!(raw > 0) || !(scaled > 0))
        return;
    for (int i = 0; i < 2; i++) {
        for (size_t m = 0; m < nn[i]; m++)
            j->med[i][m] = j->norm[i][m] * raw / scaled;
        nr[i] = nn[i];
        r->rounds[i] = nn[i];
    }
    r->normalized = 1;
}

/*
 * --max-rounds: the row's verdict as a sequential comparison of its
 * rounds in pairs (decide.h), at its --fail-above limit l, else at
 * --threshold. A key is gated when --fail-above names it, or when there
 * is no --fail-above. Returns 0 or a negative errno.
 */
static int decide(struct hrr_rundiff_row *r, const struct hrr_rundiff_opts *o,
                  struct judging *j, const size_t nr[2], double step,
                  const struct hrs_limit *l)
{
    size_t pairs = nr[0] < nr[1] ? nr[0] : nr[1];
    double threshold = l != NULL ? l->pct : o->threshold;
    int rc = hrs_decide_key(j->med[0], j->med[1], pairs, threshold, step,
                            &o->plan, &r->dec);

    if (rc == -EINVAL) {
        /* A round median of 0: undecided. */
        memset(&r->dec, 0, sizeof r->dec);
        r->dec.verdict = HRS_DECIDE_UNDECIDED;
        rc = 0;
    }
    if (rc != 0)
        return rc;
    r->decided = 1;
    r->gated = o->limits.n == 0 || l != NULL;
    r->hopeless = 0;
    r->at_max = NAN;
    r->max_pairs = o->plan.max;
    if (r->dec.verdict == HRS_DECIDE_UNDECIDED) {
        /* Hopeless: more pairs would likely leave it undecided. */
        int h = hrs_decide_hopeless(j->med[0], j->med[1], pairs, threshold,
                                    step, r->rc.base_median, &o->plan,
                                    &r->dec, &j->max_shift_sd, &r->at_max);

        if (h < 0)
            return h;
        r->hopeless = h;
    }
    return 0;
}

/* The outcome of a compared row: its change, its flag under the options
 * (a key slower than its --fail-above limit is flagged too), and whether
 * it is quantized (observer.h). With HRS_ROUNDS_MIN rounds or more a
 * side, the test is the run-level one (rounds.h). No change of less than
 * HRS_ROUNDS_MIN_STEPS clock steps is flagged. Returns 0 or -ENOMEM. */
static int judge(struct hrr_rundiff_row *r, const struct hrr_rundiff_opts *o,
                 struct judging *j, size_t *flagged)
{
    const struct hrr_diff_pop *b = r->b;
    const struct hrs_limit *l = hrs_limits_find(&o->limits, b->range);
    const struct hrs_limit *w = hrs_limits_find(&o->warn, b->range);
    double p, moved, step = key_step(j, b, r->n);
    size_t nr[2];

    for (int i = 0; i < 2; i++) {
        const struct hrr_diff_pop *k = i == 0 ? b : r->n;

        nr[i] = hrr_round_medians(&j->idx[i], k->node, k->op,
                                      k->backend, k->phase, k->range,
                                      k->metric, j->med[i], j->cap);
        r->rounds[i] = nr[i] > 0 ? nr[i] : 1;
    }
    r->s = b->s;
    if (r->rounds[0] >= HRS_ROUNDS_MIN && r->rounds[1] >= HRS_ROUNDS_MIN)
        normalize(r, o, j, nr);
    if (r->rounds[0] >= HRS_ROUNDS_MIN && r->rounds[1] >= HRS_ROUNDS_MIN) {
        int rc = hrs_rounds_compare(j->med[0], nr[0], j->med[1], nr[1],
                                    &r->rc);

        if (rc != 0)
            return rc;
        rc = hrs_rounds_fast_half(j->med[0], nr[0], j->med[1], nr[1],
                                  &r->fast);
        if (rc == -EINVAL) {
            /* A round median of 0 has no logarithm: the medians' ratio
             * and the Mann-Whitney test of the round medians instead. */
            r->fast = (struct hrs_rounds_fast){ r->rc.base_median,
                                                r->rc.new_median,
                                                r->rc.change, r->rc.p,
                                                r->rc.exact };
            rc = 0;
        }
        if (rc != 0)
            return rc;
        r->run_level = 1;
        r->change = r->fast.change;
        p = r->fast.p;
        moved = hrs_rounds_moved(&r->fast, &r->rc);
        if (o->plan.max > 0 && (rc = decide(r, o, j, nr, step, l)) != 0)
            return rc;
        r->detectable = detectable(r, o, j, nr, step);
    } else {
        r->detectable = NAN;
        r->change = b->median > 0 ? 100 * r->s.shift / b->median
                                  : (r->s.shift == 0 ? 0 : INFINITY);
        p = r->s.p;
        moved = fabs(r->n->median - b->median);
        if (fabs(r->s.shift) > moved)
            moved = fabs(r->s.shift);
    }
    r->refused = o->min_rounds > 0 && (r->rounds[0] < o->min_rounds ||
                                       r->rounds[1] < o->min_rounds);
    if (r->decided) {
        /* The verdict of the sequential comparison is the flag. */
        int sl = r->dec.verdict == HRS_DECIDE_SLOWER;

        if (!r->refused && (sl || r->dec.verdict == HRS_DECIDE_FASTER)) {
            r->flag = sl ? "slower" : "faster";
            (*flagged)++;
        }
        r->over = !r->refused && sl && l != NULL && r->dec.change > l->pct;
        r->warn = !r->refused && !r->over && sl && w != NULL &&
                  r->dec.change > w->pct;
    } else if (!r->refused && hrs_rounds_steps_enough(moved, step)) {
        r->over = l != NULL && p < o->alpha && r->change > l->pct;
        r->warn = !r->over && w != NULL && p < o->alpha &&
                  r->change > w->pct;
        if (r->over || r->warn ||
            (p < o->alpha && fabs(r->change) >= o->threshold)) {
            r->flag = r->change > 0 ? "slower" : "faster";
            (*flagged)++;
        }
    }
    /* A limit the comparison could not have seen broken is not passed. */
    r->not_judged = !r->refused && !r->over && l != NULL && r->run_level &&
                    !r->decided && !(r->detectable <= l->pct);
    r->undecided = !r->refused && r->gated &&
                   r->dec.verdict == HRS_DECIDE_UNDECIDED;
    r->quantized =
        (isfinite(b->step) && b->median <= HRA_QUANTIZED_STEPS * b->step) ||
        (isfinite(r->n->step) &&
         r->n->median <= HRA_QUANTIZED_STEPS * r->n->step);
    return 0;
}

int hrr_rundiff_rows(struct hrr_diff_side *base, struct hrr_diff_side *new,
                     const struct hrr_rundiff_opts *o,
                     struct hrr_rundiff_row **rows, size_t *nrows,
                     size_t *flagged)
{
    size_t *at = malloc((new->n + 1) * sizeof *at);
    struct hrr_rundiff_row *r = calloc(base->n + new->n + 1, sizeof *r);
    struct hrr_diff_side *sides[2] = { base, new };
    struct judging j;
    size_t n = 0;
    int rc = 0;

    memset(&j, 0, sizeof j);
    for (int i = 0; i < 2; i++) {
        const Hostrange__RunHeader *h = sides[i]->header;
        size_t cap = sides[i]->end->rounds;

        if (hrr_round_index_init(&j.idx[i], sides[i]->end) != 0)
            rc = -ENOMEM;
        j.step[i] = h->fingerprint ? h->fingerprint->clock_step_ns : 0;
        if (cap > j.cap)
            j.cap = cap;
    }
    for (int i = 0; i < 2; i++) {
        j.med[i] = malloc((j.cap + 1) * sizeof *j.med[i]);
        j.norm[i] = malloc((j.cap + 1) * sizeof *j.norm[i]);
    }
    j.tmp = malloc((j.cap + 1) * sizeof *j.tmp);
    if (at == NULL || r == NULL || j.med[0] == NULL || j.med[1] == NULL ||
        j.tmp == NULL ||
        j.norm[0] == NULL || j.norm[1] == NULL || rc != 0) {
        rc = -ENOMEM;
        goto out;
    }
    /* A side with no keys has no array (qsort takes none). */
    if (base->n > 1)
        qsort(base->p, base->n, sizeof *base->p, cmp_report);
    if (new->n > 1)
        qsort(new->p, new->n, sizeof *new->p, cmp_report);
    for (size_t i = 0; i < new->n; i++)
        at[new->p[i].id] = i;
    *flagged = 0;
    for (size_t i = 0; i < base->n; i++) {
        struct hrr_rundiff_row *x = &r[n++];

        x->b = &base->p[i];
        if (!x->b->matched)
            continue;
        x->n = &new->p[at[x->b->partner]];
        if ((rc = judge(x, o, &j, flagged)) != 0)
            goto out;
        x->unstable = unstable(x->b, base->cal) || unstable(x->n, new->cal);
    }
    for (size_t i = 0; i < new->n; i++) {
        if (!new->p[i].matched)
            r[n++].n = &new->p[i];
    }
    *rows = r;
    *nrows = n;
    r = NULL;
out:
    for (int i = 0; i < 2; i++) {
        hrr_round_index_fini(&j.idx[i]);
        free(j.med[i]);
        free(j.norm[i]);
    }
    free(j.tmp);
    free(at);
    free(r);
    return rc;
}
