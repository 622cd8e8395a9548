/*
 * The one batch sender of the tests: a batch, or any bytes, sent to the
 * ingest socket of a real hostranged on a fresh REQ socket, and its Ack
 * read back. A daemon that does not answer within 20 s fails the running
 * cmocka test (a hang guard, not a timing check).
 */
#ifndef HOSTRANGE_TESTS_HARNESS_SEND_H
#define HOSTRANGE_TESTS_HARNESS_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/harness_batch.h"

/*
 * Sends len bytes to the ingest socket of the daemon of dir and waits for
 * its Ack. Returns the Ack's status; writes its seq to *seq and its error
 * text to why (whylen bytes) when they are not NULL.
 */
int harness_send_bytes(const char *dir, const void *buf, size_t len,
                       uint64_t *seq, char *why, size_t whylen);

/* Packs x and sends it as harness_send_bytes does. */
int harness_send_batch(const char *dir, const struct db_batch *x, char *why,
                       size_t whylen);

#endif
