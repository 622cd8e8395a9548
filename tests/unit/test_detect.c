/*
 * The smallest change a run-level comparison could have shown
 * (lib/stat/detect.c): the shift the exact test needs on cases worked out
 * by hand, the pooled noise of the round medians, the change in %, and the
 * two-step rule of rounds.h at its boundary.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/stat/detect.h"
#include "lib/stat/rounds.h"

/* Too few rounds for the test to reach alpha: nothing is detectable. */
static void unreachable(void **state)
{
    (void)state;
    /* 4 a side: the smallest p is 2 / 70 = 0.029, not below 0.01. */
    assert_true(isinf(hrs_detect_shift_sd(4, 4, 0.01)));
    assert_true(isinf(hrs_detect_shift_sd(3, 3, 0.05)));
    assert_true(isinf(hrs_detect_shift_sd(1, 5, 0.05)));
    assert_true(isinf(hrs_detect_change(INFINITY, 0.1)));
}

/*
 * 5 a side at alpha 0.01: the fastest-half test flags only when its
 * statistic is the farthest from 0 of all 252 splits but the mirror one
 * (p = 2/252). Its power on every one of 1000 fixed normal draws reaches
 * 80% at a shift of 3.250 standard deviations (the Mann-Whitney test,
 * which also flags only the farthest split, needs 3.12 on the
 * normal noise that favours it). At alpha 0.05 it flags more splits and
 * needs less. At 6 a side and alpha 0.002 it cannot flag (2/924).
 */
static void five_a_side(void **state)
{
    double d01 = hrs_detect_shift_sd(5, 5, 0.01);
    double d05 = hrs_detect_shift_sd(5, 5, 0.05);

    (void)state;
    assert_true(fabs(d01 - 3.250) < 0.001);
    assert_true(d05 < d01 - 0.2);
    assert_true(isinf(hrs_detect_shift_sd(6, 6, 0.002)));
    assert_true(fabs(hrs_detect_shift_sd(6, 6, 0.01) - 2.605) < 0.001);
    /* The same figure every time: the draws are a fixed sequence. */
    assert_true(hrs_detect_shift_sd(5, 5, 0.01) == d01);
}

/*
 * Many rounds: the statistic's critical value under normal noise. 40 a
 * side at alpha 0.01: 0.887 standard deviations, above the 0.782 of the
 * Mann-Whitney test on normal noise (the fastest half leaves the slower
 * half out: the price of not being moved by slow-mode rounds).
 */
static void many_rounds(void **state)
{
    double d = hrs_detect_shift_sd(40, 40, 0.01);

    (void)state;
    assert_true(fabs(d - 0.887) < 0.001);
    /* More rounds, a smaller shift. */
    assert_true(fabs(hrs_detect_shift_sd(20, 20, 0.01) - 1.261) < 0.001);
    assert_true(hrs_detect_shift_sd(10, 10, 0.01) > d);
    assert_true(hrs_detect_shift_sd(10, 10, 0.01) <
                hrs_detect_shift_sd(6, 6, 0.01));
}

/* The pooled standard deviation of the log medians, each side about its
 * own mean. */
static void log_sd(void **state)
{
    double e = exp(1), x[] = { 1, e, e * e }, y[] = { e, e * e, e * e * e };
    double flat[] = { 160, 160, 160 }, one_slow[] = { 160, 160, 250 };
    double s;

    (void)state;
    /* Logs 0, 1, 2 and 1, 2, 3: squares 1 + 0 + 1 a side, 4 / (6 - 2). */
    assert_true(fabs(hrs_detect_log_sd(x, 3, y, 3) - 1) < 1e-12);
    assert_true(hrs_detect_log_sd(flat, 3, flat, 3) == 0);
    /* One slow-mode round of three: log(250/160) = 0.446, its side's
     * squares 2 * (0.446 / 3)^2 + (2 * 0.446 / 3)^2 = 0.1327, over 4. */
    s = hrs_detect_log_sd(one_slow, 3, flat, 3);
    assert_true(fabs(s - sqrt(2.0 / 3 * log(250.0 / 160) *
                              log(250.0 / 160) / 4)) < 1e-12);
    assert_true(isnan(hrs_detect_log_sd(x, 1, y, 1)));
    x[0] = 0;
    assert_true(isnan(hrs_detect_log_sd(x, 3, y, 3)));
}

/* The change in %: exp(shift * sd) - 1. */
static void change(void **state)
{
    (void)state;
    assert_true(hrs_detect_change(3, 0) == 0);
    assert_true(fabs(hrs_detect_change(2, 0.05) - 100 * expm1(0.1)) <
                1e-9);
    assert_true(isnan(hrs_detect_change(2, NAN)));
}

/*
 * The two-step rule at its boundary: on a clock of measured step 10.0149
 * ns, 20 ns to 40 ns is two whole steps and is enough; one step (10 ns)
 * and a step and a half (15 ns, a median of an even count) are not; an
 * unknown step lets any change through.
 */
static void two_steps(void **state)
{
    (void)state;
    assert_true(hrs_rounds_steps_enough(40 - 20, 10.0149));
    assert_true(hrs_rounds_steps_enough(-20, 10.0149));
    assert_true(hrs_rounds_steps_enough(20, 10.4));
    assert_false(hrs_rounds_steps_enough(15, 10.0149));
    assert_false(hrs_rounds_steps_enough(10, 10));
    assert_true(hrs_rounds_steps_enough(17.5, 10));
    assert_false(hrs_rounds_steps_enough(17.4, 10));
    assert_true(hrs_rounds_steps_enough(0.5, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreachable), cmocka_unit_test(five_a_side),
        cmocka_unit_test(many_rounds), cmocka_unit_test(log_sd),
        cmocka_unit_test(change),      cmocka_unit_test(two_steps),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
