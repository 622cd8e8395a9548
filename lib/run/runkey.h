/*
 * Keys of run files (proto/hostrange.proto, RunKey) from an aggregation's
 * keys. Pure logic, no I/O.
 *
 * Calling contexts: a RunKey carries its range key's path keys (agg.h) as
 * RunPath messages, coded as the key's values are.
 *
 * Saving: hrd_runkey_page produces a daemon's keys in creation order, a
 * page at a time (the cursor is the serial of the next key), each as a
 * RunKey: exact keys as their events (RunKey.events, the daemon's own
 * encoding, pointing into the key: such a message is valid until the
 * aggregation changes) or, for format 1, as sorted, delta-coded arrays;
 * histogram keys as histograms; the last page also carries the RunEnd. A
 * mirror path key (agg.h) is saved as RunPath.same_as_key.
 *
 * Loading them back into an aggregation is runload.h's.
 */
#ifndef HOSTRANGE_RUNKEY_H
#define HOSTRANGE_RUNKEY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "daemon/ingest.h"
#include "lib/run/pbuf.h"
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

#endif
