/*
 * libFuzzer target: control requests (hrd_control_handle) against an
 * aggregation that holds a few keys (exact ones and histograms) and a
 * client, with a small page budget so that paged dumps take several pages
 * and cursors matter; the reset journal hook fails on every other call.
 * The same bytes are also replayed as a journaled reset
 * (hrd_control_apply_reset).
 *
 * Checks: every answer is a ControlReply of this protocol version, with
 * either an error or a body; the report can be written afterwards.
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "daemon/control.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A valid batch: two label sets, three ranges in four contexts (context
 * 3 is operator.call inside dispatch.call), samples with and without
 * children, and records. */
static uint8_t *preload(size_t *len)
{
    static uint8_t *buf;
    static size_t buf_len;
    static Hostrange__LabelSet l[2];
    static Hostrange__LabelSet *lp[2] = { &l[0], &l[1] };
    static char *ranges[3] = { "dispatch.call", "operator.call",
                               "end_to_end" };
    static uint32_t cparent[4] = { 0, 0, 0, 1 }, crange[4] = { 0, 1, 2, 1 };
    static uint32_t lost_l[1] = { 1 };
    static uint64_t lost_n[1] = { 3 };
    static uint32_t int_l[1] = { 0 };
    static uint64_t stalls[1] = { 2 }, stall_ns[1] = { 900 };
    static uint64_t wakes[1] = { 1 }, wake_ns[1] = { 4000 };
    uint8_t stream[15 * HRP_ITEM_MAX + 4 * HRP_ITEM_MAX], *p = stream;
    Hostrange__Batch b = HOSTRANGE__BATCH__INIT;

    if (buf != NULL) {
        *len = buf_len;
        return buf;
    }
    for (uint32_t i = 0; i < 2; i++) {
        hostrange__label_set__init(&l[i]);
        l[i].node_id = i == 0 ? "fuzz/control::a" : "fuzz/control::b";
        l[i].operator_ = "add";
        l[i].backend = "cpu";
        l[i].phase = i == 0 ? HRP_PHASE_WARM : HRP_PHASE_COLD;
        l[i].id = i;
    }
    /* 12 range samples, alternating label sets; then 3 records. */
    for (uint64_t i = 0; i < 12; i++) {
        uint64_t incl = 1000 + 37 * i, self = 400 + 11 * i;
        uint64_t ctx = i % 3 == 2 ? 3 : i % 3 == 1 ? 1 : 0;

        p = hrp_put_varint(p, (i % 2) << 2 | HRP_ITEM_LABEL);
        if (ctx == 0) {
            p = hrp_put_varint(p, ctx << 2 | HRP_ITEM_PARENT);
            p = hrp_put_varint(p, incl);
            p = hrp_put_varint(p, incl - self);
            p = hrp_put_varint(p, 2);
            p = hrp_put_varint(p, 1);
        } else {
            p = hrp_put_varint(p, ctx << 2 | HRP_ITEM_LEAF);
            p = hrp_put_varint(p, incl);
        }
    }
    for (uint64_t i = 0; i < 3; i++) {
        p = hrp_put_varint(p, (i / 2) << 2 | HRP_ITEM_LABEL);
        p = hrp_put_varint(p, 2u << 2 | HRP_ITEM_RECORD);
        p = hrp_put_varint(p, i == 2 ? 90 : 2500 + 200 * i);
    }
    b.version = HRP_VERSION;
    b.pid = 7;
    b.instance = 77;
    b.process_label = "fuzz";
    b.seq = 1;
    b.clock = "tsc";
    b.n_labels = 2;
    b.labels = lp;
    b.n_ranges = 3;
    b.ranges = ranges;
    b.n_context_parent = b.n_context_range = 4;
    b.context_parent = cparent;
    b.context_range = crange;
    b.samples.data = stream;
    b.samples.len = (size_t)(p - stream);
    b.events = 15;
    b.lost_events = 3;
    b.n_lost_label = b.n_lost_by_label = 1;
    b.lost_label = lost_l;
    b.lost_by_label = lost_n;
    b.n_internal_label = b.n_stall_count = b.n_stall_ns = 1;
    b.n_wake_count = b.n_wake_ns = 1;
    b.internal_label = int_l;
    b.stall_count = stalls;
    b.stall_ns = stall_ns;
    b.wake_count = wakes;
    b.wake_ns = wake_ns;
    buf_len = hostrange__batch__get_packed_size(&b);
    buf = malloc(buf_len);
    FUZZ_CHECK(buf != NULL);
    hostrange__batch__pack(&b, buf);
    *len = buf_len;
    return buf;
}

static int reset_calls;

/* The reset journal hook: fails every other time. */
static int journal_reset(void *ctx, const uint8_t *msg, size_t len)
{
    (void)ctx;
    (void)msg;
    (void)len;
    return (reset_calls++ & 1) ? -ENOSPC : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hrd_state_info info = { "/fuzz/state", 1, "disk full",
                                          10, 2, 1, 1, 0, 0, 0, 0 };
    struct hra_agg a;
    struct hrd_ingest in;
    struct hrd_control ctl;
    Hostrange__ControlReply *m;
    enum hrd_reject why;
    uint8_t *msg, *ack, *reply;
    size_t len, ack_len, reply_len;

    hra_init(&a);
    a.exact_cap = 5; /* some keys in histograms */
    hrd_ingest_init(&in, &a);
    msg = preload(&len);
    FUZZ_CHECK(hrd_ingest_handle(&in, msg, len, &ack, &ack_len, &why) ==
               HRD_INGEST_OK);
    free(ack);

    memset(&ctl, 0, sizeof ctl);
    ctl.ingest = &in;
    ctl.pid = 1;
    ctl.page_values = 8;
    ctl.state = (size & 1) ? &info : NULL;
    ctl.journal_reset = journal_reset;
    hrd_control_handle(&ctl, data, size, &reply, &reply_len);
    FUZZ_CHECK(reply != NULL);
    m = hostrange__control_reply__unpack(NULL, reply_len, reply);
    FUZZ_CHECK(m != NULL);
    FUZZ_CHECK(m->version == HRP_VERSION);
    FUZZ_CHECK(m->error[0] != '\0' ||
               m->body_case != HOSTRANGE__CONTROL_REPLY__BODY__NOT_SET);
    hostrange__control_reply__free_unpacked(m, NULL);
    free(reply);
    free(fuzz_report(&a, NULL));

    hrd_control_apply_reset(&a, data, size);
    free(fuzz_report(&a, NULL));
    hrd_ingest_fini(&in);
    hra_fini(&a);
    return 0;
}
