/*
 * The reference design: the in-process profiler hostrange replaces, built
 * the way the reference builds it, so that the benchmarks (make bench) and
 * the accuracy test measure it beside hostrange, in the same run.
 *
 * In the reference it is a C++ RAII scope in the operator library's
 * shared object: its constructor reads steady_clock (CLOCK_MONOTONIC on
 * Linux) and pushes a frame on a thread-local stack; its destructor reads
 * the clock again, pops the frame, adds the range's inclusive time to its
 * parent's children and appends a sample (name, inclusive, self) to a
 * thread-local vector reserved ahead, so that it never regrows while ranges
 * are timed (reserving takes the memory, the samples' first writes take
 * its pages). Count, mean and median per range name and metric are
 * computed at the end.
 *
 * Here it is a shared library of its own (libharness_refd, built from
 * harness_refdesign.c) that does what the C++ does, in C:
 * harness_refd_begin and harness_refd_end are the constructor and the
 * destructor; the thread-locals have the shared library's default model
 * and a guard tested at each use (a C++ thread_local with a constructor is
 * reached through such a wrapper); the stack and the samples are arrays
 * with a size and a capacity that a push checks, as std::vector's
 * push_back does; and the clock is read through a call into the library
 * (harness_refd_now, through the PLT), as steady_clock::now is a call into
 * the C++ library.
 *
 * Range names are small integers (0 .. HARNESS_REFD_NAMES - 1) that the
 * caller gives; a sample past the reserved room is not kept (counted:
 * harness_refd_dropped).
 */
#ifndef HOSTRANGE_TESTS_HARNESS_REFDESIGN_H
#define HOSTRANGE_TESTS_HARNESS_REFDESIGN_H

#include <stddef.h>
#include <stdint.h>

/* The library's calls are exported from it (the project builds with
 * hidden visibility). */
#define HARNESS_REFD_API __attribute__((visibility("default")))

#define HARNESS_REFD_NAMES 64u

/* steady_clock::now(): CLOCK_MONOTONIC in ns. */
HARNESS_REFD_API uint64_t harness_refd_now(void);

/* The scope's constructor: opens range `name` on the calling thread. */
HARNESS_REFD_API void harness_refd_begin(uint32_t name);

/* The scope's destructor: closes the calling thread's innermost range. */
HARNESS_REFD_API void harness_refd_end(void);

/*
 * Reserves room for `samples` samples on the calling thread (the vector's
 * reserve: its pages are taken by the first writes) and empties it; with
 * touch, writes the room first, so that no first write of a sample takes
 * a page fault inside a range. Returns 0 or -ENOMEM.
 */
HARNESS_REFD_API int harness_refd_reserve(size_t samples, int touch);

/* Frees the calling thread's samples. */
HARNESS_REFD_API void harness_refd_free(void);

/* Samples of the calling thread not kept (too deep, or past the room). */
HARNESS_REFD_API uint64_t harness_refd_dropped(void);

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
HARNESS_REFD_API int harness_refd_report(struct harness_refd_stat *out, uint32_t names);

#endif
