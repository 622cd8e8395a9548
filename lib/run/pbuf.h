/*
 * Protocol-buffer messages written by hand, byte for byte as protobuf-c
 * packs them: fields in the order of their numbers, a proto3 scalar that
 * is 0 or a string that is empty left out, a packed array as one
 * length-delimited field (left out when empty), a nested message as a
 * length-delimited field. Used where the bulk of the run files is written
 * (runkey.c saving, runjoin.c merging), so that every value is coded once
 * instead of protobuf-c's sizing pass and packing pass over it.
 *
 * A struct hrr_pbuf is a growing buffer: bytes p[0..len) written, cap
 * allocated; its memory is its owner's to free. The hrr_pbuf_put_*
 * functions grow it as needed; the hrr_pb_* ones write at a pointer into
 * room made before (hrr_pbuf_room with the size the hrr_pb_*_size
 * functions give) and return the pointer past what they wrote.
 */
#ifndef HOSTRANGE_PBUF_H
#define HOSTRANGE_PBUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/stream.h"
#include "lib/util/grow.h"

struct hrr_pbuf {
    uint8_t *p;
    size_t len, cap;
};

/* Bytes of v as a varint (1 to 10). */
static inline size_t hrr_pb_varint_size(uint64_t v)
{
    /* 7 bits a byte: (bits + 6) / 7, with bits = 1 for 0. */
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);

    return (bits * 9u + 64u) / 64u;
}

/* Bytes of varint field `field` holding v (none for 0). */
static inline size_t hrr_pb_field_size(unsigned field, uint64_t v)
{
    return v == 0 ? 0
                  : hrr_pb_varint_size((uint64_t)field << 3) +
                        hrr_pb_varint_size(v);
}

/* Bytes of length-delimited field `field` holding n bytes. */
static inline size_t hrr_pb_bytes_size(unsigned field, size_t n)
{
    return hrr_pb_varint_size((uint64_t)field << 3 | 2u) +
           hrr_pb_varint_size(n) + n;
}

/* Bytes of proto3 string field `field` holding s (none when empty). */
static inline size_t hrr_pb_string_size(unsigned field, const char *s)
{
    return s == NULL || s[0] == '\0' ? 0
                                     : hrr_pb_bytes_size(field, strlen(s));
}

/* Writes varint field `field` holding v (nothing for 0) at o. */
static inline uint8_t *hrr_pb_field(uint8_t *o, unsigned field, uint64_t v)
{
    if (v == 0)
        return o;
    o = hrp_put_varint(o, (uint64_t)field << 3);
    return hrp_put_varint(o, v);
}

/* Writes the tag and length of a length-delimited field of n bytes at o
 * (the n bytes are the caller's to write next). */
static inline uint8_t *hrr_pb_len(uint8_t *o, unsigned field, size_t n)
{
    o = hrp_put_varint(o, (uint64_t)field << 3 | 2u);
    return hrp_put_varint(o, n);
}

/* Writes length-delimited field `field` holding the n bytes at p. */
static inline uint8_t *hrr_pb_bytes(uint8_t *o, unsigned field,
                                    const void *p, size_t n)
{
    o = hrr_pb_len(o, field, n);
    if (n != 0)
        memcpy(o, p, n);
    return o + n;
}

/* Writes proto3 string field `field` holding s (nothing when empty). */
static inline uint8_t *hrr_pb_string(uint8_t *o, unsigned field,
                                     const char *s)
{
    return s == NULL || s[0] == '\0' ? o
                                     : hrr_pb_bytes(o, field, s, strlen(s));
}

/* Makes room for `more` bytes past b's end. Returns 0 or -ENOMEM. */
static inline int hrr_pbuf_room(struct hrr_pbuf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    return hru_grow(&b->p, &b->cap, b->len + more, 1, 4096);
}

static inline int hrr_pbuf_put_varint(struct hrr_pbuf *b, uint64_t v)
{
    if (hrr_pbuf_room(b, 10) != 0)
        return -ENOMEM;
    b->len = (size_t)(hrp_put_varint(b->p + b->len, v) - b->p);
    return 0;
}

/* Appends varint field `field` holding v (nothing for 0). Returns 0 or
 * -ENOMEM. */
static inline int hrr_pbuf_put_field(struct hrr_pbuf *b, unsigned field,
                                     uint64_t v)
{
    if (hrr_pbuf_room(b, 20) != 0)
        return -ENOMEM;
    b->len = (size_t)(hrr_pb_field(b->p + b->len, field, v) - b->p);
    return 0;
}

/* Appends length-delimited field `field` holding the n bytes at p.
 * Returns 0 or -ENOMEM. */
static inline int hrr_pbuf_put_bytes(struct hrr_pbuf *b, unsigned field,
                                     const void *p, size_t n)
{
    if (hrr_pbuf_room(b, 20 + n) != 0)
        return -ENOMEM;
    b->len = (size_t)(hrr_pb_bytes(b->p + b->len, field, p, n) - b->p);
    return 0;
}

#endif
