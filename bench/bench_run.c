/*
 * The arrays of a case of hostrange-bench, its calls and their timing (see
 * bench.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostrange.h"
#include "bench/bench.h"

int bench_call(const struct bench_run *r)
{
    if (r->c->op == BENCH_ADD)
        return hrops_add(&r->x[0].d, &r->x[1].d, &r->x[2].d, r->device, 0);
    return hrops_gemm(&r->x[0].d, &r->x[1].d, &r->x[2].d, 1.0, 0.0,
                      r->c->flags, r->device, 0);
}

int bench_time_block(const struct bench_run *r, unsigned calls, int raw,
                     uint64_t *ns)
{
    uint64_t t0;
    int rc = hrops_sync(r->device);

    if (rc != 0)
        return rc;
    t0 = hr_now_ns();
    if (raw) {
        for (unsigned i = 0; i < calls; i++)
            rc |= hrops_raw_run(r->raw);
    } else {
        for (unsigned i = 0; i < calls; i++)
            rc |= bench_call(r);
    }
    *ns = hr_now_ns() - t0;
    if (rc == 0)
        rc = hrops_sync(r->device);
    return rc;
}

unsigned bench_block_max(const struct bench_case *c, unsigned calls)
{
    return c->backend == BENCH_CUDA && calls > BENCH_CUDA_MAX_CALLS
               ? BENCH_CUDA_MAX_CALLS
               : calls;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_run_init(struct bench_run *r, const struct bench_case *c,
                   double **ref, double **bound)
{
    int64_t out_shape[HROPS_MAX_RANK];
    int out_nd, rc;

    memset(r, 0, sizeof *r);
    r->c = c;
    snprintf(r->device, sizeof r->device, "%s",
             c->backend == BENCH_CUDA ? "cuda:0" : "cpu");
    if (c->op == BENCH_ADD) {
        out_nd = c->ndim[0] > c->ndim[1] ? c->ndim[0] : c->ndim[1];
        for (int d = 0; d < out_nd; d++) {
            int da = d - (out_nd - c->ndim[0]), db = d - (out_nd - c->ndim[1]);
            int64_t la = da >= 0 ? c->shape[0][da] : 1;
            int64_t lb = db >= 0 ? c->shape[1][db] : 1;

            out_shape[d] = la == 1 ? lb : la;
        }
    } else {
        int nd = c->ndim[0];

        out_nd = nd;
        if (nd == 3)
            out_shape[0] = c->shape[0][0];
        out_shape[nd - 2] = c->flags & HROPS_TRANS_A ? c->shape[0][nd - 1]
                                                     : c->shape[0][nd - 2];
        out_shape[nd - 1] = c->flags & HROPS_TRANS_B ? c->shape[1][nd - 2]
                                                     : c->shape[1][nd - 1];
    }
    for (int i = 0; i < 3; i++) {
        rc = ref_array_init(&r->x[i], c->dtype, i < 2 ? c->ndim[i] : out_nd,
                            i < 2 ? c->shape[i] : out_shape, NULL, r->device);
        if (rc != 0)
            return rc;
        ref_fill(&r->x[i], 17u + (uint32_t)i);
    }
    *ref = malloc(((size_t)r->x[2].numel + 1) * sizeof **ref);
    *bound = malloc(((size_t)r->x[2].numel + 1) * sizeof **bound);
    if (*ref == NULL || *bound == NULL)
        return -ENOMEM;
    rc = c->op == BENCH_ADD
             ? ref_add(&r->x[0], &r->x[1], &r->x[2], *ref, *bound)
             : ref_gemm(&r->x[0], &r->x[1], &r->x[2], 1.0, 0.0, c->flags,
                        *ref, *bound);
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = ref_upload(&r->x[i]);
    return rc;
}

void bench_run_fini(struct bench_run *r)
{
    hrops_raw_free(r->raw);
    for (int i = 0; i < 3; i++)
        ref_array_fini(&r->x[i]);
}

int bench_autorange(const struct bench_run *r, uint64_t min_ns,
                    unsigned max_calls, unsigned *calls, uint64_t *ns)
{
    static const unsigned steps[3] = { 1, 2, 5 };
    int rc;

    for (unsigned scale = 1;; scale *= 10) {
        for (int s = 0; s < 3; s++) {
            unsigned n = steps[s] * scale;

            if ((rc = bench_time_block(r, n, 0, ns)) != 0)
                return rc;
            if (*ns >= min_ns || n >= max_calls) {
                *calls = n < max_calls ? n : max_calls;
                return 0;
            }
        }
    }
}
