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

/*
 * The smallest U (pairs new above base) above nm/2 whose two-sided p under
 * the run-level test, without ties, is below alpha: exact (the Gaussian
 * binomial's coefficients) while the test enumerates, else its normal
 * approximation with a continuity correction of 1/2. n * m + 1 when there
 * is none; (size_t)-1 when out of memory.
 */
static size_t critical_u(size_t n, size_t m, double alpha)
{
    size_t top = n * m, u;

    if (choose(n + m, m) > (double)HRD_ROUNDS_EXACT_SPLITS) {
        double sd = sqrt((double)n * (double)m * (double)(n + m + 1) / 12);

        for (u = top / 2 + 1; u <= top; u++) {
            double z = (fabs((double)u - (double)top / 2) - 0.5) / sd;

            if (z > 0 && erfc(z / sqrt(2)) < alpha)
                break;
        }
        return u;
    }
    double *c = calloc(top + 1, sizeof *c), all = 0, tail = 0;

    if (c == NULL)
        return (size_t)-1;
    c[0] = 1;
    for (size_t i = 1; i <= n; i++) {
        size_t a = m + i;

        for (size_t d = top; d >= a && d <= top; d--)
            c[d] -= c[d - a];
        for (size_t d = i; d <= top; d++)
            c[d] += c[d - i];
    }
    for (size_t d = 0; d <= top; d++)
        all += c[d];
    /* The distribution is symmetric: p(u) = 2 P(U >= u) for u > nm/2.
     * Walk down from the top while the tail stays below alpha / 2. */
    u = top + 1;
    for (size_t d = top; 2 * d > top; d--) {
        tail += c[d];
        if (2 * tail / all >= alpha - 1e-12)
            break;
        u = d;
    }
    free(c);
    return u;
}

/* U of y + d over x, both sorted ascending: the pairs with y_j + d > x_i. */
static size_t count_u(const double *x, size_t n, const double *y, size_t m,
                      double d)
{
    size_t u = 0, i = 0;

    for (size_t j = 0; j < m; j++) {
        while (i < n && x[i] < y[j] + d)
            i++;
        u += i;
    }
    return u;
}

/* The share of the draws whose U at shift d reaches ucrit. */
static double power_at(const double *draws, size_t n, size_t m, size_t ucrit,
                       double d)
{
    size_t hits = 0;

    for (size_t s = 0; s < HRD_DETECT_DRAWS; s++) {
        const double *x = draws + s * (n + m);

        hits += count_u(x, n, x + n, m, d) >= ucrit;
    }
    return (double)hits / HRD_DETECT_DRAWS;
}

double hrd_detect_shift_sd(size_t n, size_t m, double alpha)
{
    size_t ucrit;
    double *draws, lo = 0, hi = 1;
    uint64_t seed = DETECT_SEED;

    if (n > HRD_DETECT_MAX_ROUNDS)
        n = HRD_DETECT_MAX_ROUNDS;
    if (m > HRD_DETECT_MAX_ROUNDS)
        m = HRD_DETECT_MAX_ROUNDS;
    if (n < 2 || m < 2 || !(alpha > 0))
        return INFINITY;
    ucrit = critical_u(n, m, alpha);
    if (ucrit == (size_t)-1)
        return NAN;
    if (ucrit > n * m)
        return INFINITY;
    draws = malloc(HRD_DETECT_DRAWS * (n + m) * sizeof *draws);
    if (draws == NULL)
        return NAN;
    for (size_t s = 0; s < HRD_DETECT_DRAWS; s++) {
        double *x = draws + s * (n + m);

        for (size_t i = 0; i < n + m; i++)
            x[i] = normal(&seed);
        qsort(x, n, sizeof *x, cmp_double);
        qsort(x + n, m, sizeof *x, cmp_double);
    }
    /* The same draws at every shift: U of each draw only grows with the
     * shift, so the power does too, and a bisection finds where it
     * reaches HRD_DETECT_POWER. */
    while (power_at(draws, n, m, ucrit, hi) < HRD_DETECT_POWER) {
        lo = hi;
        hi *= 2;
        if (hi > DETECT_SHIFT_MAX) {
            free(draws);
            return INFINITY;
        }
    }
    while (hi - lo > DETECT_RESOLUTION) {
        double mid = (lo + hi) / 2;

        if (power_at(draws, n, m, ucrit, mid) >= HRD_DETECT_POWER)
            hi = mid;
        else
            lo = mid;
    }
    free(draws);
    return hi;
}

double hrd_detect_log_sd(const double *x, size_t n, const double *y,
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

double hrd_detect_change(double shift_sd, double sd)
{
    if (isnan(sd) || isnan(shift_sd))
        return NAN;
    if (isinf(shift_sd))
        return INFINITY;
    return 100 * expm1(shift_sd * sd);
}
