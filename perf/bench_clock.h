/*
 * The floor every client benchmark divides by: ns per pair of reads of the
 * clock libhostrange uses, as a range's bounds read it, in this thread's
 * processor time. For the TSC that is lfence;rdtsc;lfence twice: a scope
 * orders each of its two reads with the program's work on both sides (the
 * fence on the work's side of each read, and the one at the outer edge of
 * the scope's own work, hostrange.h says why), so a read of this clock
 * costs its rdtsc and two fences. For CLOCK_MONOTONIC it is two vDSO reads
 * (ordered already). bench_clock_pair_inner gives the pair with only the
 * fences on the work's side (rdtsc;lfence then lfence;rdtsc), for
 * reference.
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

/* ns of this thread's processor time per pair over n pairs, once; tsc 2:
 * the reads fenced on both sides, 1: on the work's side only. */
static inline double bench_clock_pair_once(long n, int tsc)
{
    struct timespec t0, t1;
    uint64_t sum = 0;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
        if (tsc == 2) {
            _mm_lfence();
            uint64_t a = __rdtsc();
            _mm_lfence();
            _mm_lfence();
            uint64_t b = __rdtsc();
            _mm_lfence();
            sum += b - a;
            continue;
        }
        if (tsc) {
            uint64_t a = __rdtsc();
            _mm_lfence();
            _mm_lfence();
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
static inline double bench_clock_pair_best(long n, int tsc)
{
    double best = 1e300;

    for (int r = 0; r < 7; r++) {
        double t = bench_clock_pair_once(n / 7 + 1, tsc);

        if (t < best)
            best = t;
    }
    return best;
}

static inline double bench_clock_pair(long n)
{
    return bench_clock_pair_best(n, strcmp(hr_clock_name(), "tsc") == 0 ? 2
                                                                        : 0);
}

static inline double bench_clock_pair_inner(long n)
{
    return bench_clock_pair_best(n, strcmp(hr_clock_name(), "tsc") == 0 ? 1
                                                                        : 0);
}

#endif
