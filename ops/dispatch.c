/*
 * Dispatch: the implementation for an operator, device kind, dtype and
 * implementation index, from the backends' tables.
 */
#include "config.h"

#include <errno.h>

#include "hostrange.h"
#include "ops/ops.h"
#include "ops/slow.h"

static hr_site s_dispatch = HR_SITE_INIT("dispatch.call");

static const struct {
    const struct hrops__impl *impls;
    const size_t *n;
} tables[] = {
    { hrops__cpu_add_impls, &hrops__cpu_add_nimpls },
    { hrops__cpu_gemm_impls, &hrops__cpu_gemm_nimpls },
    { hrops__cuda_add_impls, &hrops__cuda_add_nimpls },
    { hrops__cuda_gemm_impls, &hrops__cuda_gemm_nimpls },
};

/* The implementation that matches, or NULL. */
const struct hrops__impl *hrops__impl_find(int op, int device_kind,
                                           int dtype, int index)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (size_t i = 0; i < *tables[t].n; i++) {
            const struct hrops__impl *m = &tables[t].impls[i];

            if (m->op == op && m->device_kind == device_kind &&
                m->dtype == dtype && m->index == index)
                return m;
        }
    }
    return NULL;
}

/* Runs the call through the implementation chosen for it. Returns
 * -ENOTSUP when there is none, else what the operator layer returns. */
int hrops__dispatch(const struct hrops__call *c, int index)
{
    HR_SCOPE(d, &s_dispatch);
    uint64_t t0 = hrops__slow_begin(HROPS__SLOW_DISPATCH);
    const struct hrops__impl *impl;
    int rc;

    impl = hrops__impl_find(c->op, c->device.kind, c->dtype, index);
    if (impl == NULL)
        return -ENOTSUP;
    rc = hrops__operator_call(impl, c);
    hrops__slow_end(HROPS__SLOW_DISPATCH, t0);
    return rc;
}
