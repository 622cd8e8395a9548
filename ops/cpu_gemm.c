/*
 * Batched GEMM on the CPU, float32 and float64: a dot product per element
 * of c over the plan's strides (op() already applied), accumulated in the
 * element type. With beta == 0, c is only written.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ops/ops.h"

static int gemm_construct(const struct hrops__call *c, void **plan)
{
    struct hrops__gemm_layout *l = malloc(sizeof *l);
    int rc;

    if (l == NULL)
        return -ENOMEM;
    rc = hrops__gemm_layout_make(c, l);
    if (rc != 0) {
        free(l);
        return rc;
    }
    *plan = l;
    return 0;
}

static int gemm_bind(const void *plan, const struct hrops__call *c,
                     union hrops__args *args)
{
    (void)plan;
    args->gemm.a = c->t[0]->data;
    args->gemm.b = c->t[1]->data;
    args->gemm.c = c->t[2]->data;
    args->gemm.alpha = c->alpha;
    args->gemm.beta = c->beta;
    args->gemm.beta_zero = c->beta == 0.0;
    return 0;
}

static void gemm_destroy(void *plan)
{
    free(plan);
}

#define GEMM_LOOP(name, T)                                                   \
    static int name(const void *plan, const union hrops__args *args)         \
    {                                                                        \
        const struct hrops__gemm_layout *l = plan;                           \
        const T alpha = (T)args->gemm.alpha, beta = (T)args->gemm.beta;      \
        const int beta_zero = args->gemm.beta_zero;                          \
                                                                             \
        for (int64_t p = 0; p < l->batch; p++) {                             \
            const T *a = (const T *)args->gemm.a + p * l->sa[0];             \
            const T *b = (const T *)args->gemm.b + p * l->sb[0];             \
            T *c = (T *)args->gemm.c + p * l->sc[0];                         \
                                                                             \
            for (int64_t i = 0; i < l->m; i++) {                             \
                const T *ai = a + i * l->sa[1];                              \
                T *ci = c + i * l->sc[1];                                    \
                                                                             \
                for (int64_t j = 0; j < l->n; j++) {                         \
                    const T *bj = b + j * l->sb[2];                          \
                    T acc = 0;                                               \
                                                                             \
                    for (int64_t q = 0; q < l->k; q++)                       \
                        acc += ai[q * l->sa[2]] * bj[q * l->sb[1]];          \
                    if (beta_zero)                                           \
                        ci[j * l->sc[2]] = alpha * acc;                      \
                    else                                                     \
                        ci[j * l->sc[2]] = alpha * acc +                     \
                                           beta * ci[j * l->sc[2]];          \
                }                                                            \
            }                                                                \
        }                                                                    \
        return 0;                                                            \
    }

GEMM_LOOP(gemm_f32, float)
GEMM_LOOP(gemm_f64, double)

const struct hrops__impl hrops__cpu_gemm_impls[] = {
    { "cpu.gemm", HROPS__OP_GEMM, HROPS_DEVICE_CPU, HROPS_FLOAT32, 0,
      gemm_construct, gemm_bind, gemm_f32, gemm_destroy },
    { "cpu.gemm", HROPS__OP_GEMM, HROPS_DEVICE_CPU, HROPS_FLOAT64, 0,
      gemm_construct, gemm_bind, gemm_f64, gemm_destroy },
};
const size_t hrops__cpu_gemm_nimpls =
    sizeof hrops__cpu_gemm_impls / sizeof hrops__cpu_gemm_impls[0];
