/*
 * Decoding a message without mistaking a lack of memory for damage.
 * protobuf-c's unpack returns NULL both for bytes that do not decode and
 * when an allocation fails; hrp_unpack tells the two apart, so that a
 * reader can say "out of memory" (and a daemon "send it again") where it
 * would otherwise say "damaged" (and drop what was fine). Its allocations
 * are malloc's: what it decodes is freed with free_unpacked(x, NULL).
 */
#ifndef HOSTRANGE_PROTO_UNPACK_H
#define HOSTRANGE_PROTO_UNPACK_H

#include <errno.h>
#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdlib.h>

/* An allocator that notes a failed allocation. */
struct hrp_unpack_alloc {
    ProtobufCAllocator allocator;
    int out_of_memory;
};

static inline void *hrp_unpack_malloc(void *data, size_t size)
{
    void *p = malloc(size);

    if (p == NULL)
        ((struct hrp_unpack_alloc *)data)->out_of_memory = 1;
    return p;
}

static inline void hrp_unpack_free(void *data, void *p)
{
    (void)data;
    free(p);
}

/*
 * The message of descriptor d that the len bytes at p hold (cast it to
 * its type), with *rc 0; or NULL with *rc -EINVAL (the bytes do not
 * decode) or -ENOMEM (memory ran out decoding them).
 */
static inline void *hrp_unpack(const ProtobufCMessageDescriptor *d,
                               size_t len, const uint8_t *p, int *rc)
{
    struct hrp_unpack_alloc a = {
        { hrp_unpack_malloc, hrp_unpack_free, NULL }, 0
    };
    ProtobufCMessage *m;

    a.allocator.allocator_data = &a;
    m = protobuf_c_message_unpack(d, &a.allocator, len, p);
    *rc = m != NULL ? 0 : a.out_of_memory ? -ENOMEM : -EINVAL;
    return m;
}

#endif
