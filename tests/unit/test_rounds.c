/*
 * The run-level test (lib/stat/rounds.c) on cases computed by hand: exact
 * Mann-Whitney p-values with and without ties, the Hodges-Lehmann k of
 * small samples, and a whole comparison with its ratio and interval.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/stat/rounds.h"

static void median_and_spread(void **state)
{
    double odd[] = { 30, 10, 20 }, even[] = { 4, 1, 3, 2 }, s[] = { 90, 110,
                                                                      100 };

    (void)state;
    assert_true(hrs_rounds_median(odd, 3) == 20);
    assert_true(hrs_rounds_median(even, 4) == 2.5);
    assert_true(isnan(hrs_rounds_median(odd, 0)));
    /* (110 - 90) / 100 */
    assert_true(fabs(hrs_rounds_spread(s, 3) - 20) < 1e-12);
    assert_true(hrs_rounds_spread(s, 1) == 0);
}

static void exact_separated(void **state)
{
    double x5[] = { 1, 2, 3, 4, 5 }, y5[] = { 6, 7, 8, 9, 10 };
    double u;

    (void)state;
    /* All of new above all of base: 2 of the C(10,5) = 252 splits are as
     * extreme. */
    assert_true(fabs(hrs_rounds_mwu_exact(x5, 5, y5, 5, &u) - 2.0 / 252) <
                1e-12);
    assert_true(u == 25);
    /* Below: U = 0, the same p. */
    assert_true(fabs(hrs_rounds_mwu_exact(y5, 5, x5, 5, &u) - 2.0 / 252) <
                1e-12);
    assert_true(u == 0);
    /* 3 a side: 2 / 20; 4 a side: 2 / 70; 6 a side: 2 / 924. */
    assert_true(fabs(hrs_rounds_mwu_exact(x5, 3, y5, 3, NULL) - 0.1) <
                1e-12);
    assert_true(fabs(hrs_rounds_mwu_exact(x5, 4, y5, 4, NULL) - 2.0 / 70) <
                1e-12);
    {
        double a[] = { 1, 2, 3, 4, 5, 6 }, b[] = { 7, 8, 9, 10, 11, 12 };

        assert_true(fabs(hrs_rounds_mwu_exact(a, 6, b, 6, NULL) -
                         2.0 / 924) < 1e-12);
    }
    /* Interleaved evenly: U = nm/2 exactly, p = 1. */
    {
        double a[] = { 1, 4, 5, 8 }, b[] = { 2, 3, 6, 7 };

        assert_true(hrs_rounds_mwu_exact(a, 4, b, 4, &u) == 1);
        assert_true(u == 8);
    }
    /* Too many splits: C(40, 20). */
    {
        double a[20] = { 0 }, b[20] = { 0 };

        assert_true(hrs_rounds_mwu_exact(a, 20, b, 20, NULL) == -1);
    }
}

static void exact_ties(void **state)
{
    /* Pooled 1 2 3 3 4 5, midranks 1 2 3.5 3.5 5 6: new's rank sum 14.5,
     * U = 8.5, 4 from nm/2 = 4.5. Rank sums as far: 14.5 (two ways, one
     * per 3.5) and 6.5 (two ways): 4 of 20. */
    double x[] = { 1, 2, 3 }, y[] = { 3, 4, 5 }, u;

    (void)state;
    assert_true(fabs(hrs_rounds_mwu_exact(x, 3, y, 3, &u) - 0.2) < 1e-12);
    assert_true(u == 8.5);
    /* All equal: every split is as extreme as U = nm/2: p = 1. */
    {
        double a[] = { 110, 110, 110 }, b[] = { 110, 110, 110 };

        assert_true(hrs_rounds_mwu_exact(a, 3, b, 3, &u) == 1);
        assert_true(u == 4.5);
    }
}

static void hl_k(void **state)
{
    (void)state;
    /* 5,5: P(U <= 2) = 4/252 = 0.016, P(U <= 3) = 7/252 = 0.028. */
    assert_int_equal(hrs_rounds_hl_k(5, 5), 3);
    /* 4,4: P(U = 0) = 1/70 = 0.014, P(U <= 1) = 2/70 = 0.029. */
    assert_int_equal(hrs_rounds_hl_k(4, 4), 1);
    /* 3,3: P(U = 0) = 1/20 = 0.05: no 95% interval. */
    assert_int_equal(hrs_rounds_hl_k(3, 3), 0);
    /* 10,10: P(U <= 23) = 0.0216, P(U <= 24) = 0.0262. */
    assert_int_equal(hrs_rounds_hl_k(10, 10), 24);
}

static void compare(void **state)
{
    double x[] = { 104, 100, 102, 101, 103 }, y[] = { 112, 110, 114, 111,
                                                        113 };
    struct hrs_rounds_cmp c;

    (void)state;
    assert_int_equal(hrs_rounds_compare(x, 5, y, 5, &c), 0);
    assert_true(c.base_median == 102 && c.new_median == 112);
    assert_true(fabs(c.change - 100 * (112.0 / 102 - 1)) < 1e-9);
    assert_true(c.exact);
    assert_true(fabs(c.p - 2.0 / 252) < 1e-12);
    /* The 3rd smallest and 3rd largest of the 25 ratios y/x: 110/103 and
     * 114/101. */
    assert_true(fabs(c.lo - 100 * (110.0 / 103 - 1)) < 1e-9);
    assert_true(fabs(c.hi - 100 * (114.0 / 101 - 1)) < 1e-9);
    assert_true(fabs(c.spread_base - 100 * 4.0 / 102) < 1e-9);
    /* 3 a side: p = 0.1 at best, and the interval is unbounded. */
    assert_int_equal(hrs_rounds_compare(x, 3, y, 3, &c), 0);
    assert_true(fabs(c.p - 0.1) < 1e-12);
    assert_true(isinf(c.lo) && c.lo < 0 && isinf(c.hi) && c.hi > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_and_spread),
        cmocka_unit_test(exact_separated),
        cmocka_unit_test(exact_ties),
        cmocka_unit_test(hl_k),
        cmocka_unit_test(compare),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
