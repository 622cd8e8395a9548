/*
 * Change points of a series: where the level of a range's runs moved, and
 * whether one new run is slower than the level of its series. A point is
 * one run's median (run-to-run noise is what matters; the samples within
 * a run are not counted). Pure logic, no I/O: the same series always gives
 * the same answer.
 *
 * Detection is E-divisive means (Matteson and James, 2014) with Student's
 * t test of significance, as Otava (formerly hunter) uses it, made robust
 * by winsorizing: within a segment the points are the logarithms of the
 * values, each clipped to within 3 robust standard deviations (the median
 * absolute deviation, scaled) of the segment's median, so that one
 * outlying run weighs as a run 3 deviations off; the split is where the
 * energy statistic of the two sides (alpha 1) is largest, each side
 * holding at least `window` points; it is kept when Student's t test of
 * the two sides gives a p-value that, multiplied by the number of places
 * the split could have been (Bonferroni), is at most alpha, their medians
 * differ by at least min_change, and each side holds at least `window`
 * points nearer its own level (median) than the other's: a level that
 * fewer than `window` runs hold, a single spike first, is no change. Kept
 * splits are searched again on either side (binary segmentation) until
 * none is kept.
 *
 * The test says that the levels differ; the likelihood says at which run.
 * A kept split is placed on the logarithms of the values, by the
 * likelihood of a step between two normal levels (the sides' medians, the
 * noise their median absolute deviation, each run's weight clipped so
 * that one outlier does not pull it): at the likeliest run when it holds
 * 99% of the likelihood, else at the later run of the likeliest pair of
 * neighbouring runs, so that the step is at the named run or the one
 * before it. Once all changes are found, each is placed again between its
 * neighbours. Costs O(m^2) per segment of m points, O(k n^2) for a series
 * of n points and k changes.
 *
 * A series shorter than 2 x window has no change point; a change smaller
 * than the noise of the runs is not found.
 *
 * The clock step. Run medians are read off a clock that counts in steps
 * (10 ns on some machines), so a series of 20-30 ns self times moves by
 * whole steps without any change of the code. Given the step of the
 * series' machine (hrs_cp_clock_step estimates it from the machine's
 * values), no change of fewer than HRS_CP_MIN_STEPS steps between the two
 * medians is kept (the floor that diff has), and the noise of the t test
 * is at least the noise that rounding to the step adds (a uniform error of
 * one step, on the logarithms): two constant sides one or two steps apart
 * are no longer infinitely sure.
 *
 * The tail check (opts.tail, for a series whose points are single samples,
 * as a cold row's are: one sample a run, now and then an outlier several
 * times as slow). A split's p is then at least the chance that as many of
 * its shorter side's points as do lie beyond a line a quarter of the way
 * from the longer side's level to theirs would by outliers alone (the
 * binomial tail, each point beyond with the share of the longer side's
 * points beyond it, counted as (j + 1) / (n + 2) for j of n): a level of a
 * few runs is no surer than its outliers are rare. Without it (a point
 * that is a median of many samples), the t test alone judges.
 */
#ifndef HOSTRANGE_CHANGEPOINT_H
#define HOSTRANGE_CHANGEPOINT_H

#include <stddef.h>

/* The defaults of hostrangectl history (its --help and man page state
 * them; test_man.sh compares). */
#define HRS_CP_ALPHA_DEFAULT 0.01
#define HRS_CP_WINDOW_DEFAULT 3
/* The largest --window taken (hostrangectl's message names it). */
#define HRS_CP_WINDOW_MAX 100000
#define HRS_CP_MIN_CHANGE_DEFAULT 0.0
/* No change smaller than this many clock steps is kept (as diff's
 * HRS_ROUNDS_MIN_STEPS). */
#define HRS_CP_MIN_STEPS 2

struct hrs_cp_opts {
    double alpha;      /* significance level of a split, in (0, 1] */
    double min_change; /* the smallest |after / before - 1| kept (0: any) */
    size_t window;     /* the fewest points on either side (at least 1) */
    double step;       /* the clock step of the series, ns (0: unknown) */
    int tail;          /* its points are single samples: the tail
                          check (see above) */
};

/* A change point: the series moves from before to after at point `at`
 * (the first point after the change). before and after are the medians of
 * the segments either side of it (of the final segmentation), change is
 * after / before - 1, and p the Bonferroni-adjusted p-value of the test
 * that kept it (0 when both sides are constant). */
struct hrs_cp {
    size_t at;
    double before;
    double after;
    double change;
    double p;
};

/*
 * Finds the change points of x[0..n) (positive values, in run order) and
 * writes at most cap of them to out, in series order. Returns their number
 * (those beyond cap not written), or -ENOMEM.
 */
int hrs_cp_detect(const double *x, size_t n, const struct hrs_cp_opts *o,
                  struct hrs_cp *out, size_t cap);

/*
 * Tests whether x is slower (larger) than the segment seg[0..m): the
 * one-sided p-value of x under a Student's t prediction interval around
 * the segment's median, its spread the median absolute deviation (scaled
 * to a standard deviation), on the logarithms of the values. Fills out
 * (at 0, before the segment's median, after x). Returns 0, or -EINVAL
 * when m < 2 (no spread to judge by).
 */
int hrs_cp_check(const double *seg, size_t m, double x, struct hrs_cp *out);

/*
 * The change in % that hrs_cp_check on the segment seg[0..m) would flag
 * (p < alpha) with probability `power`: the shift of the logarithm, in
 * the test's own spread, by which the value's t reaches the (1 - alpha)
 * quantile of Student's t with m - 1 degrees of freedom at the power's
 * quantile (the value's noise taken as the segment's). 0 when the
 * segment has no spread; NaN when m < 2, alpha or power is not in (0, 1),
 * or out of memory.
 */
double hrs_cp_check_detectable(const double *seg, size_t m, double alpha,
                               double power);

/*
 * The clock step, in ns, that the values v[0..n) (run medians of one
 * machine, in ns) were read with: the largest g such that every value is
 * a whole multiple of g / 2 (a median of an even count is the mean of two
 * steps), counted as g when fewer than a quarter of the values fall on
 * the half steps, else g / 2 (values on a finer grid). Returns 0 when the
 * values are on no grid of at least 0.5 ns (more than 1% of them off it),
 * or n is 0.
 */
double hrs_cp_clock_step(const double *v, size_t n);

/* The median of x[0..n) (sorted copy in tmp, n of them). */
double hrs_cp_median(const double *x, size_t n, double *tmp);

/* P(T <= t) for Student's t with df degrees of freedom. */
double hrs_cp_student_cdf(double t, double df);

#endif
