/*
 * The run-level test of diff: two runs compared by their rounds, not by
 * their samples. Pure logic, no I/O.
 *
 * A round is one independent repetition of the same work in its own
 * processes (hostrangectl record --rounds, ab, or merge of runs of the
 * same keys). Samples within a round share whatever made the whole round
 * fast or slow (the machine's load, frequency, cache and memory layout),
 * so they are not independent draws, and a test over thousands of them
 * reads a whole-round shift as p ~ 1e-90. The rounds are: a key's round
 * medians are the sample of the test.
 *
 * The change is the ratio of the medians of the round medians (new over
 * base). The p-value is the exact two-sided Mann-Whitney test of the round
 * medians, by enumerating every way to split the pooled round medians into
 * groups of the two sizes (ties counted as one half, so it stays exact
 * with ties, as clock-step medians have), when there are at most
 * HRS_ROUNDS_EXACT_SPLITS ways; beyond that, the normal approximation of
 * signif.h. The interval is the Hodges-Lehmann one on the logarithms of
 * the round medians (the median of the pairwise log ratios), at 95%, its
 * bounds the k-th smallest and k-th largest log ratios with k from U's
 * exact distribution without ties; it is unbounded (-inf, +inf) when the
 * rounds are too few for a 95% interval (3 a side).
 *
 * The smallest p the exact test can give is 2 / C(n+m, n): 0.1 with 3
 * rounds a side, 0.029 with 4, 0.0079 with 5, 0.0022 with 6. At the
 * default alpha of 0.01, at least 5 rounds a side are needed to flag.
 */
#ifndef HOSTRANGE_ROUNDS_H
#define HOSTRANGE_ROUNDS_H

#include <stddef.h>

/* The most splits the exact test enumerates (C(20, 10) = 184756). */
#define HRS_ROUNDS_EXACT_SPLITS 200000u

/* The fewest rounds a side for the run-level test. */
#define HRS_ROUNDS_MIN 3

/* diff flags no change smaller than this many clock steps of the key,
 * whatever its p. */
#define HRS_ROUNDS_MIN_STEPS 2

/* The part of a step by which a change may fall short of
 * HRS_ROUNDS_MIN_STEPS steps and still count as that many: a run's clock
 * step is the largest step its clients observed (10.0149 ns on a TSC of
 * 10 ns steps), and medians in whole ns move by whole nominal steps, so a
 * change of exactly two steps (20 ns to 40 ns) reads as a little less
 * than two measured steps. Half steps (a median of an even count) stay
 * below the rule. */
#define HRS_ROUNDS_STEP_SLACK 0.25

/* The result of comparing the round medians of two runs. */
struct hrs_rounds_cmp {
    double base_median;  /* the median of base's round medians */
    double new_median;   /* the median of new's */
    double change;       /* 100 * (new_median / base_median - 1), in % */
    double u;            /* U of new over base (ties one half) */
    double p;            /* two-sided p-value */
    int exact;           /* p from the exact distribution */
    double lo, hi;       /* 95% interval of the ratio, in % change
                            (-inf, +inf when unbounded) */
    double spread_base;  /* (max - min) / median of base's round medians,
                            in % */
    double spread_new;
};

/*
 * The median of v[0..n) (the mean of the two middle values when n is
 * even); v is sorted in place. NaN when n is 0.
 */
double hrs_rounds_median(double *v, size_t n);

/* The spread of v[0..n) in %: (max - min) / median * 100 (0 when n < 2
 * or the median is not positive); v is sorted in place. */
double hrs_rounds_spread(double *v, size_t n);

/*
 * The exact two-sided Mann-Whitney p-value of x[0..n) against y[0..m):
 * the share of the C(n+m, n) splits of the pooled values whose U is at
 * least as far from nm/2 as the observed one. Returns it, and U (of y
 * over x) in *u when u is not NULL; -1 when there are more splits than
 * HRS_ROUNDS_EXACT_SPLITS or either side is empty.
 */
double hrs_rounds_mwu_exact(const double *x, size_t n, const double *y,
                            size_t m, double *u);

/*
 * k for the 95% Hodges-Lehmann interval of n and m values: the largest k
 * with P(U <= k - 1) <= 0.025 under U's exact distribution without ties
 * (0: no such k, the interval is unbounded). n and m at most 64.
 */
unsigned hrs_rounds_hl_k(size_t n, size_t m);

/*
 * Whether a change of `moved` (ns, its absolute value) is large enough to
 * be flagged on a clock of `step` ns (0: unknown, any change is): at
 * least HRS_ROUNDS_MIN_STEPS steps, less HRS_ROUNDS_STEP_SLACK of one.
 */
int hrs_rounds_steps_enough(double moved, double step);

/*
 * The smallest change, in % of a level of `base` ns, that
 * hrs_rounds_steps_enough lets through on a clock of `step` ns:
 * 100 * (HRS_ROUNDS_MIN_STEPS - HRS_ROUNDS_STEP_SLACK) * step / base, so
 * that a change of exactly two whole steps lies above it (0 when the step
 * is unknown or base not positive). The floor of a detectable change:
 * no change below it can be flagged, one of two whole steps can.
 */
double hrs_rounds_steps_floor_pct(double step, double base);

/* The random splits of the fastest-half test when there are more than
 * HRS_ROUNDS_EXACT_SPLITS. */
#define HRS_ROUNDS_FAST_DRAWS 20000u

/*
 * The fastest-half test: the test of diff's run-level flags, built for
 * rounds that land on a fast or a slow mode (a process's layout, its
 * neighbours): a minority of slow rounds on either side moves neither
 * its statistic nor its change. The statistic is the mean of the
 * logarithms of the fastest half of new's round medians (the
 * ceil(m / 2) smallest) less that of base's (ceil(n / 2)); the change is
 * its exponential, in %. The two-sided p-value is that of the
 * permutation test of the statistic: the share of the C(n+m, n) splits of
 * the pooled round medians whose statistic is at least as far from 0 as
 * the observed one, every split when there are at most
 * HRS_ROUNDS_EXACT_SPLITS (the smallest p is then 2 / C(n+m, n), as for
 * the Mann-Whitney test), else HRS_ROUNDS_FAST_DRAWS splits drawn from a
 * fixed pseudo-random sequence (the same p on every run), p = (hits + 1)
 * / (draws + 1).
 */
struct hrs_rounds_fast {
    double base_fast;    /* the geometric mean of base's fastest half */
    double new_fast;     /* of new's */
    double change;       /* 100 * (new_fast / base_fast - 1), in % */
    double p;            /* two-sided permutation p-value */
    int exact;           /* p by enumerating every split */
};

/* How many of n round medians are the fastest half: ceil(n / 2). */
size_t hrs_rounds_fast_count(size_t n);

/*
 * The fastest-half test of x[0..n) (base) against y[0..m) (new), all
 * positive, n and m at least 1. Returns 0 and fills *out, -EINVAL (an
 * empty side, a value not positive) or -ENOMEM.
 */
int hrs_rounds_fast_half(const double *x, size_t n, const double *y,
                         size_t m, struct hrs_rounds_fast *out);

/*
 * How far a key moved, in ns, for the two-step rule
 * (hrs_rounds_steps_enough) of a run-level comparison: the difference of
 * the fastest halves' geometric means (f), or of the medians of the round
 * medians (c) when that is larger and in the same direction. Round
 * medians move by whole clock steps, but a geometric mean over rounds
 * that read 50 and 60 ns does not: a self row whose rounds went from 40
 * ns to 60 ns in all but one round (its median two whole steps up) is
 * two steps slower, not 1.7.
 */
double hrs_rounds_moved(const struct hrs_rounds_fast *f,
                        const struct hrs_rounds_cmp *c);

/*
 * The 95% Hodges-Lehmann interval of hrs_rounds_compare alone, in %
 * change, into *lo and *hi (-inf, +inf when unbounded), without the
 * Mann-Whitney test (whose enumeration of the splits is most of
 * compare's time). Values must be positive. Returns 0 or -ENOMEM.
 */
int hrs_rounds_interval(const double *x, size_t n, const double *y, size_t m,
                        double *lo, double *hi);

/*
 * Compares the round medians of base (x, n of them) and new (y, m). Both
 * must be positive values, n and m at least 1. Returns 0 and fills *out,
 * or -ENOMEM.
 */
int hrs_rounds_compare(const double *x, size_t n, const double *y, size_t m,
                       struct hrs_rounds_cmp *out);

#endif
