/*
 * Add on the CPU against the double-precision reference: every dtype,
 * broadcasting, strided, transposed, reversed and broadcast views, rank 8,
 * empty arrays; the output's padding left alone; and the errors.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ops/hrops.h"
#include "bench/ref.h"

struct operand {
    int ndim;
    int64_t shape[HROPS_MAX_RANK];
    const int64_t *strides;     /* NULL: contiguous */
};

/* Runs out = a + b with the three layouts on the CPU in `dtype`, checks
 * the result against the reference and that the rest of out's storage is
 * untouched. */
static void check_add(int dtype, const struct operand *oa,
                      const struct operand *ob, const struct operand *oo)
{
    struct ref_array x[3];
    const struct operand *ops[3] = { oa, ob, oo };
    double *ref, *bound, err;
    char *before;
    int64_t worst = -1;
    size_t esize = hrops_dtype_size(dtype);

    for (int i = 0; i < 3; i++) {
        assert_int_equal(ref_array_init(&x[i], dtype, ops[i]->ndim,
                                        ops[i]->shape, ops[i]->strides,
                                        "cpu"), 0);
        ref_fill(&x[i], 100u * (uint32_t)dtype + (uint32_t)i);
    }
    ref = calloc((size_t)x[2].numel + 1, sizeof *ref);
    bound = calloc((size_t)x[2].numel + 1, sizeof *bound);
    before = malloc(x[2].bytes);
    assert_non_null(ref);
    assert_non_null(bound);
    assert_non_null(before);
    memcpy(before, x[2].host, x[2].bytes);
    assert_int_equal(ref_add(&x[0], &x[1], &x[2], ref, bound), 0);

    assert_int_equal(hrops_add(&x[0].d, &x[1].d, &x[2].d, "cpu", 0), 0);

    err = ref_check(&x[2], ref, bound, ref_tolerance(dtype), &worst);
    if (!(err <= 1.0))
        fail_msg("%s: element %lld is %g, expected %g",
                 hrops_dtype_name(dtype), (long long)worst,
                 ref_get(&x[2], worst), ref[worst]);
    /* The elements of out's storage outside the view keep their values:
     * mark the view's elements in `before` with the results, then compare
     * the whole storage. */
    for (int64_t i = 0; i < x[2].numel; i++) {
        int64_t off = x[2].origin, rest = i;

        for (int d = x[2].d.ndim - 1; d >= 0; d--) {
            off += (rest % x[2].shape[d]) * x[2].strides[d];
            rest /= x[2].shape[d];
        }
        memcpy(before + off * (int64_t)esize, x[2].host + off * (int64_t)esize,
               esize);
    }
    assert_memory_equal(before, x[2].host, x[2].bytes);
    free(before);
    free(ref);
    free(bound);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
}

static void test_contiguous(void **state)
{
    struct operand a = { 2, { 13, 4 }, NULL };

    (void)state;
    for (int t = 0; t < HROPS_NDTYPES; t++)
        check_add(t, &a, &a, &a);
}

static void test_broadcast(void **state)
{
    struct operand a = { 3, { 3, 1, 5 }, NULL }, b = { 2, { 4, 1 }, NULL };
    struct operand o = { 3, { 3, 4, 5 }, NULL };
    struct operand s = { 0, { 0 }, NULL }, m = { 2, { 2, 3 }, NULL };
    struct operand r = { 1, { 6 }, NULL }, one = { 1, { 1 }, NULL };
    struct operand row = { 2, { 1, 7 }, NULL }, col = { 2, { 5, 1 }, NULL };
    struct operand grid = { 2, { 5, 7 }, NULL };

    (void)state;
    for (int t = 0; t < HROPS_NDTYPES; t++) {
        check_add(t, &a, &b, &o);
        check_add(t, &b, &a, &o);
        check_add(t, &s, &m, &m);       /* a scalar */
        check_add(t, &m, &s, &m);
        check_add(t, &one, &r, &r);
        check_add(t, &row, &col, &grid);
        check_add(t, &s, &s, &s);
    }
}

static void test_strided(void **state)
{
    /* a: a transposed view of a 4 x 13 array; b: every other column of a
     * 13 x 8 array; out: rows padded to 6 elements. */
    static const int64_t ta[2] = { 1, 13 }, sb[2] = { 8, 2 },
                         so[2] = { 6, 1 };
    /* Reversed rows, and an explicit zero-stride broadcast. */
    static const int64_t rev[2] = { -4, 1 }, zero[2] = { 0, 1 };
    struct operand a = { 2, { 13, 4 }, ta }, b = { 2, { 13, 4 }, sb };
    struct operand o = { 2, { 13, 4 }, so };
    struct operand r = { 2, { 13, 4 }, rev }, z = { 2, { 13, 4 }, zero };
    struct operand c = { 2, { 13, 4 }, NULL };
    /* A 3-d view mixing all of them, broadcast against a column. */
    static const int64_t s3[3] = { -40, 1, 10 }, so3[3] = { 1, 2, 12 };
    struct operand v = { 3, { 2, 6, 4 }, s3 }, w = { 2, { 6, 1 }, NULL };
    struct operand o3 = { 3, { 2, 6, 4 }, so3 };

    (void)state;
    for (int t = 0; t < HROPS_NDTYPES; t++) {
        check_add(t, &a, &b, &o);
        check_add(t, &r, &z, &c);
        check_add(t, &c, &r, &o);
        check_add(t, &v, &w, &o3);
    }
}

static void test_rank8_and_empty(void **state)
{
    struct operand a = { 8, { 2, 1, 2, 1, 2, 1, 2, 3 }, NULL };
    struct operand b = { 1, { 3 }, NULL };
    struct operand o = { 8, { 2, 2, 2, 2, 2, 2, 2, 3 }, NULL };
    struct operand e = { 2, { 0, 4 }, NULL }, e1 = { 1, { 4 }, NULL };

    (void)state;
    check_add(HROPS_FLOAT32, &a, &b, &o);
    check_add(HROPS_FLOAT64, &a, &b, &o);
    check_add(HROPS_FLOAT16, &e, &e1, &e);
}

static void test_errors(void **state)
{
    float buf[64] = { 0 };
    double dbuf[16] = { 0 };
    int64_t s34[2] = { 3, 4 }, s35[2] = { 3, 5 }, s24[2] = { 2, 4 };
    int64_t s9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, zero[2] = { 0, 1 };
    hrops_array a = { buf, HROPS_FLOAT32, 2, s34, NULL, HROPS_DEVICE_CPU, 0 };
    hrops_array x;

    (void)state;
    /* Shapes that do not broadcast to out's. */
    x = a;
    x.shape = s35;
    assert_int_equal(hrops_add(&a, &a, &x, "cpu", 0), -EINVAL);
    x.shape = s24;
    assert_int_equal(hrops_add(&a, &x, &a, "cpu", 0), -EINVAL);
    /* Out repeating an element. */
    x = a;
    x.strides = zero;
    assert_int_equal(hrops_add(&a, &a, &x, "cpu", 0), -EINVAL);
    /* Rank above 8, a bad dtype code, a negative length. */
    x = a;
    x.ndim = 9;
    x.shape = s9;
    assert_int_equal(hrops_add(&x, &x, &x, "cpu", 0), -EINVAL);
    x = a;
    x.dtype = 7;
    assert_int_equal(hrops_add(&x, &a, &a, "cpu", 0), -EINVAL);
    s35[0] = -1;
    x = a;
    x.shape = s35;
    assert_int_equal(hrops_add(&x, &a, &a, "cpu", 0), -EINVAL);
    /* Mixed dtypes. */
    x = a;
    x.data = dbuf;
    x.dtype = HROPS_FLOAT64;
    assert_int_equal(hrops_add(&a, &x, &a, "cpu", 0), -EINVAL);
    /* No data, no descriptor. */
    x = a;
    x.data = NULL;
    assert_int_equal(hrops_add(&a, &a, &x, "cpu", 0), -EINVAL);
    assert_int_equal(hrops_add(&a, NULL, &a, "cpu", 0), -EINVAL);
    /* Devices: unknown names, an array on another device. */
    assert_int_equal(hrops_add(&a, &a, &a, "tpu", 0), -EINVAL);
    assert_int_equal(hrops_add(&a, &a, &a, "cuda:x", 0), -EINVAL);
    assert_int_equal(hrops_add(&a, &a, &a, NULL, 0), -EINVAL);
    x = a;
    x.device_type = HROPS_DEVICE_CUDA;
    if (hrops_cuda_device_count() == 0) {
        assert_int_equal(hrops_add(&x, &x, &x, "cuda:0", 0), -ENODEV);
        assert_int_equal(hrops_add(&x, &x, &x, "cuda", 0), -ENODEV);
    }
    assert_int_equal(hrops_add(&x, &a, &a, "cpu", 0), -EINVAL);
    /* No such implementation. */
    assert_int_equal(hrops_add(&a, &a, &a, "cpu", 3), -ENOTSUP);
    /* None of those wrote anything. */
    for (int i = 0; i < 64; i++)
        assert_true(buf[i] == 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_rank8_and_empty),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
