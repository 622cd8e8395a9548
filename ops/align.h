/*
 * align.h: the alignment of an address, as the plans of the CUDA backend
 * key and use it. Header-only and pure, so that it is tested without a GPU.
 */
#ifndef HROPS_ALIGN_H
#define HROPS_ALIGN_H

#include <stdint.h>

/*
 * The largest power of two that divides address `a`, at most `max` (a power
 * of two, at least 1); `max` for address 0. The lowest set bit is isolated
 * in the full width of the address before it is clamped, so an address
 * aligned to 4 GiB or more gives `max`, never 0.
 */
static inline uint32_t hrops__alignment(uintptr_t a, uint32_t max)
{
    uintptr_t low = a & (~a + 1);

    return a == 0 || low > (uintptr_t)max ? max : (uint32_t)low;
}

#endif /* HROPS_ALIGN_H */
