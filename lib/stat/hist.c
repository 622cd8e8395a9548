/* The log-linear histogram (see hist.h). */
#include "config.h"

#include "lib/stat/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HRS_UNLIKELY_HIST(x) __builtin_expect(!!(x), 0)

uint32_t hrs_hist_bucket(uint64_t v)
{
    int e;

    if (v < HRS_HIST_LINEAR)
        return (uint32_t)v;
    e = 63 - __builtin_clzll(v);
    return HRS_HIST_LINEAR + (uint32_t)(e - 10) * 512u +
           (uint32_t)((v >> (e - HRS_HIST_SUB_BITS)) & 511u);
}

double hrs_hist_value(uint32_t bucket)
{
    uint32_t e, m;
    uint64_t lo, w;

    if (bucket < HRS_HIST_LINEAR)
        return (double)bucket;
    e = (bucket - HRS_HIST_LINEAR) / 512u + 10u;
    m = (bucket - HRS_HIST_LINEAR) % 512u;
    w = (uint64_t)1 << (e - HRS_HIST_SUB_BITS);
    lo = ((uint64_t)512u + m) << (e - HRS_HIST_SUB_BITS);
    return (double)((long double)lo + (long double)(w - 1) / 2.0L);
}

void hrs_hist_init(struct hrs_hist *h)
{
    memset(h, 0, sizeof *h);
}

void hrs_hist_fini(struct hrs_hist *h)
{
    if (h == NULL)
        return;
    for (uint32_t j = 0; j < HRS_HIST_CHUNKS; j++)
        free(h->chunk[j]);
    memset(h, 0, sizeof *h);
}

/* Buckets in chunk j, and the chunk and offset of bucket b. */
static inline uint32_t chunk_size(uint32_t j)
{
    return j == 0 ? HRS_HIST_LINEAR : 512u;
}

static inline uint32_t chunk_of(uint32_t b, uint32_t *off)
{
    if (b < HRS_HIST_LINEAR) {
        *off = b;
        return 0;
    }
    *off = (b - HRS_HIST_LINEAR) & 511u;
    return 1 + (b - HRS_HIST_LINEAR) / 512u;
}

size_t hrs_hist_bytes(const struct hrs_hist *h)
{
    return h->bytes;
}

long double hrs_hist_sumsq(const struct hrs_hist *h)
{
    return (long double)h->sumsq_small + h->sumsq_big;
}

static int chunk_alloc(struct hrs_hist *h, uint32_t j)
{
    if (h->chunk[j] != NULL)
        return 0;
    h->chunk[j] = calloc(chunk_size(j), sizeof(uint64_t));
    if (h->chunk[j] == NULL)
        return -ENOMEM;
    h->bytes += chunk_size(j) * sizeof(uint64_t);
    return 0;
}

int hrs_hist_copy(struct hrs_hist *dst, const struct hrs_hist *src)
{
    *dst = *src;
    for (uint32_t j = 0; j < HRS_HIST_CHUNKS; j++) {
        size_t size = chunk_size(j) * sizeof(uint64_t);

        if (src->chunk[j] == NULL)
            continue;
        dst->chunk[j] = malloc(size);
        if (dst->chunk[j] == NULL) {
            for (uint32_t i = j + 1; i < HRS_HIST_CHUNKS; i++)
                dst->chunk[i] = NULL;
            hrs_hist_fini(dst);
            return -ENOMEM;
        }
        memcpy(dst->chunk[j], src->chunk[j], size);
    }
    return 0;
}

int hrs_hist_equal(const struct hrs_hist *x, const struct hrs_hist *y)
{
    if (x->n != y->n || x->sum != y->sum || x->min != y->min ||
        x->max != y->max || x->nb != y->nb)
        return 0;
    for (uint32_t j = 0; j < HRS_HIST_CHUNKS; j++) {
        if ((x->chunk[j] == NULL) != (y->chunk[j] == NULL) ||
            (x->chunk[j] != NULL &&
             memcmp(x->chunk[j], y->chunk[j],
                    chunk_size(j) * sizeof(uint64_t)) != 0))
            return 0;
    }
    return 1;
}

int hrs_hist_reserve(struct hrs_hist *h, uint64_t v)
{
    uint32_t off;

    return chunk_alloc(h, chunk_of(hrs_hist_bucket(v), &off));
}

int hrs_hist_add_n(struct hrs_hist *h, uint64_t v, uint64_t count)
{
    uint64_t *c;

    if (count == 0)
        return 0;
    c = hrs_hist_slot(h, v);
    if (HRS_UNLIKELY_HIST(c == NULL)) {
        if (hrs_hist_reserve(h, v) != 0)
            return -ENOMEM;
        c = hrs_hist_slot(h, v);
    }
    hrs_hist_bump_n(h, c, v, count);
    return 0;
}

int hrs_hist_add(struct hrs_hist *h, uint64_t v)
{
    return hrs_hist_add_n(h, v, 1);
}

int hrs_hist_add_sorted(struct hrs_hist *h, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (hrs_hist_add_n(h, v[i], 1) != 0)
            return -ENOMEM;
    }
    return 0;
}

uint32_t hrs_hist_next(const struct hrs_hist *h, uint32_t from,
                       uint64_t *count)
{
    uint32_t off, j;

    if (from >= HRS_HIST_BUCKETS)
        return HRS_HIST_BUCKETS;
    j = chunk_of(from, &off);
    for (; j < HRS_HIST_CHUNKS; j++, off = 0) {
        const uint64_t *c = h->chunk[j];
        uint32_t size = chunk_size(j);

        if (c == NULL)
            continue;
        for (; off < size; off++) {
            if (c[off] != 0) {
                *count = c[off];
                return j == 0 ? off : HRS_HIST_LINEAR + (j - 1) * 512u + off;
            }
        }
    }
    return HRS_HIST_BUCKETS;
}

int hrs_hist_set_bucket(struct hrs_hist *h, uint32_t bucket, uint64_t count)
{
    uint32_t off, j;

    if (bucket >= HRS_HIST_BUCKETS || count == 0)
        return -EINVAL;
    j = chunk_of(bucket, &off);
    if (chunk_alloc(h, j) != 0)
        return -ENOMEM;
    if (h->chunk[j][off] != 0)
        return -EINVAL;
    h->chunk[j][off] = count;
    h->nb++;
    return 0;
}

void hrs_hist_quantiles(const struct hrs_hist *h, const double *q, int nq,
                        double *out)
{
    uint64_t cnt = 0, ncnt;
    uint32_t b = hrs_hist_next(h, 0, &cnt);
    uint64_t below = 0; /* values in buckets before b */

    for (int k = 0; k < nq; k++) {
        long double pos, frac;
        uint64_t r;
        double x0, x1;
        uint32_t nb;

        if (h->n == 0 || b >= HRS_HIST_BUCKETS) {
            out[k] = 0.0;
            continue;
        }
        pos = (long double)q[k] * (long double)(h->n - 1);
        r = (uint64_t)floorl(pos);
        frac = pos - (long double)r;
        /* Buckets only move forward: quantiles come ascending. */
        while (below + cnt <= r) {
            nb = hrs_hist_next(h, b + 1, &ncnt);
            if (nb >= HRS_HIST_BUCKETS)
                break;
            below += cnt;
            b = nb;
            cnt = ncnt;
        }
        x0 = hrs_hist_value(b);
        x1 = x0;
        if (frac > 0 && r + 1 >= below + cnt) {
            nb = hrs_hist_next(h, b + 1, &ncnt);
            if (nb < HRS_HIST_BUCKETS)
                x1 = hrs_hist_value(nb);
        }
        x0 = fmin(fmax(x0, (double)h->min), (double)h->max);
        x1 = fmin(fmax(x1, (double)h->min), (double)h->max);
        out[k] = (double)((long double)x0 + frac * ((long double)x1 - x0));
    }
}

size_t hrs_hist_bucket_weighted(double *v, uint64_t *w, size_t n)
{
    size_t d = 0;
    uint32_t last = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t b = hrs_hist_bucket((uint64_t)v[i]);

        if (d > 0 && b == last) {
            w[d - 1] += w[i];
        } else {
            v[d] = hrs_hist_value(b);
            w[d++] = w[i];
            last = b;
        }
    }
    return d;
}
