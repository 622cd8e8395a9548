/* Sorting and summary statistics (see summary.h). */
#include "config.h"

#include "lib/stat/summary.h"
#include "lib/stat/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void insertion_sort(uint64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = v[i];
        size_t j = i;

        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* The widest digit of the radix sort, in bits (its counts stay in L1). */
#define RADIX_BITS 11
#define RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

void hrs_sort_u64(uint64_t *v, size_t n, uint64_t *tmp)
{
    /* Per pass, the count of each digit, then where it goes. */
    uint32_t count[RADIX_PASSES << RADIX_BITS], *c;
    uint64_t *src = v, *dst = tmp, *t, diff = 0, mask;
    unsigned lo, bits, passes, width, most;

    if (n < 64) {
        insertion_sort(v, n);
        return;
    }
    if (n > UINT32_MAX) {
        qsort(v, n, sizeof *v, cmp_u64);
        return;
    }
    /* Only the bits in which some values differ need sorting on: they
     * are split into as few digits as RADIX_BITS allows (8 bits for few
     * values, whose counts would cost more than they save), of equal
     * width. Values already in order (a run file's, loaded again) are
     * left as they are. */
    {
        uint64_t down = 0;

        for (size_t i = 1; i < n; i++) {
            diff |= v[i] ^ v[0];
            down |= (uint64_t)(v[i] < v[i - 1]);
        }
        if (diff == 0 || down == 0)
            return;
    }
    lo = (unsigned)__builtin_ctzll(diff);
    bits = 64 - (unsigned)__builtin_clzll(diff) - lo;
    most = n < 4096 ? 8 : RADIX_BITS;
    passes = (bits + most - 1) / most;
    width = (bits + passes - 1) / passes;
    mask = ((uint64_t)1 << width) - 1;
    memset(count, 0, (passes << width) * sizeof *count);
    /* One to three digits (values of up to 33 bits that differ) are
     * counted without an inner loop. */
    if (passes <= 3) {
        uint32_t *c0 = count, *c1 = count + ((size_t)1 << width);
        uint32_t *c2 = count + ((size_t)2 << width);
        unsigned s1 = width, s2 = 2 * width;

        if (passes == 1) {
            for (size_t i = 0; i < n; i++)
                c0[(v[i] >> lo) & mask]++;
        } else if (passes == 2) {
            for (size_t i = 0; i < n; i++) {
                uint64_t x = v[i] >> lo;

                c0[x & mask]++;
                c1[(x >> s1) & mask]++;
            }
        } else {
            for (size_t i = 0; i < n; i++) {
                uint64_t x = v[i] >> lo;

                c0[x & mask]++;
                c1[(x >> s1) & mask]++;
                c2[(x >> s2) & mask]++;
            }
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t x = v[i] >> lo;

            for (unsigned p = 0; p < passes; p++)
                count[(p << width) + ((x >> (p * width)) & mask)]++;
        }
    }
    for (unsigned p = 0; p < passes; p++) {
        unsigned shift = lo + p * width;
        uint32_t pos = 0;

        c = count + (p << width);
        /* A digit that every value has orders nothing. */
        if (c[(v[0] >> shift) & mask] == n)
            continue;
        for (uint64_t b = 0; b <= mask; b++) {
            uint32_t k = c[b];

            c[b] = pos;
            pos += k;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t x = src[i];

            dst[c[(x >> shift) & mask]++] = x;
        }
        t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
}

/* The value at quantile q of sorted v, interpolated between ranks. */
static double quantile(const uint64_t *v, size_t n, double q)
{
    long double pos = (long double)q * (long double)(n - 1);
    size_t r = (size_t)floorl(pos);
    long double frac = pos - (long double)r;

    if (r + 1 >= n || frac == 0)
        return (double)v[r];
    return (double)((long double)v[r] +
                    frac * ((long double)v[r + 1] - (long double)v[r]));
}

static double median_sorted(const uint64_t *v, size_t n)
{
    if (n % 2 == 1)
        return (double)v[n / 2];
    return (double)(((long double)v[n / 2 - 1] + (long double)v[n / 2]) / 2);
}

/*
 * The population standard deviation of n values summing to sum. When the
 * values are below 2^32 and n below 2^31, n^2 times the variance,
 * n * sum(x^2) - sum(x)^2, is computed exactly in 128-bit integers;
 * otherwise in two passes of long double.
 */
static double stddev(const uint64_t *v, size_t n, unsigned __int128 sum,
                     uint64_t max)
{
    long double mean, dev = 0;

    if (max < ((uint64_t)1 << 32) && n < ((size_t)1 << 31)) {
        unsigned __int128 sq = 0, var_n2;

        for (size_t i = 0; i < n; i++)
            sq += (uint64_t)v[i] * v[i];
        var_n2 = (unsigned __int128)n * sq - sum * sum;
        return (double)(sqrtl((long double)var_n2) / (long double)n);
    }
    mean = (long double)sum / (long double)n;
    for (size_t i = 0; i < n; i++) {
        long double d = (long double)v[i] - mean;
        dev += d * d;
    }
    return (double)sqrtl(dev / (long double)n);
}

void hrs_summary_sorted(const uint64_t *v, size_t n, struct hrs_summary *s)
{
    unsigned __int128 sum = 0;

    memset(s, 0, sizeof *s);
    s->exact = 1;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s->count = n;
    s->mean = (double)((long double)sum / (long double)n);
    s->median = median_sorted(v, n);
    s->min = (double)v[0];
    s->max = (double)v[n - 1];
    s->p10 = quantile(v, n, 0.10);
    s->p90 = quantile(v, n, 0.90);
    s->p99 = quantile(v, n, 0.99);
    s->stddev = stddev(v, n, sum, v[n - 1]);
}

void hrs_summary_hist(const struct hrs_hist *h, struct hrs_summary *s)
{
    static const double q[4] = { 0.10, 0.5, 0.90, 0.99 };
    double out[4];
    long double mean, var;

    memset(s, 0, sizeof *s);
    if (h->n == 0)
        return;
    mean = (long double)h->sum / (long double)h->n;
    var = hrs_hist_sumsq(h) / (long double)h->n - mean * mean;
    hrs_hist_quantiles(h, q, 4, out);
    s->count = h->n;
    s->mean = (double)mean;
    s->median = out[1];
    s->min = (double)h->min;
    s->max = (double)h->max;
    s->p10 = out[0];
    s->p90 = out[2];
    s->p99 = out[3];
    s->stddev = var > 0 ? (double)sqrtl(var) : 0.0;
}

void hrs_stats(uint64_t *v, size_t n, double *mean, double *median)
{
    unsigned __int128 sum = 0;
    uint64_t *tmp;

    if (n == 0) {
        *mean = *median = 0.0;
        return;
    }
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    tmp = n >= 64 ? malloc(n * sizeof *tmp) : NULL;
    if (n >= 64 && tmp == NULL) {
        /* No scratch: a slower sort in place still gives the answer. */
        for (size_t gap = n / 2; gap > 0; gap /= 2) {
            for (size_t i = gap; i < n; i++) {
                uint64_t x = v[i];
                size_t j = i;
                for (; j >= gap && v[j - gap] > x; j -= gap)
                    v[j] = v[j - gap];
                v[j] = x;
            }
        }
    } else {
        hrs_sort_u64(v, n, tmp);
    }
    free(tmp);
    *mean = (double)((long double)sum / (long double)n);
    *median = median_sorted(v, n);
}
