/*
 * Control requests: dump, stats, reset, ping, save. Pure logic: a request's bytes
 * in, a reply's bytes out, over the aggregation and ingest state.
 *
 * A paged dump answers with the rows of the next keys in report order until
 * their values reach `page_values`, and a cursor (the order of the last key
 * sent, 20 bytes) for the next page; keys are found again by their order,
 * so a page needs no state in the daemon, and keys added or reset between
 * pages are simply seen or not.
 *
 * A save (hostrangectl save) is paged the same way, by creation order: each
 * page carries whole keys as run-file keys (runkey.h) until their values
 * reach `page_values`, and a cursor (the next key's serial, 4 bytes); the
 * last page also carries the clients, calibrations, clocks and lost counts.
 *
 * A reset is handed to the journal hook (the ResetRequest's bytes) before
 * it is done, so a restart does not bring the samples back; when the hook
 * fails the reset is refused with an error.
 */
#ifndef HOSTRANGE_CONTROL_H
#define HOSTRANGE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/ingest.h"

#define HRD_PAGE_VALUES_DEFAULT (2u << 20)

/* What the daemon's state directory holds and how it fares (state.h). */
struct hrd_state_info {
    char dir[4096];
    int degraded;          /* batches cannot be journaled now */
    char last_error[512];
    uint64_t journal_bytes;
    uint64_t journal_records;
    uint64_t snapshots;
    uint64_t write_errors;
    uint64_t loaded_keys;
    uint64_t loaded_clients;
    uint64_t replayed_records;
    uint64_t load_problems;
};

/* What the daemon took from its spool folder (daemon/spool.h). */
struct hrd_spool_info {
    char dir[4200];
    uint64_t files;          /* files taken: removed or set aside */
    uint64_t batches;        /* batch records read */
    uint64_t bytes;          /* bytes of the files taken */
    uint64_t ingested;       /* batches aggregated */
    uint64_t duplicates;     /* batches the daemon held already */
    uint64_t rejected;       /* batches refused, damaged or foreign */
    uint64_t rejected_files; /* files set aside */
    uint64_t lost_events;    /* events of batches not taken, counted lost */
    uint64_t waiting;        /* files in the folder at the last look */
};

struct hrd_control {
    struct hrd_ingest *ingest;
    uint32_t pid;
    uint64_t start_ns;   /* daemon start, CLOCK_MONOTONIC */
    uint64_t now_ns;     /* set by the caller before each request */
    uint64_t rss_bytes;  /* set by the caller before each request */
    uint64_t control_rejected;
    uint64_t page_values; /* 0: HRD_PAGE_VALUES_DEFAULT */
    const struct hrd_state_info *state; /* NULL: no state directory */
    const struct hrd_spool_info *spool; /* NULL: no spool folder */
    hrd_journal_fn journal_reset;       /* NULL: none */
    void *journal_ctx;
    /* Allocates a reply's bytes (NULL: malloc), so that the server can
     * hand a reply of many megabytes to its socket without a copy. */
    void *(*reply_alloc)(size_t len);
};

/*
 * Answers one control message. Writes a newly allocated ControlReply to
 * *reply (*reply_len; from ctl->reply_alloc, which the caller frees
 * accordingly), or NULL when out of memory.
 * A request that cannot be decoded or has another version is answered with
 * an error reply and counted.
 */
void hrd_control_handle(struct hrd_control *ctl, const uint8_t *msg,
                        size_t len, uint8_t **reply, size_t *reply_len);

/* Drops the keys a ResetRequest (its bytes) selects, as a reset request or
 * a journal replay does. Returns the number of keys dropped, or -EINVAL
 * when the bytes are not a ResetRequest. */
int64_t hrd_control_apply_reset(struct hra_agg *agg, const uint8_t *msg,
                                size_t len);

#endif
