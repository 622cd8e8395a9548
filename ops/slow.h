/*
 * Knobs for testing performance gates (hrops_slow, hrops_slow_ns,
 * hrops.h): a range made slower on purpose, either by spinning inside it,
 * at its end, for a share of the time spent in it so far, or by a fixed
 * amount of work at its start (a chain of dependent multiply-adds whose
 * length was calibrated to take a given number of nanoseconds, and which
 * the rest of the range waits for), as a small regression in the code
 * would. Off, a range pays one load and a
 * predictable branch at each end.
 */
#ifndef HROPS_SLOW_H
#define HROPS_SLOW_H

#include <stdint.h>

/* The ranges that can be slowed. */
enum { HROPS__SLOW_BODY, HROPS__SLOW_SUBMIT, HROPS__SLOW_DISPATCH,
       HROPS__SLOW_N };

/* A bit per range slowed, and each one's share (pct / 100); a bit per
 * range given fixed work, and each one's number of steps of it. */
extern unsigned hrops__slow_on;
extern double hrops__slow_share[HROPS__SLOW_N];
extern unsigned hrops__slow_work_on;
extern uint64_t hrops__slow_steps[HROPS__SLOW_N];

uint64_t hrops__slow_now(void);
void hrops__slow_spin(unsigned which, uint64_t t0);
void hrops__slow_work(uint64_t steps);

/* Does the range's fixed work when it has some; returns the time a
 * slowed range starts at (0: not slowed). The work comes at the start:
 * at the end, out-of-order execution runs the end's unfenced clock read
 * (the default clock path) beside a chain of a few dozen ns, which the
 * range then does not show (20 ns of it left a 160 ns median as it was,
 * 40 ns added 50 ns). */
static inline uint64_t hrops__slow_begin(unsigned which)
{
    if (__builtin_expect((hrops__slow_work_on >> which) & 1u, 0))
        hrops__slow_work(hrops__slow_steps[which]);
    if (__builtin_expect((hrops__slow_on >> which) & 1u, 0))
        return hrops__slow_now();
    return 0;
}

/* Spins, when the range is slowed, for its share of the time since t0. */
static inline void hrops__slow_end(unsigned which, uint64_t t0)
{
    if (__builtin_expect(t0 != 0, 0))
        hrops__slow_spin(which, t0);
}

#endif
