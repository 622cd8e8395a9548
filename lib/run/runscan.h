/*
 * A packed RunKey (proto/hostrange.proto) read in place, for hostrangectl
 * merge to copy a key through to its output as its bytes, without
 * unpacking, decoding, sorting and coding its values again. Pure logic, no
 * I/O.
 *
 * hrr_runscan_key recognises the keys it can vouch for: exact keys coded
 * for one run format (1: sorted, delta-coded arrays; 2: events and
 * same_as_key paths), in the canonical layout protobuf-c writes (fields in
 * ascending order, each once, no zero scalar written, no unknown field,
 * names of printable ASCII), whose every value checks out as
 * hrr_runload_key checks it (counts, sums within 2^64, self times not
 * above inclusive ones, every event entry valid) and whose paths are kept
 * by a load as they are (no self time to clamp, no repeated path). Such a
 * key, written with only its ranks changed, is what loading it into an
 * aggregation and saving that again writes. Anything else is "not
 * simple", never an error: the caller then unpacks the key and loads it as
 * before, which checks it and names what is wrong.
 */
#ifndef HOSTRANGE_RUNSCAN_H
#define HOSTRANGE_RUNSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/keyfields.h"

/* Paths a simple key has at most (more: not simple). */
#define HRR_RUNSCAN_PATHS 64u

/* The values of a simple key of run format 1, or of one of its paths:
 * its sorted, delta-coded arrays (packed, in the message; NULL when
 * empty) and counts. */
struct hrr_runscan_values {
    const uint8_t *incl, *self;
    size_t li, ls;
    /* Its counters (lib/agg/keyfields.h; a path's: 0 where it has none). */
    HRA_KEY_COUNTER_FIELDS
    size_t names_end; /* a path's: its names are its first names_end bytes */
};

struct hrr_runscan {
    /* node id, operator, backend, range: in the message, not terminated */
    const uint8_t *s[4];
    uint32_t n[4];
    uint32_t phase, node_rank, range_rank;
    uint64_t pairs, records;
    /* The bytes of the ranks (node_rank, range_rank), or where they go: a
     * copy is the message's [0, rank_from), the new ranks, [rank_to,
     * len). */
    size_t rank_from, rank_to;
    /* Its paths: each RunPath message's bytes. */
    uint32_t npaths;
    const uint8_t *path[HRR_RUNSCAN_PATHS];
    size_t path_len[HRR_RUNSCAN_PATHS];
    /* A simple key's values (hrr_runscan_key). */
    struct hrr_runscan_values v;
};

/*
 * Reads the packed RunKey of len bytes at p into *s (pointing into p).
 * Returns 1 when the key is simple for run format `format` (see above), 0
 * when it is not (*s is then meaningless).
 */
int hrr_runscan_key(const uint8_t *p, size_t len, int format,
                    struct hrr_runscan *s);

/*
 * Reads the identity of a packed RunKey of len bytes from its first avail
 * bytes at p (node_id to children: names, phase, ranks, counts; rank_from and
 * rank_to too). Returns 1 when they are whole there, in the layout a
 * simple key has, and check out; 0 otherwise. It says nothing of the rest:
 * only hrr_runscan_key says a key is simple.
 */
int hrr_runscan_head(const uint8_t *p, size_t avail, size_t len,
                     struct hrr_runscan *s);

/* The values of a simple key's path i. */
void hrr_runscan_path_values(const struct hrr_runscan *s, uint32_t i,
                             struct hrr_runscan_values *v);

/* The names of a simple key's path i, outermost first, into names and
 * lens (HRA_MAX_DEPTH_LIMIT of each); returns the depth. */
uint32_t hrr_runscan_path_names(const struct hrr_runscan *s, uint32_t i,
                                const uint8_t **names, uint32_t *lens);

/* Writes the node_rank and range_rank fields of a RunKey with these ranks
 * (each omitted when 0) to out (at least 12 bytes); returns the bytes
 * written. */
size_t hrr_runscan_put_ranks(uint8_t *out, uint32_t node_rank,
                             uint32_t range_rank);

#endif
