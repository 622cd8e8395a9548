/* The reference design's storage and report (see harness_refdesign.h). */
#include "config.h"

#include "tests/lib/harness_refdesign.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct harness_refd_sample {
    uint32_t name;
    uint64_t incl_ns;
    uint64_t self_ns;
};

struct harness_refd_frame {
    uint32_t name;
    uint64_t t0;
    uint64_t child_ns;
};

/* What the reference's std::vector<T> is to these: data, size, capacity;
 * push_back grows it (doubling) when full. */
struct frames {
    struct harness_refd_frame *data;
    size_t size, cap;
};
struct samples {
    struct harness_refd_sample *data;
    size_t size, cap;
};

/* A thread's stack and samples: the reference's two thread-locals. */
struct harness_refd_thread {
    struct frames stack;
    struct samples v;
    uint64_t dropped;
};

/*
 * The thread-locals, and the guard of their initialization on the thread:
 * a C++ thread_local of a type with a constructor is reached through a
 * wrapper that tests such a guard at every use and constructs the object
 * at the first. Not static: the library's default thread-local model
 * applies, as to the reference's thread-locals, which the scope reaches
 * from the operator library.
 */
HARNESS_REFD_API __thread struct harness_refd_thread harness_refd_tls;
HARNESS_REFD_API __thread int harness_refd_tls_ready;

/* The stack's initial room, as a constructor would reserve it. */
#define STACK_RESERVE 64u

static __attribute__((noinline)) void thread_init(void)
{
    struct harness_refd_thread *t = &harness_refd_tls;

    t->stack.data = malloc(STACK_RESERVE * sizeof *t->stack.data);
    t->stack.cap = t->stack.data != NULL ? STACK_RESERVE : 0;
    harness_refd_tls_ready = 1;
}

static inline struct harness_refd_thread *thread_state(void)
{
    if (__builtin_expect(!harness_refd_tls_ready, 0))
        thread_init();
    return &harness_refd_tls;
}

/* steady_clock::now(): a call into the library that holds it, which reads
 * CLOCK_MONOTONIC. Exported, so that the scope calls it through the PLT
 * as it calls the C++ library's. */
HARNESS_REFD_API uint64_t harness_refd_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) int frames_grow(struct frames *s)
{
    size_t cap = s->cap ? 2 * s->cap : STACK_RESERVE;
    struct harness_refd_frame *d = realloc(s->data, cap * sizeof *d);

    if (d == NULL)
        return -1;
    s->data = d;
    s->cap = cap;
    return 0;
}

void harness_refd_begin(uint32_t name)
{
    struct harness_refd_thread *t = thread_state();
    struct harness_refd_frame *f;

    if (t->stack.size == t->stack.cap && frames_grow(&t->stack) != 0) {
        t->dropped++;
        return;
    }
    f = &t->stack.data[t->stack.size++];
    f->name = name;
    f->child_ns = 0;
    f->t0 = harness_refd_now();
}

void harness_refd_end(void)
{
    uint64_t t1 = harness_refd_now(), incl;
    struct harness_refd_thread *t = thread_state();
    struct harness_refd_frame f;
    struct harness_refd_sample *s;

    if (t->stack.size == 0)
        return;
    f = t->stack.data[--t->stack.size];
    incl = t1 - f.t0;
    if (t->stack.size > 0)
        t->stack.data[t->stack.size - 1].child_ns += incl;
    /* Reserved ahead: never full while ranges are timed. */
    if (t->v.size == t->v.cap) {
        t->dropped++;
        return;
    }
    s = &t->v.data[t->v.size++];
    s->name = f.name;
    s->incl_ns = incl;
    s->self_ns = incl > f.child_ns ? incl - f.child_ns : 0;
}

int harness_refd_reserve(size_t samples, int touch)
{
    struct harness_refd_thread *t = thread_state();
    struct harness_refd_sample *v;

    if (samples > t->v.cap) {
        free(t->v.data);
        t->v.data = NULL;
        t->v.cap = 0;
        v = malloc(samples * sizeof *v);
        if (v == NULL)
            return -ENOMEM;
        t->v.data = v;
        t->v.cap = samples;
    }
    if (touch)
        memset(t->v.data, 0, t->v.cap * sizeof *t->v.data);
    t->v.size = 0;
    t->stack.size = 0;
    t->dropped = 0;
    return 0;
}

uint64_t harness_refd_dropped(void)
{
    return thread_state()->dropped;
}

void harness_refd_free(void)
{
    struct harness_refd_thread *t = &harness_refd_tls;

    free(t->v.data);
    free(t->stack.data);
    memset(t, 0, sizeof *t);
    harness_refd_tls_ready = 0;
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
    incl = malloc((t->v.size + 1) * sizeof *incl);
    self = malloc((t->v.size + 1) * sizeof *self);
    if (incl == NULL || self == NULL) {
        free(incl);
        free(self);
        return -ENOMEM;
    }
    /* The samples grouped by name (a counting sort), then each group's
     * figures. */
    for (size_t i = 0; i < t->v.size; i++)
        if (t->v.data[i].name < names)
            start[t->v.data[i].name + 1]++;
    for (uint32_t k = 0; k < names; k++) {
        start[k + 1] += start[k];
        at[k] = start[k];
    }
    for (size_t i = 0; i < t->v.size; i++) {
        const struct harness_refd_sample *s = &t->v.data[i];

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
