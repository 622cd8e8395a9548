/*
 * pprof profiles (lib/view/pprof.c): a known calling-context tree encoded as
 * profile.proto and read back by a reader of the protocol-buffer wire
 * format written here (the real reader, go tool pprof, is
 * tests/service/test_pprof.sh's): string 0 is "", every string once, the
 * two sample types with self the default, one sample per path with a row,
 * its locations leaf first, each location one line of the function named
 * after its range, the four labels (an empty one left out), and the same
 * self total as the folded stacks. The gzipped form inflates to the same
 * message.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "lib/view/flame.h"
#include "lib/view/pprof.h"

/* --- a reader of the wire format ----------------------------------------- */

struct field {
    unsigned num, wire;
    uint64_t v;              /* a varint */
    const uint8_t *p;        /* length-delimited: its bytes */
    size_t len;
};

static uint64_t get_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 64; shift += 7) {
        assert_true(*p < end);
        v |= (uint64_t)(**p & 0x7f) << shift;
        if ((*(*p)++ & 0x80) == 0)
            return v;
    }
    fail_msg("varint too long");
    return 0;
}

/* Reads the next field of [*p, end); 0 at the end. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
    uint64_t tag;

    if (*p == end)
        return 0;
    tag = get_varint(p, end);
    memset(f, 0, sizeof *f);
    f->num = (unsigned)(tag >> 3);
    f->wire = (unsigned)(tag & 7);
    if (f->wire == 0) {
        f->v = get_varint(p, end);
    } else if (f->wire == 2) {
        f->len = (size_t)get_varint(p, end);
        assert_true(f->len <= (size_t)(end - *p));
        f->p = *p;
        *p += f->len;
    } else {
        fail_msg("unexpected wire type %u", f->wire);
    }
    return 1;
}

/* The varint field `num` of message [p, p + len), or 0 when absent. */
static uint64_t field_uint(const uint8_t *p, size_t len, unsigned num)
{
    const uint8_t *end = p + len;
    struct field f;
    uint64_t v = 0;

    while (next_field(&p, end, &f)) {
        if (f.num == num && f.wire == 0)
            v = f.v;
    }
    return v;
}

/* The decoded profile: what the checks need. */
#define MAXN 64

struct sample {
    uint64_t loc[16];
    size_t nloc;
    int64_t val[4];
    size_t nval;
    uint64_t lkey[8], lstr[8];
    size_t nlabels;
};

struct prof {
    char *str[MAXN];
    size_t nstr;
    uint64_t type[4][2];
    size_t ntypes;
    struct sample s[MAXN];
    size_t ns;
    uint64_t loc_func[MAXN], loc_mapping[MAXN], nloc;
    uint64_t func_name[MAXN], nfunc;
    uint64_t mappings, mapping_has_functions;
    uint64_t default_type, comment;
};

/* Appends the packed varints of f to v (n of them, at most max). */
static void packed(const struct field *f, uint64_t *v, size_t *n, size_t max)
{
    const uint8_t *p = f->p, *end = f->p + f->len;

    assert_int_equal(f->wire, 2);
    while (p < end) {
        assert_true(*n < max);
        v[(*n)++] = get_varint(&p, end);
    }
}

static void read_sample(struct prof *pr, const struct field *top)
{
    struct sample *s = &pr->s[pr->ns++];
    const uint8_t *p = top->p, *end = top->p + top->len;
    struct field f;

    assert_true(pr->ns <= MAXN);
    memset(s, 0, sizeof *s);
    while (next_field(&p, end, &f)) {
        if (f.num == 1) {
            packed(&f, s->loc, &s->nloc, 16);
        } else if (f.num == 2) {
            uint64_t v[4];
            size_t n = 0;

            packed(&f, v, &n, 4);
            for (size_t i = 0; i < n; i++)
                s->val[s->nval++] = (int64_t)v[i];
        } else if (f.num == 3) {
            assert_true(s->nlabels < 8);
            s->lkey[s->nlabels] = field_uint(f.p, f.len, 1);
            s->lstr[s->nlabels] = field_uint(f.p, f.len, 2);
            /* A string label: no number. */
            assert_int_equal(field_uint(f.p, f.len, 3), 0);
            s->nlabels++;
        }
    }
}

/* The one line of a location: its function. */
static uint64_t location_function(const struct field *top)
{
    const uint8_t *p = top->p, *end = top->p + top->len;
    struct field f;
    uint64_t func = 0;
    int lines = 0;

    while (next_field(&p, end, &f)) {
        if (f.num == 4) {
            func = field_uint(f.p, f.len, 1);
            lines++;
        }
    }
    assert_int_equal(lines, 1);
    return func;
}

static void decode(const uint8_t *msg, size_t len, struct prof *pr)
{
    const uint8_t *p = msg, *end = msg + len;
    struct field f;

    memset(pr, 0, sizeof *pr);
    while (next_field(&p, end, &f)) {
        switch (f.num) {
        case 1:
            pr->type[pr->ntypes][0] = field_uint(f.p, f.len, 1);
            pr->type[pr->ntypes][1] = field_uint(f.p, f.len, 2);
            pr->ntypes++;
            break;
        case 2:
            read_sample(pr, &f);
            break;
        case 3:
            pr->mappings++;
            assert_int_equal(field_uint(f.p, f.len, 1), 1);
            pr->mapping_has_functions = field_uint(f.p, f.len, 7);
            break;
        case 4: {
            uint64_t id = field_uint(f.p, f.len, 1);

            /* Locations are numbered 1, 2, 3, ... */
            assert_int_equal(id, pr->nloc + 1);
            pr->loc_mapping[pr->nloc] = field_uint(f.p, f.len, 2);
            pr->loc_func[pr->nloc++] = location_function(&f);
            break;
        }
        case 5: {
            uint64_t id = field_uint(f.p, f.len, 1);

            assert_int_equal(id, pr->nfunc + 1);
            pr->func_name[pr->nfunc++] = field_uint(f.p, f.len, 2);
            break;
        }
        case 6:
            assert_true(pr->nstr < MAXN);
            pr->str[pr->nstr] = strndup((const char *)f.p, f.len);
            pr->nstr++;
            break;
        case 13:
            pr->comment = f.v;
            break;
        case 14:
            pr->default_type = f.v;
            break;
        default:
            fail_msg("unexpected Profile field %u", f.num);
        }
    }
}

static void prof_free(struct prof *pr)
{
    for (size_t i = 0; i < pr->nstr; i++)
        free(pr->str[i]);
}

static const char *str(const struct prof *pr, uint64_t i)
{
    assert_true(i < pr->nstr);
    return pr->str[i];
}

/* The value of label `key` of sample s, or NULL. */
static const char *label(const struct prof *pr, const struct sample *s,
                         const char *key)
{
    for (size_t i = 0; i < s->nlabels; i++) {
        if (strcmp(str(pr, s->lkey[i]), key) == 0)
            return str(pr, s->lstr[i]);
    }
    return NULL;
}

/* Sample s's stack as "leaf;caller;...;outermost". */
static void stack(const struct prof *pr, const struct sample *s, char *buf,
                  size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < s->nloc; i++) {
        uint64_t loc = s->loc[i], func;

        assert_true(loc >= 1 && loc <= pr->nloc);
        func = pr->loc_func[loc - 1];
        assert_true(func >= 1 && func <= pr->nfunc);
        if (i > 0)
            strncat(buf, ";", len - strlen(buf) - 1);
        strncat(buf, str(pr, pr->func_name[func - 1]),
                len - strlen(buf) - 1);
    }
}

/* --- the tree ------------------------------------------------------------ */

static void add(struct hrv_ptree *t, const char *node, const char *backend,
                const char *phase, const char *path, uint64_t calls,
                uint64_t self_sum)
{
    const char *names[8];
    char buf[256], *save = NULL;
    uint32_t depth = 0;
    struct hra_row r = { 0 };

    snprintf(buf, sizeof buf, "%s", path);
    for (char *w = strtok_r(buf, ";", &save); w != NULL;
         w = strtok_r(NULL, ";", &save))
        names[depth++] = w;
    r.node_id = node;
    r.op = "add";
    r.backend = backend;
    r.phase = phase;
    r.range = names[depth - 1];
    r.path = names;
    r.depth = depth;
    r.metric = "inclusive";
    r.count = calls;
    r.median = 10;
    r.sum = 2 * self_sum;
    assert_non_null(hrv_ptree_row(t, &r));
    r.metric = "self";
    r.median = 5;
    r.sum = self_sum;
    assert_non_null(hrv_ptree_row(t, &r));
}

/* Two nodes, cold and warm; b;c's parent b has no row of its own under
 * node 2 (filtered out), and node 2's backend is empty. */
static void known_tree(struct hrv_ptree *t)
{
    hrv_ptree_init(t);
    add(t, "n1", "cpu", "cold", "binding.body", 1, 700);
    add(t, "n1", "cpu", "cold", "binding.body;dispatch.call", 1, 300);
    add(t, "n1", "cpu", "warm", "binding.body", 10, 5000);
    add(t, "n1", "cpu", "warm", "binding.body;dispatch.call", 10, 2000);
    add(t, "n1", "cpu", "warm",
        "binding.body;dispatch.call;operator.call", 20, 9000);
    add(t, "n2", "", "warm", "b;c", 3, 42);
}

static const struct {
    const char *node, *phase, *stack;
    int64_t calls, self;
} want[] = {
    { "n1", "cold", "binding.body", 1, 700 },
    { "n1", "cold", "dispatch.call;binding.body", 1, 300 },
    { "n1", "warm", "binding.body", 10, 5000 },
    { "n1", "warm", "dispatch.call;binding.body", 10, 2000 },
    { "n1", "warm", "operator.call;dispatch.call;binding.body", 20, 9000 },
    { "n2", "warm", "c;b", 3, 42 },
};

static void test_known_profile(void **state)
{
    struct hrv_ptree t;
    struct prof pr;
    uint8_t *msg;
    size_t len;
    char buf[256];

    (void)state;
    known_tree(&t);
    assert_int_equal(hrv_pprof_encode(&t, "hostrange test", &msg, &len), 0);
    decode(msg, len, &pr);

    /* The string table: "" first, no string twice. */
    assert_true(pr.nstr > 0);
    assert_string_equal(pr.str[0], "");
    for (size_t i = 0; i < pr.nstr; i++) {
        for (size_t j = i + 1; j < pr.nstr; j++)
            assert_string_not_equal(pr.str[i], pr.str[j]);
    }
    assert_string_equal(str(&pr, pr.comment), "hostrange test");

    /* calls/count and self/nanoseconds, self the default. */
    assert_int_equal(pr.ntypes, 2);
    assert_string_equal(str(&pr, pr.type[0][0]), "calls");
    assert_string_equal(str(&pr, pr.type[0][1]), "count");
    assert_string_equal(str(&pr, pr.type[1][0]), "self");
    assert_string_equal(str(&pr, pr.type[1][1]), "nanoseconds");
    assert_string_equal(str(&pr, pr.default_type), "self");

    /* One function and one location per range name, all in the one
     * mapping, which says it has the functions. */
    assert_int_equal(pr.nfunc, 5);
    assert_int_equal(pr.nloc, 5);
    assert_int_equal(pr.mappings, 1);
    assert_int_equal(pr.mapping_has_functions, 1);
    for (size_t i = 0; i < pr.nloc; i++)
        assert_int_equal(pr.loc_mapping[i], 1);

    /* One sample per path with a row, in the tree's order, leaf first. */
    assert_int_equal(pr.ns, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < pr.ns; i++) {
        const struct sample *s = &pr.s[i];

        stack(&pr, s, buf, sizeof buf);
        assert_string_equal(buf, want[i].stack);
        assert_int_equal(s->nval, 2);
        assert_int_equal(s->val[0], want[i].calls);
        assert_int_equal(s->val[1], want[i].self);
        assert_string_equal(label(&pr, s, HRV_PPROF_LABEL_NODE),
                            want[i].node);
        assert_string_equal(label(&pr, s, HRV_PPROF_LABEL_PHASE),
                            want[i].phase);
        assert_string_equal(label(&pr, s, HRV_PPROF_LABEL_OPERATOR), "add");
        if (strcmp(want[i].node, "n2") == 0) {
            assert_null(label(&pr, s, HRV_PPROF_LABEL_BACKEND));
            assert_int_equal(s->nlabels, 3);
        } else {
            assert_string_equal(label(&pr, s, HRV_PPROF_LABEL_BACKEND),
                                "cpu");
            assert_int_equal(s->nlabels, 4);
        }
    }
    prof_free(&pr);
    free(msg);
    hrv_ptree_free(&t);
}

/* The self total of the profile is the folded stacks' (value total). */
static void test_total_as_folded(void **state)
{
    struct hrv_ptree t;
    struct prof pr;
    uint8_t *msg;
    size_t len, flen = 0;
    char *folded = NULL, *line, *save = NULL;
    int64_t ptotal = 0, ftotal = 0;
    FILE *f;

    (void)state;
    known_tree(&t);
    assert_int_equal(hrv_pprof_encode(&t, NULL, &msg, &len), 0);
    decode(msg, len, &pr);
    assert_int_equal(pr.comment, 0);
    for (size_t i = 0; i < pr.ns; i++)
        ptotal += pr.s[i].val[1];
    f = open_memstream(&folded, &flen);
    assert_int_equal(hrv_folded_write(f, &t, HRV_FVALUE_TOTAL), 0);
    fclose(f);
    for (line = strtok_r(folded, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save))
        ftotal += strtoll(strrchr(line, ' ') + 1, NULL, 10);
    assert_int_equal(ptotal, 700 + 300 + 5000 + 2000 + 9000 + 42);
    assert_int_equal(ptotal, ftotal);
    free(folded);
    prof_free(&pr);
    free(msg);
    hrv_ptree_free(&t);
}

/* The gzipped profile inflates to the encoded message; an empty tree is a
 * profile without samples. */
static void test_gzip(void **state)
{
    struct hrv_ptree t;
    uint8_t *msg, *out;
    char *gz = NULL;
    size_t len, gzlen = 0;
    z_stream z;
    struct prof pr;
    FILE *f;

    (void)state;
    known_tree(&t);
    assert_int_equal(hrv_pprof_encode(&t, "c", &msg, &len), 0);
    f = open_memstream(&gz, &gzlen);
    assert_int_equal(hrv_pprof_write(f, &t, "c"), 0);
    fclose(f);
    /* The gzip magic. */
    assert_true(gzlen > 18);
    assert_int_equal((uint8_t)gz[0], 0x1f);
    assert_int_equal((uint8_t)gz[1], 0x8b);
    out = malloc(len + 1);
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (uint8_t *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = out;
    z.avail_out = (uInt)len + 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, len);
    assert_memory_equal(out, msg, len);
    inflateEnd(&z);
    free(out);
    free(gz);
    free(msg);
    hrv_ptree_free(&t);

    hrv_ptree_init(&t);
    assert_int_equal(hrv_pprof_encode(&t, NULL, &msg, &len), 0);
    decode(msg, len, &pr);
    assert_int_equal(pr.ns, 0);
    assert_int_equal(pr.ntypes, 2);
    prof_free(&pr);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_profile),
        cmocka_unit_test(test_total_as_folded),
        cmocka_unit_test(test_gzip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
