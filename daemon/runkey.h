/*
 * Keys of run files (proto/hostrange.proto, RunKey): from an aggregation's
 * keys, and back into an aggregation. Pure logic, no I/O.
 *
 * Calling contexts: a RunKey carries its range key's path keys (agg.h) as
 * RunPath messages, coded as the key's values are; loading interns their
 * paths and adds their values to the path keys (a path beyond the depth
 * cap or the path table's room is counted and skipped, as in ingest).
 *
 * Saving: hrd_runkey_page produces a daemon's keys in creation order, a
 * page at a time (the cursor is the serial of the next key), each as a
 * RunKey: exact keys as their events (RunKey.events, the daemon's own
 * encoding, pointing into the key: such a message is valid until the
 * aggregation changes) or, for format 1, as sorted, delta-coded arrays;
 * histogram keys as histograms; the last page also carries the RunEnd. A
 * mirror path key (agg.h) is saved as RunPath.same_as_key.
 *
 * Loading (hostrangectl merge, dump --from and diff; hostranged --load): a
 * hrd_runload adds the keys of one or more runs to an aggregation, checking
 * every field first (a bad key changes nothing). A key gets the file's
 * events added: coded events as they are while the key stays exact below
 * its cap, else one by one (so the aggregation's exact cap and histograms
 * apply as to arriving samples), a histogram by adding its buckets (the
 * key becomes a histogram first). A key whose one path is same_as_key
 * keeps (or gets) a mirror path key when it has no other path. After each key
 * the aggregation's memory budget is enforced (hrd_agg_enforce): over
 * max_bytes, its largest keys become histograms. Ranks: a node id or range
 * name is ranked by the first run that has it and its rank there; they are
 * assigned when the last run has been added (hrd_runload_finish).
 */
#ifndef HOSTRANGE_RUNKEY_H
#define HOSTRANGE_RUNKEY_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/agg.h"
#include "daemon/ingest.h"
#include "daemon/pbuf.h"
#include "proto/hostrange.pb-c.h"

/* The run file format written (RunHeader.format, proto/hostrange.proto),
 * and the first that holds exact keys as events. */
#define HRD_RUN_FORMAT 2u
#define HRD_RUN_FORMAT_EVENTS 2

/*
 * Fills m (initialised here) from key k of a, coded for run format
 * `format` (1, or HRD_RUN_FORMAT). The arrays and histograms it points to
 * are allocated; hrd_runkey_clear frees them (strings and events are
 * borrowed from a). Returns 0 or -ENOMEM.
 */
int hrd_runkey_from(struct hrd_agg *a, const struct hrd_key *k, int format,
                    Hostrange__RunKey *m);
/* The same without the key's calling contexts (RunKey.paths). */
int hrd_runkey_from_range(struct hrd_agg *a, const struct hrd_key *k,
                          int format, Hostrange__RunKey *m);
void hrd_runkey_clear(Hostrange__RunKey *m);

/*
 * One page of a save: the keys with a serial of at least *cursor (0 to
 * start), in creation order, until their values reach `budget` (at least
 * one key; 0: no limit), as messages in r->keys or, when `packed`, as
 * packed messages in r->packed_keys, or, when out is not NULL, as the
 * bytes of SaveReply.packed_keys fields in out (emptied first; the
 * caller's to free), each written in one pass (hrd_runput_key) where it
 * can be. Fills r (initialised here; free with hrd_runkey_page_free); sets
 * *cursor past the last serial sent, and *done, with r->end filled from
 * in and the calibrations, when no key is left. Returns 0 or -ENOMEM.
 */
int hrd_runkey_page(struct hrd_agg *a, const struct hrd_ingest *in,
                    uint32_t *cursor, uint64_t budget, int packed,
                    int format, struct hrd_pbuf *out,
                    Hostrange__SaveReply *r, int *done);
void hrd_runkey_page_free(Hostrange__SaveReply *r);

struct hrd_runload {
    struct hrd_agg *a;
    uint32_t run;        /* the run being added, from 0 */
    uint64_t *first;     /* string id - 1 -> (run << 32 | rank) + 1 */
    uint32_t cap;
    uint64_t keys;       /* keys added */
};

void hrd_runload_init(struct hrd_runload *l, struct hrd_agg *a);
void hrd_runload_fini(struct hrd_runload *l);

/*
 * Adds one RunKey to the aggregation. Returns 0; -EINVAL when the key does
 * not check out (why says what; nothing was added); -ENOMEM.
 */
int hrd_runload_key(struct hrd_runload *l, const Hostrange__RunKey *m,
                    char *why, size_t whylen);

/* Notes node id `node` and range name `range` (string ids) as seen in
 * the run being added with these ranks there, as adding a key of theirs
 * does (for a key added otherwise). Returns 0 or -ENOMEM. */
int hrd_runload_note(struct hrd_runload *l, uint32_t node, uint32_t node_rank,
                     uint32_t range, uint32_t range_rank);

/* Adds a run's lost counts (RunEnd.lost) and moves on to the next run.
 * Returns 0 or -ENOMEM. */
int hrd_runload_end(struct hrd_runload *l, const Hostrange__RunEnd *e);

/* Ranks the node ids and range names that have none. Returns 0 or
 * -ENOMEM. */
int hrd_runload_finish(struct hrd_runload *l);

#endif
