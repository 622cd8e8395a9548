/*
 * Arrays with a host copy, and double-precision references (see ref.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/half.h"
#include "bench/ref.h"

int ref_array_init(struct ref_array *x, int dtype, int ndim,
                   const int64_t *shape, const int64_t *strides,
                   const char *device)
{
    size_t esize = hrops_dtype_size(dtype);
    int64_t lo = 0, hi = 0, n = 1, s = 1;
    int rc;

    memset(x, 0, sizeof *x);
    if (esize == 0 || ndim < 0 || ndim > HROPS_MAX_RANK ||
        strlen(device) >= sizeof x->device)
        return -EINVAL;
    for (int i = ndim - 1; i >= 0; i--) {
        x->shape[i] = shape[i];
        x->strides[i] = strides != NULL ? strides[i] : s;
        s *= shape[i] > 1 ? shape[i] : 1;
        n *= shape[i];
        if (shape[i] > 0) {
            int64_t span = (shape[i] - 1) * x->strides[i];

            if (span < 0)
                lo += span;
            else
                hi += span;
        }
    }
    x->numel = n;
    x->origin = -lo;
    x->bytes = (size_t)(hi - lo + 1) * esize;
    snprintf(x->device, sizeof x->device, "%s", device);
    x->host = malloc(x->bytes);
    if (x->host == NULL)
        return -ENOMEM;
    memset(x->host, 0, x->bytes);
    if (strcmp(device, "cpu") == 0) {
        x->dev = x->host;
    } else {
        rc = hrops_alloc(device, x->bytes, (void **)&x->dev);
        if (rc != 0) {
            free(x->host);
            return rc;
        }
    }
    x->d.data = x->dev + x->origin * (int64_t)esize;
    x->d.dtype = dtype;
    x->d.ndim = ndim;
    x->d.shape = x->shape;
    x->d.strides = x->strides;
    if (strcmp(device, "cpu") == 0) {
        x->d.device_type = HROPS_DEVICE_CPU;
        x->d.device_id = 0;
    } else {
        x->d.device_type = HROPS_DEVICE_CUDA;
        x->d.device_id = strchr(device, ':') ? atoi(strchr(device, ':') + 1)
                                             : 0;
    }
    return 0;
}

void ref_array_fini(struct ref_array *x)
{
    if (x->dev != NULL && x->dev != x->host)
        hrops_free(x->device, x->dev);
    free(x->host);
    x->host = x->dev = NULL;
}

double ref_round(int dtype, double v)
{
    switch (dtype) {
    case HROPS_FLOAT32:
        return (float)v;
    case HROPS_FLOAT16:
        return hrops__f16_to_f32(hrops__f32_to_f16((float)v));
    case HROPS_BFLOAT16:
        return hrops__bf16_to_f32(hrops__f32_to_bf16((float)v));
    default:
        return v;
    }
}

static double load(const char *p, int dtype)
{
    float f;
    double d;
    uint16_t h;

    switch (dtype) {
    case HROPS_FLOAT32:
        memcpy(&f, p, sizeof f);
        return f;
    case HROPS_FLOAT64:
        memcpy(&d, p, sizeof d);
        return d;
    case HROPS_FLOAT16:
        memcpy(&h, p, sizeof h);
        return hrops__f16_to_f32(h);
    default:
        memcpy(&h, p, sizeof h);
        return hrops__bf16_to_f32(h);
    }
}

static void store(char *p, int dtype, double v)
{
    float f = (float)v;
    uint16_t h;

    switch (dtype) {
    case HROPS_FLOAT32:
        memcpy(p, &f, sizeof f);
        break;
    case HROPS_FLOAT64:
        memcpy(p, &v, sizeof v);
        break;
    case HROPS_FLOAT16:
        h = hrops__f32_to_f16(f);
        memcpy(p, &h, sizeof h);
        break;
    default:
        h = hrops__f32_to_bf16(f);
        memcpy(p, &h, sizeof h);
        break;
    }
}

void ref_fill(struct ref_array *x, uint32_t seed)
{
    size_t esize = hrops_dtype_size(x->d.dtype);
    uint32_t s = seed * 2654435761u + 1;

    for (size_t i = 0; i < x->bytes / esize; i++) {
        /* xorshift32 */
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        store(x->host + i * esize, x->d.dtype,
              (double)(s >> 8) / (double)(1u << 23) - 1.0);
    }
}

int ref_upload(struct ref_array *x)
{
    return hrops_copy_to(x->device, x->dev, x->host, x->bytes);
}

int ref_download(struct ref_array *x)
{
    return hrops_copy_from(x->device, x->host, x->dev, x->bytes);
}

/* The storage offset, in elements, of the element at linear index i. */
static int64_t offset_of(const struct ref_array *x, int64_t i)
{
    int64_t off = x->origin;

    for (int d = x->d.ndim - 1; d >= 0; d--) {
        off += (i % x->shape[d]) * x->strides[d];
        i /= x->shape[d];
    }
    return off;
}

double ref_get(const struct ref_array *x, int64_t i)
{
    size_t esize = hrops_dtype_size(x->d.dtype);

    return load(x->host + offset_of(x, i) * (int64_t)esize, x->d.dtype);
}

/* The value of x at the index `idx` of an out array of rank `nd`, with x
 * broadcast to it. */
static double get_broadcast(const struct ref_array *x, const int64_t *idx,
                            int nd)
{
    size_t esize = hrops_dtype_size(x->d.dtype);
    int64_t off = x->origin;

    for (int d = 0; d < x->d.ndim; d++) {
        int od = d + nd - x->d.ndim;

        if (x->shape[d] != 1)
            off += idx[od] * x->strides[d];
    }
    return load(x->host + off * (int64_t)esize, x->d.dtype);
}

int ref_add(const struct ref_array *a, const struct ref_array *b,
            const struct ref_array *out, double *ref, double *bound)
{
    int nd = out->d.ndim;
    int64_t idx[HROPS_MAX_RANK];

    for (int k = 0; k < 2; k++) {
        const struct ref_array *x = k == 0 ? a : b;

        if (x->d.ndim > nd)
            return -EINVAL;
        for (int d = 0; d < x->d.ndim; d++) {
            int64_t len = x->shape[d], olen = out->shape[d + nd - x->d.ndim];

            if (len != 1 && len != olen)
                return -EINVAL;
        }
    }
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t rest = i;
        double va, vb;

        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = rest % out->shape[d];
            rest /= out->shape[d];
        }
        va = get_broadcast(a, idx, nd);
        vb = get_broadcast(b, idx, nd);
        ref[i] = va + vb;
        bound[i] = fabs(va) + fabs(vb);
    }
    return 0;
}

/* The element (p, i, j) of a rank 2 or 3 array (p ignored at rank 2),
 * transposed when t is set. */
static double get3(const struct ref_array *x, int64_t p, int64_t i,
                   int64_t j, int t)
{
    size_t esize = hrops_dtype_size(x->d.dtype);
    int r = x->d.ndim;
    int64_t off = x->origin;

    if (r == 3)
        off += p * x->strides[0];
    if (t)
        off += j * x->strides[r - 2] + i * x->strides[r - 1];
    else
        off += i * x->strides[r - 2] + j * x->strides[r - 1];
    return load(x->host + off * (int64_t)esize, x->d.dtype);
}

int ref_gemm(const struct ref_array *a, const struct ref_array *b,
             const struct ref_array *c, double alpha, double beta, int flags,
             double *ref, double *bound)
{
    int r = c->d.ndim, ta = flags & HROPS_TRANS_A, tb = flags & HROPS_TRANS_B;
    int64_t batch, m, n, k;

    if ((r != 2 && r != 3) || a->d.ndim != r || b->d.ndim != r)
        return -EINVAL;
    batch = r == 3 ? c->shape[0] : 1;
    m = c->shape[r - 2];
    n = c->shape[r - 1];
    k = ta ? a->shape[r - 2] : a->shape[r - 1];
    if ((r == 3 && (a->shape[0] != batch || b->shape[0] != batch)) ||
        (ta ? a->shape[r - 1] : a->shape[r - 2]) != m ||
        (tb ? b->shape[r - 1] : b->shape[r - 2]) != k ||
        (tb ? b->shape[r - 2] : b->shape[r - 1]) != n)
        return -EINVAL;
    for (int64_t p = 0; p < batch; p++) {
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                double sum = 0, mag = 0;
                int64_t at = (p * m + i) * n + j;

                for (int64_t q = 0; q < k; q++) {
                    double x = get3(a, p, i, q, ta) * get3(b, p, q, j, tb);

                    sum += x;
                    mag += fabs(x);
                }
                ref[at] = alpha * sum;
                bound[at] = fabs(alpha) * mag;
                if (beta != 0) {
                    double cv = get3(c, p, i, j, 0);

                    ref[at] += beta * cv;
                    bound[at] += fabs(beta * cv);
                }
            }
        }
    }
    return 0;
}

double ref_tolerance(int dtype)
{
    switch (dtype) {
    case HROPS_FLOAT64:
        return 1e-12;
    case HROPS_FLOAT32:
        return 1e-5;
    case HROPS_FLOAT16:
        return 2e-3;
    default:
        return 1e-2;
    }
}

double ref_check(const struct ref_array *out, const double *ref,
                 const double *bound, double tol, int64_t *worst)
{
    double max = 0;

    for (int64_t i = 0; i < out->numel; i++) {
        double got = ref_get(out, i);
        double e = fabs(got - ref[i]) / (tol * (bound[i] + 1e-3));

        if (!(e <= max)) {          /* a NaN counts as the worst */
            max = isnan(e) ? INFINITY : e;
            if (worst != NULL)
                *worst = i;
            if (isnan(e))
                break;
        }
    }
    return max;
}
