/*
 * Ingest: decoding, validation and aggregation of client batches, and the
 * table of clients. Pure logic: bytes in, an acknowledgement out.
 *
 * A client is identified by (pid, instance). Its batches are numbered 1, 2,
 * 3, ...; a batch whose number is not above the highest seen is a duplicate
 * (a resend whose first acknowledgement was lost): it is acknowledged again
 * and not aggregated. A jump in numbers is counted as a gap.
 *
 * A batch is validated completely before any of it is aggregated, so a bad
 * batch changes nothing but the rejection counters.
 */
#ifndef HOSTRANGE_INGEST_H
#define HOSTRANGE_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/agg.h"

enum hrd_reject {
    HRD_REJECT_MALFORMED,  /* not a Batch */
    HRD_REJECT_VERSION,    /* another protocol version */
    HRD_REJECT_OVERSIZE,   /* over HRP_MAX_INGEST_BYTES */
    HRD_REJECT_ARRAYS,     /* parallel arrays of unequal length */
    HRD_REJECT_INDEX,      /* a label or range index out of bounds */
    HRD_REJECT_PHASE,      /* a phase that is neither cold nor warm */
    HRD_REJECT_STRING,     /* an empty or overlong string */
    HRD_REJECT_VALUE,      /* self time above inclusive time */
    HRD_REJECT_NOMEM,      /* the daemon ran out of memory */
    HRD_REJECT_COUNT
};

struct hrd_client {
    uint32_t pid;
    uint64_t instance;
    char *label;
    char *clock;
    uint64_t max_seq;
    uint64_t batches;
    uint64_t events;
    uint64_t duplicates;
    uint64_t gaps;
    uint64_t lost;
    uint64_t out_of_order;
    uint64_t open_at_window_end;
    uint64_t foreign_thread;
    uint64_t label_in_window;
    uint64_t too_deep;
    struct hrd_client *next;
};

struct hrd_ingest {
    struct hrd_agg *agg;
    struct hrd_client *clients; /* newest first */
    uint64_t nclients;
    uint64_t rejected[HRD_REJECT_COUNT];
};

void hrd_ingest_init(struct hrd_ingest *in, struct hrd_agg *agg);
void hrd_ingest_fini(struct hrd_ingest *in);

const char *hrd_reject_name(enum hrd_reject r);

/*
 * Handles one ingest message: decodes, validates, aggregates and answers.
 * Writes a newly allocated Ack to *ack (*ack_len; caller frees), or NULL when
 * NULL (with *ack_len 0) when no memory was left for it. Returns
 * HRD_INGEST_OK, HRD_INGEST_DUPLICATE, or HRD_INGEST_REJECTED with the
 * reason in *reason (already counted).
 */
enum hrd_ingest_result {
    HRD_INGEST_OK,
    HRD_INGEST_DUPLICATE,
    HRD_INGEST_REJECTED
};

enum hrd_ingest_result hrd_ingest_handle(struct hrd_ingest *in,
                                         const uint8_t *msg, size_t len,
                                         uint8_t **ack, size_t *ack_len,
                                         enum hrd_reject *reason);

#endif
