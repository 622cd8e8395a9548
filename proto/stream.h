/*
 * The sample stream of a Batch (its `samples` field; proto/hostrange.proto
 * describes the items): unsigned LEB128 varints, written by the client and
 * read by the daemon. Pure and inline.
 *
 * A writer needs room for HRP_ITEM_MAX bytes per item. A reader never reads
 * past `end`: a varint that runs off the end, or that is longer than 10
 * bytes or does not fit 64 bits, is an error.
 */
#ifndef HOSTRANGE_STREAM_H
#define HOSTRANGE_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* Item kinds: the low two bits of an item's tag. */
#define HRP_ITEM_LEAF 0u   /* range sample without children */
#define HRP_ITEM_PARENT 1u /* range sample with children */
#define HRP_ITEM_RECORD 2u /* a value measured by the program */
#define HRP_ITEM_LABEL 3u  /* the label set of the items that follow */

/* The longest item: a tag and four 64-bit varints. */
#define HRP_ITEM_MAX 50u

/* Appends v at p; returns the byte after it. */
static inline uint8_t *hrp_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads a varint at *pp (not past end) into *v and advances *pp. Returns 0,
 * or -1 when the stream is damaged (*pp is then unspecified). */
static inline int hrp_get_varint(const uint8_t **pp, const uint8_t *end,
                                 uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;

    /* One and two bytes, the common lengths (the loop below reads them
     * the same). */
    if (p < end && *p < 0x80) {
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= 2 && p[1] < 0x80) {
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return 0;
    }
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b;

        if (p == end)
            return -1;
        b = *p++;
        if (shift == 63 && b > 1)
            return -1;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

/* One item of a sample stream, as hrp_item_next reads it. */
struct hrp_item {
    uint32_t kind;
    uint64_t index;
    uint64_t incl, child, nchild, extra;
};

/* Reads the item at *pp. Returns 0, or -1 when the stream is damaged. */
static inline int hrp_item_next(const uint8_t **pp, const uint8_t *end,
                                struct hrp_item *it)
{
    uint64_t tag;

    if (hrp_get_varint(pp, end, &tag) != 0)
        return -1;
    it->kind = (uint32_t)(tag & 3u);
    it->index = tag >> 2;
    if (it->kind == HRP_ITEM_LABEL)
        return 0;
    if (hrp_get_varint(pp, end, &it->incl) != 0)
        return -1;
    if (it->kind != HRP_ITEM_PARENT) {
        it->child = it->nchild = it->extra = 0;
        return 0;
    }
    if (hrp_get_varint(pp, end, &it->child) != 0 ||
        hrp_get_varint(pp, end, &it->nchild) != 0 ||
        hrp_get_varint(pp, end, &it->extra) != 0)
        return -1;
    return 0;
}

/* The bits of an item's first byte that make it a leaf whose tag is that
 * one byte: the varint's continuation bit and the kind. */
#define HRP_LEAF_BYTE_MASK (0x80u | 3u)

#endif
