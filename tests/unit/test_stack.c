/* The range stack's arithmetic, driven by a fake clock (client/stack.h). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/stack.h"

struct sample {
    uint64_t incl, self;
    uint32_t range, window, nchild, ndesc;
};

static struct hr__stack st;
static uint64_t now; /* the fake clock */

struct scope {
    uint32_t depth, serial;
};

static struct scope begin(uint32_t range, uint32_t window)
{
    struct scope sc;

    sc.depth = hr__stack_push(&st, range, window, now, &sc.serial);
    assert_int_not_equal(sc.depth, 0);
    return sc;
}

static struct sample end(struct scope sc, uint32_t expect_abandoned)
{
    struct sample s;
    uint32_t abandoned;

    assert_int_equal(hr__stack_pop(&st, sc.depth, sc.serial, now, &s.incl,
                                   &s.self, &s.range, &s.window, &s.nchild,
                                   &s.ndesc, &abandoned),
                     HR__POP_OK);
    assert_int_equal(abandoned, expect_abandoned);
    return s;
}

static int reset(void **state)
{
    (void)state;
    memset(&st, 0, sizeof st);
    now = 1000;
    return 0;
}

static void test_three_deep(void **state)
{
    struct scope a, b, c;
    struct sample sa, sb, sc;

    (void)state;
    a = begin(1, 7);
    now += 10;
    b = begin(2, 7);
    now += 20;
    c = begin(3, 7);
    now += 40;
    sc = end(c, 0);
    now += 5;
    sb = end(b, 0);
    now += 3;
    sa = end(a, 0);
    assert_int_equal(sc.incl, 40);
    assert_int_equal(sc.self, 40);
    assert_int_equal(sc.range, 3);
    assert_int_equal(sb.incl, 65);
    assert_int_equal(sb.self, 25);
    assert_int_equal(sa.incl, 78);
    assert_int_equal(sa.self, 13);
    assert_int_equal(sa.window, 7);
    /* Direct children only: a has b, b has c. */
    assert_int_equal(sa.nchild, 1);
    assert_int_equal(sb.nchild, 1);
    assert_int_equal(sc.nchild, 0);
    assert_int_equal(st.depth, 0);
}

static void test_siblings(void **state)
{
    struct scope p, c;
    struct sample sp, s1, s2;

    (void)state;
    p = begin(1, 1);
    now += 2;
    c = begin(2, 1);
    now += 30;
    s1 = end(c, 0);
    now += 4;
    c = begin(2, 1);
    now += 50;
    s2 = end(c, 0);
    now += 6;
    sp = end(p, 0);
    assert_int_equal(s1.incl, 30);
    assert_int_equal(s2.incl, 50);
    assert_int_equal(sp.incl, 92);
    /* self = inclusive minus both children */
    assert_int_equal(sp.self, 12);
    assert_int_equal(sp.nchild, 2);
    assert_int_equal(s1.nchild, 0);
}

static void test_zero_length(void **state)
{
    struct scope p, c;
    struct sample sp, sc;

    (void)state;
    p = begin(1, 1);
    c = begin(2, 1);
    sc = end(c, 0);
    sp = end(p, 0);
    assert_int_equal(sc.incl, 0);
    assert_int_equal(sc.self, 0);
    assert_int_equal(sp.incl, 0);
    assert_int_equal(sp.self, 0);
}

static void test_self_never_negative(void **state)
{
    struct scope p, c;
    struct sample sp;

    (void)state;
    p = begin(1, 1);
    c = begin(2, 1);
    now += 100;
    end(c, 0);
    /* A parent whose clock went back (another core's TSC) must not go
     * below zero. */
    now -= 50;
    sp = end(p, 0);
    assert_int_equal(sp.incl, 50);
    assert_int_equal(sp.self, 0);
}

static void test_out_of_order(void **state)
{
    struct scope a, b, c;
    struct sample sa;
    uint64_t incl, self;
    uint32_t range, window, nchild, ndesc, abandoned;

    (void)state;
    a = begin(1, 1);
    now += 10;
    b = begin(2, 1);
    now += 10;
    /* The outer ends first: the inner is abandoned, the outer is whole. */
    sa = end(a, 1);
    assert_int_equal(sa.incl, 20);
    assert_int_equal(sa.self, 20);
    /* Ending the inner now finds its frame gone. */
    assert_int_equal(hr__stack_pop(&st, b.depth, b.serial, now, &incl, &self,
                                   &range, &window, &nchild, &ndesc, &abandoned),
                     HR__POP_GONE);
    /* A new frame at the same depth is not mistaken for the old scope. */
    a = begin(3, 1);
    c = begin(4, 1);
    assert_int_equal(hr__stack_pop(&st, b.depth, b.serial, now, &incl, &self,
                                   &range, &window, &nchild, &ndesc, &abandoned),
                     HR__POP_GONE);
    end(c, 0);
    end(a, 0);
}

static void test_shift_and_close_window(void **state)
{
    struct scope a, b;
    struct sample sb, sa;

    (void)state;
    a = begin(1, 5);
    now += 10;
    b = begin(2, 5);
    now += 1000; /* the library's own work, taken out */
    hr__stack_shift(&st, 1000);
    now += 5;
    sb = end(b, 0);
    assert_int_equal(sb.incl, 5);
    now += 5;
    assert_int_equal(hr__stack_close_window(&st, 5), 1);
    assert_int_equal(hr__stack_close_window(&st, 5), 0);
    sa = end(a, 0);
    assert_int_equal(sa.window, HR__WINDOW_COUNTED);
    assert_int_equal(sa.incl, 20);
}

static void test_longer_than_32_bits(void **state)
{
    struct scope p, c;
    struct sample sp, sc;

    (void)state;
    now = 5ull << 40;
    p = begin(1, 1);
    now += 3ull << 32; /* 12.9 s of ticks: more than 2^32 */
    c = begin(2, 1);
    now += (1ull << 33) + 7;
    sc = end(c, 0);
    now += 1;
    sp = end(p, 0);
    assert_true(sc.incl == (1ull << 33) + 7);
    assert_true(sp.incl == (3ull << 32) + (1ull << 33) + 8);
    assert_true(sp.self == (3ull << 32) + 1);
}

static void test_full_stack(void **state)
{
    uint32_t serial;

    (void)state;
    for (uint32_t i = 0; i < HR__MAX_DEPTH; i++)
        assert_int_equal(hr__stack_push(&st, 1, 1, now, &serial), i + 1);
    assert_int_equal(hr__stack_push(&st, 1, 1, now, &serial), 0);
}

/* a { b { c, d }, e }: descendants counted at every depth. */
static void test_descendants(void **state)
{
    struct scope a, b, c, d, e;
    struct sample s;

    (void)state;
    a = begin(1, 1);
    b = begin(2, 1);
    c = begin(3, 1);
    now += 5;
    s = end(c, 0);
    assert_int_equal(s.nchild, 0);
    assert_int_equal(s.ndesc, 0);
    d = begin(4, 1);
    now += 5;
    end(d, 0);
    s = end(b, 0);
    assert_int_equal(s.nchild, 2);
    assert_int_equal(s.ndesc, 2);
    e = begin(5, 1);
    end(e, 0);
    s = end(a, 0);
    assert_int_equal(s.nchild, 2);
    assert_int_equal(s.ndesc, 4);
    assert_int_equal(s.incl, 10);
    assert_int_equal(s.self, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_descendants, reset),
        cmocka_unit_test_setup(test_three_deep, reset),
        cmocka_unit_test_setup(test_siblings, reset),
        cmocka_unit_test_setup(test_zero_length, reset),
        cmocka_unit_test_setup(test_self_never_negative, reset),
        cmocka_unit_test_setup(test_out_of_order, reset),
        cmocka_unit_test_setup(test_shift_and_close_window, reset),
        cmocka_unit_test_setup(test_longer_than_32_bits, reset),
        cmocka_unit_test_setup(test_full_stack, reset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
