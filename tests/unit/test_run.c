/*
 * Run files (lib/run/run.c): a run written and read back; a writer aborted
 * leaves the target as it was; and bad files are refused with one line
 * that starts with the file's name: every truncation of a run, every byte
 * of it flipped, a foreign file, and newer layouts and formats.
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
#include <unistd.h>

#include <cmocka.h>

#include "lib/run/crc32c.h"
#include "lib/run/recfile.h"
#include "lib/run/run.h"
#include "lib/run/runkey.h"
#include "lib/run/runload.h"
#include "proto/protocol.h"
#include "proto/unpack.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_runfile.h"

static char dir[64], path[128], bad[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hostrange-test-run-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(path, sizeof path, "%s/run.hrs", dir);
    snprintf(bad, sizeof bad, "%s/bad.hrs", dir);
    return 0;
}

static int teardown(void **state)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[400];

    (void)state;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
    return 0;
}

/* How many names the directory holds. */
static int entries(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Writes a run of three exact keys to p, its header of `format`, each key
 * given as a message or, when packed, already packed (as a save gets them
 * from hostranged). */
/* write_run_as's `packed` may add: a daemon's state record after the
 * header. */
#define WITH_STATE 2

static void write_run_as(const char *p, uint32_t format, int packed)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    struct hrr_writer w;
    uint64_t incl[4] = { 100, 5, 0, 20 }, self[3] = { 40, 0, 7 };
    char err[512], node[32];

    h.format = format;
    h.host = "test";
    h.version = "0";
    assert_int_equal(hrr_create(&w, p, &h, err, sizeof err), 0);
    if (packed & WITH_STATE) {
        Hostrange__RunState st = HOSTRANGE__RUN_STATE__INIT;

        st.covers = 7;
        assert_int_equal(hrr_put_state(&w, &st, err, sizeof err), 0);
    }
    for (int i = 0; i < 3; i++) {
        Hostrange__RunKey k = HOSTRANGE__RUN_KEY__INIT;

        snprintf(node, sizeof node, "t::node[%d]", i);
        k.node_id = node;
        k.operator_ = "op";
        k.backend = "cpu";
        k.phase = 2;
        k.range = "r";
        k.node_rank = (uint32_t)i + 1;
        k.range_rank = 1;
        k.pairs = 3;
        k.records = 1;
        k.inclusive = incl;
        k.n_inclusive = 4;
        k.self = self;
        k.n_self = 3;
        if (packed & 1) {
            uint8_t buf[256];
            size_t len = hostrange__run_key__get_packed_size(&k);

            assert_true(len <= sizeof buf);
            hostrange__run_key__pack(&k, buf);
            assert_int_equal(hrr_put_packed(&w, buf, len, err,
                                                sizeof err), 0);
        } else {
            assert_int_equal(hrr_put_key(&w, &k, err, sizeof err), 0);
        }
    }
    assert_int_equal(hrr_commit(&w, &e, err, sizeof err), 0);
    hrr_abort(&w);
}

static void write_run(const char *p, uint32_t format)
{
    write_run_as(p, format, 0);
}

/* Reads every record of p: 0, or what the reader returned (a negative
 * errno) with the reason in err. */
static int read_all(const char *p, char *err, size_t errlen, int *keys)
{
    struct hrr_reader r;
    Hostrange__RunHeader *h = NULL;
    int rc;

    *keys = 0;
    rc = hrr_open(&r, p, &h, err, errlen);
    if (rc != 0)
        return rc;
    hostrange__run_header__free_unpacked(h, NULL);
    for (;;) {
        Hostrange__RunKey *k = NULL;
        Hostrange__RunEnd *e = NULL;

        rc = hrr_next(&r, &k, &e, err, errlen);
        if (rc < 0) {
            hrr_close(&r);
            return rc;
        }
        if (rc == 2) {
            assert_int_equal(e->keys, 3);
            hostrange__run_end__free_unpacked(e, NULL);
            break;
        }
        assert_string_equal(k->operator_, "op");
        assert_int_equal(k->n_inclusive, 4);
        assert_int_equal(k->inclusive[3], 20);
        hostrange__run_key__free_unpacked(k, NULL);
        (*keys)++;
    }
    hrr_close(&r);
    return 0;
}

static size_t slurp(const char *p, unsigned char **buf)
{
    FILE *f = fopen(p, "rb");
    long n;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

/* Files p and q hold the same bytes. */
static void assert_same_bytes(const char *p, const char *q)
{
    unsigned char *a, *b;
    size_t na = slurp(p, &a), nb = slurp(q, &b);

    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
}

static void spill(const char *p, const unsigned char *buf, size_t n)
{
    FILE *f = fopen(p, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* One line that starts with the file's name. */
static void assert_names(const char *err, const char *p)
{
    size_t n = strlen(p);

    assert_true(strncmp(err, p, n) == 0 && err[n] == ':');
    assert_null(strchr(err, '\n'));
}

static void test_round_trip(void **state)
{
    char err[512];
    int keys;

    (void)state;
    write_run(path, HRR_FORMAT_NEWEST);
    assert_int_equal(read_all(path, err, sizeof err, &keys), 0);
    assert_int_equal(keys, 3);
    /* No temporary file is left beside it. */
    assert_int_equal(entries(), 1);
}

/* A daemon's state record (a snapshot) is read by hrr_read_state
 * just after the header and skipped by the readers of runs; a run without
 * one gives 0 and reads on unchanged. */
static void test_state_record(void **state)
{
    Hostrange__RunHeader *h = NULL;
    Hostrange__RunState *st = NULL;
    Hostrange__RunKey *k = NULL;
    Hostrange__RunEnd *e = NULL;
    struct hrr_reader r;
    char err[512];
    int keys;

    (void)state;
    write_run_as(path, HRR_FORMAT_NEWEST, WITH_STATE);
    assert_int_equal(read_all(path, err, sizeof err, &keys), 0);
    assert_int_equal(keys, 3);
    assert_int_equal(hrr_open(&r, path, &h, err, sizeof err), 0);
    hostrange__run_header__free_unpacked(h, NULL);
    assert_int_equal(hrr_read_state(&r, &st, err, sizeof err), 1);
    assert_int_equal(st->covers, 7);
    hostrange__run_state__free_unpacked(st, NULL);
    assert_int_equal(hrr_next(&r, &k, &e, err, sizeof err), 1);
    assert_string_equal(k->node_id, "t::node[0]");
    hostrange__run_key__free_unpacked(k, NULL);
    hrr_close(&r);

    write_run(path, HRR_FORMAT_NEWEST);
    assert_int_equal(hrr_open(&r, path, &h, err, sizeof err), 0);
    hostrange__run_header__free_unpacked(h, NULL);
    st = NULL;
    assert_int_equal(hrr_read_state(&r, &st, err, sizeof err), 0);
    assert_null(st);
    assert_int_equal(hrr_next(&r, &k, &e, err, sizeof err), 1);
    assert_string_equal(k->node_id, "t::node[0]");
    hostrange__run_key__free_unpacked(k, NULL);
    hrr_close(&r);
}

/* Keys written packed make the same file, byte for byte, as keys written
 * as messages. */
static void test_packed_keys(void **state)
{
    (void)state;
    write_run_as(path, HRR_FORMAT_NEWEST, 0);
    write_run_as(bad, HRR_FORMAT_NEWEST, 1);
    assert_same_bytes(path, bad);
}

/* The bytes of one record as the layout states them: length, checksum
 * (of the length, the type and the payload), type, payload. */
static size_t put_expected(unsigned char *out, uint8_t type,
                           const unsigned char *p, size_t len)
{
    uint8_t hd[HRR_REC_HEADER];
    uint32_t l = (uint32_t)len, crc;

    for (int i = 0; i < 4; i++)
        hd[i] = (uint8_t)(l >> (8 * i));
    hd[8] = type;
    crc = hrr_crc32c(0, hd, 4);
    crc = hrr_crc32c(crc, &hd[8], 1);
    crc = hrr_crc32c(crc, p, len);
    for (int i = 0; i < 4; i++)
        hd[4 + i] = (uint8_t)(crc >> (8 * i));
    memcpy(out, hd, sizeof hd);
    if (len != 0)
        memcpy(out + sizeof hd, p, len);
    return sizeof hd + len;
}

/* Reads again the record of len bytes at byte `at` of r's file, whose
 * framing (as written) is at hd, and checks that its payload is want. */
static void reread_check(struct hrr_reader *r, const unsigned char *hd,
                         size_t at, size_t len, const unsigned char *want)
{
    uint32_t crc = (uint32_t)hd[4] | (uint32_t)hd[5] << 8 |
                   (uint32_t)hd[6] << 16 | (uint32_t)hd[7] << 24;
    const uint8_t *p;
    uint8_t type;
    char err[8400];

    assert_int_equal(hrr_reread(r, at, len, crc, &type, &p, err,
                                    sizeof err), 0);
    if (len != 0)
        assert_memory_equal(p, want, len);
}

/* Records of every size (none to larger than the writer gathers at once,
 * about the size where it writes a record at once rather than gathering
 * it, about where a reader reads on past a record, and enough to fill the
 * writer's buffer several times), whole or in pieces:
 * the file holds exactly the records in the layout, and reads back
 * record by record, skimmed, and read again at their offsets, in any
 * order. */
static void test_records_of_every_size(void **state)
{
    static const size_t sizes[] = { 0, 1, 2, 100, 4086, 4087, 4095, 4096,
                                    4097, 70000, 262144, 1048566, 1048567,
                                    1048568, 1048576, 1100000, 5, 700000,
                                    400000 };
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    struct hrr_writer w;
    struct hrr_reader r;
    Hostrange__RunHeader *rh = NULL;
    enum { N = 120 };
    size_t len[N], at[N], nexp = 0, nfile, total = 0;
    unsigned char *exp, *file, *src;
    uint64_t rng = 88172645463325252ull;
    char err[512];

    (void)state;
    for (int i = 0; i < N; i++) {
        len[i] = i < (int)(sizeof sizes / sizeof *sizes)
                     ? sizes[i]
                     : (size_t)(rng = rng * 6364136223846793005ull + 1) >> 50;
        total += len[i];
    }
    src = malloc(total + 1);
    exp = malloc(total + N * HRR_REC_HEADER + 4096);
    for (size_t i = 0; i < total; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 9));
    h.format = HRR_FORMAT_NEWEST;
    h.host = "test";
    h.version = "0";
    assert_int_equal(hrr_create(&w, path, &h, err, sizeof err), 0);
    memcpy(exp, HRR_MAGIC, 8);
    nexp = 8;
    {
        size_t hl = hostrange__run_header__get_packed_size(&h);
        unsigned char *hb = malloc(hl + 1);

        hostrange__run_header__pack(&h, hb);
        nexp += put_expected(exp + nexp, 'H', hb, hl);
        free(hb);
    }
    for (size_t i = 0, off = 0; i < N; off += len[i], i++) {
        const unsigned char *p = src + off;

        at[i] = nexp;
        nexp += put_expected(exp + nexp, 'K', p, len[i]);
        if (i % 3 == 2 && len[i] >= 4) {
            /* The same bytes as pieces: the first and last quarter as
             * they are, the middle from elsewhere. */
            unsigned char *mid = malloc(len[i]);
            size_t from = len[i] / 4, to = len[i] - len[i] / 4;

            memcpy(mid, p + from, to - from);
            assert_int_equal(hrr_put_spliced(&w, p, len[i], from, to,
                                                 mid, to - from, err,
                                                 sizeof err), 0);
            free(mid);
        } else {
            assert_int_equal(hrr_put_packed(&w, p, len[i], err,
                                                sizeof err), 0);
        }
    }
    {
        size_t el;
        unsigned char *eb;

        e.keys = N;
        el = hostrange__run_end__get_packed_size(&e);
        eb = malloc(el + 1);
        hostrange__run_end__pack(&e, eb);
        nexp += put_expected(exp + nexp, 'E', eb, el);
        free(eb);
    }
    assert_int_equal(hrr_commit(&w, &e, err, sizeof err), 0);
    nfile = slurp(path, &file);
    assert_int_equal(nfile, nexp);
    assert_memory_equal(file, exp, nexp);

    /* Record by record. */
    assert_int_equal(hrr_open(&r, path, &rh, err, sizeof err), 0);
    hostrange__run_header__free_unpacked(rh, NULL);
    for (size_t i = 0, off = 0; i < N; off += len[i], i++) {
        const uint8_t *p;
        uint8_t type;
        size_t n;

        assert_int_equal(r.offset, at[i]);
        assert_int_equal(hrr_next_raw(&r, &type, &p, &n, err,
                                          sizeof err), 1);
        assert_int_equal(type, 'K');
        assert_int_equal(n, len[i]);
        if (n != 0)
            assert_memory_equal(p, src + off, n);
    }
    hrr_close(&r);

    /* Skimmed, then each read again where it was, last first. */
    assert_int_equal(hrr_open(&r, path, &rh, err, sizeof err), 0);
    hostrange__run_header__free_unpacked(rh, NULL);
    for (size_t i = 0, off = 0; i < N; off += len[i], i++) {
        const uint8_t *p;
        uint8_t type;
        size_t n, got;

        assert_int_equal(hrr_skim(&r, 100, &type, &n, &p, &got, err,
                                      sizeof err), 1);
        assert_int_equal(n, len[i]);
        assert_int_equal(got, len[i] < 100 ? len[i] : 100);
        if (got != 0)
            assert_memory_equal(p, src + off, got);
    }
    for (size_t i = N, off = total; i-- > 0;) {
        off -= len[i];
        reread_check(&r, exp + at[i], at[i], len[i], src + off);
    }
    /* And first to last (a read then brings the records after it). */
    for (size_t i = 0, off = 0; i < N; off += len[i], i++)
        reread_check(&r, exp + at[i], at[i], len[i], src + off);
    hrr_close(&r);
    free(file);
    free(exp);
    free(src);
}

/* Writes 700 keys of sizes 0 to 4999 to p: one by one, or (at_once) in
 * batches of 1 to 299 taken at once, some keys one by one between them. */
static void write_keys(const char *p, const unsigned char *src,
                       const size_t *len, int at_once)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    struct hrr_writer w;
    struct iovec iov[300];
    uint64_t rng = 7;
    char err[512];
    size_t i = 0, off = 0;

    h.format = HRR_FORMAT_NEWEST;
    h.host = "test";
    h.version = "0";
    assert_int_equal(hrr_create(&w, p, &h, err, sizeof err), 0);
    while (i < 700) {
        size_t n = 1 + (size_t)((rng = rng * 6364136223846793005ull + 1) >>
                                33) % 299;

        n = n > 700 - i ? 700 - i : n;
        if (at_once && n % 3 != 0) {
            for (size_t j = 0; j < n; j++) {
                iov[j].iov_base = (void *)(src + off);
                iov[j].iov_len = len[i + j];
                off += len[i + j];
            }
            assert_int_equal(hrr_put_packed_keys(&w, iov, n, err,
                                                     sizeof err), 0);
            i += n;
            continue;
        }
        for (size_t j = 0; j < n; j++, i++) {
            assert_int_equal(hrr_put_packed(&w, src + off, len[i], err,
                                                sizeof err), 0);
            off += len[i];
        }
    }
    assert_int_equal(hrr_commit(&w, &e, err, sizeof err), 0);
}

/* Keys written straight from the caller's memory, many at once, make the
 * same file, byte for byte, as keys written one by one. */
static void test_keys_at_once(void **state)
{
    size_t len[700], total = 0;
    unsigned char *src;
    uint64_t rng = 3;

    (void)state;
    for (int i = 0; i < 700; i++) {
        len[i] = (size_t)((rng = rng * 6364136223846793005ull + 1) >> 33) %
                 5000;
        total += len[i];
    }
    src = malloc(total + 1);
    for (size_t i = 0; i < total; i++)
        src[i] = (unsigned char)(i * 7 + (i >> 11));
    write_keys(path, src, len, 0);
    write_keys(bad, src, len, 1);
    assert_same_bytes(path, bad);
    free(src);
}

static void test_abort_keeps_target(void **state)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    struct hrr_writer w;
    unsigned char *before, *after;
    size_t nb, na;
    char err[512];

    (void)state;
    write_run(path, HRR_FORMAT_NEWEST);
    nb = slurp(path, &before);
    h.format = HRR_FORMAT_NEWEST;
    h.host = "other";
    h.version = "0";
    assert_int_equal(hrr_create(&w, path, &h, err, sizeof err), 0);
    assert_int_equal(entries(), 2); /* the temporary file */
    hrr_abort(&w);
    assert_int_equal(entries(), 1);
    na = slurp(path, &after);
    assert_int_equal(na, nb);
    assert_memory_equal(after, before, nb);
    free(before);
    free(after);
}

static void test_every_truncation(void **state)
{
    unsigned char *buf;
    size_t n;
    char err[512];
    int keys;

    (void)state;
    write_run(path, HRR_FORMAT_NEWEST);
    n = slurp(path, &buf);
    for (size_t len = 0; len < n; len++) {
        spill(bad, buf, len);
        assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
        assert_names(err, bad);
        if (len == 0)
            assert_non_null(strstr(err, "not a hostrange run file (it is "
                                        "empty)"));
        else if (len < 6)
            assert_non_null(strstr(err, "not a hostrange run file"));
        else
            assert_non_null(strstr(err, "truncated"));
    }
    free(buf);
}

static void test_every_flipped_byte(void **state)
{
    unsigned char *buf;
    size_t n;
    char err[512];
    int keys;

    (void)state;
    write_run(path, HRR_FORMAT_NEWEST);
    n = slurp(path, &buf);
    for (size_t at = 0; at < n; at++) {
        buf[at] ^= 0x10;
        spill(bad, buf, n);
        assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
        assert_names(err, bad);
        buf[at] ^= 0x10;
    }
    free(buf);
}

static void test_foreign_and_newer(void **state)
{
    static const char json[] = "{\"nodeid\":\"n\"}\n";
    unsigned char *buf;
    size_t n;
    char err[512], want[512];
    int keys;

    (void)state;
    spill(bad, (const unsigned char *)json, sizeof json - 1);
    assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
    snprintf(want, sizeof want, "%s: not a hostrange run file", bad);
    assert_string_equal(err, want);

    /* A newer layout (the magic) and a newer format (the header). */
    write_run(path, HRR_FORMAT_NEWEST);
    n = slurp(path, &buf);
    buf[6] = '2';
    spill(bad, buf, n);
    assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
    snprintf(want, sizeof want, "%s: written in run file layout 2, newer "
             "than this hostrange reads (1); use a newer hostrangectl", bad);
    assert_string_equal(err, want);
    free(buf);
    write_run(bad, HRR_FORMAT_NEWEST + 1);
    assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
    snprintf(want, sizeof want, "%s: written in run format %u, newer than "
             "those this hostrange reads (1 to %u); use a newer hostrangectl",
             bad, HRR_FORMAT_NEWEST + 1, HRR_FORMAT_NEWEST);
    assert_string_equal(err, want);
    write_run(bad, 0);
    assert_int_equal(read_all(bad, err, sizeof err, &keys), -EINVAL);
    snprintf(want, sizeof want, "%s: written in run format 0, not one this "
             "hostrange reads (1 to %u)", bad, HRR_FORMAT_NEWEST);
    assert_string_equal(err, want);
}

/* A file that cannot be opened or created gives the errno of the system
 * call, with the reason named after the file; a directory is not a run
 * file. */
static void test_system_errors(void **state)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunHeader *rh = NULL;
    struct hrr_reader r;
    struct hrr_writer w;
    struct hrr_runload l;
    struct hra_agg a;
    char err[512], want[512], missing[160];
    int keys;

    (void)state;
    snprintf(missing, sizeof missing, "%s/none/run.hrs", dir);
    assert_int_equal(read_all(bad, err, sizeof err, &keys), -ENOENT);
    snprintf(want, sizeof want, "%s: %s", bad, strerror(ENOENT));
    assert_string_equal(err, want);
    assert_int_equal(hrr_open(&r, dir, &rh, err, sizeof err), -EISDIR);
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    assert_string_equal(err, want);
    hra_init(&a);
    hrr_runload_init(&l, &a);
    assert_int_equal(hrr_load(&l, bad, NULL, NULL, NULL, NULL, err,
                                  sizeof err),
                     -ENOENT);
    assert_names(err, bad);
    hrr_runload_fini(&l);
    hra_fini(&a);
    h.format = HRR_FORMAT_NEWEST;
    assert_int_equal(hrr_create(&w, missing, &h, err, sizeof err),
                     -ENOENT);
    assert_names(err, missing);
    assert_int_equal(entries(), 0);
}

/* A run file holds what its writer kept (a daemon, a merge of many): its
 * readers (dump --from, plot, merge: hrr_runload) keep every calling
 * context in it, beyond the daemon's own limits of depth and number. */
static void test_load_keeps_every_path(void **state)
{
    const char *names[100];
    char buf[100][8];
    struct harness_runfile f;
    struct hrr_runload l;
    struct hra_agg a;
    struct hra_key *k;
    const char *got[HRA_MAX_DEPTH_LIMIT];
    char err[8400];
    uint32_t deepest = 0;

    (void)state;
    for (int i = 0; i < 100; i++) {
        snprintf(buf[i], sizeof buf[i], "r%d", i);
        names[i] = buf[i];
    }
    harness_runfile_create(&f, path, HRR_FORMAT_NEWEST);
    k = harness_runfile_key(&f, "n", HRP_PHASE_WARM, "r99");
    harness_runfile_add_path(&f, k, names, 100, 700, 300);
    harness_runfile_put(&f, k);
    harness_runfile_commit(&f);

    hra_init(&a);
    hrr_runload_init_reader(&l, &a);
    assert_int_equal(hrr_load(&l, path, NULL, NULL, NULL, NULL, err,
                                  sizeof err),
                     0);
    assert_int_equal(hrr_runload_finish(&l), 0);
    assert_int_equal(a.nkeys, 1);
    assert_int_equal(a.npkeys, 1);
    for (const struct hra_key *p = a.keys[0]->paths; p != NULL; p = p->pnext) {
        uint32_t d = hra_path_names(&a, p->path, got);

        if (d > deepest)
            deepest = d;
    }
    assert_int_equal(deepest, 100);
    assert_string_equal(got[0], "r0");
    assert_string_equal(got[99], "r99");
    assert_int_equal(a.keys[0]->pairs, 1);
    hrr_runload_fini(&l);
    hra_fini(&a);
}

/*
 * A key that does not decode is damage; a key that decodes but for which
 * memory runs out is not: the reader says "out of memory" (-ENOMEM), not
 * "damaged". The key: 4 Mi inclusive values of one byte each on the wire,
 * 32 MiB once decoded, read in a child whose address space is limited to
 * what it uses plus 16 MiB.
 */
struct oom_key {
    const uint8_t *buf;
    size_t len;
};

/* In the child short of memory: 0 when both readers said out of memory. */
static int decode_short_of_memory(void *ctx)
{
    const struct oom_key *x = ctx;
    Hostrange__RunKey *out = NULL;
    struct hrr_reader r;
    char err[256];
    int rc;

    out = hrp_unpack(&hostrange__run_key__descriptor, x->len, x->buf, &rc);
    if (out != NULL || rc != -ENOMEM)
        return 1;
    memset(&r, 0, sizeof r);
    r.path = "oom.hrs";
    r.offset = x->len + HRR_REC_HEADER;
    rc = hrr_unpack_key(&r, x->buf, x->len, &out, err, sizeof err);
    if (rc != -ENOMEM || strcmp(err, "oom.hrs: out of memory") != 0)
        return 2;
    return 0;
}

static void test_out_of_memory_is_not_damage(void **state)
{
    enum { N = 4 << 20 };
    Hostrange__RunKey k = HOSTRANGE__RUN_KEY__INIT, *out = NULL;
    struct oom_key x;
    uint64_t *v;
    uint8_t *buf;
    size_t len;
    int rc;

    (void)state;
    v = calloc(N, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < N; i++)
        v[i] = 1;
    k.node_id = "t/oom";
    k.range = "r";
    k.n_inclusive = N;
    k.inclusive = v;
    len = hostrange__run_key__get_packed_size(&k);
    buf = malloc(len);
    assert_non_null(buf);
    assert_int_equal(hostrange__run_key__pack(&k, buf), len);
    free(v);
    /* With memory: it decodes. Cut short: damage. */
    out = hrp_unpack(&hostrange__run_key__descriptor, len, buf, &rc);
    assert_non_null(out);
    assert_int_equal(rc, 0);
    assert_int_equal(out->n_inclusive, N);
    hostrange__run_key__free_unpacked(out, NULL);
    assert_null(hrp_unpack(&hostrange__run_key__descriptor, len - 1, buf,
                           &rc));
    assert_int_equal(rc, -EINVAL);
    x.buf = buf;
    x.len = len;
    rc = harness_short_of_memory(decode_short_of_memory, &x, 16u << 20);
    free(buf);
    if (rc < 0)
        skip();
    assert_int_equal(rc, 0);
}

/* In the child short of memory: hostrangectl diff of the run file at
 * path against itself; its exit status, with stderr in bad. */
static int diff_short_of_memory(void *ctx)
{
    const char *ctl = ctx;
    int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    if (fd < 0 || dup2(fd, 2) < 0 || freopen("/dev/null", "w", stdout) == NULL)
        return 126;
    execl(ctl, ctl, "diff", path, path, (char *)NULL);
    return 126;
}

/*
 * The same through hostrangectl: diff of a run file whose key it must
 * unpack (an --unsorted file), 4 Mi values, 32 MiB decoded, in a process
 * allowed 16 MiB more address space than the test had: exit status 5
 * (another failure: out of memory), not 3 (a file that cannot be read).
 */
static void test_diff_out_of_memory(void **state)
{
    const char *ctl = getenv("HOSTRANGECTL");
    struct harness_runfile f;
    struct hra_key *k;
    uint64_t rng = 7;
    char *err;
    int rc;

    (void)state;
    if (ctl == NULL)
        skip();
    harness_runfile_create(&f, path, HRR_FORMAT_EVENTS);
    k = harness_runfile_key(&f, "t/oom", 1, "r");
    harness_runfile_add_random(&f, k, 4u << 20, 100, 50, &rng);
    harness_runfile_put(&f, k);
    harness_runfile_commit(&f);
    rc = harness_short_of_memory(diff_short_of_memory, (void *)ctl,
                                 16u << 20);
    if (rc < 0)
        skip();
    err = harness_read_file(bad);
    if (rc != 5 || strstr(err, "hostrangectl diff: out of memory") == NULL)
        fail_msg("diff short of memory: status %d, stderr: %s", rc, err);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_record, setup, teardown),
        cmocka_unit_test(test_out_of_memory_is_not_damage),
        cmocka_unit_test_setup_teardown(test_diff_out_of_memory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_load_keeps_every_path, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_packed_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_of_every_size, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_keys_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_keeps_target, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_truncation, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_flipped_byte, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_system_errors, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_foreign_and_newer, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
