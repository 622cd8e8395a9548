/* The run-level test of diff: round medians compared (see rounds.h). */
#include "config.h"

#include "lib/stat/rounds.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double hrs_rounds_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double hrs_rounds_spread(double *v, size_t n)
{
    double med;

    if (n < 2)
        return 0;
    med = hrs_rounds_median(v, n);
    if (!(med > 0))
        return 0;
    return 100 * (v[n - 1] - v[0]) / med;
}

/* C(n, k) as a double (exact while it stays below 2^53). */
static double choose(size_t n, size_t k)
{
    double c = 1;

    if (k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    for (size_t i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    return c;
}

/* The midranks (from 1) of the pooled values v[0..N) into r[]. */
static void midranks(const double *v, size_t N, double *r)
{
    for (size_t i = 0; i < N; i++) {
        double below = 0, equal = 0;

        for (size_t j = 0; j < N; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        r[i] = below + (equal + 1) / 2;
    }
}

double hrs_rounds_mwu_exact(const double *x, size_t n, const double *y,
                            size_t m, double *u)
{
    size_t N = n + m;
    double v[64], r[64], ry = 0, base, dev, hits = 0, total = 0;
    uint64_t s, last;

    if (n == 0 || m == 0 || N > 63 ||
        choose(N, m) > (double)HRS_ROUNDS_EXACT_SPLITS)
        return -1;
    memcpy(v, x, n * sizeof *v);
    memcpy(v + n, y, m * sizeof *v);
    midranks(v, N, r);
    base = (double)m * (double)(m + 1) / 2;
    for (size_t j = n; j < N; j++)
        ry += r[j];
    if (u != NULL)
        *u = ry - base;
    dev = fabs(ry - base - (double)n * (double)m / 2) - 1e-9;
    /* Every set of m of the N values as new's, in bit order (Gosper). */
    last = ((1ull << m) - 1) << n;
    for (s = (1ull << m) - 1;; ) {
        double sum = 0;

        for (uint64_t b = s; b != 0; b &= b - 1)
            sum += r[__builtin_ctzll(b)];
        total++;
        hits += fabs(sum - base - (double)n * (double)m / 2) >= dev;
        if (s == last)
            break;
        uint64_t c = s & -s, t = s + c;

        s = (((t ^ s) >> 2) / c) | t;
    }
    return hits / total;
}

/*
 * The normal approximation of the two-sided Mann-Whitney p-value, with the
 * tie correction and a continuity correction of 1/2; U in *u.
 */
static double mwu_normal(const double *x, size_t n, const double *y,
                         size_t m, double *u)
{
    size_t N = n + m;
    double *v = malloc(N * sizeof *v), *r = malloc(N * sizeof *r);
    double ry = 0, ties = 0, var, mean, z;

    if (v == NULL || r == NULL) {
        free(v);
        free(r);
        return NAN;
    }
    memcpy(v, x, n * sizeof *v);
    memcpy(v + n, y, m * sizeof *v);
    midranks(v, N, r);
    for (size_t j = n; j < N; j++)
        ry += r[j];
    *u = ry - (double)m * (double)(m + 1) / 2;
    qsort(v, N, sizeof *v, cmp_double);
    for (size_t i = 0, j; i < N; i = j) {
        for (j = i; j < N && v[j] == v[i]; j++)
            ;
        ties += (double)(j - i) * (double)(j - i) * (double)(j - i) -
                (double)(j - i);
    }
    free(v);
    free(r);
    mean = (double)n * (double)m / 2;
    var = (double)n * (double)m / 12 *
          ((double)N + 1 - ties / ((double)N * ((double)N - 1)));
    if (!(var > 0))
        return 1;
    z = (fabs(*u - mean) - 0.5) / sqrt(var);
    if (z < 0)
        z = 0;
    return erfc(z / sqrt(2));
}

unsigned hrs_rounds_hl_k(size_t n, size_t m)
{
    /* The coefficients of the Gaussian binomial [n+m, n]_q: how many
     * splits give each U, without ties. */
    size_t top = n * m;
    double *c = calloc(top + 1, sizeof *c), all = 0, cum = 0;
    unsigned k = 0;

    if (c == NULL || n == 0 || m == 0 || n > 64 || m > 64) {
        free(c);
        return 0;
    }
    c[0] = 1;
    for (size_t i = 1; i <= n; i++) {
        size_t a = m + i;

        /* times (1 - q^(m+i)), then over (1 - q^i) */
        for (size_t d = top; d >= a && d <= top; d--)
            c[d] -= c[d - a];
        for (size_t d = i; d <= top; d++)
            c[d] += c[d - i];
    }
    for (size_t d = 0; d <= top; d++)
        all += c[d];
    for (size_t d = 0; d <= top; d++) {
        cum += c[d];
        if (cum / all > 0.025 + 1e-12)
            break;
        k = (unsigned)d + 1;
    }
    free(c);
    return k;
}

int hrs_rounds_steps_enough(double moved, double step)
{
    return !(step > 0) ||
           fabs(moved) >= (HRS_ROUNDS_MIN_STEPS - HRS_ROUNDS_STEP_SLACK) * step;
}

double hrs_rounds_steps_floor_pct(double step, double base)
{
    if (!(step > 0) || !(base > 0))
        return 0;
    return 100 * (HRS_ROUNDS_MIN_STEPS - HRS_ROUNDS_STEP_SLACK) * step /
           base;
}

double hrs_rounds_moved(const struct hrs_rounds_fast *f,
                        const struct hrs_rounds_cmp *c)
{
    double fast = f->new_fast - f->base_fast;
    double med = c->new_median - c->base_median;

    if ((fast > 0 && med > fast) || (fast < 0 && med < fast))
        return fabs(med);
    return fabs(fast);
}

int hrs_rounds_interval(const double *x, size_t n, const double *y, size_t m,
                        double *lo, double *hi)
{
    double *d = malloc((n * m + 1) * sizeof *d);
    unsigned k = hrs_rounds_hl_k(n, m);

    if (d == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < m; j++) {
            if (!(x[i] > 0 && y[j] > 0))
                k = 0; /* no ratio of a median of 0 */
            d[i * m + j] = log(y[j]) - log(x[i]);
        }
    }
    if (k > 0)
        qsort(d, n * m, sizeof *d, cmp_double);
    if (k == 0 || n * m == 0) {
        *lo = -INFINITY;
        *hi = INFINITY;
    } else {
        *lo = 100 * expm1(d[k - 1]);
        *hi = 100 * expm1(d[n * m - k]);
    }
    free(d);
    return 0;
}

int hrs_rounds_compare(const double *x, size_t n, const double *y, size_t m,
                       struct hrs_rounds_cmp *out)
{
    double *a = malloc((n + m) * sizeof *a);
    double u = 0, p;

    if (a == NULL)
        return -ENOMEM;
    memset(out, 0, sizeof *out);
    memcpy(a, x, n * sizeof *a);
    out->base_median = hrs_rounds_median(a, n);
    out->spread_base = hrs_rounds_spread(a, n);
    memcpy(a, y, m * sizeof *a);
    out->new_median = hrs_rounds_median(a, m);
    out->spread_new = hrs_rounds_spread(a, m);
    out->change = out->base_median > 0
                      ? 100 * (out->new_median / out->base_median - 1)
                      : 0;
    p = hrs_rounds_mwu_exact(x, n, y, m, &u);
    out->exact = p >= 0;
    if (p < 0)
        p = mwu_normal(x, n, y, m, &u);
    out->p = p;
    out->u = u;
    if (hrs_rounds_interval(x, n, y, m, &out->lo, &out->hi) != 0) {
        free(a);
        return -ENOMEM;
    }
    free(a);
    if (isnan(p))
        return -ENOMEM;
    return 0;
}

size_t hrs_rounds_fast_count(size_t n)
{
    return (n + 1) / 2;
}

/* splitmix64: the next 64 bits of the sequence whose state is *s. */
static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The seed of the random splits of the fastest-half test. */
#define FAST_SEED 0x243f6a8885a308d3ull

/* A pooled logarithm, marked base's (0) or new's (1). */
struct fast_ent {
    double v;
    int isnew;
};

static int cmp_fast_ent(const void *a, const void *b)
{
    const struct fast_ent *x = a, *y = b;

    return x->v < y->v ? -1 : x->v > y->v;
}

/*
 * The fastest-half statistic of a split of the pooled values v[0..N),
 * N at most 63, ascending, new's the set bits of mask: the fastest hy of
 * new's and hx of base's are their first hy and hx bits, found a bit at
 * a time (the enumeration of every split spends its time here).
 */
static double fast_stat_mask(const double *v, size_t N, uint64_t mask,
                             size_t hx, size_t hy)
{
    uint64_t b = mask, a = ~mask & ((1ull << N) - 1);
    double sx = 0, sy = 0;

    for (size_t k = 0; k < hy; k++, b &= b - 1)
        sy += v[__builtin_ctzll(b)];
    for (size_t k = 0; k < hx; k++, a &= a - 1)
        sx += v[__builtin_ctzll(a)];
    return sy / (double)hy - sx / (double)hx;
}

/*
 * The fastest-half statistic of a split of the pooled values v[0..N),
 * ascending, new's marked in isnew[] (or, with isnew NULL, by the bits of
 * mask): the fastest hy of new's and hx of base's are the first met.
 */
static double fast_stat(const double *v, size_t N, const unsigned char *isnew,
                        uint64_t mask, size_t hx, size_t hy)
{
    double sx = 0, sy = 0;
    size_t cx = 0, cy = 0;

    for (size_t i = 0; i < N && (cx < hx || cy < hy); i++) {
        if (isnew ? isnew[i] : (mask >> i & 1)) {
            if (cy < hy) {
                sy += v[i];
                cy++;
            }
        } else if (cx < hx) {
            sx += v[i];
            cx++;
        }
    }
    return sy / (double)hy - sx / (double)hx;
}

int hrs_rounds_fast_half(const double *x, size_t n, const double *y,
                         size_t m, struct hrs_rounds_fast *out)
{
    size_t N = n + m, hx = hrs_rounds_fast_count(n),
           hy = hrs_rounds_fast_count(m);
    struct fast_ent *e;
    double *v, obs, hits = 0, total = 0, sx = 0, sy = 0;
    unsigned char *lab;
    size_t cx = 0, cy = 0;

    if (n == 0 || m == 0)
        return -EINVAL;
    for (size_t i = 0; i < N; i++) {
        if (!((i < n ? x[i] : y[i - n]) > 0))
            return -EINVAL;
    }
    e = malloc(N * sizeof *e);
    v = malloc(N * sizeof *v);
    lab = malloc(N);
    if (e == NULL || v == NULL || lab == NULL) {
        free(e);
        free(v);
        free(lab);
        return -ENOMEM;
    }
    for (size_t i = 0; i < N; i++) {
        e[i].v = log(i < n ? x[i] : y[i - n]);
        e[i].isnew = i >= n;
    }
    qsort(e, N, sizeof *e, cmp_fast_ent);
    for (size_t i = 0; i < N; i++) {
        v[i] = e[i].v;
        lab[i] = (unsigned char)e[i].isnew;
        /* Each side's own fastest half, from the observed split. */
        if (lab[i] && cy < hy) {
            sy += v[i];
            cy++;
        } else if (!lab[i] && cx < hx) {
            sx += v[i];
            cx++;
        }
    }
    memset(out, 0, sizeof *out);
    out->base_fast = exp(sx / (double)hx);
    out->new_fast = exp(sy / (double)hy);
    obs = sy / (double)hy - sx / (double)hx;
    out->change = 100 * expm1(obs);
    obs = fabs(obs) - 1e-12;
    if (N <= 63 && choose(N, m) <= (double)HRS_ROUNDS_EXACT_SPLITS) {
        /* Every set of m of the N positions as new's (Gosper). */
        uint64_t s = (1ull << m) - 1, last = s << n;

        for (;;) {
            total++;
            hits += fabs(fast_stat_mask(v, N, s, hx, hy)) >= obs;
            if (s == last)
                break;
            uint64_t c = s & -s, t = s + c;

            s = (((t ^ s) >> 2) / c) | t;
        }
        out->exact = 1;
        out->p = hits / total;
    } else {
        uint64_t seed = FAST_SEED;

        for (unsigned d = 0; d < HRS_ROUNDS_FAST_DRAWS; d++) {
            /* A uniform split: the labels shuffled (Fisher-Yates). */
            for (size_t i = N - 1; i > 0; i--) {
                size_t j = (size_t)(next64(&seed) % (i + 1));
                unsigned char t = lab[i];

                lab[i] = lab[j];
                lab[j] = t;
            }
            hits += fabs(fast_stat(v, N, lab, 0, hx, hy)) >= obs;
        }
        out->p = (hits + 1) / (HRS_ROUNDS_FAST_DRAWS + 1.0);
    }
    free(e);
    free(v);
    free(lab);
    return 0;
}
