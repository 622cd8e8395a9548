/* The reference design's storage and report (see harness_refdesign.h). */
#include "config.h"

#include "tests/lib/harness_refdesign.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

__thread struct harness_refd_thread harness_refd_tls;

int harness_refd_reserve(size_t samples)
{
    struct harness_refd_thread *t = &harness_refd_tls;
    struct harness_refd_sample *v;

    if (samples > t->cap) {
        v = realloc(t->v, samples * sizeof *v);
        if (v == NULL)
            return -ENOMEM;
        t->v = v;
        t->cap = samples;
    }
    /* A reserved vector's memory is written before the ranges are timed,
     * as the reference's reserve() followed by its first use would. */
    memset(t->v, 0, t->cap * sizeof *t->v);
    t->n = 0;
    t->depth = 0;
    t->dropped = 0;
    return 0;
}

void harness_refd_free(void)
{
    struct harness_refd_thread *t = &harness_refd_tls;

    free(t->v);
    memset(t, 0, sizeof *t);
}

static void swap(uint64_t *a, uint64_t *b)
{
    uint64_t x = *a;

    *a = *b;
    *b = x;
}

/* The k-th smallest of v[0..n) (0-based), partitioning v in place: what
 * std::nth_element does. Afterwards v[0..k) hold values not above it. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;

    while (lo < hi) {
        ptrdiff_t i = lo, j = hi, mid = lo + (hi - lo) / 2;
        uint64_t pivot;

        /* Median of three as the pivot. */
        if (v[mid] < v[lo])
            swap(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swap(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swap(&v[hi], &v[mid]);
        pivot = v[mid];
        /* Hoare's partition: v[lo..j] <= pivot <= v[i..hi], and what lies
         * between j and i equals the pivot. */
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j)
                swap(&v[i++], &v[j--]);
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return v[want];
    }
    return v[want];
}

static void summarize(uint64_t *v, size_t n, struct harness_refd_stat *out)
{
    double sum = 0;

    out->count = n;
    out->mean = out->median = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    out->mean = sum / (double)n;
    out->median = (double)select_kth(v, n, n / 2);
    if (n % 2 == 0) {
        /* The largest of the lower half, which select_kth left below. */
        uint64_t low = v[0];

        for (size_t i = 1; i < n / 2; i++)
            if (v[i] > low)
                low = v[i];
        out->median = (out->median + (double)low) / 2;
    }
}

int harness_refd_report(struct harness_refd_stat *out, uint32_t names)
{
    const struct harness_refd_thread *t = &harness_refd_tls;
    size_t start[HARNESS_REFD_NAMES + 1] = { 0 }, at[HARNESS_REFD_NAMES];
    uint64_t *incl, *self;

    if (names > HARNESS_REFD_NAMES)
        names = HARNESS_REFD_NAMES;
    memset(out, 0, 2 * names * sizeof *out);
    incl = malloc((t->n + 1) * sizeof *incl);
    self = malloc((t->n + 1) * sizeof *self);
    if (incl == NULL || self == NULL) {
        free(incl);
        free(self);
        return -ENOMEM;
    }
    /* The samples grouped by name (a counting sort), then each group's
     * figures. */
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].name < names)
            start[t->v[i].name + 1]++;
    for (uint32_t k = 0; k < names; k++) {
        start[k + 1] += start[k];
        at[k] = start[k];
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct harness_refd_sample *s = &t->v[i];

        if (s->name >= names)
            continue;
        incl[at[s->name]] = s->incl_ns;
        self[at[s->name]++] = s->self_ns;
    }
    for (uint32_t k = 0; k < names; k++) {
        summarize(incl + start[k], start[k + 1] - start[k], &out[2 * k]);
        summarize(self + start[k], start[k + 1] - start[k], &out[2 * k + 1]);
    }
    free(incl);
    free(self);
    return 0;
}
