/*
 * The observer cost without a daemon process (lib/agg/observer.c, the
 * children of ingest, snapshot and report): the children of each key, how
 * batches with a children array of the wrong length are rejected, children
 * kept in snapshots (and version 1 snapshots still loading), calibrations
 * derived from fixed samples, the observer fields and corrections of rows,
 * and the report's observer columns in every format.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/agg/agg_impl.h"
#include "daemon/ingest.h"
#include "lib/run/recfile.h"
#include "lib/agg/observer.h"
#include "lib/view/report.h"
#include "daemon/save.h"
#include "daemon/snapshot.h"
#include "lib/run/runkey.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "tests/lib/harness_batch.h"
#include "tests/lib/harness.h"

/* x within a relative 1e-9 of y. */
static int approx(double x, double y)
{
    return fabs(x - y) < 1e-9 * (1 + fabs(y));
}

struct mem {
    struct hra_agg agg;
    struct hrd_ingest in;
};

static void mem_init(struct mem *m)
{
    hra_init(&m->agg);
    hrd_ingest_init(&m->in, &m->agg);
}

static void mem_fini(struct mem *m)
{
    hrd_ingest_fini(&m->in);
    hra_fini(&m->agg);
}

/* Hands a batch to ingest; returns the result and the ack's error text in
 * why (when not NULL). */
static enum hrd_ingest_result handle(struct hrd_ingest *in,
                                     const struct db_batch *x, char *why,
                                     size_t whylen)
{
    enum hrd_ingest_result res;
    enum hrd_reject reason;
    Hostrange__Ack *a;
    uint8_t *buf, *ack;
    size_t len, alen;

    buf = db_pack(x, &len);
    res = hrd_ingest_handle(in, buf, len, &ack, &alen, &reason);
    assert_non_null(ack);
    a = hostrange__ack__unpack(NULL, alen, ack);
    assert_non_null(a);
    if (why != NULL)
        snprintf(why, whylen, "%s", a->error);
    hostrange__ack__free_unpacked(a, NULL);
    free(ack);
    free(buf);
    return res;
}

/* The key of (node, "add", "cpu", phase, range), or NULL. */
static struct hra_key *find_key(struct hra_agg *a, const char *node,
                                unsigned phase, const char *range)
{
    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hra_key *k = a->keys[i];

        if (strcmp(hra_str_get(a, k->node), node) == 0 &&
            k->phase == phase &&
            strcmp(hra_str_get(a, k->range), range) == 0)
            return k;
    }
    return NULL;
}

/* Batch seq of client 3: binding.body (warm, node n1) inclusive 1000, 2000,
 * 3000 with `nchildren` children counts from `children`. */
static void body_batch(struct db_batch *x, uint64_t seq,
                       uint32_t *children, size_t nchildren)
{
    db_init(x, 3, seq);
    for (uint64_t i = 0; i < 3; i++)
        db_sample(x, 1, 0, 1000 * (i + 1), 500);
    for (size_t i = 0; i < nchildren && i < 3; i++)
        x->children[i] = children[i];
}

static void test_children_per_key(void **state)
{
    uint32_t children[3] = { 2, 3, 4 };
    struct db_batch x;
    struct mem m;
    struct hra_key *k;
    char why[64];

    (void)state;
    mem_init(&m);
    body_batch(&x, 1, children, 3);
    assert_int_equal(handle(&m.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    k = find_key(&m.agg, "n1", HRP_PHASE_WARM, "binding.body");
    assert_non_null(k);
    assert_int_equal(k->pairs, 3);
    assert_int_equal(k->children, 9);

    /* A batch without children: calls, no children. */
    body_batch(&x, 2, NULL, 0);
    assert_int_equal(handle(&m.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(k->pairs, 6);
    assert_int_equal(k->children, 9);

    /* A stream with fewer samples than the batch says: rejected, nothing
     * taken. */
    body_batch(&x, 3, children, 3);
    x.events_delta = 1;
    assert_int_equal(handle(&m.in, &x, why, sizeof why),
                     HRD_INGEST_REJECTED);
    db_fini(&x);
    assert_string_equal(why, "rejected: array_length");
    assert_int_equal(m.in.rejected[HRD_REJECT_ARRAYS], 1);
    assert_int_equal(k->pairs, 6);
    assert_int_equal(k->children, 9);
    /* Events without a stream: rejected as well. */
    db_init(&x, 3, 4);
    x.events_delta = 1;
    assert_int_equal(handle(&m.in, &x, NULL, 0), HRD_INGEST_REJECTED);
    db_fini(&x);
    assert_int_equal(m.in.rejected[HRD_REJECT_ARRAYS], 2);

    /* In histogram mode the sum stays exact. */
    assert_int_equal(hra_key_to_hist(&m.agg, k), 0);
    body_batch(&x, 5, children, 3);
    assert_int_equal(handle(&m.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_false(k->exact);
    assert_int_equal(k->pairs, 9);
    assert_int_equal(k->children, 18);

    /* A reset key starts again from nothing. */
    {
        struct hra_filter f = { "n1", NULL, NULL, "binding.*", 0 };

        assert_int_equal(hra_reset_filtered(&m.agg, &f), 1);
    }
    body_batch(&x, 6, children, 3);
    assert_int_equal(handle(&m.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    k = find_key(&m.agg, "n1", HRP_PHASE_WARM, "binding.body");
    assert_non_null(k);
    assert_int_equal(k->pairs, 3);
    assert_int_equal(k->children, 9);
    mem_fini(&m);
}

static char g_dir[256];

static int dir_setup(void **state)
{
    harness_mkdtemp(g_dir, sizeof g_dir, "calib");
    *state = g_dir;
    return 0;
}

static int dir_teardown(void **state)
{
    char path[512];

    snprintf(path, sizeof path, "%s/snap", (char *)*state);
    unlink(path);
    rmdir(*state);
    return 0;
}

/* Writes a's state as snapshot "snap" in folder dir and loads it into b
 * (initialised here). */
static void snapshot_round_trip(struct mem *a, struct mem *b, const char *dir)
{
    struct hrd_snapshot_loaded sl;
    char path[512], err[600];

    snprintf(path, sizeof path, "%s/snap", dir);
    assert_int_equal(hrd_snapshot_write(path, &a->agg, &a->in, 1, err,
                                        sizeof err), 0);
    mem_init(b);
    assert_int_equal(hrd_snapshot_load(path, &b->agg, &b->in, &sl), 0);
    assert_int_equal(sl.legacy, 0);
}

/* Snapshots keep every key's children, in both modes. */
static void test_snapshot_children(void **state)
{
    uint32_t children[3] = { 1, 0, 7 };
    struct db_batch x;
    struct mem a, b;
    int dfd = open(*state, O_RDONLY | O_DIRECTORY);

    assert_true(dfd >= 0);
    mem_init(&a);
    body_batch(&x, 1, children, 3);
    db_sample(&x, 3, 1, 400, 400);
    {
        uint32_t four[4] = { 1, 0, 7, 5 };

        memcpy(x.children, four, sizeof four);
        assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    }
    db_fini(&x);
    assert_int_equal(hra_key_to_hist(&a.agg,
                                         find_key(&a.agg, "n2",
                                                  HRP_PHASE_WARM,
                                                  "dispatch.call")),
                     0);
    snapshot_round_trip(&a, &b, *state);
    assert_int_equal(find_key(&b.agg, "n1", HRP_PHASE_WARM,
                              "binding.body")->children, 8);
    assert_int_equal(find_key(&b.agg, "n2", HRP_PHASE_WARM,
                              "dispatch.call")->children, 5);
    assert_false(find_key(&b.agg, "n2", HRP_PHASE_WARM,
                          "dispatch.call")->exact);
    mem_fini(&b);
    mem_fini(&a);
    unlinkat(dfd, "snap", 0);
    close(dfd);
}

/* Little-endian writers for a hand-made snapshot. */
static size_t put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 4;
}

static size_t put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 8;
}

/* A snapshot of format version 1 (keys without children) still loads. */
static void test_snapshot_version_1(void **state)
{
    static const char *const strs[4] = { "n", "add", "cpu", "r" };
    struct hrd_snapshot_loaded sl;
    struct hrr_recfile f;
    struct hrs_summary si, ss;
    struct mem b;
    uint8_t rec[256];
    size_t n;
    int dfd = open(*state, O_RDONLY | O_DIRECTORY);

    assert_true(dfd >= 0);
    assert_int_equal(hrr_recfile_open(&f, dfd, "snap", HRR_SNAPSHOT_MAGIC),
                     0);
    /* H: version 1, covers 0, one node and one range ranked, next serial
     * 1, four strings, one key, no client. */
    n = put32(rec, 1);
    n += put64(rec + n, 0);
    n += put32(rec + n, 1);
    n += put32(rec + n, 1);
    n += put32(rec + n, 1);
    n += put32(rec + n, 4);
    n += put32(rec + n, 1);
    n += put64(rec + n, 0);
    assert_int_equal(hrr_recfile_put(&f, 'H', rec, n), 0);
    /* S: strings 1..4 with ranks (the node and the range ranked 1). */
    n = put32(rec, 1);
    n += put32(rec + n, 4);
    for (int i = 0; i < 4; i++) {
        n += put32(rec + n, i == 0 || i == 3);
        n += put32(rec + n, (uint32_t)strlen(strs[i]));
        memcpy(rec + n, strs[i], strlen(strs[i]));
        n += strlen(strs[i]);
    }
    assert_int_equal(hrr_recfile_put(&f, 'S', rec, n), 0);
    /* K: key (1, 2, 3, warm, 4), serial 0, exact, one pair, no record,
     * then (version 1) no children: one event, inclusive 300 (2 bytes),
     * inclusive - self 100 (1 byte). */
    n = put32(rec, 1);
    n += put32(rec + n, 2);
    n += put32(rec + n, 3);
    n += put32(rec + n, HRP_PHASE_WARM);
    n += put32(rec + n, 4);
    n += put32(rec + n, 0);
    rec[n++] = 1;
    n += put64(rec + n, 1);
    n += put64(rec + n, 0);
    n += put64(rec + n, 4);
    rec[n++] = 2 | 1 << 4;
    rec[n++] = 300 & 0xff;
    rec[n++] = 300 >> 8;
    rec[n++] = 100;
    assert_int_equal(hrr_recfile_put(&f, 'K', rec, n), 0);
    n = put32(rec, 1);
    n += put64(rec + n, 0);
    assert_int_equal(hrr_recfile_put(&f, 'E', rec, n), 0);
    assert_int_equal(hrr_recfile_flush(&f), 0);
    hrr_recfile_close(&f);

    mem_init(&b);
    {
        char path[512];

        snprintf(path, sizeof path, "%s/snap", (const char *)*state);
        assert_int_equal(hrd_snapshot_load(path, &b.agg, &b.in, &sl), 0);
    }
    assert_int_equal(sl.legacy, 1);
    assert_int_equal(sl.keys, 1);
    assert_int_equal(b.agg.nkeys, 1);
    assert_int_equal(b.agg.keys[0]->pairs, 1);
    assert_int_equal(b.agg.keys[0]->children, 0);
    assert_int_equal(hra_key_summaries(&b.agg, b.agg.keys[0], &si, &ss),
                     0);
    assert_true(si.median == 300.0 && ss.median == 200.0);
    mem_fini(&b);
    unlinkat(dfd, "snap", 0);
    close(dfd);
}

/* The key (node, op, backend, phase, range) of a, made when missing. */
static struct hra_key *key(struct hra_agg *a, const char *node,
                           const char *op, const char *backend,
                           unsigned phase, const char *range)
{
    uint32_t n = hra_str(a, node), o = hra_str(a, op);
    uint32_t b = hra_str(a, backend), r = hra_str(a, range);
    struct hra_key *k;

    assert_true(n != 0 && o != 0 && b != 0 && r != 0);
    hra_rank_node(a, n);
    hra_rank_range(a, r);
    k = hra_agg_key(a, n, o, b, phase, r);
    assert_non_null(k);
    return k;
}

/* A calibration of label `op`: mid and inner pairs (inclusive, self) and
 * timer records, n of each. */
static void calibration(struct hra_agg *a, const char *op, unsigned phase,
                        const uint64_t (*mid)[2], const uint64_t (*inner)[2],
                        const uint64_t *timer, int n, int with_timer)
{
    struct hra_key *m = key(a, HRP_CALIB_NODE, op, "tsc", phase,
                            HRP_CALIB_MID);
    struct hra_key *i = key(a, HRP_CALIB_NODE, op, "tsc", phase,
                            HRP_CALIB_INNER);

    for (int j = 0; j < n; j++) {
        assert_int_equal(hra_add(a, m, mid[j][0], mid[j][1]), 0);
        assert_int_equal(hra_add(a, i, inner[j][0], inner[j][1]), 0);
    }
    if (with_timer) {
        struct hra_key *t = key(a, HRP_CALIB_NODE, op, "tsc", phase,
                                HRP_CALIB_TIMER);

        for (int j = 0; j < n; j++)
            assert_int_equal(hra_add_record(a, t, timer[j]), 0);
    }
}

static void test_calib_collect(void **state)
{
    static const uint64_t mid_a[3][2] = { { 40, 30 }, { 50, 40 }, { 60, 40 } };
    static const uint64_t inner_a[3][2] = { { 10, 10 }, { 10, 10 },
                                            { 20, 20 } };
    static const uint64_t timer_a[3] = { 15, 16, 17 };
    static const uint64_t mid_b[1][2] = { { 100, 80 } };
    static const uint64_t inner_b[1][2] = { { 20, 20 } };
    static const uint64_t timer_b[1] = { 5 };
    static const uint64_t mid_e[1][2] = { { 10, 5 } };
    static const uint64_t inner_e[1][2] = { { 30, 30 } };
    struct hra_filter fa = { HRP_CALIB_NODE, "a", NULL, NULL, 0 };
    struct hra_calib *c;
    struct hra_agg a;
    size_t n;

    (void)state;
    hra_init(&a);
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_null(c);
    assert_int_equal(n, 0);

    calibration(&a, "a", HRP_PHASE_WARM, mid_a, inner_a, timer_a, 3, 1);
    calibration(&a, "b", HRP_PHASE_WARM, mid_b, inner_b, timer_b, 1, 1);
    /* No timer: not a calibration. In the cold phase: not one either. */
    calibration(&a, "c", HRP_PHASE_WARM, mid_b, inner_b, timer_b, 1, 0);
    calibration(&a, "d", HRP_PHASE_COLD, mid_b, inner_b, timer_b, 1, 1);
    /* Another node's keys of the same names are not a calibration. */
    key(&a, "calibration2", "f", "tsc", HRP_PHASE_WARM, HRP_CALIB_MID);
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_int_equal(n, 2);
    /* The most recent first. */
    assert_string_equal(c[0].label, "b");
    assert_string_equal(c[0].clock, "tsc");
    assert_true(c[0].child_ns == 80.0 && c[0].residue_ns == 60.0 &&
                c[0].empty_ns == 20.0 && c[0].timer_ns == 5.0);
    assert_int_equal(c[0].calls, 1);
    assert_string_equal(c[1].label, "a");
    /* Means: 50 - 40/3, 110/3 - 40/3, 40/3, 16. */
    assert_true(approx(c[1].child_ns, 110.0 / 3) &&
                approx(c[1].residue_ns, 70.0 / 3) &&
                approx(c[1].empty_ns, 40.0 / 3) && approx(c[1].timer_ns, 16.0));
    /* The standard error of inner's mean (values 10, 10, 20): sd 5.7735
     * over the root of 3; the timer's step: 1. */
    assert_true(approx(c[1].empty_err_ns, sqrt(100.0 / 3) / sqrt(3.0)));
    assert_true(approx(c[1].step_ns, 1.0));
    assert_int_equal(c[1].calls, 3);
    free(c);

    /* Calibrated again (reset, then new keys): a is the most recent. */
    assert_int_equal(hra_reset_filtered(&a, &fa), 3);
    calibration(&a, "a", HRP_PHASE_WARM, mid_b, inner_b, timer_a, 1, 1);
    /* A difference below 0 is given as 0. */
    calibration(&a, "e", HRP_PHASE_WARM, mid_e, inner_e, timer_b, 1, 1);
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(c[0].label, "e");
    assert_true(c[0].child_ns == 0.0 && c[0].residue_ns == 0.0 &&
                c[0].empty_ns == 30.0);
    assert_string_equal(c[1].label, "a");
    assert_true(c[1].child_ns == 80.0 && c[1].timer_ns == 15.0);
    assert_string_equal(c[2].label, "b");
    free(c);
    hra_fini(&a);
}

/* A saved run keeps every field of a calibration: the RunEnd of the last
 * page of a save holds what hra_calib_collect derived, standard errors and
 * clock step included, and reads back the same (hra_calib_from_message). */
static void test_calib_saved(void **state)
{
    static const uint64_t mid_a[3][2] = { { 40, 30 }, { 50, 40 }, { 60, 40 } };
    static const uint64_t inner_a[3][2] = { { 10, 10 }, { 10, 10 },
                                            { 20, 20 } };
    static const uint64_t timer_a[3] = { 15, 16, 17 };
    Hostrange__SaveReply r;
    struct hra_calib *c, back;
    uint32_t cursor = 0;
    struct mem m;
    size_t n;
    int done;

    (void)state;
    mem_init(&m);
    calibration(&m.agg, "a", HRP_PHASE_WARM, mid_a, inner_a, timer_a, 3, 1);
    assert_int_equal(hra_calib_collect(&m.agg, &c, &n), 0);
    assert_int_equal(n, 1);
    assert_true(c[0].child_err_ns > 0 && c[0].residue_err_ns > 0 &&
                c[0].empty_err_ns > 0 && c[0].step_ns == 1.0);
    assert_int_equal(hrd_save_page(&m.agg, &m.in, &cursor, 0, 0,
                                   HRR_FORMAT_NEWEST, NULL, &r, &done),
                     0);
    assert_true(done);
    assert_non_null(r.end);
    assert_int_equal(r.end->n_calibrations, 1);
    hra_calib_from_message(&back, r.end->calibrations[0]);
    assert_string_equal(back.label, "a");
    assert_string_equal(back.clock, c[0].clock);
    assert_true(back.child_ns == c[0].child_ns &&
                back.residue_ns == c[0].residue_ns &&
                back.empty_ns == c[0].empty_ns &&
                back.timer_ns == c[0].timer_ns);
    assert_int_equal(back.calls, c[0].calls);
    assert_true(back.child_err_ns == c[0].child_err_ns);
    assert_true(back.residue_err_ns == c[0].residue_err_ns);
    assert_true(back.empty_err_ns == c[0].empty_err_ns);
    assert_true(back.step_ns == c[0].step_ns);
    hrd_save_page_free(&r);
    free(c);
    mem_fini(&m);
}

/* The robust mean: an interruption is left out, and the mean of readings
 * in whole steps of 10 resolves a fraction of a step. */
static void test_calib_robust(void **state)
{
    uint64_t v[101];
    double mean, err, step, sd;

    (void)state;
    for (int i = 0; i < 70; i++)
        v[i] = 20;
    for (int i = 70; i < 100; i++)
        v[i] = 30;
    v[100] = 5000; /* cut: 4 x p90 (30) + 50 = 170 */
    hra_calib_robust(v, 101, &mean, &err, &step);
    sd = sqrt((70 * 3.0 * 3.0 + 30 * 7.0 * 7.0) / 99);
    assert_true(approx(mean, 23.0));
    assert_true(approx(err, sd / 10));
    assert_true(approx(step, 10.0));
    /* All equal: no step, no error. */
    for (int i = 0; i < 10; i++)
        v[i] = 7;
    hra_calib_robust(v, 10, &mean, &err, &step);
    assert_true(mean == 7.0 && err == 0.0 && step == 0.0);
    hra_calib_robust(v, 0, &mean, &err, &step);
    assert_true(mean == 0.0 && err == 0.0 && step == 0.0);
}

/* A calibration whose machine drifts: the error of the robust mean is
 * that of the means of blocks of the values in the order they came, not
 * that of single values taken as independent. */
static void test_calib_robust_drift(void **state)
{
    enum { N = 8 * HRA_CALIB_BLOCK_MIN };
    uint64_t v[N];
    double mean, err, step, sd;

    (void)state;
    /* The first half 20, the second 30: blocks of 20 and blocks of 30. */
    for (int i = 0; i < N; i++)
        v[i] = i < N / 2 ? 20 : 30;
    hra_calib_robust(v, N, &mean, &err, &step);
    assert_true(approx(mean, 25.0));
    /* Block means 20 (4) and 30 (4): sd sqrt(8 * 25 / 7), over root 8. */
    assert_true(approx(err, sqrt(8 * 25.0 / 7) / sqrt(8.0)));
    assert_true(approx(step, 10.0));
    for (int i = 1; i < N; i++)
        assert_true(v[i - 1] <= v[i]);
    /* The same values in turns: every block mean is 25, and the error is
     * that of single values (sd 5.005 over the root of N). */
    for (int i = 0; i < N; i++)
        v[i] = i % 2 ? 30 : 20;
    hra_calib_robust(v, N, &mean, &err, &step);
    sd = sqrt(N * 25.0 / (N - 1));
    assert_true(approx(mean, 25.0));
    assert_true(approx(err, sd / sqrt((double)N)));
    /* An interruption past the cut counts in neither (v came back
     * sorted: in turns again). */
    for (int i = 0; i < N; i++)
        v[i] = i % 2 ? 30 : 20;
    v[0] = 100000;
    hra_calib_robust(v, N, &mean, &err, &step);
    assert_true(mean > 25.0 && mean < 25.1);
    /* The error of single values, about 5 over the root of 511. */
    assert_true(err > 0.21 && err < 0.23);
}

/* The fan and its flat twin: the cost of a child scope around work. */
static void test_calib_fan(void **state)
{
    static const uint64_t mid[1][2] = { { 100, 80 } };
    static const uint64_t inner[1][2] = { { 20, 20 } };
    static const uint64_t timer[1] = { 30 };
    struct hra_key *fan, *child, *flat;
    struct hra_calib *c;
    struct hra_agg a;
    size_t n;

    (void)state;
    hra_init(&a);
    calibration(&a, "f", HRP_PHASE_WARM, mid, inner, timer, 1, 1);
    fan = key(&a, HRP_CALIB_NODE, "f", "tsc", HRP_PHASE_WARM, HRP_CALIB_FAN);
    child = key(&a, HRP_CALIB_NODE, "f", "tsc", HRP_PHASE_WARM,
                HRP_CALIB_FAN_CHILD);
    flat = key(&a, HRP_CALIB_NODE, "f", "tsc", HRP_PHASE_WARM,
               HRP_CALIB_FLAT);
    /* Without the flat twin's samples: the empty nesting's figures. */
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_int_equal(n, 1);
    assert_true(approx(c[0].child_ns, 80.0) && approx(c[0].residue_ns, 60.0));
    free(c);
    /* 8 children per call; fan 3000..3020 (mean 3010), flat 2600..2620
     * (mean 2610), children 340..360 (mean 350); the fan's self times are
     * what its children leave of it, 280, 210 and 140 (mean 210). */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(hra_add(&a, fan, 3000 + 10 * i, 280 - 70 * i),
                         0);
        assert_int_equal(hra_add(&a, flat, 2600 + 10 * i, 2600 + 10 * i),
                         0);
        for (int j = 0; j < 8; j++)
            assert_int_equal(hra_add(&a, child, 340 + 10 * i,
                                         340 + 10 * i), 0);
    }
    fan->children = 24;
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_int_equal(n, 1);
    /* child = (3010 - 2610) / 8 = 50; the residue is (210 - 20) / 8, the
     * same as child less the bias of a child's pair: the work of a child
     * is (2610 - 20) / 8 = 323.75, its bias 350 - 323.75, 50 - 26.25. */
    assert_true(approx(c[0].child_ns, 50.0));
    assert_true(approx(c[0].residue_ns, 23.75));
    assert_true(approx(c[0].empty_ns, 20.0));
    assert_true(c[0].step_ns == 0.0); /* one timer value: no gap */
    assert_true(c[0].child_err_ns > 0 && c[0].residue_err_ns > 0);
    /* Not of the fast path: its bias is the empty scope's. */
    assert_true(approx(c[0].bias_ns, 20.0));
    free(c);
    /* Of the fast path (its clients'), the bias of a child around work:
     * (8 x 350 - 2610) / 7. */
    for (uint32_t i = 0; i < a.nkeys; i++)
        a.keys[i]->clock_paths = HRP_PATH_FAST;
    assert_int_equal(hra_calib_collect(&a, &c, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].clock_paths, HRP_PATH_FAST);
    assert_true(approx(c[0].bias_ns, 190.0 / 7));
    assert_true(approx(c[0].child_ns, 50.0) && approx(c[0].empty_ns, 20.0));
    free(c);
    hra_fini(&a);
}

/* Each path's batches mark their client and the keys they feed; a key fed
 * by both paths is mixed; snapshots keep the keys' paths. */
static void test_clock_paths(void **state)
{
    struct db_batch x;
    struct mem a, b;
    struct hra_key *k;
    char why[64];
    int dfd = open(*state, O_RDONLY | O_DIRECTORY);

    assert_true(dfd >= 0);
    mem_init(&a);
    body_batch(&x, 1, NULL, 0);
    x.b.clock_path = HRP_CLOCK_PATH_FAST;
    x.b.clock_order = "rdtsc";
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    k = find_key(&a.agg, "n1", HRP_PHASE_WARM, "binding.body");
    assert_non_null(k);
    assert_int_equal(k->clock_paths, HRP_PATH_FAST);
    assert_int_equal(a.in.clients->clock_path, HRP_PATH_FAST);
    /* A client of before paths were named, that states a clock order:
     * its reads were ordered. Its key n1 is then mixed. */
    db_init(&x, 4, 1);
    db_sample(&x, 1, 0, 1000, 500);
    x.b.clock_order = "rdtsc;lfence..lfence;rdtsc";
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(a.in.clients->clock_path, HRP_PATH_ORDERED);
    assert_int_equal(k->clock_paths, HRP_PATH_FAST | HRP_PATH_ORDERED);
    /* One that states neither: not known, adds no path. */
    db_init(&x, 5, 1);
    db_sample(&x, 3, 1, 400, 400);
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(a.in.clients->clock_path, 0);
    assert_int_equal(find_key(&a.agg, "n2", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths, 0);
    /* An ordered client feeds n2 too. */
    db_init(&x, 6, 1);
    db_sample(&x, 3, 1, 400, 400);
    x.b.clock_path = HRP_CLOCK_PATH_ORDERED;
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(find_key(&a.agg, "n2", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths,
                     HRP_PATH_ORDERED);
    /* The fast path with waiting reads (its clock order says so): a path
     * of its own, kept apart from plain reads'. */
    db_init(&x, 8, 1);
    x.l[3].node_id = "n4";
    db_sample(&x, 3, 1, 400, 400);
    x.b.clock_path = HRP_CLOCK_PATH_FAST;
    x.b.clock_order = HRP_CLOCK_ORDER_RDTSCP;
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(a.in.clients->clock_path, HRP_PATH_WAITING);
    assert_int_equal(find_key(&a.agg, "n4", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths,
                     HRP_PATH_WAITING);
    db_init(&x, 9, 1);
    x.l[3].node_id = "n4";
    db_sample(&x, 3, 1, 400, 400);
    x.b.clock_path = HRP_CLOCK_PATH_FAST;
    x.b.clock_order = HRP_CLOCK_ORDER_PLAIN;
    assert_int_equal(handle(&a.in, &x, NULL, 0), HRD_INGEST_OK);
    db_fini(&x);
    assert_int_equal(find_key(&a.agg, "n4", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths,
                     HRP_PATH_FAST | HRP_PATH_WAITING);
    /* A path that is neither: rejected, nothing taken. */
    db_init(&x, 7, 1);
    db_sample(&x, 3, 1, 400, 400);
    x.b.clock_path = "mixed";
    assert_int_equal(handle(&a.in, &x, why, sizeof why),
                     HRD_INGEST_REJECTED);
    db_fini(&x);
    assert_string_equal(why, "rejected: string");
    assert_int_equal(find_key(&a.agg, "n2", HRP_PHASE_WARM,
                              "dispatch.call")->pairs, 2);

    snapshot_round_trip(&a, &b, *state);
    assert_int_equal(find_key(&b.agg, "n1", HRP_PHASE_WARM,
                              "binding.body")->clock_paths,
                     HRP_PATH_FAST | HRP_PATH_ORDERED);
    assert_int_equal(find_key(&b.agg, "n2", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths,
                     HRP_PATH_ORDERED);
    assert_int_equal(find_key(&b.agg, "n4", HRP_PHASE_WARM,
                              "dispatch.call")->clock_paths,
                     HRP_PATH_FAST | HRP_PATH_WAITING);
    mem_fini(&b);
    mem_fini(&a);
    unlinkat(dfd, "snap", 0);
    close(dfd);
}

/* The calibration each row gets: of its own path only. */
static void test_calib_for(void **state)
{
    struct hra_calib c[4];

    (void)state;
    /* The names of sets of paths, read back (protocol.h). */
    static const unsigned one[] = { 0, HRP_PATH_FAST, HRP_PATH_ORDERED,
                                    HRP_PATH_WAITING };

    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        assert_int_equal(hrp_clock_paths_parse(hrp_clock_path_name(one[i])),
                         one[i]);
        assert_false(hrp_clock_paths_mixed(one[i]));
    }
    assert_string_equal(hrp_clock_path_name(HRP_PATH_WAITING), "waiting");
    /* More than one: mixed, which reads back as files from before waiting
     * reads were told apart wrote it (fast and ordered). */
    for (unsigned p = 0; p <= HRP_PATHS_ALL; p++)
        assert_int_equal(strcmp(hrp_clock_path_name(p), "mixed") == 0,
                         hrp_clock_paths_mixed(p));
    assert_string_equal(hrp_clock_path_name(HRP_PATHS_ALL), "mixed");
    assert_int_equal(hrp_clock_paths_parse("mixed"),
                     HRP_PATH_FAST | HRP_PATH_ORDERED);
    assert_true(hrp_clock_paths_fast(HRP_PATH_FAST) &&
                hrp_clock_paths_fast(HRP_PATH_WAITING) &&
                !hrp_clock_paths_fast(HRP_PATH_ORDERED) &&
                !hrp_clock_paths_fast(HRP_PATH_FAST | HRP_PATH_WAITING));
    assert_string_equal(hrp_clock_path_env(HRP_PATH_FAST), "fast,plain");
    assert_string_equal(hrp_clock_path_env(HRP_PATH_WAITING),
                        "fast,waiting");
    assert_string_equal(hrp_clock_path_env(HRP_PATH_ORDERED), "ordered");
    assert_null(hrp_clock_path_env(HRP_PATHS_ALL));
    assert_int_equal(hrp_clock_paths_parse(""), 0);
    assert_int_equal(hrp_clock_path_bit("fast", ""), (int)HRP_PATH_FAST);
    /* The fast path's waiting reads, by their clock order; a batch from
     * before they were told apart (plain rdtsc, or none said) is fast. */
    assert_int_equal(hrp_clock_path_bit("fast", "rdtscp"),
                     (int)HRP_PATH_WAITING);
    assert_int_equal(hrp_clock_path_bit("fast", "lfence;rdtsc"),
                     (int)HRP_PATH_WAITING);
    assert_int_equal(hrp_clock_path_bit("fast", "rdtsc"), (int)HRP_PATH_FAST);
    assert_int_equal(hrp_clock_path_bit("fast", "vdso"), (int)HRP_PATH_FAST);
    assert_int_equal(hrp_clock_path_bit("waiting", ""),
                     (int)HRP_PATH_WAITING);
    assert_int_equal(hrp_clock_path_bit("ordered", "rdtscp"),
                     (int)HRP_PATH_ORDERED);
    assert_int_equal(hrp_clock_path_bit("mixed", ""), -1);
    assert_int_equal(hrp_clock_path_bit("ordered", "rdtsc"),
                     (int)HRP_PATH_ORDERED);
    assert_int_equal(hrp_clock_path_bit("", "vdso"), (int)HRP_PATH_ORDERED);
    assert_int_equal(hrp_clock_path_bit("", ""), 0);
    assert_int_equal(hrp_clock_path_bit("unknown", ""), -1);
    memset(c, 0, sizeof c);
    /* The most recent first: fast "x", ordered "y", fast "z", a mixed
     * one "w". */
    c[0].label = "w";
    c[0].clock_paths = HRP_PATHS_ALL;
    c[1].label = "x";
    c[1].clock_paths = HRP_PATH_FAST;
    c[2].label = "y";
    c[2].clock_paths = HRP_PATH_ORDERED;
    c[3].label = "z";
    c[3].clock_paths = HRP_PATH_FAST;
    assert_ptr_equal(hra_calib_for(c, 4, NULL, HRP_PATH_FAST), &c[1]);
    assert_ptr_equal(hra_calib_for(c, 4, NULL, HRP_PATH_ORDERED), &c[2]);
    /* Waiting rows: no calibration of plain reads. */
    assert_null(hra_calib_for(c, 4, NULL, HRP_PATH_WAITING));
    /* Mixed rows: none. A mixed calibration: for no row. */
    assert_null(hra_calib_for(c, 4, NULL, HRP_PATHS_ALL));
    assert_null(hra_calib_for(c, 4, NULL, HRP_PATH_FAST | HRP_PATH_WAITING));
    assert_null(hra_calib_for(c, 4, "w", HRP_PATH_FAST));
    /* A label: its calibration if it is of the row's path. */
    assert_ptr_equal(hra_calib_for(c, 4, "z", HRP_PATH_FAST), &c[3]);
    assert_null(hra_calib_for(c, 4, "z", HRP_PATH_ORDERED));
    assert_null(hra_calib_for(c, 4, "nothing", HRP_PATH_FAST));
    /* Rows whose paths are not known: the most recent one that applies to
     * any row, or the label's. */
    assert_ptr_equal(hra_calib_for(c, 4, NULL, 0), &c[1]);
    assert_ptr_equal(hra_calib_for(c, 4, "y", 0), &c[2]);
    /* A calibration whose path is not known: for such rows only. */
    c[1].clock_paths = 0;
    assert_ptr_equal(hra_calib_for(c, 4, NULL, HRP_PATH_FAST), &c[3]);
    assert_ptr_equal(hra_calib_for(c, 4, NULL, 0), &c[1]);
    /* A waiting calibration: for waiting rows, not for plain ones. */
    c[1].clock_paths = HRP_PATH_WAITING;
    assert_ptr_equal(hra_calib_for(c, 4, NULL, HRP_PATH_WAITING), &c[1]);
    assert_ptr_equal(hra_calib_for(c, 4, NULL, HRP_PATH_FAST), &c[3]);
    assert_null(hra_calib_for(c, 4, "x", HRP_PATH_FAST));
}

static const struct hra_calib g_cal = {
    .label = "a", .clock = "tsc", .child_ns = 40.0, .residue_ns = 30.0,
    .empty_ns = 10.0, .timer_ns = 16.0, .calls = 3,
};

static struct hra_row row_of(const char *metric, uint64_t calls,
                             uint64_t children, double median)
{
    struct hra_row r = {
        .node_id = "t/obs", .op = "add", .backend = "cpu", .phase = "warm",
        .range = "binding.body", .metric = metric, .count = calls,
        .mean = median, .median = median, .min = median - 1000,
        .max = median + 1000, .p90 = median + 800, .p99 = median + 980,
        .stddev = 816.5, .exact = 1, .calls = calls, .children = children,
    };

    return r;
}

static void test_observer_apply(void **state)
{
    struct hra_row r;

    (void)state;
    /* Inclusive: 2 children per call x 40 = 80 of a median of 2000. */
    r = row_of("inclusive", 3, 6, 2000);
    hra_observer_apply(&r, &g_cal, 0);
    assert_true(r.observer_known && r.observer_ns == 80.0 &&
                r.observer_share == 0.04 && !r.unstable && !r.corrected);
    assert_true(r.median == 2000.0);
    hra_observer_apply(&r, &g_cal, 1);
    /* 80 + the empty scope's 10. */
    assert_true(r.mean == 1910.0 && r.median == 1910.0 && r.min == 910.0 &&
                r.max == 2910.0 && r.p90 == 2710.0 && r.p99 == 2890.0);
    assert_true(r.stddev == 816.5 && r.count == 3 && r.corrected);

    /* Self: 2 x 30 = 60 of 600 is 10%: unstable; corrected by 70, never
     * below 0. */
    r = row_of("self", 3, 6, 600);
    r.min = 50;
    hra_observer_apply(&r, &g_cal, 1);
    assert_true(r.observer_ns == 60.0 && r.observer_share == 0.1 &&
                r.unstable);
    assert_true(r.median == 530.0 && r.min == 0.0 && r.corrected);
    r = row_of("self", 3, 6, 601);
    hra_observer_apply(&r, &g_cal, 0);
    assert_false(r.unstable);

    /* A median of 0 with a cost in it is all observer. */
    r = row_of("self", 1, 1, 0);
    hra_observer_apply(&r, &g_cal, 0);
    assert_true(r.observer_share == 1.0 && r.unstable);
    r = row_of("inclusive", 4, 0, 0);
    hra_observer_apply(&r, &g_cal, 0);
    assert_true(r.observer_known && r.observer_share == 0.0 && !r.unstable);

    /* Recorded values (no calls), or no calibration: unknown, unchanged. */
    r = row_of("inclusive", 0, 0, 7000);
    hra_observer_apply(&r, &g_cal, 1);
    assert_false(r.observer_known);
    assert_false(r.corrected);
    assert_true(r.median == 7000.0);
    r = row_of("inclusive", 3, 6, 2000);
    hra_observer_apply(&r, NULL, 1);
    assert_false(r.observer_known);
    assert_false(r.corrected);
    assert_true(r.median == 2000.0 && r.min == 1000.0);

    /* Descendants: an inclusive row pays for every descendant's scope
     * (15 over 3 calls: 5 x 40), a self row for its direct children's
     * residues only (2 x 30). */
    r = row_of("inclusive", 3, 6, 2000);
    r.descendants = 15;
    hra_observer_apply(&r, &g_cal, 1);
    assert_true(r.observer_ns == 200.0 && r.median == 1790.0);
    r = row_of("self", 3, 6, 2000);
    r.descendants = 15;
    hra_observer_apply(&r, &g_cal, 1);
    assert_true(r.observer_ns == 60.0 && r.median == 1930.0);

    /* Under 20 clock steps: resolution limited (not without a step). */
    r = row_of("inclusive", 3, 0, 199);
    hra_observer_apply(&r, &g_cal, 0);
    assert_false(r.resolution_limited);
    {
        struct hra_calib cal = g_cal;

        cal.step_ns = 10;
        hra_observer_apply(&r, &cal, 0);
        assert_true(r.resolution_limited);
        r = row_of("inclusive", 3, 0, 200);
        hra_observer_apply(&r, &cal, 1);
        assert_false(r.resolution_limited);
    }
}

/* A calibration of the fast path: its corrections leave the reads' bias
 * in, and a row is unstable when the correction and the reads'
 * uncertainty (the larger of empty_ns and |bias_ns|, plus a clock step)
 * are 5% of it. */
static void test_observer_fast(void **state)
{
    struct hra_calib cal = g_cal;
    struct hra_row r;

    (void)state;
    cal.clock_paths = HRP_PATH_FAST;
    cal.bias_ns = -15.0;
    /* 80 + 15 of 2000 is 4.75%: stable; corrected by 80 only. */
    r = row_of("inclusive", 3, 6, 2000);
    hra_observer_apply(&r, &cal, 1);
    assert_true(r.observer_ns == 80.0 && r.observer_share == 0.04);
    assert_false(r.unstable);
    assert_true(r.median == 1920.0 && r.min == 920.0 && r.corrected);
    /* 80 + 15 of 1900 is 5%: unstable, as 60 + 15 of 1000 is. */
    r = row_of("inclusive", 3, 6, 1900);
    hra_observer_apply(&r, &cal, 0);
    assert_true(r.unstable);
    r = row_of("self", 3, 6, 1000);
    hra_observer_apply(&r, &cal, 1);
    assert_true(r.observer_ns == 60.0 && r.unstable && r.median == 940.0);
    /* A leaf: nothing to correct, but its reads' uncertainty (here
     * empty_ns, 10, the larger) is 5% of 200. */
    r = row_of("inclusive", 3, 0, 200);
    hra_observer_apply(&r, &cal, 1);
    assert_true(r.observer_ns == 0.0 && r.unstable && r.median == 200.0);
    cal.bias_ns = 5.0;
    r = row_of("inclusive", 3, 0, 201);
    hra_observer_apply(&r, &cal, 0);
    assert_false(r.unstable);
    /* On a clock of 10 ns steps a median is known to a step: a leaf whose
     * reads run 14 ns ahead is unstable up to (14 + 10) / 5% = 480 ns,
     * 24 ns being more than 5% of 400 (a leaf of 400 ns read 2 steps low
     * there), and not a resolution_limited row past 20 steps. */
    cal.bias_ns = -14.0;
    cal.step_ns = 10.0;
    r = row_of("inclusive", 3, 0, 400);
    hra_observer_apply(&r, &cal, 1);
    assert_true(r.unstable && !r.resolution_limited && r.median == 400.0);
    r = row_of("inclusive", 3, 0, 479);
    hra_observer_apply(&r, &cal, 0);
    assert_true(r.unstable);
    r = row_of("inclusive", 3, 0, 481);
    hra_observer_apply(&r, &cal, 0);
    assert_false(r.unstable);
    /* With a step, 80 + 15 + 10 of 2000 is 5.25%: unstable, where 80 + 15
     * alone (above) was not. */
    cal.bias_ns = -15.0;
    r = row_of("inclusive", 3, 6, 2000);
    hra_observer_apply(&r, &cal, 0);
    assert_true(r.unstable);
}

/* The rows through a writer of `format` and `fields`, as text (caller
 * frees). */
static char *written(enum hrv_format format, unsigned fields,
                     const struct hra_row *rows, int n)
{
    struct hrv_writer w;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    hrv_writer_init(&w, f, format, fields);
    for (int i = 0; i < n; i++)
        assert_int_equal(hrv_writer_row(&w, &rows[i]), 0);
    assert_int_equal(hrv_writer_finish(&w), 0);
    hrv_writer_fini(&w);
    fclose(f);
    return text;
}

static void test_report_fields(void **state)
{
    struct hra_row rows[2];
    char *t;

    (void)state;
    rows[0] = row_of("inclusive", 3, 6, 2000);
    rows[0].range = "dispatch.call";
    rows[0].clock_paths = HRP_PATH_ORDERED;
    hra_observer_apply(&rows[0], &g_cal, 0);
    rows[1] = row_of("inclusive", 0, 0, 7000);
    rows[1].range = "end_to_end";
    rows[1].count = 1;
    hra_observer_apply(&rows[1], &g_cal, 0);

    /* Without the flags: the reference fields, as always. */
    t = written(HRV_FORMAT_JSONL, 0, rows, 1);
    assert_string_equal(t,
        "{\"nodeid\":\"t/obs\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":3,\"unit\":\"ns\",\"mean\":2000.0,"
        "\"median\":2000.0}\n");
    free(t);
    t = written(HRV_FORMAT_JSONL, HRV_FIELDS_OBSERVER, rows, 2);
    assert_string_equal(t,
        "{\"nodeid\":\"t/obs\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":3,\"unit\":\"ns\",\"mean\":2000.0,"
        "\"median\":2000.0,\"children\":2.0,\"descendants\":2.0,"
        "\"observer_ns\":80.0,\"observer_share\":0.04,\"unstable\":false,"
        "\"resolution_limited\":false,\"clock_path\":\"ordered\"}\n"
        "{\"nodeid\":\"t/obs\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"end_to_end\",\"metric\":"
        "\"inclusive\",\"count\":1,\"unit\":\"ns\",\"mean\":7000.0,"
        "\"median\":7000.0,\"children\":null,\"descendants\":null,"
        "\"observer_ns\":null,\"observer_share\":null,\"unstable\":null,"
        "\"resolution_limited\":null,\"clock_path\":\"unknown\"}\n");
    free(t);
    hra_observer_apply(&rows[0], &g_cal, 1);
    hra_observer_apply(&rows[1], &g_cal, 1);
    t = written(HRV_FORMAT_JSONL, HRV_FIELDS_EXTENDED | HRV_FIELDS_OBSERVER |
                HRV_FIELDS_CORRECTED, rows, 1);
    assert_string_equal(t,
        "{\"nodeid\":\"t/obs\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":3,\"unit\":\"ns\",\"mean\":1910.0,"
        "\"median\":1910.0,\"min\":910.0,\"max\":2910.0,\"p90\":2710.0,"
        "\"p99\":2890.0,\"stddev\":816.5,\"exact\":true,\"lost\":0,"
        "\"children\":2.0,\"descendants\":2.0,\"observer_ns\":80.0,"
        "\"observer_share\":0.04,\"unstable\":false,"
        "\"resolution_limited\":false,\"clock_path\":\"ordered\","
        "\"corrected\":true}\n");
    free(t);
    t = written(HRV_FORMAT_CSV, HRV_FIELDS_OBSERVER | HRV_FIELDS_CORRECTED,
                rows, 2);
    assert_string_equal(t,
        "nodeid,operator,backend,phase,range,metric,count,unit,mean,median,"
        "children,descendants,observer_ns,observer_share,unstable,"
        "resolution_limited,clock_path,corrected\n"
        "t/obs,add,cpu,warm,dispatch.call,inclusive,3,ns,1910.0,1910.0,2.0,"
        "2.0,80.0,0.04,false,false,ordered,true\n"
        "t/obs,add,cpu,warm,end_to_end,inclusive,1,ns,7000.0,7000.0,,,,,,,"
        "unknown,false\n");
    free(t);
    t = written(HRV_FORMAT_TABLE, HRV_FIELDS_OBSERVER | HRV_FIELDS_CORRECTED,
                rows, 2);
    assert_string_equal(t,
        "t/obs  add/cpu  warm\n"
        "  range          metric     count  mean_us  median_us  children  "
        "descendants  observer_us  share  unstable  res_limited  clock_path  "
        "corrected\n"
        "  dispatch.call  inclusive      3    1.910      1.910      2.00  "
        "       2.00        0.080   4.0%  no        no           ordered     "
        "yes\n"
        "  end_to_end     inclusive      1    7.000      7.000         -  "
        "          -            -      -  -         -            unknown     "
        "no\n");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_per_key),
        cmocka_unit_test_setup_teardown(test_snapshot_children, dir_setup,
                                        dir_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_version_1, dir_setup,
                                        dir_teardown),
        cmocka_unit_test(test_calib_collect),
        cmocka_unit_test(test_calib_saved),
        cmocka_unit_test(test_calib_robust),
        cmocka_unit_test(test_calib_robust_drift),
        cmocka_unit_test(test_calib_fan),
        cmocka_unit_test(test_observer_apply),
        cmocka_unit_test(test_report_fields),
        cmocka_unit_test_setup_teardown(test_clock_paths, dir_setup,
                                        dir_teardown),
        cmocka_unit_test(test_calib_for),
        cmocka_unit_test(test_observer_fast),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
