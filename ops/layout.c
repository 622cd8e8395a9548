/*
 * The shapes of the operators: broadcasting and dimension merging for Add,
 * the matrix dimensions and strides of a batched GEMM. Pure logic, run when
 * a plan is constructed.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ops/ops.h"

/*
 * Fills *l for out = a + b (c->t[0], t[1], t[2]): a and b must broadcast to
 * out's shape (each dimension, aligned on the right, equal to out's or 1;
 * missing leading dimensions count as 1), and out must not repeat an element
 * (no zero stride where its length is above 1). Returns 0 or -EINVAL.
 */
int hrops__add_layout_make(const struct hrops__call *c,
                           struct hrops__add_layout *l)
{
    const struct hrops_tensor *out = c->t[2];
    int64_t shape[HROPS_MAX_RANK], stride[3][HROPS_MAX_RANK];
    int nd = 0;

    memset(l, 0, sizeof *l);
    for (int i = 0; i < 2; i++) {
        if (c->t[i]->ndim > out->ndim)
            return -EINVAL;
    }
    for (int d = 0; d < out->ndim; d++) {
        int64_t len = out->shape[d];
        int64_t s[3];

        for (int i = 0; i < 2; i++) {
            const struct hrops_tensor *t = c->t[i];
            int td = d - (out->ndim - t->ndim);

            if (td < 0 || t->shape[td] == 1) {
                s[i] = 0;
            } else if (t->shape[td] == len) {
                s[i] = t->strides[td];
            } else {
                return -EINVAL;
            }
        }
        s[2] = out->strides[d];
        if (len > 1 && s[2] == 0)
            return -EINVAL;
        if (len == 1)
            continue;           /* contributes no offset */
        shape[nd] = len;
        for (int i = 0; i < 3; i++)
            stride[i][nd] = s[i];
        nd++;
    }
    l->n = out->numel;
    if (l->n == 0 || nd == 0) {
        /* Nothing to do, or one element: a flat loop of n. */
        l->ndim = 1;
        l->shape[0] = l->n;
        for (int i = 0; i < 3; i++)
            l->stride[i][0] = 1;
        l->contiguous = 1;
        return 0;
    }
    /* Merge, from the innermost, each dimension into the one inside it
     * when every operand steps over the inner one exactly. */
    l->ndim = 1;
    l->shape[HROPS_MAX_RANK - 1] = shape[nd - 1];
    for (int i = 0; i < 3; i++)
        l->stride[i][HROPS_MAX_RANK - 1] = stride[i][nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
        int cur = HROPS_MAX_RANK - l->ndim;
        int merge = 1;

        for (int i = 0; i < 3; i++) {
            int64_t step;
            if (__builtin_mul_overflow(stride[i][cur], l->shape[cur], &step) ||
                stride[i][d] != step)
                merge = 0;
        }
        if (merge) {
            l->shape[cur] *= shape[d];
            continue;
        }
        cur--;
        l->ndim++;
        l->shape[cur] = shape[d];
        for (int i = 0; i < 3; i++)
            l->stride[i][cur] = stride[i][d];
    }
    /* Move the dimensions to the front. */
    if (l->ndim < HROPS_MAX_RANK) {
        int first = HROPS_MAX_RANK - l->ndim;

        memmove(l->shape, l->shape + first, (size_t)l->ndim * sizeof(int64_t));
        memset(l->shape + l->ndim, 0,
               (size_t)(HROPS_MAX_RANK - l->ndim) * sizeof(int64_t));
        for (int i = 0; i < 3; i++) {
            memmove(l->stride[i], l->stride[i] + first,
                    (size_t)l->ndim * sizeof(int64_t));
            memset(l->stride[i] + l->ndim, 0,
                   (size_t)(HROPS_MAX_RANK - l->ndim) * sizeof(int64_t));
        }
    }
    l->contiguous = l->ndim == 1 && l->stride[0][0] == 1 &&
                    l->stride[1][0] == 1 && l->stride[2][0] == 1;
    return 0;
}

/*
 * Fills *l for c = op(a) * op(b) (+ c): the three tensors all of rank 2 or
 * all of rank 3 with one batch length, op(a) m x k, op(b) k x n, c m x n,
 * and c repeating no element. Returns 0 or -EINVAL.
 */
int hrops__gemm_layout_make(const struct hrops__call *c,
                            struct hrops__gemm_layout *l)
{
    const struct hrops_tensor *a = c->t[0], *b = c->t[1], *o = c->t[2];
    int r = o->ndim;
    int64_t k2;

    memset(l, 0, sizeof *l);
    if ((r != 2 && r != 3) || a->ndim != r || b->ndim != r)
        return -EINVAL;
    if (r == 3) {
        l->batch = o->shape[0];
        if (a->shape[0] != l->batch || b->shape[0] != l->batch)
            return -EINVAL;
        l->sa[0] = a->strides[0];
        l->sb[0] = b->strides[0];
        l->sc[0] = o->strides[0];
    } else {
        l->batch = 1;
    }
    if (c->flags & HROPS_TRANS_A) {
        l->m = a->shape[r - 1];
        l->k = a->shape[r - 2];
        l->sa[1] = a->strides[r - 1];
        l->sa[2] = a->strides[r - 2];
    } else {
        l->m = a->shape[r - 2];
        l->k = a->shape[r - 1];
        l->sa[1] = a->strides[r - 2];
        l->sa[2] = a->strides[r - 1];
    }
    if (c->flags & HROPS_TRANS_B) {
        k2 = b->shape[r - 1];
        l->n = b->shape[r - 2];
        l->sb[1] = b->strides[r - 1];
        l->sb[2] = b->strides[r - 2];
    } else {
        k2 = b->shape[r - 2];
        l->n = b->shape[r - 1];
        l->sb[1] = b->strides[r - 2];
        l->sb[2] = b->strides[r - 1];
    }
    if (k2 != l->k || o->shape[r - 2] != l->m || o->shape[r - 1] != l->n)
        return -EINVAL;
    l->sc[1] = o->strides[r - 2];
    l->sc[2] = o->strides[r - 1];
    if ((l->batch > 1 && l->sc[0] == 0) || (l->m > 1 && l->sc[1] == 0) ||
        (l->n > 1 && l->sc[2] == 0))
        return -EINVAL;
    return 0;
}

int hrops__add_bind(const void *plan, const struct hrops__call *c,
                    union hrops__args *args)
{
    (void)plan;
    args->add.a = c->t[0]->data;
    args->add.b = c->t[1]->data;
    args->add.out = c->t[2]->data;
    return 0;
}
