/*
 * Batch encoding: pure logic, no I/O.
 *
 * The shipper appends the samples of the rings to an encoder one at a time
 * (hr__enc_sample and friends), which writes them straight into the batch's
 * sample stream (proto/stream.h) and numbers the label sets and calling
 * contexts they use in the batch (0, 1, 2, ...) as it meets them, through
 * maps indexed by the process's own ids. A context brings its enclosing
 * contexts and its range name along. Sealing (hr__enc_seal) packs the
 * stream and the tables into a protobuf Batch, and empties the encoder for
 * the next batch.
 *
 * Values arrive in nanoseconds. The library's own work (stalls, wake-ups)
 * is not sampled: it is summed per label set and travels in the batch's
 * internal_* arrays.
 */
#ifndef HOSTRANGE_ENCODE_H
#define HOSTRANGE_ENCODE_H

#include "proto/stream.h"

#include <stddef.h>
#include <stdint.h>

/* A batch is sealed when it holds this many events, or when its stream and
 * tables reach HR__BATCH_BYTES. */
#define HR__BATCH_EVENTS 65536u
#define HR__BATCH_BYTES (512u * 1024u)

/* How to name ids (the client's intern tables, or a test's). */
struct hr__namer {
    const char *(*range_name)(uint32_t id);
    int (*label_get)(uint32_t id, const char **node_id, const char **op,
                     const char **backend, unsigned *phase);
    /* The parent context and range id of context `ctx`. */
    void (*ctx_get)(uint32_t ctx, uint32_t *parent, uint32_t *range);
};

/* Process ids -> batch numbers, valid where the stamp is the batch's. */
struct hr__idmap {
    uint32_t *local;
    uint32_t *stamp;
    uint32_t cap;  /* ids below cap have a slot */
    uint32_t *ids; /* batch number -> process id */
    uint32_t n, idcap;
};

struct hr__enc {
    const struct hr__namer *namer;
    uint8_t *buf; /* the sample stream */
    size_t len, cap;
    size_t table_bytes; /* an estimate of the tables' encoded size */
    uint32_t events;
    uint32_t stamp;
    uint32_t label;     /* process id of the current label set, 0: none */
    uint32_t label_local;
    struct hr__idmap ctx, lab;
    /* Per batch label number: its events, and the library's own work. */
    uint64_t *events_by, *stall_n, *stall_ns, *wake_n, *wake_ns;
    uint32_t internal_cap;
    int failed; /* an allocation failed: the batch is incomplete */
};

/* What a batch says of its process, besides the samples. */
struct hr__batch_header {
    uint32_t pid;
    uint64_t instance;
    const char *process_label;
    uint64_t seq;
    const char *clock;
    const char *clock_order;
    double clock_step_ns;
    const char *clock_path;
    uint64_t lost_events;
    uint64_t out_of_order;
    uint64_t open_at_window_end;
    uint64_t foreign_thread;
    uint64_t label_in_window;
    uint64_t too_deep;
    uint64_t contexts_dropped;
    uint64_t bad_name;
    uint64_t bad_label;
    uint64_t contexts_full;
    uint64_t names_cut;
    int final_counters; /* sent as the process exits */
    uint64_t marks;
    /* Cumulative lost events per label set: process label ids and counts,
     * n_lost each. */
    const uint32_t *lost_ids;
    const uint64_t *lost_counts;
    uint32_t n_lost;
};

/* Returns 0 or -ENOMEM. */
int hr__enc_init(struct hr__enc *e, const struct hr__namer *namer);
void hr__enc_fini(struct hr__enc *e);
/* Forgets the batch being built. */
void hr__enc_clear(struct hr__enc *e);

static inline int hr__enc_full(const struct hr__enc *e)
{
    return e->events >= HR__BATCH_EVENTS ||
           e->len + e->table_bytes >= HR__BATCH_BYTES;
}

/*
 * Appends a range sample of context ctx under label set `label` (process
 * ids); the caller makes sure the encoder is not full (hr__enc_full)
 * first: its inclusive ns, the ns of its direct children (not above it),
 * and its numbers of direct children and of all descendants. A record has
 * nchild == ndesc == child_ns == 0 and record != 0. Returns 0, or -ENOMEM
 * (the sample is then not added).
 */
int hr__enc_sample(struct hr__enc *e, uint32_t label, uint32_t ctx,
                   uint64_t incl_ns, uint64_t child_ns, uint32_t nchild,
                   uint32_t ndesc, int record);

/*
 * The common case of hr__enc_sample, inline: a range sample without
 * children (a leaf) whose label set is the batch's current one and whose
 * context the batch already has. Returns 1 when it was added, 0 when the
 * caller must call hr__enc_sample (nothing was done). The caller makes
 * sure the encoder is not full, as for hr__enc_sample.
 */
static inline int hr__enc_leaf(struct hr__enc *e, uint32_t label,
                               uint32_t ctx, uint64_t incl_ns)
{
    uint8_t *p;
    uint32_t c;

    if (label != e->label || label == 0 || ctx >= e->ctx.cap ||
        e->ctx.stamp[ctx] != e->stamp)
        return 0;
    c = e->ctx.local[ctx];
    p = hrp_put_varint(e->buf + e->len, (uint64_t)c << 2 | HRP_ITEM_LEAF);
    p = hrp_put_varint(p, incl_ns);
    e->len = (size_t)(p - e->buf);
    e->events++;
    e->events_by[e->label_local]++;
    return 1;
}

/* Adds the library's own work under label set `label`: a stall (wake == 0)
 * or a wake-up of the shipper, lasting ns. Returns 0 or -ENOMEM. */
int hr__enc_internal(struct hr__enc *e, uint32_t label, int wake,
                     uint64_t ns);

/*
 * Packs the batch with header h into a newly allocated buffer (*out, *len;
 * the caller frees it with free) and empties the encoder. Returns 0,
 * -ENOMEM, or -EINVAL when an id has no name; the encoder is then left as
 * it is (its events can be counted, then hr__enc_clear).
 */
int hr__enc_seal(struct hr__enc *e, const struct hr__batch_header *h,
                 uint8_t **out, size_t *len);

/*
 * hr__enc_seal into `spare`, a buffer of the caller's of `spare_cap`
 * bytes, when it holds the batch: *out is then spare, given up by the
 * caller; otherwise into a newly allocated buffer, spare left to the
 * caller. A shipper that keeps the buffer of a delivered batch for the
 * next one writes each batch into memory it has written before, rather
 * than into pages the system must map and clear again (a fresh allocation
 * of a batch's size is often a new mapping).
 */
int hr__enc_seal_into(struct hr__enc *e, const struct hr__batch_header *h,
                      uint8_t *spare, size_t spare_cap, uint8_t **out,
                      size_t *len);

/* What an answer from the daemon means for the batch in flight. */
enum hr__ack_verdict {
    HR__ACK_IGNORE,    /* not an answer to that batch: keep waiting */
    HR__ACK_DELIVERED, /* taken (or already had): done */
    HR__ACK_REJECTED,  /* refused as invalid: count it lost */
    HR__ACK_REJECTED_COUNTED, /* refused, and the daemon counted its
                                 events lost under their node ids */
    HR__ACK_RETRY      /* not taken now: send it again later */
};

/* Reads the daemon's answer buf[0..len) to the batch numbered seq. Any
 * bytes at all are safe to give it. */
enum hr__ack_verdict hr__ack_read(const uint8_t *buf, size_t len,
                                  uint64_t seq);

#endif
