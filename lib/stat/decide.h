/*
 * The decision of a sequential comparison: rounds added in pairs (one of
 * base, one of new, next to each other in time) until each key is
 * decided. Pure logic, no I/O.
 *
 * A plan looks at the rounds after `first` pairs, then after each pair
 * count of the schedule n(k+1) = max(n(k) + 1, round(n(k) * sqrt 2)),
 * up to `max` pairs, whose count is always the last look (5, 7, 10, 14,
 * 20 for the defaults). At each look with n pairs, on the first n round
 * medians of each side, a key is:
 *   slower or faster  when the fastest-half test (rounds.h) gives
 *                     p < alpha / L, L the number of looks of the plan (a
 *                     Bonferroni split of alpha over the planned looks,
 *                     so that the chance of a false flag over all of them
 *                     stays below alpha), its change is at least the
 *                     key's threshold, and it moved by at least
 *                     HRS_ROUNDS_MIN_STEPS clock steps (its fastest
 *                     halves or its medians, hrs_rounds_moved, by
 *                     hrs_rounds_steps_enough: two whole steps count);
 *   same              when the 95% Hodges-Lehmann interval of the change
 *                     (rounds.h, all n rounds a side) lies inside
 *                     +-threshold, and the threshold of base's fastest
 *                     half spans HRS_ROUNDS_MIN_STEPS clock steps (else
 *                     the clock could not have shown such a change);
 * and undecided otherwise. The first look that decides a key decides it:
 * later rounds do not change its verdict. A key no look decides is
 * undecided, with the figures of its last look.
 */
#ifndef HOSTRANGE_DECIDE_H
#define HOSTRANGE_DECIDE_H

#include <stddef.h>

/* The pairs of a plan when not given: the first look and the most. */
#define HRS_DECIDE_FIRST_DEFAULT 5
#define HRS_DECIDE_MAX_DEFAULT 20

/* The most looks a plan makes. */
#define HRS_DECIDE_LOOKS_MAX 64u

enum hrs_decide_verdict {
    HRS_DECIDE_UNDECIDED = 0,
    HRS_DECIDE_SLOWER,
    HRS_DECIDE_FASTER,
    HRS_DECIDE_SAME,
};

/* The plan: the pairs of the first look and the most pairs (first <=
 * max), and the error rate held over all the looks. */
struct hrs_decide_plan {
    size_t first, max;
    double alpha;
};

/* A key's decision. */
struct hrs_decide {
    enum hrs_decide_verdict verdict;
    size_t pairs;        /* the pairs of the look that decided it (of the
                            last look made when undecided; 0: none) */
    double change;       /* the fastest-half change at that look, in % */
    double p;            /* its p-value */
    double lo, hi;       /* the 95% interval of the change, in % */
};

/* The verdict's word: "slower", "faster", "same" or "undecided". */
const char *hrs_decide_name(enum hrs_decide_verdict v);

/*
 * The pair counts of the plan's looks, ascending, into at[] (room for
 * HRS_DECIDE_LOOKS_MAX); returns how many (0 when first is 0 or above
 * max).
 */
size_t hrs_decide_looks(const struct hrs_decide_plan *plan, size_t *at);

/* The p-value below which one look flags: alpha over the plan's looks. */
double hrs_decide_look_alpha(const struct hrs_decide_plan *plan);

/*
 * The pairs of the plan's first look after `pairs` pairs (the look at
 * exactly `pairs` excluded); 0 when there is none.
 */
size_t hrs_decide_next_look(const struct hrs_decide_plan *plan,
                            size_t pairs);

/*
 * Decides a key from its round medians in time order, base[i] and new[i]
 * those of pair i, `pairs` of them (more than plan->max count as max):
 * every look of the plan up to `pairs` is made, in order, the first that
 * decides giving the verdict. threshold is the key's, in % (its
 * --fail-above limit, else diff's --threshold); step its clock step in ns
 * (0: unknown). Values must be positive. Returns 0 and fills *out (a key
 * with no look yet is undecided with pairs 0), -EINVAL (a value not
 * positive) or -ENOMEM.
 */
int hrs_decide_key(const double *base, const double *new, size_t pairs,
                   double threshold, double step,
                   const struct hrs_decide_plan *plan,
                   struct hrs_decide *out);

/*
 * One look without pairs: base's n values against new's m (a run's
 * rounds against a history's segment), all positive, at alpha (no split:
 * one look), with the rule of a look above. out->pairs is m. Returns 0
 * and fills *out, -EINVAL (an empty side, a value not positive) or
 * -ENOMEM.
 */
int hrs_decide_once(const double *base, size_t n, const double *new,
                    size_t m, double threshold, double step, double alpha,
                    struct hrs_decide *out);

/*
 * Whether a key that a look left undecided is hopeless: whether the
 * looks left to the plan would most likely leave it undecided too, so
 * that it need not keep the comparison going. d is the key's decision
 * after `pairs` pairs (base[i], new[i] its round medians, as for
 * hrs_decide_key), undecided and before the plan's last look. With the
 * noise of its rounds so far (the pooled log standard deviation,
 * detect.h), *at_max is the change the plan's last look could detect
 * (plan->max pairs a side at the alpha of one look, 80% power), never
 * less than hrs_rounds_steps_floor_pct of base's level `level`; the key
 * is hopeless when *at_max is above its threshold and its change so far
 * lies below *at_max. Stopping for it never flags a key, so the error
 * rate held over the looks stays as it is. shift_sd caches
 * hrs_detect_shift_sd for the plan's last look (0: not yet computed; the
 * same for every key of a plan). Returns 1 (hopeless), 0, or -ENOMEM.
 */
int hrs_decide_hopeless(const double *base, const double *new, size_t pairs,
                        double threshold, double step, double level,
                        const struct hrs_decide_plan *plan,
                        const struct hrs_decide *d, double *shift_sd,
                        double *at_max);

#endif
