/* The fastest-half test (lib/stat/rounds.c) and the decision of a
 * sequential comparison (lib/stat/decide.c). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/stat/decide.h"
#include "lib/stat/rounds.h"

static void fast_half(void **state)
{
    double x[] = { 1, 2, 3, 4, 5 }, y[] = { 6, 7, 8, 9, 10 };
    double a[] = { 100, 100, 100, 150, 160 }, b[] = { 110, 110, 110, 170,
                                                      180 };
    double big[20], big2[20];
    struct hrs_rounds_fast f;

    (void)state;
    assert_int_equal(hrs_rounds_fast_count(5), 3);
    assert_int_equal(hrs_rounds_fast_count(6), 3);
    /* Apart: only the observed split and its mirror are as far. */
    assert_int_equal(hrs_rounds_fast_half(x, 5, y, 5, &f), 0);
    assert_true(f.exact);
    assert_true(fabs(f.p - 2.0 / 252) < 1e-12);
    assert_true(fabs(f.base_fast - cbrt(6)) < 1e-9);
    assert_true(fabs(f.new_fast - cbrt(336)) < 1e-9);
    /* Two slow rounds a side: the change is that of the fast ones,
     * +10%, and 120 of the 252 splits are as far from 0. */
    assert_int_equal(hrs_rounds_fast_half(a, 5, b, 5, &f), 0);
    assert_true(fabs(f.change - 10) < 1e-9);
    assert_true(fabs(f.p - 120.0 / 252) < 1e-12);
    /* The same rounds: p = 1. */
    assert_int_equal(hrs_rounds_fast_half(a, 5, a, 5, &f), 0);
    assert_true(f.change == 0 && f.p == 1);
    /* 20 a side: sampled splits; apart, none of them is as far. */
    for (int i = 0; i < 20; i++) {
        big[i] = 100 + i;
        big2[i] = 200 + i;
    }
    assert_int_equal(hrs_rounds_fast_half(big, 20, big2, 20, &f), 0);
    assert_false(f.exact);
    assert_true(fabs(f.p - 1.0 / (HRS_ROUNDS_FAST_DRAWS + 1)) < 1e-15);
    /* A value not positive, or an empty side. */
    x[0] = 0;
    assert_int_equal(hrs_rounds_fast_half(x, 5, y, 5, &f), -EINVAL);
    assert_int_equal(hrs_rounds_fast_half(big, 0, big2, 5, &f), -EINVAL);
}

static void looks(void **state)
{
    struct hrs_decide_plan p = { 5, 20, 0.01 }, q = { 3, 3, 0.01 };
    size_t at[HRS_DECIDE_LOOKS_MAX];

    (void)state;
    assert_int_equal(hrs_decide_looks(&p, at), 5);
    assert_true(at[0] == 5 && at[1] == 7 && at[2] == 10 && at[3] == 14 &&
                at[4] == 20);
    assert_true(fabs(hrs_decide_look_alpha(&p) - 0.002) < 1e-15);
    assert_int_equal(hrs_decide_next_look(&p, 0), 5);
    assert_int_equal(hrs_decide_next_look(&p, 5), 7);
    assert_int_equal(hrs_decide_next_look(&p, 15), 20);
    assert_int_equal(hrs_decide_next_look(&p, 20), 0);
    /* A fixed number of rounds is a plan of one look. */
    assert_int_equal(hrs_decide_looks(&q, at), 1);
    assert_int_equal(at[0], 3);
    assert_true(fabs(hrs_decide_look_alpha(&q) - 0.01) < 1e-15);
    q.first = 4;
    assert_int_equal(hrs_decide_looks(&q, at), 0);
    assert_string_equal(hrs_decide_name(HRS_DECIDE_SAME), "same");
    assert_string_equal(hrs_decide_name(HRS_DECIDE_UNDECIDED), "undecided");
}

static void decide(void **state)
{
    struct hrs_decide_plan p = { 5, 20, 0.01 };
    double a[20], b[20], c[20];
    struct hrs_decide d;

    (void)state;
    for (int i = 0; i < 20; i++) {
        a[i] = 100 + i % 3;
        /* 20% slower, the 4th round of each 5 a slow one. */
        b[i] = 1.2 * a[i] * (i % 5 == 3 ? 1.5 : 1);
        c[i] = 100 + (i + 1) % 3;
    }
    /* No look yet. */
    assert_int_equal(hrs_decide_key(a, b, 4, 5, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_int_equal(d.pairs, 0);
    /* At 5 pairs p = 2/252 is not below 0.01 / 5; at 7, 2/3432 is. */
    assert_int_equal(hrs_decide_key(a, b, 6, 5, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_int_equal(d.pairs, 5);
    assert_true(fabs(d.p - 2.0 / 252) < 1e-12);
    assert_int_equal(hrs_decide_key(a, b, 20, 5, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SLOWER);
    assert_int_equal(d.pairs, 7);
    assert_true(fabs(d.p - 2.0 / 3432) < 1e-12);
    /* The fastest 4 of 7: 100 100 100 101 and 120 120 121.2 121.2. */
    assert_true(fabs(d.change - 100 * (pow(120.0 * 120 * 121.2 * 121.2 /
                                           (100.0 * 100 * 100 * 101),
                                           0.25) - 1)) < 1e-9);
    /* Within a threshold of 25%: same, once the slow round of the
     * first five no longer stretches the interval past 25%. */
    assert_int_equal(hrs_decide_key(a, b, 20, 25, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SAME);
    assert_int_equal(d.pairs, 7);
    assert_true(d.hi < 25);
    /* At 15%: slower. */
    assert_int_equal(hrs_decide_key(a, b, 20, 15, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SLOWER);
    /* On a clock of 15 ns steps, 20 ns is short of two steps. */
    assert_int_equal(hrs_decide_key(a, b, 20, 5, 15, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    /* The same build, rounds 1 ns apart: the interval lies inside +-5%
     * at the first look. */
    assert_int_equal(hrs_decide_key(a, c, 20, 5, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SAME);
    assert_int_equal(d.pairs, 5);
    assert_true(d.lo > -5 && d.hi < 5);
    /* On a clock of 5 ns steps 5% of 100 ns is one step: not same; on
     * one of 2 ns steps, same. */
    assert_int_equal(hrs_decide_key(a, c, 20, 5, 5, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_int_equal(hrs_decide_key(a, c, 20, 5, 2, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SAME);
    /* Faster. */
    assert_int_equal(hrs_decide_key(b, a, 20, 5, 0, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_FASTER);
    assert_int_equal(d.pairs, 7);
}

/* The two-step rule at its boundary, on a run's measured clock step of
 * 10.0149 ns (a TSC of 10 ns steps): a change of exactly two whole steps
 * is flagged once its p is low enough, and is not hopeless before. */
static void two_steps(void **state)
{
    struct hrs_decide_plan p = { 5, 20, 0.01 };
    double step = 10.0149, shift = 0, at_max;
    double a20[7], a40[7], a50[7], a60[7], b60[7];
    struct hrs_rounds_fast f;
    struct hrs_rounds_cmp c;
    struct hrs_decide d;

    (void)state;
    for (int i = 0; i < 7; i++) {
        a20[i] = 20;
        a40[i] = 40;
        a50[i] = 50;
        a60[i] = 60;
        /* Two whole steps up in all but one round, one step in that. */
        b60[i] = i == 2 ? 50 : 60;
    }
    /* The floor: 1.75 measured steps, below two whole ones. */
    assert_true(fabs(hrs_rounds_steps_floor_pct(step, 40) -
                     100 * 1.75 * step / 40) < 1e-9);
    assert_true(hrs_rounds_steps_floor_pct(step, 40) < 50);
    assert_true(hrs_rounds_steps_floor_pct(0, 40) == 0);
    assert_true(hrs_rounds_steps_floor_pct(step, 0) == 0);
    /* A self row from 20 to 40 ns: at 5 pairs p = 2/252 is above 0.002,
     * undecided, but not hopeless (+100% is above the floor of 87.6%);
     * at 7 pairs, p = 2/3432: slower. */
    assert_int_equal(hrs_decide_key(a20, a40, 5, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_true(fabs(d.change - 100) < 1e-9);
    assert_int_equal(hrs_decide_hopeless(a20, a40, 5, 5, step, 20, &p, &d,
                                         &shift, &at_max), 0);
    assert_true(fabs(at_max - 100 * 1.75 * step / 20) < 1e-9);
    assert_int_equal(hrs_decide_key(a20, a40, 7, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SLOWER);
    assert_int_equal(d.pairs, 7);
    assert_true(fabs(d.p - 2.0 / 3432) < 1e-12);
    /* 40 to 60 ns: +50%, two whole steps, is not hopeless at 5 pairs
     * (it was when the floor was two measured steps, 50.07%). */
    assert_int_equal(hrs_decide_key(a40, a60, 5, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_int_equal(hrs_decide_hopeless(a40, a60, 5, 5, step, 40, &p, &d,
                                         &shift, &at_max), 0);
    assert_true(at_max < 50);
    /* The same with one round a step short: the fastest halves' means
     * differ by 1.73 steps, the medians by two whole ones: slower. */
    assert_int_equal(hrs_rounds_fast_half(a40, 7, b60, 7, &f), 0);
    assert_int_equal(hrs_rounds_compare(a40, 7, b60, 7, &c), 0);
    assert_false(hrs_rounds_steps_enough(f.new_fast - f.base_fast, step));
    assert_true(fabs(hrs_rounds_moved(&f, &c) - 20) < 1e-9);
    assert_int_equal(hrs_decide_key(a40, b60, 7, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SLOWER);
    assert_int_equal(d.pairs, 7);
    /* And faster, the other way. */
    assert_int_equal(hrs_decide_key(b60, a40, 7, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_FASTER);
    /* One step, 40 to 50 ns: never slower, and hopeless at the first
     * look (+25%, below the floor of 43.8%). */
    assert_int_equal(hrs_decide_key(a40, a50, 7, 5, step, &p, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_int_equal(hrs_decide_key(a40, a50, 5, 5, step, &p, &d), 0);
    assert_int_equal(hrs_decide_hopeless(a40, a50, 5, 5, step, 40, &p, &d,
                                         &shift, &at_max), 1);
    /* At the plan's last look nothing is hopeless: it is over. */
    assert_int_equal(hrs_decide_hopeless(a40, a50, 20, 5, step, 40, &p, &d,
                                         &shift, &at_max), 0);
}

/* One look without pairs: a run's 5 rounds against a segment of 12. */
static void once(void **state)
{
    double seg[12], slow[5] = { 130, 131, 132, 133, 134 };
    double near[5] = { 101, 102, 103, 104, 105 }, zero[1] = { 0 };
    struct hrs_decide d;

    (void)state;
    for (int i = 0; i < 12; i++)
        seg[i] = 100 + 0.5 * i;
    /* Beyond every value of the segment: p at most 2 / C(17, 5), the
     * change about +30%. */
    assert_int_equal(hrs_decide_once(seg, 12, slow, 5, 10, 0, 0.01, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SLOWER);
    assert_int_equal(d.pairs, 5);
    assert_true(d.p <= 2.0 / 6188 + 1e-12);
    assert_true(d.change > 25 && d.change < 35);
    /* The same, on a clock of 20 ns steps: less than two steps apart
     * (the fastest halves about 102 and 131), not slower. */
    assert_int_equal(hrs_decide_once(seg, 12, slow, 5, 10, 20, 0.01, &d), 0);
    assert_int_not_equal(d.verdict, HRS_DECIDE_SLOWER);
    /* Within the segment: the interval inside +-5%, same; at +-1%,
     * undecided, with its interval. */
    assert_int_equal(hrs_decide_once(seg, 12, near, 5, 5, 0, 0.01, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_SAME);
    assert_true(d.lo > -5 && d.hi < 5 && d.lo < d.hi);
    assert_int_equal(hrs_decide_once(seg, 12, near, 5, 1, 0, 0.01, &d), 0);
    assert_int_equal(d.verdict, HRS_DECIDE_UNDECIDED);
    assert_true(d.lo <= -1 || d.hi >= 1);
    assert_int_equal(hrs_decide_once(seg, 12, near, 0, 5, 0, 0.01, &d),
                     -EINVAL);
    assert_int_equal(hrs_decide_once(seg, 12, zero, 1, 5, 0, 0.01, &d),
                     -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_half),
        cmocka_unit_test(looks),
        cmocka_unit_test(decide),
        cmocka_unit_test(two_steps),
        cmocka_unit_test(once),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
