/*
 * libFuzzer target: the loaders of the state directory, the snapshot
 * (hrd_snapshot_load, of the run format or of an earlier release's) and
 * the journal (replayed by hrd_state_open), on a file made from the input
 * as fuzz/common.h describes.
 *
 * A snapshot that loads is then used: the report is written, a valid batch
 * is added to it, and it is written as a snapshot again (in the run
 * format) and loaded back, which must give the same report. A journal is replayed into a state
 * directory that is then closed (which writes its snapshot) and opened
 * again: the same report again. A run file that loads (hrr_load, the
 * loader of merge, dump --from and hostranged --load) is written again and
 * loaded back: the same report; merged alone and with itself as
 * hostrangectl merge does (keys copied, joined or loaded), it is refused
 * or kept as loading it once or twice does, with the same report. The
 * decoders of coded events (RunKey.events) also run on the input itself
 * and must agree with each other.
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "lib/run/run.h"
#include "lib/run/runmerge.h"
#include "daemon/snapshot.h"
#include "daemon/state.h"
#include "fuzz/common.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];
static int g_dirfd = -1;

/* Removes what the directory holds, and the directory when `all`. */
static void dir_clean(int all)
{
    DIR *d = fdopendir(dup(g_dirfd));
    struct dirent *e;

    FUZZ_CHECK(d != NULL);
    /* The duplicate shares the directory's offset with g_dirfd. */
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(g_dirfd, e->d_name, 0);
    }
    closedir(d);
    if (all)
        rmdir(g_dir);
}

static void dir_remove(void)
{
    dir_clean(1);
}

/* The private directory the files are written in (on tmpfs when there is
 * one), made once (and removed at exit) and emptied for every input. */
static void dir_ready(void)
{
    if (g_dirfd < 0) {
        const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                          : getenv("TMPDIR") != NULL ? getenv("TMPDIR")
                                                     : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/hostrange-fuzz-XXXXXX", tmp);
        FUZZ_CHECK(mkdtemp(g_dir) != NULL);
        g_dirfd = open(g_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FUZZ_CHECK(g_dirfd >= 0);
        atexit(dir_remove);
    }
    dir_clean(0);
}

/* Writes the record file `name` from the input after its mode byte. */
static void write_file(const char *name, const char *magic, uint8_t mode,
                       const uint8_t *p, size_t n)
{
    struct hrr_recfile f;

    FUZZ_CHECK(hrr_recfile_open(&f, g_dirfd, name, magic) == 0);
    if (mode & FUZZ_STATE_RAW) {
        FUZZ_CHECK(write(f.fd, p, n) == (ssize_t)n);
    } else {
        while (n >= 3) {
            uint8_t type = p[0];
            size_t len = (size_t)p[1] | (size_t)p[2] << 8;

            p += 3;
            n -= 3;
            if (len > n)
                len = n;
            FUZZ_CHECK(hrr_recfile_append(&f, type, p, len) == 0);
            p += len;
            n -= len;
        }
    }
    hrr_recfile_close(&f);
}

/* A valid batch of a client of its own, added to what was loaded: two
 * samples of one range, one with a child. */
static void add_batch(struct hrd_ingest *in)
{
    static char *ranges[1] = { "fuzz.range" };
    static uint32_t zero[1];
    /* Label set 0; context 0: 100 ns with 50 ns in 1 child, then 120 ns
     * without children (each value one varint byte: below 128). */
    static uint8_t stream[] = { 0 << 2 | HRP_ITEM_LABEL,
                                0 << 2 | HRP_ITEM_PARENT, 100, 50, 1, 0,
                                0 << 2 | HRP_ITEM_LEAF, 120 };
    Hostrange__LabelSet l = HOSTRANGE__LABEL_SET__INIT;
    Hostrange__LabelSet *lp = &l;
    Hostrange__Batch b = HOSTRANGE__BATCH__INIT;
    uint8_t buf[512], *ack;
    size_t len, ack_len;
    enum hrd_reject why;

    l.node_id = "fuzz/state::added";
    l.operator_ = "add";
    l.backend = "cpu";
    l.phase = HRP_PHASE_WARM;
    b.version = HRP_VERSION;
    b.pid = 4294967295u;
    b.instance = 0xfeedull;
    b.seq = 1;
    b.n_labels = 1;
    b.labels = &lp;
    b.n_ranges = 1;
    b.ranges = ranges;
    b.n_context_parent = b.n_context_range = 1;
    b.context_parent = zero;
    b.context_range = zero;
    b.samples.data = stream;
    b.samples.len = sizeof stream;
    b.events = 2;
    len = hostrange__batch__pack(&b, buf);
    /* Valid whatever was loaded: taken, a duplicate, or refused for want
     * of memory, never for what it holds. */
    if (hrd_ingest_handle(in, buf, len, &ack, &ack_len, &why) ==
        HRD_INGEST_REJECTED)
        FUZZ_CHECK(why == HRD_REJECT_MEMORY || why == HRD_REJECT_NOMEM);
    free(ack);
}

static void fuzz_snapshot(uint8_t mode, const uint8_t *p, size_t n)
{
    struct hra_agg a, a2;
    struct hrd_ingest in, in2;
    struct hrd_snapshot_loaded sl;
    char path[300], again[300], err[600], *r1, *r2;
    int rc;

    snprintf(path, sizeof path, "%s/snapshot", g_dir);
    snprintf(again, sizeof again, "%s/again", g_dir);
    if (mode & FUZZ_STATE_SNAPSHOT) {
        int fd = openat(g_dirfd, "snapshot", O_WRONLY | O_CREAT | O_TRUNC,
                        0600);

        FUZZ_CHECK(fd >= 0);
        FUZZ_CHECK(write(fd, HRR_MAGIC, 8) == 8);
        FUZZ_CHECK(write(fd, p, n) == (ssize_t)n);
        close(fd);
    } else {
        write_file("snapshot", HRR_SNAPSHOT_MAGIC, mode, p, n);
    }
    hra_init(&a);
    hrd_ingest_init(&in, &a);
    hrd_snapshot_load(path, &a, &in, &sl);
    free(fuzz_report(&a, NULL));
    add_batch(&in);
    r1 = fuzz_report(&a, NULL);

    /* What was loaded, written and loaded again, is the same. */
    FUZZ_CHECK(hrd_snapshot_write(again, &a, &in, sl.covers, err,
                                  sizeof err) == 0);
    hra_init(&a2);
    hrd_ingest_init(&in2, &a2);
    rc = hrd_snapshot_load(again, &a2, &in2, &sl);
    if (rc != 0)
        fprintf(stderr, "reload: %s\n", sl.why);
    FUZZ_CHECK(rc == 0 && sl.complete && !sl.legacy);
    FUZZ_CHECK(a2.nkeys == a.nkeys && in2.nclients == in.nclients);
    r2 = fuzz_report(&a2, NULL);
    FUZZ_CHECK(strcmp(r1, r2) == 0);
    free(r1);
    free(r2);
    hrd_ingest_fini(&in2);
    hra_fini(&a2);
    hrd_ingest_fini(&in);
    hra_fini(&a);
}

static void log_nothing(void *ctx, const char *fmt, ...)
{
    (void)ctx;
    (void)fmt;
}

/* Opens the state directory into a fresh aggregation; returns its report
 * (caller frees). */
static char *open_state(void)
{
    static const struct hrd_state_opts opts = { 1000, 300000, 256u << 20 };
    struct hrd_state s;
    struct hra_agg a;
    struct hrd_ingest in;
    char err[256], *rep;

    hra_init(&a);
    hrd_ingest_init(&in, &a);
    FUZZ_CHECK(hrd_state_open(&s, g_dir, &opts, &a, &in, log_nothing, NULL,
                              err, sizeof err) == 0);
    rep = fuzz_report(&a, NULL);
    hrd_state_close(&s);
    hrd_ingest_fini(&in);
    hra_fini(&a);
    return rep;
}

static void fuzz_journal(uint8_t mode, const uint8_t *p, size_t n)
{
    char *r1, *r2;

    write_file("journal.1", HRR_JOURNAL_MAGIC, mode, p, n);
    r1 = open_state();
    r2 = open_state();
    FUZZ_CHECK(strcmp(r1, r2) == 0);
    free(r1);
    free(r2);
}

/* The decoders of coded events on any bytes: the check and the checking
 * decoder accept the same inputs, with the same counts, and what they
 * accept the daemon's own decoder (hra_key_values, on a copy with the
 * slack it reads into) reads as the same values. */
static void coded_events(const uint8_t *p, size_t n)
{
    uint64_t np, nr, *i1, *s1, *i2, *s2;
    size_t ni, ns, ni2, ns2;
    int ok = hra_events_check(p, n, &np, &nr) == 0;

    i1 = malloc((n + 1) * sizeof *i1);
    s1 = malloc((n + 1) * sizeof *s1);
    i2 = malloc((n + 1) * sizeof *i2);
    s2 = malloc((n + 1) * sizeof *s2);
    FUZZ_CHECK(i1 != NULL && s1 != NULL && i2 != NULL && s2 != NULL);
    FUZZ_CHECK((hra_events_decode(p, n, i1, n, &ni, s1, n, &ns) == 0) ==
               ok);
    if (ok) {
        struct hra_key k = { 0 };
        uint8_t *copy = calloc(n + HRA_SLACK, 1);

        FUZZ_CHECK(copy != NULL);
        FUZZ_CHECK(ni == np + nr && ns == np);
        if (n != 0)
            memcpy(copy, p, n);
        k.buf = copy;
        k.len = n;
        hra_key_values(&k, i2, &ni2, s2, &ns2);
        FUZZ_CHECK(ni2 == ni && ns2 == ns);
        FUZZ_CHECK(memcmp(i1, i2, ni * sizeof *i1) == 0);
        FUZZ_CHECK(memcmp(s1, s2, ns * sizeof *s1) == 0);
        free(copy);
    }
    free(i1);
    free(s1);
    free(i2);
    free(s2);
}

/* Loads the run file at path into a fresh aggregation; returns its report
 * (caller frees) or NULL when it does not load. */
static char *load_run(const char *path, int format)
{
    Hostrange__RunEnd *e = NULL;
    struct hrr_runload l;
    struct hra_agg a;
    char err[8400], *rep = NULL;

    hra_init(&a);
    hrr_runload_init(&l, &a);
    if (hrr_load(&l, path, NULL, &e, NULL, NULL, err, sizeof err) == 0 &&
        hrr_runload_finish(&l) == 0) {
        char again[300];
        struct hrr_writer w;
        Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
        Hostrange__RunEnd end = HOSTRANGE__RUN_END__INIT;

        rep = fuzz_report(&a, NULL);
        /* Written again (as save and merge write), for the caller to load
         * back. */
        snprintf(again, sizeof again, "%s/again.hrs", g_dir);
        h.format = (uint32_t)format;
        h.host = "fuzz";
        FUZZ_CHECK(hrr_create(&w, again, &h, err, sizeof err) == 0);
        FUZZ_CHECK(hrr_put_agg(&w, &a, format, err, sizeof err) == 0);
        FUZZ_CHECK(hrr_commit(&w, &end, err, sizeof err) == 0);
        hrr_abort(&w);
    }
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    hrr_runload_fini(&l);
    hra_fini(&a);
    return rep;
}

/* Loads the run file at path twice into one aggregation (as merge did);
 * returns its report (caller frees) or NULL. */
static char *load_twice(const char *path)
{
    struct hrr_runload l;
    struct hra_agg a;
    char err[8400], *rep = NULL;

    hra_init(&a);
    a.exact_cap = UINT64_MAX;
    hrr_runload_init(&l, &a);
    if (hrr_load(&l, path, NULL, NULL, NULL, NULL, err, sizeof err) ==
            0 &&
        hrr_load(&l, path, NULL, NULL, NULL, NULL, err, sizeof err) ==
            0 &&
        hrr_runload_finish(&l) == 0)
        rep = fuzz_report(&a, NULL);
    hrr_runload_fini(&l);
    hra_fini(&a);
    return rep;
}

/* Merges the n run files at paths as hostrangectl merge does (keys
 * copied, joined or loaded) into merged.hrs; returns its report, loaded
 * back (caller frees), or NULL when they do not merge (nothing is then
 * written). */
static char *merge_runs(char **paths, size_t n, int format, int whole)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd end = HOSTRANGE__RUN_END__INIT;
    struct hrr_writer w;
    struct hrr_runmerge m;
    struct hra_agg a;
    char out[300], err[8400], *rep = NULL;
    int ok = 1;

    memset(&w, 0, sizeof w); /* (aborting a writer never made is a no-op) */
    snprintf(out, sizeof out, "%s/merged.hrs", g_dir);
    unlink(out);
    hra_init(&a);
    a.exact_cap = UINT64_MAX;
    FUZZ_CHECK(hrr_runmerge_init(&m, &a, format, n) == 0);
    m.whole = whole;
    for (size_t i = 0; i < n && ok; i++) {
        Hostrange__RunHeader *ih;
        Hostrange__RunEnd *ie;

        ok = hrr_runmerge_scan(&m, i, paths[i], &ih, &ie, NULL, NULL, err,
                               sizeof err) == 0;
    }
    if (ok) {
        int rc = hrr_runmerge_load(&m, err, sizeof err);

        if (rc == 0) {
            h.format = (uint32_t)format;
            h.host = "fuzz";
            FUZZ_CHECK(hrr_create(&w, out, &h, err, sizeof err) == 0);
            rc = hrr_runmerge_write(&m, &w, NULL, NULL, err, sizeof err);
            if (rc != 0)
                hrr_abort(&w);
        }
        if (rc == HRR_RUNMERGE_AGAIN) {
            /* Again, reading records whole (as merge does). */
            FUZZ_CHECK(!whole);
            hrr_runmerge_fini(&m);
            hra_fini(&a);
            return merge_runs(paths, n, format, 1);
        }
        ok = rc == 0;
        if (ok)
            FUZZ_CHECK(hrr_commit(&w, &end, err, sizeof err) == 0);
        hrr_abort(&w);
    }
    /* Refused with the name of a file, or merged. */
    FUZZ_CHECK(ok || strncmp(err, g_dir, strlen(g_dir)) == 0);
    FUZZ_CHECK(ok || access(out, F_OK) != 0);
    hrr_runmerge_fini(&m);
    hra_fini(&a);
    if (ok) {
        struct hrr_runload l;
        struct hra_agg b;

        hra_init(&b);
        hrr_runload_init(&l, &b);
        FUZZ_CHECK(hrr_load(&l, out, NULL, NULL, NULL, NULL, err,
                                sizeof err) == 0);
        FUZZ_CHECK(hrr_runload_finish(&l) == 0);
        rep = fuzz_report(&b, NULL);
        hrr_runload_fini(&l);
        hra_fini(&b);
    }
    return rep;
}

static void fuzz_run(uint8_t mode, const uint8_t *p, size_t n)
{
    char path[300], err[8400], *r1, *r2;

    coded_events(p, n);
    snprintf(path, sizeof path, "%s/run.hrs", g_dir);
    if (mode & FUZZ_STATE_RAW) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        FUZZ_CHECK(fd >= 0);
        FUZZ_CHECK(write(fd, HRR_MAGIC, 8) == 8);
        FUZZ_CHECK(write(fd, p, n) == (ssize_t)n);
        close(fd);
    } else {
        Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
        Hostrange__RunEnd end = HOSTRANGE__RUN_END__INIT;
        struct hrr_writer w;

        h.format = HRR_FORMAT_NEWEST;
        h.host = "fuzz";
        FUZZ_CHECK(hrr_create(&w, path, &h, err, sizeof err) == 0);
        while (n >= 3) {
            size_t len = (size_t)p[1] | (size_t)p[2] << 8;

            p += 3;
            n -= 3;
            if (len > n)
                len = n;
            FUZZ_CHECK(hrr_put_packed(&w, p, len, err, sizeof err) == 0);
            p += len;
            n -= len;
        }
        FUZZ_CHECK(hrr_commit(&w, &end, err, sizeof err) == 0);
        hrr_abort(&w);
    }
    /* What loaded, written again (sorted or not, as the mode says) and
     * loaded back, is the same. */
    r1 = load_run(path, mode & FUZZ_STATE_SORTED ? 1 : HRR_FORMAT_NEWEST);
    /* Merged alone (its keys copied) it is refused or kept as loading
     * it does; merged with itself (every key joined or loaded), the same
     * way, and the same as loading it twice. */
    {
        char *paths[2] = { path, path };
        char *m1 = merge_runs(paths, 1, mode & FUZZ_STATE_SORTED ? 1 : 2, 0);
        char *m2 = merge_runs(paths, 2, mode & FUZZ_STATE_SORTED ? 1 : 2, 0);
        char *l2 = NULL;

        FUZZ_CHECK((m1 != NULL) == (r1 != NULL));
        FUZZ_CHECK((m2 != NULL) == (r1 != NULL));
        FUZZ_CHECK(m1 == NULL || strcmp(m1, r1) == 0);
        if (m2 != NULL) {
            l2 = load_twice(path);
            FUZZ_CHECK(l2 != NULL && strcmp(m2, l2) == 0);
        }
        free(m1);
        free(m2);
        free(l2);
    }
    if (r1 == NULL)
        return;
    snprintf(path, sizeof path, "%s/again.hrs", g_dir);
    r2 = load_run(path, HRR_FORMAT_NEWEST);
    FUZZ_CHECK(r2 != NULL && strcmp(r1, r2) == 0);
    free(r1);
    free(r2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    dir_ready();
    if (data[0] & FUZZ_STATE_RUN)
        fuzz_run(data[0], data + 1, size - 1);
    else if (data[0] & FUZZ_STATE_JOURNAL)
        fuzz_journal(data[0], data + 1, size - 1);
    else
        fuzz_snapshot(data[0], data + 1, size - 1);
    return 0;
}
