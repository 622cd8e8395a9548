/*
 * Snapshots: the whole state of a daemon (strings with their ranks, keys
 * with their samples or histograms, the client table with its sequence
 * numbers and lost counts) as a record file (recfile.h).
 *
 * Records, all little-endian: one 'H' (format version, the last journal
 * generation the snapshot covers, rank counters, and how many strings,
 * keys and clients follow), 'S' records of strings in id order, 'C' records
 * of clients, 'K' records of keys (with their sums of children from format
 * version 2 on; version 1 still loads), from version 4 on 'P' records of
 * the path table and 'Q' records of path keys (agg.h; see snapshot.c), and
 * one 'E' that repeats the counts. A snapshot without its 'E' is truncated.
 *
 * Loading checks every field as ingest checks a batch (ids in bounds,
 * phases, exact encodings that decode to their counts, sorted histogram
 * buckets whose counts add up); at the first damaged or inconsistent record
 * it stops, keeping what came before.
 */
#ifndef HOSTRANGE_SNAPSHOT_H
#define HOSTRANGE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/ingest.h"
#include "lib/run/recfile.h"

/*
 * Writes the state of a and in to f (opened on an empty file, buffered
 * with hrd_recfile_put), covering journals up to generation `covers`, and
 * flushes it. Returns 0 or a negative errno.
 */
int hrd_snapshot_write(struct hrd_recfile *f, const struct hrd_agg *a,
                       const struct hrd_ingest *in, uint64_t covers);

/* What a load found. */
struct hrd_snapshot_load {
    uint64_t covers;   /* journals up to this generation are included */
    uint64_t keys;
    uint64_t clients;
    int complete;      /* the 'E' record was read and matched */
    char why[160];     /* when not complete: what was wrong, and where */
};

/*
 * Loads a snapshot from r into a and in, which are empty. Returns 0 when it
 * is complete; -EBADMSG when damaged or inconsistent (what was read before
 * the damage stays loaded; out->why says what and where); another negative
 * errno on a read error.
 */
int hrd_snapshot_load(struct hrd_recreader *r, struct hrd_agg *a,
                      struct hrd_ingest *in, struct hrd_snapshot_load *out);

#endif
