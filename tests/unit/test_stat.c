/*
 * Sorting, summary statistics and the log-linear histogram (lib/stat/summary.c,
 * lib/stat/hist.c) against brute force on random data.
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

#include "lib/stat/hist.h"
#include "lib/stat/summary.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A value from one of several shapes: narrow, heavy-tailed, huge. */
static uint64_t draw(int shape)
{
    switch (shape % 5) {
    case 0:
        return 5000 + next() % 100;
    case 1: {
        /* Log-uniform over 2^0 .. 2^40. */
        int e = (int)(next() % 40);
        return ((uint64_t)1 << e) + next() % ((uint64_t)1 << e);
    }
    case 2:
        return next() % 1024;
    case 3:
        return next() >> (next() % 64);
    default:
        return 777;
    }
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The quantile of sorted values by linear interpolation of ranks (numpy's
 * default), computed the slow way. */
static long double brute_quantile(const uint64_t *v, size_t n, double q)
{
    long double pos = (long double)q * (long double)(n - 1);
    size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;

    return (long double)v[lo] + (pos - lo) * ((long double)v[hi] - v[lo]);
}

/* Sorts v with hrs_sort_u64 and w with qsort, and checks they agree. */
static void sort_both(uint64_t *v, uint64_t *w, size_t n, uint64_t *tmp)
{
    hrs_sort_u64(v, n, tmp);
    qsort(w, n, sizeof *w, cmp);
    assert_memory_equal(v, w, n * sizeof *v);
}

static void test_sort(void **state)
{
    static const size_t sizes[] = { 0, 1, 2, 63, 64, 65, 1000, 100000 };

    (void)state;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int shape = 0; shape < 5; shape++) {
            size_t n = sizes[s];
            uint64_t *v = malloc((n + 1) * sizeof *v);
            uint64_t *w = malloc((n + 1) * sizeof *w);
            uint64_t *tmp = malloc((n + 1) * sizeof *tmp);

            for (size_t i = 0; i < n; i++)
                v[i] = w[i] = draw(shape);
            if (n > 3)
                v[0] = w[0] = UINT64_MAX;
            sort_both(v, w, n, tmp);
            free(v);
            free(w);
            free(tmp);
        }
    }
}

/* Values already in order are left as they are; one value out of place
 * at the end (or the start) still gets sorted. */
static void test_sort_sorted(void **state)
{
    (void)state;
    for (size_t n = 60; n < 5000; n = n * 3 + 1) {
        uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        uint64_t *tmp = malloc(n * sizeof *tmp);

        for (int where = 0; where < 3; where++) {
            for (size_t i = 0; i < n; i++)
                v[i] = w[i] = 1000 + i / 3 * 7;
            if (where == 1)
                v[n - 1] = w[n - 1] = 999;
            else if (where == 2)
                v[0] = w[0] = UINT64_MAX;
            sort_both(v, w, n, tmp);
        }
        free(v);
        free(w);
        free(tmp);
    }
}

static void test_summary_fixed(void **state)
{
    uint64_t v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    uint64_t one[1] = { 775383 };
    struct hrs_summary s;

    (void)state;
    /* numpy: mean 5.5, median 5.5, percentile 90 -> 9.1, 99 -> 9.91,
     * std 2.8722813232690143. */
    hrs_summary_sorted(v, 10, &s);
    assert_int_equal(s.count, 10);
    assert_true(s.mean == 5.5);
    assert_true(s.median == 5.5);
    assert_true(s.min == 1.0 && s.max == 10.0);
    assert_true(fabs(s.p90 - 9.1) < 1e-12);
    assert_true(fabs(s.p99 - 9.91) < 1e-12);
    assert_true(fabs(s.stddev - 2.8722813232690143) < 1e-12);
    assert_int_equal(s.exact, 1);

    hrs_summary_sorted(one, 1, &s);
    assert_true(s.median == 775383.0 && s.p99 == 775383.0);
    assert_true(s.stddev == 0.0);

    hrs_summary_sorted(v, 0, &s);
    assert_int_equal(s.count, 0);
    assert_true(s.mean == 0.0);
}

static void test_summary_against_brute_force(void **state)
{
    (void)state;
    for (int round = 0; round < 100; round++) {
        size_t n = 1 + next() % 5000;
        uint64_t *v = malloc(n * sizeof *v), *tmp = malloc(n * sizeof *tmp);
        long double sum = 0, dev = 0, mean;
        struct hrs_summary s;

        for (size_t i = 0; i < n; i++) {
            v[i] = draw(round) >> 8; /* sums stay exact in long double */
            sum += v[i];
        }
        hrs_sort_u64(v, n, tmp);
        mean = sum / n;
        for (size_t i = 0; i < n; i++)
            dev += ((long double)v[i] - mean) * ((long double)v[i] - mean);
        hrs_summary_sorted(v, n, &s);
        assert_int_equal(s.count, n);
        assert_true(s.mean == (double)mean);
        assert_true(s.median == (double)brute_quantile(v, n, 0.5));
        assert_true(s.min == (double)v[0]);
        assert_true(s.max == (double)v[n - 1]);
        assert_true(fabsl(s.p90 - brute_quantile(v, n, 0.9)) <=
                    1e-9L * brute_quantile(v, n, 0.9));
        assert_true(fabsl(s.p99 - brute_quantile(v, n, 0.99)) <=
                    1e-9L * brute_quantile(v, n, 0.99));
        assert_true(fabsl(s.stddev - sqrtl(dev / n)) <=
                    1e-9L * sqrtl(dev / n) + 1e-9L);
        free(v);
        free(tmp);
    }
}

/* Every value's bucket stands for a value within 0.1% of it, buckets grow
 * with values, and values below 1024 are exact. */
static void test_bucket_error_bound(void **state)
{
    uint32_t last = 0;

    (void)state;
    for (uint64_t v = 0; v < 200000; v++) {
        uint32_t b = hrs_hist_bucket(v);
        double rep = hrs_hist_value(b);

        assert_true(b >= last);
        last = b;
        if (v < 1024)
            assert_true(rep == (double)v);
        assert_true(fabs(rep - (double)v) <= 0.001 * (double)v);
    }
    for (int e = 10; e < 64; e++) {
        uint64_t p = (uint64_t)1 << e;
        uint64_t probe[] = { p - 1, p, p + 1, p + (p >> 1), (p << 1) - 1 };

        for (int i = 0; i < 5; i++) {
            uint64_t v = probe[i];
            uint32_t b = hrs_hist_bucket(v);
            long double rep = hrs_hist_value(b);

            assert_true(b < HRS_HIST_BUCKETS);
            assert_true(fabsl(rep - (long double)v) <= 0.001L * v);
        }
    }
    assert_int_equal(hrs_hist_bucket(UINT64_MAX), HRS_HIST_BUCKETS - 1);
    for (int i = 0; i < 100000; i++) {
        uint64_t v = next() >> (next() % 64);
        long double rep = hrs_hist_value(hrs_hist_bucket(v));
        assert_true(fabsl(rep - (long double)v) <= 0.001L * v);
    }
}

/* Quantiles from a histogram are within 0.1% of the exact ones; count,
 * mean, minimum and maximum are exact. Both ways of filling agree. */
static void test_hist_against_brute_force(void **state)
{
    static const double qs[5] = { 0.0, 0.5, 0.9, 0.99, 1.0 };

    (void)state;
    for (int round = 0; round < 60; round++) {
        size_t n = 1 + next() % 20000;
        uint64_t *v = malloc(n * sizeof *v), *tmp = malloc(n * sizeof *tmp);
        struct hrs_hist one, sorted, fast, copy;
        struct hrs_summary exact, est;
        double out[5];

        hrs_hist_init(&one);
        hrs_hist_init(&sorted);
        hrs_hist_init(&fast);
        for (size_t i = 0; i < n; i++) {
            uint64_t *slot;

            v[i] = draw(round) >> 4;
            assert_int_equal(hrs_hist_add(&one, v[i]), 0);
            /* The inline add: a slot once its chunk is reserved. */
            if ((slot = hrs_hist_slot(&fast, v[i])) == NULL) {
                assert_int_equal(hrs_hist_reserve(&fast, v[i]), 0);
                slot = hrs_hist_slot(&fast, v[i]);
            }
            assert_non_null(slot);
            hrs_hist_bump(&fast, slot, v[i]);
        }
        /* The inline add and a copy give the same histogram. */
        assert_int_equal(hrs_hist_copy(&copy, &one), 0);
        for (int which = 0; which < 2; which++) {
            const struct hrs_hist *h = which ? &copy : &fast;

            assert_true(h->n == one.n && h->nb == one.nb && h->sum == one.sum &&
                        h->min == one.min && h->max == one.max &&
                        h->sumsq_small == one.sumsq_small &&
                        h->sumsq_big == one.sumsq_big &&
                        hrs_hist_bytes(h) == hrs_hist_bytes(&one));
            for (uint32_t j = 0; j < HRS_HIST_CHUNKS; j++) {
                assert_true((one.chunk[j] == NULL) == (h->chunk[j] == NULL));
                if (one.chunk[j] != NULL) {
                    assert_true(h->chunk[j] != one.chunk[j]);
                    assert_memory_equal(one.chunk[j], h->chunk[j],
                                        (j == 0 ? HRS_HIST_LINEAR : 512u) *
                                            sizeof(uint64_t));
                }
            }
        }
        assert_true(hrs_hist_equal(&fast, &one) && hrs_hist_equal(&copy, &one));
        /* One value more makes them differ. */
        assert_int_equal(hrs_hist_add(&copy, v[0]), 0);
        assert_false(hrs_hist_equal(&copy, &one));
        hrs_hist_fini(&fast);
        hrs_hist_fini(&copy);
        hrs_sort_u64(v, n, tmp);
        assert_int_equal(hrs_hist_add_sorted(&sorted, v, n), 0);
        assert_int_equal(one.nb, sorted.nb);
        for (uint32_t j = 0; j < HRS_HIST_CHUNKS; j++) {
            assert_true((one.chunk[j] == NULL) == (sorted.chunk[j] == NULL));
            if (one.chunk[j] != NULL)
                assert_memory_equal(one.chunk[j], sorted.chunk[j],
                                    (j == 0 ? HRS_HIST_LINEAR : 512u) *
                                        sizeof(uint64_t));
        }
        assert_true(one.sum == sorted.sum);
        assert_true(one.min == sorted.min && one.max == sorted.max);

        hrs_summary_sorted(v, n, &exact);
        hrs_summary_hist(&one, &est);
        assert_int_equal(est.count, n);
        assert_int_equal(est.exact, 0);
        assert_true(est.mean == exact.mean);
        assert_true(est.min == exact.min && est.max == exact.max);
        assert_true(fabs(est.median - exact.median) <= 0.001 * exact.median);
        assert_true(fabs(est.p90 - exact.p90) <= 0.001 * exact.p90);
        assert_true(fabs(est.p99 - exact.p99) <= 0.001 * exact.p99);
        assert_true(fabs(est.stddev - exact.stddev) <=
                    1e-6 * exact.stddev + 1e-6 * exact.mean + 1e-9);
        hrs_hist_quantiles(&sorted, qs, 5, out);
        for (int k = 0; k < 5; k++) {
            long double want = brute_quantile(v, n, qs[k]);
            assert_true(fabsl(out[k] - want) <= 0.001L * want);
        }
        hrs_hist_fini(&one);
        hrs_hist_fini(&sorted);
        free(v);
        free(tmp);
    }
}

/* Memory follows the spread of the values, not their number. */
static void test_hist_memory(void **state)
{
    struct hrs_hist h;

    (void)state;
    hrs_hist_init(&h);
    for (int i = 0; i < 1000000; i++)
        assert_int_equal(hrs_hist_add(&h, 20000 + (uint64_t)(i % 1000)), 0);
    assert_int_equal(h.n, 1000000);
    /* 20000..20999 spans buckets of width 32: 32 or 33 of them, all in the
     * chunk of [16384, 32768): one chunk of 512 counts. */
    assert_true(h.nb >= 32 && h.nb <= 33);
    assert_int_equal(hrs_hist_bytes(&h), 512 * sizeof(uint64_t));
    /* A value in each octave from 2^10 to 2^19 adds a chunk for each but
     * the one already there. */
    for (int e = 10; e < 20; e++)
        assert_int_equal(hrs_hist_add(&h, (uint64_t)1 << e), 0);
    assert_int_equal(hrs_hist_bytes(&h), 10 * 512 * sizeof(uint64_t));
    hrs_hist_fini(&h);
    hrs_hist_fini(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_sort_sorted),
        cmocka_unit_test(test_summary_fixed),
        cmocka_unit_test(test_summary_against_brute_force),
        cmocka_unit_test(test_bucket_error_bound),
        cmocka_unit_test(test_hist_against_brute_force),
        cmocka_unit_test(test_hist_memory),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
