/*
 * diff --fail-above's limits (lib/stat/limits.c): one number for every
 * range; GLOB=PCT entries, the first match applying and a range matched by
 * none having no limit; a pattern holding '='; specifications refused with
 * the entry named, and the limits held before left as they were.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/stat/limits.h"

static void test_one_for_all(void **state)
{
    struct hrs_limits l = { 0 };
    char err[256];
    const struct hrs_limit *x;

    (void)state;
    assert_int_equal(hrs_limits_parse(&l, "10", err, sizeof err), 0);
    assert_int_equal(l.n, 1);
    x = hrs_limits_find(&l, "backend.submit");
    assert_non_null(x);
    assert_string_equal(x->glob, "*");
    assert_true(x->pct == 10);
    assert_ptr_equal(hrs_limits_find(&l, "end_to_end"), x);
    hrs_limits_fini(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.v);
}

static void test_per_range(void **state)
{
    struct hrs_limits l = { 0 };
    char err[256];

    (void)state;
    assert_int_equal(hrs_limits_parse(&l, "backend.*=3,cache.k?y=7.5,*=10",
                                      err, sizeof err), 0);
    assert_int_equal(l.n, 3);
    assert_true(hrs_limits_find(&l, "backend.submit")->pct == 3);
    assert_true(hrs_limits_find(&l, "cache.key")->pct == 7.5);
    assert_true(hrs_limits_find(&l, "cache.lookup")->pct == 10);
    assert_true(hrs_limits_find(&l, "backend")->pct == 10);
    /* A second --fail-above adds its entries after the first's. */
    assert_int_equal(hrs_limits_parse(&l, "backend.submit=1", err,
                                      sizeof err), 0);
    assert_true(hrs_limits_find(&l, "backend.submit")->pct == 3);
    hrs_limits_fini(&l);

    /* Without a catch-all, a range no pattern matches has no limit; the
     * last '=' splits, so a pattern may hold one. */
    assert_int_equal(hrs_limits_parse(&l, "a=b=5,dispatch.*=0", err,
                                      sizeof err), 0);
    assert_string_equal(l.v[0].glob, "a=b");
    assert_true(hrs_limits_find(&l, "a=b")->pct == 5);
    assert_true(hrs_limits_find(&l, "dispatch.call")->pct == 0);
    assert_null(hrs_limits_find(&l, "operator.call"));
    hrs_limits_fini(&l);
}

static void test_refused(void **state)
{
    static const char *const bad[] = { "", "=3", "c=", "c=x", "c=-1",
                                       "c=1e10", "3,", ",3", "c=nan",
                                       "10%" };
    struct hrs_limits l = { 0 };
    char err[256];

    (void)state;
    assert_int_equal(hrs_limits_parse(&l, "x=1", err, sizeof err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(hrs_limits_parse(&l, bad[i], err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "bad limit '"));
        /* What was there stays, alone. */
        assert_int_equal(l.n, 1);
        assert_string_equal(l.v[0].glob, "x");
    }
    assert_int_equal(hrs_limits_parse(&l, "a=1,b", err, sizeof err),
                     -EINVAL);
    assert_string_equal(err, "bad limit 'b' (PCT, or GLOB=PCT with PCT a "
                        "number from 0 to 1e+09)");
    assert_int_equal(l.n, 1);
    hrs_limits_fini(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_for_all),
        cmocka_unit_test(test_per_range),
        cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
