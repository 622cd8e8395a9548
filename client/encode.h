/*
 * Batch building and encoding: pure logic, no I/O.
 *
 * A builder collects samples with process-wide range and label ids and
 * values already in nanoseconds. Encoding packs the protobuf Batch: its
 * `ranges` list names every range id from 1 to the highest one used (range
 * ids follow the order in which their scopes were first entered, which the
 * daemon uses to order report rows), and its `labels` list the label sets
 * used, renumbered in id order.
 */
#ifndef HOSTRANGE_ENCODE_H
#define HOSTRANGE_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#define HR__BATCH_SAMPLES 16384u

struct hr__builder {
    /* children may be NULL: the batch then says nothing of children. */
    uint32_t n;     /* range samples */
    uint32_t nrec;  /* records */
    uint32_t *label, *range, *children;
    uint64_t *incl, *self;
    uint32_t *rec_label, *rec_range;
    uint64_t *rec_ns;
};

/* What a batch says of its process, besides the samples. */
struct hr__batch_header {
    uint32_t pid;
    uint64_t instance;
    const char *process_label;
    uint64_t seq;
    const char *clock;
    uint64_t lost_events;
    uint64_t out_of_order;
    uint64_t open_at_window_end;
    uint64_t foreign_thread;
    uint64_t label_in_window;
    uint64_t too_deep;
    /* Cumulative lost events per label set: ids and counts, n_lost each. */
    const uint32_t *lost_ids;
    const uint64_t *lost_counts;
    uint32_t n_lost;
};

/* How to name ids (the client's intern tables, or a test's). */
struct hr__namer {
    const char *(*range_name)(uint32_t id);
    int (*label_get)(uint32_t id, const char **node_id, const char **op,
                     const char **backend, unsigned *phase);
};

/* Allocates room for HR__BATCH_SAMPLES of each kind. Returns 0 or
 * -ENOMEM. */
int hr__builder_init(struct hr__builder *b);
void hr__builder_fini(struct hr__builder *b);

static inline int hr__builder_full(const struct hr__builder *b)
{
    return b->n == HR__BATCH_SAMPLES || b->nrec == HR__BATCH_SAMPLES;
}

static inline uint32_t hr__builder_events(const struct hr__builder *b)
{
    return b->n + b->nrec;
}

/*
 * Packs the builder's samples with header h into a newly allocated buffer
 * (*out, *len; the caller frees it with free). Returns 0, -ENOMEM, or
 * -EINVAL when an id has no name. The builder is left unchanged.
 */
int hr__batch_encode(const struct hr__builder *b,
                     const struct hr__batch_header *h,
                     const struct hr__namer *namer, uint8_t **out,
                     size_t *len);

/* What an answer from the daemon means for the batch in flight. */
enum hr__ack_verdict {
    HR__ACK_IGNORE,    /* not an answer to that batch: keep waiting */
    HR__ACK_DELIVERED, /* taken (or already had): done */
    HR__ACK_REJECTED,  /* refused as invalid: count it lost */
    HR__ACK_RETRY      /* not taken now: send it again later */
};

/* Reads the daemon's answer buf[0..len) to the batch numbered seq. Any
 * bytes at all are safe to give it. */
enum hr__ack_verdict hr__ack_read(const uint8_t *buf, size_t len,
                                  uint64_t seq);

#endif
