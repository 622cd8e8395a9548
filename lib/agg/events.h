/*
 * Reading the exact encoding of a key's events (agg.h): one entry per
 * event, a header byte whose low nibble w1 is the byte count of the
 * inclusive time and whose high nibble w2 that of the children's time
 * (inclusive less self; HRA_EV_RECORD_MARK: a record, inclusive only),
 * then the two values little-endian without their leading zero bytes.
 * These inline readers serve agg.c (adding, moving to histograms) and
 * events.c (decoding and checking whole buffers); agg.h declares the
 * functions of both.
 */
#ifndef HOSTRANGE_EVENTS_H
#define HOSTRANGE_EVENTS_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HRA_EV_RECORD_MARK 15u

/* The mask of a value of `bytes` bytes (8 or more: all). */
static inline uint64_t hra_ev_mask(unsigned bytes)
{
    return bytes >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * bytes)) - 1;
}

/* The 8 bytes at p, little-endian. */
static inline uint64_t hra_ev_get8(const uint8_t *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
    return le64toh(x);
}

/* Whether header byte h is valid and its entry fits in `left` bytes. */
static inline int hra_ev_entry_ok(uint8_t h, size_t left)
{
    unsigned w1 = h & 15u, w2 = h >> 4;

    if (w2 == HRA_EV_RECORD_MARK)
        w2 = 0;
    return w1 <= 8 && w2 <= 8 && left >= 1u + w1 + w2;
}

/* The entry at p (whole, `left` bytes from p to the end of its buffer):
 * its inclusive time *x, children's time *d (0 for a record) and *rec;
 * returns its length. Whole words while the widest entry (17 bytes) fits
 * before the end, byte by byte near it (no slack is needed past it). */
static inline size_t hra_ev_entry_at(const uint8_t *p, size_t left,
                                     uint64_t *x, uint64_t *d, int *rec)
{
    unsigned w1 = p[0] & 15u, w2 = p[0] >> 4;

    *rec = w2 == HRA_EV_RECORD_MARK;
    w2 = *rec ? 0 : w2;
    if (left >= 17) {
        *x = hra_ev_get8(p + 1) & hra_ev_mask(w1);
        *d = hra_ev_get8(p + 1 + w1) & hra_ev_mask(w2);
    } else {
        *x = *d = 0;
        for (unsigned i = 0; i < w1; i++)
            *x |= (uint64_t)p[1 + i] << (8 * i);
        for (unsigned i = 0; i < w2; i++)
            *d |= (uint64_t)p[1 + w1 + i] << (8 * i);
    }
    return 1 + w1 + w2;
}

#endif
