/* The smallest change a run-level comparison could have shown (see
 * detect.h). */
#include "config.h"

#include "lib/stat/detect.h"

#include "lib/stat/rounds.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* The seed of the fixed pseudo-random sequence of the draws. */
#define DETECT_SEED 0x9e3779b97f4a7c15ull

/* The resolution of the shift, in standard deviations. */
#define DETECT_RESOLUTION (1.0 / 1024)

/* The largest shift looked for, in standard deviations. */
#define DETECT_SHIFT_MAX 64.0

/* splitmix64: the next 64 bits of the sequence whose state is *s. */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A standard normal draw (Box-Muller, one of the pair). */
static double normal(uint64_t *s)
{
    double u1 = ((double)(next64(s) >> 11) + 1) / 9007199254740993.0;
    double u2 = (double)(next64(s) >> 11) / 9007199254740992.0;

    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* C(n, k) as a double. */
static double choose(size_t n, size_t k)
{
    double c = 1;

    if (k > n - k)
        k = n - k;
    for (size_t i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    return c;
}

/* The splits up to which the power is that of the permutation test
 * itself, every split of every draw tested. */
#define DETECT_EXACT_SPLITS 4000.0

/* The draws of the power of the permutation test itself. */
#define DETECT_EXACT_DRAWS 1000u

/* The mean of the k smallest of v[0..n), v sorted ascending. */
static double low_mean(const double *v, size_t k)
{
    double s = 0;

    for (size_t i = 0; i < k; i++)
        s += v[i];
    return s / (double)k;
}

/* The statistic of a draw x (n values, then m), each side sorted. */
static double draw_stat(const double *x, size_t n, size_t m, double d)
{
    return low_mean(x + n, hrs_rounds_fast_count(m)) + d -
           low_mean(x, hrs_rounds_fast_count(n));
}

/*
 * Whether the permutation test (rounds.h) flags draw x (n base values, m
 * new, each side sorted) with its new side shifted by d, as slower, at
 * alpha: by enumerating its splits (y + d in w[], n + m values).
 */
static int flags(const double *x, size_t n, size_t m, double d, double alpha,
                 double *w)
{
    struct hrs_rounds_fast f;

    for (size_t i = 0; i < m; i++)
        w[i] = exp(x[n + i] + d);
    for (size_t i = 0; i < n; i++)
        w[m + i] = exp(x[i]);
    return hrs_rounds_fast_half(w + m, n, w, m, &f) == 0 && f.p < alpha &&
           f.change > 0;
}

/* The share of draws[0..count) that the permutation test flags at d. */
static double power_exact(const double *draws, size_t count, size_t n,
                          size_t m, double d, double alpha, double *w)
{
    size_t hits = 0;

    for (size_t s = 0; s < count; s++)
        hits += flags(draws + s * (n + m), n, m, d, alpha, w);
    return (double)hits / (double)count;
}

/* The k-th smallest (from 0) of v[0..n), v sorted in place. */
static double kth(double *v, size_t n, size_t k)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[k < n ? k : n - 1];
}

double hrs_detect_shift_sd(size_t n, size_t m, double alpha)
{
    double *draws, *t, *w, lo = 0, hi = 1, splits, shift;
    size_t count;
    uint64_t seed = DETECT_SEED;
    int exact;

    if (n > HRS_DETECT_MAX_ROUNDS)
        n = HRS_DETECT_MAX_ROUNDS;
    if (m > HRS_DETECT_MAX_ROUNDS)
        m = HRS_DETECT_MAX_ROUNDS;
    if (n < 2 || m < 2 || !(alpha > 0))
        return INFINITY;
    splits = choose(n + m, m);
    /* The smallest p of the exact test: the split and its mirror. */
    if (splits <= (double)HRS_ROUNDS_EXACT_SPLITS &&
        (n == m ? 2 : 1) / splits >= alpha)
        return INFINITY;
    exact = splits <= DETECT_EXACT_SPLITS;
    count = exact ? DETECT_EXACT_DRAWS : HRS_DETECT_DRAWS;
    draws = malloc(count * (n + m) * sizeof *draws);
    t = malloc(count * sizeof *t);
    w = malloc((n + m) * sizeof *w);
    if (draws == NULL || t == NULL || w == NULL) {
        free(draws);
        free(t);
        free(w);
        return NAN;
    }
    for (size_t s = 0; s < count; s++) {
        double *x = draws + s * (n + m);

        for (size_t i = 0; i < n + m; i++)
            x[i] = normal(&seed);
        qsort(x, n, sizeof *x, cmp_double);
        qsort(x + n, m, sizeof *x, cmp_double);
    }
    if (!exact) {
        /* The statistic's critical value under normal noise (the
         * permutation test's, for many rounds): the (1 - alpha) quantile
         * of |T| of unshifted draws; a shift d moves T by d, so the power
         * reaches HRS_DETECT_POWER where T's (1 - power) quantile plus d
         * meets it. */
        double c;

        for (size_t s = 0; s < count; s++)
            t[s] = fabs(draw_stat(draws + s * (n + m), n, m, 0));
        c = kth(t, count, (size_t)ceil((1 - alpha) * (double)count) - 1);
        for (size_t s = 0; s < count; s++)
            t[s] = draw_stat(draws + s * (n + m), n, m, 0);
        shift = c - kth(t, count, (size_t)floor((1 - HRS_DETECT_POWER) *
                                                (double)count));
        free(draws);
        free(t);
        free(w);
        return shift > DETECT_SHIFT_MAX ? INFINITY : shift;
    }
    /* Few splits: the test itself on every draw, the same draws at every
     * shift, and a bisection on where the power reaches
     * HRS_DETECT_POWER. */
    while (power_exact(draws, count, n, m, hi, alpha, w) < HRS_DETECT_POWER) {
        lo = hi;
        hi *= 2;
        if (hi > DETECT_SHIFT_MAX) {
            free(draws);
            free(t);
            free(w);
            return INFINITY;
        }
    }
    while (hi - lo > DETECT_RESOLUTION) {
        double mid = (lo + hi) / 2;

        if (power_exact(draws, count, n, m, mid, alpha, w) >=
            HRS_DETECT_POWER)
            hi = mid;
        else
            lo = mid;
    }
    free(draws);
    free(t);
    free(w);
    return hi;
}

double hrs_detect_log_sd(const double *x, size_t n, const double *y,
                         size_t m)
{
    const double *side[2] = { x, y };
    size_t len[2] = { n, m };
    double ss = 0;

    if (n + m < 3)
        return NAN;
    for (int k = 0; k < 2; k++) {
        double mean = 0;

        for (size_t i = 0; i < len[k]; i++) {
            if (!(side[k][i] > 0))
                return NAN;
            mean += log(side[k][i]);
        }
        if (len[k] > 0)
            mean /= (double)len[k];
        for (size_t i = 0; i < len[k]; i++) {
            double e = log(side[k][i]) - mean;

            ss += e * e;
        }
    }
    return sqrt(ss / (double)(n + m - 2));
}

double hrs_detect_change(double shift_sd, double sd)
{
    if (isnan(sd) || isnan(shift_sd))
        return NAN;
    if (isinf(shift_sd))
        return INFINITY;
    return 100 * expm1(shift_sd * sd);
}
