/*
 * The reference design: the in-process profiler hostrange replaces, built
 * the way the reference builds it, so that the benchmarks (make bench) and
 * the accuracy test measure it beside hostrange, in the same run.
 *
 * In the reference it is a C++ RAII scope: its constructor reads
 * steady_clock (CLOCK_MONOTONIC on Linux) and pushes a frame on a
 * thread-local stack; its destructor reads the clock again, pops the frame,
 * adds the range's inclusive time to its parent's children and appends a
 * sample (name, inclusive, self) to a thread-local vector reserved ahead,
 * so that it never regrows while ranges are timed. Count, mean and median
 * per range name and metric are computed at the end. Here the constructor
 * and the destructor are harness_refd_begin and harness_refd_end, inlined
 * where they are called as the C++ scope's would be; the thread's state is
 * one thread-local object of the program (no lookup, no guard).
 *
 * Range names are small integers (0 .. HARNESS_REFD_NAMES - 1) that the
 * caller gives; a range nested deeper than HARNESS_REFD_DEPTH, or a sample
 * past the reserved room, is not kept (counted in `dropped`).
 */
#ifndef HOSTRANGE_TESTS_HARNESS_REFDESIGN_H
#define HOSTRANGE_TESTS_HARNESS_REFDESIGN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HARNESS_REFD_NAMES 64u
#define HARNESS_REFD_DEPTH 64u

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

struct harness_refd_thread {
    struct harness_refd_frame stack[HARNESS_REFD_DEPTH];
    uint32_t depth;
    struct harness_refd_sample *v;
    size_t n, cap;
    uint64_t dropped;
};

extern __thread struct harness_refd_thread harness_refd_tls;

static inline uint64_t harness_refd_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The scope's constructor: opens range `name` on the calling thread. */
static inline void harness_refd_begin(uint32_t name)
{
    struct harness_refd_thread *t = &harness_refd_tls;
    struct harness_refd_frame *f;

    if (t->depth == HARNESS_REFD_DEPTH) {
        t->dropped++;
        t->depth++;
        return;
    }
    f = &t->stack[t->depth++];
    f->name = name;
    f->child_ns = 0;
    f->t0 = harness_refd_now();
}

/* The scope's destructor: closes the innermost open range. */
static inline void harness_refd_end(void)
{
    uint64_t t1 = harness_refd_now(), incl;
    struct harness_refd_thread *t = &harness_refd_tls;
    struct harness_refd_frame *f;
    struct harness_refd_sample *s;

    if (t->depth == 0)
        return;
    if (t->depth > HARNESS_REFD_DEPTH) {
        t->depth--;
        return;
    }
    f = &t->stack[--t->depth];
    incl = t1 - f->t0;
    if (t->depth > 0)
        t->stack[t->depth - 1].child_ns += incl;
    if (t->n == t->cap) {
        t->dropped++;
        return;
    }
    s = &t->v[t->n++];
    s->name = f->name;
    s->incl_ns = incl;
    s->self_ns = incl > f->child_ns ? incl - f->child_ns : 0;
}

/* Reserves room for `samples` samples on the calling thread (the vector's
 * reserve) and empties it. Returns 0 or -ENOMEM. */
int harness_refd_reserve(size_t samples);

/* Frees the calling thread's samples. */
void harness_refd_free(void);

/* Count, mean and median (the mean of the two middle values when the count
 * is even) of one range name and metric, in ns; 0 when it has none. */
struct harness_refd_stat {
    uint64_t count;
    double mean;
    double median;
};

/*
 * The report the reference computes at the end: for every name below
 * `names` (at most HARNESS_REFD_NAMES), out[2 * name] its inclusive and
 * out[2 * name + 1] its self figures, from the calling thread's samples.
 * Returns 0 or -ENOMEM.
 */
int harness_refd_report(struct harness_refd_stat *out, uint32_t names);

#endif
