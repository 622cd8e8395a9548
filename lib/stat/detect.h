/*
 * The smallest change a run-level comparison could have shown. Pure logic,
 * no I/O.
 *
 * A key that diff does not flag may be unchanged, or too noisy (or
 * measured in too few rounds) for a change of the size that matters to
 * show. The detectable change tells the two apart: the change in % that
 * the run-level test of rounds.h (the fastest-half test of the round
 * medians, hrs_rounds_fast_half) would flag as slower at the given alpha
 * with probability HRS_DETECT_POWER, given the comparison's own noise and
 * numbers of rounds.
 *
 * The noise is the pooled standard deviation of the logarithms of the
 * round medians, each side about its own mean (n + m - 2 degrees of
 * freedom): a minority of slow-mode rounds raises it, so the figure errs
 * on the side of saying less is detectable. The power is estimated on
 * normal log round medians shifted by d standard deviations, drawn from a
 * fixed pseudo-random sequence (so the figure is the same on every run
 * and every machine), the same draws at every d. With few splits (C(n+m,
 * n) up to 4000: 7 a side) it is the test's own rejection rule, p <
 * alpha by enumerating the splits of each of 1000 draws, and the shift is
 * the smallest d, to 1/1024 of a standard deviation, at which the power
 * reaches HRS_DETECT_POWER; beyond, it is the statistic's critical value
 * under normal noise, its (1 - alpha) quantile in absolute value over
 * HRS_DETECT_DRAWS unshifted draws, less its (1 - HRS_DETECT_POWER)
 * quantile. When the test cannot reach alpha at all with n and m rounds
 * (its smallest p, 2 / C(n+m, n) with n = m, is not below alpha), no
 * change is detectable: the figure is +inf.
 */
#ifndef HOSTRANGE_DETECT_H
#define HOSTRANGE_DETECT_H

#include <stddef.h>

/* The power at which a change counts as detectable. */
#define HRS_DETECT_POWER 0.8

/* The draws of the power's estimate. */
#define HRS_DETECT_DRAWS 20000u

/* The most rounds a side the estimate takes (more count as this many). */
#define HRS_DETECT_MAX_ROUNDS 64u

/*
 * The shift of the log round medians, in standard deviations, that the
 * run-level test flags as slower with power HRS_DETECT_POWER at alpha,
 * with n base and m new rounds: +inf when the test cannot reach alpha, or
 * n or m is below 2; NaN when out of memory.
 */
double hrs_detect_shift_sd(size_t n, size_t m, double alpha);

/*
 * The pooled standard deviation of the logarithms of x[0..n) and y[0..m),
 * each about its own mean. All values must be positive; NaN when n + m < 3
 * or a value is not positive.
 */
double hrs_detect_log_sd(const double *x, size_t n, const double *y,
                         size_t m);

/*
 * The detectable change in % for a key whose round medians (base x, new y)
 * have log standard deviation sd and whose test shift is shift_sd (from
 * hrs_detect_shift_sd): 100 * (exp(shift_sd * sd) - 1); +inf when
 * shift_sd is; NaN when sd is.
 */
double hrs_detect_change(double shift_sd, double sd);

#endif
