/*
 * A knob for testing performance gates (hrops_slow, hrops.h): a range
 * made slower on purpose by spinning inside it, at its end, for a share
 * of the time spent in it so far. Off, a range pays one load and a
 * predictable branch at each end.
 */
#ifndef HROPS_SLOW_H
#define HROPS_SLOW_H

#include <stdint.h>

/* The ranges that can be slowed. */
enum { HROPS__SLOW_BODY, HROPS__SLOW_SUBMIT, HROPS__SLOW_N };

/* A bit per range slowed, and each one's share (pct / 100). */
extern unsigned hrops__slow_on;
extern double hrops__slow_share[HROPS__SLOW_N];

uint64_t hrops__slow_now(void);
void hrops__slow_spin(unsigned which, uint64_t t0);

/* The time a slowed range starts at (0: not slowed). */
static inline uint64_t hrops__slow_begin(unsigned which)
{
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
