/*
 * Calling contexts (lib/agg/paths.c, flame.c): a known tree of contexts fed
 * as a batch gives exact paths and totals, per path and per range name; the
 * folded stacks read back under speedscope's documented rule (a line is
 * `a;b;c N`, the last space separates the integer value, `;` the frames)
 * with every name, escaped ones included; the tree fits 100 columns with
 * middle-shortened names; the depth cap and the path-table cap bound
 * recursion 1000 deep and thousands of distinct paths, counted; paths
 * count toward memory and go with reset; and they survive a snapshot and a
 * run file (RunKey.paths), with a file without paths read as one-element
 * paths.
 */
#include "config.h"

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

#include "lib/agg/agg_impl.h"
#include "lib/view/flame.h"
#include "daemon/ingest.h"
#include "lib/run/runkey.h"
#include "lib/run/runload.h"
#include "daemon/snapshot.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"
#include "tests/lib/harness.h"

/* --- a batch with calling contexts ---------------------------------------- */

struct tb {
    const char **ranges;
    size_t nranges;
    uint32_t *parent, *crange; /* contexts: parent index + 1, range */
    size_t nctx;
    uint8_t *stream;
    size_t len, cap;
    uint64_t events;
};

static void tb_put(struct tb *t, uint64_t v)
{
    if (t->len + 16 > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->stream = realloc(t->stream, t->cap);
        assert_non_null(t->stream);
    }
    t->len = (size_t)(hrp_put_varint(t->stream + t->len, v) - t->stream);
}

static void tb_label(struct tb *t, uint32_t label)
{
    tb_put(t, (uint64_t)label << 2 | HRP_ITEM_LABEL);
}

/* A sample of context c: inclusive ns, and the ns of its nchild direct
 * children (none: a leaf). */
static void tb_sample(struct tb *t, uint32_t c, uint64_t incl, uint64_t child,
                      uint64_t nchild)
{
    if (nchild == 0) {
        tb_put(t, (uint64_t)c << 2 | HRP_ITEM_LEAF);
        tb_put(t, incl);
    } else {
        tb_put(t, (uint64_t)c << 2 | HRP_ITEM_PARENT);
        tb_put(t, incl);
        tb_put(t, child);
        tb_put(t, nchild);
        tb_put(t, 0);
    }
    t->events++;
}

/* Sends the batch (labels: 0 warm, 1 cold, of node t/node). */
static enum hrd_ingest_result tb_send(struct hrd_ingest *in,
                                      const struct tb *t, uint64_t seq)
{
    Hostrange__Batch b = HOSTRANGE__BATCH__INIT;
    Hostrange__LabelSet l[2], *lp[2];
    enum hrd_ingest_result res;
    enum hrd_reject why;
    uint8_t *buf, *ack;
    size_t len, alen;

    for (int i = 0; i < 2; i++) {
        hostrange__label_set__init(&l[i]);
        l[i].node_id = "t/node";
        l[i].operator_ = "op";
        l[i].backend = "cpu";
        l[i].phase = i == 0 ? HRP_PHASE_WARM : HRP_PHASE_COLD;
        l[i].id = (uint32_t)i;
        lp[i] = &l[i];
    }
    b.version = HRP_VERSION;
    b.pid = 7;
    b.instance = 77;
    b.process_label = "";
    b.clock = "";
    b.seq = seq;
    b.n_labels = 2;
    b.labels = lp;
    b.n_ranges = t->nranges;
    b.ranges = (char **)t->ranges;
    b.n_context_parent = b.n_context_range = t->nctx;
    b.context_parent = t->parent;
    b.context_range = t->crange;
    b.samples.data = t->stream;
    b.samples.len = t->len;
    b.events = t->events;
    len = hostrange__batch__get_packed_size(&b);
    buf = malloc(len + 1);
    assert_non_null(buf);
    hostrange__batch__pack(&b, buf);
    res = hrd_ingest_handle(in, buf, len, &ack, &alen, &why);
    free(ack);
    free(buf);
    return res;
}

static void tb_fini(struct tb *t)
{
    free(t->stream);
    free(t->parent);
    free(t->crange);
}

struct fix {
    struct hra_agg agg;
    struct hrd_ingest in;
};

static struct fix *fix_new(void)
{
    struct fix *f = calloc(1, sizeof *f);

    assert_non_null(f);
    hra_init(&f->agg);
    hrd_ingest_init(&f->in, &f->agg);
    return f;
}

static void fix_free(struct fix *f)
{
    hrd_ingest_fini(&f->in);
    hra_fini(&f->agg);
    free(f);
}

/*
 * The known tree, warm (label 0):
 *   a (1000 incl; children b 500, c 50, weird 7: self 443)
 *     b (500; child c twice, 100 each: self 300)
 *       c 100, c 100
 *     c 50
 *     "we;ird name\n" 7
 *   d (45; child b 40: self 5)
 *     b (40; child c 30: self 10)
 *       c 30
 * and cold (label 1): a 9.
 */
static const char *known_ranges[] = { "a", "b", "c", "we;ird name\n", "d" };
enum { A, AB, ABC, AC, D, DB, DBC, AW, NCTX };
static const uint32_t known_parent[NCTX] = {
    [A] = 0, [AB] = A + 1, [ABC] = AB + 1, [AC] = A + 1,
    [D] = 0, [DB] = D + 1, [DBC] = DB + 1, [AW] = A + 1,
};
static const uint32_t known_range[NCTX] = {
    [A] = 0, [AB] = 1, [ABC] = 2, [AC] = 2, [D] = 4, [DB] = 1, [DBC] = 2,
    [AW] = 3,
};

/* Sets up batch t with the known ranges and contexts. */
static void tb_known(struct tb *t)
{
    t->ranges = known_ranges;
    t->nranges = 5;
    t->nctx = NCTX;
    t->parent = malloc(sizeof known_parent);
    t->crange = malloc(sizeof known_range);
    assert_non_null(t->parent);
    assert_non_null(t->crange);
    memcpy(t->parent, known_parent, sizeof known_parent);
    memcpy(t->crange, known_range, sizeof known_range);
}

static void feed_known(struct fix *f, uint64_t seq)
{
    struct tb t = { 0 };

    tb_known(&t);
    tb_label(&t, 0);
    tb_sample(&t, ABC, 100, 0, 0);
    tb_sample(&t, ABC, 100, 0, 0);
    tb_sample(&t, AB, 500, 200, 2);
    tb_sample(&t, AC, 50, 0, 0);
    tb_sample(&t, AW, 7, 0, 0);
    tb_sample(&t, A, 1000, 557, 3);
    tb_sample(&t, DBC, 30, 0, 0);
    tb_sample(&t, DB, 40, 30, 1);
    tb_sample(&t, D, 45, 40, 1);
    tb_label(&t, 1);
    tb_sample(&t, A, 9, 0, 0);
    assert_int_equal(tb_send(&f->in, &t, seq), HRD_INGEST_OK);
    tb_fini(&t);
}

static const char known_folded[] =
    "t/node;cold;a 9\n"
    "t/node;warm;a 443\n"
    "t/node;warm;a;b 300\n"
    "t/node;warm;a;b;c 200\n"
    "t/node;warm;a;c 50\n"
    "t/node;warm;a;we%3Bird%20name%0A 7\n"
    "t/node;warm;d 5\n"
    "t/node;warm;d;b 10\n"
    "t/node;warm;d;b;c 30\n";

static const char known_counts[] =
    "t/node;cold;a 1\n"
    "t/node;warm;a 1\n"
    "t/node;warm;a;b 1\n"
    "t/node;warm;a;b;c 2\n"
    "t/node;warm;a;c 1\n"
    "t/node;warm;a;we%3Bird%20name%0A 1\n"
    "t/node;warm;d 1\n"
    "t/node;warm;d;b 1\n"
    "t/node;warm;d;b;c 1\n";

static int tree_row(const struct hra_row *r, void *arg)
{
    return hrv_ptree_row(arg, r) != NULL ? 0 : -ENOMEM;
}

static int flat_row(const struct hra_row *r, void *arg)
{
    return hrv_ptree_row_flat(arg, r);
}

/* The folded stacks (or the tree, width > 0) of an aggregation's paths, as
 * a new string. */
static char *view(struct hra_agg *a, enum hrv_fvalue v, int width, int flat)
{
    struct hra_cursor cur = { { 0 }, 0, 0 };
    struct hrv_ptree t;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    assert_non_null(f);
    hrv_ptree_init(&t);
    assert_int_equal(hra_rows_page_by(a, NULL, &cur, 0, !flat,
                                          flat ? flat_row : tree_row, &t),
                     0);
    if (width > 0)
        assert_int_equal(hrv_tree_write(f, &t, width), 0);
    else
        assert_int_equal(hrv_folded_write(f, &t, v), 0);
    hrv_ptree_free(&t);
    fclose(f);
    return out;
}

/* speedscope's rule for folded stacks, and the escapes of flame.h undone:
 * checks each line and returns its frames (joined by '|') and value. */
static void parse_folded_line(const char *line, char *frames, size_t len,
                              uint64_t *value)
{
    const char *sp = strrchr(line, ' ');
    char *end;
    size_t n = 0;

    assert_non_null(sp);
    assert_true(sp[1] >= '0' && sp[1] <= '9');
    *value = strtoull(sp + 1, &end, 10);
    assert_true(*end == '\0');
    for (const char *p = line; p < sp; p++) {
        char c = *p;

        assert_true(c != ' ' && c != '\n' && c != '\t');
        if (c == ';') {
            c = '|';
        } else if (c == '%') {
            char hex[3] = { p[1], p[2], 0 };
            c = (char)strtoul(hex, NULL, 16);
            p += 2;
        }
        assert_true(n + 1 < len);
        frames[n++] = c;
    }
    frames[n] = '\0';
}

static void test_known_tree(void **state)
{
    struct fix *f = fix_new();
    char *s, *line, *save = NULL;
    uint64_t total = 0;
    static const char *want_frames[] = {
        "t/node|cold|a", "t/node|warm|a", "t/node|warm|a|b",
        "t/node|warm|a|b|c", "t/node|warm|a|c",
        "t/node|warm|a|we;ird name\n", "t/node|warm|d", "t/node|warm|d|b",
        "t/node|warm|d|b|c",
    };
    size_t i = 0;

    (void)state;
    feed_known(f, 1);
    assert_int_equal(f->agg.path.n, NCTX);
    assert_int_equal(f->agg.npkeys, NCTX + 1); /* a, cold and warm */
    s = view(&f->agg, HRV_FVALUE_TOTAL, 0, 0);
    assert_string_equal(s, known_folded);
    /* Read back the way speedscope reads it. */
    for (line = strtok_r(s, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save), i++) {
        char frames[256];
        uint64_t v;

        parse_folded_line(line, frames, sizeof frames, &v);
        assert_true(i < 9);
        assert_string_equal(frames, want_frames[i]);
        total += v;
    }
    assert_int_equal(i, 9);
    /* Self times add up to the top ranges' inclusive times. */
    assert_int_equal(total, 9 + 1000 + 45);
    free(s);
    s = view(&f->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_string_equal(s, known_counts);
    free(s);
    fix_free(f);
}

/* The rows per range name are those of the ranges, merged over paths. */
struct range_sum {
    const char *range;
    const char *metric;
    const char *phase;
    uint64_t count;
    double mean;
};

static int find_row(const struct hra_row *r, void *arg)
{
    struct range_sum *x = arg;

    if (strcmp(r->range, x->range) == 0 && strcmp(r->metric, x->metric) == 0 &&
        strcmp(r->phase, x->phase) == 0) {
        assert_int_equal(r->depth, 0);
        x->count = r->count;
        x->mean = r->mean;
    }
    return 0;
}

static void test_rows_per_range(void **state)
{
    struct fix *f = fix_new();
    struct range_sum c = { "c", "self", "warm", 0, 0 };
    struct range_sum b = { "b", "inclusive", "warm", 0, 0 };

    (void)state;
    feed_known(f, 1);
    assert_int_equal(hra_rows(&f->agg, NULL, find_row, &c), 0);
    assert_int_equal(c.count, 4);
    assert_true(c.mean == (100.0 + 100 + 50 + 30) / 4);
    assert_int_equal(hra_rows(&f->agg, NULL, find_row, &b), 0);
    assert_int_equal(b.count, 2);
    assert_true(b.mean == 270.0);
    /* A second batch: the same paths, twice the counts. */
    feed_known(f, 2);
    assert_int_equal(f->agg.path.n, NCTX);
    assert_int_equal(hra_rows(&f->agg, NULL, find_row, &c), 0);
    assert_int_equal(c.count, 8);
    fix_free(f);
}

static void test_escape(void **state)
{
    const char *names[] = { "a;b", "50% c", "d" };
    char buf[64];
    char *j;

    (void)state;
    assert_int_equal(hrv_folded_escape(buf, sizeof buf, "x; y%\n\x7f"),
                     strlen("x%3B%20y%25%0A%7F"));
    assert_string_equal(buf, "x%3B%20y%25%0A%7F");
    /* Truncated, still terminated, the length it would need. */
    assert_int_equal(hrv_folded_escape(buf, 4, "a;b"), 5);
    assert_string_equal(buf, "a%3");
    j = hrv_path_join(names, 3);
    assert_string_equal(j, "a%3Bb;50%25 c;d");
    free(j);
}

static void test_shorten(void **state)
{
    char out[64];

    (void)state;
    hrv_shorten_middle(out, 10, "short");
    assert_string_equal(out, "short");
    hrv_shorten_middle(out, 10, "abcdefghijklmnopqrstuvwxyz");
    assert_int_equal(strlen(out), 10);
    assert_string_equal(out, "abcd..wxyz");
    hrv_shorten_middle(out, 10, "tab\there");
    assert_string_equal(out, "tab?here");
    /* UTF-8 sequences are not cut. */
    hrv_shorten_middle(out, 9, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    assert_true(strlen(out) <= 9);
    assert_true(((unsigned char)out[strlen(out) - 1] & 0xc0) == 0x80);
}

/* A deep tree of long names: every line within 100 columns. */
static void test_tree_width(void **state)
{
    struct hrv_ptree t;
    const char *path[40];
    char names[40][200];
    char *out = NULL, *line, *save = NULL;
    size_t len = 0, lines = 0;
    FILE *f;
    int shortened = 0;

    (void)state;
    hrv_ptree_init(&t);
    for (int d = 0; d < 40; d++) {
        struct hra_row r = { 0 };

        snprintf(names[d], sizeof names[d], "layer%02d.%s.end", d,
                 "a_rather_long_range_name_that_goes_on_and_on_and_on_and_"
                 "on_and_on_and_on");
        path[d] = names[d];
        r.node_id = "ops/add[cpu-float32-a-very-long-parametrization-"
                    "that-will-not-fit-in-one-line-of-the-terminal-at-all]";
        r.op = "add";
        r.backend = "cpu";
        r.phase = "warm";
        r.range = names[d];
        r.path = path;
        r.depth = (uint32_t)d + 1;
        r.count = 1000000000ull;
        r.metric = "inclusive";
        r.median = 1e12 / (d + 1);
        assert_non_null(hrv_ptree_row(&t, &r));
        r.metric = "self";
        r.median = 123.5;
        assert_non_null(hrv_ptree_row(&t, &r));
    }
    f = open_memstream(&out, &len);
    assert_int_equal(hrv_tree_write(f, &t, 100), 0);
    fclose(f);
    for (line = strtok_r(out, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        assert_true(strlen(line) <= 100);
        if (strstr(line, "layer") != NULL) {
            /* Head and tail kept, the middle cut. */
            assert_non_null(strstr(line, ".."));
            assert_non_null(strstr(line, ".end"));
            shortened++;
        }
        lines++;
    }
    assert_int_equal(shortened, 40);
    assert_int_equal(lines, 42);
    free(out);
    hrv_ptree_free(&t);
}

/* Recursion 1000 deep: paths stop at the depth cap, counted. */
static void test_depth_cap(void **state)
{
    struct fix *f = fix_new();
    const char *ranges[] = { "rec" };
    struct tb t = { 0 };
    uint64_t before;

    (void)state;
    t.ranges = ranges;
    t.nranges = 1;
    t.nctx = 1000;
    t.parent = malloc(1000 * sizeof *t.parent);
    t.crange = calloc(1000, sizeof *t.crange);
    for (uint32_t i = 0; i < 1000; i++)
        t.parent[i] = i; /* context i - 1 */
    tb_label(&t, 0);
    for (uint32_t i = 1000; i-- > 0;)
        tb_sample(&t, i, 1000 - i, 0, 0);
    before = f->agg.bytes;
    assert_int_equal(tb_send(&f->in, &t, 1), HRD_INGEST_OK);
    assert_int_equal(f->agg.path.n, HRA_MAX_DEPTH_DEFAULT);
    assert_int_equal(f->agg.npkeys, HRA_MAX_DEPTH_DEFAULT);
    assert_int_equal(f->agg.paths_too_deep, 1000 - HRA_MAX_DEPTH_DEFAULT);
    assert_int_equal(f->agg.nkeys, 1);
    assert_int_equal(f->agg.keys[0]->pairs, 1000);
    assert_true(f->agg.bytes > before);
    tb_fini(&t);
    fix_free(f);
}

/* Thousands of distinct paths: the table stops at its cap, counted; paths
 * count toward memory and go with a reset. */
static void test_table_cap(void **state)
{
    struct fix *f = fix_new();
    struct tb t = { 0 };
    char (*names)[16] = malloc(5000 * sizeof *names);
    const char **ranges = malloc(5000 * sizeof *ranges);
    struct hra_filter flt = { NULL, NULL, NULL, "r1*", 0 };
    size_t with_paths, after;

    (void)state;
    f->agg.max_paths = 1000;
    for (int i = 0; i < 5000; i++) {
        snprintf(names[i], sizeof names[i], "r%d", i);
        ranges[i] = names[i];
    }
    t.ranges = ranges;
    t.nranges = 5000;
    t.nctx = 5000;
    t.parent = calloc(5000, sizeof *t.parent);
    t.crange = malloc(5000 * sizeof *t.crange);
    for (uint32_t i = 0; i < 5000; i++)
        t.crange[i] = i;
    tb_label(&t, 0);
    for (uint32_t i = 0; i < 5000; i++)
        tb_sample(&t, i, 10 + i, 0, 0);
    assert_int_equal(tb_send(&f->in, &t, 1), HRD_INGEST_OK);
    assert_int_equal(f->agg.path.n, 1000);
    assert_int_equal(f->agg.npkeys, 1000);
    assert_int_equal(f->agg.paths_table_full, 4000);
    assert_int_equal(f->agg.nkeys, 5000);
    with_paths = f->agg.bytes;
    /* A filtered reset takes the path keys of the keys it drops. */
    assert_true(hra_reset_filtered(&f->agg, &flt) > 0);
    assert_true(f->agg.npkeys < 1000);
    after = f->agg.bytes;
    assert_true(after < with_paths);
    hra_reset(&f->agg);
    assert_int_equal(f->agg.npkeys, 0);
    assert_int_equal(f->agg.bytes, hra_pathtab_bytes(&f->agg));
    /* Samples arrive again: their path keys come back. */
    t.len = 0;
    t.events = 0;
    tb_label(&t, 0);
    tb_sample(&t, 0, 5, 0, 0);
    assert_int_equal(tb_send(&f->in, &t, 2), HRD_INGEST_OK);
    assert_int_equal(f->agg.npkeys, 1);
    tb_fini(&t);
    free(names);
    free(ranges);
    fix_free(f);
}

/* Path keys are compacted into histograms with the others when memory is
 * short, and their views keep their counts. */
static void test_compaction(void **state)
{
    struct fix *f = fix_new();
    struct tb t = { 0 };
    char *s;

    (void)state;
    tb_known(&t);
    tb_label(&t, 0);
    for (int i = 0; i < 20000; i++)
        tb_sample(&t, ABC, 1000 + (uint64_t)i % 977, 0, 0);
    assert_int_equal(tb_send(&f->in, &t, 1), HRD_INGEST_OK);
    f->agg.max_bytes = 64 << 10;
    hra_enforce(&f->agg);
    assert_false(f->agg.keys[0]->exact);
    {
        struct hra_key tmp;

        assert_false(hra_path_view(f->agg.keys[0], f->agg.keys[0]->paths,
                                       &tmp)->exact);
    }
    s = view(&f->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_string_equal(s, "t/node;warm;a;b;c 20000\n");
    free(s);
    tb_fini(&t);
    fix_free(f);
}

/* A batch of n leaf samples of context c (values base, base + 1, ...) and
 * r records under c's range, in label 0, from the known contexts. */
static void feed_ctx(struct fix *f, uint64_t seq, uint32_t c, int n,
                     uint64_t base, int r)
{
    struct tb t = { 0 };

    tb_known(&t);
    tb_label(&t, 0);
    for (int i = 0; i < n; i++)
        tb_sample(&t, c, base + (uint64_t)i, 0, 0);
    for (int i = 0; i < r; i++) {
        tb_put(&t, (uint64_t)c << 2 | HRP_ITEM_RECORD);
        tb_put(&t, 3);
        t.events++;
    }
    assert_int_equal(tb_send(&f->in, &t, seq), HRD_INGEST_OK);
    tb_fini(&t);
}

/* The only range key of range name `name`. */
static struct hra_key *key_named(struct hra_agg *a, const char *name)
{
    for (uint32_t i = 0; i < a->nkeys; i++) {
        if (strcmp(hra_str_get(a, a->keys[i]->range), name) == 0)
            return a->keys[i];
    }
    fail_msg("no key %s", name);
    return NULL;
}

/*
 * A range key seen through one path only shares its events with its path
 * key (a mirror: nothing is stored or added twice); a second path, a
 * sample kept without a path or a record gives the path key a copy of its
 * own, in exact and in histogram mode, and every view is the same as if
 * the two had been kept apart from the start.
 */
static void test_mirror(void **state)
{
    struct fix *f = fix_new();
    struct hra_key *b;
    char *s;

    (void)state;
    /* Exact: b under a only, then also under d. */
    feed_ctx(f, 1, AB, 50, 1000, 0);
    b = key_named(&f->agg, "b");
    assert_non_null(b->paths);
    assert_true(b->paths->mirror);
    assert_int_equal(b->paths->pairs, 0);
    assert_null(b->paths->buf);
    s = view(&f->agg, HRV_FVALUE_TOTAL, 0, 0);
    assert_string_equal(s, "t/node;warm;a;b 51225\n");
    free(s);
    feed_ctx(f, 2, DB, 30, 2000, 0);
    assert_false(b->paths->mirror);
    assert_int_equal(b->paths->pairs, 50);
    assert_int_equal(b->pairs, 80);
    s = view(&f->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_string_equal(s, "t/node;warm;a;b 50\nt/node;warm;d;b 30\n");
    free(s);
    s = view(&f->agg, HRV_FVALUE_TOTAL, 0, 0);
    assert_string_equal(s, "t/node;warm;a;b 51225\nt/node;warm;d;b 60435\n");
    free(s);
    /* A record parts a mirror too (records have no path). */
    feed_ctx(f, 3, D, 10, 100, 0);
    assert_true(key_named(&f->agg, "d")->paths->mirror);
    feed_ctx(f, 4, D, 0, 0, 2);
    assert_false(key_named(&f->agg, "d")->paths->mirror);
    assert_int_equal(key_named(&f->agg, "d")->records, 2);
    assert_int_equal(key_named(&f->agg, "d")->paths->pairs, 10);
    fix_free(f);

    /* Histograms: c under a;b only, compacted, then also under a. */
    f = fix_new();
    feed_ctx(f, 1, ABC, 20000, 1000, 0);
    f->agg.max_bytes = 64 << 10;
    hra_enforce(&f->agg);
    f->agg.max_bytes = (size_t)1 << 30;
    b = key_named(&f->agg, "c");
    assert_false(b->exact);
    assert_true(b->paths->mirror);
    feed_ctx(f, 2, AC, 100, 5000, 0);
    assert_false(b->paths->mirror);
    assert_false(b->paths->exact);
    assert_int_equal(b->paths->pairs, 20000);
    assert_int_equal(b->paths->incl->n, 20000);
    assert_int_equal(b->paths->incl->min, 1000);
    assert_int_equal(b->paths->incl->max, 20999);
    assert_int_equal(b->incl->n, 20100);
    s = view(&f->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_string_equal(s, "t/node;warm;a;b;c 20000\nt/node;warm;a;c 100\n");
    free(s);
    fix_free(f);
}

/* The path keys of a that are mirrors. */
static uint32_t mirrors(const struct hra_agg *a)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < a->nkeys; i++) {
        for (const struct hra_key *p = a->keys[i]->paths; p != NULL;
             p = p->pnext)
            n += p->mirror;
    }
    return n;
}

static void test_snapshot(void **state)
{
    struct fix *f = fix_new(), *g = fix_new();
    struct hrd_snapshot_loaded sl;
    char dir[256], path[300], err[600], *a, *b;
    int dfd;

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "paths");
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    feed_known(f, 1);
    snprintf(path, sizeof path, "%s/snap", dir);
    assert_int_equal(hrd_snapshot_write(path, &f->agg, &f->in, 1, err,
                                        sizeof err), 0);
    assert_int_equal(hrd_snapshot_load(path, &g->agg, &g->in, &sl), 0);
    assert_int_equal(sl.complete, 1);
    assert_int_equal(g->agg.npkeys, f->agg.npkeys);
    /* Loaded, the keys seen through one path (a cold and warm, d, the
     * weird name) are mirrored again, their events held once. */
    assert_int_equal(mirrors(&f->agg), 4);
    assert_int_equal(mirrors(&g->agg), 4);
    assert_int_equal(hra_paths_share(&g->agg), 0);
    assert_int_equal(g->agg.events, f->agg.events);
    a = view(&f->agg, HRV_FVALUE_TOTAL, 0, 0);
    b = view(&g->agg, HRV_FVALUE_TOTAL, 0, 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    a = view(&g->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_string_equal(a, known_counts);
    free(a);
    close(dfd);
    harness_rm_rf(dir);
    fix_free(f);
    fix_free(g);
}

/* Through RunKey messages (packed and unpacked as in a file). */
static void runkeys_copy(struct hra_agg *from, struct hra_agg *to,
                         int with_paths, int format)
{
    struct hrr_runload l;
    char why[256];

    hrr_runload_init(&l, to);
    for (uint32_t i = 0; i < from->nkeys; i++) {
        Hostrange__RunKey m, *u;
        uint8_t *buf;
        size_t len;

        assert_int_equal(
            with_paths ? hrr_runkey_from(from, from->keys[i], format, &m)
                       : hrr_runkey_from_range(from, from->keys[i], format,
                                               &m),
            0);
        len = hostrange__run_key__get_packed_size(&m);
        buf = malloc(len + 1);
        hostrange__run_key__pack(&m, buf);
        hrr_runkey_clear(&m);
        u = hostrange__run_key__unpack(NULL, len, buf);
        assert_non_null(u);
        assert_int_equal(hrr_runload_key(&l, u, why, sizeof why), 0);
        hostrange__run_key__free_unpacked(u, NULL);
        free(buf);
    }
    assert_int_equal(hrr_runload_end(&l, NULL), 0);
    assert_int_equal(hrr_runload_finish(&l), 0);
    hrr_runload_fini(&l);
}

/* The run file test in one format: sorted arrays (1) or events, with
 * mirrors saved as such (HRR_FORMAT_NEWEST). */
static void run_file_as(int format)
{
    struct fix *f = fix_new(), *g = fix_new(), *h = fix_new();
    char *a, *b;

    feed_known(f, 1);
    runkeys_copy(&f->agg, &g->agg, 1, format);
    a = view(&f->agg, HRV_FVALUE_TOTAL, 0, 0);
    b = view(&g->agg, HRV_FVALUE_TOTAL, 0, 0);
    assert_string_equal(a, b);
    free(b);
    assert_int_equal(mirrors(&g->agg), 4);
    /* Twice: merged, twice the counts and totals. */
    runkeys_copy(&f->agg, &g->agg, 1, format);
    b = view(&g->agg, HRV_FVALUE_COUNT, 0, 0);
    assert_non_null(strstr(b, "t/node;warm;a;b;c 4\n"));
    assert_non_null(strstr(b, "t/node;warm;d 2\n"));
    free(b);
    assert_int_equal(mirrors(&g->agg), 4);
    /* A file without paths: one-element paths, per range name. */
    runkeys_copy(&f->agg, &h->agg, 0, format);
    assert_int_equal(h->agg.npkeys, 0);
    b = view(&h->agg, HRV_FVALUE_TOTAL, 0, 1);
    assert_string_equal(b, "t/node;cold;a 9\n"
                           "t/node;warm;a 443\n"
                           "t/node;warm;b 310\n"
                           "t/node;warm;c 280\n"
                           "t/node;warm;we%3Bird%20name%0A 7\n"
                           "t/node;warm;d 5\n");
    free(a);
    free(b);
    fix_free(f);
    fix_free(g);
    fix_free(h);
}

static void test_run_file(void **state)
{
    (void)state;
    run_file_as(1);
    run_file_as(HRR_FORMAT_NEWEST);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;

    return (x > y) - (x < y);
}

/* Asserts that d[0..n) is v[0..n) sorted and delta-coded (v is sorted
 * here). */
static void assert_coded(const uint64_t *d, size_t nd, uint64_t *v, size_t n)
{
    uint64_t prev = 0;

    assert_int_equal(nd, n);
    qsort(v, n, sizeof *v, cmp_u64);
    for (size_t i = 0; i < n; i++) {
        assert_true(d[i] == v[i] - prev);
        prev = v[i];
    }
}

/* Asserts that the coded events e are the pairs (incl[i], self[i]), in
 * that order. */
static void assert_events(const ProtobufCBinaryData *e, const uint64_t *incl,
                          const uint64_t *self, size_t n)
{
    struct hra_key k = { 0 };
    uint64_t pairs, records, *gi = malloc((n + 1) * sizeof *gi);
    uint64_t *gs = malloc((n + 1) * sizeof *gs);
    size_t ni, ns;

    assert_int_equal(hra_events_check(e->data, e->len, &pairs, &records),
                     0);
    assert_int_equal(pairs, n);
    assert_int_equal(records, 0);
    k.buf = e->data; /* borrowed from a key: its slack follows */
    k.len = e->len;
    hra_key_values(&k, gi, &ni, gs, &ns);
    assert_int_equal(ni, n);
    assert_int_equal(ns, n);
    assert_memory_equal(gi, incl, n * sizeof *gi);
    assert_memory_equal(gs, self, n * sizeof *gs);
    free(gi);
    free(gs);
}

/* A range key's only calling context holds the very events of the key:
 * its values in a RunKey are the key's (copied, not sorted again); a range
 * in two contexts gets each context's own. Both against the values fed,
 * sorted and coded here. */
static void test_run_key_contexts(void **state)
{
    static const char *ranges[] = { "a", "b", "d" };
    enum { CA, CAB, CD, CDB, N };
    static const uint32_t parent[N] = { 0, CA + 1, 0, CD + 1 };
    static const uint32_t crange[N] = { 0, 1, 2, 1 };
    enum { S = 3000 };
    uint64_t *ai = malloc(S * sizeof *ai), *as = malloc(S * sizeof *as);
    uint64_t *bi[2], *bs[2];
    size_t nb[2] = { 0, 0 };
    struct fix *f = fix_new();
    struct tb t = { 0 };
    uint64_t r = 0x9e3779b97f4a7c15ull;
    int seen = 0;

    (void)state;
    for (int c = 0; c < 2; c++) {
        bi[c] = malloc(S * sizeof *bi[c]);
        bs[c] = malloc(S * sizeof *bs[c]);
    }
    t.ranges = ranges;
    t.nranges = 3;
    t.nctx = N;
    t.parent = malloc(sizeof parent);
    t.crange = malloc(sizeof crange);
    memcpy(t.parent, parent, sizeof parent);
    memcpy(t.crange, crange, sizeof crange);
    tb_label(&t, 0);
    for (int i = 0; i < S; i++) {
        uint64_t incl, child;
        int c;

        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        incl = 1000 + r % 4000;
        child = (r >> 20) % (incl / 2);
        c = (int)(r >> 40) % 2;
        bi[c][nb[c]] = child;
        bs[c][nb[c]++] = child;
        tb_sample(&t, c ? CDB : CAB, child, 0, 0);
        ai[i] = incl;
        as[i] = incl - child;
        tb_sample(&t, CA, incl, child, 1);
    }
    assert_int_equal(tb_send(&f->in, &t, 1), HRD_INGEST_OK);
    for (uint32_t i = 0; i < f->agg.nkeys; i++) {
        const struct hra_key *k = f->agg.keys[i];
        const char *name = hra_str_get(&f->agg, k->range);
        Hostrange__RunKey m;

        /* Format 2 (first: the checks of format 1 sort the values fed):
         * the events as they arrived, pairs kept; the one
         * context of "a" says it holds the key's events. */
        assert_int_equal(hrr_runkey_from(&f->agg, k, HRR_FORMAT_NEWEST, &m), 0);
        assert_int_equal(m.n_inclusive + m.n_self, 0);
        if (strcmp(name, "a") == 0) {
            assert_int_equal(m.n_paths, 1);
            assert_true(m.paths[0]->same_as_key);
            assert_int_equal(m.paths[0]->pairs, S);
            assert_int_equal(m.paths[0]->events.len, 0);
            assert_events(&m.events, ai, as, S);
            seen++;
        } else if (strcmp(name, "b") == 0) {
            assert_int_equal(m.n_paths, 2);
            for (size_t p = 0; p < 2; p++) {
                int c = strcmp(m.paths[p]->path[0], "d") == 0;

                assert_false(m.paths[p]->same_as_key);
                assert_events(&m.paths[p]->events, bi[c], bs[c], nb[c]);
            }
            seen++;
        }
        hrr_runkey_clear(&m);
        assert_int_equal(hrr_runkey_from(&f->agg, k, 1, &m), 0);
        if (strcmp(name, "a") == 0) {
            assert_int_equal(m.n_paths, 1);
            assert_coded(m.inclusive, m.n_inclusive, ai, S);
            assert_coded(m.self, m.n_self, as, S);
            assert_coded(m.paths[0]->inclusive, m.paths[0]->n_inclusive, ai,
                         S);
            assert_coded(m.paths[0]->self, m.paths[0]->n_self, as, S);
            seen++;
        } else if (strcmp(name, "b") == 0) {
            assert_int_equal(m.n_paths, 2);
            for (size_t p = 0; p < 2; p++) {
                int c = strcmp(m.paths[p]->path[0], "d") == 0;

                assert_coded(m.paths[p]->inclusive,
                             m.paths[p]->n_inclusive, bi[c], nb[c]);
                assert_coded(m.paths[p]->self, m.paths[p]->n_self, bs[c],
                             nb[c]);
            }
            seen++;
        }
        hrr_runkey_clear(&m);
    }
    assert_int_equal(seen, 4);
    tb_fini(&t);
    fix_free(f);
    free(ai);
    free(as);
    for (int c = 0; c < 2; c++) {
        free(bi[c]);
        free(bs[c]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_tree),
        cmocka_unit_test(test_rows_per_range),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_shorten),
        cmocka_unit_test(test_tree_width),
        cmocka_unit_test(test_depth_cap),
        cmocka_unit_test(test_table_cap),
        cmocka_unit_test(test_compaction),
        cmocka_unit_test(test_mirror),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_run_file),
        cmocka_unit_test(test_run_key_contexts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
