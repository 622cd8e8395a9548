/*
 * Keys of run files (proto/hostrange.proto, RunKey) from an aggregation's
 * keys. Pure logic, no I/O.
 *
 * Calling contexts: a RunKey carries its range key's path keys (agg.h) as
 * RunPath messages, coded as the key's values are.
 *
 * Saving: the daemon's save (daemon/save.h) sends its keys in creation
 * order, a page at a time, each as a RunKey made here: exact keys as their events (RunKey.events, the daemon's own
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
#include "lib/run/pbuf.h"
#include "proto/hostrange.pb-c.h"

/* The run file formats (RunHeader.format, proto/hostrange.proto): SORTED,
 * what save and merge write by default (each key's values sorted and
 * delta-coded); EVENTS, what they write with --unsorted, the first that
 * holds exact keys as their events; NEWEST, the newest this version
 * reads. */
#define HRR_FORMAT_SORTED 1
#define HRR_FORMAT_EVENTS 2
#define HRR_FORMAT_NEWEST HRR_FORMAT_EVENTS

/*
 * Fills m (initialised here) from key k of a, coded for run format
 * `format` (HRR_FORMAT_SORTED or _EVENTS). The arrays and histograms it points to
 * are allocated; hrr_runkey_clear frees them (strings and events are
 * borrowed from a). Returns 0 or -ENOMEM.
 */
int hrr_runkey_from(struct hra_agg *a, const struct hra_key *k, int format,
                    Hostrange__RunKey *m);
/* The same without the key's calling contexts (RunKey.paths). */
int hrr_runkey_from_range(struct hra_agg *a, const struct hra_key *k,
                          int format, Hostrange__RunKey *m);
void hrr_runkey_clear(Hostrange__RunKey *m);

#endif
