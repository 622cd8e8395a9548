/*
 * ops.h: the internals shared by the files of libhrops.
 *
 * A call flows through four layers. The binding (binding.c) turns each
 * hrops_array into a struct hrops_tensor (tensor.c: validated, strides
 * filled in, element count known) and the device string into a struct
 * hrops_device (both public, hrops.h, for callers that have a binding of
 * their own), and gathers them in a struct hrops__call. Dispatch
 * (dispatch.c) finds the struct hrops__impl for the call's operator, device
 * kind, dtype and implementation index in the backends' tables. The operator
 * layer (operator.c) builds the cache key of the call, looks the prepared
 * operator (the impl's "plan") up in the calling thread's cache (cache.c)
 * and constructs it on a miss, then binds the call's data to the plan and
 * submits the backend work.
 *
 * A plan depends only on what the key holds (operator, implementation,
 * device, and each tensor's dtype, shape, strides and data alignment), never
 * on data pointers or scalars: those are bound on every call. A plan is
 * constructed only for a call whose shapes were found consistent, so a cache
 * hit needs no further checking.
 */
#ifndef HROPS_OPS_H
#define HROPS_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "ops/hrops.h"

#define HROPS__OP_ADD 1
#define HROPS__OP_GEMM 2

/* The arguments of one operator call, as the binding hands them on. */
struct hrops__call {
    int op;
    int flags;                 /* HROPS_TRANS_* for GEMM */
    int dtype;                 /* the tensors' common dtype */
    double alpha, beta;        /* GEMM scalars */
    struct hrops_device device;
    int ntensors;
    const struct hrops_tensor *t[3];
};

/* What an implementation's bind step fills and its submit step reads: the
 * data pointers and scalars of one call, in the backend's own form. */
union hrops__args {
    struct {
        const void *a, *b;
        void *out;
    } add;
    struct {
        const void *a, *b;
        void *c;
        double alpha, beta;      /* for the CPU loops */
        float alpha_f, beta_f;   /* for cuBLASLt (32-bit scale type) */
        int beta_zero;
    } gemm;
};

/*
 * One implementation of an operator for one device kind and dtype.
 * construct makes the plan for a call (it validates the shapes; *plan is
 * written only on success and freed with destroy); bind fills the per-call
 * arguments (the work of operator.invoke); submit does the backend work (the
 * work of backend.submit), without waiting for a device.
 */
struct hrops__impl {
    const char *name;
    int op, device_kind, dtype, index;
    int (*construct)(const struct hrops__call *c, void **plan);
    int (*bind)(const void *plan, const struct hrops__call *c,
                union hrops__args *args);
    int (*submit)(const void *plan, const union hrops__args *args);
    void (*destroy)(void *plan);
};

/* tensor.c: pure checks and conversions, no ranges. */
int hrops__tensor_init(struct hrops_tensor *t, const hrops_array *a);
int hrops__device_parse(const char *s, struct hrops_device *d);
int hrops__device_resolve(const struct hrops_device *d);
int hrops__call_check(struct hrops__call *c);
/* The element strides of a contiguous row-major array of `shape`. */
void hrops__contiguous_strides(int ndim, const int64_t *shape,
                               int64_t *strides);

/* dispatch.c */
const struct hrops__impl *hrops__impl_find(int op, int device_kind,
                                           int dtype, int index);
int hrops__dispatch(const struct hrops__call *c, int index);

/* operator.c */
int hrops__operator_call(const struct hrops__impl *impl,
                         const struct hrops__call *c);

/* cache.c: the calling thread's table of plans, keyed by words of 64 bits. */
#define HROPS__KEY_MAX_WORDS (2 + 3 * (1 + 2 * HROPS_MAX_RANK))
size_t hrops__key_build(const struct hrops__impl *impl,
                        const struct hrops__call *c, uint64_t *key);
uint64_t hrops__key_hash(const uint64_t *key, size_t n);
void *hrops__cache_lookup(const uint64_t *key, size_t n, uint64_t hash);
int hrops__cache_insert(const uint64_t *key, size_t n, uint64_t hash,
                        const struct hrops__impl *impl, void *plan);

/* layout.c: shapes of the operators, checked and simplified. */

/* Add over at most HROPS_MAX_RANK dimensions, with the element strides of
 * a, b and out (index 0, 1, 2); dimensions of length 1 are dropped and
 * mergeable neighbours merged, so a contiguous call has ndim 1. */
struct hrops__add_layout {
    int32_t ndim;            /* 1 to HROPS_MAX_RANK */
    int32_t contiguous;      /* ndim 1 and every stride 1 */
    int64_t n;               /* elements of out */
    int64_t shape[HROPS_MAX_RANK];
    int64_t stride[3][HROPS_MAX_RANK];
};
int hrops__add_layout_make(const struct hrops__call *c,
                           struct hrops__add_layout *l);
/* The bind step of every Add: the call's a, b and out tensors' data. */
int hrops__add_bind(const void *plan, const struct hrops__call *c,
                    union hrops__args *args);

/* Batched GEMM: C[p](i, j) = sum over l of A[p](i, l) * B[p](l, j), with
 * op() already applied to the strides of A and B. Strides in elements:
 * [0] the batch, [1] the row, [2] the column. */
struct hrops__gemm_layout {
    int64_t batch, m, n, k;
    int64_t sa[3], sb[3], sc[3];
};
int hrops__gemm_layout_make(const struct hrops__call *c,
                            struct hrops__gemm_layout *l);

/* The backends' implementations: cpu_add.c, cpu_gemm.c, cuda_add.c and
 * cuda_gemm.c (nocuda.c, with none, when built without CUDA). */
extern const struct hrops__impl hrops__cpu_add_impls[];
extern const size_t hrops__cpu_add_nimpls;
extern const struct hrops__impl hrops__cpu_gemm_impls[];
extern const size_t hrops__cpu_gemm_nimpls;
extern const struct hrops__impl hrops__cuda_add_impls[];
extern const size_t hrops__cuda_add_nimpls;
extern const struct hrops__impl hrops__cuda_gemm_impls[];
extern const size_t hrops__cuda_gemm_nimpls;

/* cuda.c (or nocuda.c): the CUDA runtime, for the rest of the library.
 * Every failure clears the thread's last CUDA error, so that it is not
 * reported again by the next launch. hrops__cuda_error says why
 * hrops__cuda_count is 0 (static text), or is NULL when it is not.
 * hrops__cuda_current is the calling thread's current device (-1 when
 * unknown); hrops__cuda_restore makes `index` current again (nothing for
 * -1). */
int hrops__cuda_count(void);
const char *hrops__cuda_error(void);
int hrops__cuda_current(void);
void hrops__cuda_restore(int index);
int hrops__cuda_use(int index);
int hrops__cuda_alloc(int index, size_t bytes, void **out);
void hrops__cuda_free(int index, void *p);
int hrops__cuda_copy(int index, void *dst, const void *src, size_t bytes,
                     int to_device);
int hrops__cuda_sync(int index);

#endif /* HROPS_OPS_H */
