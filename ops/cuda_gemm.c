/*
 * Batched GEMM on CUDA devices through cuBLASLt (float32, float16 and
 * bfloat16, computed in float32). Constructing the plan makes everything
 * cublasLtMatmul needs once: a handle, the operation descriptor, the matrix
 * layouts, the algorithm chosen by the heuristic and its workspace; a call
 * then binds its pointers and scalars and calls cublasLtMatmul alone.
 *
 * cuBLASLt reads column-major matrices. A matrix whose rows are contiguous
 * is the transpose of a column-major one, so each operand is described as
 * a column-major matrix M and a flag t (the operand is M, or M transposed
 * when t is set). When c itself is row-major, the plan computes the
 * transposed product instead: c^T = op(b)^T * op(a)^T.
 *
 * An empty inner dimension (k = 0) leaves c = beta * c, as on the CPU; its
 * plan launches the scaling kernel of cuda_add_kernel.cu instead. A plan
 * keeps the device it was made on, and is destroyed on that device.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "ops/align.h"
#include "ops/cuda_kernels.h"
#include "ops/ops.h"

#define MAX_WORKSPACE (4u << 20)

struct gemm_plan {
    int device;     /* the CUDA device index the plan was made on */
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    void *workspace;
    size_t workspace_size;
    int swap;       /* compute c^T: the first operand is b */
    int empty;      /* no element of c to compute */
    hrops__cuda_scale_fn *scale;    /* k = 0: c = beta * c */
    int64_t batch, m, n, sc[3];     /* c, for scale */
};

/* A column-major view of a matrix with `rows` x `cols` elements and element
 * strides sr (between rows) and sc (between columns). */
struct colmajor {
    int64_t rows, cols, ld;
    int t;
};

/* Returns 0 and fills *m, or -ENOTSUP when neither dimension has a unit
 * stride (or the other stride is too small to be a leading dimension). */
static int as_colmajor(int64_t rows, int64_t cols, int64_t sr, int64_t sc,
                       struct colmajor *m)
{
    if ((sr == 1 || rows <= 1) && (cols <= 1 || sc >= rows)) {
        m->rows = rows;
        m->cols = cols;
        m->ld = cols <= 1 ? (rows > 1 ? rows : 1) : sc;
        m->t = 0;
        return 0;
    }
    if ((sc == 1 || cols <= 1) && (rows <= 1 || sr >= cols)) {
        m->rows = cols;
        m->cols = rows;
        m->ld = rows <= 1 ? (cols > 1 ? cols : 1) : sr;
        m->t = 1;
        return 0;
    }
    return -ENOTSUP;
}

static cudaDataType_t data_type(int dtype)
{
    return dtype == HROPS_FLOAT16    ? CUDA_R_16F
           : dtype == HROPS_BFLOAT16 ? CUDA_R_16BF
                                     : CUDA_R_32F;
}

/* The alignment of p in bytes, up to 256. */
static uint32_t alignment(const void *p)
{
    return hrops__alignment((uintptr_t)p, 256u);
}

static int layout_new(cublasLtMatrixLayout_t *out, cudaDataType_t type,
                      const struct colmajor *m, int64_t batch,
                      int64_t batch_stride)
{
    int32_t count = (int32_t)batch;

    if (cublasLtMatrixLayoutCreate(out, type, (uint64_t)m->rows,
                                   (uint64_t)m->cols, m->ld) !=
        CUBLAS_STATUS_SUCCESS)
        return -ENOMEM;
    if (batch > 1 &&
        (cublasLtMatrixLayoutSetAttribute(*out,
                                          CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                          &count, sizeof count) !=
             CUBLAS_STATUS_SUCCESS ||
         cublasLtMatrixLayoutSetAttribute(
             *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
             &batch_stride, sizeof batch_stride) != CUBLAS_STATUS_SUCCESS)) {
        cublasLtMatrixLayoutDestroy(*out);
        return -EIO;
    }
    return 0;
}

static void gemm_destroy(void *plan)
{
    struct gemm_plan *p = plan;
    int cur = hrops__cuda_current();

    if (cur != p->device)
        hrops__cuda_use(p->device);
    if (p->workspace != NULL)
        cudaFree(p->workspace);
    if (p->lc != NULL)
        cublasLtMatrixLayoutDestroy(p->lc);
    if (p->lb != NULL)
        cublasLtMatrixLayoutDestroy(p->lb);
    if (p->la != NULL)
        cublasLtMatrixLayoutDestroy(p->la);
    if (p->desc != NULL)
        cublasLtMatmulDescDestroy(p->desc);
    if (p->handle != NULL)
        cublasLtDestroy(p->handle);
    if (cur != p->device)
        hrops__cuda_restore(cur);
    free(p);
}

/* Sets the transposes and the preference, asks the heuristic for one
 * algorithm and allocates its workspace. */
static int choose_algorithm(struct gemm_plan *p, int ta, int tb,
                            const uint32_t align[3])
{
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t result;
    uint64_t max_ws = MAX_WORKSPACE;
    int found = 0, rc = 0;

    if (cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                       &opa, sizeof opa) !=
            CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                       &opb, sizeof opb) !=
            CUBLAS_STATUS_SUCCESS)
        return -EIO;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS)
        return -ENOMEM;
    if (cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
            sizeof max_ws) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align[0],
            sizeof align[0]) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align[1],
            sizeof align[1]) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align[2],
            sizeof align[2]) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align[2],
            sizeof align[2]) != CUBLAS_STATUS_SUCCESS) {
        rc = -EIO;
        goto out;
    }
    if (cublasLtMatmulAlgoGetHeuristic(p->handle, p->desc, p->la, p->lb,
                                       p->lc, p->lc, pref, 1, &result,
                                       &found) != CUBLAS_STATUS_SUCCESS ||
        found < 1) {
        rc = -ENOTSUP;
        goto out;
    }
    p->algo = result.algo;
    p->workspace_size = result.workspaceSize;
    if (p->workspace_size > 0 &&
        cudaMalloc(&p->workspace, p->workspace_size) != cudaSuccess) {
        cudaGetLastError();
        p->workspace = NULL;
        rc = -ENOMEM;
    }
out:
    cublasLtMatmulPreferenceDestroy(pref);
    return rc;
}

static int gemm_construct(const struct hrops__call *c, void **plan)
{
    struct hrops__gemm_layout l;
    struct colmajor ma, mb, mc;
    struct gemm_plan *p;
    cudaDataType_t type = data_type(c->dtype);
    uint32_t align[3];
    int rc;

    rc = hrops__gemm_layout_make(c, &l);
    if (rc != 0)
        return rc;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    p->device = c->device.index;
    if (l.batch == 0 || l.m == 0 || l.n == 0) {
        p->empty = 1;
        *plan = p;
        return 0;
    }
    if (l.k == 0) {
        p->scale = c->dtype == HROPS_FLOAT16    ? hrops__cuda_scale_f16
                   : c->dtype == HROPS_BFLOAT16 ? hrops__cuda_scale_bf16
                                                : hrops__cuda_scale_f32;
        p->batch = l.batch;
        p->m = l.m;
        p->n = l.n;
        for (int i = 0; i < 3; i++)
            p->sc[i] = l.sc[i];
        *plan = p;
        return 0;
    }
    if (l.batch > INT32_MAX ||
        as_colmajor(l.m, l.k, l.sa[1], l.sa[2], &ma) != 0 ||
        as_colmajor(l.k, l.n, l.sb[1], l.sb[2], &mb) != 0 ||
        as_colmajor(l.m, l.n, l.sc[1], l.sc[2], &mc) != 0) {
        rc = -ENOTSUP;
        goto fail;
    }
    p->swap = mc.t;
    for (int i = 0; i < 3; i++)
        align[i] = alignment(c->t[i]->data);
    if (p->swap) {
        uint32_t x = align[0];

        align[0] = align[1];
        align[1] = x;
    }
    if (cublasLtCreate(&p->handle) != CUBLAS_STATUS_SUCCESS) {
        p->handle = NULL;
        rc = -EIO;
        goto fail;
    }
    if (cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) !=
        CUBLAS_STATUS_SUCCESS) {
        p->desc = NULL;
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = layout_new(&p->la, type, p->swap ? &mb : &ma, l.batch,
                         p->swap ? l.sb[0] : l.sa[0])) != 0 ||
        (rc = layout_new(&p->lb, type, p->swap ? &ma : &mb, l.batch,
                         p->swap ? l.sa[0] : l.sb[0])) != 0 ||
        (rc = layout_new(&p->lc, type, &mc, l.batch, l.sc[0])) != 0)
        goto fail;
    if (p->swap)
        rc = choose_algorithm(p, !mb.t, !ma.t, align);
    else
        rc = choose_algorithm(p, ma.t, mb.t, align);
    if (rc != 0)
        goto fail;
    *plan = p;
    return 0;

fail:
    gemm_destroy(p);
    return rc;
}

static int gemm_bind(const void *plan, const struct hrops__call *c,
                     union hrops__args *args)
{
    const struct gemm_plan *p = plan;

    args->gemm.a = p->swap ? c->t[1]->data : c->t[0]->data;
    args->gemm.b = p->swap ? c->t[0]->data : c->t[1]->data;
    args->gemm.c = c->t[2]->data;
    args->gemm.alpha_f = (float)c->alpha;
    args->gemm.beta_f = (float)c->beta;
    return 0;
}

static int gemm_submit(const void *plan, const union hrops__args *args)
{
    const struct gemm_plan *p = plan;

    if (p->empty)
        return 0;
    if (p->scale != NULL)
        return p->scale(p->batch, p->m, p->n, p->sc, args->gemm.beta_f,
                        args->gemm.c);
    return cublasLtMatmul(p->handle, p->desc, &args->gemm.alpha_f,
                          args->gemm.a, p->la, args->gemm.b, p->lb,
                          &args->gemm.beta_f, args->gemm.c, p->lc,
                          args->gemm.c, p->lc, &p->algo, p->workspace,
                          p->workspace_size, 0) == CUBLAS_STATUS_SUCCESS
               ? 0
               : -EIO;
}

#define GEMM_IMPL(dt)                                                        \
    { "cuda.gemm", HROPS__OP_GEMM, HROPS_DEVICE_CUDA, dt, 0, gemm_construct, \
      gemm_bind, gemm_submit, gemm_destroy }

const struct hrops__impl hrops__cuda_gemm_impls[] = {
    GEMM_IMPL(HROPS_FLOAT32),
    GEMM_IMPL(HROPS_FLOAT16),
    GEMM_IMPL(HROPS_BFLOAT16),
};
const size_t hrops__cuda_gemm_nimpls =
    sizeof hrops__cuda_gemm_impls / sizeof hrops__cuda_gemm_impls[0];
