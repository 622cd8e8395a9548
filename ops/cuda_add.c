/*
 * Add on CUDA devices. Constructing the plan merges the layout on the host
 * and uploads it to the device once; a call then only binds its pointers
 * and launches the kernel of its dtype (cuda_add_kernel.cu). A plan keeps
 * the device it was made on, and is destroyed on that device.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "ops/cuda_kernels.h"
#include "ops/ops.h"

#define BLOCK 256
#define MAX_GRID 8192

struct add_plan {
    int device;                       /* where meta lives */
    struct hrops__add_layout layout;
    struct hrops__add_layout *meta;   /* the layout in device memory */
    unsigned grid;
};

static int add_construct(const struct hrops__call *c, void **plan)
{
    struct add_plan *p = malloc(sizeof *p);
    int64_t blocks;
    int rc;

    if (p == NULL)
        return -ENOMEM;
    p->device = c->device.index;
    rc = hrops__add_layout_make(c, &p->layout);
    if (rc != 0)
        goto fail_layout;
    if (cudaMalloc((void **)&p->meta, sizeof p->layout) != cudaSuccess) {
        rc = -ENOMEM;
        goto fail_alloc;
    }
    if (cudaMemcpy(p->meta, &p->layout, sizeof p->layout,
                   cudaMemcpyHostToDevice) != cudaSuccess) {
        rc = -EIO;
        goto fail_upload;
    }
    blocks = (p->layout.n + BLOCK - 1) / BLOCK;
    p->grid = (unsigned)(blocks < 1 ? 1 : blocks > MAX_GRID ? MAX_GRID
                                                            : blocks);
    *plan = p;
    return 0;

fail_upload:
    cudaGetLastError();
    cudaFree(p->meta);
fail_alloc:
    cudaGetLastError();
fail_layout:
    free(p);
    return rc;
}

/* Frees the plan on the device it was made on, whichever is current. */
static void add_destroy(void *plan)
{
    struct add_plan *p = plan;
    int cur = hrops__cuda_current();

    if (cur != p->device)
        hrops__cuda_use(p->device);
    if (cudaFree(p->meta) != cudaSuccess)
        cudaGetLastError();
    if (cur != p->device)
        hrops__cuda_restore(cur);
    free(p);
}

#define ADD_SUBMIT(name, launcher)                                           \
    static int name(const void *plan, const union hrops__args *args)         \
    {                                                                        \
        const struct add_plan *p = plan;                                     \
                                                                             \
        return launcher(p->layout.contiguous, p->layout.n, p->grid, BLOCK,   \
                        p->meta, args->add.a, args->add.b, args->add.out);   \
    }

ADD_SUBMIT(submit_f32, hrops__cuda_add_f32)
ADD_SUBMIT(submit_f64, hrops__cuda_add_f64)
ADD_SUBMIT(submit_f16, hrops__cuda_add_f16)
ADD_SUBMIT(submit_bf16, hrops__cuda_add_bf16)

#define ADD_IMPL(dt, fn)                                                     \
    { "cuda.add", HROPS__OP_ADD, HROPS_DEVICE_CUDA, dt, 0, add_construct,    \
      hrops__add_bind, fn, add_destroy }

const struct hrops__impl hrops__cuda_add_impls[] = {
    ADD_IMPL(HROPS_FLOAT32, submit_f32),
    ADD_IMPL(HROPS_FLOAT64, submit_f64),
    ADD_IMPL(HROPS_FLOAT16, submit_f16),
    ADD_IMPL(HROPS_BFLOAT16, submit_bf16),
};
const size_t hrops__cuda_add_nimpls =
    sizeof hrops__cuda_add_impls / sizeof hrops__cuda_add_impls[0];
