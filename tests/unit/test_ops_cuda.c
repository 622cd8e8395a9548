/*
 * The CUDA backend against the double-precision reference computed on the
 * CPU: Add in every dtype with broadcasting and strided views; batched GEMM
 * through cuBLASLt in float32, float16 and bfloat16 with transposes, alpha
 * and beta, row- and column-major operands; the cache on the device; and
 * the bare backend handle. Without a CUDA device (or built without CUDA)
 * it prints why (the CUDA runtime's error) and skips: exit status 77; with
 * HROPS_REQUIRE_CUDA=1 in the environment (a GPU machine's check) it fails
 * instead: exit status 1.
 */
#include "config.h"

#include <errno.h>
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

#define DEV "cuda:0"

struct operand {
    int ndim;
    int64_t shape[HROPS_MAX_RANK];
    const int64_t *strides;     /* NULL: contiguous */
};

/* Makes the three arrays on the device, filled and uploaded. */
static void arrays(struct ref_array x[3], int dtype,
                   const struct operand *const ops[3], uint32_t seed)
{
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ref_array_init(&x[i], dtype, ops[i]->ndim,
                                        ops[i]->shape, ops[i]->strides, DEV),
                         0);
        ref_fill(&x[i], seed + (uint32_t)i);
        assert_int_equal(ref_upload(&x[i]), 0);
    }
}

static void finish(struct ref_array x[3], const double *ref,
                   const double *bound, const char *what)
{
    double err;
    int64_t worst = -1;

    assert_int_equal(hrops_sync(DEV), 0);
    assert_int_equal(ref_download(&x[2]), 0);
    err = ref_check(&x[2], ref, bound, ref_tolerance(x[2].d.dtype), &worst);
    if (!(err <= 1.0))
        fail_msg("%s %s: element %lld is %g, expected %g", what,
                 hrops_dtype_name(x[2].d.dtype), (long long)worst,
                 ref_get(&x[2], worst), ref[worst]);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
}

static void check_add(int dtype, const struct operand *oa,
                      const struct operand *ob, const struct operand *oo)
{
    const struct operand *const ops[3] = { oa, ob, oo };
    struct ref_array x[3];
    double *ref, *bound;

    arrays(x, dtype, ops, 11u * (uint32_t)dtype);
    ref = calloc((size_t)x[2].numel + 1, sizeof *ref);
    bound = calloc((size_t)x[2].numel + 1, sizeof *bound);
    assert_non_null(ref);
    assert_non_null(bound);
    assert_int_equal(ref_add(&x[0], &x[1], &x[2], ref, bound), 0);
    assert_int_equal(hrops_add(&x[0].d, &x[1].d, &x[2].d, DEV, 0), 0);
    finish(x, ref, bound, "add");
    free(ref);
    free(bound);
}

static void check_gemm(int dtype, const struct operand *oa,
                       const struct operand *ob, const struct operand *oc,
                       double alpha, double beta, int flags)
{
    const struct operand *const ops[3] = { oa, ob, oc };
    struct ref_array x[3];
    double *ref, *bound;

    arrays(x, dtype, ops, 5u * (uint32_t)dtype + (uint32_t)flags);
    ref = calloc((size_t)x[2].numel + 1, sizeof *ref);
    bound = calloc((size_t)x[2].numel + 1, sizeof *bound);
    assert_non_null(ref);
    assert_non_null(bound);
    assert_int_equal(ref_gemm(&x[0], &x[1], &x[2], alpha, beta, flags, ref,
                              bound), 0);
    assert_int_equal(hrops_gemm(&x[0].d, &x[1].d, &x[2].d, alpha, beta,
                                flags, DEV, 0), 0);
    finish(x, ref, bound, "gemm");
    free(ref);
    free(bound);
}

static void test_add(void **state)
{
    static const int64_t ta[2] = { 1, 13 }, so[2] = { 6, 1 },
                         rev[2] = { -4, 1 };
    struct operand c = { 2, { 13, 4 }, NULL }, t = { 2, { 13, 4 }, ta };
    struct operand o = { 2, { 13, 4 }, so }, r = { 2, { 13, 4 }, rev };
    struct operand a3 = { 3, { 3, 1, 5 }, NULL }, b3 = { 2, { 4, 1 }, NULL };
    struct operand o3 = { 3, { 3, 4, 5 }, NULL };
    struct operand big = { 1, { 3000000 }, NULL };

    (void)state;
    for (int dt = 0; dt < HROPS_NDTYPES; dt++) {
        check_add(dt, &c, &c, &c);
        check_add(dt, &t, &r, &o);
        check_add(dt, &a3, &b3, &o3);
    }
    /* More elements than one grid covers. */
    check_add(HROPS_FLOAT32, &big, &big, &big);
}

static const int gemm_dtypes[3] = { HROPS_FLOAT32, HROPS_FLOAT16,
                                    HROPS_BFLOAT16 };

static void test_gemm(void **state)
{
    struct operand a = { 3, { 4, 48, 64 }, NULL }, b = { 3, { 4, 64, 6 },
                                                        NULL };
    struct operand c = { 3, { 4, 48, 6 }, NULL };
    struct operand at = { 3, { 4, 64, 48 }, NULL }, bt = { 3, { 4, 6, 64 },
                                                           NULL };
    struct operand a2 = { 2, { 7, 5 }, NULL }, b2 = { 2, { 5, 3 }, NULL };
    struct operand c2 = { 2, { 7, 3 }, NULL };
    /* Column-major c with a padded batch; row-padded a. */
    static const int64_t sc[3] = { 320, 1, 52 }, sa[3] = { 4096, 72, 1 };
    struct operand cc = { 3, { 4, 48, 6 }, sc }, ap = { 3, { 4, 48, 64 },
                                                        sa };
    /* An empty inner dimension: c = beta * c, as on the CPU. */
    struct operand a0 = { 3, { 2, 5, 0 }, NULL }, b0 = { 3, { 2, 0, 4 },
                                                         NULL };
    static const int64_t sc0[3] = { 24, 1, 6 };
    struct operand c0 = { 3, { 2, 5, 4 }, NULL }, c0c = { 3, { 2, 5, 4 },
                                                          sc0 };

    (void)state;
    for (int i = 0; i < 3; i++) {
        int dt = gemm_dtypes[i];

        check_gemm(dt, &a, &b, &c, 1.0, 0.0, 0);
        check_gemm(dt, &a, &b, &c, 0.5, -2.0, 0);
        check_gemm(dt, &at, &b, &c, 1.0, 1.0, HROPS_TRANS_A);
        check_gemm(dt, &a, &bt, &c, 1.0, 0.0, HROPS_TRANS_B);
        check_gemm(dt, &at, &bt, &c, 2.0, 0.5,
                   HROPS_TRANS_A | HROPS_TRANS_B);
        check_gemm(dt, &a2, &b2, &c2, -1.0, 0.25, 0);
        check_gemm(dt, &ap, &b, &cc, 1.0, 1.0, 0);
        check_gemm(dt, &ap, &bt, &cc, 1.0, 0.0, HROPS_TRANS_B);
        check_gemm(dt, &a0, &b0, &c0, 1.0, 0.5, 0);
        check_gemm(dt, &a0, &b0, &c0, 1.0, 0.0, 0);
        check_gemm(dt, &a0, &b0, &c0c, 2.0, -1.0, 0);
    }
}

static void test_gemm_unsupported(void **state)
{
    /* No unit stride in either dimension of a; float64. */
    static const int64_t s[3] = { 512, 16, 2 };
    struct operand a = { 3, { 2, 8, 8 }, s }, b = { 3, { 2, 8, 8 }, NULL };
    const struct operand *const ops[3] = { &a, &b, &b };
    const struct operand *const same[3] = { &b, &b, &b };
    struct ref_array x[3];

    (void)state;
    arrays(x, HROPS_FLOAT32, ops, 1);
    assert_int_equal(hrops_gemm(&x[0].d, &x[1].d, &x[2].d, 1, 0, 0, DEV, 0),
                     -ENOTSUP);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
    arrays(x, HROPS_FLOAT64, same, 1);
    assert_int_equal(hrops_gemm(&x[0].d, &x[1].d, &x[2].d, 1, 0, 0, DEV, 0),
                     -ENOTSUP);
    /* An array on the CPU passed for the device. */
    x[0].d.device_type = HROPS_DEVICE_CPU;
    x[0].d.device_id = 0;
    assert_int_equal(hrops_gemm(&x[0].d, &x[1].d, &x[2].d, 1, 0, 0, DEV, 0),
                     -EINVAL);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
}

static void test_cache_on_device(void **state)
{
    struct operand c = { 2, { 13, 4 }, NULL }, d = { 2, { 13, 5 }, NULL };
    struct operand a = { 3, { 4, 48, 64 }, NULL }, b = { 3, { 4, 64, 6 },
                                                        NULL };
    struct operand g = { 3, { 4, 48, 6 }, NULL };
    const struct operand *const add_ops[3] = { &c, &c, &c };
    const struct operand *const gemm_ops[3] = { &a, &b, &g };
    struct ref_array x[3], y[3];
    hrops_cache_stats s0, s1;

    (void)state;
    arrays(x, HROPS_FLOAT32, add_ops, 3);
    arrays(y, HROPS_FLOAT32, gemm_ops, 4);
    hrops_cache_clear();
    hrops_cache_stats_get(&s0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(hrops_add(&x[0].d, &x[1].d, &x[2].d, DEV, 0), 0);
        assert_int_equal(hrops_gemm(&y[0].d, &y[1].d, &y[2].d, 1, 0, 0, DEV,
                                    0), 0);
    }
    hrops_cache_stats_get(&s1);
    assert_int_equal(s1.constructs - s0.constructs, 2);
    assert_int_equal(s1.hits - s0.hits, 4);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&x[i]);
    {
        const struct operand *const other[3] = { &d, &d, &d };

        arrays(x, HROPS_FLOAT32, other, 5);
        assert_int_equal(hrops_add(&x[0].d, &x[1].d, &x[2].d, DEV, 0), 0);
        assert_int_equal(hrops_add(&x[0].d, &x[1].d, &x[2].d, DEV, 0), 0);
        hrops_cache_stats_get(&s1);
        assert_int_equal(s1.constructs - s0.constructs, 3);
    }
    hrops_cache_clear();
    assert_int_equal(hrops_sync(DEV), 0);
    for (int i = 0; i < 3; i++) {
        ref_array_fini(&x[i]);
        ref_array_fini(&y[i]);
    }
}

static void test_raw(void **state)
{
    struct operand a = { 3, { 4, 48, 64 }, NULL }, b = { 3, { 4, 64, 6 },
                                                        NULL };
    struct operand g = { 3, { 4, 48, 6 }, NULL };
    const struct operand *const ops[3] = { &a, &b, &g };
    struct ref_array x[3];
    double *ref = calloc(4 * 48 * 6, sizeof *ref);
    double *bound = calloc(4 * 48 * 6, sizeof *bound);
    hrops_raw *raw = NULL;

    (void)state;
    assert_non_null(ref);
    assert_non_null(bound);
    arrays(x, HROPS_FLOAT32, ops, 9);
    assert_int_equal(ref_gemm(&x[0], &x[1], &x[2], 1, 0, 0, ref, bound), 0);
    assert_int_equal(hrops_raw_gemm_new(&x[0].d, &x[1].d, &x[2].d, 1, 0, 0,
                                        DEV, 0, &raw), 0);
    assert_int_equal(hrops_raw_run(raw), 0);
    hrops_raw_free(raw);
    finish(x, ref, bound, "raw gemm");
    free(ref);
    free(bound);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_gemm_unsupported),
        cmocka_unit_test(test_cache_on_device),
        cmocka_unit_test(test_raw),
    };

    if (hrops_cuda_device_count() == 0) {
        const char *req = getenv("HROPS_REQUIRE_CUDA");
        int required = req != NULL && strcmp(req, "1") == 0;

        fprintf(stderr, "no CUDA device: %s: %s\n", hrops_cuda_error(),
                required ? "failed (HROPS_REQUIRE_CUDA=1)" : "skipped");
        return required ? 1 : 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
