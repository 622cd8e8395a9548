/*
 * The prepared-operator cache, through the calling thread's counters: a
 * repeated call constructs nothing, a new shape, stride or alignment
 * constructs once, a failed call stores nothing, clearing makes the next
 * call cold, each thread has its own cache; and the bare backend handle.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/hrops.h"
#include "ops/hrops_raw.h"
#include "bench/ref.h"

static float g_a[1024], g_b[1024], g_out[1024];

static hrops_array array(float *data, int ndim, const int64_t *shape,
                         const int64_t *strides)
{
    hrops_array x = { data, HROPS_FLOAT32, ndim, shape, strides,
                      HROPS_DEVICE_CPU, 0 };
    return x;
}

static int add(int ndim, const int64_t *shape, const int64_t *strides)
{
    hrops_array a = array(g_a, ndim, shape, NULL);
    hrops_array b = array(g_b, ndim, shape, NULL);
    hrops_array o = array(g_out, ndim, shape, strides);

    return hrops_add(&a, &b, &o, "cpu", 0);
}

static hrops_cache_stats stats(void)
{
    hrops_cache_stats s;

    hrops_cache_stats_get(&s);
    return s;
}

static void test_second_call_constructs_nothing(void **state)
{
    static const int64_t s134[2] = { 13, 4 }, s135[2] = { 13, 5 };
    static const int64_t pad[2] = { 8, 1 };
    hrops_cache_stats s0, s1;

    (void)state;
    hrops_cache_clear();
    s0 = stats();
    assert_int_equal(s0.entries, 0);

    assert_int_equal(add(2, s134, NULL), 0);
    s1 = stats();
    assert_int_equal(s1.constructs - s0.constructs, 1);
    assert_int_equal(s1.lookups - s0.lookups, 1);
    assert_int_equal(s1.hits - s0.hits, 0);
    assert_int_equal(s1.entries, 1);

    /* The same call: a hit, nothing constructed. */
    assert_int_equal(add(2, s134, NULL), 0);
    s1 = stats();
    assert_int_equal(s1.constructs - s0.constructs, 1);
    assert_int_equal(s1.hits - s0.hits, 1);
    assert_int_equal(s1.entries, 1);

    /* Another shape, then other strides: one construction each, then
     * hits. */
    assert_int_equal(add(2, s135, NULL), 0);
    assert_int_equal(add(2, s135, NULL), 0);
    assert_int_equal(add(2, s134, pad), 0);
    assert_int_equal(add(2, s134, pad), 0);
    s1 = stats();
    assert_int_equal(s1.constructs - s0.constructs, 3);
    assert_int_equal(s1.hits - s0.hits, 3);
    assert_int_equal(s1.entries, 3);

    /* Other data of the same alignment: the same plan. */
    {
        hrops_array a = array(g_a + 64, 2, s134, NULL);
        hrops_array b = array(g_b + 64, 2, s134, NULL);
        hrops_array o = array(g_out + 64, 2, s134, NULL);

        assert_int_equal(hrops_add(&a, &b, &o, "cpu", 0), 0);
        assert_int_equal(stats().constructs - s0.constructs, 3);
    }
    /* The other operator, and another dtype, are other plans. */
    {
        static const int64_t k[2] = { 4, 13 }, m[2] = { 13, 13 };
        hrops_array a = array(g_a, 2, s134, NULL);
        hrops_array b = array(g_b, 2, k, NULL);
        hrops_array o = array(g_out, 2, m, NULL);
        hrops_array d = array(g_a, 2, s134, NULL);

        assert_int_equal(hrops_gemm(&a, &b, &o, 1, 0, 0, "cpu", 0), 0);
        assert_int_equal(hrops_gemm(&a, &b, &o, 2, 1, 0, "cpu", 0), 0);
        assert_int_equal(stats().constructs - s0.constructs, 4);
        d.dtype = HROPS_FLOAT64;
        assert_int_equal(hrops_add(&d, &d, &d, "cpu", 0), 0);
        assert_int_equal(stats().constructs - s0.constructs, 5);
    }
}

static void test_failed_call_stores_nothing(void **state)
{
    static const int64_t s34[2] = { 3, 4 }, s35[2] = { 3, 5 };
    hrops_array a = array(g_a, 2, s34, NULL), o = array(g_out, 2, s35, NULL);
    hrops_cache_stats s0 = stats(), s1;

    (void)state;
    assert_int_equal(hrops_add(&a, &a, &o, "cpu", 0), -EINVAL);
    assert_int_equal(hrops_add(&a, &a, &o, "cpu", 0), -EINVAL);
    s1 = stats();
    assert_int_equal(s1.constructs, s0.constructs);
    assert_int_equal(s1.entries, s0.entries);
    assert_int_equal(s1.hits, s0.hits);
}

static void test_clear_makes_cold(void **state)
{
    static const int64_t s[1] = { 100 };
    hrops_cache_stats s0;

    (void)state;
    assert_int_equal(add(1, s, NULL), 0);
    hrops_cache_clear();
    assert_int_equal(stats().entries, 0);
    s0 = stats();
    assert_int_equal(add(1, s, NULL), 0);
    assert_int_equal(stats().constructs - s0.constructs, 1);
    assert_int_equal(stats().entries, 1);
}

static void test_many_entries(void **state)
{
    hrops_cache_stats s0;

    (void)state;
    hrops_cache_clear();
    s0 = stats();
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t n = 1; n <= 200; n++) {
            int64_t s[1] = { n };

            assert_int_equal(add(1, s, NULL), 0);
        }
    }
    assert_int_equal(stats().constructs - s0.constructs, 200);
    assert_int_equal(stats().hits - s0.hits, 200);
    assert_int_equal(stats().entries, 200);
    hrops_cache_clear();
}

static void *other_thread(void *arg)
{
    static const int64_t s[2] = { 13, 4 };
    hrops_cache_stats *out = arg, before;

    hrops_cache_stats_get(&before);
    if (add(2, s, NULL) != 0 || add(2, s, NULL) != 0)
        return NULL;
    hrops_cache_stats_get(out);
    out->constructs -= before.constructs;
    return out;
}

static void test_per_thread(void **state)
{
    static const int64_t s[2] = { 13, 4 };
    hrops_cache_stats mine, theirs;
    pthread_t t;
    void *ret;

    (void)state;
    assert_int_equal(add(2, s, NULL), 0);      /* cached here */
    mine = stats();
    assert_int_equal(pthread_create(&t, NULL, other_thread, &theirs), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_ptr_equal(ret, &theirs);
    /* The other thread constructed its own plan once, and this thread's
     * cache did not change. */
    assert_int_equal(theirs.constructs, 1);
    assert_int_equal(theirs.entries, 1);
    assert_int_equal(theirs.hits, 1);
    assert_int_equal(stats().constructs, mine.constructs);
    assert_int_equal(stats().entries, mine.entries);
}

static void test_raw(void **state)
{
    static const int64_t s[2] = { 13, 4 };
    struct ref_array x[3];
    double ref[52], bound[52];
    hrops_cache_stats s0 = stats();
    hrops_raw *raw = NULL;

    (void)state;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ref_array_init(&x[i], HROPS_FLOAT64, 2, s, NULL,
                                        "cpu"), 0);
        ref_fill(&x[i], (uint32_t)i + 40);
    }
    assert_int_equal(ref_add(&x[0], &x[1], &x[2], ref, bound), 0);
    assert_int_equal(hrops_raw_add_new(&x[0].d, &x[1].d, &x[2].d, "cpu", 0,
                                       &raw), 0);
    assert_true(ref_check(&x[2], ref, bound, 1e-12, NULL) > 1.0);
    assert_int_equal(hrops_raw_run(raw), 0);
    assert_true(ref_check(&x[2], ref, bound, 1e-12, NULL) <= 1.0);
    hrops_raw_free(raw);
    /* Outside the cache. */
    assert_int_equal(stats().lookups, s0.lookups);
    assert_int_equal(stats().constructs, s0.constructs);
    /* The same checks as a call. */
    x[2].shape[1] = 5;
    assert_int_equal(hrops_raw_add_new(&x[0].d, &x[1].d, &x[2].d, "cpu", 0,
                                       &raw), -EINVAL);
    x[2].shape[1] = 4;
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
    hrops_raw_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_call_constructs_nothing),
        cmocka_unit_test(test_failed_call_stores_nothing),
        cmocka_unit_test(test_clear_makes_cold),
        cmocka_unit_test(test_many_entries),
        cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_raw),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
