/*
 * Snapshots: the whole state of a daemon (its keys with their events or
 * histograms and calling contexts, its string and path tables with their
 * ranks, the client table with its sequence numbers and lost counts, and
 * the last journal generation it covers) as a run file with the daemon's
 * state record (lib/run/runstate.h), so that a snapshot also reads as a
 * run (`hostrangectl dump --from STATE_DIR/snapshot`).
 *
 * Snapshots written by earlier releases (record files of format versions 1
 * to 5, snapshot_legacy.c) are read, never written: a daemon that loads
 * one writes its state in the run format at once (state.c).
 *
 * Loading checks every field (ids in bounds, phases, events that decode to
 * their counts, histograms whose counts add up); at the first damaged or
 * inconsistent record it stops, keeping what came before.
 */
#ifndef HOSTRANGE_SNAPSHOT_H
#define HOSTRANGE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/ingest.h"
#include "lib/run/recfile.h"

/*
 * Writes the state of a and in as the snapshot at path (a temporary file
 * beside it, synced and renamed over it), covering journals up to
 * generation `covers`. Returns 0, or a negative errno with a one-line
 * reason in err.
 */
int hrd_snapshot_write(const char *path, struct hra_agg *a,
                       const struct hrd_ingest *in, uint64_t covers,
                       char *err, size_t errlen);

/* What a load found. */
struct hrd_snapshot_loaded {
    uint64_t covers;   /* journals up to this generation are included */
    uint64_t keys;
    uint64_t clients;
    int complete;      /* read whole, and it held together */
    int legacy;        /* of an earlier release's format */
    char why[400];     /* when not complete: what was wrong, and where */
};

/*
 * Loads the snapshot at path (of either format) into a and in, which are
 * empty. Returns 0 when it is complete; -ENOENT when there is none;
 * -EBADMSG when it is not a snapshot, or damaged or inconsistent (what was
 * read before the damage stays loaded; out->why says what and where);
 * another negative errno on a read error (out->why says it too).
 */
int hrd_snapshot_load(const char *path, struct hra_agg *a,
                      struct hrd_ingest *in, struct hrd_snapshot_loaded *out);

/* The same for a snapshot of an earlier release, opened as r
 * (HRR_SNAPSHOT_MAGIC): returns 0, -EBADMSG or another negative errno
 * (snapshot_legacy.c). */
int hrd_snapshot_legacy_load(struct hrr_recreader *r, struct hra_agg *a,
                             struct hrd_ingest *in,
                             struct hrd_snapshot_loaded *out);

#endif
