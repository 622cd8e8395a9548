/*
 * Batches for the daemon's tests and benchmarks, built with protobuf-c
 * directly (no client library): two label sets of node "n1" (cold, warm)
 * and two of "n2", the ranges binding.body, dispatch.call and end_to_end.
 *
 * Samples, records and lost counts are kept as plain arrays (which a test
 * may change, even to invalid values) and written as a version 2 batch by
 * db_pack: range r is context r (a range at the top of its stack), label
 * set i has number i, and the sample stream holds the samples, then the
 * records. A sample whose self time is above its inclusive time is written
 * with a child time above its inclusive time (an invalid batch). The
 * arrays grow as samples are added; db_fini frees them.
 */
#ifndef HOSTRANGE_TESTS_HARNESS_BATCH_H
#define HOSTRANGE_TESTS_HARNESS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/hostrange.pb-c.h"

struct db_batch {
    /* The header; db_pack fills in the tables and the stream. Tests may
     * change the header and the names (b.ranges, b.n_ranges, b.labels,
     * b.n_labels). */
    Hostrange__Batch b;
    Hostrange__LabelSet l[4];
    Hostrange__LabelSet *lp[4];
    char *ranges[3];
    /* Range samples. children may be left 0. */
    size_t n, cap;
    uint32_t *label, *range, *children;
    uint64_t *incl, *self;
    /* Records (range 2 unless changed). */
    size_t nrec, rcap;
    uint32_t *rec_label, *rec_range;
    uint64_t *rec_ns;
    /* Lost counts. */
    size_t nlost, lcap;
    uint32_t *lost_label;
    uint64_t *lost_count;
    /* For invalid batches: added to the event count the batch states; one
     * lost count fewer than lost labels. */
    int64_t events_delta;
    int lost_short;
};

/* A batch of client `pid` (instance derived from it) numbered seq. */
void db_init(struct db_batch *x, uint32_t pid, uint64_t seq);
void db_fini(struct db_batch *x);

void db_sample(struct db_batch *x, uint32_t label, uint32_t range,
               uint64_t incl, uint64_t self);
/* A record of range end_to_end. */
void db_record(struct db_batch *x, uint32_t label, uint64_t v);
void db_lost(struct db_batch *x, uint32_t label, uint64_t count);
/* Events in the batch: samples and records. */
size_t db_events(const struct db_batch *x);

/* The encoded batch (caller frees) and its length. */
uint8_t *db_pack(const struct db_batch *x, size_t *len);

#endif
