/*
 * The bare backend work of a call, for the benchmark's baseline: the same
 * checks, implementation and plan as a call through the layers, prepared
 * once; running it is the submit step alone.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ops/hrops_raw.h"
#include "ops/ops.h"

struct hrops_raw {
    const struct hrops__impl *impl;
    void *plan;
    union hrops__args args;
};

static int raw_new(struct hrops__call *c, const hrops_array *const arr[3],
                   const char *device, int index, hrops_raw **out)
{
    struct hrops_tensor t[3];
    struct hrops_raw *r;
    int rc;

    for (int i = 0; i < 3; i++) {
        rc = hrops__tensor_init(&t[i], arr[i]);
        if (rc != 0)
            return rc;
        c->t[i] = &t[i];
    }
    c->ntensors = 3;
    if ((rc = hrops__device_parse(device, &c->device)) != 0 ||
        (rc = hrops__device_resolve(&c->device)) != 0 ||
        (rc = hrops__call_check(c)) != 0)
        return rc;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return -ENOMEM;
    r->impl = hrops__impl_find(c->op, c->device.kind, c->dtype, index);
    if (r->impl == NULL) {
        rc = -ENOTSUP;
        goto fail_impl;
    }
    rc = r->impl->construct(c, &r->plan);
    if (rc != 0)
        goto fail_impl;
    rc = r->impl->bind(r->plan, c, &r->args);
    if (rc != 0)
        goto fail_bind;
    *out = r;
    return 0;

fail_bind:
    r->impl->destroy(r->plan);
fail_impl:
    free(r);
    return rc;
}

int hrops_raw_add_new(const hrops_array *a, const hrops_array *b,
                      const hrops_array *out, const char *device, int impl,
                      hrops_raw **out_raw)
{
    const hrops_array *const arr[3] = { a, b, out };
    struct hrops__call c = { .op = HROPS__OP_ADD };

    return raw_new(&c, arr, device, impl, out_raw);
}

int hrops_raw_gemm_new(const hrops_array *a, const hrops_array *b,
                       const hrops_array *cm, double alpha, double beta,
                       int flags, const char *device, int impl,
                       hrops_raw **out_raw)
{
    const hrops_array *const arr[3] = { a, b, cm };
    struct hrops__call c = { .op = HROPS__OP_GEMM, .alpha = alpha,
                             .beta = beta, .flags = flags };

    if (flags & ~(HROPS_TRANS_A | HROPS_TRANS_B))
        return -EINVAL;
    return raw_new(&c, arr, device, impl, out_raw);
}

int hrops_raw_run(hrops_raw *raw)
{
    return raw->impl->submit(raw->plan, &raw->args);
}

void hrops_raw_free(hrops_raw *raw)
{
    if (raw == NULL)
        return;
    raw->impl->destroy(raw->plan);
    free(raw);
}
