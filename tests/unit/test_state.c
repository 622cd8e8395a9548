/*
 * The state directory without a daemon (lib/run/recfile.c, snapshot.c,
 * state.c): record files, snapshots that give back the same report and
 * client table (and the same bytes for a key sharing one histogram),
 * damage kept and moved aside, refusals, the lock, an unwritable
 * directory, and compaction in a child process.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/agg/agg_impl.h"
#include "lib/view/report.h"
#include "lib/run/run.h"
#include "lib/run/runkey.h"
#include "daemon/snapshot.h"
#include "daemon/state.h"
#include "proto/protocol.h"
#include "tests/lib/harness_batch.h"
#include "tests/lib/harness.h"

/* A private directory for each test, removed afterwards. */
static int setup(void **state)
{
    char *dir = malloc(256);

    harness_mkdtemp(dir, 256, "state");
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", (char *)*state);
    assert_int_equal(system(cmd), 0);
    free(*state);
    return 0;
}

/* What the log function was told, all lines together. */
static char logged[8192];

static void log_to_buffer(void *ctx, const char *fmt, ...)
{
    size_t n = strlen(logged);
    va_list ap;

    (void)ctx;
    va_start(ap, fmt);
    vsnprintf(logged + n, sizeof logged - n, fmt, ap);
    va_end(ap);
    n = strlen(logged);
    if (n + 1 < sizeof logged)
        strcat(logged, "\n");
}

/* The daemon's state in memory. */
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

/* Loads the snapshot `name` of directory dir into m; returns what
 * hrd_snapshot_load returned. */
static int load_snapshot(const char *dir, const char *name, struct mem *m,
                         struct hrd_snapshot_loaded *sl)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return hrd_snapshot_load(path, &m->agg, &m->in, sl);
}

/* Writes m's state as snapshot `name` of directory dir, covering journals
 * up to `covers`. */
static void write_snapshot(const char *dir, const char *name, struct mem *m,
                           uint64_t covers)
{
    char path[512], err[600];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(hrd_snapshot_write(path, &m->agg, &m->in, covers, err,
                                        sizeof err), 0);
}

/* Hands batch x to in, and frees it. */
static enum hrd_ingest_result send_batch(struct hrd_ingest *in,
                                         struct db_batch *x)
{
    enum hrd_ingest_result res;
    enum hrd_reject why;
    uint8_t *buf, *ack;
    size_t len, alen;

    buf = db_pack(x, &len);
    res = hrd_ingest_handle(in, buf, len, &ack, &alen, &why);
    free(ack);
    free(buf);
    db_fini(x);
    return res;
}

/* Batch `seq` of client `pid`: samples of both nodes, a record and lost
 * counts, all derived from (pid, seq). */
static enum hrd_ingest_result feed(struct hrd_ingest *in, uint32_t pid,
                                   uint64_t seq)
{
    struct db_batch x;

    db_init(&x, pid, seq);
    for (uint32_t i = 0; i < 50; i++) {
        uint64_t v = 1000 + pid * 7919 + seq * 104729 + i * 13;
        db_sample(&x, i % 4, i % 2, v, v / (1 + i % 3));
    }
    db_record(&x, 1, 20000 + seq);
    db_lost(&x, 1, seq * pid);
    return send_batch(in, &x);
}

static int write_row(const struct hra_row *r, void *arg)
{
    return hrv_writer_row(arg, r);
}

/* The whole report with every field, as text (caller frees). */
static char *report(struct hra_agg *a)
{
    struct hrv_writer w;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    hrv_writer_init(&w, f, HRV_FORMAT_JSONL, HRV_FIELDS_EXTENDED);
    assert_int_equal(hra_rows(a, NULL, write_row, &w), 0);
    assert_int_equal(hrv_writer_finish(&w), 0);
    hrv_writer_fini(&w);
    fclose(f);
    return buf;
}

static int open_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);

    assert_true(fd >= 0);
    return fd;
}

static int exists(const char *dir, const char *name)
{
    char p[1200];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

/* The name of a file in dir that starts with prefix, or "" (static). */
static const char *find_prefix(const char *dir, const char *prefix)
{
    static char name[256];
    struct dirent *e;
    DIR *d = opendir(dir);

    name[0] = '\0';
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            snprintf(name, sizeof name, "%s", e->d_name);
    }
    closedir(d);
    return name;
}

static void test_crc32c(void **state)
{
    (void)state;
    /* The check value of CRC-32C. */
    assert_int_equal(hrr_crc32c(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(hrr_crc32c(0, "", 0), 0);
    /* In pieces, the same. */
    assert_int_equal(hrr_crc32c(hrr_crc32c(0, "1234", 4), "56789", 5),
                     0xe3069283u);
    /* Any length and alignment, against the bit-at-a-time definition
     * (the fast paths work on 3 x 8192 and 3 x 256 byte blocks). */
    {
        static uint8_t buf[3 * 8192 * 2 + 1000];
        static const size_t lens[] = { 0, 1, 7, 8, 9, 255, 256, 767, 768,
                                       769, 3 * 8192 - 1, 3 * 8192,
                                       3 * 8192 + 3 * 256 + 17,
                                       sizeof buf - 8 };
        uint64_t x = 12345;

        for (size_t i = 0; i < sizeof buf; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            buf[i] = (uint8_t)(x >> 56);
        }
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            for (size_t off = 0; off < 8; off += 3) {
                uint32_t want = 0xffffffffu;
                for (size_t i = 0; i < lens[l]; i++) {
                    want ^= buf[off + i];
                    for (int k = 0; k < 8; k++)
                        want = (want >> 1) ^ (0x82f63b78u & (0u - (want & 1)));
                }
                assert_int_equal(hrr_crc32c(0, buf + off, lens[l]), ~want);
            }
        }
    }
}

static void test_record_file(void **state)
{
    const char *dir = *state;
    struct hrr_recfile f;
    struct hrr_recreader r;
    const uint8_t *p;
    uint8_t type, big[70000];
    size_t len;
    char path[512];
    int dfd = open_dir(dir);

    memset(big, 0x5a, sizeof big);
    assert_int_equal(hrr_recfile_open(&f, dfd, "j", HRR_JOURNAL_MAGIC), 0);
    assert_int_equal(hrr_recfile_append(&f, 'B', "hello", 5), 0);
    assert_int_equal(hrr_recfile_put(&f, 'X', "", 0), 0);
    assert_int_equal(hrr_recfile_put(&f, 'B', big, sizeof big), 0);
    assert_int_equal(hrr_recfile_append(&f, 'B', "last", 4), 0);
    assert_int_equal(f.records, 4);
    assert_int_equal(f.size, 8 + 4 * 9 + 5 + 0 + sizeof big + 4);
    hrr_recfile_close(&f);

    assert_int_equal(hrr_recreader_open(&r, dfd, "j", HRR_JOURNAL_MAGIC), 0);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 1);
    assert_true(type == 'B' && len == 5 && memcmp(p, "hello", 5) == 0);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 1);
    assert_true(type == 'X' && len == 0);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 1);
    assert_true(len == sizeof big && memcmp(p, big, len) == 0);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 1);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 0);
    hrr_recreader_close(&r);

    /* A snapshot reader refuses a journal. */
    assert_int_equal(hrr_recreader_open(&r, dfd, "j", HRR_SNAPSHOT_MAGIC),
                     -EBADMSG);
    hrr_recreader_close(&r);

    /* Cut in the middle of the last record: the rest is good. */
    snprintf(path, sizeof path, "%s/j", dir);
    assert_int_equal(truncate(path, (off_t)(8 + 4 * 9 + 5 + sizeof big + 2)),
                     0);
    assert_int_equal(hrr_recreader_open(&r, dfd, "j", HRR_JOURNAL_MAGIC), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), 1);
    assert_int_equal(hrr_recreader_next(&r, &type, &p, &len), -EBADMSG);
    assert_string_equal(r.why, "truncated record (2 of 4 bytes)");
    assert_int_equal(r.offset, 8 + 3 * 9 + 5 + sizeof big);
    hrr_recreader_close(&r);
    close(dfd);
}

/* A snapshot gives back the same report, clients and lost counts, and the
 * client table goes on dropping duplicates. */
static void test_snapshot_round_trip(void **state)
{
    const char *dir = *state;
    struct mem a, b;
    struct hrd_snapshot_loaded sl;
    char *ra, *rb;
    int dfd = open_dir(dir);

    mem_init(&a);
    a.agg.exact_cap = 120; /* some keys move to histograms */
    for (uint32_t pid = 1; pid <= 3; pid++)
        for (uint64_t seq = 1; seq <= 5; seq++)
            assert_int_equal(feed(&a.in, pid, seq), HRD_INGEST_OK);
    assert_true(a.agg.capped > 0);
    /* Events of refused batches are counted lost under their node id,
     * in no client's table. */
    hra_lost_add(&a.agg, hra_str(&a.agg, "n1"), 7);
    write_snapshot(dir, "snap", &a, 42);

    mem_init(&b);
    b.agg.exact_cap = 120;
    assert_int_equal(load_snapshot(dir, "snap", &b, &sl), 0);
    assert_int_equal(sl.complete, 1);
    assert_int_equal(sl.covers, 42);
    assert_int_equal(sl.keys, a.agg.nkeys);
    assert_int_equal(sl.clients, 3);
    ra = report(&a.agg);
    rb = report(&b.agg);
    assert_string_equal(ra, rb);
    assert_non_null(strstr(ra, "\"exact\":false"));
    /* Node n1's lost: the latest count of each client, seq * pid, and
     * the refused events. */
    assert_non_null(strstr(ra, "\"lost\":37")); /* 5*1 + 5*2 + 5*3 + 7 */
    assert_int_equal(b.agg.events, a.agg.events);
    assert_int_equal(b.in.nclients, 3);
    assert_int_equal(b.in.clients->max_seq, 5);
    assert_int_equal(b.in.clients->events, a.in.clients->events);
    /* Seen batches stay seen; the next one is new. */
    assert_int_equal(feed(&b.in, 2, 5), HRD_INGEST_DUPLICATE);
    assert_int_equal(feed(&b.in, 2, 6), HRD_INGEST_OK);
    assert_int_equal(feed(&a.in, 2, 6), HRD_INGEST_OK);
    free(rb);
    rb = report(&b.agg);
    free(ra);
    ra = report(&a.agg);
    assert_string_equal(ra, rb);
    free(ra);
    free(rb);
    mem_fini(&a);
    mem_fini(&b);
    close(dfd);
}

/* Batch `seq` of client 1: leaves of range 0 (repeated values, as a clock
 * of coarse resolution gives them) and samples with children of range 1. */
static enum hrd_ingest_result feed_leaves(struct hrd_ingest *in, uint64_t seq)
{
    struct db_batch x;

    db_init(&x, 1, seq);
    for (uint32_t i = 0; i < 400; i++) {
        uint64_t v = 20 + 10 * ((i * 7 + seq) % 3);

        db_sample(&x, 1, 0, v, v);
        db_sample(&x, 1, 1, 1000 + i, 100 + i % 50);
    }
    return send_batch(in, &x);
}

/* The contents of dir/name (caller frees), its size in *len. */
static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    uint8_t *buf;
    long n;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = malloc((size_t)n);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The offset of the record after a run file's header (its magic, then
 * the header's framing and payload). */
static size_t past_header(const uint8_t *file)
{
    uint32_t len = (uint32_t)file[8] | (uint32_t)file[9] << 8 |
                   (uint32_t)file[10] << 16 | (uint32_t)file[11] << 24;

    return 8 + HRR_REC_HEADER + len;
}

/* Every key of a that shares one histogram between its populations (range
 * and path keys) is given two; returns how many were. */
static int unshare_all(struct hra_agg *a)
{
    int n = 0;

    for (uint32_t i = 0; i < a->nkeys; i++) {
        for (struct hra_key *k = a->keys[i]; k != NULL;
             k = k == a->keys[i] ? a->keys[i]->paths : k->pnext) {
            if (!k->exact && k->self == k->incl) {
                assert_int_equal(hra_key_unshare(a, k), 0);
                n++;
            }
        }
    }
    return n;
}

/* The run keys of a, packed one after another (caller frees). */
static uint8_t *run_keys(struct hra_agg *a, size_t *len)
{
    uint8_t *buf = NULL;

    *len = 0;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        Hostrange__RunKey m;
        size_t n;

        assert_int_equal(
            hrr_runkey_from(a, a->keys[i], HRR_FORMAT_NEWEST, &m), 0);
        n = hostrange__run_key__get_packed_size(&m);
        buf = realloc(buf, *len + n);
        assert_non_null(buf);
        hostrange__run_key__pack(&m, buf + *len);
        *len += n;
        hrr_runkey_clear(&m);
    }
    return buf;
}

/*
 * A key of leaves in histograms shares one histogram between its
 * populations (lib/agg/agg.h): its snapshot and its run key are the same,
 * byte for byte, as with two histograms of its own, and a snapshot of it
 * loads shared again.
 */
static void test_snapshot_shared_histograms(void **state)
{
    const char *dir = *state;
    struct mem a, b;
    struct hrd_snapshot_loaded sl;
    uint8_t *s1, *s2, *k1, *k2;
    size_t n1, n2, m1, m2;
    char *ra, *rb;
    int dfd = open_dir(dir);

    mem_init(&a);
    a.agg.exact_cap = 1000;
    for (uint64_t seq = 1; seq <= 6; seq++)
        assert_int_equal(feed_leaves(&a.in, seq), HRD_INGEST_OK);
    write_snapshot(dir, "s1", &a, 7);
    s1 = slurp(dir, "s1", &n1);
    k1 = run_keys(&a.agg, &m1);

    mem_init(&b);
    b.agg.exact_cap = 1000;
    assert_int_equal(load_snapshot(dir, "s1", &b, &sl), 0);
    assert_int_equal(sl.complete, 1);

    /* One shared: the leaves' range key (its path key mirrors it; the key
     * with children has two). Loaded, the path key mirrors it again. */
    assert_int_equal(unshare_all(&a.agg), 1);
    assert_int_equal(unshare_all(&b.agg), 1);
    write_snapshot(dir, "s2", &a, 7);
    s2 = slurp(dir, "s2", &n2);
    k2 = run_keys(&a.agg, &m2);
    /* The same but for the header's time of writing. */
    assert_int_equal(n2, n1);
    assert_true(n1 > past_header(s1));
    assert_memory_equal(s2 + past_header(s1), s1 + past_header(s1),
                        n1 - past_header(s1));
    assert_int_equal(m2, m1);
    assert_memory_equal(k2, k1, m1);
    ra = report(&a.agg);
    rb = report(&b.agg);
    assert_string_equal(ra, rb);

    free(ra);
    free(rb);
    free(s1);
    free(s2);
    free(k1);
    free(k2);
    mem_fini(&a);
    mem_fini(&b);
    close(dfd);
}

/*
 * Flips a byte of the payload of key record `nth` (from 0) of the snapshot
 * at path, whose state record must hold `clients` clients. Returns the
 * byte's offset.
 */
static uint64_t flip_key(const char *path, uint32_t nth, size_t clients)
{
    Hostrange__RunHeader *h = NULL;
    Hostrange__RunState *rs = NULL;
    struct hrr_reader r;
    const uint8_t *p;
    uint64_t at = 0;
    uint8_t type, c;
    size_t len;
    char err[512];
    int fd;

    assert_int_equal(hrr_open(&r, path, &h, err, sizeof err), 0);
    assert_int_equal(hrr_read_state(&r, &rs, err, sizeof err), 1);
    assert_int_equal(rs->n_clients, clients);
    for (uint32_t i = 0; i <= nth; i++) {
        at = r.offset;
        assert_int_equal(hrr_next_raw(&r, &type, &p, &len, err,
                                          sizeof err), 1);
        assert_int_equal(type, 'K');
    }
    hostrange__run_state__free_unpacked(rs, NULL);
    hostrange__run_header__free_unpacked(h, NULL);
    hrr_close(&r);
    at += HRR_REC_HEADER + 1;
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &c, 1, (off_t)at), 1);
    c ^= 0x10;
    assert_int_equal(pwrite(fd, &c, 1, (off_t)at), 1);
    close(fd);
    return at;
}

/* A damaged snapshot loads up to the damage and says where. */
static void test_snapshot_damage(void **state)
{
    const char *dir = *state;
    struct mem a, b;
    struct hrd_snapshot_loaded sl;
    struct stat st;
    char path[512];
    uint64_t flipped;
    int dfd = open_dir(dir), fd;

    mem_init(&a);
    /* No calling contexts: the keys are then the last records. */
    a.agg.max_depth = 0;
    for (uint32_t pid = 1; pid <= 20; pid++)
        assert_int_equal(feed(&a.in, pid, 1), HRD_INGEST_OK);
    write_snapshot(dir, "snap", &a, 1);

    /* Flip one byte in the middle of the keys (after the state record,
     * which holds the client table). */
    snprintf(path, sizeof path, "%s/snap", dir);
    assert_int_equal(stat(path, &st), 0);
    flipped = flip_key(path, a.agg.nkeys / 2, 20);
    mem_init(&b);
    assert_int_equal(load_snapshot(dir, "snap", &b, &sl), -EBADMSG);
    assert_int_equal(sl.complete, 0);
    assert_non_null(strstr(sl.why, "checksum"));
    assert_int_equal(sl.clients, 20);
    assert_true(sl.keys > 0 && sl.keys < a.agg.nkeys);
    assert_int_equal(b.agg.nkeys, sl.keys);
    mem_fini(&b);

    /* Cut short (the flipped byte set right again): the final record is
     * missing. */
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    {
        uint8_t c;
        assert_int_equal(pread(fd, &c, 1, (off_t)flipped), 1);
        c ^= 0x10;
        assert_int_equal(pwrite(fd, &c, 1, (off_t)flipped), 1);
    }
    close(fd);
    mem_init(&b);
    assert_int_equal(load_snapshot(dir, "snap", &b, &sl), 0);
    assert_int_equal(sl.keys, a.agg.nkeys);
    mem_fini(&b);
    assert_int_equal(truncate(path, st.st_size - 50), 0);
    mem_init(&b);
    assert_int_equal(load_snapshot(dir, "snap", &b, &sl), -EBADMSG);
    assert_non_null(strstr(sl.why, "truncated"));
    mem_fini(&b);
    mem_fini(&a);
    close(dfd);
}

static const struct hrd_state_opts opts = { 1000, 300000, 1u << 30 };

/* Batches written through the journal hook come back after the process
 * "dies" (the state is dropped without being closed). */
static void test_journal_survives(void **state)
{
    const char *dir = *state;
    char sdir[512], err[256], *before, *after;
    struct hrd_state st;
    struct mem a, b;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    logged[0] = '\0';
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.degraded, 0);
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    for (uint64_t seq = 1; seq <= 4; seq++)
        assert_int_equal(feed(&a.in, 9, seq), HRD_INGEST_OK);
    {
        /* A reset is journaled too. */
        uint8_t buf[64];
        size_t len;
        Hostrange__ResetRequest rq = HOSTRANGE__RESET_REQUEST__INIT;
        rq.node_glob = "n2";
        len = hostrange__reset_request__pack(&rq, buf);
        assert_int_equal(hrd_state_journal_reset(&st, buf, len), 0);
        assert_true(hrd_control_apply_reset(&a.agg, buf, len) > 0);
    }
    assert_int_equal(feed(&a.in, 9, 5), HRD_INGEST_OK);
    assert_int_equal(st.info.journal_records, 6);
    before = report(&a.agg);
    /* Dropped without a snapshot, as SIGKILL would. */
    hrr_recfile_close(&st.journal);
    close(st.lockfd);
    close(st.dirfd);
    assert_true(exists(sdir, "journal.1"));
    assert_false(exists(sdir, "snapshot"));

    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.replayed_records, 6);
    after = report(&b.agg);
    assert_string_equal(before, after);
    /* The replay was folded into a fresh snapshot; journal 1 is gone. */
    assert_true(exists(sdir, "snapshot"));
    assert_false(exists(sdir, "journal.1"));
    assert_true(exists(sdir, "journal.2"));
    b.in.journal = hrd_state_journal_batch;
    b.in.journal_ctx = &st;
    assert_int_equal(feed(&b.in, 9, 5), HRD_INGEST_DUPLICATE);
    assert_int_equal(feed(&b.in, 9, 6), HRD_INGEST_OK);
    assert_int_equal(hrd_state_close(&st), 0);
    assert_false(exists(sdir, "journal.2"));
    free(before);
    free(after);
    mem_fini(&a);
    mem_fini(&b);
}

/* A journal with a damaged tail: the good records are kept, the file is
 * moved aside (not removed), and it is said. */
static void test_journal_damage(void **state)
{
    const char *dir = *state;
    char sdir[512], err[256], path[600];
    struct hrd_state st;
    struct mem a, b;
    FILE *f;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    for (uint64_t seq = 1; seq <= 3; seq++)
        assert_int_equal(feed(&a.in, 4, seq), HRD_INGEST_OK);
    hrr_recfile_close(&st.journal);
    close(st.lockfd);
    close(st.dirfd);
    snprintf(path, sizeof path, "%s/journal.1", sdir);
    f = fopen(path, "a");
    assert_non_null(f);
    fputs("\x20\x00\x00\x00garbage that is not a record", f);
    fclose(f);

    logged[0] = '\0';
    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.load_problems, 1);
    assert_int_equal(st.info.replayed_records, 3);
    assert_int_equal(b.in.clients->max_seq, 3);
    assert_int_equal(b.agg.events, a.agg.events);
    assert_non_null(strstr(logged, "journal.1: "));
    assert_non_null(strstr(logged, "at byte"));
    assert_non_null(strstr(logged, "moved to"));
    assert_true(strlen(find_prefix(sdir, "journal.1.damaged-")) > 0);
    assert_true(exists(sdir, "snapshot"));
    assert_int_equal(hrd_state_close(&st), 0);
    mem_fini(&a);
    mem_fini(&b);

    /* A damaged snapshot is moved aside too. */
    snprintf(path, sizeof path, "%s/snapshot", sdir);
    f = fopen(path, "r+");
    assert_non_null(f);
    fseek(f, 20, SEEK_SET);
    fputc('!', f);
    fclose(f);
    logged[0] = '\0';
    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.load_problems, 1);
    assert_non_null(strstr(logged, "snapshot: "));
    assert_true(strlen(find_prefix(sdir, "snapshot.damaged-")) > 0);
    assert_int_equal(hrd_state_close(&st), 0);
    mem_fini(&b);
}

static void test_refusals(void **state)
{
    const char *dir = *state;
    char sdir[512], err[256];
    struct hrd_state st, st2;
    struct mem a, b;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    mem_init(&a);
    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    /* A second user of the same directory is refused. */
    assert_int_equal(hrd_state_open(&st2, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err),
                     -EBUSY);
    assert_non_null(strstr(err, "another hostranged uses the state "
                                "directory"));
    assert_int_equal(hrd_state_close(&st), 0);

    /* Writable by the group: refused. */
    assert_int_equal(chmod(sdir, 0770), 0);
    assert_int_equal(hrd_state_open(&st2, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err),
                     -EPERM);
    assert_non_null(strstr(err, "group- or world-writable"));
    assert_int_equal(chmod(sdir, 0700), 0);

    /* Owned by someone else (only root can arrange that). */
    if (geteuid() == 0) {
        assert_int_equal(chown(sdir, 65534, (gid_t)-1), 0);
        assert_int_equal(hrd_state_open(&st2, sdir, &opts, &b.agg, &b.in,
                                        log_to_buffer, NULL, err, sizeof err),
                         -EPERM);
        assert_non_null(strstr(err, "is owned by uid 65534"));
    }
    mem_fini(&a);
    mem_fini(&b);
}

/* A directory that cannot be made: serving goes on, batches get RETRY. */
static void test_unwritable(void **state)
{
    const char *dir = *state;
    char file[512], sdir[600], err[256];
    struct hrd_state st;
    struct mem a;
    FILE *f;

    snprintf(file, sizeof file, "%s/plain-file", dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(sdir, sizeof sdir, "%s/state", file);
    logged[0] = '\0';
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.degraded, 1);
    assert_non_null(strstr(st.info.last_error,
                           "cannot create the state directory"));
    assert_non_null(strstr(logged, "retry"));
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    assert_int_equal(feed(&a.in, 1, 1), HRD_INGEST_RETRY);
    assert_int_equal(a.agg.events, 0);
    st.last_open_ms = 0;
    assert_int_equal(feed(&a.in, 1, 1), HRD_INGEST_RETRY);

    /* Once the directory can be made, batches are journaled in it (at
     * the next try, which comes a second after the last). */
    assert_int_equal(unlink(file), 0);
    assert_int_equal(mkdir(file, 0700), 0);
    st.last_open_ms = 0;
    assert_int_equal(feed(&a.in, 1, 1), HRD_INGEST_OK);
    assert_int_equal(st.info.degraded, 0);
    assert_true(exists(sdir, "journal.1"));
    assert_true(exists(sdir, "lock"));
    assert_int_equal(hrd_state_close(&st), 0);
    assert_true(exists(sdir, "snapshot"));
    assert_false(exists(sdir, "journal.1"));
    mem_fini(&a);

    /* And they come back at the next start. */
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(a.in.clients->max_seq, 1);
    assert_int_equal(a.agg.events, 2 * 50 + 1);
    assert_int_equal(hrd_state_close(&st), 0);
    mem_fini(&a);
}

/* A journal that fails to be written makes the state degraded and the
 * batch RETRY; once it can be written, batches are taken again. */
static void test_write_failure(void **state)
{
    const char *dir = *state;
    char sdir[512], err[256];
    struct hrd_state st;
    struct mem a;
    int good;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    assert_int_equal(feed(&a.in, 1, 1), HRD_INGEST_OK);
    /* Swap the journal's descriptor for one that cannot be written. */
    good = st.journal.fd;
    st.journal.fd = open("/dev/null", O_RDONLY);
    assert_int_equal(feed(&a.in, 1, 2), HRD_INGEST_RETRY);
    assert_int_equal(st.info.degraded, 1);
    assert_int_equal(st.info.write_errors, 1);
    assert_int_equal(a.in.clients->max_seq, 1);
    /* The journal is reopened (at most once a second) and takes it. */
    close(good);
    st.last_open_ms = 0;
    assert_int_equal(feed(&a.in, 1, 2), HRD_INGEST_OK);
    assert_int_equal(st.info.degraded, 0);
    assert_int_equal(a.in.clients->max_seq, 2);
    assert_int_equal(hrd_state_close(&st), 0);
    mem_fini(&a);
}

/* Compaction in a child process: a snapshot appears, covered journals go,
 * and the state loads back the same. */
static void test_compaction(void **state)
{
    const char *dir = *state;
    char sdir[512], err[256], *before, *after;
    struct hrd_state st;
    struct mem a, b;
    uint64_t t = 1u << 30;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    for (uint64_t seq = 1; seq <= 3; seq++)
        assert_int_equal(feed(&a.in, 5, seq), HRD_INGEST_OK);
    /* Far enough in the future that a compaction is due. */
    hrd_state_tick(&st, t);
    assert_true(st.child > 0);
    assert_int_equal(st.gen, 2);
    assert_int_equal(feed(&a.in, 5, 4), HRD_INGEST_OK);
    for (int i = 0; i < 3000 && st.child != 0; i++) {
        usleep(10000);
        hrd_state_tick(&st, t);
    }
    assert_int_equal(st.child, 0);
    assert_int_equal(st.info.snapshots, 1);
    assert_true(exists(sdir, "snapshot"));
    assert_false(exists(sdir, "journal.1"));
    assert_true(exists(sdir, "journal.2"));
    before = report(&a.agg);
    /* Dropped without a final snapshot: snapshot + journal.2 load. */
    hrr_recfile_close(&st.journal);
    close(st.lockfd);
    close(st.dirfd);
    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.replayed_records, 1);
    after = report(&b.agg);
    assert_string_equal(before, after);
    assert_int_equal(hrd_state_close(&st), 0);
    free(before);
    free(after);
    mem_fini(&a);
    mem_fini(&b);
}

static int same_str(const struct hra_agg *a, uint32_t x,
                    const struct hra_agg *b, uint32_t y)
{
    return strcmp(hra_str_get(a, x), hra_str_get(b, y)) == 0;
}

/*
 * The daemon dies after a compaction renamed its snapshot but before the
 * journals it covers were removed: they are not replayed again. And when
 * that snapshot is also damaged in its keys, every journal is replayed,
 * the batches it held are told apart by its client table (read before the
 * keys), and nothing is counted twice.
 */
static void test_crash_before_truncation(void **state)
{
    const char *dir = *state;
    char sdir[512], path[600], err[256], *before, *after;
    struct hrd_state st;
    struct mem a, b;
    uint64_t t = 1u << 30;
    int status;

    snprintf(sdir, sizeof sdir, "%s/state", dir);
    mem_init(&a);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &a.agg, &a.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    a.in.journal = hrd_state_journal_batch;
    a.in.journal_ctx = &st;
    for (uint64_t seq = 1; seq <= 3; seq++)
        assert_int_equal(feed(&a.in, 5, seq), HRD_INGEST_OK);
    hrd_state_tick(&st, t);
    assert_true(st.child > 0);
    assert_int_equal(feed(&a.in, 5, 4), HRD_INGEST_OK);
    /* The child finishes; the daemon dies before it reaps it. */
    assert_int_equal(waitpid(st.child, &status, 0), st.child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    st.child = 0;
    hrr_recfile_close(&st.journal);
    close(st.lockfd);
    close(st.dirfd);
    assert_true(exists(sdir, "snapshot"));
    assert_true(exists(sdir, "journal.1"));
    assert_true(exists(sdir, "journal.2"));
    before = report(&a.agg);

    /* Save a copy of the directory to damage afterwards. */
    snprintf(path, sizeof path, "cp -r '%s' '%s/copy'", sdir, dir);
    assert_int_equal(system(path), 0);

    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_int_equal(st.info.replayed_records, 1);
    after = report(&b.agg);
    assert_string_equal(before, after);
    assert_int_equal(b.agg.events, a.agg.events);
    assert_int_equal(hrd_state_close(&st), 0);
    free(after);
    mem_fini(&b);

    /* The same directory with a damaged key in its snapshot. */
    snprintf(sdir, sizeof sdir, "%s/copy", dir);
    snprintf(path, sizeof path, "%s/snapshot", sdir);
    flip_key(path, 1, 1);
    logged[0] = '\0';
    mem_init(&b);
    assert_int_equal(hrd_state_open(&st, sdir, &opts, &b.agg, &b.in,
                                    log_to_buffer, NULL, err, sizeof err), 0);
    assert_non_null(strstr(logged, "checksum"));
    assert_int_equal(st.info.replayed_records, 4);
    assert_int_equal(b.in.nclients, 1);
    assert_int_equal(b.in.clients->max_seq, 4);
    /* Batches 1 to 3 were dropped as held already, 4 taken. */
    assert_int_equal(b.in.clients->batches, a.in.clients->batches);
    assert_int_equal(b.in.clients->events, a.in.clients->events);
    /* The damaged key's events are gone; no other key has more. */
    assert_true(b.agg.events < a.agg.events);
    for (uint32_t i = 0; i < b.agg.nkeys; i++) {
        const struct hra_key *k = b.agg.keys[i];
        const struct hra_key *o = NULL;

        for (uint32_t j = 0; j < a.agg.nkeys && o == NULL; j++) {
            const struct hra_key *x = a.agg.keys[j];
            if (same_str(&a.agg, x->node, &b.agg, k->node) &&
                same_str(&a.agg, x->op, &b.agg, k->op) &&
                same_str(&a.agg, x->backend, &b.agg, k->backend) &&
                x->phase == k->phase &&
                same_str(&a.agg, x->range, &b.agg, k->range))
                o = x;
        }
        assert_non_null(o);
        assert_true(k->pairs + k->records <= o->pairs + o->records);
    }
    assert_int_equal(hrd_state_close(&st), 0);
    free(before);
    mem_fini(&a);
    mem_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test_setup_teardown(test_record_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_shared_histograms, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_damage, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_journal_survives, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_journal_damage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_before_truncation, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
