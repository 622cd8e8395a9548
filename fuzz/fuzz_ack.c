/*
 * libFuzzer target: the client's reading of the daemon's answers
 * (hr__ack_read), for the batch numbered 1 and for others.
 *
 * Checks: the verdict follows the answer: an Ack of this version for that
 * batch is delivered (OK, DUPLICATE), rejected (REJECTED) or to be sent
 * again (anything else); any other bytes are ignored.
 */
#include "config.h"

#include "client/encode.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t seqs[3] = { 1, 0, UINT64_MAX };
    Hostrange__Ack *m = hostrange__ack__unpack(NULL, size, data);

    for (int i = 0; i < 3; i++) {
        enum hr__ack_verdict v = hr__ack_read(data, size, seqs[i]), want;

        if (m == NULL || m->version != HRP_VERSION || m->seq != seqs[i])
            want = HR__ACK_IGNORE;
        else if (m->status == HOSTRANGE__ACK__STATUS__OK ||
                 m->status == HOSTRANGE__ACK__STATUS__DUPLICATE)
            want = HR__ACK_DELIVERED;
        else if (m->status == HOSTRANGE__ACK__STATUS__REJECTED)
            want = m->counted_lost ? HR__ACK_REJECTED_COUNTED
                                   : HR__ACK_REJECTED;
        else
            want = HR__ACK_RETRY;
        FUZZ_CHECK(v == want);
    }
    if (m != NULL)
        hostrange__ack__free_unpacked(m, NULL);
    return 0;
}
