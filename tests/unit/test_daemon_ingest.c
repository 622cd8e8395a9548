/*
 * Ingest and control without sockets (daemon/ingest.c, daemon/control.c):
 * every rejection reason, per-label lost counts, the journal hook and its
 * RETRY answer, paged and filtered dumps and resets over their protobuf
 * messages, stats, and a client read back from what stats writes.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/agg/agg_impl.h"
#include "daemon/control.h"
#include "daemon/ingest.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_batch.h"

/* Sends a batch; returns the result and checks the ack's status. */
static enum hrd_ingest_result send(struct hrd_ingest *in, const struct db_batch *x,
                                   enum hrd_reject *why)
{
    static const Hostrange__Ack__Status status[] = {
        [HRD_INGEST_OK] = HOSTRANGE__ACK__STATUS__OK,
        [HRD_INGEST_DUPLICATE] = HOSTRANGE__ACK__STATUS__DUPLICATE,
        [HRD_INGEST_REJECTED] = HOSTRANGE__ACK__STATUS__REJECTED,
        [HRD_INGEST_RETRY] = HOSTRANGE__ACK__STATUS__RETRY,
    };
    enum hrd_ingest_result res;
    Hostrange__Ack *ack;
    uint8_t *buf, *abuf;
    size_t len, alen;

    buf = db_pack(x, &len);
    res = hrd_ingest_handle(in, buf, len, &abuf, &alen, why);
    ack = hostrange__ack__unpack(NULL, alen, abuf);
    assert_non_null(ack);
    assert_int_equal(ack->status, status[res]);
    assert_int_equal(ack->seq, x->b.seq);
    hostrange__ack__free_unpacked(ack, NULL);
    free(abuf);
    free(buf);
    return res;
}

struct fixture {
    struct hra_agg agg;
    struct hrd_ingest in;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);

    hra_init(&f->agg);
    hrd_ingest_init(&f->in, &f->agg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    hrd_ingest_fini(&f->in);
    hra_fini(&f->agg);
    free(f);
    return 0;
}

/* Feeds batch x straight into a (lib/agg's door, no ingest). */
static int feed(struct hra_agg *a, const struct db_batch *x,
                struct hra_fed *fed)
{
    struct hra_feed *f = hra_feed_new(a);
    Hostrange__Batch *b;
    uint8_t *buf;
    size_t len;
    int rc;

    assert_non_null(f);
    buf = db_pack(x, &len);
    b = hostrange__batch__unpack(NULL, len, buf);
    assert_non_null(b);
    rc = hra_feed(f, b, fed);
    /* The label sets' ids outlive the feed call, not the feed. */
    assert_string_equal(hra_str_get(a, fed->node[0]), "n1");
    assert_string_equal(hra_str_get(a, fed->node[2]), "n2");
    assert_string_equal(hra_str_get(a, fed->op[0]),
                        hra_str_get(a, fed->op[1]));
    hostrange__batch__free_unpacked(b, NULL);
    free(buf);
    hra_feed_free(f);
    return rc;
}

/* The feed says what it added and what it kept without a calling path,
 * and keeps the path counters of the aggregation: every sample of a
 * batch fed under a depth cap of 0 is kept per range name only. */
static void test_feed_counts(void **state)
{
    struct fixture *f = *state;
    struct hra_fed fed;
    struct hra_agg shallow;
    struct db_batch x;

    db_init(&x, 7, 1);
    db_sample(&x, 0, 0, 100, 60);
    db_sample(&x, 0, 1, 40, 40);
    db_sample(&x, 1, 0, 90, 50);
    db_sample(&x, 2, 1, 30, 30);
    db_record(&x, 3, 500);
    assert_int_equal(feed(&f->agg, &x, &fed), 0);
    assert_int_equal(fed.pairs, 4);
    assert_int_equal(fed.records, 1);
    assert_int_equal(fed.too_deep, 0);
    assert_int_equal(fed.table_full, 0);
    assert_int_equal(f->agg.events, 2 * 4 + 1);
    assert_int_equal(f->agg.paths_too_deep, 0);

    hra_init(&shallow);
    shallow.max_depth = 0;
    assert_int_equal(feed(&shallow, &x, &fed), 0);
    assert_int_equal(fed.pairs, 4);
    assert_int_equal(fed.records, 1);
    assert_int_equal(fed.too_deep, 4);
    assert_int_equal(shallow.paths_too_deep, 4);
    assert_int_equal(shallow.npkeys, 0);
    hra_fini(&shallow);
    db_fini(&x);
}

/* Breaks a valid batch one way and expects one reason. */
static void expect_reject(struct fixture *f, void (*mutate)(struct db_batch *),
                          enum hrd_reject reason)
{
    struct db_batch x;
    enum hrd_reject why = HRD_REJECT_COUNT;
    uint64_t before = f->in.rejected[reason], events = f->agg.events;

    db_init(&x, 7, 100);
    db_sample(&x, 1, 0, 900, 400);
    db_sample(&x, 1, 1, 400, 400);
    db_record(&x, 1, 1234);
    db_lost(&x, 1, 3);
    mutate(&x);
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_REJECTED);
    assert_int_equal(why, reason);
    assert_int_equal(f->in.rejected[reason], before + 1);
    assert_int_equal(f->agg.events, events);
    db_fini(&x);
}

static char long_name[HRP_MAX_STRING + 2];

static void m_version(struct db_batch *x) { x->b.version = HRP_VERSION + 1; }
static void m_seq(struct db_batch *x) { x->b.seq = 0; }
static void m_sample_arrays(struct db_batch *x) { x->events_delta = 1; }
static void m_record_arrays(struct db_batch *x) { x->events_delta = -1; }
static void m_lost_arrays(struct db_batch *x) { x->lost_short = 1; }
static void m_label_index(struct db_batch *x) { x->label[0] = 4; }
static void m_range_index(struct db_batch *x) { x->range[1] = 3; }
static void m_record_index(struct db_batch *x) { x->rec_range[0] = 9; }
static void m_lost_index(struct db_batch *x) { x->lost_label[0] = 4; }
static void m_phase(struct db_batch *x) { x->l[3].phase = 3; }
static void m_empty_node(struct db_batch *x) { x->l[0].node_id = ""; }
static void m_empty_range(struct db_batch *x) { x->ranges[1] = ""; }
static void m_long_string(struct db_batch *x) { x->b.process_label = long_name; }
static void m_value(struct db_batch *x) { x->self[0] = 901; }

static void test_rejections(void **state)
{
    struct fixture *f = *state;
    struct db_batch x;
    enum hrd_reject why;
    uint8_t junk[300], *abuf;
    size_t alen;

    memset(long_name, 'x', HRP_MAX_STRING + 1);
    expect_reject(f, m_version, HRD_REJECT_VERSION);
    expect_reject(f, m_seq, HRD_REJECT_SEQUENCE);
    expect_reject(f, m_sample_arrays, HRD_REJECT_ARRAYS);
    expect_reject(f, m_record_arrays, HRD_REJECT_ARRAYS);
    expect_reject(f, m_lost_arrays, HRD_REJECT_ARRAYS);
    expect_reject(f, m_label_index, HRD_REJECT_INDEX);
    expect_reject(f, m_range_index, HRD_REJECT_INDEX);
    expect_reject(f, m_record_index, HRD_REJECT_INDEX);
    expect_reject(f, m_lost_index, HRD_REJECT_INDEX);
    expect_reject(f, m_phase, HRD_REJECT_PHASE);
    expect_reject(f, m_empty_node, HRD_REJECT_STRING);
    expect_reject(f, m_empty_range, HRD_REJECT_STRING);
    expect_reject(f, m_long_string, HRD_REJECT_STRING);
    expect_reject(f, m_value, HRD_REJECT_VALUE);

    memset(junk, 0xff, sizeof junk);
    assert_int_equal(hrd_ingest_handle(&f->in, junk, sizeof junk, &abuf,
                                       &alen, &why), HRD_INGEST_REJECTED);
    assert_int_equal(why, HRD_REJECT_MALFORMED);
    free(abuf);
    assert_int_equal(hrd_ingest_handle(&f->in, junk, HRP_MAX_INGEST_BYTES + 1,
                                       &abuf, &alen, &why),
                     HRD_INGEST_REJECTED);
    assert_int_equal(why, HRD_REJECT_OVERSIZE);
    free(abuf);
    /* None of it made a client, a key or an event. */
    assert_int_equal(f->in.nclients, 0);
    assert_int_equal(f->agg.nkeys, 0);

    /* A known client's invalid batch is counted against it. */
    db_init(&x, 7, 1);
    db_sample(&x, 1, 0, 10, 5);
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    m_value(&x);
    x.b.seq = 2;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_REJECTED);
    assert_int_equal(f->in.clients->rejected, 1);
    assert_int_equal(f->in.clients->max_seq, 1);
    db_fini(&x);
}

static void test_memory_budget(void **state)
{
    struct fixture *f = *state;
    struct db_batch x;
    enum hrd_reject why;

    db_init(&x, 8, 1);
    db_sample(&x, 1, 0, 10, 5);
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    /* A budget that no compaction can meet: batches are refused, counted. */
    f->agg.max_bytes = 16;
    f->agg.over_budget = 1;
    x.b.seq = 2;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_REJECTED);
    assert_int_equal(why, HRD_REJECT_MEMORY);
    assert_int_equal(f->in.rejected[HRD_REJECT_MEMORY], 1);
    /* After a reset there is room again. */
    hra_reset(&f->agg);
    f->agg.max_bytes = 1 << 20;
    x.b.seq = 3;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    db_fini(&x);
}

/* The events lost under node id `node` in the aggregation (0: none). */
static uint64_t node_lost(struct fixture *f, const char *node)
{
    uint32_t id = hra_str(&f->agg, node);

    return id != 0 ? f->agg.str.lost[id - 1] : 0;
}

/* Handles x; returns the Ack's counted_lost (the status must be
 * REJECTED). */
static int refused(struct fixture *f, const struct db_batch *x)
{
    enum hrd_reject why;
    Hostrange__Ack *ack;
    uint8_t *buf, *abuf;
    size_t len, alen;
    int counted;

    buf = db_pack(x, &len);
    assert_int_equal(hrd_ingest_handle(&f->in, buf, len, &abuf, &alen, &why),
                     HRD_INGEST_REJECTED);
    ack = hostrange__ack__unpack(NULL, alen, abuf);
    assert_non_null(ack);
    counted = ack->counted_lost;
    hostrange__ack__free_unpacked(ack, NULL);
    free(abuf);
    free(buf);
    return counted;
}

/* Every refused batch has its events counted lost under the node ids it
 * carries, where they can be read, and the client is told so. */
static void test_refused_counted_lost(void **state)
{
    struct fixture *f = *state;
    struct db_batch x;
    enum hrd_reject why;

    memset(long_name, 'x', HRP_MAX_STRING + 1);
    /* A range name over the limit: 4 events of n1, 2 of n2. */
    db_init(&x, 7, 1);
    for (int i = 0; i < 3; i++)
        db_sample(&x, 0, 0, 900, 400);
    db_sample(&x, 2, 1, 400, 400);
    db_sample(&x, 3, 0, 400, 400);
    db_record(&x, 1, 1234);
    x.ranges[1] = long_name;
    assert_int_equal(refused(f, &x), 1);
    assert_int_equal(f->in.rejected[HRD_REJECT_STRING], 1);
    assert_int_equal(node_lost(f, "n1"), 4);
    assert_int_equal(node_lost(f, "n2"), 2);
    assert_int_equal(f->in.refused_events, 6);
    assert_int_equal(f->agg.events, 0);
    /* An empty node id: its events count nowhere, the others do. */
    x.ranges[1] = "dispatch.call";
    x.l[2].node_id = "";
    x.l[3].node_id = "";
    x.b.seq = 2;
    assert_int_equal(refused(f, &x), 1);
    assert_int_equal(node_lost(f, "n1"), 8);
    assert_int_equal(node_lost(f, "n2"), 2);
    db_fini(&x);

    /* The memory budget: the client's counts too, and a batch refused
     * again (resent, or from the spool) is not counted twice. */
    db_init(&x, 8, 1);
    db_sample(&x, 2, 0, 10, 5);
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    f->agg.max_bytes = 16;
    f->agg.over_budget = 1;
    x.b.seq = 2;
    db_sample(&x, 2, 0, 10, 5);
    assert_int_equal(refused(f, &x), 1);
    assert_int_equal(refused(f, &x), 1);
    assert_int_equal(f->in.rejected[HRD_REJECT_MEMORY], 2);
    assert_int_equal(node_lost(f, "n2"), 4);
    assert_int_equal(f->in.refused_memory_events, 2);
    assert_int_equal(f->in.clients->refused, 2);
    assert_int_equal(f->in.clients->lost, 2);
    /* A batch of counters alone is taken over the budget. */
    db_fini(&x);
    db_init(&x, 8, 3);
    x.b.final_counters = 1;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    assert_true(f->in.clients->finished);
    db_fini(&x);
}

struct rows {
    int n;
    char text[128][128];
    struct hra_row row[128];
};

static int collect(const struct hra_row *r, void *arg)
{
    struct rows *rs = arg;

    assert_true(rs->n < 128);
    snprintf(rs->text[rs->n], sizeof rs->text[0], "%s/%s/%s/%s %llu lost %llu",
             r->node_id, r->phase, r->range, r->metric,
             (unsigned long long)r->count, (unsigned long long)r->lost);
    rs->row[rs->n++] = *r;
    return 0;
}

/* Cumulative lost counts: the latest per (client, label set) counts, and
 * rows carry the sum over clients and label sets of their node. */
static void test_lost_by_label(void **state)
{
    struct fixture *f = *state;
    static struct rows rs;
    struct db_batch x;
    enum hrd_reject why;

    db_init(&x, 1, 1);
    db_sample(&x, 1, 0, 10, 5);
    db_sample(&x, 3, 0, 10, 5);
    db_lost(&x, 1, 5); /* n1 warm */
    db_lost(&x, 0, 2); /* n1 cold */
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    db_fini(&x);
    db_init(&x, 1, 2);
    db_lost(&x, 1, 7); /* n1 warm, later: replaces 5 */
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    db_fini(&x);
    db_init(&x, 2, 1);
    db_lost(&x, 1, 3); /* another client, n1 warm */
    db_lost(&x, 3, 4); /* n2 warm */
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    /* A duplicate does not count twice. */
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_DUPLICATE);
    db_fini(&x);

    assert_int_equal(hra_rows(&f->agg, NULL, collect, &rs), 0);
    assert_int_equal(rs.n, 4);
    assert_string_equal(rs.text[0], "n1/warm/binding.body/inclusive 1 lost 12");
    assert_string_equal(rs.text[1], "n1/warm/binding.body/self 1 lost 12");
    assert_string_equal(rs.text[2], "n2/warm/binding.body/inclusive 1 lost 4");
    assert_int_equal(f->in.nclients, 2);
    assert_int_equal(f->in.clients->nlost, 2);
    assert_int_equal(f->in.clients->next->nlost, 2);
}

/* The journal hook: a batch it cannot keep is answered RETRY and changes
 * nothing, so the resend is new, not a duplicate. */
static int hook_result;
static int hook_calls;

static int hook(void *ctx, const uint8_t *msg, size_t len)
{
    (void)ctx;
    (void)msg;
    (void)len;
    hook_calls++;
    return hook_result;
}

static void test_journal_retry(void **state)
{
    struct fixture *f = *state;
    struct db_batch x;
    enum hrd_reject why;

    f->in.journal = hook;
    hook_calls = 0;
    db_init(&x, 3, 1);
    db_sample(&x, 1, 0, 10, 5);
    hook_result = -ENOSPC;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_RETRY);
    assert_int_equal(f->in.retries, 1);
    assert_int_equal(f->agg.events, 0);
    assert_int_equal(f->in.clients->max_seq, 0);
    assert_int_equal(f->in.clients->batches, 0);
    hook_result = 0;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
    assert_int_equal(f->agg.events, 2);
    /* A duplicate is answered without being journaled again. */
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_DUPLICATE);
    assert_int_equal(hook_calls, 2);
    /* While replaying, duplicates are not counted. */
    f->in.replaying = 1;
    assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_DUPLICATE);
    assert_int_equal(f->in.clients->duplicates, 1);
    db_fini(&x);
}

/* --- control ------------------------------------------------------------ */

static Hostrange__ControlReply *control(struct hrd_control *ctl,
                                        Hostrange__ControlRequest *q)
{
    Hostrange__ControlReply *rep;
    uint8_t *buf, *rbuf;
    size_t len, rlen;

    q->version = HRP_VERSION;
    len = hostrange__control_request__get_packed_size(q);
    buf = malloc(len + 1);
    hostrange__control_request__pack(q, buf);
    hrd_control_handle(ctl, buf, len, &rbuf, &rlen);
    rep = hostrange__control_reply__unpack(NULL, rlen, rbuf);
    assert_non_null(rep);
    assert_int_equal(rep->version, HRP_VERSION);
    free(buf);
    free(rbuf);
    return rep;
}

/* Ten nodes, each with cold and warm samples of two ranges and a record. */
static void fill(struct fixture *f)
{
    enum hrd_reject why;

    for (uint32_t p = 1; p <= 10; p++) {
        struct db_batch x;
        char node[16];

        db_init(&x, 100 + p, 1);
        snprintf(node, sizeof node, "node%02u", p);
        x.l[0].node_id = x.l[1].node_id = node;
        for (int i = 0; i < 3; i++) {
            db_sample(&x, 0, 0, 1000 * p + i, 500);
            db_sample(&x, 1, 0, 100 * p + i, 50);
            db_sample(&x, 1, 1, 10 * p + i, 10 * p + i);
        }
        db_record(&x, 1, 7 * p);
        assert_int_equal(send(&f->in, &x, &why), HRD_INGEST_OK);
        db_fini(&x);
    }
}

static void test_paged_dump(void **state)
{
    struct fixture *f = *state;
    struct hrd_control ctl = { .ingest = &f->in, .page_values = 20 };
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    static struct rows all;
    uint8_t cursor[64];
    int pages = 0, rows = 0;

    fill(f);
    assert_int_equal(hra_rows(&f->agg, NULL, collect, &all), 0);
    assert_int_equal(all.n, 10 * 7);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_DUMP;
    q.dump = &dq;
    dq.paged = 1;
    for (;;) {
        rep = control(&ctl, &q);
        assert_string_equal(rep->error, "");
        assert_int_equal(rep->body_case, HOSTRANGE__CONTROL_REPLY__BODY_DUMP);
        for (size_t i = 0; i < rep->dump->n_rows; i++, rows++) {
            Hostrange__Row *r = rep->dump->rows[i];
            assert_string_equal(r->node_id, all.row[rows].node_id);
            assert_string_equal(r->range, all.row[rows].range);
            assert_int_equal(r->count, all.row[rows].count);
            assert_true(r->median == all.row[rows].median);
            assert_true(r->p90 == all.row[rows].p90);
            assert_int_equal(r->exact, 1);
        }
        pages++;
        if (rep->dump->next_cursor.len == 0) {
            hostrange__control_reply__free_unpacked(rep, NULL);
            break;
        }
        assert_int_equal(rep->dump->next_cursor.len, 20);
        memcpy(cursor, rep->dump->next_cursor.data, 20);
        dq.cursor.data = cursor;
        dq.cursor.len = 20;
        hostrange__control_reply__free_unpacked(rep, NULL);
    }
    assert_int_equal(rows, all.n);
    assert_true(pages >= 5);

    /* Filters, unpaged. */
    memset(&dq.cursor, 0, sizeof dq.cursor);
    dq.paged = 0;
    dq.node_glob = "node0[1-3]";
    dq.phase = HRP_PHASE_WARM;
    dq.range_glob = "dispatch.*";
    rep = control(&ctl, &q);
    assert_int_equal(rep->dump->n_rows, 3 * 2);
    assert_int_equal(rep->dump->next_cursor.len, 0);
    assert_string_equal(rep->dump->rows[0]->node_id, "node01");
    assert_int_equal(rep->dump->rows[1]->metric, HRP_METRIC_SELF);
    hostrange__control_reply__free_unpacked(rep, NULL);

    /* Bad phase and bad cursor are errors. */
    dq.phase = 7;
    rep = control(&ctl, &q);
    assert_string_equal(rep->error, "bad phase in dump request");
    hostrange__control_reply__free_unpacked(rep, NULL);
    dq.phase = 0;
    dq.cursor.data = cursor;
    dq.cursor.len = 3;
    rep = control(&ctl, &q);
    assert_string_equal(rep->error, "bad cursor in dump request");
    hostrange__control_reply__free_unpacked(rep, NULL);
}

static void test_reset_and_stats(void **state)
{
    struct fixture *f = *state;
    struct hrd_control ctl = { .ingest = &f->in };
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__ResetRequest rq = HOSTRANGE__RESET_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ControlReply *rep;

    fill(f);
    assert_int_equal(f->agg.nkeys, 10 * 4);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_RESET;
    q.reset = &rq;
    rq.node_glob = "node1*";
    rq.phase = HRP_PHASE_COLD;
    /* A reset that cannot be journaled is refused. */
    ctl.journal_reset = hook;
    hook_result = -EROFS;
    rep = control(&ctl, &q);
    assert_true(strstr(rep->error, "nothing was reset") != NULL);
    hostrange__control_reply__free_unpacked(rep, NULL);
    assert_int_equal(f->agg.nkeys, 40);
    hook_result = 0;
    rep = control(&ctl, &q);
    assert_string_equal(rep->error, "");
    assert_int_equal(rep->reset->keys, 1);
    hostrange__control_reply__free_unpacked(rep, NULL);
    assert_int_equal(f->agg.nkeys, 39);
    /* The same reset replayed from its bytes drops nothing more. */
    {
        uint8_t buf[128];
        size_t len = hostrange__reset_request__pack(&rq, buf);
        assert_int_equal(hrd_control_apply_reset(&f->agg, buf, len), 0);
        assert_int_equal(hrd_control_apply_reset(&f->agg, buf, 1) < 0 ||
                             f->agg.nkeys == 39, 1);
    }

    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    ctl.now_ns = ctl.start_ns + 2000000000u;
    rep = control(&ctl, &q);
    assert_int_equal(rep->body_case, HOSTRANGE__CONTROL_REPLY__BODY_STATS);
    assert_int_equal(rep->stats->keys, 39);
    assert_int_equal(rep->stats->uptime_ns, 2000000000u);
    assert_int_equal(rep->stats->n_clients, 10);
    assert_int_equal(rep->stats->n_clocks, 1);
    assert_string_equal(rep->stats->clocks[0], "tsc");
    assert_int_equal(rep->stats->exact_cap, HRA_EXACT_CAP_DEFAULT);
    assert_int_equal(rep->stats->memory_limit, HRA_MAX_BYTES_DEFAULT);
    assert_int_equal(rep->stats->memory_bytes, f->agg.bytes);
    assert_null(rep->stats->state);
    assert_int_equal(rep->stats->n_rejections, HRD_REJECT_COUNT + 1);
    assert_string_equal(rep->stats->rejections[HRD_REJECT_SEQUENCE]->name,
                        "sequence");
    /* Oldest client first. */
    assert_int_equal(rep->stats->clients[0]->pid, 101);
    assert_int_equal(rep->stats->clients[9]->events, 10);
    hostrange__control_reply__free_unpacked(rep, NULL);

    /* Reset everything. */
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_RESET;
    rq.node_glob = "";
    rq.phase = 0;
    rep = control(&ctl, &q);
    assert_int_equal(rep->reset->keys, 39);
    hostrange__control_reply__free_unpacked(rep, NULL);
    assert_int_equal(f->agg.nkeys, 0);
    assert_int_equal(f->agg.events, 0);
    assert_int_equal(f->in.nclients, 10);
}

struct oom_batch {
    struct hrd_ingest *in;
    const uint8_t *buf;
    size_t len;
};

/* In the child short of memory: 0 when the batch was answered RETRY and
 * counted as a retry, not as a rejection. */
static int ingest_short_of_memory(void *ctx)
{
    const struct oom_batch *x = ctx;
    enum hrd_reject why;
    enum hrd_ingest_result res;
    Hostrange__Ack *ack;
    uint8_t *abuf;
    size_t alen;
    int rc = 0;

    res = hrd_ingest_handle(x->in, x->buf, x->len, &abuf, &alen, &why);
    if (res != HRD_INGEST_RETRY)
        return 1;
    if (x->in->retries != 1 || x->in->rejected[HRD_REJECT_MALFORMED] != 0)
        return 2;
    ack = hostrange__ack__unpack(NULL, alen, abuf);
    if (ack == NULL || ack->status != HOSTRANGE__ACK__STATUS__RETRY)
        rc = 3;
    if (ack != NULL)
        hostrange__ack__free_unpacked(ack, NULL);
    free(abuf);
    return rc;
}

/*
 * A batch that decodes to more memory than the daemon has is not
 * malformed: it is answered RETRY (nothing of it taken; the client sends
 * it again), where it was rejected and lost. 3.5 Mi one-byte lost_label
 * values, 14 MiB decoded, in a child limited to its use plus 8 MiB.
 */
static void test_out_of_memory_is_retry(void **state)
{
    enum { N = 7 << 19 };
    struct fixture *f = *state;
    Hostrange__Batch b = HOSTRANGE__BATCH__INIT, *back;
    struct oom_batch x;
    uint32_t *v = calloc(N, sizeof *v);
    uint8_t *buf;
    size_t len;
    int rc;

    assert_non_null(v);
    b.version = HRP_VERSION;
    b.pid = 77;
    b.seq = 1;
    b.n_lost_label = N;
    b.lost_label = v;
    len = hostrange__batch__get_packed_size(&b);
    assert_true(len <= HRP_MAX_INGEST_BYTES);
    buf = malloc(len);
    assert_non_null(buf);
    assert_int_equal(hostrange__batch__pack(&b, buf), len);
    free(v);
    /* With memory, it decodes. */
    back = hostrange__batch__unpack(NULL, len, buf);
    assert_non_null(back);
    assert_int_equal(back->n_lost_label, N);
    hostrange__batch__free_unpacked(back, NULL);
    x.in = &f->in;
    x.buf = buf;
    x.len = len;
    rc = harness_short_of_memory(ingest_short_of_memory, &x, 8u << 20);
    free(buf);
    if (rc < 0)
        skip();
    assert_int_equal(rc, 0);
}

/* Fills every field of x, found through its descriptor so that a field
 * added to ClientStats is filled too, with a value of its own: the clock
 * path and order with names the daemon knows, node ids with n1 and n2. */
static void fill_every_field(Hostrange__ClientStats *x, char **nodes)
{
    const ProtobufCMessageDescriptor *d = &hostrange__client_stats__descriptor;

    hostrange__client_stats__init(x);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        char *p = (char *)x + f->offset;

        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            assert_int_equal(f->type, PROTOBUF_C_TYPE_STRING);
            *(size_t *)((char *)x + f->quantifier_offset) = 2;
            *(char ***)p = nodes;
            continue;
        }
        switch (f->type) {
        case PROTOBUF_C_TYPE_UINT32:
            *(uint32_t *)p = 100 + i;
            break;
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
            *(uint64_t *)p = 1000 + i;
            break;
        case PROTOBUF_C_TYPE_DOUBLE:
            *(double *)p = 0.25 + i;
            break;
        case PROTOBUF_C_TYPE_BOOL:
            *(protobuf_c_boolean *)p = 1;
            break;
        case PROTOBUF_C_TYPE_STRING:
            *(const char **)p = strcmp(f->name, "clock_path") == 0
                                    ? HRP_CLOCK_PATH_WAITING
                                : strcmp(f->name, "clock_order") == 0
                                    ? HRP_CLOCK_ORDER_RDTSCP
                                    : f->name;
            break;
        default:
            fail_msg("ClientStats.%s: a type this test does not fill",
                     f->name);
        }
    }
}

/* What stats and a snapshot write of a client reads back as the same
 * client (hrd_ingest_client_restore), every field of ClientStats. */
static void test_client_restore(void **state)
{
    struct fixture *f = *state;
    char *nodes[] = { "n1", "n2" }, *back[HRD_CLIENT_NODES];
    Hostrange__ClientStats x, y;
    struct hrd_client *c;
    uint8_t *bx, *by;
    size_t nx, ny;

    fill_every_field(&x, nodes);
    c = hrd_ingest_client(&f->in, x.pid, x.instance, x.process_label,
                          x.clock);
    assert_non_null(c);
    assert_int_equal(hrd_ingest_client_restore(&f->in, c, &x), 0);
    hrd_ingest_client_stats(&y, c);
    hrd_ingest_client_nodes(&y, c, &f->agg, back);
    nx = hostrange__client_stats__get_packed_size(&x);
    ny = hostrange__client_stats__get_packed_size(&y);
    bx = malloc(nx);
    by = malloc(ny);
    assert_non_null(bx);
    assert_non_null(by);
    hostrange__client_stats__pack(&x, bx);
    hostrange__client_stats__pack(&y, by);
    assert_int_equal(ny, nx);
    assert_memory_equal(by, bx, nx);
    free(bx);
    free(by);

    /* Fields that do not hold together are refused. */
    x.clock_step_ns = -1;
    assert_int_equal(hrd_ingest_client_restore(&f->in, c, &x), -EBADMSG);
    x.clock_step_ns = 1;
    x.node_ids[1] = "";
    assert_int_equal(hrd_ingest_client_restore(&f->in, c, &x), -EBADMSG);
    x.node_ids[1] = "n2";
    x.n_node_ids = HRD_CLIENT_NODES + 1;
    assert_int_equal(hrd_ingest_client_restore(&f->in, c, &x), -EBADMSG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rejections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_counted_lost, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lost_by_label, setup, teardown),
        cmocka_unit_test_setup_teardown(test_journal_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory_is_retry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_paged_dump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feed_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_and_stats, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_client_restore, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
