/*
 * Exact keys of run format 1 (proto/hostrange.proto, RunKey) written by
 * hand, without protobuf-c: the very bytes protobuf-c packs the message
 * hrr_runkey_from (runkey.h) fills into, for the default save and every
 * file of format 1 written from an aggregation. Each array of values is
 * decoded from the key's events, sorted, delta-coded and sized in one
 * pass over the values, then written in another, straight into the
 * output; self times that are the inclusive times (events without
 * children, no record) are sorted and coded once and their bytes copied,
 * as are a mirror path's (agg.h), which are its key's. Histogram keys and
 * paths are left to protobuf-c. Pure logic, no I/O.
 */
#ifndef HOSTRANGE_RUNPUT_H
#define HOSTRANGE_RUNPUT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "lib/run/pbuf.h"

/* Scratch memory of hrr_runput_key, kept from key to key (zeroed to
 * start; hrr_runput_tmp_fini frees it). */
struct hrr_runput_path;
struct hrr_runput_tmp {
    uint64_t *v;
    size_t cap;
    struct hrr_runput_path *paths;
    size_t pcap;
};

void hrr_runput_tmp_fini(struct hrr_runput_tmp *t);

/*
 * Appends exact key k of a, coded for run format 1, to out: the bytes
 * protobuf-c packs hrr_runkey_from's message into, written in one pass
 * (each array sorted and coded once; a mirror path's arrays are a copy of
 * its key's bytes), as length-delimited field `field` of an enclosing
 * message, or bare for field 0. Returns 0, 1 for a key it does not write
 * (a histogram key or path: nothing written), or -ENOMEM.
 */
int hrr_runput_key(struct hra_agg *a, const struct hra_key *k,
                   unsigned field, struct hrr_pbuf *out,
                   struct hrr_runput_tmp *t);

/* The bytes of scratch hrr_runput_key takes to write key k (0 for a key
 * it does not write): its values decoded, and room to sort them. */
size_t hrr_runput_scratch(const struct hra_key *k);

#endif
