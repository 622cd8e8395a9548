/*
 * libFuzzer target: the daemon's ingest path, decode -> validate ->
 * aggregate (hrd_ingest_handle), on a fresh aggregation, with the default
 * settings and with a tiny exact cap and memory budget (so that keys move
 * to histograms and the budget is enforced). The input is one message as
 * a client would send it; it is handled twice (the second time it is a
 * duplicate), and the report is then written in every format.
 *
 * Checks: every answer is an Ack of this protocol version; a batch taken
 * is aggregated exactly (the daemon holds two values per range sample and
 * one per record, and the report counts every one of them); a duplicate
 * changes nothing.
 */
#include "config.h"

#include "daemon/ingest.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <stdlib.h>
#include <string.h>

/* Handles the message; checks the Ack. Returns the result. */
static enum hrd_ingest_result handle(struct hrd_ingest *in,
                                     const uint8_t *data, size_t size)
{
    enum hrd_reject why;
    uint8_t *ack;
    size_t ack_len;
    enum hrd_ingest_result res;
    Hostrange__Ack *m;

    res = hrd_ingest_handle(in, data, size, &ack, &ack_len, &why);
    FUZZ_CHECK(ack != NULL);
    m = hostrange__ack__unpack(NULL, ack_len, ack);
    FUZZ_CHECK(m != NULL);
    FUZZ_CHECK(m->version == HRP_VERSION);
    switch (res) {
    case HRD_INGEST_OK:
        FUZZ_CHECK(m->status == HOSTRANGE__ACK__STATUS__OK);
        break;
    case HRD_INGEST_DUPLICATE:
        FUZZ_CHECK(m->status == HOSTRANGE__ACK__STATUS__DUPLICATE);
        break;
    case HRD_INGEST_REJECTED:
        FUZZ_CHECK(m->status == HOSTRANGE__ACK__STATUS__REJECTED);
        FUZZ_CHECK(why < HRD_REJECT_COUNT);
        FUZZ_CHECK(in->rejected[why] > 0);
        break;
    default:
        FUZZ_CHECK(0);
    }
    hostrange__ack__free_unpacked(m, NULL);
    free(ack);
    return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int tiny = 0; tiny < 2; tiny++) {
        struct hrd_agg a;
        struct hrd_ingest in;
        uint64_t events, values, count;
        char *r1, *r2;

        hrd_agg_init(&a);
        if (tiny) {
            a.exact_cap = 4;
            a.max_bytes = 2048;
        }
        hrd_ingest_init(&in, &a);
        if (handle(&in, data, size) == HRD_INGEST_OK) {
            Hostrange__Batch *b = hostrange__batch__unpack(NULL, size, data);

            FUZZ_CHECK(b != NULL);
            events = 2 * (uint64_t)b->n_sample_label + b->n_record_label;
            values = (uint64_t)b->n_sample_label + b->n_record_label;
            hostrange__batch__free_unpacked(b, NULL);
            FUZZ_CHECK(a.events == events);
            r1 = fuzz_report(&a, &count);
            FUZZ_CHECK(count == values);
            FUZZ_CHECK(handle(&in, data, size) == HRD_INGEST_DUPLICATE);
            FUZZ_CHECK(a.events == events);
            r2 = fuzz_report(&a, NULL);
            FUZZ_CHECK(strcmp(r1, r2) == 0);
            free(r1);
            free(r2);
        } else {
            FUZZ_CHECK(a.events == 0 && a.nkeys == 0);
            free(fuzz_report(&a, NULL));
        }
        hrd_ingest_fini(&in);
        hrd_agg_fini(&a);
    }
    return 0;
}
