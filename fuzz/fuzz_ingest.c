/*
 * libFuzzer target: the daemon's ingest path, decode -> validate ->
 * aggregate (hrd_ingest_handle), on a fresh aggregation, with the default
 * settings and with a tiny exact cap and memory budget (so that keys move
 * to histograms and the budget is enforced). The input is one message as
 * a client would send it; it is handled twice (the second time it is a
 * duplicate), and the report is then written in every format.
 *
 * Checks: every answer is an Ack of this protocol version; a message that
 * decodes as a Batch of another version is rejected for its version; a
 * batch taken
 * has a sample stream that reads to its end (proto/stream.h) with as many
 * samples and records as the batch says, and is aggregated exactly (the
 * daemon holds two values per range sample and one per record, and the
 * report counts every one of them); a duplicate changes nothing.
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "daemon/ingest.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <stdlib.h>
#include <string.h>

/* Handles the message; checks the Ack. Returns the result, and the
 * reason in *why when it is HRD_INGEST_REJECTED. */
static enum hrd_ingest_result handle(struct hrd_ingest *in,
                                     const uint8_t *data, size_t size,
                                     enum hrd_reject *why_out)
{
    enum hrd_reject why = HRD_REJECT_COUNT;
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
        /* The client is told when the daemon counted the events lost. */
        FUZZ_CHECK(m->counted_lost == (in->last_counted != 0));
        break;
    default:
        FUZZ_CHECK(0);
    }
    hostrange__ack__free_unpacked(m, NULL);
    free(ack);
    *why_out = why;
    return res;
}

/* Reads the sample stream of a batch that was taken, on its own (not with
 * the daemon's reader): counts its range samples and records. */
static void count_stream(const Hostrange__Batch *b, uint64_t *samples,
                         uint64_t *records)
{
    const uint8_t *p = b->samples.data, *end = p;
    static const int values[4] = { 1, 4, 1, 0 }; /* after the tag */

    *samples = *records = 0;
    if (p != NULL) /* no stream: data is NULL, and NULL + 0 is undefined */
        end = p + b->samples.len;
    while (p < end) {
        uint64_t tag, v[4];

        FUZZ_CHECK(hrp_get_varint(&p, end, &tag) == 0);
        for (int i = 0; i < values[tag & 3]; i++)
            FUZZ_CHECK(hrp_get_varint(&p, end, &v[i]) == 0);
        if ((tag & 3) == HRP_ITEM_LABEL) {
            FUZZ_CHECK((tag >> 2) < b->n_labels);
            continue;
        }
        FUZZ_CHECK((tag >> 2) < b->n_context_range);
        if ((tag & 3) == HRP_ITEM_RECORD)
            ++*records;
        else
            ++*samples;
        if ((tag & 3) == HRP_ITEM_PARENT)
            FUZZ_CHECK(v[1] <= v[0]);
    }
    FUZZ_CHECK(p == end);
    FUZZ_CHECK(*samples + *records == b->events);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int tiny = 0; tiny < 2; tiny++) {
        struct hra_agg a;
        struct hrd_ingest in;
        uint64_t events, values, count, samples, records;
        enum hrd_ingest_result res;
        enum hrd_reject why;
        char *r1, *r2;

        hra_init(&a);
        if (tiny) {
            a.exact_cap = 4;
            a.max_bytes = 2048;
        }
        hrd_ingest_init(&in, &a);
        res = handle(&in, data, size, &why);
        if (res == HRD_INGEST_OK) {
            Hostrange__Batch *b = hostrange__batch__unpack(NULL, size, data);

            FUZZ_CHECK(b != NULL);
            FUZZ_CHECK(b->version == HRP_VERSION);
            count_stream(b, &samples, &records);
            events = 2 * samples + records;
            values = samples + records;
            hostrange__batch__free_unpacked(b, NULL);
            FUZZ_CHECK(a.events == events);
            r1 = fuzz_report(&a, &count);
            FUZZ_CHECK(count == values);
            FUZZ_CHECK(handle(&in, data, size, &why) ==
                       HRD_INGEST_DUPLICATE);
            FUZZ_CHECK(a.events == events);
            r2 = fuzz_report(&a, NULL);
            FUZZ_CHECK(strcmp(r1, r2) == 0);
            free(r1);
            free(r2);
        } else {
            Hostrange__Batch *b = hostrange__batch__unpack(NULL, size, data);

            /* A message of another version (version 1's sample arrays
             * included) is rejected for its version, whatever else it
             * holds. */
            if (b != NULL && size <= HRP_MAX_INGEST_BYTES &&
                b->version != HRP_VERSION)
                FUZZ_CHECK(res == HRD_INGEST_REJECTED &&
                           why == HRD_REJECT_VERSION);
            hostrange__batch__free_unpacked(b, NULL);
            FUZZ_CHECK(a.events == 0 && a.nkeys == 0);
            free(fuzz_report(&a, NULL));
        }
        hrd_ingest_fini(&in);
        hra_fini(&a);
    }
    return 0;
}
