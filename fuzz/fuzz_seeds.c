/*
 * Writes the seed corpus of the libFuzzer targets into DIR/ingest,
 * DIR/control, DIR/state, DIR/ack and DIR/spool: valid messages and files
 * made by the real encoders: batches by the client's encoder (hr__enc_*),
 * control requests and answers by protobuf-c, snapshots by
 * hrd_snapshot_write and journals of those batches, spool files by the
 * client's writer (hr__spool_write), in fuzz_state's input format
 * (fuzz/common.h), a snapshot of an earlier release's format (OLD_SNAPSHOT,
 * tests/data/state-v4/snapshot) when given, and one damaged file.
 *
 * Usage: fuzz_seeds DIR [OLD_SNAPSHOT]
 */
#include "config.h"

#include "client/encode.h"
#include "client/spool.h"
#include "lib/agg/agg_impl.h"
#include "daemon/control.h"
#include "lib/run/run.h"
#include "daemon/snapshot.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_out;

static __attribute__((noreturn)) void die(const char *what)
{
    fprintf(stderr, "fuzz_seeds: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void put(const char *kind, const char *name, const void *p, size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", g_out, kind);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s/%s", g_out, kind, name);
    f = fopen(path, "w");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
        die(path);
}

/* --- batches ------------------------------------------------------------- */

static const char *const names[] = { "binding.body", "dispatch.call",
                                     "operator.call", "cache.lookup",
                                     "end_to_end" };

static const char *range_name(uint32_t id)
{
    return id >= 1 && id <= 5 ? names[id - 1] : NULL;
}

static int label_get(uint32_t id, const char **node, const char **op,
                     const char **backend, unsigned *phase)
{
    static const char *const nodes[3] = { "ops/add[cpu-float32-13x4]",
                                          "ops/gemm[cpu-float64-4x8x2]",
                                          "tests/x::y" };
    if (id < 1 || id > 6)
        return -1;
    *node = nodes[(id - 1) / 2];
    /* Label 3 has no operator and 4 no backend (hr_labels_set takes
     * both empty): such keys go through snapshots and run files too. */
    *op = id <= 2 ? "add" : id == 3 ? "" : "gemm";
    *backend = id == 4 ? "" : id <= 4 ? "cpu" : "cuda";
    *phase = id % 2 ? HRP_PHASE_COLD : HRP_PHASE_WARM;
    return 0;
}

/* Contexts 1..5: the ranges at the top of a stack; 6: dispatch.call in
 * binding.body (1); 7: operator.call in 6; 8: cache.lookup in 7. */
static void ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *range)
{
    static const uint32_t p[9] = { 0, 0, 0, 0, 0, 0, 1, 6, 7 };
    static const uint32_t r[9] = { 0, 1, 2, 3, 4, 5, 2, 3, 4 };

    *parent = ctx < 9 ? p[ctx] : 0;
    *range = ctx < 9 ? r[ctx] : 0;
}

static const struct hr__namer namer = { range_name, label_get, ctx_get };

/*
 * Encodes batch `seq` of client pid: `n` range samples over `labels` label
 * sets and the first eight contexts (leaves, and parents with children and
 * further descendants), `nrec` records of end_to_end, lost counts and the
 * library's own work (stalls, wake-ups) when `lost`. The caller frees the
 * result.
 */
static uint8_t *batch(uint32_t pid, uint64_t seq, uint32_t n, uint32_t labels,
                      uint32_t nrec, int lost, size_t *len)
{
    static const uint32_t lost_ids[2] = { 1, 2 };
    static const uint64_t lost_counts[2] = { 5, 9 };
    struct hr__enc e;
    struct hr__batch_header h = { 0 };
    uint8_t *out = NULL;
    int rc = 0;

    if (hr__enc_init(&e, &namer) != 0)
        die("memory");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t ctx = 1 + i % 8;
        uint64_t incl = 100 + (uint64_t)i * 977 % 50000;
        uint64_t self = incl / (1 + i % 3);
        uint32_t nchild = self == incl ? 0 : 1 + i % 2;

        rc |= hr__enc_sample(&e, 1 + i % labels, ctx, incl, incl - self,
                             nchild, nchild + i % 3, 0);
    }
    for (uint32_t i = 0; i < nrec; i++)
        rc |= hr__enc_sample(&e, 1 + i % labels, 5, 20000 + i, 0, 0, 0, 1);
    if (lost) {
        rc |= hr__enc_internal(&e, 1, 0, 700);
        rc |= hr__enc_internal(&e, labels, 1, 3000 + seq);
    }
    h.pid = pid;
    h.instance = 0x1234 + pid;
    h.process_label = "seed";
    h.seq = seq;
    h.clock = seq % 2 ? "tsc" : "monotonic";
    h.lost_events = lost ? 14 : 0;
    h.out_of_order = seq % 3;
    h.contexts_dropped = seq % 2;
    h.lost_ids = lost_ids;
    h.lost_counts = lost_counts;
    h.n_lost = lost ? 2 : 0;
    if (rc != 0 || hr__enc_seal(&e, &h, &out, len) != 0)
        die("encoding");
    hr__enc_fini(&e);
    return out;
}

/* A namer whose range name 2 is over HRP_MAX_STRING (`bad` 0) or whose
 * node ids are empty (`bad` 1): what a client that does not check its
 * strings (an old or hostile one) sends. */
static int g_bad;

static const char *bad_range_name(uint32_t id)
{
    static char big[HRP_MAX_STRING + 2];

    if (g_bad == 0 && id == 2) {
        memset(big, 'x', sizeof big - 1);
        return big;
    }
    return range_name(id);
}

static int bad_label_get(uint32_t id, const char **node, const char **op,
                         const char **backend, unsigned *phase)
{
    int rc = label_get(id, node, op, backend, phase);

    if (rc == 0 && g_bad == 1 && id == 2)
        *node = "";
    return rc;
}

/* Batches of good samples with one bad string among them: the daemon
 * refuses them, and counts their events lost under the node ids it can
 * read. */
static void seeds_bad_strings(void)
{
    static const struct hr__namer bad = { bad_range_name, bad_label_get,
                                          ctx_get };

    for (g_bad = 0; g_bad < 2; g_bad++) {
        struct hr__enc e;
        struct hr__batch_header h = { 0 };
        uint8_t *out = NULL;
        size_t len;
        int rc = 0;
        char name[32];

        if (hr__enc_init(&e, &bad) != 0)
            die("memory");
        for (uint32_t i = 0; i < 40; i++)
            rc |= hr__enc_sample(&e, 1 + i % 2, 1 + i % 8, 100 + i, 0, 0, 0,
                                 0);
        h.pid = 200;
        h.instance = 0x5678;
        h.process_label = "seed";
        h.seq = 1;
        h.clock = "tsc";
        if (rc != 0 || hr__enc_seal(&e, &h, &out, &len) != 0)
            die("encoding");
        hr__enc_fini(&e);
        snprintf(name, sizeof name, "bad-string-%d", g_bad);
        put("ingest", name, out, len);
        free(out);
    }
}

static void seeds_ingest(void)
{
    static const struct {
        uint32_t n, labels, nrec;
        int lost;
    } shapes[] = {
        { 8, 2, 1, 0 },  { 64, 6, 4, 1 }, { 0, 1, 3, 0 }, { 1, 1, 0, 1 },
        { 300, 4, 10, 0 }, { 2000, 6, 50, 1 }, { 0, 2, 0, 1 },
    };
    char name[32];

    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        size_t len;
        uint8_t *b = batch(100 + (uint32_t)i, 1 + i, shapes[i].n,
                           shapes[i].labels, shapes[i].nrec, shapes[i].lost,
                           &len);
        snprintf(name, sizeof name, "batch-%zu", i);
        put("ingest", name, b, len);
        free(b);
    }
    seeds_bad_strings();
}

/* --- control requests and answers --------------------------------------- */

static void control(const char *name, Hostrange__ControlRequest *q)
{
    size_t len = hostrange__control_request__get_packed_size(q);
    uint8_t *buf = malloc(len + 1);

    if (buf == NULL)
        die("memory");
    hostrange__control_request__pack(q, buf);
    put("control", name, buf, len);
    free(buf);
}

static void seeds_control(void)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest d = HOSTRANGE__DUMP_REQUEST__INIT;
    Hostrange__ResetRequest r = HOSTRANGE__RESET_REQUEST__INIT;
    Hostrange__StatsRequest s = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__PingRequest p = HOSTRANGE__PING_REQUEST__INIT;
    static uint8_t cursor[20] = { 1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0,
                                  1, 0, 0, 0, 1, 0, 0, 0 };

    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_DUMP;
    q.dump = &d;
    control("dump", &q);
    d.paged = 1;
    control("dump-paged", &q);
    d.cursor.data = cursor;
    d.cursor.len = sizeof cursor;
    control("dump-cursor", &q);
    d.paged = 0;
    d.cursor.len = 0;
    d.node_glob = "fuzz/control::*";
    d.range_glob = "*.call";
    d.phase = HRP_PHASE_WARM;
    control("dump-filtered", &q);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &s;
    control("stats", &q);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_PING;
    q.ping = &p;
    control("ping", &q);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_RESET;
    q.reset = &r;
    control("reset-all", &q);
    r.node_glob = "*::b";
    r.phase = HRP_PHASE_COLD;
    control("reset-filtered", &q);
}

static void seeds_ack(void)
{
    static const Hostrange__Ack__Status st[4] = {
        HOSTRANGE__ACK__STATUS__OK, HOSTRANGE__ACK__STATUS__DUPLICATE,
        HOSTRANGE__ACK__STATUS__REJECTED, HOSTRANGE__ACK__STATUS__RETRY,
    };
    uint8_t buf[256];
    char name[32];

    for (int i = 0; i < 4; i++) {
        Hostrange__Ack a = HOSTRANGE__ACK__INIT;
        size_t len;

        a.version = HRP_VERSION;
        a.seq = 1;
        a.status = st[i];
        a.error = st[i] == HOSTRANGE__ACK__STATUS__REJECTED
                      ? "rejected: index"
                      : "";
        len = hostrange__ack__pack(&a, buf);
        snprintf(name, sizeof name, "ack-%d", i);
        put("ack", name, buf, len);
    }
    {
        /* A refusal whose events the daemon counted lost. */
        Hostrange__Ack a = HOSTRANGE__ACK__INIT;
        size_t len;

        a.version = HRP_VERSION;
        a.seq = 1;
        a.status = HOSTRANGE__ACK__STATUS__REJECTED;
        a.error = "rejected: memory_budget";
        a.counted_lost = 1;
        len = hostrange__ack__pack(&a, buf);
        put("ack", "ack-counted", buf, len);
    }
}

/* --- snapshots and journals ---------------------------------------------- */

/* Re-frames the record file dir/name as fuzz_state input (mode first). */
static void frame(const char *dir, const char *name, const char *magic,
                  uint8_t mode, const char *seed)
{
    struct hrr_recreader r;
    const uint8_t *p;
    uint8_t type, *out = NULL;
    size_t len, n = 1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY), rc;

    if (dfd < 0 || hrr_recreader_open(&r, dfd, name, magic) != 0)
        die(name);
    out = malloc(1);
    out[0] = mode;
    while ((rc = hrr_recreader_next(&r, &type, &p, &len)) == 1) {
        if (len > 0xffff)
            continue; /* too long for the frame: left out */
        out = realloc(out, n + 3 + len);
        if (out == NULL)
            die("memory");
        out[n] = type;
        out[n + 1] = (uint8_t)len;
        out[n + 2] = (uint8_t)(len >> 8);
        memcpy(out + n + 3, p, len);
        n += 3 + len;
    }
    if (rc != 0)
        die("reading back");
    hrr_recreader_close(&r);
    close(dfd);
    put("state", seed, out, n);
    free(out);
}

/* The four batches the snapshot and run seeds hold. */
static void feed_four(struct hrd_ingest *in)
{
    enum hrd_reject why;

    for (uint32_t i = 0; i < 4; i++) {
        uint8_t *b, *ack;
        size_t len, ack_len;

        b = batch(200 + i % 2, 1 + i / 2, 40 + 10 * i, 1 + i, i, i % 2, &len);
        hrd_ingest_handle(in, b, len, &ack, &ack_len, &why);
        free(ack);
        free(b);
    }
}

/* A snapshot of a few batches, with keys exact (or in histograms when
 * exact_cap is small) and samples kept without their path: the bytes of
 * the file after its magic. */
static void snapshot_seed(const char *dir, uint64_t exact_cap,
                          const char *seed)
{
    struct hra_agg a;
    struct hrd_ingest in;
    char path[4096], err[600];
    FILE *fp;
    uint8_t *buf;
    long sz = 0;

    hra_init(&a);
    a.exact_cap = exact_cap;
    hrd_ingest_init(&in, &a);
    feed_four(&in);
    /* The samples kept without their calling path, as a daemon counts
     * them, so that the state record's counts are not all 0. */
    a.paths_too_deep = 3;
    a.paths_table_full = 2;
    snprintf(path, sizeof path, "%s/snap", dir);
    if (hrd_snapshot_write(path, &a, &in, 3, err, sizeof err) != 0)
        die(err);
    fp = fopen(path, "r");
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0)
        die(path);
    sz = ftell(fp);
    if (sz < 8)
        die(path);
    buf = malloc((size_t)sz);
    rewind(fp);
    if (buf == NULL || fread(buf, 1, (size_t)sz, fp) != (size_t)sz)
        die(path);
    fclose(fp);
    buf[7] = FUZZ_STATE_SNAPSHOT | FUZZ_STATE_RAW;
    put("state", seed, buf + 7, (size_t)sz - 7);
    free(buf);
    hrd_ingest_fini(&in);
    hra_fini(&a);
}

/* A snapshot of an earlier release (a record file), framed and raw. */
static void legacy_seed(const char *file, const char *seed)
{
    char dir[4096], name[4096], raw[64];
    const char *slash = strrchr(file, '/');
    FILE *fp;
    uint8_t *buf;
    long sz;

    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 1,
             slash ? file : ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : file);
    frame(dir, name, HRR_SNAPSHOT_MAGIC, 0, seed);
    fp = fopen(file, "r");
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (sz = ftell(fp)) < 8)
        die(file);
    buf = malloc((size_t)sz);
    rewind(fp);
    if (buf == NULL || fread(buf, 1, (size_t)sz, fp) != (size_t)sz)
        die(file);
    fclose(fp);
    buf[7] = FUZZ_STATE_RAW;
    snprintf(raw, sizeof raw, "%s-raw", seed);
    put("state", raw, buf + 7, (size_t)sz - 7);
    free(buf);
}

/* Run files of the same batches as fuzz_state input: each key packed by
 * hrr_runkey_from in `format` (exact, or histograms when exact_cap is
 * small), framed; and, for format 2, the raw bytes of the whole file as
 * hrr_put_agg writes it. Besides: a key's events alone, for the
 * decoders that fuzz_run also runs on its input. */
static void run_seed(const char *dir, uint64_t exact_cap, int format,
                     const char *seed)
{
    struct hra_agg a;
    struct hrd_ingest in;
    uint8_t *out = malloc(1);
    size_t n = 1;
    char path[4200], err[8400];

    hra_init(&a);
    a.exact_cap = exact_cap;
    hrd_ingest_init(&in, &a);
    feed_four(&in);
    if (out == NULL)
        die("memory");
    out[0] = FUZZ_STATE_RUN;
    for (uint32_t i = 0; i < a.nkeys; i++) {
        Hostrange__RunKey m;
        size_t len;

        if (hrr_runkey_from(&a, a.keys[i], format, &m) != 0)
            die("memory");
        len = hostrange__run_key__get_packed_size(&m);
        if (len <= 0xffff) {
            out = realloc(out, n + 3 + len);
            if (out == NULL)
                die("memory");
            out[n] = 'K';
            out[n + 1] = (uint8_t)len;
            out[n + 2] = (uint8_t)(len >> 8);
            hostrange__run_key__pack(&m, out + n + 3);
            n += 3 + len;
        }
        if (i == 0 && m.events.len > 0) {
            uint8_t *ev = malloc(m.events.len + 1);

            if (ev == NULL)
                die("memory");
            ev[0] = FUZZ_STATE_RUN | FUZZ_STATE_RAW;
            memcpy(ev + 1, m.events.data, m.events.len);
            snprintf(path, sizeof path, "%s-events", seed);
            put("state", path, ev, m.events.len + 1);
            free(ev);
        }
        hrr_runkey_clear(&m);
    }
    put("state", seed, out, n);
    free(out);
    if (format == HRR_FORMAT_NEWEST) {
        Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
        Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
        struct hrr_writer w;
        FILE *fp;
        char *buf, raw[64];
        long sz;

        snprintf(path, sizeof path, "%s/run.hrs", dir);
        h.format = HRR_FORMAT_NEWEST;
        h.host = "seed";
        if (hrr_create(&w, path, &h, err, sizeof err) != 0 ||
            hrr_put_agg(&w, &a, format, err, sizeof err) != 0 ||
            hrr_commit(&w, &e, err, sizeof err) != 0)
            die(err);
        hrr_abort(&w);
        fp = fopen(path, "r");
        if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (sz = ftell(fp)) < 8)
            die(path);
        buf = malloc((size_t)sz);
        rewind(fp);
        if (buf == NULL || fread(buf, 1, (size_t)sz, fp) != (size_t)sz)
            die(path);
        fclose(fp);
        unlink(path);
        buf[7] = FUZZ_STATE_RUN | FUZZ_STATE_RAW;
        snprintf(raw, sizeof raw, "%s-raw", seed);
        put("state", raw, buf + 7, (size_t)sz - 7);
        free(buf);
    }
    hrd_ingest_fini(&in);
    hra_fini(&a);
}

static void journal_seed(const char *dir)
{
    struct hrr_recfile f;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    Hostrange__ResetRequest r = HOSTRANGE__RESET_REQUEST__INIT;
    uint8_t rb[64];
    size_t rlen;

    unlinkat(dfd, "journal", 0);
    if (dfd < 0 ||
        hrr_recfile_open(&f, dfd, "journal", HRR_JOURNAL_MAGIC) != 0)
        die("journal");
    for (uint32_t i = 0; i < 5; i++) {
        size_t len;
        uint8_t *b = batch(300 + i % 2, 1 + i / 2, 20 + i, 1 + i % 3, i % 2,
                           i == 4, &len);
        if (hrr_recfile_append(&f, HRR_REC_BATCH, b, len) != 0)
            die("journal");
        free(b);
        if (i == 2) {
            r.node_glob = "ops/add*";
            rlen = hostrange__reset_request__pack(&r, rb);
            if (hrr_recfile_append(&f, HRR_REC_RESET, rb, rlen) != 0)
                die("journal");
        }
    }
    hrr_recfile_close(&f);
    close(dfd);
    frame(dir, "journal", HRR_JOURNAL_MAGIC, FUZZ_STATE_JOURNAL, "journal");
}

/*
 * Spool files of process FUZZ_SPOOL_PID from the client's writer, with
 * `nb` batches of its (besides the last one), in both of fuzz_spool's
 * input modes: the raw file after its magic, and its records to frame.
 */
static void spool_seed(const char *dir, uint32_t nb, const char *name)
{
    static const uint32_t label_one[1] = { 1 };
    struct hr__spool_batch sb[3];
    struct hr__spool s = { 0 };
    uint8_t *final, *file, mode;
    char path[4200], seed[64];
    size_t final_len, len, at;
    FILE *f;
    long n;

    for (uint32_t i = 0; i < nb; i++) {
        memset(&sb[i], 0, sizeof sb[i]);
        sb[i].seq = 1 + i;
        sb[i].buf = batch(FUZZ_SPOOL_PID, 1 + i, 8 << i, 1, 0, 0, &sb[i].len);
        sb[i].events = 8u << i;
        sb[i].nlab = 1;
        sb[i].lab = label_one;
        sb[i].lab_events = &sb[i].events;
        sb[i].sent = i == 0;
        s.spooled += sb[i].events;
    }
    final = batch(FUZZ_SPOOL_PID, 1 + nb, 0, 2, 0, 1, &final_len);
    s.pid = FUZZ_SPOOL_PID;
    s.instance = FUZZ_SPOOL_INSTANCE;
    s.samples = s.spooled + 14;
    s.lost = 14;
    s.batches = sb;
    s.nbatches = nb;
    s.final_batch = final;
    s.final_len = final_len;
    s.label_get = label_get;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        die(dir);
    if (hr__spool_write(dir, &s) != 0)
        die("spool file");
    if (hrp_spool_file_name(seed, sizeof seed, FUZZ_SPOOL_PID,
                            FUZZ_SPOOL_INSTANCE, HRP_SPOOL_SUFFIX) != 0)
        die("spool name");
    snprintf(path, sizeof path, "%s/%s", dir, seed);
    f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
        die(path);
    file = malloc((size_t)n + 1);
    rewind(f);
    if (file == NULL || fread(file, 1, (size_t)n, f) != (size_t)n)
        die(path);
    fclose(f);
    unlink(path);
    rmdir(dir);
    /* Raw: the mode byte replaces the magic. */
    len = (size_t)n;
    mode = FUZZ_STATE_RAW;
    memcpy(file + HRP_SPOOL_MAGIC_LEN - 1, &mode, 1);
    snprintf(seed, sizeof seed, "%s-raw", name);
    put("spool", seed, file + HRP_SPOOL_MAGIC_LEN - 1,
        len - HRP_SPOOL_MAGIC_LEN + 1);
    /* Framed: each record as type, 16-bit length, payload. */
    {
        uint8_t *out = malloc(len + 1);
        size_t o = 0;

        if (out == NULL)
            die("memory");
        out[o++] = 0;
        for (at = HRP_SPOOL_MAGIC_LEN; at + HRP_SPOOL_REC_HEADER <= len;) {
            uint8_t type;
            uint32_t rl;
            uint64_t check;

            hrp_spool_rec_parse(file + at, &type, &rl, &check);
            if (rl > 0xffff)
                die("a spool record too large for a seed");
            out[o++] = type;
            out[o++] = (uint8_t)rl;
            out[o++] = (uint8_t)(rl >> 8);
            memcpy(out + o, file + at + HRP_SPOOL_REC_HEADER, rl);
            o += rl;
            at += HRP_SPOOL_REC_HEADER + rl;
        }
        snprintf(seed, sizeof seed, "%s-framed", name);
        put("spool", seed, out, o);
        free(out);
    }
    free(file);
    free(final);
    for (uint32_t i = 0; i < nb; i++)
        free((void *)sb[i].buf);
}

int main(int argc, char **argv)
{
    char tmp[4096];

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fuzz_seeds DIR [OLD_SNAPSHOT]\n");
        return 2;
    }
    g_out = argv[1];
    if (mkdir(g_out, 0755) != 0 && errno != EEXIST)
        die(g_out);
    snprintf(tmp, sizeof tmp, "%s/.work", g_out);
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        die(tmp);
    seeds_ingest();
    seeds_control();
    seeds_ack();
    snapshot_seed(tmp, 1000000, "snapshot-exact");
    snapshot_seed(tmp, 8, "snapshot-hist");
    if (argc == 3)
        legacy_seed(argv[2], "snapshot-legacy");
    run_seed(tmp, 1000000, HRR_FORMAT_NEWEST, "run-events");
    run_seed(tmp, 1000000, 1, "run-sorted");
    run_seed(tmp, 8, HRR_FORMAT_NEWEST, "run-hist");
    journal_seed(tmp);
    {
        char p[4200];
        snprintf(p, sizeof p, "%s/spool", tmp);
        spool_seed(p, 3, "spool-three");
        spool_seed(p, 0, "spool-last-only");
    }
    {
        /* Damage: a raw snapshot whose first record claims 2^31 - 1 bytes
         * (the reader must not allocate them before finding the file
         * shorter). */
        static const uint8_t damaged[10] = { FUZZ_STATE_RAW, 0xff, 0xff, 0xff,
                                             0x7f, 0, 0, 0, 0, 'H' };
        put("state", "damaged-length", damaged, sizeof damaged);
    }
    {
        char p[4200];
        snprintf(p, sizeof p, "%s/snap", tmp);
        unlink(p);
        snprintf(p, sizeof p, "%s/journal", tmp);
        unlink(p);
        rmdir(tmp);
    }
    return 0;
}
