/*
 * The monotonic clock in nanoseconds and milliseconds, for the daemon,
 * hostrangectl, the client's shipper, the tests and the benchmarks: one
 * helper instead of a copy in each. Header-only and inline. The client's
 * range timing (client/client.h, client/clock.c) reads its own clock.
 */
#ifndef HOSTRANGE_MONOTONIC_H
#define HOSTRANGE_MONOTONIC_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline uint64_t hrp_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Milliseconds of CLOCK_MONOTONIC (rounded down). */
static inline uint64_t hrp_mono_ms(void)
{
    return hrp_mono_ns() / 1000000u;
}

#endif
