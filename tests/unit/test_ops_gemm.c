/*
 * Batched GEMM on the CPU against the double-precision reference: float32
 * and float64, rank 2 and 3, transposes, alpha and beta, padded, column-
 * major and broadcast views, beta == 0 not reading c; and the errors.
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
    int64_t shape[3];
    const int64_t *strides;     /* NULL: contiguous */
};

/* Fills every storage element of x with a NaN. */
static void fill_nan(struct ref_array *x)
{
    if (x->d.dtype == HROPS_FLOAT32) {
        for (size_t i = 0; i < x->bytes / sizeof(float); i++)
            ((float *)(void *)x->host)[i] = NAN;
    } else {
        for (size_t i = 0; i < x->bytes / sizeof(double); i++)
            ((double *)(void *)x->host)[i] = NAN;
    }
}

static void check_gemm(int dtype, const struct operand *oa,
                       const struct operand *ob, const struct operand *oc,
                       double alpha, double beta, int flags, int nan_c)
{
    const struct operand *ops[3] = { oa, ob, oc };
    struct ref_array x[3];
    double *ref, *bound, err;
    int64_t worst = -1;

    for (int i = 0; i < 3; i++) {
        assert_int_equal(ref_array_init(&x[i], dtype, ops[i]->ndim,
                                        ops[i]->shape, ops[i]->strides,
                                        "cpu"), 0);
        ref_fill(&x[i], 7u * (uint32_t)i + (uint32_t)flags);
    }
    if (nan_c)
        fill_nan(&x[2]);
    ref = calloc((size_t)x[2].numel, sizeof *ref);
    bound = calloc((size_t)x[2].numel, sizeof *bound);
    assert_non_null(ref);
    assert_non_null(bound);
    assert_int_equal(ref_gemm(&x[0], &x[1], &x[2], alpha, beta, flags, ref,
                              bound), 0);

    assert_int_equal(hrops_gemm(&x[0].d, &x[1].d, &x[2].d, alpha, beta,
                                flags, "cpu", 0), 0);

    err = ref_check(&x[2], ref, bound, ref_tolerance(dtype), &worst);
    if (!(err <= 1.0))
        fail_msg("%s flags %d: element %lld is %g, expected %g",
                 hrops_dtype_name(dtype), flags, (long long)worst,
                 ref_get(&x[2], worst), ref[worst]);
    free(ref);
    free(bound);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
}

static const int dtypes[2] = { HROPS_FLOAT32, HROPS_FLOAT64 };

static void test_batched(void **state)
{
    struct operand a = { 3, { 4, 48, 64 }, NULL }, b = { 3, { 4, 64, 6 },
                                                        NULL };
    struct operand c = { 3, { 4, 48, 6 }, NULL };

    (void)state;
    for (int t = 0; t < 2; t++) {
        check_gemm(dtypes[t], &a, &b, &c, 1.0, 0.0, 0, 0);
        check_gemm(dtypes[t], &a, &b, &c, 0.5, -2.0, 0, 0);
    }
}

static void test_rank2_alpha_beta(void **state)
{
    struct operand a = { 2, { 7, 5 }, NULL }, b = { 2, { 5, 3 }, NULL };
    struct operand c = { 2, { 7, 3 }, NULL };

    (void)state;
    for (int t = 0; t < 2; t++) {
        check_gemm(dtypes[t], &a, &b, &c, 0.5, -2.0, 0, 0);
        check_gemm(dtypes[t], &a, &b, &c, -1.5, 1.0, 0, 0);
        check_gemm(dtypes[t], &a, &b, &c, 0.0, 3.0, 0, 0);
    }
}

static void test_transposes(void **state)
{
    struct operand a = { 3, { 2, 9, 11 }, NULL }, at = { 3, { 2, 11, 9 },
                                                         NULL };
    struct operand b = { 3, { 2, 11, 5 }, NULL }, bt = { 3, { 2, 5, 11 },
                                                         NULL };
    struct operand c = { 3, { 2, 9, 5 }, NULL };

    (void)state;
    for (int t = 0; t < 2; t++) {
        check_gemm(dtypes[t], &at, &b, &c, 1.0, 0.5, HROPS_TRANS_A, 0);
        check_gemm(dtypes[t], &a, &bt, &c, 1.0, 0.5, HROPS_TRANS_B, 0);
        check_gemm(dtypes[t], &at, &bt, &c, 2.0, 0.0,
                   HROPS_TRANS_A | HROPS_TRANS_B, 0);
    }
}

static void test_strided(void **state)
{
    /* a: rows padded to 9; b: column-major; c: column-major, batch
     * padded; a2: one matrix broadcast over the batch (stride 0). */
    static const int64_t sa[3] = { 100, 9, 1 }, sb[3] = { 40, 1, 8 },
                         sc[3] = { 60, 1, 12 }, sa2[3] = { 0, 7, 1 };
    struct operand a = { 3, { 3, 10, 7 }, sa }, b = { 3, { 3, 7, 5 }, sb };
    struct operand c = { 3, { 3, 10, 5 }, sc }, a2 = { 3, { 3, 10, 7 },
                                                       sa2 };
    /* A transposed view with a negative stride. */
    static const int64_t neg[3] = { 70, -1, 10 };
    struct operand an = { 3, { 3, 7, 10 }, neg };

    (void)state;
    for (int t = 0; t < 2; t++) {
        check_gemm(dtypes[t], &a, &b, &c, 1.0, 1.0, 0, 0);
        check_gemm(dtypes[t], &a2, &b, &c, 1.0, -1.0, 0, 0);
        check_gemm(dtypes[t], &an, &b, &c, 0.25, 0.0, HROPS_TRANS_A, 0);
    }
}

static void test_beta_zero_ignores_c(void **state)
{
    struct operand a = { 3, { 4, 48, 64 }, NULL }, b = { 3, { 4, 64, 6 },
                                                        NULL };
    struct operand c = { 3, { 4, 48, 6 }, NULL };

    (void)state;
    for (int t = 0; t < 2; t++)
        check_gemm(dtypes[t], &a, &b, &c, 1.0, 0.0, 0, 1);
}

static void test_errors(void **state)
{
    float buf[256] = { 0 };
    int64_t s23[2] = { 2, 3 }, s34[2] = { 3, 4 }, s24[2] = { 2, 4 };
    int64_t s44[2] = { 4, 4 }, b234[3] = { 2, 3, 4 }, b334[3] = { 3, 3, 4 };
    int64_t b223[3] = { 2, 2, 3 }, b224[3] = { 2, 2, 4 }, zero[2] = { 0, 1 };
    hrops_array a = { buf, HROPS_FLOAT32, 2, s23, NULL, HROPS_DEVICE_CPU, 0 };
    hrops_array b = a, c = a, x;

    (void)state;
    b.shape = s34;
    c.shape = s24;
    assert_int_equal(hrops_gemm(&a, &b, &c, 1, 0, 0, "cpu", 0), 0);
    /* Inner lengths that differ; c of the wrong shape. */
    x = b;
    x.shape = s44;
    assert_int_equal(hrops_gemm(&a, &x, &c, 1, 0, 0, "cpu", 0), -EINVAL);
    assert_int_equal(hrops_gemm(&a, &b, &c, 1, 0, HROPS_TRANS_A, "cpu", 0),
                     -EINVAL);
    x = c;
    x.shape = s44;
    assert_int_equal(hrops_gemm(&a, &b, &x, 1, 0, 0, "cpu", 0), -EINVAL);
    /* Ranks that differ, batches that differ. */
    {
        hrops_array a3 = a, b3 = b, c3 = c;

        a3.ndim = b3.ndim = c3.ndim = 3;
        a3.shape = b223;
        b3.shape = b334;
        c3.shape = b224;
        assert_int_equal(hrops_gemm(&a3, &b, &c, 1, 0, 0, "cpu", 0),
                         -EINVAL);
        assert_int_equal(hrops_gemm(&a3, &b3, &c3, 1, 0, 0, "cpu", 0),
                         -EINVAL);
        b3.shape = b234;
        assert_int_equal(hrops_gemm(&a3, &b3, &c3, 1, 0, 0, "cpu", 0), 0);
    }
    /* c repeating an element; unknown flags; no float16 on the CPU. */
    x = c;
    x.strides = zero;
    assert_int_equal(hrops_gemm(&a, &b, &x, 1, 0, 0, "cpu", 0), -EINVAL);
    assert_int_equal(hrops_gemm(&a, &b, &c, 1, 0, 4, "cpu", 0), -EINVAL);
    a.dtype = b.dtype = c.dtype = HROPS_FLOAT16;
    assert_int_equal(hrops_gemm(&a, &b, &c, 1, 0, 0, "cpu", 0), -ENOTSUP);
    a.dtype = b.dtype = c.dtype = HROPS_BFLOAT16;
    assert_int_equal(hrops_gemm(&a, &b, &c, 1, 0, 0, "cpu", 0), -ENOTSUP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batched),
        cmocka_unit_test(test_rank2_alpha_beta),
        cmocka_unit_test(test_transposes),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_beta_zero_ignores_c),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
