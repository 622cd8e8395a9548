/*
 * The spool: files written by the client's writer (client/spool.c) and
 * taken by the daemon's reader (daemon/spool.c) into an ingest in this
 * process, and the shared names and framing (proto/spool.c). Damaged,
 * foreign and refused content; batches the daemon already holds; a journal
 * that refuses batches.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/encode.h"
#include "client/spool.h"
#include "lib/agg/agg_impl.h"
#include "daemon/spool.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/spool.h"
#include "tests/lib/harness.h"

#define PID 4242u
#define INSTANCE 0x0123456789abcdefull
#define NODE_A "tests/spool::a"
#define NODE_B "tests/spool::b"

/* A fake process: one range name, label sets 1 (node A) and 2 (node B). */
static const char *range_name(uint32_t id)
{
    return id == 1 ? "spool.range" : NULL;
}

static int label_get(uint32_t id, const char **node, const char **op,
                     const char **backend, unsigned *phase)
{
    if (id < 1 || id > 2)
        return -1;
    *node = id == 1 ? NODE_A : NODE_B;
    *op = "op";
    *backend = "cpu";
    *phase = HRP_PHASE_WARM;
    return 0;
}

static void ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *range)
{
    (void)ctx;
    *parent = 0;
    *range = 1;
}

static const struct hr__namer namer = { range_name, label_get, ctx_get };

/* A batch of `a` events under label set 1 and `b` under 2, numbered seq,
 * of process pid, claiming `lost` events lost under label set 2. */
struct batch {
    uint8_t *buf;
    size_t len;
    uint64_t seq, events;
    uint32_t lab[2];
    uint64_t lab_events[2];
    uint32_t nlab;
};

static void batch_make(struct batch *b, uint32_t pid, uint64_t seq,
                       uint32_t a, uint32_t bn, uint64_t lost)
{
    struct hr__batch_header h = { 0 };
    uint32_t ids[1] = { 2 };
    uint64_t counts[1] = { lost };
    struct hr__enc e;

    assert_int_equal(hr__enc_init(&e, &namer), 0);
    for (uint32_t i = 0; i < a; i++)
        assert_int_equal(hr__enc_sample(&e, 1, 1, 100 + i, 0, 0, 0, 0), 0);
    for (uint32_t i = 0; i < bn; i++)
        assert_int_equal(hr__enc_sample(&e, 2, 1, 200 + i, 0, 0, 0, 0), 0);
    h.pid = pid;
    h.instance = INSTANCE;
    h.process_label = "test_spool";
    h.seq = seq;
    h.clock = "tsc";
    h.lost_events = lost;
    h.lost_ids = ids;
    h.lost_counts = counts;
    h.n_lost = lost != 0;
    assert_int_equal(hr__enc_seal(&e, &h, &b->buf, &b->len), 0);
    hr__enc_fini(&e);
    b->seq = seq;
    b->events = a + bn;
    b->nlab = 0;
    if (a != 0) {
        b->lab[b->nlab] = 1;
        b->lab_events[b->nlab++] = a;
    }
    if (bn != 0) {
        b->lab[b->nlab] = 2;
        b->lab_events[b->nlab++] = bn;
    }
}

/* The daemon's side: an ingest over an aggregation, and the spool of a
 * runtime directory. */
struct fix {
    char dir[256];
    char spool[300];
    struct hra_agg agg;
    struct hrd_ingest in;
    struct hrd_spool sp;
    struct batch b[4]; /* batches 1..3, and the last one (4) */
};

static int journal_fails; /* the journal hook refuses batches */
static int sync_fails;    /* the sync hook fails */
static int syncs;         /* calls of the sync hook */

static int sync_hook(void *ctx)
{
    (void)ctx;
    syncs++;
    return sync_fails ? -EIO : 0;
}

static int journal(void *ctx, const uint8_t *msg, size_t len)
{
    (void)ctx;
    (void)msg;
    (void)len;
    return journal_fails ? -ENOSPC : 0;
}

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    char err[512];

    assert_non_null(f);
    harness_mkdtemp(f->dir, sizeof f->dir, "spool-unit");
    hra_init(&f->agg);
    hrd_ingest_init(&f->in, &f->agg);
    f->in.journal = journal;
    journal_fails = sync_fails = syncs = 0;
    if (hrd_spool_open(&f->sp, f->dir, (gid_t)-1, &f->in, NULL, NULL, err,
                       sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(f->spool, sizeof f->spool, "%s/%s", f->dir, HRP_SPOOL_NAME);
    f->sp.sync = sync_hook;
    /* Batch 1: 3 events of A; 2: 2 of A, 4 of B; 3: 5 of B; the last one
     * no samples, and 7 lost under B. */
    batch_make(&f->b[0], PID, 1, 3, 0, 0);
    batch_make(&f->b[1], PID, 2, 2, 4, 0);
    batch_make(&f->b[2], PID, 3, 0, 5, 0);
    batch_make(&f->b[3], PID, 4, 0, 0, 7);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;

    hrd_spool_close(&f->sp);
    hrd_ingest_fini(&f->in);
    hra_fini(&f->agg);
    for (int i = 0; i < 4; i++)
        free(f->b[i].buf);
    harness_rm_rf(f->dir);
    free(f);
    return 0;
}

/* Writes the spool file of process pid with batches first..3 (indexes
 * 0..2) and the last batch; sent marks batch 1 as sent. */
static void spool_write(struct fix *f, uint32_t pid, int first)
{
    struct hr__spool_batch sb[3];
    struct hr__spool s = { 0 };
    int n = 0;

    for (int i = first; i < 3; i++, n++) {
        sb[n].seq = f->b[i].seq;
        sb[n].events = f->b[i].events;
        sb[n].sent = i == first;
        sb[n].buf = f->b[i].buf;
        sb[n].len = f->b[i].len;
        sb[n].nlab = f->b[i].nlab;
        sb[n].lab = f->b[i].lab;
        sb[n].lab_events = f->b[i].lab_events;
        s.spooled += f->b[i].events;
    }
    s.pid = pid;
    s.instance = INSTANCE;
    s.samples = 21;
    s.lost = 7;
    s.batches = sb;
    s.nbatches = (uint32_t)n;
    s.final_batch = f->b[3].buf;
    s.final_len = f->b[3].len;
    s.label_get = label_get;
    assert_int_equal(hr__spool_write(f->spool, &s), 0);
}

/* Runs the spool until it has nothing to do now. */
static void take_all(struct fix *f)
{
    hrd_spool_poke(&f->sp);
    for (int i = 0; hrd_spool_step(&f->sp, 2) != 0; i++)
        assert_true(i < 1000);
}

static uint64_t lost_of(struct fix *f, const char *node)
{
    return f->agg.str.lost[hra_str(&f->agg, node) - 1];
}

static uint64_t events_of(struct fix *f)
{
    struct hrd_client *c = hrd_ingest_client_find(&f->in, PID, INSTANCE);

    return c != NULL ? c->events : 0;
}

/* The path of file name+suffix in the spool folder (in buf). */
static const char *in_spool(struct fix *f, const char *suffix, char *buf,
                            size_t len)
{
    char name[HRP_SPOOL_FILE_NAME_MAX];

    assert_int_equal(hrp_spool_file_name(name, sizeof name, PID, INSTANCE,
                                         HRP_SPOOL_SUFFIX),
                     0);
    snprintf(buf, len, "%s/%s%s", f->spool, name, suffix);
    return buf;
}

static void test_names(void **state)
{
    char name[HRP_SPOOL_FILE_NAME_MAX];
    uint32_t pid;
    uint64_t inst;

    (void)state;
    assert_int_equal(hrp_spool_file_name(name, sizeof name, 4294967295u,
                                         0xfedcba9876543210ull,
                                         HRP_SPOOL_SUFFIX),
                     0);
    assert_string_equal(name, "4294967295-fedcba9876543210.spool");
    assert_int_equal(hrp_spool_file_parse(name, &pid, &inst), 1);
    assert_int_equal(pid, 4294967295u);
    assert_int_equal(inst, 0xfedcba9876543210ull);
    assert_int_equal(hrp_spool_file_parse("4294967296-fedcba9876543210.spool",
                                          &pid, &inst), 0);
    assert_int_equal(hrp_spool_file_parse("12-FEDCBA9876543210.spool", &pid,
                                          &inst), 0);
    assert_int_equal(hrp_spool_file_parse("12-fedcba987654321.spool", &pid,
                                          &inst), 0);
    assert_int_equal(hrp_spool_file_parse("12-fedcba9876543210.tmp", &pid,
                                          &inst), 0);
    assert_int_equal(hrp_spool_file_parse("12-fedcba9876543210.spool.rejected",
                                          &pid, &inst), 0);
    assert_int_equal(hrp_spool_file_parse("-fedcba9876543210.spool", &pid,
                                          &inst), 0);
    assert_int_equal(hrp_spool_file_name(name, 10, 1, 1, HRP_SPOOL_SUFFIX),
                     -ENAMETOOLONG);
}

/* Any one byte changed in a record, its header included, is damage. */
static void test_framing(void **state)
{
    uint8_t rec[HRP_SPOOL_REC_HEADER + 40];
    const char *payload = "forty bytes of a record's payload here!";

    (void)state;
    memcpy(rec + HRP_SPOOL_REC_HEADER, payload, 40);
    hrp_spool_rec_header(rec, HRP_SPOOL_REC_BATCH, rec + HRP_SPOOL_REC_HEADER,
                         40);
    for (size_t i = 0; i < sizeof rec; i++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t type;
            uint32_t len;
            uint64_t check;

            rec[i] ^= (uint8_t)(1u << bit);
            hrp_spool_rec_parse(rec, &type, &len, &check);
            assert_true(len != 40 || type != HRP_SPOOL_REC_BATCH ||
                        hrp_spool_check(type, rec + HRP_SPOOL_REC_HEADER,
                                        len) != check);
            rec[i] ^= (uint8_t)(1u << bit);
        }
    }
    assert_int_equal(hrp_spool_rec_max(HRP_SPOOL_REC_BATCH),
                     HRP_MAX_INGEST_BYTES);
    assert_int_equal(hrp_spool_rec_max('x'), 0);
}

static void test_taken(void **state)
{
    struct fix *f = *state;
    struct stat st;
    char path[600];

    spool_write(f, PID, 0);
    assert_int_equal(stat(in_spool(f, "", path, sizeof path), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    take_all(f);
    assert_int_equal(events_of(f), 14);
    assert_int_equal(lost_of(f, NODE_A), 0);
    assert_int_equal(lost_of(f, NODE_B), 7);
    assert_int_equal(f->sp.info.files, 1);
    assert_int_equal(f->sp.info.batches, 3);
    assert_int_equal(f->sp.info.ingested, 3);
    assert_int_equal(f->sp.info.rejected, 0);
    assert_int_equal(f->sp.info.rejected_files, 0);
    assert_int_equal(f->sp.info.lost_events, 0);
    assert_int_equal(f->sp.info.bytes, (uint64_t)st.st_size);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(syncs, 1);
    /* Taken again (a crash before the file was removed): nothing twice. */
    spool_write(f, PID, 0);
    take_all(f);
    assert_int_equal(events_of(f), 14);
    assert_int_equal(lost_of(f, NODE_B), 7);
    assert_int_equal(f->sp.info.duplicates, 3);
}

/* Batches the daemon had (their acknowledgement lost) count once, and not
 * as lost. */
static void test_duplicates(void **state)
{
    struct fix *f = *state;
    uint8_t *ack;
    size_t ack_len;
    enum hrd_reject why;

    for (int i = 0; i < 2; i++) {
        assert_int_equal(hrd_ingest_handle(&f->in, f->b[i].buf, f->b[i].len,
                                           &ack, &ack_len, &why),
                         HRD_INGEST_OK);
        free(ack);
    }
    spool_write(f, PID, 1);
    take_all(f);
    assert_int_equal(events_of(f), 14);
    assert_int_equal(f->sp.info.duplicates, 1);
    assert_int_equal(f->sp.info.ingested, 1);
    assert_int_equal(lost_of(f, NODE_A), 0);
    assert_int_equal(lost_of(f, NODE_B), 7);
}

/* A journal that refuses batches, or cannot be synced: the file waits, and
 * is removed once its batches are journaled and synced. */
static void test_journal_refuses(void **state)
{
    struct fix *f = *state;
    char path[600];

    spool_write(f, PID, 0);
    journal_fails = 1;
    take_all(f);
    assert_int_equal(f->sp.deferred, 1);
    assert_int_equal(events_of(f), 0);
    assert_int_equal(access(in_spool(f, "", path, sizeof path), F_OK), 0);
    journal_fails = 0;
    /* Taken, but the journal cannot be synced: the file stays. */
    sync_fails = 1;
    take_all(f);
    assert_int_equal(f->sp.deferred, 1);
    assert_int_equal(events_of(f), 14);
    assert_int_equal(access(path, F_OK), 0);
    sync_fails = 0;
    take_all(f);
    assert_int_equal(f->sp.deferred, 0);
    assert_int_equal(events_of(f), 14);
    assert_int_equal(lost_of(f, NODE_B), 7);
    assert_int_equal(f->sp.info.files, 1);
    assert_int_not_equal(access(path, F_OK), 0);
}

/* A batch of another process inside the file, and one that is no batch:
 * neither is taken, their events are lost under their label sets. */
static void test_bad_batches(void **state)
{
    struct fix *f = *state;
    char path[600], aside[600];

    free(f->b[1].buf);
    batch_make(&f->b[1], PID + 1, 2, 2, 4, 0);
    free(f->b[2].buf);
    f->b[2].buf = (uint8_t *)strdup("no batch at all");
    f->b[2].len = strlen("no batch at all");
    spool_write(f, PID, 0);
    take_all(f);
    assert_int_equal(events_of(f), 3);
    assert_int_equal(lost_of(f, NODE_A), 2);
    assert_int_equal(lost_of(f, NODE_B), 7 + 4 + 5);
    assert_int_equal(f->sp.info.rejected, 2);
    assert_int_equal(f->sp.info.lost_events, 11);
    assert_int_equal(f->in.rejected[HRD_REJECT_MALFORMED], 1);
    /* The foreign batch sets the file aside. */
    assert_int_equal(f->sp.info.rejected_files, 1);
    assert_int_not_equal(access(in_spool(f, "", path, sizeof path), F_OK), 0);
    assert_int_equal(access(in_spool(f, HRP_SPOOL_ASIDE_SUFFIX, aside,
                                     sizeof aside), F_OK),
                     0);
}

/* The last batch of a process that lost nothing itself (no lost counts, no
 * label sets) gets the losses of a batch that could not be taken. */
static void test_losses_added(void **state)
{
    struct fix *f = *state;

    free(f->b[3].buf);
    batch_make(&f->b[3], PID, 4, 0, 0, 0);
    free(f->b[2].buf);
    f->b[2].buf = (uint8_t *)strdup("no batch at all");
    f->b[2].len = strlen("no batch at all");
    spool_write(f, PID, 0);
    take_all(f);
    assert_int_equal(events_of(f), 9);
    assert_int_equal(lost_of(f, NODE_A), 0);
    assert_int_equal(lost_of(f, NODE_B), 5);
    assert_int_equal(f->sp.info.lost_events, 5);
    assert_int_equal(hrd_ingest_client_find(&f->in, PID, INSTANCE)->lost, 5);
}

/* Files refused whole: nothing of them is taken. */
static void test_refused_files(void **state)
{
    struct fix *f = *state;
    char path[600], other[600];

    /* Its SpoolInfo names another process than its name. */
    spool_write(f, PID + 7, 0);
    snprintf(other, sizeof other, "%s/%u-%016llx%s", f->spool, PID + 7,
             (unsigned long long)INSTANCE, HRP_SPOOL_SUFFIX);
    assert_int_equal(rename(other, in_spool(f, "", path, sizeof path)), 0);
    take_all(f);
    assert_int_equal(f->sp.info.rejected_files, 1);
    assert_int_equal(events_of(f), 0);
    /* Two links to one file. */
    spool_write(f, PID, 0);
    assert_int_equal(link(path, other), 0);
    take_all(f);
    assert_int_equal(f->sp.info.rejected_files, 3);
    assert_int_equal(events_of(f), 0);
    /* Its first record cut short, or only a magic. */
    harness_write_file(path, HRP_SPOOL_MAGIC "\x05", HRP_SPOOL_MAGIC_LEN + 1);
    take_all(f);
    harness_write_file(path, HRP_SPOOL_MAGIC, HRP_SPOOL_MAGIC_LEN);
    take_all(f);
    assert_int_equal(f->sp.info.rejected_files, 5);
    assert_int_equal(f->sp.info.files, 5);
    assert_int_equal(events_of(f), 0);
    assert_int_equal(f->in.nclients, 0);
    /* Temporary files are a writer's; other names are not the daemon's. */
    snprintf(other, sizeof other, "%s/1-0000000000000001%s", f->spool,
             HRP_SPOOL_TMP_SUFFIX);
    harness_write_file(other, "x", 1);
    snprintf(other, sizeof other, "%s/notes", f->spool);
    harness_write_file(other, "x", 1);
    take_all(f);
    assert_int_equal(f->sp.info.files, 5);
    assert_int_equal(access(other, F_OK), 0);
}

/* In the child short of memory: the spool run until it has nothing to
 * do (no cmocka assertion here: a failure is the exit status). */
static int scan_short_of_memory(void *ctx)
{
    struct fix *f = ctx;

    hrd_spool_poke(&f->sp);
    for (int i = 0; hrd_spool_step(&f->sp, 2) != 0; i++) {
        if (i > 1000)
            return 1;
    }
    return f->sp.info.rejected_files != 0 ? 2 : 0;
}

/*
 * A spool file the daemon lacks the memory to read is not damaged: it is
 * left under its name for a later scan, never renamed aside. Its last
 * batch decodes to 14 MiB (3.5 Mi lost_label entries); the scan runs in a
 * child limited to its use plus 8 MiB.
 */
static void test_out_of_memory_leaves_the_file(void **state)
{
    enum { N = 7 << 19 };
    struct fix *f = *state;
    Hostrange__Batch b = HOSTRANGE__BATCH__INIT;
    struct hr__spool s = { 0 };
    uint32_t *v = calloc(N, sizeof *v);
    char path[600], aside[600];
    uint8_t *buf;
    size_t len;
    int rc;

    assert_non_null(v);
    b.version = HRP_VERSION;
    b.pid = PID;
    b.instance = INSTANCE;
    b.seq = 4;
    b.n_lost_label = N;
    b.lost_label = v;
    len = hostrange__batch__get_packed_size(&b);
    buf = malloc(len);
    assert_non_null(buf);
    assert_int_equal(hostrange__batch__pack(&b, buf), len);
    free(v);
    s.pid = PID;
    s.instance = INSTANCE;
    s.final_batch = buf;
    s.final_len = len;
    s.label_get = label_get;
    assert_int_equal(hr__spool_write(f->spool, &s), 0);
    free(buf);
    in_spool(f, "", path, sizeof path);
    in_spool(f, HRP_SPOOL_ASIDE_SUFFIX, aside, sizeof aside);
    rc = harness_short_of_memory(scan_short_of_memory, f, 8u << 20);
    if (rc < 0)
        skip();
    assert_int_equal(rc, 0);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_not_equal(access(aside, F_OK), 0);
    /* With memory, the same scan reads it: its last batch, which holds
     * lost labels and no counts for them, is rejected as a batch from a
     * socket would be, and the file is done with (removed, not set
     * aside). */
    take_all(f);
    assert_int_equal(f->sp.info.rejected_files, 0);
    assert_int_equal(f->sp.info.rejected, 1);
    assert_int_not_equal(access(aside, F_OK), 0);
    assert_int_not_equal(access(path, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_framing),
        cmocka_unit_test_setup_teardown(test_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_journal_refuses, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_losses_added, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_memory_leaves_the_file,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
