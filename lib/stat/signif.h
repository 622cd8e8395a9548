/*
 * Significance of a change between two samples: the Mann-Whitney U test and
 * the Hodges-Lehmann shift with its 95% interval. Pure logic, no I/O.
 *
 * A sample is given as its distinct values, ascending, each with a weight
 * (how many times it occurs): exact samples of clock readings repeat the
 * same values a lot (the clock moves in steps), and a histogram is exactly
 * this, its buckets' values with their counts. Everything below works on
 * the distinct values, so its cost follows how many there are, not how
 * many samples were taken.
 *
 * U counts the pairs (base value x, new value y) with y > x, a tie counting
 * one half; it is nm/2 when neither sample tends to be larger. The two-sided
 * p-value comes from U's exact distribution when both samples have fewer
 * than HRS_SIGNIF_EXACT_N values and no value occurs twice (the
 * distribution of U without ties, computed as the coefficients of the
 * Gaussian binomial), and otherwise from the normal approximation with the
 * tie correction of the variance and a continuity correction of 1/2.
 *
 * The Hodges-Lehmann shift is the median of the n*m differences y - x. Its
 * 95% interval is distribution-free: the k-th smallest and the k-th largest
 * differences, with k from U's distribution (its 2.5% quantile, exact or
 * normal as for the p-value; ties are not corrected for there). The
 * differences are never listed: a difference of a given rank is found by
 * searching for its value, each step counting the differences up to a
 * value in one pass over the two sorted samples, so a rank costs a few
 * passes of O(n + m) distinct values (on large samples the rows of a
 * pass are cut into runs that advance side by side without branches; see
 * count_at_chains in signif.c). Each pass is aimed at where the count
 * reaches the rank, at the slope of the counts of the passes nearest it
 * (from a first one at the difference of the middle values), or by
 * interpolation between the bounds, with bisection when that does not
 * halve what is left; a pass that lands within one difference's share of
 * the counts is followed by one that checks whether the bound it moved is
 * the answer, which on data in whole nanoseconds makes about two passes a
 * rank (the check moves each row's position by one value at most, without
 * the runs). The passes made for one rank bound the search for the next;
 * on large samples, U comes from one more pass, at 0, kept for the ranks.
 *
 * Histograms (hist.h): a bucket's values are taken to be its value, the
 * value the bucket stands for (within 0.1% of each of them), so the values
 * in one bucket are ties. The test then sees the data at a resolution of
 * 0.1%: shifts smaller than that cannot be told from none, and the tie
 * correction keeps the p-value honest about it. When either side of a
 * comparison is a histogram, the other side is put in the same buckets
 * first (hrs_signif_bucket), so both are seen at the same resolution.
 */
#ifndef HOSTRANGE_SIGNIF_H
#define HOSTRANGE_SIGNIF_H

#include <stddef.h>
#include <stdint.h>

/* The default significance level of hostrangectl diff and plot --diff:
 * a change is significant when p is below it. */
#define HRS_SIGNIF_ALPHA 0.01

/* Samples smaller than this (both) without ties get exact p-values. */
#define HRS_SIGNIF_EXACT_N 50u

/* A sample: distinct values, ascending, with their weights (>= 1). */
struct hrs_wsample {
    const double *v;
    const uint64_t *w;
    size_t n;        /* distinct values */
    uint64_t total;  /* the sum of the weights */
};

struct hrs_signif {
    double u;        /* U of new over base (pairs y > x, ties one half) */
    double z;        /* the normal approximation's z (0 when exact) */
    double p;        /* two-sided p-value */
    int exact;       /* p and the interval from the exact distribution */
    double shift;    /* Hodges-Lehmann: the median of y - x */
    double lo, hi;   /* its 95% interval */
};

/*
 * Compares new with base. Both must have at least one value. Returns 0 and
 * fills *out, or -ENOMEM (the exact distribution, and the passes on
 * large samples, allocate).
 */
int hrs_signif_compare(const struct hrs_wsample *base,
                       const struct hrs_wsample *new,
                       struct hrs_signif *out);

/*
 * Collapses n values sorted ascending into distinct values v[] with their
 * counts w[] (each array must hold n). Returns how many distinct values.
 */
size_t hrs_signif_collapse(const uint64_t *sorted, size_t n, double *v,
                           uint64_t *w);

/*
 * Puts n values sorted ascending into histogram buckets: writes each
 * non-empty bucket's value (hrs_hist_value) to v[] and its count to w[]
 * (each must hold n). Returns how many buckets.
 */
size_t hrs_signif_bucket(const uint64_t *sorted, size_t n, double *v,
                         uint64_t *w);

/*
 * The value of rank r (from 0) of the n*m weighted differences y - x of two
 * samples. Exposed for tests.
 */
double hrs_signif_diff_rank(const struct hrs_wsample *x,
                            const struct hrs_wsample *y, uint64_t r);

/* The median of a sample (the mean of the two middle values when its total
 * is even). */
double hrs_signif_median(const struct hrs_wsample *s);

#endif
