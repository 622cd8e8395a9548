/*
 * Writing a spool file (proto/spool.h): the batches a process could not
 * deliver before it exits, its final counters, and its last batch, left in
 * the runtime directory's spool folder for the next daemon.
 *
 * The caller (the shipper, at exit) chooses the batches; this file names
 * their label sets, frames the records, and writes the file atomically: a
 * temporary name, fsync, rename, and an fsync of the folder. Pure but for
 * that I/O.
 */
#ifndef HOSTRANGE_CLIENT_SPOOL_H
#define HOSTRANGE_CLIENT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* A batch to spool: its bytes as sent, and its events per label set
 * (process label set ids lab[i], lab_events[i] events each). */
struct hr__spool_batch {
    uint64_t seq;
    uint64_t events;
    int sent; /* sent at least once without an answer */
    const uint8_t *buf;
    size_t len;
    uint32_t nlab;
    const uint32_t *lab;
    const uint64_t *lab_events;
};

struct hr__spool {
    uint32_t pid;
    uint64_t instance;
    /* The process's final counters; see SpoolInfo. */
    uint64_t samples, delivered, lost, unacknowledged, spooled, over_limit;
    const struct hr__spool_batch *batches;
    uint32_t nbatches;
    const uint8_t *final_batch; /* its last Batch, packed */
    size_t final_len;
    /* Names a label set (the client's intern tables); 0 or -1. */
    int (*label_get)(uint32_t id, const char **node_id, const char **op,
                     const char **backend, unsigned *phase);
};

/*
 * Writes the spool file of s->pid, s->instance in folder `dir` (which must
 * be a directory, not a link). The file is mode 0600 when the folder is the
 * caller's, else 0640 (it then takes the folder's group, which the daemon
 * reads by). Returns 0, or a negative errno with nothing left behind.
 */
int hr__spool_write(const char *dir, const struct hr__spool *s);

#endif
