/*
 * Add on the CPU: one loop per dtype over the plan's merged layout. The
 * 16-bit types are added in float and rounded once.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ops/half.h"
#include "ops/ops.h"

static int add_construct(const struct hrops__call *c, void **plan)
{
    struct hrops__add_layout *l = malloc(sizeof *l);
    int rc;

    if (l == NULL)
        return -ENOMEM;
    rc = hrops__add_layout_make(c, l);
    if (rc != 0) {
        free(l);
        return rc;
    }
    *plan = l;
    return 0;
}

static void add_destroy(void *plan)
{
    free(plan);
}

/*
 * The loop of one dtype: a flat loop when the layout is contiguous, else an
 * odometer over the outer dimensions around a strided inner loop. T is the
 * stored type, LOAD turns a stored value into the type added, STORE the
 * sum back.
 */
#define ADD_LOOP(name, T, LOAD, STORE)                                       \
    static int name(const void *plan, const union hrops__args *args)         \
    {                                                                        \
        const struct hrops__add_layout *l = plan;                            \
        const T *a = args->add.a, *b = args->add.b;                          \
        T *o = args->add.out;                                                \
        int inner = l->ndim - 1;                                             \
        int64_t len = l->shape[inner];                                       \
        int64_t sa = l->stride[0][inner], sb = l->stride[1][inner];          \
        int64_t so = l->stride[2][inner];                                    \
        int64_t idx[HROPS_MAX_RANK] = { 0 };                                 \
                                                                             \
        if (l->n == 0)                                                       \
            return 0;                                                        \
        if (l->contiguous) {                                                 \
            for (int64_t i = 0; i < len; i++)                                \
                o[i] = STORE(LOAD(a[i]) + LOAD(b[i]));                       \
            return 0;                                                        \
        }                                                                    \
        for (;;) {                                                           \
            int d;                                                           \
                                                                             \
            for (int64_t i = 0; i < len; i++)                                \
                o[i * so] = STORE(LOAD(a[i * sa]) + LOAD(b[i * sb]));        \
            for (d = inner - 1; d >= 0; d--) {                               \
                a += l->stride[0][d];                                        \
                b += l->stride[1][d];                                        \
                o += l->stride[2][d];                                        \
                if (++idx[d] < l->shape[d])                                  \
                    break;                                                   \
                a -= l->stride[0][d] * l->shape[d];                          \
                b -= l->stride[1][d] * l->shape[d];                          \
                o -= l->stride[2][d] * l->shape[d];                          \
                idx[d] = 0;                                                  \
            }                                                                \
            if (d < 0)                                                       \
                return 0;                                                    \
        }                                                                    \
    }

#define SAME(x) (x)
ADD_LOOP(add_f32, float, SAME, SAME)
ADD_LOOP(add_f64, double, SAME, SAME)
ADD_LOOP(add_f16, uint16_t, hrops__f16_to_f32, hrops__f32_to_f16)
ADD_LOOP(add_bf16, uint16_t, hrops__bf16_to_f32, hrops__f32_to_bf16)

#define ADD_IMPL(dt, fn)                                                     \
    { "cpu.add", HROPS__OP_ADD, HROPS_DEVICE_CPU, dt, 0, add_construct,      \
      hrops__add_bind, fn, add_destroy }

const struct hrops__impl hrops__cpu_add_impls[] = {
    ADD_IMPL(HROPS_FLOAT32, add_f32),
    ADD_IMPL(HROPS_FLOAT64, add_f64),
    ADD_IMPL(HROPS_FLOAT16, add_f16),
    ADD_IMPL(HROPS_BFLOAT16, add_bf16),
};
const size_t hrops__cpu_add_nimpls =
    sizeof hrops__cpu_add_impls / sizeof hrops__cpu_add_impls[0];
