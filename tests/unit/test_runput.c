/*
 * Keys of run format 1 written by hand (lib/run/runput.c, hrr_runput_key)
 * are byte for byte what protobuf-c packs hrr_runkey_from's message into:
 * random aggregations of exact keys (range events of leaves and parents,
 * records, values 0 and up to 2^64 - 1, no event at all), with no, one
 * (a mirror) or several calling contexts, some parted from their mirror by
 * a record or a sample kept without a path, and histogram keys, which the
 * hand writer leaves to protobuf-c. A save page written as bytes is the
 * page of packed keys, key for key. The field numbers those writers and
 * the scanner use by name (lib/run/runfields.h) are the .proto's.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/agg/agg_impl.h"
#include "daemon/ingest.h"
#include "daemon/save.h"
#include "lib/run/pbuf.h"
#include "lib/run/runfields.h"
#include "lib/run/runkey.h"
#include "lib/run/runput.h"
#include "proto/hostrange.pb-c.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

/* A random time: 0, small, typical, large, or near 2^64. */
static uint64_t rnd_time(void)
{
    switch (below(8)) {
    case 0:
        return 0;
    case 1:
        return below(128);
    case 2:
        return UINT64_MAX - below(3);
    case 3:
        return rnd();
    default:
        return 1000 + below(1000000);
    }
}

/* What the random keys covered, so that the test knows it tried them. */
struct seen {
    unsigned mirror, several, records, leaves, parents, empty, hist, big,
        zero;
};

/* Adds one range event to key k under path pid (0: none), as ingest
 * does. */
static void add_event(struct hra_agg *a, struct hra_key *k, uint32_t pid,
                      int leaf, struct seen *s)
{
    uint64_t incl = rnd_time();
    uint64_t self = leaf ? incl : incl - (incl ? below(incl) + 1 : 0);
    uint64_t nchild = leaf ? 0 : 1 + below(3);
    struct hra_key *pk = pid ? hra_path_key_live(a, k, pid) : NULL;

    s->big += incl > UINT32_MAX;
    s->zero += incl == 0;
    if (pid == 0)
        assert_int_equal(hra_path_unmirror(a, k), 0);
    else
        assert_non_null(pk);
    assert_int_equal(hra_add(a, k, incl, self), 0);
    k->children += nchild;
    k->descendants += nchild + (leaf ? 0 : below(2));
    if (pk != NULL && !pk->mirror) {
        assert_int_equal(hra_path_add(a, pk, incl, self), 0);
        pk->children += nchild;
        pk->descendants += nchild;
    }
}

/* Fills a with random keys. */
static void fill(struct hra_agg *a, struct seen *s)
{
    static const char *nodes[] = { "t.py::a", "t.py::b[1-2]", "x" };
    static const char *ranges[] = { "r", "matmul", "a very long range name "
                                    "that takes more than 127 bytes to "
                                    "write, so that its length is a varint "
                                    "of two bytes in the message, as is "
                                    "seen" };
    uint32_t nkeys = 1 + (uint32_t)below(12);

    for (uint32_t i = 0; i < nkeys; i++) {
        uint32_t node = hra_str(a, nodes[below(3)]);
        uint32_t range = hra_str(a, ranges[below(3)]);
        uint32_t op = hra_str(a, below(2) ? "op" : "operator");
        uint32_t be = hra_str(a, "cpu");
        struct hra_key *k = hra_agg_key(a, node, op, be,
                                        1 + (uint32_t)below(2), range);
        uint32_t pids[4], npaths = (uint32_t)below(4);
        uint64_t n = below(5) == 0 ? 0 : 1 + below(300);
        int leaves = (int)below(2), mixed = (int)below(2);

        assert_non_null(k);
        if (below(2))
            hra_rank_node(a, node);
        if (below(2))
            hra_rank_range(a, range);
        for (uint32_t p = 0; p < npaths; p++) {
            uint32_t top = hra_str(a, p % 2 ? "outer" : "");

            pids[p] = hra_path(a, hra_path(a, 0, top), range);
            if (p == 2)
                pids[p] = hra_path(a, 0, range);
        }
        /* One path mostly (a mirror), sometimes a sample without one or
         * another path. */
        for (uint64_t e = 0; e < n; e++) {
            uint32_t pid = npaths == 0 ? 0
                           : mixed && below(20) == 0
                               ? (below(2) ? 0 : pids[below(npaths)])
                               : pids[0];

            add_event(a, k, pid, leaves || below(10) == 0, s);
        }
        if (below(4) == 0) {
            uint64_t r = 1 + below(5);

            for (uint64_t j = 0; j < r; j++)
                assert_int_equal(hra_add_record(a, k, rnd_time()), 0);
        }
        if (below(8) == 0)
            assert_int_equal(hra_key_to_hist(a, k), 0);
    }
}

static void note(const struct hra_key *k, struct seen *s)
{
    size_t np = 0;

    for (const struct hra_key *p = k->paths; p != NULL; p = p->pnext) {
        np++;
        s->mirror += p->mirror && k->pairs > 0;
    }
    s->several += np > 1;
    s->records += k->records > 0;
    s->empty += k->pairs + k->records == 0;
    s->hist += !k->exact;
    s->leaves += k->exact && k->pairs > 0 && k->children == 0;
    s->parents += k->exact && k->children > 0;
}

/* Every key of a, by hand and by protobuf-c, bare and as a field. */
static void check_keys(struct hra_agg *a, struct seen *s)
{
    struct hrr_runput_tmp t = { NULL, 0, NULL, 0 };
    struct hrr_pbuf out = { NULL, 0, 0 };

    for (uint32_t i = 0; i < a->nkeys; i++) {
        const struct hra_key *k = a->keys[i];
        Hostrange__RunKey m;
        uint8_t *want, head[16];
        size_t len, hl;
        int rc;

        note(k, s);
        assert_int_equal(hrr_runkey_from(a, k, 1, &m), 0);
        len = hostrange__run_key__get_packed_size(&m);
        want = malloc(len + 1);
        assert_non_null(want);
        assert_int_equal(hostrange__run_key__pack(&m, want), len);
        hrr_runkey_clear(&m);

        out.len = 0;
        rc = hrr_runput_key(a, k, 0, &out, &t);
        if (!k->exact) {
            assert_int_equal(rc, 1);
            assert_int_equal(out.len, 0);
            free(want);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(out.len, len);
        assert_memory_equal(out.p, want, len);

        /* As field 4 after what out held. */
        hl = (size_t)(hrr_pb_len(head, 4, len) - head);
        assert_int_equal(hrr_runput_key(a, k, 4, &out, &t), 0);
        assert_int_equal(out.len, len + hl + len);
        assert_memory_equal(out.p + len, head, hl);
        assert_memory_equal(out.p + len + hl, want, len);
        free(want);
    }
    hrr_runput_tmp_fini(&t);
    free(out.p);
}

/* A save page as bytes is the page of packed keys, field by field. */
static void check_page(struct hra_agg *a, struct hrd_ingest *in)
{
    Hostrange__SaveReply r1, r2;
    struct hrr_pbuf out = { NULL, 0, 0 };
    uint32_t c1 = 0, c2 = 0;
    int d1 = 0, d2 = 0;

    while (!d1) {
        size_t at = 0;

        assert_int_equal(hrd_save_page(a, in, &c1, 500, 1, 1, NULL, &r1,
                                         &d1), 0);
        assert_int_equal(hrd_save_page(a, in, &c2, 500, 1, 1, &out, &r2,
                                         &d2), 0);
        assert_int_equal(c1, c2);
        assert_int_equal(d1, d2);
        assert_int_equal(r2.n_packed_keys, 0);
        assert_int_equal(r2.n_keys, 0);
        assert_int_equal(r1.end != NULL, r2.end != NULL);
        for (size_t i = 0; i < r1.n_packed_keys; i++) {
            uint8_t head[16];
            size_t hl = (size_t)(hrr_pb_len(head, 4, r1.packed_keys[i].len) -
                                 head);

            assert_true(at + hl + r1.packed_keys[i].len <= out.len);
            assert_memory_equal(out.p + at, head, hl);
            assert_memory_equal(out.p + at + hl, r1.packed_keys[i].data,
                                r1.packed_keys[i].len);
            at += hl + r1.packed_keys[i].len;
        }
        assert_int_equal(at, out.len);
        hrd_save_page_free(&r1);
        hrd_save_page_free(&r2);
    }
    free(out.p);
}

static void test_random_keys(void **state)
{
    struct seen s = { 0 };

    (void)state;
    for (int trial = 0; trial < 300; trial++) {
        struct hra_agg a;
        struct hrd_ingest in;

        hra_init(&a);
        hrd_ingest_init(&in, &a);
        fill(&a, &s);
        check_keys(&a, &s);
        check_page(&a, &in);
        hrd_ingest_fini(&in);
        hra_fini(&a);
    }
    /* Every kind of key was tried, many times. */
    assert_true(s.mirror > 50);
    assert_true(s.several > 50);
    assert_true(s.records > 50);
    assert_true(s.leaves > 50);
    assert_true(s.parents > 50);
    assert_true(s.empty > 50);
    assert_true(s.hist > 50);
    assert_true(s.big > 50);
    assert_true(s.zero > 50);
}

/* Varint sizes at every width's edges. */
static void test_varint_size(void **state)
{
    (void)state;
    assert_int_equal(hrr_pb_varint_size(0), 1);
    for (unsigned bits = 1; bits <= 64; bits++) {
        uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        uint64_t low = (uint64_t)1 << (bits - 1);
        uint8_t b[10];

        assert_int_equal(hrr_pb_varint_size(top),
                         (size_t)(hrp_put_varint(b, top) - b));
        assert_int_equal(hrr_pb_varint_size(low),
                         (size_t)(hrp_put_varint(b, low) - b));
    }
}

/* A field number of runfields.h: its message and its name there. */
struct named_field {
    const ProtobufCMessageDescriptor *d;
    const char *name;
    unsigned id;
};

/* A key's counters, named by the table of lib/agg/keyfields.h. */
#define COUNTER(name, runkey, runpath, merge, row)                      \
    { &hostrange__run_key__descriptor, #name, HRA_KF_RUNKEY_##name },  \
    HRA_KF_IF_PATH(runpath)({ &hostrange__run_path__descriptor, #name,  \
                              HRA_KF_RUNPATH_##name },)

static const struct named_field named[] = {
    HRA_KEY_COUNTERS(COUNTER)
    { &hostrange__run_key__descriptor, "node_id", HRR_RUNKEY_NODE_ID },
    { &hostrange__run_key__descriptor, "operator", HRR_RUNKEY_OPERATOR },
    { &hostrange__run_key__descriptor, "backend", HRR_RUNKEY_BACKEND },
    { &hostrange__run_key__descriptor, "phase", HRR_RUNKEY_PHASE },
    { &hostrange__run_key__descriptor, "range", HRR_RUNKEY_RANGE },
    { &hostrange__run_key__descriptor, "node_rank", HRR_RUNKEY_NODE_RANK },
    { &hostrange__run_key__descriptor, "range_rank",
      HRR_RUNKEY_RANGE_RANK },
    { &hostrange__run_key__descriptor, "inclusive", HRR_RUNKEY_INCLUSIVE },
    { &hostrange__run_key__descriptor, "self", HRR_RUNKEY_SELF },
    { &hostrange__run_key__descriptor, "inclusive_hist",
      HRR_RUNKEY_INCLUSIVE_HIST },
    { &hostrange__run_key__descriptor, "self_hist", HRR_RUNKEY_SELF_HIST },
    { &hostrange__run_key__descriptor, "paths", HRR_RUNKEY_PATHS },
    { &hostrange__run_key__descriptor, "events", HRR_RUNKEY_EVENTS },
    { &hostrange__run_path__descriptor, "path", HRR_RUNPATH_PATH },
    { &hostrange__run_path__descriptor, "inclusive",
      HRR_RUNPATH_INCLUSIVE },
    { &hostrange__run_path__descriptor, "self", HRR_RUNPATH_SELF },
    { &hostrange__run_path__descriptor, "inclusive_hist",
      HRR_RUNPATH_INCLUSIVE_HIST },
    { &hostrange__run_path__descriptor, "self_hist",
      HRR_RUNPATH_SELF_HIST },
    { &hostrange__run_path__descriptor, "events", HRR_RUNPATH_EVENTS },
    { &hostrange__run_path__descriptor, "same_as_key",
      HRR_RUNPATH_SAME_AS_KEY },
    { &hostrange__run_hist__descriptor, "n", HRR_RUNHIST_N },
    { &hostrange__run_hist__descriptor, "min", HRR_RUNHIST_MIN },
    { &hostrange__run_hist__descriptor, "max", HRR_RUNHIST_MAX },
    { &hostrange__run_hist__descriptor, "sum_lo", HRR_RUNHIST_SUM_LO },
    { &hostrange__run_hist__descriptor, "sum_hi", HRR_RUNHIST_SUM_HI },
    { &hostrange__run_hist__descriptor, "sumsq_hi", HRR_RUNHIST_SUMSQ_HI },
    { &hostrange__run_hist__descriptor, "sumsq_lo", HRR_RUNHIST_SUMSQ_LO },
    { &hostrange__run_hist__descriptor, "buckets", HRR_RUNHIST_BUCKETS },
    { &hostrange__run_hist__descriptor, "counts", HRR_RUNHIST_COUNTS },
    { &hostrange__save_reply__descriptor, "keys", HRR_SAVEREPLY_KEYS },
    { &hostrange__save_reply__descriptor, "next_cursor",
      HRR_SAVEREPLY_NEXT_CURSOR },
    { &hostrange__save_reply__descriptor, "end", HRR_SAVEREPLY_END },
    { &hostrange__save_reply__descriptor, "packed_keys",
      HRR_SAVEREPLY_PACKED_KEYS },
    { &hostrange__control_reply__descriptor, "version",
      HRR_CONTROLREPLY_VERSION },
    { &hostrange__control_reply__descriptor, "save",
      HRR_CONTROLREPLY_SAVE },
};

/* The messages whose every field runfields.h names. */
static const ProtobufCMessageDescriptor *const whole[] = {
    &hostrange__run_key__descriptor,
    &hostrange__run_path__descriptor,
    &hostrange__run_hist__descriptor,
    &hostrange__save_reply__descriptor,
};

/* Each named field number is the one protobuf-c's descriptor (generated
 * from the .proto) gives that field, and each field of the run file's
 * messages and of SaveReply is named exactly once. */
static void test_field_numbers(void **state)
{
    size_t nn = sizeof named / sizeof named[0];

    (void)state;
    for (size_t i = 0; i < nn; i++) {
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(named[i].d,
                                                            named[i].name);

        if (f == NULL)
            fail_msg("%s has no field %s", named[i].d->name, named[i].name);
        if (f->id != named[i].id)
            fail_msg("%s.%s is field %u in the .proto, %u in runfields.h",
                     named[i].d->name, named[i].name, f->id, named[i].id);
    }
    for (size_t m = 0; m < sizeof whole / sizeof whole[0]; m++) {
        for (unsigned j = 0; j < whole[m]->n_fields; j++) {
            const char *name = whole[m]->fields[j].name;
            int times = 0;

            for (size_t i = 0; i < nn; i++)
                times += named[i].d == whole[m] &&
                         strcmp(named[i].name, name) == 0;
            if (times != 1)
                fail_msg("%s.%s is in the table above %d times, not once",
                         whole[m]->name, name, times);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_numbers),
        cmocka_unit_test(test_varint_size),
        cmocka_unit_test(test_random_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
