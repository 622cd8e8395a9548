/*
 * The floor every client benchmark divides by: ns per pair of reads of the
 * clock libhostrange uses, as a range's bounds read it (the TSC with its
 * fences, rdtsc;lfence then lfence;rdtsc, or CLOCK_MONOTONIC), timed here
 * on CLOCK_MONOTONIC over n pairs.
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

static inline double bench_clock_pair(long n)
{
    int tsc = strcmp(hr_clock_name(), "tsc") == 0;
    struct timespec t0, t1;
    uint64_t sum = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
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
    clock_gettime(CLOCK_MONOTONIC, &t1);
    bench_clock_sink += sum;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
            (double)(t1.tv_nsec - t0.tv_nsec)) /
           (double)n;
}

#endif
