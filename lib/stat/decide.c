/* The decision of a sequential comparison (see decide.h). */
#include "config.h"

#include "lib/stat/decide.h"

#include "lib/stat/detect.h"
#include "lib/stat/rounds.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *hrs_decide_name(enum hrs_decide_verdict v)
{
    switch (v) {
    case HRS_DECIDE_SLOWER:
        return "slower";
    case HRS_DECIDE_FASTER:
        return "faster";
    case HRS_DECIDE_SAME:
        return "same";
    default:
        return "undecided";
    }
}

size_t hrs_decide_looks(const struct hrs_decide_plan *plan, size_t *at)
{
    size_t n = plan->first, k = 0;

    if (n == 0 || n > plan->max)
        return 0;
    while (k < HRS_DECIDE_LOOKS_MAX - 1 && n < plan->max) {
        size_t next = (size_t)lround((double)n * M_SQRT2);

        at[k++] = n;
        n = next > n + 1 ? next : n + 1;
    }
    at[k++] = plan->max;
    return k;
}

double hrs_decide_look_alpha(const struct hrs_decide_plan *plan)
{
    size_t at[HRS_DECIDE_LOOKS_MAX], k = hrs_decide_looks(plan, at);

    return k > 0 ? plan->alpha / (double)k : 0;
}

size_t hrs_decide_next_look(const struct hrs_decide_plan *plan,
                            size_t pairs)
{
    size_t at[HRS_DECIDE_LOOKS_MAX], k = hrs_decide_looks(plan, at);

    for (size_t i = 0; i < k; i++) {
        if (at[i] > pairs)
            return at[i];
    }
    return 0;
}

/* The verdict of one look at n rounds of base and m of new; fills
 * *out's figures (pairs: m). */
static int look2(const double *base, size_t n, const double *new, size_t m,
                 double threshold, double step, double alpha,
                 struct hrs_decide *out)
{
    struct hrs_rounds_fast f;
    struct hrs_rounds_cmp c;
    double *tmp;
    int rc;

    if ((rc = hrs_rounds_fast_half(base, n, new, m, &f)) != 0)
        return rc;
    /* The interval and the medians, without compare's Mann-Whitney
     * test: the rule does not use it. */
    memset(&c, 0, sizeof c);
    if ((rc = hrs_rounds_interval(base, n, new, m, &c.lo, &c.hi)) != 0)
        return rc;
    if ((tmp = malloc((n > m ? n : m) * sizeof *tmp)) == NULL)
        return -ENOMEM;
    memcpy(tmp, base, n * sizeof *tmp);
    c.base_median = hrs_rounds_median(tmp, n);
    memcpy(tmp, new, m * sizeof *tmp);
    c.new_median = hrs_rounds_median(tmp, m);
    free(tmp);
    out->pairs = m;
    out->change = f.change;
    out->p = f.p;
    out->lo = c.lo;
    out->hi = c.hi;
    if (f.p < alpha && fabs(f.change) >= threshold &&
        hrs_rounds_steps_enough(hrs_rounds_moved(&f, &c), step))
        out->verdict = f.change > 0 ? HRS_DECIDE_SLOWER : HRS_DECIDE_FASTER;
    else if (c.lo > -threshold && c.hi < threshold &&
             hrs_rounds_steps_enough(threshold / 100 * f.base_fast, step))
        /* Same only where the clock could show a change of the
         * threshold: on a 10 ns clock a 20 ns range whose rounds all
         * read 20 has an interval of 0, but a change of 5% is 1 ns. */
        out->verdict = HRS_DECIDE_SAME;
    else
        out->verdict = HRS_DECIDE_UNDECIDED;
    return 0;
}

/* The verdict of one look at n pairs. */
static int look(const double *base, const double *new, size_t n,
                double threshold, double step, double alpha,
                struct hrs_decide *out)
{
    return look2(base, n, new, n, threshold, step, alpha, out);
}

int hrs_decide_once(const double *base, size_t n, const double *new,
                    size_t m, double threshold, double step, double alpha,
                    struct hrs_decide *out)
{
    struct hrs_decide d;
    int rc;

    if (n == 0 || m == 0)
        return -EINVAL;
    memset(&d, 0, sizeof d);
    if ((rc = look2(base, n, new, m, threshold, step, alpha, &d)) != 0)
        return rc;
    *out = d;
    return 0;
}

int hrs_decide_key(const double *base, const double *new, size_t pairs,
                   double threshold, double step,
                   const struct hrs_decide_plan *plan,
                   struct hrs_decide *out)
{
    size_t at[HRS_DECIDE_LOOKS_MAX], k = hrs_decide_looks(plan, at);
    double alpha = hrs_decide_look_alpha(plan);
    struct hrs_decide d;

    memset(&d, 0, sizeof d);
    d.verdict = HRS_DECIDE_UNDECIDED;
    d.p = 1;
    d.lo = -INFINITY;
    d.hi = INFINITY;
    for (size_t i = 0; i < k && at[i] <= pairs; i++) {
        int rc = look(base, new, at[i], threshold, step, alpha, &d);

        if (rc != 0)
            return rc;
        if (d.verdict != HRS_DECIDE_UNDECIDED)
            break;
    }
    *out = d;
    return 0;
}

int hrs_decide_hopeless(const double *base, const double *new, size_t pairs,
                        double threshold, double step, double level,
                        const struct hrs_decide_plan *plan,
                        const struct hrs_decide *d, double *shift_sd,
                        double *at_max)
{
    double sd, floor;

    *at_max = NAN;
    if (d->verdict != HRS_DECIDE_UNDECIDED || d->pairs == 0 ||
        pairs >= plan->max)
        return 0;
    if (*shift_sd == 0)
        *shift_sd = hrs_detect_shift_sd(plan->max, plan->max,
                                        hrs_decide_look_alpha(plan));
    if (isnan(*shift_sd))
        return -ENOMEM;
    sd = hrs_detect_log_sd(base, pairs, new, pairs);
    *at_max = hrs_detect_change(*shift_sd, sd);
    floor = hrs_rounds_steps_floor_pct(step, level);
    if (!(*at_max >= floor))
        *at_max = floor;
    return *at_max > threshold && fabs(d->change) < *at_max;
}
