/*
 * The significance test (lib/stat/signif.c): U, p-values and Hodges-Lehmann
 * intervals on cases computed by hand, ranks of differences and the
 * intervals of comparisons against brute force, the power to see a 5%
 * shift, and the rate of false alarms.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/stat/signif.h"
#include "lib/stat/summary.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double uniform(void)
{
    return ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
}

/* A sample built from values (sorted here) with its own storage. */
struct sample {
    uint64_t *raw;
    double *v;
    uint64_t *w;
    struct hrs_wsample s;
};

static void sample_make(struct sample *s, const uint64_t *vals, size_t n)
{
    uint64_t *tmp = malloc(n * sizeof *tmp);

    s->raw = malloc(n * sizeof *s->raw);
    s->v = malloc(n * sizeof *s->v);
    s->w = malloc(n * sizeof *s->w);
    assert_non_null(tmp);
    assert_non_null(s->raw);
    memcpy(s->raw, vals, n * sizeof *vals);
    hrs_sort_u64(s->raw, n, tmp);
    free(tmp);
    s->s.v = s->v;
    s->s.w = s->w;
    s->s.n = hrs_signif_collapse(s->raw, n, s->v, s->w);
    s->s.total = n;
}

static void sample_free(struct sample *s)
{
    free(s->raw);
    free(s->v);
    free(s->w);
}

static void compare(const uint64_t *x, size_t n, const uint64_t *y, size_t m,
                    struct hrs_signif *out)
{
    struct sample a, b;

    sample_make(&a, x, n);
    sample_make(&b, y, m);
    assert_int_equal(hrs_signif_compare(&a.s, &b.s, out), 0);
    sample_free(&a);
    sample_free(&b);
}

/* 3 against 3, every new value above every base value: U = 9, which one
 * of the C(6, 3) = 20 orders gives, so p = 2/20. The 9 differences are
 * 1 2 2 3 3 3 4 4 5: median 3; P(U <= 0) = 5% >= 2.5%, so the interval
 * runs from the smallest to the largest difference. */
static void test_exact_3x3(void **state)
{
    const uint64_t x[] = { 1, 2, 3 }, y[] = { 6, 4, 5 };
    struct hrs_signif r;

    (void)state;
    compare(x, 3, y, 3, &r);
    assert_true(r.exact);
    assert_true(r.u == 9.0);
    assert_true(fabs(r.p - 0.1) < 1e-12);
    assert_true(r.shift == 3.0);
    assert_true(r.lo == 1.0);
    assert_true(r.hi == 5.0);
}

/* 4 against 5: U = 1 + 2 + 3 + 4 + 4 = 14. P(U >= 14) = P(U <= 6), the
 * partitions of 0..6 into at most 4 parts of at most 5: 1 1 2 3 5 6 8,
 * 26 of C(9, 4) = 126, so p = 52/126. */
static void test_exact_4x5(void **state)
{
    const uint64_t x[] = { 1, 3, 5, 7 }, y[] = { 2, 4, 6, 8, 10 };
    struct hrs_signif r;

    (void)state;
    compare(x, 4, y, 5, &r);
    assert_true(r.exact);
    assert_true(r.u == 14.0);
    assert_true(fabs(r.p - 52.0 / 126.0) < 1e-12);
    /* Differences: -5 -3 -1 1 (y=2), -3 -1 1 3, -1 1 3 5, 1 3 5 7, 3 5 7 9:
     * sorted, the 10th and 11th (from 1) are 1 and 3. */
    assert_true(r.shift == 2.0);
}

/* With ties: base 1 2 2 3, new 2 3 3 4. U = 2 + 3.5 + 3.5 + 4 = 13 of 16;
 * tie groups of 3 at 2 and at 3 give sum(t^3 - t) = 48, so
 * var = 16/12 (9 - 48/56) and z = (13 - 8 - 0.5) / sqrt(var). The
 * differences are -1 once, 0 four times, 1 six times, 2 four times, 3
 * once: median 1; C = round(8 - 1.96 sqrt(12)) = 1, so the interval is
 * [-1, 3]. */
static void test_normal_ties(void **state)
{
    const uint64_t x[] = { 1, 2, 2, 3 }, y[] = { 2, 3, 3, 4 };
    struct hrs_signif r;

    (void)state;
    compare(x, 4, y, 4, &r);
    assert_false(r.exact);
    assert_true(r.u == 13.0);
    assert_true(fabs(r.z - 1.365698202000489) < 1e-12);
    assert_true(fabs(r.p - 0.17203370892182296) < 1e-12);
    assert_true(r.shift == 1.0);
    assert_true(r.lo == -1.0);
    assert_true(r.hi == 3.0);
}

/* Every value equal: no evidence at all. */
static void test_all_tied(void **state)
{
    const uint64_t x[] = { 7, 7, 7 }, y[] = { 7, 7 };
    struct hrs_signif r;

    (void)state;
    compare(x, 3, y, 2, &r);
    assert_true(r.u == 3.0);
    assert_true(r.p == 1.0);
    assert_true(r.shift == 0.0 && r.lo == 0.0 && r.hi == 0.0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* All the differences y - x of two weighted samples, each as many times
 * as the product of its values' weights, sorted into d (room for
 * x->total * y->total of them). Returns how many. */
static size_t weighted_diffs(const struct hrs_wsample *x,
                             const struct hrs_wsample *y, double *d)
{
    size_t k = 0;

    for (size_t i = 0; i < x->n; i++)
        for (size_t j = 0; j < y->n; j++)
            for (uint64_t c = 0; c < x->w[i] * y->w[j]; c++)
                d[k++] = y->v[j] - x->v[i];
    qsort(d, k, sizeof *d, cmp_double);
    return k;
}

/* Every rank of the differences of random small samples with repeated
 * values, against the sorted list of all of them. */
static void test_diff_rank_brute(void **state)
{
    (void)state;
    for (int t = 0; t < 200; t++) {
        size_t n = 1 + next() % 30, m = 1 + next() % 30;
        uint64_t x[30], y[30], spread = 1 + next() % 50;
        double d[900];
        struct sample a, b;
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
            x[i] = 100 + next() % spread;
        for (size_t j = 0; j < m; j++)
            y[j] = 90 + next() % (spread * 2);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                d[k++] = (double)y[j] - (double)x[i];
        qsort(d, k, sizeof *d, cmp_double);
        sample_make(&a, x, n);
        sample_make(&b, y, m);
        for (size_t r = 0; r < k; r++)
            assert_true(hrs_signif_diff_rank(&a.s, &b.s, r) == d[r]);
        sample_free(&a);
        sample_free(&b);
    }
}

/* Ranks of the differences of weighted samples of 20 to 140 distinct
 * values, not whole numbers (as histogram buckets' values are), so that
 * the passes run both ways (a plain merge below 32 distinct base values,
 * runs side by side above), with some runs that start past every y value
 * or end before the first: every tenth rank, the first and the last,
 * against the sorted list of all the differences, each weight times. */
static void test_diff_rank_weighted(void **state)
{
    (void)state;
    for (int t = 0; t < 80; t++) {
        size_t n = 20 + next() % 121, m = 20 + next() % 121, k;
        double *xv = malloc(n * sizeof *xv), *yv = malloc(m * sizeof *yv);
        uint64_t *xw = malloc(n * sizeof *xw), *yw = malloc(m * sizeof *yw);
        uint64_t nt = 0, mt = 0;
        double *d, step = 0.25 + (double)(next() % 8) / 3;
        double off = t % 4 == 0 ? 1e4 : t % 4 == 1 ? -1e4 : 0;
        struct hrs_wsample a, b;

        xv[0] = 1000 + (double)(next() % 100) * step;
        yv[0] = 1000 + off + (double)(next() % 100) * step;
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                xv[i] = xv[i - 1] + step * (double)(1 + next() % 5);
            xw[i] = 1 + next() % (t % 3 == 0 ? 1 : 6);
            nt += xw[i];
        }
        for (size_t j = 0; j < m; j++) {
            if (j > 0)
                yv[j] = yv[j - 1] + step * (double)(1 + next() % 7);
            yw[j] = 1 + next() % (t % 3 == 0 ? 1 : 6);
            mt += yw[j];
        }
        d = malloc(nt * mt * sizeof *d);
        assert_non_null(d);
        a = (struct hrs_wsample){ xv, xw, n, nt };
        b = (struct hrs_wsample){ yv, yw, m, mt };
        k = weighted_diffs(&a, &b, d);
        for (size_t r = 0; r < k; r += 10)
            assert_true(hrs_signif_diff_rank(&a, &b, r) == d[r]);
        assert_true(hrs_signif_diff_rank(&a, &b, k - 1) == d[k - 1]);
        free(d);
        free(xv);
        free(yv);
        free(xw);
        free(yw);
    }
}

/* The shift and the interval of r against the sorted differences d[0..
 * pairs) of two samples of `total` values in all: the median, and the
 * ranks of the 95% interval under the normal approximation. */
static void check_normal_interval(const struct hrs_signif *r, const double *d,
                                  uint64_t pairs, uint64_t total)
{
    double c = floor((double)pairs / 2 -
                     1.959963984540054 *
                         sqrt((double)pairs * (double)(total + 1) / 12) +
                     0.5);
    uint64_t kq = c < 1 ? 1 : (uint64_t)c;

    assert_true(r->shift == (pairs % 2 ? d[pairs / 2]
                                       : (d[pairs / 2 - 1] + d[pairs / 2]) /
                                             2));
    assert_true(r->lo == d[kq - 1]);
    assert_true(r->hi == d[pairs - kq]);
}

/* The shift and its interval of hrs_signif_compare (its ranks found one
 * after the other, each search starting from the passes of those before)
 * against the sorted list of all the differences, on samples of 50 to 400
 * values, with ties or without, some with a long tail. */
static void test_compare_brute(void **state)
{
    (void)state;
    for (int t = 0; t < 60; t++) {
        size_t n = 50 + next() % 200, m = 50 + next() % 200, k = 0;
        uint64_t *x = malloc(n * sizeof *x), *y = malloc(m * sizeof *y);
        uint64_t spread = t % 3 == 0 ? 40 : 100000, pairs = n * m;
        double *d = malloc(n * m * sizeof *d);
        struct sample a, b;
        struct hrs_signif r;

        for (size_t i = 0; i < n; i++)
            x[i] = 1000 + next() % spread * (next() % 50 == 0 ? 10 : 1);
        for (size_t j = 0; j < m; j++)
            y[j] = 1000 + (t % 2) * spread / 20 + next() % spread;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                d[k++] = (double)y[j] - (double)x[i];
        qsort(d, k, sizeof *d, cmp_double);
        sample_make(&a, x, n);
        sample_make(&b, y, m);
        assert_int_equal(hrs_signif_compare(&a.s, &b.s, &r), 0);
        assert_false(r.exact);
        check_normal_interval(&r, d, pairs, n + m);
        sample_free(&a);
        sample_free(&b);
        free(x);
        free(y);
        free(d);
    }
}

/* A weighted sample of n distinct values drawn from [base, base + span)
 * (sorted here), each with a weight of 1 to wmax. */
static void wsample_make(struct hrs_wsample *s, double *v, uint64_t *w,
                         size_t n, uint64_t base, uint64_t span,
                         uint64_t wmax)
{
    size_t d = 0;

    s->total = 0;
    while (d < n) {
        double c = (double)(base + next() % span);
        size_t i = d;

        while (i > 0 && v[i - 1] > c)
            i--;
        if (i > 0 && v[i - 1] == c)
            continue;
        memmove(v + i + 1, v + i, (d - i) * sizeof *v);
        v[i] = c;
        d++;
    }
    for (size_t i = 0; i < n; i++) {
        w[i] = 1 + next() % wmax;
        s->total += w[i];
    }
    s->v = v;
    s->w = w;
    s->n = n;
}

/* U, z and p of hrs_signif_compare against U counted pair by pair and the
 * tie term summed group by group in ascending order, in doubles (z and p
 * to the bit), on weighted samples of 1 to 300 distinct values that share
 * many values (samples with 32 or more distinct base values take U from a
 * pass, the others from a merge), some of them exact-test sizes without
 * ties, where one shared value is enough to leave the exact test. */
static void test_u_brute(void **state)
{
    static double xv[300], yv[300];
    static uint64_t xw[300], yw[300];

    (void)state;
    for (int t = 0; t < 400; t++) {
        size_t n = 1 + next() % (t % 4 == 0 ? 48 : 300);
        size_t m = 1 + next() % (t % 4 == 0 ? 48 : 300);
        uint64_t wmax = t % 4 == 0 ? 1 : 1 + next() % 40;
        uint64_t span = 310 + next() % 2000, u2 = 0;
        struct hrs_wsample a, b;
        struct hrs_signif r;
        double ties = 0, nn, mm, big_n, var, d, z;
        size_t i = 0, j = 0;

        wsample_make(&a, xv, xw, n, 1000, span, wmax);
        wsample_make(&b, yv, yw, m, 1000 + next() % 50, span, wmax);
        for (size_t p = 0; p < n; p++)
            for (size_t q = 0; q < m; q++)
                u2 += xw[p] * yw[q] *
                      (yv[q] > xv[p] ? 2 : yv[q] == xv[p] ? 1 : 0);
        while (i < n || j < m) {
            double v = i == n ? yv[j] : j == m ? xv[i]
                     : xv[i] < yv[j] ? xv[i] : yv[j], g = 0;

            if (i < n && xv[i] == v)
                g += (double)xw[i++];
            if (j < m && yv[j] == v)
                g += (double)yw[j++];
            ties += g * g * g - g;
        }
        assert_int_equal(hrs_signif_compare(&a, &b, &r), 0);
        assert_true(r.u == (double)u2 / 2);
        if (ties == 0 && a.total < HRS_SIGNIF_EXACT_N &&
            b.total < HRS_SIGNIF_EXACT_N) {
            assert_true(r.exact);
            continue;
        }
        assert_false(r.exact);
        nn = (double)a.total;
        mm = (double)b.total;
        big_n = nn + mm;
        var = nn * mm / 12 * (big_n + 1 - ties / (big_n * (big_n - 1)));
        if (!(var > 0)) {
            assert_true(r.p == 1);
            continue;
        }
        d = r.u - nn * mm / 2;
        d = fabs(d) <= 0.5 ? 0 : d - (d > 0 ? 0.5 : -0.5);
        z = d / sqrt(var);
        assert_true(r.z == z);
        assert_true(r.p == erfc(fabs(z) / M_SQRT2));
    }
}

/* The shift and interval of hrs_signif_compare on weighted samples of 20
 * to 120 distinct values (weights 1 to 6, so ties everywhere, and shared
 * values), whose ranks' searches start from the pass that gave U and from
 * one another, against the sorted list of all the differences, each
 * weight times. */
static void test_compare_weighted(void **state)
{
    static double xv[120], yv[120];
    static uint64_t xw[120], yw[120];

    (void)state;
    for (int t = 0; t < 40; t++) {
        size_t n = 20 + next() % 101, m = 20 + next() % 101;
        uint64_t span = 150 + next() % 400, pairs;
        struct hrs_wsample a, b;
        struct hrs_signif r;
        double *d;

        wsample_make(&a, xv, xw, n, 1000, span, 6);
        wsample_make(&b, yv, yw, m, 990 + next() % 40, span, 6);
        pairs = a.total * b.total;
        d = malloc(pairs * sizeof *d);
        assert_non_null(d);
        assert_int_equal(weighted_diffs(&a, &b, d), pairs);
        assert_int_equal(hrs_signif_compare(&a, &b, &r), 0);
        assert_false(r.exact);
        check_normal_interval(&r, d, pairs, a.total + b.total);
        free(d);
    }
}

/* Ranks of differences that rounding makes equal: values near 2^52 (where
 * doubles are a whole number apart) less values with a half, so that
 * y - x of two neighbouring y values can round to the same double and a
 * pass's prefix of a row can move by more than one value between two
 * near values (a check then counts from scratch). Every rank against the
 * sorted list of the differences as doubles compute them. */
static void test_diff_rank_rounding(void **state)
{
    enum { N = 60, M = 70, W = 3 };
    static double xv[N], yv[M], d[N * M * W * W];
    static uint64_t xw[N], yw[M];

    (void)state;
    for (int t = 0; t < 20; t++) {
        struct hrs_wsample a, b;
        uint64_t nt = 0, mt = 0;
        size_t k;

        for (size_t i = 0; i < N; i++) {
            xv[i] = (double)(i * 3 + next() % 3) + 0.5;
            xw[i] = 1 + next() % W;
            nt += xw[i];
        }
        for (size_t j = 0; j < M; j++) {
            yv[j] = 4503599627370496.0 + (double)(j * 2 + next() % 2);
            yw[j] = 1 + next() % W;
            mt += yw[j];
        }
        a = (struct hrs_wsample){ xv, xw, N, nt };
        b = (struct hrs_wsample){ yv, yw, M, mt };
        k = weighted_diffs(&a, &b, d);
        for (size_t r = 0; r < k; r += 7)
            assert_true(hrs_signif_diff_rank(&a, &b, r) == d[r]);
    }
}

/* A clock-like duration: 1000 ns plus an exponential tail of mean 300 ns,
 * scaled, and read in 10 ns steps. */
static uint64_t draw(double scale, double add)
{
    double v = (1000.0 - 300.0 * log(uniform())) * scale + add;
    return (uint64_t)(v / 10.0) * 10;
}

/* The change diff reports: the shift relative to the base median. */
static double change_of(const struct sample *a, const struct hrs_signif *r)
{
    return r->shift / hrs_signif_median(&a->s);
}

/* A 5% slowdown with 2000 samples a side is significant at the default
 * alpha (0.01) in at least 95% of 200 trials, and seen there as a change
 * (Hodges-Lehmann shift / base median) of 4% or more in as many. */
static void test_power_5pct(void **state)
{
    enum { N = 2000, TRIALS = 200 };
    static uint64_t x[N], y[N];
    int significant = 0, seen = 0;

    (void)state;
    for (int t = 0; t < TRIALS; t++) {
        struct sample a, b;
        struct hrs_signif r;

        for (int i = 0; i < N; i++) {
            x[i] = draw(1.0, 0);
            y[i] = draw(1.05, 0);
        }
        sample_make(&a, x, N);
        sample_make(&b, y, N);
        assert_int_equal(hrs_signif_compare(&a.s, &b.s, &r), 0);
        assert_false(r.exact);
        significant += r.p < 0.01;
        seen += r.p < 0.01 && change_of(&a, &r) >= 0.04;
        sample_free(&a);
        sample_free(&b);
    }
    printf("# 5%% shift, n = %d: significant in %d of %d trials, a change "
           "of 4%% or more in %d\n", N, significant, TRIALS, seen);
    assert_true(significant >= TRIALS * 95 / 100);
    assert_true(seen >= TRIALS * 95 / 100);
}

/* A shift of +40 ns: the 95% interval of the Hodges-Lehmann shift covers
 * it in at least 90% of 200 trials (95% expected), and the estimate is
 * within 10 ns of it on average. */
static void test_interval_coverage(void **state)
{
    enum { N = 500, TRIALS = 200 };
    static uint64_t x[N], y[N];
    int covered = 0;
    double err = 0;

    (void)state;
    for (int t = 0; t < TRIALS; t++) {
        struct hrs_signif r;

        for (int i = 0; i < N; i++) {
            x[i] = draw(1.0, 0);
            y[i] = draw(1.0, 40);
        }
        compare(x, N, y, N, &r);
        covered += r.lo <= 40 && 40 <= r.hi;
        err += r.shift - 40;
    }
    printf("# +40 ns: the interval covers it in %d of %d trials\n", covered,
           TRIALS);
    assert_true(covered >= TRIALS * 90 / 100);
    assert_true(fabs(err / TRIALS) < 10);
}

/* A/A: 1000 keys whose two sides come from the same distribution. At the
 * defaults (p < 0.01 and a change of 5% or more) at most 1% are flagged;
 * p < 0.01 alone happens about 1% of the time (at most 2% here). */
static void test_false_alarms(void **state)
{
    enum { N = 300, KEYS = 1000 };
    static uint64_t x[N], y[N];
    int flagged = 0, low_p = 0;

    (void)state;
    for (int k = 0; k < KEYS; k++) {
        struct sample a, b;
        struct hrs_signif r;

        for (int i = 0; i < N; i++) {
            x[i] = draw(1.0, 0);
            y[i] = draw(1.0, 0);
        }
        sample_make(&a, x, N);
        sample_make(&b, y, N);
        assert_int_equal(hrs_signif_compare(&a.s, &b.s, &r), 0);
        low_p += r.p < 0.01;
        flagged += r.p < 0.01 && fabs(change_of(&a, &r)) >= 0.05;
        sample_free(&a);
        sample_free(&b);
    }
    printf("# A/A: p < 0.01 for %d of %d keys, flagged %d\n", low_p, KEYS,
           flagged);
    assert_true(flagged <= KEYS / 100);
    assert_true(low_p <= KEYS * 2 / 100);
}

/* Histogram buckets: values in one bucket become ties at its value. */
static void test_bucket(void **state)
{
    const uint64_t v[] = { 5, 5, 1024, 1025, 1026, 4096, 4100 };
    double bv[7];
    uint64_t bw[7];
    size_t n;

    (void)state;
    n = hrs_signif_bucket(v, 7, bv, bw);
    /* 5 has a bucket of its own; 1024 and 1025 share one of width 2
     * (value 1024.5), 1026 is the next; 4096..4103 is one of width 8. */
    assert_int_equal(n, 4);
    assert_true(bv[0] == 5.0 && bw[0] == 2);
    assert_true(bv[1] == 1024.5 && bw[1] == 2);
    assert_true(bv[2] == 1026.5 && bw[2] == 1);
    assert_true(bv[3] == 4099.5 && bw[3] == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_3x3),
        cmocka_unit_test(test_exact_4x5),
        cmocka_unit_test(test_normal_ties),
        cmocka_unit_test(test_all_tied),
        cmocka_unit_test(test_diff_rank_brute),
        cmocka_unit_test(test_diff_rank_weighted),
        cmocka_unit_test(test_compare_brute),
        cmocka_unit_test(test_u_brute),
        cmocka_unit_test(test_compare_weighted),
        cmocka_unit_test(test_diff_rank_rounding),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_power_5pct),
        cmocka_unit_test(test_interval_coverage),
        cmocka_unit_test(test_false_alarms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
