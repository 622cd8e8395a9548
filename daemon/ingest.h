/*
 * Ingest: decoding and validation of client batches, which lib/agg then
 * aggregates (hra_feed), the table of clients and the acknowledgement.
 * Pure logic: bytes in, an acknowledgement out.
 *
 * A client is identified by (pid, instance). Its batches are numbered 1, 2,
 * 3, ...; a batch whose number is not above the highest seen is a duplicate
 * (a resend whose first acknowledgement was lost): it is acknowledged again
 * and not aggregated. A jump in numbers is counted as a gap.
 *
 * A batch is validated completely before any of it is aggregated, so a bad
 * batch changes nothing but the rejection counters. A valid new batch is
 * handed to the journal hook (when set) before it is aggregated; when the
 * hook fails, the batch is neither aggregated nor counted as seen, and the
 * client is told to send it again (Ack status RETRY).
 *
 * Clients report cumulative lost-event counts per label set; the latest
 * count of each (client, label set) is kept, and their sum per node id is
 * kept in the aggregation (hra_lost_add) for the report.
 */
#ifndef HOSTRANGE_INGEST_H
#define HOSTRANGE_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "proto/hostrange.pb-c.h"

enum hrd_reject {
    HRD_REJECT_MALFORMED,  /* not a Batch */
    HRD_REJECT_VERSION,    /* another protocol version */
    HRD_REJECT_OVERSIZE,   /* over HRP_MAX_INGEST_BYTES */
    HRD_REJECT_ARRAYS,     /* parallel arrays of unequal length, or a
                              stream whose events are not as many as the
                              batch says */
    HRD_REJECT_INDEX,      /* a label or range index out of bounds */
    HRD_REJECT_PHASE,      /* a phase that is neither cold nor warm */
    HRD_REJECT_STRING,     /* an empty or overlong string */
    HRD_REJECT_VALUE,      /* self time above inclusive time */
    HRD_REJECT_NOMEM,      /* the daemon ran out of memory */
    HRD_REJECT_SEQUENCE,   /* sequence number 0 */
    HRD_REJECT_MEMORY,     /* over the memory budget, nothing to compact */
    HRD_REJECT_STREAM,     /* a damaged sample stream */
    HRD_REJECT_COUNT
};

/* The latest cumulative lost count a client reported for a label set. */
struct hrd_lost {
    uint32_t node, op, backend, phase; /* string ids, HRP_PHASE_* */
    uint64_t count;
};

struct hrd_client {
    uint32_t pid;
    uint64_t instance;
    char *label;
    char *clock;
    char *clock_order;    /* as the latest batch said; NULL before */
    double clock_step_ns;
    unsigned clock_path;  /* HRP_PATH_* as the latest batch said, 0: not
                             known */
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
    uint64_t rejected;        /* its batches rejected as invalid */
    uint64_t contexts_dropped; /* calling contexts it could not keep */
    uint64_t marks;           /* marks it counted */
    /* As its latest batch said: scopes of refused range names, windows of
     * refused labels, contexts kept under "(contexts full)", names cut. */
    uint64_t bad_name, bad_label, contexts_full, names_cut;
    int finished;             /* a batch carried its final counters (a
                                 client loaded from a snapshot of the old
                                 format counts as finished) */
    uint64_t refused;         /* events of its refused batches, counted
                                 lost under their node ids here */
    uint64_t refused_seq;     /* the highest seq of those */
    /* The first node ids of its batches (string ids), for naming an
     * unfinished client. */
#define HRD_CLIENT_NODES 4
    uint32_t nodes[HRD_CLIENT_NODES];
    uint32_t nnodes;
    struct hrd_lost *lost_by; /* per label set, in first-reported order */
    uint32_t nlost, caplost;
    struct hrd_client *next;
};

/*
 * The journal hook: keeps a valid new batch (its bytes as received) before
 * it is aggregated. Returns 0, or a negative errno when it could not.
 */
typedef int (*hrd_journal_fn)(void *ctx, const uint8_t *msg, size_t len);

struct hrd_ingest {
    struct hra_agg *agg;
    struct hrd_client *clients; /* newest first */
    uint64_t nclients;
    struct hrd_client **cindex; /* open addressing on (pid, instance) */
    uint64_t cslots;
    uint64_t rejected[HRD_REJECT_COUNT];
    uint64_t retries;           /* batches answered RETRY */
    uint64_t bytes;             /* bytes of the batches taken */
    /* Events of refused batches counted lost under their node ids, in all
     * and by the last call of hrd_ingest_handle (0 when it refused none or
     * could not read them). */
    uint64_t refused_events;
    uint64_t refused_memory_events; /* those refused for the budget */
    uint64_t last_refused;
    int last_counted;           /* the last refused batch's events are
                                   counted (now or when first refused) */
    hrd_journal_fn journal;     /* NULL: none */
    void *journal_ctx;
    int replaying;              /* set while a journal is replayed */
    /* Feeding batches into agg (owned; made on the first batch). */
    struct hra_feed *feed;
};

void hrd_ingest_init(struct hrd_ingest *in, struct hra_agg *agg);
void hrd_ingest_fini(struct hrd_ingest *in);

const char *hrd_reject_name(enum hrd_reject r);

/*
 * Handles one ingest message: decodes, validates, journals, aggregates and
 * answers. Writes a newly allocated Ack to *ack (*ack_len; caller frees), or
 * NULL (with *ack_len 0) when no memory was left for it. Returns
 * HRD_INGEST_OK, HRD_INGEST_DUPLICATE, HRD_INGEST_REJECTED with the reason
 * in *reason (already counted), or HRD_INGEST_RETRY when the journal hook
 * failed.
 */
enum hrd_ingest_result {
    HRD_INGEST_OK,
    HRD_INGEST_DUPLICATE,
    HRD_INGEST_REJECTED,
    HRD_INGEST_RETRY
};

enum hrd_ingest_result hrd_ingest_handle(struct hrd_ingest *in,
                                         const uint8_t *msg, size_t len,
                                         uint8_t **ack, size_t *ack_len,
                                         enum hrd_reject *reason);

/* The client (pid, instance), or NULL when it has not been seen. */
struct hrd_client *hrd_ingest_client_find(const struct hrd_ingest *in,
                                          uint32_t pid, uint64_t instance);

/*
 * Finds or adds the client (pid, instance).
 * Returns it, or NULL on ENOMEM. label and clock are copied.
 */
struct hrd_client *hrd_ingest_client(struct hrd_ingest *in, uint32_t pid,
                                     uint64_t instance, const char *label,
                                     const char *clock);

/* Fills x with the counters of client c, for stats, run files and the
 * daemon's snapshot (x's strings are c's: valid while c lives; node_ids
 * is left empty). */
void hrd_ingest_client_stats(Hostrange__ClientStats *x,
                             const struct hrd_client *c);

/* Points x->node_ids at nodes (HRD_CLIENT_NODES entries), filled with the
 * names of c's first node ids, as a's string table holds them. */
void hrd_ingest_client_nodes(Hostrange__ClientStats *x,
                             const struct hrd_client *c,
                             const struct hra_agg *a, char **nodes);

/*
 * The inverse of hrd_ingest_client_stats and hrd_ingest_client_nodes, for
 * a client loaded from a snapshot: sets every field of c that x holds
 * besides pid, instance, label and clock (which hrd_ingest_client took),
 * node ids through in's string table. Returns 0, -EBADMSG when a field
 * does not hold together, or -ENOMEM.
 */
int hrd_ingest_client_restore(struct hrd_ingest *in, struct hrd_client *c,
                              const Hostrange__ClientStats *x);

/* Sets the lost count of a client for a label set (string ids), keeping
 * the per-node sums of the aggregation. Returns 0 or -ENOMEM. */
int hrd_ingest_lost_set(struct hrd_ingest *in, struct hrd_client *c,
                        uint32_t node, uint32_t op, uint32_t backend,
                        uint32_t phase, uint64_t count);

#endif
