/*
 * The daemon's answer to a save request (SaveReply): its keys in creation
 * order, a page at a time (the cursor is the serial of the next key), each
 * a RunKey of lib/run/runkey.h, and on the last page the RunEnd: the
 * clients' counters, the calibrations, the clocks and the lost counts.
 * Pure logic on the ingest state, no I/O.
 */
#ifndef HOSTRANGE_DAEMON_SAVE_H
#define HOSTRANGE_DAEMON_SAVE_H

#include <stdint.h>

#include "daemon/ingest.h"
#include "lib/agg/agg.h"
#include "lib/run/pbuf.h"
#include "proto/hostrange.pb-c.h"

/*
 * One page of a save: the keys with a serial of at least *cursor (0 to
 * start), in creation order, until their values reach `budget` (at least
 * one key; 0: no limit), as messages in r->keys or, when `packed`, as
 * packed messages in r->packed_keys, or, when out is not NULL, as the
 * bytes of SaveReply.packed_keys fields in out (emptied first; the
 * caller's to free), each written in one pass (hrr_runput_key) where it
 * can be. Fills r (initialised here; free with hrd_save_page_free); sets
 * *cursor past the last serial sent, and *done, with r->end filled from
 * in and the calibrations, when no key is left. Returns 0 or -ENOMEM.
 */
int hrd_save_page(struct hra_agg *a, const struct hrd_ingest *in,
                    uint32_t *cursor, uint64_t budget, int packed,
                    int format, struct hrr_pbuf *out,
                    Hostrange__SaveReply *r, int *done);
void hrd_save_page_free(Hostrange__SaveReply *r);

/* The RunEnd of a save (of a snapshot too): the clients' counters (oldest
 * first), the calibrations, the clocks and the lost counts, with `keys`
 * keys. Returns it (free with hrd_save_end_free; it points into a and in)
 * or NULL without memory. */
Hostrange__RunEnd *hrd_save_end(struct hra_agg *a,
                                const struct hrd_ingest *in, uint64_t keys);
void hrd_save_end_free(Hostrange__RunEnd *e);

#endif
