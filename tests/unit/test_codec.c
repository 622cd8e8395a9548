/*
 * Batches from the client's encoder through the daemon's decoder, validator
 * and aggregator (client/encode.c, daemon/ingest.c), with no socket.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/encode.h"
#include "lib/agg/agg_impl.h"
#include "daemon/ingest.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <stdio.h>

/* Process-wide ids of a fake client: sites 1..4, label sets 1..2. */
static const char *const names[] = { NULL, "binding.body", "dispatch.call",
                                     "backend.submit", "end_to_end" };

static const char *range_name(uint32_t id)
{
    return id >= 1 && id <= 4 ? names[id] : NULL;
}

static int label_get(uint32_t id, const char **node, const char **op,
                     const char **backend, unsigned *phase)
{
    if (id < 1 || id > 2)
        return -1;
    *node = "ops/add[cpu-float32-13x4]";
    *op = "add";
    *backend = "cpu";
    *phase = id == 1 ? HRP_PHASE_COLD : HRP_PHASE_WARM;
    return 0;
}

/* Contexts 1..4: ranges 1..4 at the top of a stack; 5: dispatch.call
 * (2) in binding.body (context 1); 6: backend.submit (3) in context 5. */
static void ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *range)
{
    static const uint32_t p[] = { 0, 0, 0, 0, 0, 1, 5 };
    static const uint32_t r[] = { 0, 1, 2, 3, 4, 2, 3 };

    *parent = p[ctx];
    *range = r[ctx];
}

static const struct hr__namer namer = { range_name, label_get, ctx_get };

static struct hr__batch_header header(uint64_t seq)
{
    struct hr__batch_header h = { 0 };

    h.pid = 4242;
    h.instance = 0x1234567890abcdefull;
    h.process_label = "codec-test";
    h.seq = seq;
    h.clock = "tsc";
    h.lost_events = 7;
    h.out_of_order = 1;
    return h;
}

/* A range sample of context ctx; binding.body (context 1) has two
 * children, dispatch.call in it (5) one, the others none. */
static void add(struct hr__enc *e, uint32_t label, uint32_t ctx,
                uint64_t incl, uint64_t self)
{
    uint32_t nchild = ctx == 1 ? 2 : ctx == 5 ? 1 : 0;

    assert_int_equal(hr__enc_sample(e, label, ctx, incl, incl - self, nchild,
                                    nchild, 0),
                     0);
}

/* The items of a sample stream, as text ("L0 P1:1000/900/2/0 R3:1234"). */
static void stream_text(const ProtobufCBinaryData *s, char *out, size_t len)
{
    const uint8_t *p = s->data, *end = p + s->len;
    size_t at = 0;

    out[0] = '\0';
    while (p < end && at < len) {
        uint64_t tag = 0, v[4];
        int n = 0;

        assert_int_equal(hrp_get_varint(&p, end, &tag), 0);
        if ((tag & 3) == HRP_ITEM_LEAF || (tag & 3) == HRP_ITEM_RECORD)
            n = 1;
        else if ((tag & 3) == HRP_ITEM_PARENT)
            n = 4;
        for (int i = 0; i < n; i++)
            assert_int_equal(hrp_get_varint(&p, end, &v[i]), 0);
        at += (size_t)snprintf(out + at, len - at, "%s%c%llu", at ? " " : "",
                               "CPRL"[tag & 3], (unsigned long long)(tag >> 2));
        for (int i = 0; i < n && at < len; i++)
            at += (size_t)snprintf(out + at, len - at, "%c%llu",
                                   i == 0 ? ':' : '/',
                                   (unsigned long long)v[i]);
    }
}

static void test_round_trip(void **state)
{
    struct hr__enc e;
    struct hr__batch_header h = header(1);
    Hostrange__Batch *m;
    uint8_t *buf;
    size_t len;
    char text[256];

    (void)state;
    assert_int_equal(hr__enc_init(&e, &namer), 0);
    add(&e, 2, 6, 500, 500);
    add(&e, 2, 5, 900, 400);
    add(&e, 2, 1, 1000, 100);
    assert_int_equal(hr__enc_sample(&e, 2, 4, 1234, 0, 0, 0, 1), 0);
    assert_int_equal(hr__enc_internal(&e, 2, 1, 3000), 0);
    assert_int_equal(hr__enc_internal(&e, 2, 0, 70), 0);
    assert_int_equal(hr__enc_internal(&e, 2, 0, 30), 0);
    assert_int_equal(e.events, 4);
    assert_int_equal(hr__enc_seal(&e, &h, &buf, &len), 0);
    assert_int_equal(e.events, 0);
    m = hostrange__batch__unpack(NULL, len, buf);
    assert_non_null(m);
    assert_int_equal(m->version, HRP_VERSION);
    assert_int_equal(m->pid, 4242);
    assert_true(m->instance == 0x1234567890abcdefull);
    assert_string_equal(m->process_label, "codec-test");
    assert_int_equal(m->seq, 1);
    assert_int_equal(m->lost_events, 7);
    assert_int_equal(m->errors_out_of_order, 1);
    /* The ranges used, in id (first-entry) order. */
    assert_int_equal(m->n_ranges, 4);
    assert_string_equal(m->ranges[0], "binding.body");
    assert_string_equal(m->ranges[3], "end_to_end");
    /* Contexts in the order met, each after its parent: 1, 5, 6, 4. */
    assert_int_equal(m->n_context_parent, 4);
    assert_int_equal(m->context_parent[0], 0);
    assert_int_equal(m->context_range[0], 0);
    assert_int_equal(m->context_parent[1], 1);
    assert_int_equal(m->context_range[1], 1);
    assert_int_equal(m->context_parent[2], 2);
    assert_int_equal(m->context_range[2], 2);
    assert_int_equal(m->context_parent[3], 0);
    assert_int_equal(m->context_range[3], 3);
    /* Only the label set used. */
    assert_int_equal(m->n_labels, 1);
    assert_int_equal(m->labels[0]->phase, HRP_PHASE_WARM);
    assert_int_equal(m->labels[0]->id, 0);
    assert_int_equal(m->events, 4);
    stream_text(&m->samples, text, sizeof text);
    assert_string_equal(text, "L0 C2:500 P1:900/500/1/0 P0:1000/900/2/0 "
                              "R3:1234");
    /* A leaf costs a tag and its time: 3 bytes here. */
    assert_int_equal(m->samples.len, 1 + 3 + 7 + 7 + 3);
    assert_int_equal(m->n_internal_label, 1);
    assert_int_equal(m->internal_label[0], 0);
    assert_int_equal(m->stall_count[0], 2);
    assert_int_equal(m->stall_ns[0], 100);
    assert_int_equal(m->wake_count[0], 1);
    assert_int_equal(m->wake_ns[0], 3000);
    hostrange__batch__free_unpacked(m, NULL);
    free(buf);
    hr__enc_fini(&e);
}

/* The inline path for leaves adds only what hr__enc_sample would add the
 * same way, and declines the rest without a trace. */
static void test_leaf_fast_path(void **state)
{
    struct hr__enc a, b;
    struct hr__batch_header h = header(1);
    uint8_t *ba, *bb;
    size_t la, lb;

    (void)state;
    assert_int_equal(hr__enc_init(&a, &namer), 0);
    assert_int_equal(hr__enc_init(&b, &namer), 0);
    /* No label set, then no context yet: declined, nothing written. */
    assert_int_equal(hr__enc_leaf(&a, 2, 6, 500), 0);
    assert_int_equal(a.len, 0);
    assert_int_equal(hr__enc_sample(&a, 2, 6, 500, 0, 0, 0, 0), 0);
    assert_int_equal(hr__enc_leaf(&a, 2, 4, 70), 0);
    /* Known label and context: taken, also with a long varint. */
    assert_int_equal(hr__enc_leaf(&a, 2, 6, 501), 1);
    assert_int_equal(hr__enc_leaf(&a, 2, 6, 1ull << 40), 1);
    /* Another label set, and a context beyond the map: declined. */
    assert_int_equal(hr__enc_leaf(&a, 1, 6, 502), 0);
    assert_int_equal(hr__enc_leaf(&a, 2, 100000, 502), 0);
    assert_int_equal(a.events, 3);
    for (uint64_t v = 500; v <= 501; v++)
        assert_int_equal(hr__enc_sample(&b, 2, 6, v, 0, 0, 0, 0), 0);
    assert_int_equal(hr__enc_sample(&b, 2, 6, 1ull << 40, 0, 0, 0, 0), 0);
    assert_int_equal(hr__enc_seal(&a, &h, &ba, &la), 0);
    assert_int_equal(hr__enc_seal(&b, &h, &bb, &lb), 0);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
    /* A stale context of the previous batch is not taken for a known one. */
    assert_int_equal(hr__enc_leaf(&a, 2, 6, 500), 0);
    hr__enc_fini(&a);
    hr__enc_fini(&b);
}

struct rows {
    int n;
    char text[16][160];
};

static int collect(const struct hra_row *r, void *arg)
{
    struct rows *rs = arg;

    snprintf(rs->text[rs->n++], sizeof rs->text[0], "%s %s %s %s %llu %g %g",
             r->phase, r->range, r->metric, r->node_id,
             (unsigned long long)r->count, r->mean, r->median);
    return 0;
}

/* A fresh encoder holding five samples of two label sets. */
static void fill(struct hr__enc *b)
{
    if (b->buf == NULL)
        assert_int_equal(hr__enc_init(b, &namer), 0);
    add(b, 2, 5, 900, 400);
    add(b, 2, 1, 1000, 100);
    add(b, 2, 5, 700, 300);
    add(b, 2, 1, 800, 100);
    add(b, 1, 1, 5000, 4000);
}

static void test_ingest_and_dedup(void **state)
{
    struct hr__enc b;
    struct hr__batch_header h = header(1);
    struct hra_agg agg;
    struct hrd_ingest in;
    enum hrd_reject why;
    struct rows rows = { 0 };
    Hostrange__Ack *ack;
    uint8_t *buf, *abuf;
    size_t len, alen;

    (void)state;
    memset(&b, 0, sizeof b);
    hra_init(&agg);
    hrd_ingest_init(&in, &agg);
    /* binding.body (id 1) ends after dispatch.call (id 2) but was entered
     * first: the report lists it first. */
    fill(&b);
    assert_int_equal(hr__enc_seal(&b, &h, &buf, &len), 0);

    assert_int_equal(hrd_ingest_handle(&in, buf, len, &abuf, &alen, &why),
                     HRD_INGEST_OK);
    ack = hostrange__ack__unpack(NULL, alen, abuf);
    assert_non_null(ack);
    assert_int_equal(ack->seq, 1);
    assert_int_equal(ack->status, HOSTRANGE__ACK__STATUS__OK);
    hostrange__ack__free_unpacked(ack, NULL);
    free(abuf);

    /* The same batch again (a resend): acknowledged, not counted twice. */
    assert_int_equal(hrd_ingest_handle(&in, buf, len, &abuf, &alen, &why),
                     HRD_INGEST_DUPLICATE);
    free(abuf);
    assert_int_equal(in.clients->duplicates, 1);
    assert_int_equal(in.clients->events, 5);
    assert_int_equal(in.clients->lost, 7);
    assert_int_equal(agg.events, 10);

    assert_int_equal(hra_rows(&agg, NULL, collect, &rows), 0);
    assert_int_equal(rows.n, 6);
    assert_string_equal(rows.text[0], "cold binding.body inclusive "
                        "ops/add[cpu-float32-13x4] 1 5000 5000");
    assert_string_equal(rows.text[1], "cold binding.body self "
                        "ops/add[cpu-float32-13x4] 1 4000 4000");
    assert_string_equal(rows.text[2], "warm binding.body inclusive "
                        "ops/add[cpu-float32-13x4] 2 900 900");
    assert_string_equal(rows.text[3], "warm binding.body self "
                        "ops/add[cpu-float32-13x4] 2 100 100");
    assert_string_equal(rows.text[4], "warm dispatch.call inclusive "
                        "ops/add[cpu-float32-13x4] 2 800 800");
    assert_string_equal(rows.text[5], "warm dispatch.call self "
                        "ops/add[cpu-float32-13x4] 2 350 350");

    /* A gap in sequence numbers is counted. */
    free(buf);
    h.seq = 4;
    fill(&b);
    assert_int_equal(hr__enc_seal(&b, &h, &buf, &len), 0);
    assert_int_equal(hrd_ingest_handle(&in, buf, len, &abuf, &alen, &why),
                     HRD_INGEST_OK);
    free(abuf);
    free(buf);
    assert_int_equal(in.clients->gaps, 2);
    assert_int_equal(in.clients->batches, 2);

    hr__enc_fini(&b);
    hrd_ingest_fini(&in);
    hra_fini(&agg);
}

/* Encodes a batch, lets `mutate` break it, and expects `reason`. */
static void expect_reject(void (*mutate)(Hostrange__Batch *m),
                          enum hrd_reject reason)
{
    struct hr__enc b;
    struct hr__batch_header h = header(1);
    struct hra_agg agg;
    struct hrd_ingest in;
    enum hrd_reject why = HRD_REJECT_COUNT;
    Hostrange__Batch *m;
    Hostrange__Ack *ack;
    uint8_t *buf, *buf2, *abuf;
    size_t len, len2, alen;

    hra_init(&agg);
    hrd_ingest_init(&in, &agg);
    assert_int_equal(hr__enc_init(&b, &namer), 0);
    add(&b, 2, 5, 900, 400);
    add(&b, 2, 1, 1000, 100);
    assert_int_equal(hr__enc_seal(&b, &h, &buf, &len), 0);
    m = hostrange__batch__unpack(NULL, len, buf);
    mutate(m);
    len2 = hostrange__batch__get_packed_size(m);
    buf2 = malloc(len2 + 1);
    hostrange__batch__pack(m, buf2);
    assert_int_equal(hrd_ingest_handle(&in, buf2, len2, &abuf, &alen, &why),
                     HRD_INGEST_REJECTED);
    assert_int_equal(why, reason);
    assert_int_equal(in.rejected[reason], 1);
    assert_int_equal(agg.events, 0);
    ack = hostrange__ack__unpack(NULL, alen, abuf);
    assert_int_equal(ack->status, HOSTRANGE__ACK__STATUS__REJECTED);
    hostrange__ack__free_unpacked(ack, NULL);
    free(abuf);
    free(buf2);
    free(buf);
    hostrange__batch__free_unpacked(m, NULL);
    hr__enc_fini(&b);
    hrd_ingest_fini(&in);
    hra_fini(&agg);
}

/* The stream of the two samples is "L0 P1:900/500/1/0 P0:1000/900/2/0":
 * bytes 0 (label), 1 (tag), 2-3 (900), 4-5 (500), 6, 7, 8 (tag), 9-10
 * (1000), 11-12 (900), 13, 14. */
static void bad_version(Hostrange__Batch *m) { m->version = 99; }
static void bad_index(Hostrange__Batch *m)
{
    m->samples.data[1] = 17 << 2 | HRP_ITEM_PARENT;
}
static void bad_arrays(Hostrange__Batch *m) { m->n_context_parent = 1; }
static void bad_phase(Hostrange__Batch *m) { m->labels[0]->phase = 3; }
/* Children's time 1001 ns in a range of 1000 ns. */
static void bad_value(Hostrange__Batch *m) { m->samples.data[11] = 0xe9; }
static void bad_string(Hostrange__Batch *m) { m->ranges[0][0] = '\0'; }
static void bad_events(Hostrange__Batch *m) { m->events = 3; }
/* A varint that runs off the end. */
static void bad_stream(Hostrange__Batch *m) { m->samples.data[14] = 0x80; }
static void bad_parent(Hostrange__Batch *m) { m->context_parent[0] = 2; }

static void test_rejections(void **state)
{
    (void)state;
    expect_reject(bad_version, HRD_REJECT_VERSION);
    expect_reject(bad_index, HRD_REJECT_INDEX);
    expect_reject(bad_arrays, HRD_REJECT_ARRAYS);
    expect_reject(bad_phase, HRD_REJECT_PHASE);
    expect_reject(bad_value, HRD_REJECT_VALUE);
    expect_reject(bad_string, HRD_REJECT_STRING);
    expect_reject(bad_events, HRD_REJECT_ARRAYS);
    expect_reject(bad_stream, HRD_REJECT_STREAM);
    expect_reject(bad_parent, HRD_REJECT_INDEX);
}

static void test_garbage(void **state)
{
    struct hra_agg agg;
    struct hrd_ingest in;
    enum hrd_reject why;
    uint8_t junk[64], *abuf;
    size_t alen;

    (void)state;
    hra_init(&agg);
    hrd_ingest_init(&in, &agg);
    memset(junk, 0xff, sizeof junk);
    assert_int_equal(hrd_ingest_handle(&in, junk, sizeof junk, &abuf, &alen,
                                       &why),
                     HRD_INGEST_REJECTED);
    assert_int_equal(why, HRD_REJECT_MALFORMED);
    free(abuf);
    assert_int_equal(hrd_ingest_handle(&in, junk, HRP_MAX_INGEST_BYTES + 1,
                                       &abuf, &alen, &why),
                     HRD_INGEST_REJECTED);
    assert_int_equal(why, HRD_REJECT_OVERSIZE);
    free(abuf);
    hrd_ingest_fini(&in);
    hra_fini(&agg);
}

static size_t pack_ack(uint8_t *buf, uint32_t version, uint64_t seq,
                       int status)
{
    Hostrange__Ack m = HOSTRANGE__ACK__INIT;

    m.version = version;
    m.seq = seq;
    m.status = (Hostrange__Ack__Status)status;
    return hostrange__ack__pack(&m, buf);
}

static void test_ack_read(void **state)
{
    uint8_t buf[64];
    size_t n;

    (void)state;
    n = pack_ack(buf, HRP_VERSION, 5, HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(hr__ack_read(buf, n, 5), HR__ACK_DELIVERED);
    /* An answer to another batch (a late one) changes nothing. */
    assert_int_equal(hr__ack_read(buf, n, 6), HR__ACK_IGNORE);
    n = pack_ack(buf, HRP_VERSION, 5, HOSTRANGE__ACK__STATUS__DUPLICATE);
    assert_int_equal(hr__ack_read(buf, n, 5), HR__ACK_DELIVERED);
    n = pack_ack(buf, HRP_VERSION, 5, HOSTRANGE__ACK__STATUS__REJECTED);
    assert_int_equal(hr__ack_read(buf, n, 5), HR__ACK_REJECTED);
    /* A status this client does not know: keep the batch, send it again. */
    n = pack_ack(buf, HRP_VERSION, 5, 77);
    assert_int_equal(hr__ack_read(buf, n, 5), HR__ACK_RETRY);
    n = pack_ack(buf, HRP_VERSION + 1, 5, HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(hr__ack_read(buf, n, 5), HR__ACK_IGNORE);
    memset(buf, 0xff, sizeof buf);
    assert_int_equal(hr__ack_read(buf, sizeof buf, 5), HR__ACK_IGNORE);
    assert_int_equal(hr__ack_read(buf, 0, 0), HR__ACK_IGNORE);
}

/* A batch sealed into a spare buffer that holds it is that buffer, with
 * the bytes hr__enc_seal gives; one that does not fit gets its own, and
 * the spare stays the caller's. */
static void fill_n(struct hr__enc *e, int n)
{
    for (int i = 0; i < n; i++)
        add(e, 1 + (uint32_t)(i & 1), 2 + (uint32_t)(i % 3),
            100 + (uint64_t)i * 7, 100 + (uint64_t)i * 7);
}

static void test_seal_into(void **state)
{
    struct hr__enc e;
    struct hr__batch_header h = header(3);
    uint8_t *plain, *out, *spare = malloc(1 << 16), small[16];
    size_t plain_len, len;

    (void)state;
    assert_non_null(spare);
    assert_int_equal(hr__enc_init(&e, &namer), 0);
    fill_n(&e, 3000);
    assert_int_equal(hr__enc_seal(&e, &h, &plain, &plain_len), 0);
    fill_n(&e, 3000);
    assert_int_equal(hr__enc_seal_into(&e, &h, spare, 1 << 16, &out, &len),
                     0);
    assert_ptr_equal(out, spare);
    assert_int_equal(len, plain_len);
    assert_memory_equal(out, plain, len);
    fill_n(&e, 3000);
    assert_int_equal(hr__enc_seal_into(&e, &h, small, sizeof small, &out,
                                       &len),
                     0);
    assert_ptr_not_equal(out, small);
    assert_memory_equal(out, plain, len);
    free(out);
    free(plain);
    free(spare);
    hr__enc_fini(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_seal_into),
        cmocka_unit_test(test_leaf_fast_path),
        cmocka_unit_test(test_ingest_and_dedup),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_ack_read),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
