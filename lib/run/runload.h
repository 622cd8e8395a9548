/*
 * Keys of run files (proto/hostrange.proto, RunKey) back into an
 * aggregation. Pure logic, no I/O. Calling contexts: loading interns the
 * paths of a key's RunPath messages and adds their values to the path keys
 * (a path beyond the depth cap or the path table's room is counted and
 * skipped, as in ingest).
 *
 * Loading (hostrangectl merge, dump --from and diff; hostranged --load): a
 * hrr_runload adds the keys of one or more runs to an aggregation, checking
 * every field first (a bad key changes nothing). A key gets the file's
 * events added: coded events as they are while the key stays exact below
 * its cap, else one by one (so the aggregation's exact cap and histograms
 * apply as to arriving samples), a histogram by adding its buckets (the
 * key becomes a histogram first). A key whose one path is same_as_key
 * keeps (or gets) a mirror path key when it has no other path. After each key
 * the aggregation's memory budget is enforced (hra_enforce): over
 * max_bytes, its largest keys become histograms. Ranks: a node id or range
 * name is ranked by the first run that has it and its rank there; they are
 * assigned when the last run has been added (hrr_runload_finish).
 */
#ifndef HOSTRANGE_RUNLOAD_H
#define HOSTRANGE_RUNLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "proto/hostrange.pb-c.h"

struct hrr_runload {
    struct hra_agg *a;
    uint32_t run;        /* the run being added, from 0 */
    uint64_t *first;     /* string id - 1 -> (run << 32 | rank) + 1 */
    uint32_t cap;
    uint64_t keys;       /* keys added */
};

/* Starts loading runs into a, within a's limits (a daemon's --load). */
void hrr_runload_init(struct hrr_runload *l, struct hra_agg *a);
/* The same for the readers of run files (dump --from, plot, merge): lifts
 * a's limits on exact values, path depth and number of paths, so that they
 * keep all a file holds (what its daemon or merge kept). a's byte budget
 * stays the caller's. */
void hrr_runload_init_reader(struct hrr_runload *l, struct hra_agg *a);
void hrr_runload_fini(struct hrr_runload *l);

/*
 * Adds one RunKey to the aggregation. Returns 0; -EINVAL when the key does
 * not check out (why says what; nothing was added); -ENOMEM.
 */
int hrr_runload_key(struct hrr_runload *l, const Hostrange__RunKey *m,
                    char *why, size_t whylen);

/* Notes node id `node` and range name `range` (string ids) as seen in
 * the run being added with these ranks there, as adding a key of theirs
 * does (for a key added otherwise). Returns 0 or -ENOMEM. */
int hrr_runload_note(struct hrr_runload *l, uint32_t node, uint32_t node_rank,
                     uint32_t range, uint32_t range_rank);

/* Adds a run's lost counts (RunEnd.lost) and moves on to the next run.
 * Returns 0 or -ENOMEM. */
int hrr_runload_end(struct hrr_runload *l, const Hostrange__RunEnd *e);

/* Ranks the node ids and range names that have none. Returns 0 or
 * -ENOMEM. */
int hrr_runload_finish(struct hrr_runload *l);

#endif
