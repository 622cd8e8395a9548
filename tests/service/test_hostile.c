/*
 * Input that nobody here wrote, to a real hostranged:
 *
 * - a batch that Google's protoc encodes from a text-format message (its
 *   sample stream written out as an escaped string) is taken and
 *   aggregated exactly like the same batch encoded by the client's encoder
 *   (hr__enc_*): the same report, field for field;
 * - random bytes, truncated batches, batches of other protocol versions
 *   (a version 1 batch with its packed sample arrays among them), batches
 *   over the size cap, damaged sample streams, batches with an index out
 *   of range (a label set, a context, a context's parent or range, a lost
 *   count's or the library's own work's label set), and with every other
 *   kind of invalid field, each sent with nanocat to the ingest socket,
 *   and garbage sent to the control socket: each is answered with its
 *   reason, counted under it in `hostrangectl stats`, and changes nothing;
 *   the daemon goes on serving the same report and takes the next valid
 *   batch.
 *
 * The batches with invalid fields are made from the text format with
 * protoc too; the version 1 batch from a copy of version 1's Batch message.
 * Skips (77) when protoc or nanocat is missing (Debian: protobuf-compiler,
 * nanomsg-utils).
 */
#include "config.h"

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
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"
#include "tests/lib/harness.h"

static char g_protoc[4096], g_nanocat[4096], g_work[256];
static int g_files;

/* --- the batch, from the client's encoder and as text -------------------- */

static const char *const range_names[] = { "dispatch.call", "operator.call",
                                           "end_to_end" };

static const char *range_name(uint32_t id)
{
    return id >= 1 && id <= 3 ? range_names[id - 1] : NULL;
}

/* Label ids 1 (warm) and 2 (cold) of one node. */
static int label_get(uint32_t id, const char **node, const char **op,
                     const char **backend, unsigned *phase)
{
    if (id < 1 || id > 2)
        return -1;
    *node = "tests/hostile::node";
    *op = "add";
    *backend = "cpu";
    *phase = id == 1 ? HRP_PHASE_WARM : HRP_PHASE_COLD;
    return 0;
}

/* Contexts 1: dispatch.call at the top of its stack; 2: operator.call in
 * it; 3: end_to_end at the top. */
static void ctx_get(uint32_t ctx, uint32_t *parent, uint32_t *range)
{
    *parent = ctx == 2 ? 1 : 0;
    *range = ctx >= 1 && ctx <= 3 ? ctx : 0;
}

static const struct hr__namer namer = { range_name, label_get, ctx_get };

/* The samples: label id, context, inclusive and self nanoseconds; each
 * dispatch.call has one child (the operator.call). */
static const uint32_t s_label[8] = { 1, 1, 1, 1, 1, 1, 2, 2 };
static const uint32_t s_ctx[8] = { 1, 2, 1, 2, 1, 2, 1, 2 };
static const uint64_t s_incl[8] = { 1000, 600, 1200, 700, 900, 600, 5000,
                                    3000 };
static const uint64_t s_self[8] = { 400, 600, 500, 700, 300, 600, 2000,
                                    3000 };
static const uint64_t r_ns[2] = { 2500, 2700 };

/* The client's encoding of the batch (caller frees): `samples` samples
 * (more than 8 repeat them), the records, 7 events lost under label 1. */
static uint8_t *client_batch(uint32_t pid, uint64_t seq, uint32_t samples,
                             size_t *len)
{
    static const uint32_t lost_ids[1] = { 1 };
    static const uint64_t lost_counts[1] = { 7 };
    struct hr__enc e;
    struct hr__batch_header h = { 0 };
    uint8_t *out = NULL;

    assert_int_equal(hr__enc_init(&e, &namer), 0);
    for (uint32_t i = 0; i < samples; i++) {
        uint32_t nchild = s_ctx[i % 8] == 1;

        assert_false(hr__enc_full(&e));
        assert_int_equal(hr__enc_sample(&e, s_label[i % 8], s_ctx[i % 8],
                                        s_incl[i % 8],
                                        s_incl[i % 8] - s_self[i % 8],
                                        nchild, nchild, 0),
                         0);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(hr__enc_sample(&e, 1, 3, r_ns[i], 0, 0, 0, 1), 0);
    h.pid = pid;
    h.instance = 0x1111;
    h.process_label = "hostile-client";
    h.seq = seq;
    h.clock = "monotonic";
    h.lost_events = 7;
    h.lost_ids = lost_ids;
    h.lost_counts = lost_counts;
    h.n_lost = 1;
    assert_int_equal(hr__enc_seal(&e, &h, &out, len), 0);
    hr__enc_fini(&e);
    return out;
}

/*
 * A valid batch over the size cap (caller frees): the client's batch of
 * seq with its sample stream repeated (each copy opens with its label
 * item) until the batch is larger than HRP_MAX_INGEST_BYTES. The client's
 * encoder itself seals a batch long before that (HR__BATCH_BYTES).
 */
static uint8_t *oversize_batch(uint32_t pid, uint64_t seq, size_t *len)
{
    size_t one_len, copies;
    uint8_t *one = client_batch(pid, seq, 8, &one_len), *stream, *out;
    Hostrange__Batch *b = hostrange__batch__unpack(NULL, one_len, one);
    ProtobufCBinaryData s;

    assert_non_null(b);
    s = b->samples;
    copies = HRP_MAX_INGEST_BYTES / s.len + 2;
    stream = malloc(copies * s.len);
    assert_non_null(stream);
    for (size_t i = 0; i < copies; i++)
        memcpy(stream + i * s.len, s.data, s.len);
    b->samples.data = stream;
    b->samples.len = copies * s.len;
    b->events *= copies;
    *len = hostrange__batch__get_packed_size(b);
    out = malloc(*len);
    assert_non_null(out);
    hostrange__batch__pack(b, out);
    b->samples = s;
    hostrange__batch__free_unpacked(b, NULL);
    free(stream);
    free(one);
    return out;
}

/* Items of a sample stream, as the varints that follow one another. */
#define LABEL(i) ((uint64_t)(i) << 2 | HRP_ITEM_LABEL)
#define LEAF(c) ((uint64_t)(c) << 2 | HRP_ITEM_LEAF)
#define PARENT(c) ((uint64_t)(c) << 2 | HRP_ITEM_PARENT)
#define RECORD(c) ((uint64_t)(c) << 2 | HRP_ITEM_RECORD)
#define END UINT64_MAX

/* The batch's stream, numbered as the client numbers it: label set 0 is
 * warm, context 0 dispatch.call, 1 operator.call in it, 2 end_to_end. */
static const uint64_t good_stream[] = {
    LABEL(0), PARENT(0), 1000, 600, 1, 0, LEAF(1), 600,
    PARENT(0), 1200, 700, 1, 0, LEAF(1), 700,
    PARENT(0), 900, 600, 1, 0, LEAF(1), 600,
    LABEL(1), PARENT(0), 5000, 3000, 1, 0, LEAF(1), 3000,
    LABEL(0), RECORD(2), 2500, RECORD(2), 2700, END,
};

/* Writes the varints v (up to END) as a text-format string: "\x03...". */
static void stream_escape(char *buf, size_t len, const uint64_t *v)
{
    size_t at = 0;

    for (; *v != END; v++) {
        uint8_t b[10], *e = hrp_put_varint(b, *v);

        for (uint8_t *p = b; p < e; p++) {
            assert_true(at + 5 < len);
            at += (size_t)snprintf(buf + at, len - at, "\\x%02x", *p);
        }
    }
    buf[at] = '\0';
}

/* The same batch as a text-format message, with each field's text
 * replaceable (NULL: the batch's own). `stream` replaces the sample
 * stream's varints, `samples` the text of the whole field; `extra` is
 * added at the end. */
struct text {
    const char *version, *seq, *node, *phase, *label_id, *context_parent,
        *context_range, *samples, *events, *lost_label, *extra;
    const uint64_t *stream;
};

static void batch_text(char *buf, size_t len, const struct text *t)
{
    char samples[1024];

    stream_escape(samples, sizeof samples,
                  t->stream != NULL ? t->stream : good_stream);
#define OR(f, v) (t->f != NULL ? t->f : (v))
    snprintf(buf, len,
             "%s\n"
             "pid: 4343\n"
             "instance: 8738\n"
             "process_label: \"protoc\"\n"
             "seq: %s\n"
             "labels { node_id: \"%s\" operator: \"add\" backend: \"cpu\" "
             "phase: %s %s }\n"
             "labels { node_id: \"tests/hostile::node\" operator: \"add\" "
             "backend: \"cpu\" phase: 1 id: 1 }\n"
             "ranges: \"dispatch.call\"\n"
             "ranges: \"operator.call\"\n"
             "ranges: \"end_to_end\"\n"
             "context_parent: [%s]\n"
             "context_range: [%s]\n"
             "samples: \"%s\"\n"
             "events: %s\n"
             "lost_events: 7\n"
             "clock: \"monotonic\"\n"
             "lost_label: [%s]\n"
             "lost_by_label: [7]\n"
             "%s\n",
             OR(version, "version: 2"), OR(seq, "1"),
             OR(node, "tests/hostile::node"), OR(phase, "2"),
             OR(label_id, ""), OR(context_parent, "0, 1, 0"),
             OR(context_range, "0, 1, 2"), OR(samples, samples),
             OR(events, "10"), OR(lost_label, "0"), OR(extra, ""));
#undef OR
}

/* A batch of version 1 as a version 1 client wrote it: its Batch message
 * (fields 1 to 24, the samples in packed arrays 8 to 14), with the test's
 * samples and version 1. */
static const char v1_proto[] =
    "syntax = \"proto3\";\n"
    "package hostrange_v1;\n"
    "message LabelSet { string node_id = 1; string operator = 2;\n"
    "  string backend = 3; uint32 phase = 4; }\n"
    "message Batch {\n"
    "  uint32 version = 1; uint32 pid = 2; fixed64 instance = 3;\n"
    "  string process_label = 4; uint64 seq = 5;\n"
    "  repeated LabelSet labels = 6; repeated string ranges = 7;\n"
    "  repeated fixed32 sample_label = 8; repeated fixed32 sample_range = 9;\n"
    "  repeated fixed64 inclusive_ns = 10; repeated fixed64 self_ns = 11;\n"
    "  repeated fixed32 record_label = 12;\n"
    "  repeated fixed32 record_range = 13;\n"
    "  repeated fixed64 record_ns = 14; uint64 lost_events = 15;\n"
    "  string clock = 20; repeated fixed32 lost_label = 22;\n"
    "  repeated fixed64 lost_by_label = 23;\n"
    "  repeated fixed32 sample_children = 24;\n"
    "}\n";

static const char v1_text[] =
    "version: 1\n"
    "pid: 4343\n"
    "instance: 8738\n"
    "process_label: \"protoc\"\n"
    "seq: 1\n"
    "labels { node_id: \"tests/hostile::node\" operator: \"add\" "
    "backend: \"cpu\" phase: 2 }\n"
    "labels { node_id: \"tests/hostile::node\" operator: \"add\" "
    "backend: \"cpu\" phase: 1 }\n"
    "ranges: \"dispatch.call\"\n"
    "ranges: \"operator.call\"\n"
    "ranges: \"end_to_end\"\n"
    "sample_label: [0, 0, 0, 0, 0, 0, 1, 1]\n"
    "sample_range: [0, 1, 0, 1, 0, 1, 0, 1]\n"
    "inclusive_ns: [1000, 600, 1200, 700, 900, 600, 5000, 3000]\n"
    "self_ns: [400, 600, 500, 700, 300, 600, 2000, 3000]\n"
    "record_label: [0, 0]\n"
    "record_range: [2, 2]\n"
    "record_ns: [2500, 2700]\n"
    "lost_events: 7\n"
    "clock: \"monotonic\"\n"
    "lost_label: [0]\n"
    "lost_by_label: [7]\n"
    "sample_children: [1, 0, 1, 0, 1, 0, 1, 0]\n";

/* --- files, protoc, nanocat ---------------------------------------------- */

static void new_file(char *path, size_t len)
{
    snprintf(path, len, "%s/msg%d", g_work, g_files++);
}

static void write_bytes(char *path, size_t plen, const void *p, size_t n)
{
    new_file(path, plen);
    harness_write_file(path, p, n);
}

/* Encodes text as message `type` of the proto file `file` in directory
 * `dir` with protoc into a new file. */
static void protoc_encode_with(const char *dir, const char *file,
                               const char *type, const char *text, char *path,
                               size_t plen)
{
    char in[300], cmd[9000];

    new_file(in, sizeof in);
    harness_write_file(in, text, strlen(text));
    new_file(path, plen);
    snprintf(cmd, sizeof cmd,
             "'%s' --encode=%s --proto_path='%s' '%s/%s' < '%s' > '%s'",
             g_protoc, type, dir, dir, file, in, path);
    if (system(cmd) != 0)
        fail_msg("protoc could not encode:\n%s", text);
}

/* Encodes text as message hostrange.`type` with protoc into a new file. */
static void protoc_encode(const char *type, const char *text, char *path,
                          size_t plen)
{
    const char *srcdir = getenv("srcdir");
    char dir[4096], full[64];

    snprintf(dir, sizeof dir, "%s/proto", srcdir != NULL ? srcdir : ".");
    snprintf(full, sizeof full, "hostrange.%s", type);
    protoc_encode_with(dir, "hostrange.proto", full, text, path, plen);
}

/* Sends the file at path to socket `name` of the daemon on dir with
 * nanocat; returns the answer as nanocat quotes it (caller frees). */
static char *nanocat_send(const char *dir, const char *name, const char *path)
{
    char url[400];
    char *argv[] = { g_nanocat, "--req", "--connect", url, "-F",
                     (char *)path, "--recv-timeout", "20", "--quoted",
                     NULL };
    struct harness_run r;
    char *answer;

    hrp_endpoint(url, sizeof url, dir, name);
    harness_run(argv, NULL, 120, &r);
    if (!harness_exited(r.status, 0) || r.out[0] == '\0')
        fail_msg("nanocat got no answer (status %d): %s", r.status, r.err);
    answer = r.out;
    r.out = NULL;
    harness_run_free(&r);
    return answer;
}

/* Sends a batch file that must be taken (status OK: no error text). */
static void send_ok(const char *dir, const char *path)
{
    char *answer = nanocat_send(dir, HRP_INGEST_NAME, path);

    if (strstr(answer, "rejected") != NULL || strstr(answer, "again") != NULL)
        fail_msg("a valid batch was not taken: %s", answer);
    free(answer);
}

/* --- tests --------------------------------------------------------------- */

static int setup(void **state)
{
    struct harness_daemon *d = calloc(1, sizeof *d);

    harness_daemon_start(d);
    harness_mkdtemp(g_work, sizeof g_work, "hostile");
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    harness_daemon_stop(*state);
    free(*state);
    harness_rm_rf(g_work);
    return 0;
}

/* protoc's encoding of the text and the client's encoding of the same
 * batch give the same report and the same client counters. */
static void test_protoc_batch(void **state)
{
    struct harness_daemon *d = *state, other = { { 0 }, 0 };
    char path[300], text[4096], *rep_client, *rep_protoc, *st1, *st2;
    struct text t = { 0 };
    uint8_t *buf;
    size_t len;

    buf = client_batch(4343, 1, 8, &len);
    write_bytes(path, sizeof path, buf, len);
    free(buf);
    send_ok(d->dir, path);
    rep_client = harness_dump(d->dir, "all");
    st1 = harness_stats(d->dir);

    harness_daemon_start(&other);
    batch_text(text, sizeof text, &t);
    protoc_encode("Batch", text, path, sizeof path);
    send_ok(other.dir, path);
    rep_protoc = harness_dump(other.dir, "all");
    st2 = harness_stats(other.dir);
    assert_string_equal(rep_protoc, rep_client);

    /* The numbers themselves. */
    assert_non_null(strstr(rep_client,
        "{\"nodeid\":\"tests/hostile::node\",\"operator\":\"add\","
        "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":\"dispatch.call\","
        "\"metric\":\"inclusive\",\"count\":3,\"unit\":\"ns\","
        "\"mean\":1033.3333333333333,\"median\":1000.0,\"min\":900.0,"
        "\"max\":1200.0,"));
    assert_non_null(strstr(rep_client,
        "\"phase\":\"warm\",\"range\":\"operator.call\",\"metric\":\"self\","
        "\"count\":3,\"unit\":\"ns\",\"mean\":633.3333333333334,"
        "\"median\":600.0,"));
    assert_non_null(strstr(rep_client,
        "\"phase\":\"cold\",\"range\":\"dispatch.call\",\"metric\":\"self\","
        "\"count\":1,\"unit\":\"ns\",\"mean\":2000.0,\"median\":2000.0,"));
    assert_non_null(strstr(rep_client,
        "\"phase\":\"warm\",\"range\":\"end_to_end\",\"metric\":"
        "\"inclusive\",\"count\":2,\"unit\":\"ns\",\"mean\":2600.0,"
        "\"median\":2600.0,"));
    assert_non_null(strstr(rep_client, "\"lost\":7}"));
    for (int i = 0; i < 2; i++) {
        const char *st = i == 0 ? st1 : st2;
        assert_int_equal(harness_stat(st, "daemon.clients"), 1);
        assert_int_equal(harness_stat(st, "client.1.pid"), 4343);
        assert_int_equal(harness_stat(st, "client.1.events"), 10);
        assert_int_equal(harness_stat(st, "client.1.lost_events"), 7);
        assert_int_equal(harness_stat(st, "daemon.events"), 18);
        assert_int_equal(harness_stat_rejected(st), 0);
    }
    free(rep_client);
    free(rep_protoc);
    free(st1);
    free(st2);
    harness_daemon_stop(&other);
}

/* xorshift64: the same "random" bytes on every run. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

struct hostile {
    char path[300];
    const char *reason; /* the counter it must land in */
    const char *what;
};

/*
 * The report `rep` without its rows' lost counts (a new string, the
 * caller frees it), and the count of its first row in *lost (0 when it has
 * none): every row of this test's one node carries the same.
 */
static char *without_lost(const char *rep, unsigned long long *lost)
{
    char *out = strdup(rep), *p;
    const char *q;

    assert_non_null(out);
    q = strstr(rep, ",\"lost\":");
    *lost = q != NULL ? strtoull(q + 8, NULL, 10) : 0;
    while ((p = strstr(out, ",\"lost\":")) != NULL) {
        char *e = p + 8;

        while (*e >= '0' && *e <= '9')
            e++;
        memmove(p, e, strlen(e) + 1);
    }
    return out;
}

static void test_hostile_batches(void **state)
{
    static struct hostile h[48];
    struct harness_daemon *d = *state;
    char path[300], text[4096], *before, *after, *st, *answer;
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
    static const size_t rnd_sizes[4] = { 1, 16, 300, 5000 };
    static const char *const reasons[] = {
        "malformed", "version", "oversize", "array_length", "index",
        "phase", "string", "value", "sequence", "stream",
    };
    uint8_t *good, *buf;
    size_t good_len, len;
    int n = 0;

    /* What the daemon holds before: one valid batch of client 4242. */
    good = client_batch(4242, 1, 8, &good_len);
    write_bytes(path, sizeof path, good, good_len);
    send_ok(d->dir, path);
    before = harness_dump(d->dir, "all");

    /* Random bytes. */
    for (int i = 0; i < 4; i++) {
        buf = malloc(rnd_sizes[i]);
        for (size_t j = 0; j < rnd_sizes[i]; j++)
            buf[j] = (uint8_t)next_random(&rnd);
        write_bytes(h[n].path, sizeof h[n].path, buf, rnd_sizes[i]);
        free(buf);
        h[n].reason = "malformed";
        h[n++].what = "random bytes";
    }
    /* Truncated: inside the process label, inside the sample stream, one
     * byte short. */
    {
        const uint8_t *label = memmem(good, good_len, "hostile-client", 14);
        uint8_t first[32], *e = first;
        const uint8_t *stream;
        size_t cuts[3];

        for (int i = 0; i < 3; i++)
            e = hrp_put_varint(e, good_stream[i]);
        stream = memmem(good, good_len, first, (size_t)(e - first));
        assert_non_null(label);
        assert_non_null(stream);
        cuts[0] = (size_t)(label - good) + 5;
        cuts[1] = (size_t)(stream - good) + 10;
        cuts[2] = good_len - 1;
        for (int i = 0; i < 3; i++) {
            write_bytes(h[n].path, sizeof h[n].path, good, cuts[i]);
            h[n].reason = "malformed";
            h[n++].what = "a truncated batch";
        }
    }
    /* Other protocol versions, damaged streams and invalid fields, made by
     * protoc. */
    {
        const struct {
            struct text t;
            const char *reason, *what;
        } v[] = {
            { { .version = "version: 1" }, "version",
              "version 1 (with a version 2 body)" },
            { { .version = "version: 3" }, "version", "version 3" },
            { { .version = "" }, "version", "no version" },
            { { .version = "version: 4294967295" }, "version",
              "version 2^32-1" },
            { { .samples = "\\x03\\x01\\xe8" }, "stream",
              "a varint that runs off the end of the stream" },
            { { .samples = "\\x03\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff"
                           "\\xff\\xff\\xff\\x01" },
              "stream", "a varint of 11 bytes" },
            { { .stream = (const uint64_t[]){ LABEL(0), PARENT(0), 1000,
                                               600, END } },
              "stream", "a stream that ends inside an item" },
            { { .stream = (const uint64_t[]){ LEAF(1), 600, LABEL(0),
                                               LEAF(1), 700, END },
                .events = "2" },
              "stream", "a sample before the first label item" },
            { { .stream = (const uint64_t[]){ LABEL(2), LEAF(1), 600, END },
                .events = "1" },
              "index", "a label item out of range" },
            { { .stream = (const uint64_t[]){ LABEL(0), LEAF(3), 600, END },
                .events = "1" },
              "index", "a sample's context out of range" },
            { { .stream = (const uint64_t[]){ LABEL(0), RECORD(1), 2500,
                                               END },
                .events = "1" },
              "index", "a record of a context with a parent" },
            { { .context_parent = "0, 2, 0" }, "index",
              "a context whose parent comes after it" },
            { { .context_range = "0, 1, 3" }, "index",
              "a context's range out of range" },
            { { .label_id = "id: 1" }, "index",
              "a label set whose id is not its index" },
            { { .lost_label = "4294967295" }, "index",
              "a lost count's label index out of range" },
            { { .extra = "internal_label: [2] stall_count: [1] "
                         "stall_ns: [5] wake_count: [0] wake_ns: [0]" },
              "index", "internal work of a label set out of range" },
            { { .events = "11" }, "array_length",
              "more events stated than the stream holds" },
            { { .events = "9" }, "array_length",
              "fewer events stated than the stream holds" },
            { { .context_parent = "0, 1" }, "array_length",
              "context tables of unequal length" },
            { { .lost_label = "0, 1" }, "array_length",
              "lost arrays of unequal length" },
            { { .extra = "internal_label: [0] stall_count: [1]" },
              "array_length", "internal work arrays of unequal length" },
            { { .phase = "3" }, "phase", "phase 3" },
            { { .node = "" }, "string", "an empty node id" },
            { { .stream = (const uint64_t[]){ LABEL(0), PARENT(0), 1000,
                                               1001, 1, 0, END },
                .events = "1" },
              "value", "a child time above the inclusive time" },
            { { .stream = (const uint64_t[]){ LABEL(0), PARENT(0), 1000,
                                               600, 1ull << 32, 0, END },
                .events = "1" },
              "value", "2^32 direct children" },
            { { .seq = "0" }, "sequence", "sequence number 0" },
        };
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            batch_text(text, sizeof text, &v[i].t);
            protoc_encode("Batch", text, h[n].path, sizeof h[n].path);
            h[n].reason = v[i].reason;
            h[n++].what = v[i].what;
        }
    }
    /* A version 1 batch (its sample arrays in fields 8 to 14 and 24, which
     * version 2 reserves): rejected for its version, not as malformed. */
    {
        char proto[300], file[400];

        new_file(proto, sizeof proto);
        assert_int_equal(mkdir(proto, 0700), 0);
        snprintf(file, sizeof file, "%s/hostrange_v1.proto", proto);
        harness_write_file(file, v1_proto, strlen(v1_proto));
        protoc_encode_with(proto, "hostrange_v1.proto", "hostrange_v1.Batch",
                           v1_text, h[n].path, sizeof h[n].path);
        h[n].reason = "version";
        h[n++].what = "a version 1 batch";
    }
    /* Over the size cap: a valid batch of more than 4 MiB, and 4 MiB + 1
     * bytes of zeros. */
    buf = oversize_batch(4242, 2, &len);
    assert_true(len > HRP_MAX_INGEST_BYTES);
    write_bytes(h[n].path, sizeof h[n].path, buf, len);
    free(buf);
    h[n].reason = "oversize";
    h[n++].what = "a valid batch over the size cap";
    buf = calloc(1, HRP_MAX_INGEST_BYTES + 1);
    write_bytes(h[n].path, sizeof h[n].path, buf, HRP_MAX_INGEST_BYTES + 1);
    free(buf);
    h[n].reason = "oversize";
    h[n++].what = "4 MiB + 1 bytes";

    for (int i = 0; i < n; i++) {
        char want[64];

        answer = nanocat_send(d->dir, HRP_INGEST_NAME, h[i].path);
        snprintf(want, sizeof want, "rejected: %s", h[i].reason);
        if (strstr(answer, want) == NULL)
            fail_msg("%s: expected '%s', answered %s", h[i].what, want,
                     answer);
        free(answer);
    }

    /* Garbage to the control socket: random bytes, another version. */
    buf = malloc(64);
    for (int j = 0; j < 64; j++)
        buf[j] = (uint8_t)next_random(&rnd);
    write_bytes(path, sizeof path, buf, 64);
    free(buf);
    answer = nanocat_send(d->dir, HRP_CONTROL_NAME, path);
    assert_non_null(strstr(answer, "malformed control request"));
    free(answer);
    protoc_encode("ControlRequest", "version: 1 ping {}", path, sizeof path);
    answer = nanocat_send(d->dir, HRP_CONTROL_NAME, path);
    assert_non_null(strstr(answer, "protocol version mismatch"));
    free(answer);

    /* Each counted under its reason; nothing else changed. */
    st = harness_stats(d->dir);
    for (size_t r = 0; r < sizeof reasons / sizeof reasons[0]; r++) {
        char key[64];
        unsigned long long want = 0;

        for (int i = 0; i < n; i++)
            want += strcmp(h[i].reason, reasons[r]) == 0;
        snprintf(key, sizeof key, "rejected.%s", reasons[r]);
        if (harness_stat(st, key) != want)
            fail_msg("%s is %llu, not %llu:\n%s", key, harness_stat(st, key),
                     want, st);
    }
    assert_int_equal(harness_stat(st, "rejected.control"), 2);
    assert_int_equal(harness_stat_rejected(st), (unsigned long long)n + 2);
    assert_int_equal(harness_stat(st, "daemon.clients"), 1);
    assert_int_equal(harness_stat(st, "client.1.rejected"), 0);
    assert_int_equal(harness_stat(st, "client.1.events"), 10);
    assert_int_equal(harness_stat(st, "daemon.events"), 18);
    /* The events of the refused batches whose node ids could be read are
     * counted lost under them; the rows are otherwise unchanged. */
    {
        unsigned long long lost_before, lost_after;
        char *a, *b;

        after = harness_dump(d->dir, "all");
        b = without_lost(before, &lost_before);
        a = without_lost(after, &lost_after);
        assert_string_equal(a, b);
        assert_int_equal(lost_after - lost_before,
                         harness_stat(st, "daemon.refused_events"));
        free(a);
        free(b);
        free(after);
    }
    free(st);

    /* And it takes the next valid batch: every count doubles. */
    buf = client_batch(4242, 2, 8, &len);
    write_bytes(path, sizeof path, buf, len);
    free(buf);
    send_ok(d->dir, path);
    after = harness_dump(d->dir, NULL);
    assert_non_null(strstr(after,
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":6,\"unit\":\"ns\","
        "\"mean\":1033.3333333333333,\"median\":1000.0}"));
    assert_non_null(strstr(after,
        "\"phase\":\"warm\",\"range\":\"end_to_end\",\"metric\":"
        "\"inclusive\",\"count\":4,\"unit\":\"ns\",\"mean\":2600.0,"
        "\"median\":2600.0}"));
    free(after);
    free(before);
    free(good);
    printf("# %d hostile batches and 2 hostile control requests: all "
           "rejected and counted\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_protoc_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_batches, setup,
                                        teardown),
    };

    if (harness_tool("protoc", g_protoc, sizeof g_protoc) == NULL ||
        harness_tool("nanocat", g_nanocat, sizeof g_nanocat) == NULL) {
        printf("protoc (protobuf-compiler) or nanocat (nanomsg-utils) is "
               "missing: skipped\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
