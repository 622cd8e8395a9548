/*
 * Batches for the daemon's tests and benchmarks, built with protobuf-c
 * directly (no client library): two label sets of node "n1" (cold, warm)
 * and two of "n2", the ranges binding.body, dispatch.call and end_to_end,
 * and room for up to DB_MAX samples, records and lost counts. The arrays
 * grow as samples are added; db_fini frees them.
 */
#ifndef HOSTRANGE_TESTS_HARNESS_BATCH_H
#define HOSTRANGE_TESTS_HARNESS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/hostrange.pb-c.h"

struct db_batch {
    Hostrange__Batch b;
    Hostrange__LabelSet l[4];
    Hostrange__LabelSet *lp[4];
    char *ranges[3];
    size_t cap, rcap, lcap;
};

/* A batch of client `pid` (instance derived from it) numbered seq. */
void db_init(struct db_batch *x, uint32_t pid, uint64_t seq);
void db_fini(struct db_batch *x);

void db_sample(struct db_batch *x, uint32_t label, uint32_t range,
               uint64_t incl, uint64_t self);
/* A record of range end_to_end. */
void db_record(struct db_batch *x, uint32_t label, uint64_t v);
void db_lost(struct db_batch *x, uint32_t label, uint64_t count);

/* The encoded batch (caller frees) and its length. */
uint8_t *db_pack(const struct db_batch *x, size_t *len);

#endif
