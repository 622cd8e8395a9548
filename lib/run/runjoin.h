/*
 * Joining the records of one key found in several run files, all simple
 * keys of run format 1 (runscan.h), into one packed RunKey without an
 * aggregation: their sorted, delta-coded arrays are merged as they are
 * read (a k-way merge of sorted arrays, each value coded again as it goes,
 * by hand rather than by protobuf-c's two passes), their counts added, and
 * their calling contexts joined path by path (paths in the order they
 * first appear). The message is the one loading every record into an
 * aggregation and saving it writes (fields in protobuf-c's order, no zero
 * written), which every reader of run format 1 reads. Pure logic, no I/O.
 */
#ifndef HOSTRANGE_RUNJOIN_H
#define HOSTRANGE_RUNJOIN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/run/pbuf.h"
#include "lib/run/runscan.h"

/* One record to join: a simple key of run format 1 (scanned into s), the
 * len bytes at p, and the ids of its paths (distinct), in its order. */
struct hrr_runjoin_in {
    const uint8_t *p;
    size_t len;
    struct hrr_runscan s;
    uint32_t path_id[HRR_RUNSCAN_PATHS];
};

/*
 * Joins in[0..n) (n >= 1, one key's, in the inputs' order) into out
 * (emptied first; its memory is the caller's to free), with these ranks.
 * Returns 0 or -ENOMEM.
 */
int hrr_runjoin(const struct hrr_runjoin_in *in, size_t n,
                uint32_t node_rank, uint32_t range_rank,
                struct hrr_pbuf *out);

#endif
