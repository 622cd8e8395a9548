/* The log-linear histogram (see hist.h). */
#include "config.h"

#include "daemon/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t hrd_hist_bucket(uint64_t v)
{
    int e;

    if (v < HRD_HIST_LINEAR)
        return (uint32_t)v;
    e = 63 - __builtin_clzll(v);
    return HRD_HIST_LINEAR + (uint32_t)(e - 10) * 512u +
           (uint32_t)((v >> (e - HRD_HIST_SUB_BITS)) & 511u);
}

double hrd_hist_value(uint32_t bucket)
{
    uint32_t e, m;
    uint64_t lo, w;

    if (bucket < HRD_HIST_LINEAR)
        return (double)bucket;
    e = (bucket - HRD_HIST_LINEAR) / 512u + 10u;
    m = (bucket - HRD_HIST_LINEAR) % 512u;
    w = (uint64_t)1 << (e - HRD_HIST_SUB_BITS);
    lo = ((uint64_t)512u + m) << (e - HRD_HIST_SUB_BITS);
    return (double)((long double)lo + (long double)(w - 1) / 2.0L);
}

void hrd_hist_init(struct hrd_hist *h)
{
    memset(h, 0, sizeof *h);
}

void hrd_hist_fini(struct hrd_hist *h)
{
    if (h == NULL)
        return;
    free(h->idx);
    free(h->cnt);
    memset(h, 0, sizeof *h);
}

size_t hrd_hist_bytes(const struct hrd_hist *h)
{
    return (size_t)h->cap * (sizeof *h->idx + sizeof *h->cnt);
}

static int grow(struct hrd_hist *h)
{
    uint32_t cap = h->cap ? h->cap + h->cap / 2 : 16;
    uint16_t *ni;
    uint64_t *nc;

    if (cap > HRD_HIST_BUCKETS)
        cap = HRD_HIST_BUCKETS;
    ni = realloc(h->idx, cap * sizeof *ni);
    if (ni == NULL)
        return -ENOMEM;
    h->idx = ni;
    nc = realloc(h->cnt, cap * sizeof *nc);
    if (nc == NULL)
        return -ENOMEM;
    h->cnt = nc;
    h->cap = cap;
    return 0;
}

int hrd_hist_reserve(struct hrd_hist *h)
{
    return h->nb < h->cap ? 0 : grow(h);
}

/* Position of bucket b in the sorted index: where it is or would go. */
static uint32_t find(const struct hrd_hist *h, uint32_t b)
{
    uint32_t lo = 0, hi = h->nb;

    /* Values often repeat the last bucket; check the end first. */
    if (hi > 0 && h->idx[hi - 1] < b)
        return hi;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (h->idx[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void note(struct hrd_hist *h, uint64_t v, uint64_t count)
{
    if (h->n == 0 || v < h->min)
        h->min = v;
    if (h->n == 0 || v > h->max)
        h->max = v;
    h->n += count;
    h->sum += (unsigned __int128)v * count;
    h->sumsq += (long double)v * (long double)v * (long double)count;
}

int hrd_hist_add_n(struct hrd_hist *h, uint64_t v, uint64_t count)
{
    uint32_t b = hrd_hist_bucket(v);
    uint32_t i = find(h, b);

    if (count == 0)
        return 0;
    if (i < h->nb && h->idx[i] == b) {
        h->cnt[i] += count;
    } else {
        if (h->nb == h->cap && grow(h) != 0)
            return -ENOMEM;
        memmove(h->idx + i + 1, h->idx + i, (h->nb - i) * sizeof *h->idx);
        memmove(h->cnt + i + 1, h->cnt + i, (h->nb - i) * sizeof *h->cnt);
        h->idx[i] = (uint16_t)b;
        h->cnt[i] = count;
        h->nb++;
    }
    note(h, v, count);
    return 0;
}

int hrd_hist_add(struct hrd_hist *h, uint64_t v)
{
    return hrd_hist_add_n(h, v, 1);
}

int hrd_hist_add_sorted(struct hrd_hist *h, const uint64_t *v, size_t n)
{
    size_t i = 0;

    while (i < n) {
        uint32_t b = hrd_hist_bucket(v[i]);
        size_t j = i + 1;

        /* The run of values in the same bucket. */
        while (j < n && hrd_hist_bucket(v[j]) == b)
            j++;
        if (hrd_hist_add_n(h, v[i], j - i) != 0)
            return -ENOMEM;
        /* add_n noted v[i] j - i times; correct the sums for the others. */
        for (size_t k = i + 1; k < j; k++) {
            h->sum += v[k] - v[i];
            h->sumsq += (long double)v[k] * (long double)v[k] -
                        (long double)v[i] * (long double)v[i];
        }
        if (v[j - 1] > h->max)
            h->max = v[j - 1];
        i = j;
    }
    return 0;
}

void hrd_hist_quantiles(const struct hrd_hist *h, const double *q, int nq,
                        double *out)
{
    uint32_t b = 0;
    uint64_t below = 0; /* values in buckets before b */

    for (int k = 0; k < nq; k++) {
        long double pos, frac;
        uint64_t r;
        double x0, x1;

        if (h->n == 0) {
            out[k] = 0.0;
            continue;
        }
        pos = (long double)q[k] * (long double)(h->n - 1);
        r = (uint64_t)floorl(pos);
        frac = pos - (long double)r;
        /* Buckets only move forward: quantiles come ascending. */
        while (b < h->nb && below + h->cnt[b] <= r) {
            below += h->cnt[b];
            b++;
        }
        x0 = hrd_hist_value(h->idx[b]);
        if (frac > 0 && r + 1 >= below + h->cnt[b] && b + 1 < h->nb)
            x1 = hrd_hist_value(h->idx[b + 1]);
        else
            x1 = x0;
        x0 = fmin(fmax(x0, (double)h->min), (double)h->max);
        x1 = fmin(fmax(x1, (double)h->min), (double)h->max);
        out[k] = (double)((long double)x0 + frac * ((long double)x1 - x0));
    }
}
