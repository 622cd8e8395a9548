/*
 * Control requests: dump, stats, reset, ping. Pure logic: a request's bytes
 * in, a reply's bytes out, over the aggregation and ingest state.
 */
#ifndef HOSTRANGE_CONTROL_H
#define HOSTRANGE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/ingest.h"

struct hrd_control {
    struct hrd_ingest *ingest;
    uint32_t pid;
    uint64_t start_ns;   /* daemon start, CLOCK_MONOTONIC */
    uint64_t now_ns;     /* set by the caller before each request */
    uint64_t control_rejected;
};

/*
 * Answers one control message. Writes a newly allocated ControlReply to
 * *reply (*reply_len; the caller frees it), or NULL when out of memory.
 * A request that cannot be decoded or has another version is answered with
 * an error reply and counted.
 */
void hrd_control_handle(struct hrd_control *ctl, const uint8_t *msg,
                        size_t len, uint8_t **reply, size_t *reply_len);

#endif
