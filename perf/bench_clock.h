/*
 * The floors the client benchmarks divide by: ns per pair of reads of the
 * clock libhostrange uses, in this thread's processor time.
 *
 *   bench_clock_pair         two plain reads (rdtsc; two vDSO reads for
 *                            CLOCK_MONOTONIC): the physical floor, below
 *                            which no scope can go; the fast path's
 *   bench_clock_pair_fenced  lfence;rdtsc;lfence twice: each read fenced on
 *                            both sides, as the ordered path reads the
 *                            clock (the fence on the work's side of each
 *                            read and the one at the outer edge of the
 *                            scope's own work, hostrange.h); the ordered
 *                            path's floor
 *   bench_clock_pair_path    the floor of the path this process runs
 *                            (hr_clock_path)
 */
#ifndef HOSTRANGE_TESTS_BENCH_CLOCK_H
#define HOSTRANGE_TESTS_BENCH_CLOCK_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "hostrange.h"

/* Keeps the reads from being optimized away. */
static volatile uint64_t bench_clock_sink;

enum { BENCH_CLOCK_MONO, BENCH_CLOCK_PLAIN, BENCH_CLOCK_FENCED };

/* ns of this thread's processor time per pair over n pairs, once. */
static inline double bench_clock_pair_once(long n, int how)
{
    struct timespec t0, t1;
    uint64_t sum = 0;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
        if (how == BENCH_CLOCK_FENCED) {
            _mm_lfence();
            uint64_t a = __rdtsc();
            _mm_lfence();
            _mm_lfence();
            uint64_t b = __rdtsc();
            _mm_lfence();
            sum += b - a;
            continue;
        }
        if (how == BENCH_CLOCK_PLAIN) {
            uint64_t a = __rdtsc();
            uint64_t b = __rdtsc();
            sum += b - a;
            continue;
        }
#endif
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        sum += (uint64_t)(b.tv_nsec - a.tv_nsec);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    bench_clock_sink += sum;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
            (double)(t1.tv_nsec - t0.tv_nsec)) /
           (double)n;
}

/* The least of 7 tries of n / 7 pairs: processor time, so that another
 * process taking the processor does not count, and the least, so that one
 * disturbed try does not decide. */
static inline double bench_clock_pair_best(long n, int how)
{
    double best = 1e300;

    for (int r = 0; r < 7; r++) {
        double t = bench_clock_pair_once(n / 7 + 1, how);

        if (t < best)
            best = t;
    }
    return best;
}

static inline int bench_clock_tsc(void)
{
    return strcmp(hr_clock_name(), "tsc") == 0;
}

static inline double bench_clock_pair(long n)
{
    return bench_clock_pair_best(n, bench_clock_tsc() ? BENCH_CLOCK_PLAIN
                                                      : BENCH_CLOCK_MONO);
}

static inline double bench_clock_pair_fenced(long n)
{
    return bench_clock_pair_best(n, bench_clock_tsc() ? BENCH_CLOCK_FENCED
                                                      : BENCH_CLOCK_MONO);
}

static inline double bench_clock_pair_path(long n)
{
    return strcmp(hr_clock_path(), "ordered") == 0 ? bench_clock_pair_fenced(n)
                                                   : bench_clock_pair(n);
}

#endif
