/*
 * Decoding a message without mistaking a lack of memory for damage.
 * protobuf-c's unpack returns NULL both for bytes that do not decode and
 * when an allocation fails; the allocator here notes the second, so that a
 * reader can say "out of memory" (and a daemon "send it again") where it
 * would otherwise say "damaged" (and drop what was fine). Its allocations
 * are malloc's: what it unpacks is freed with free_unpacked(x, NULL).
 */
#ifndef HOSTRANGE_PROTO_UNPACK_H
#define HOSTRANGE_PROTO_UNPACK_H

#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>

struct hrp_unpack {
    ProtobufCAllocator allocator; /* pass &u.allocator to unpack */
    int out_of_memory;            /* an allocation failed */
};

static inline void *hrp_unpack_alloc(void *data, size_t size)
{
    void *p = malloc(size);

    if (p == NULL)
        ((struct hrp_unpack *)data)->out_of_memory = 1;
    return p;
}

static inline void hrp_unpack_free(void *data, void *p)
{
    (void)data;
    free(p);
}

static inline void hrp_unpack_init(struct hrp_unpack *u)
{
    u->allocator.alloc = hrp_unpack_alloc;
    u->allocator.free = hrp_unpack_free;
    u->allocator.allocator_data = u;
    u->out_of_memory = 0;
}

#endif
