/*
 * Change points of a series (lib/stat/changepoint.c): a 5% step in 2%
 * noise found at its run or the next (in at least 86% of 200 series),
 * with the medians either side; noise alone and a
 * single spike of +50% found nothing; a step lasting --window runs found,
 * a shorter one not; the same series gives the same answer; a new run
 * judged against a segment (check); Student's t distribution.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/stat/changepoint.h"

static const struct hrs_cp_opts defaults = {
    HRS_CP_ALPHA_DEFAULT, HRS_CP_MIN_CHANGE_DEFAULT, HRS_CP_WINDOW_DEFAULT, 0,
    0
};

/* Standard normal draws from a xorshift generator (Box-Muller). */
static double gauss(uint64_t *s)
{
    double u1, u2;

    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    u1 = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    u2 = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* n runs of 1000 ns with `noise` relative noise, times (1 + step) from
 * run `at` on. */
static void series(double *x, size_t n, double noise, size_t at, double step,
                   uint64_t seed)
{
    seed = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++)
        x[i] = 1000 * (1 + noise * gauss(&seed)) * (i >= at ? 1 + step : 1);
}

static void test_step_found(void **state)
{
    double x[50];
    struct hrs_cp cp[8];
    int found = 0;

    (void)state;
    /* 200 series: the method places 177 at run 25 or 26; placing by the
     * ranks' split and the sides' absolute deviations placed 164. */
    for (uint64_t seed = 1; seed <= 200; seed++) {
        int n;

        series(x, 50, 0.02, 25, 0.05, seed);
        n = hrs_cp_detect(x, 50, &defaults, cp, 8);
        assert_true(n >= 1);
        for (int i = 0; i < n && i < 8; i++) {
            if (cp[i].at != 25 && cp[i].at != 26)
                continue;
            found++;
            assert_true(cp[i].change > 0.025 && cp[i].change < 0.075);
            assert_true(cp[i].p <= HRS_CP_ALPHA_DEFAULT);
            assert_true(fabs(cp[i].before - 1000) < 25);
            assert_true(fabs(cp[i].after - 1050) < 25);
        }
    }
    assert_true(found >= 172);
}

static void test_exact_values(void **state)
{
    /* Ten runs at 100, ten at 110, each 0 to 0.09 above, in a shuffled
    order: one change at run 10, of 110.045 / 100.045 - 1. */
    double x[20];
    struct hrs_cp cp[4];

    (void)state;
    for (size_t i = 0; i < 20; i++)
        x[i] = (i < 10 ? 100 : 110) + (double)((i * 7) % 10) * 0.01;
    assert_int_equal(hrs_cp_detect(x, 20, &defaults, cp, 4), 1);
    assert_int_equal(cp[0].at, 10);
    assert_true(fabs(cp[0].before - 100.045) < 1e-9);
    assert_true(fabs(cp[0].after - 110.045) < 1e-9);
    assert_true(fabs(cp[0].change - (110.045 / 100.045 - 1)) < 1e-9);
    /* Student's t of the logarithms (none clipped: the median absolute
     * deviation is half the step), 18 degrees of freedom, two-sided,
     * times the 15 places the split could have been. With the tail check
     * (single samples), p is at least the chance of the ten runs after
     * by outliers alone: none of the ten runs before lies beyond the line
     * a quarter of the way up, so each run after does by chance (0 + 1) /
     * (10 + 2), all ten (1/12)^10, times the 15 places. */
    {
        double ml = 0, mr = 0, ss = 0, t;

        for (size_t i = 0; i < 20; i++)
            *(i < 10 ? &ml : &mr) += log(x[i] + 1) / 10;
        for (size_t i = 0; i < 20; i++)
            ss += pow(log(x[i] + 1) - (i < 10 ? ml : mr), 2);
        t = (mr - ml) / sqrt(ss / 18 * (1 / 10.0 + 1 / 10.0));
        assert_true(t > 100);
        assert_true(cp[0].p > 0);
        assert_true(fabs(cp[0].p / (15 * 2 * hrs_cp_student_cdf(-t, 18)) -
                         1) < 1e-9);
        assert_true(2 * hrs_cp_student_cdf(-t, 18) < pow(1 / 12.0, 10));
    }
    {
        struct hrs_cp_opts o = defaults;

        o.tail = 1;
        assert_int_equal(hrs_cp_detect(x, 20, &o, cp, 4), 1);
        assert_true(fabs(cp[0].p / (15 * pow(1 / 12.0, 10)) - 1) < 1e-9);
    }
    /* min_change above the change: none. */
    {
        struct hrs_cp_opts o = defaults;
        o.min_change = 0.2;
        assert_int_equal(hrs_cp_detect(x, 20, &o, cp, 4), 0);
    }
}

static void test_noise_is_no_change(void **state)
{
    double x[50];
    struct hrs_cp cp[8];
    int changed = 0;

    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        series(x, 50, 0.02, 50, 0, seed);
        changed += hrs_cp_detect(x, 50, &defaults, cp, 8) > 0;
    }
    assert_true(changed <= 2);
}

static void test_spike_is_no_change(void **state)
{
    double x[50];
    struct hrs_cp cp[8];
    int changed = 0;

    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        series(x, 50, 0.02, 50, 0, seed);
        x[seed % 50] *= 1.5;
        changed += hrs_cp_detect(x, 50, &defaults, cp, 8) > 0;
    }
    assert_true(changed <= 2);
    /* The spike as the newest run, and just before it. */
    series(x, 50, 0.02, 50, 0, 7);
    x[49] *= 1.5;
    assert_int_equal(hrs_cp_detect(x, 50, &defaults, cp, 8), 0);
    x[48] *= 1.5;
    x[49] /= 1.5;
    assert_int_equal(hrs_cp_detect(x, 50, &defaults, cp, 8), 0);
}

static void test_window(void **state)
{
    double x[40];
    struct hrs_cp cp[8], again[8];
    int n;

    (void)state;
    /* 20% slower for the last 3 runs: a change with --window 3, none with
     * --window 4; 2 runs: none with --window 3. */
    series(x, 40, 0.01, 37, 0.20, 3);
    n = hrs_cp_detect(x, 40, &defaults, cp, 8);
    assert_int_equal(n, 1);
    assert_int_equal(cp[0].at, 37);
    assert_true(cp[0].change > 0.15);
    {
        struct hrs_cp_opts o = defaults;
        o.window = 4;
        assert_int_equal(hrs_cp_detect(x, 40, &o, cp, 8), 0);
    }
    series(x, 40, 0.01, 38, 0.20, 3);
    assert_int_equal(hrs_cp_detect(x, 40, &defaults, cp, 8), 0);
    /* Too short a series: 2 x window points or fewer than that. */
    series(x, 5, 0.01, 3, 0.5, 3);
    assert_int_equal(hrs_cp_detect(x, 5, &defaults, cp, 8), 0);
    /* Deterministic: the same series, the same answer. */
    series(x, 40, 0.02, 10, 0.05, 11);
    n = hrs_cp_detect(x, 40, &defaults, cp, 8);
    assert_int_equal(hrs_cp_detect(x, 40, &defaults, again, 8), n);
    assert_memory_equal(cp, again, (size_t)n * sizeof *cp);
}

static void test_clock_steps(void **state)
{
    double x[40];
    struct hrs_cp cp[8];

    (void)state;
    /* Medians of whole clock steps: 30 runs at 100 ns, then 10 at 110
     * (over half equal: nothing clipped). Found at run 30; a single run
     * at 110 among them is not a change. */
    for (size_t i = 0; i < 40; i++)
        x[i] = i < 30 ? 100 : 110;
    assert_int_equal(hrs_cp_detect(x, 40, &defaults, cp, 8), 1);
    assert_int_equal(cp[0].at, 30);
    assert_true(cp[0].before == 100 && cp[0].after == 110);
    for (size_t i = 0; i < 40; i++)
        x[i] = i == 20 ? 110 : 100;
    assert_int_equal(hrs_cp_detect(x, 40, &defaults, cp, 8), 0);
    x[20] = 100;
    x[39] = 110;
    assert_int_equal(hrs_cp_detect(x, 40, &defaults, cp, 8), 0);
}

static void test_two_steps(void **state)
{
    double x[60];
    struct hrs_cp cp[8];

    (void)state;
    for (size_t i = 0; i < 60; i++)
        x[i] = i < 20 ? 100 : i < 40 ? 120 : 90;
    for (size_t i = 0; i < 60; i++)
        x[i] += (double)((i * 7) % 5) * 0.2;
    assert_int_equal(hrs_cp_detect(x, 60, &defaults, cp, 8), 2);
    assert_int_equal(cp[0].at, 20);
    assert_int_equal(cp[1].at, 40);
    assert_true(cp[0].change > 0.19 && cp[1].change < -0.24);
}

static void test_check(void **state)
{
    double seg[20];
    struct hrs_cp c;

    (void)state;
    series(seg, 20, 0.01, 20, 0, 5);
    assert_int_equal(hrs_cp_check(seg, 20, 1100, &c), 0);
    assert_true(c.p < 1e-4);
    assert_true(c.change > 0.08 && c.change < 0.12);
    assert_int_equal(hrs_cp_check(seg, 20, c.before, &c), 0);
    assert_true(fabs(c.p - 0.5) < 0.01);
    assert_int_equal(hrs_cp_check(seg, 20, 900, &c), 0);
    assert_true(c.p > 0.999);
    assert_int_equal(hrs_cp_check(seg, 1, 900, &c), -EINVAL);
}

static void test_student(void **state)
{
    (void)state;
    assert_true(hrs_cp_student_cdf(0, 5) == 0.5);
    /* Reference values (R: pt(2, 10), pt(-1.5, 3)). */
    assert_true(fabs(hrs_cp_student_cdf(2, 10) - 0.9633062) < 1e-6);
    assert_true(fabs(hrs_cp_student_cdf(-1.5, 3) - 0.1152919) < 1e-6);
}

/* The detectable change of check: at power 0.5 the value it names is
 * exactly at p = alpha (the t quantile of 0.5 is 0); at 0.8 it lies
 * beyond; a wider segment detects less. */
static void test_check_detectable(void **state)
{
    double seg[20], wide[20], l[20], tmp[20], med, det, det8, x;
    struct hrs_cp res;

    (void)state;
    for (int i = 0; i < 20; i++) {
        seg[i] = 1000 + 10 * (i % 5);
        wide[i] = 1000 + 50 * (i % 5);
        l[i] = log(seg[i] + 1);
    }
    med = hrs_cp_median(l, 20, tmp);
    det = hrs_cp_check_detectable(seg, 20, 0.01, 0.5);
    assert_true(det > 0 && det < 10);
    x = exp(med + log1p(det / 100)) - 1;
    assert_int_equal(hrs_cp_check(seg, 20, x, &res), 0);
    assert_true(fabs(res.p - 0.01) < 1e-6);
    det8 = hrs_cp_check_detectable(seg, 20, 0.01, 0.8);
    assert_true(det8 > det);
    x = exp(med + log1p(det8 / 100)) - 1;
    assert_int_equal(hrs_cp_check(seg, 20, x, &res), 0);
    assert_true(res.p < 0.01);
    assert_true(hrs_cp_check_detectable(wide, 20, 0.01, 0.8) > det8);
    assert_true(isnan(hrs_cp_check_detectable(seg, 1, 0.01, 0.8)));
    assert_true(isnan(hrs_cp_check_detectable(seg, 20, 0, 0.8)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_found),
        cmocka_unit_test(test_check_detectable),
        cmocka_unit_test(test_exact_values),
        cmocka_unit_test(test_noise_is_no_change),
        cmocka_unit_test(test_spike_is_no_change),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_clock_steps),
        cmocka_unit_test(test_two_steps),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_student),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
