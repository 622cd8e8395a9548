/*
 * A log-linear histogram of uint64_t values with a relative error of at most
 * 0.1%. Pure logic, no I/O.
 *
 * Values below 1024 have a bucket each (exact). A value v >= 1024 with its
 * highest set bit at e (10 <= e <= 63) falls in one of 512 buckets of equal
 * width 2^(e-9) that split [2^e, 2^(e+1)); a bucket [lo, lo + w) stands for
 * lo + (w - 1) / 2, which is within w / (2 lo) <= 1/1024 of every value in
 * it. There are HRS_HIST_BUCKETS buckets in all, in HRS_HIST_CHUNKS chunks:
 * chunk 0 holds the 1024 linear buckets, chunk j >= 1 the 512 buckets of
 * [2^(j+9), 2^(j+10)). A chunk's counts are allocated when a value first
 * falls in it, so the memory of a histogram follows the spread of its
 * values (a few chunks of 4 KiB), not their number, and adding a value is
 * an index computation and an increment.
 *
 * Besides the buckets, a histogram keeps the exact count, sum, minimum and
 * maximum of its values, and their sum of squares (exact in 128 bits for
 * values below 2^32, in long double beyond), so the mean, minimum and
 * maximum it reports are exact and only quantiles are estimates.
 */
#ifndef HOSTRANGE_HIST_H
#define HOSTRANGE_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HRS_HIST_SUB_BITS 9
#define HRS_HIST_LINEAR 1024u
#define HRS_HIST_BUCKETS (HRS_HIST_LINEAR + 54u * 512u)
#define HRS_HIST_CHUNKS 55u

struct hrs_hist {
    uint64_t n;
    uint64_t min;
    uint64_t max;
    unsigned __int128 sum;
    unsigned __int128 sumsq_small; /* squares of values below 2^32 */
    long double sumsq_big;         /* the others', and a loaded sum */
    uint64_t *chunk[HRS_HIST_CHUNKS];
    uint32_t nb;     /* non-empty buckets */
    size_t bytes;    /* of the chunks */
};

/* The bucket of v, and the value a bucket stands for. */
uint32_t hrs_hist_bucket(uint64_t v);
double hrs_hist_value(uint32_t bucket);

/*
 * Puts a weighted population into the histogram's buckets, in place: the
 * values v[0..n) (sorted) with their weights w become one value per
 * bucket (the bucket's value) with the summed weight. Returns the new
 * count. The comparisons of diff and plot --diff between an exact
 * population and a histogram use it, so that both sides share a grid.
 */
size_t hrs_hist_bucket_weighted(double *v, uint64_t *w, size_t n);

void hrs_hist_init(struct hrs_hist *h);
/* Frees the buckets; accepts NULL. */
void hrs_hist_fini(struct hrs_hist *h);

/* Makes room for value v, so that adding it cannot fail. Returns 0 or
 * -ENOMEM. */
int hrs_hist_reserve(struct hrs_hist *h, uint64_t v);

/* Adds one value / `count` copies of one value. Return 0 or -ENOMEM
 * (the histogram is then unchanged). */
int hrs_hist_add(struct hrs_hist *h, uint64_t v);
int hrs_hist_add_n(struct hrs_hist *h, uint64_t v, uint64_t count);

/* Adds n values (as hrs_hist_add would, one at a time; an add costs the
 * same whatever the order). Returns 0 or -ENOMEM (then partly added). */
int hrs_hist_add_sorted(struct hrs_hist *h, const uint64_t *v, size_t n);

/* Makes dst (uninitialised) a copy of src with buckets of its own.
 * Returns 0 or -ENOMEM (dst is then empty). */
int hrs_hist_copy(struct hrs_hist *dst, const struct hrs_hist *src);

/* 1 when x and y hold the same values (buckets, count, sum, extremes). */
int hrs_hist_equal(const struct hrs_hist *x, const struct hrs_hist *y);

/*
 * The common case of an add, inline: hrs_hist_slot gives the counter of
 * v's bucket when its chunk exists (else NULL: hrs_hist_reserve first),
 * and hrs_hist_bump adds v through it. Splitting them lets a caller that
 * adds to two histograms find both counters before it changes either.
 */
static inline uint64_t *hrs_hist_slot(const struct hrs_hist *h, uint64_t v)
{
    uint64_t *c;
    int e;

    if (v < HRS_HIST_LINEAR) {
        c = h->chunk[0];
        return c != NULL ? c + v : NULL;
    }
    e = 63 - __builtin_clzll(v);
    c = h->chunk[e - 9];
    return c != NULL ? c + ((v >> (e - HRS_HIST_SUB_BITS)) & 511u) : NULL;
}

static inline void hrs_hist_bump_n(struct hrs_hist *h, uint64_t *slot,
                                   uint64_t v, uint64_t count)
{
    h->nb += *slot == 0;
    *slot += count;
    if (h->n == 0 || v < h->min)
        h->min = v;
    if (h->n == 0 || v > h->max)
        h->max = v;
    h->n += count;
    h->sum += (unsigned __int128)v * count;
    if (v < ((uint64_t)1 << 32))
        h->sumsq_small += (unsigned __int128)(v * v) * count;
    else
        h->sumsq_big += (long double)v * (long double)v * (long double)count;
}

static inline void hrs_hist_bump(struct hrs_hist *h, uint64_t *slot,
                                 uint64_t v)
{
    hrs_hist_bump_n(h, slot, v, 1);
}

/* Bytes of memory the buckets take (capacity, not just use). */
size_t hrs_hist_bytes(const struct hrs_hist *h);

/* The sum of the squares of the values. */
long double hrs_hist_sumsq(const struct hrs_hist *h);

/* The first non-empty bucket at or after `from` and its count (*count), or
 * HRS_HIST_BUCKETS when there is none. */
uint32_t hrs_hist_next(const struct hrs_hist *h, uint32_t from,
                       uint64_t *count);

/* Sets the count of an empty bucket (loading a saved histogram; count,
 * sums, minimum and maximum are set by the loader). Returns 0, -EINVAL when
 * the bucket is out of range or not empty, or -ENOMEM. */
int hrs_hist_set_bucket(struct hrs_hist *h, uint32_t bucket, uint64_t count);

/*
 * Estimates of the values at quantiles q[0..nq) (each in [0, 1], ascending),
 * with the same interpolation as for exact values: the value at rank
 * q * (n - 1), interpolated linearly between the two nearest ranks. Each
 * estimate is clamped to [min, max]. Writes out[0..nq); an empty histogram
 * gives zeros.
 */
void hrs_hist_quantiles(const struct hrs_hist *h, const double *q, int nq,
                        double *out);

#endif
