/*
 * The daemon's saved state (its state directory's `snapshot`) as a run
 * file: a run of format 2 (the keys as `hostrangectl save --unsorted`
 * writes them, in creation order, and a save's RunEnd) with a RunState
 * record right after its header (proto/hostrange.proto): the string and
 * path tables in id order with the ranks, each key's clock paths, the
 * journal generation covered and the client table. Readers of runs skip
 * that record, so a snapshot reads as any run.
 *
 * This file keeps the aggregation's part of the state (everything but
 * the client table and the generation, which are the daemon's to fill
 * and to take back): loading gives back the same string and path ids,
 * ranks and clock paths, and keys with the same events, in the same
 * order, whatever the aggregation's limits (they are lifted while the
 * file is read, as the file holds what was kept under them).
 */
#ifndef HOSTRANGE_RUNSTATE_H
#define HOSTRANGE_RUNSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "proto/hostrange.pb-c.h"

/*
 * Fills the aggregation's part of s (initialised here): its string and
 * path tables, ranks and the keys' clock paths. s points into a, which
 * must not change until hrr_runstate_clear(s). Returns 0 or -ENOMEM.
 */
int hrr_runstate_fill(struct hra_agg *a, Hostrange__RunState *s);
/* Frees what hrr_runstate_fill allocated (not s's clients). */
void hrr_runstate_clear(Hostrange__RunState *s);

/*
 * Writes a as a snapshot at path (atomically: a temporary file beside it,
 * synced and renamed over it): the header, s, the keys of a in creation
 * order, and e (its keys count set here). Returns 0, or a negative errno
 * with a one-line reason in err.
 */
int hrr_runstate_write(const char *path, struct hra_agg *a,
                       const Hostrange__RunState *s, Hostrange__RunEnd *e,
                       char *err, size_t errlen);

/* What a load found. */
struct hrr_runstate_loaded {
    uint64_t keys;     /* keys loaded */
    int complete;      /* the RunEnd was read and matched */
};

/*
 * Loads the snapshot at path into a, which is empty: its tables, then its
 * keys. *s is set (caller frees with hostrange__run_state__free_unpacked)
 * as soon as the state record has been read, also when what follows
 * fails: what was read before a damage stays loaded. *e is set (caller
 * frees with hostrange__run_end__free_unpacked) when the file was read
 * whole. Returns 0 when it was; -ENOENT when there is none; otherwise a
 * negative errno (-EINVAL: not a snapshot, damaged or truncated) with a
 * one-line reason in err.
 */
int hrr_runstate_read(const char *path, struct hra_agg *a,
                      Hostrange__RunState **s, Hostrange__RunEnd **e,
                      struct hrr_runstate_loaded *out, char *err,
                      size_t errlen);

#endif
