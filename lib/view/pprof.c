/* pprof profiles of a calling-context tree (see pprof.h). */
#include "config.h"

#include "lib/view/pprof.h"
#include "proto/protocol.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Wire types of the protocol-buffer encoding. */
enum { WT_VARINT = 0, WT_LEN = 2 };

/* Field numbers of profile.proto's messages, as the format fixes them. */
enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2 };
enum {
    MAPPING_ID = 1,
    MAPPING_MEMORY_START = 2,
    MAPPING_MEMORY_LIMIT = 3,
    MAPPING_FILENAME = 5,
    MAPPING_HAS_FUNCTIONS = 7,
};
enum {
    LOCATION_ID = 1,
    LOCATION_MAPPING_ID = 2,
    LOCATION_ADDRESS = 3,
    LOCATION_LINE = 4,
};
enum { LINE_FUNCTION_ID = 1 };
enum {
    FUNCTION_ID = 1,
    FUNCTION_NAME = 2,
    FUNCTION_SYSTEM_NAME = 3,
};

/* The one mapping every location belongs to. */
#define MAPPING_ONE 1u
#define MAPPING_NAME "hostrange"

/* --- a growing buffer of encoded bytes ----------------------------------- */

struct wbuf {
    uint8_t *p;
    size_t len, cap;
    int oom; /* set once memory ran out; later writes are dropped */
};

static void wb_reserve(struct wbuf *b, size_t more)
{
    if (b->oom || b->len + more <= b->cap)
        return;
    if (hru_grow(&b->p, &b->cap, b->len + more, 1, 256) != 0)
        b->oom = 1;
}

static void wb_raw(struct wbuf *b, const void *p, size_t n)
{
    wb_reserve(b, n);
    if (b->oom)
        return;
    if (n > 0)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void wb_varint(struct wbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;

    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v != 0);
    wb_raw(b, tmp, n);
}

static void wb_tag(struct wbuf *b, unsigned field, unsigned wire)
{
    wb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; left out when 0, the default. */
static void wb_uint(struct wbuf *b, unsigned field, uint64_t v)
{
    if (v == 0)
        return;
    wb_tag(b, field, WT_VARINT);
    wb_varint(b, v);
}

/* A length-delimited field: bytes, a string or an embedded message. */
static void wb_bytes(struct wbuf *b, unsigned field, const void *p, size_t n)
{
    wb_tag(b, field, WT_LEN);
    wb_varint(b, n);
    wb_raw(b, p, n);
}

/* Appends the message in m as field `field` of b and empties m. */
static void wb_message(struct wbuf *b, unsigned field, struct wbuf *m)
{
    if (m->oom)
        b->oom = 1;
    wb_bytes(b, field, m->p, m->len);
    m->len = 0;
}

/* --- the string table and the functions ---------------------------------- */

struct strtab {
    const char **s;     /* by index; s[0] is "" */
    size_t n, cap;
    uint32_t *func;     /* by string index: the function of that name, or 0 */
    size_t nfuncs;
    uint32_t *hash;     /* open addressing: string index + 1, 0 empty */
    size_t hcap;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int strtab_rehash(struct strtab *t, size_t hcap)
{
    uint32_t *h = calloc(hcap, sizeof *h);

    if (h == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        size_t at = str_hash(t->s[i]) & (hcap - 1);

        while (h[at] != 0)
            at = (at + 1) & (hcap - 1);
        h[at] = (uint32_t)i + 1;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = hcap;
    return 0;
}

/* The index of s in the table, added when new (s is borrowed: it must
 * outlive the table). Returns the index, or -ENOMEM. */
static int64_t strtab_get(struct strtab *t, const char *s)
{
    size_t at;

    if (2 * (t->n + 1) > t->hcap &&
        strtab_rehash(t, t->hcap ? 2 * t->hcap : 64) != 0)
        return -ENOMEM;
    for (at = str_hash(s) & (t->hcap - 1); t->hash[at] != 0;
         at = (at + 1) & (t->hcap - 1)) {
        if (strcmp(t->s[t->hash[at] - 1], s) == 0)
            return t->hash[at] - 1;
    }
    if (t->n == t->cap) {
        /* Two arrays side by side, each resized to the one new room. */
        size_t cap = hru_grow_room(t->cap, t->n + 1, sizeof *t->s, 64);

        if (cap == 0 || hru_resize(&t->s, cap, sizeof *t->s) != 0 ||
            hru_resize(&t->func, cap, sizeof *t->func) != 0)
            return -ENOMEM;
        t->cap = cap;
    }
    t->s[t->n] = s;
    t->func[t->n] = 0;
    t->hash[at] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

/* The function (and location: the same id) of range name `name`, made
 * when new. Returns its id (from 1), or -ENOMEM. */
static int64_t strtab_func(struct strtab *t, const char *name)
{
    int64_t i = strtab_get(t, name);

    if (i < 0)
        return i;
    if (t->func[i] == 0)
        t->func[i] = (uint32_t)++t->nfuncs;
    return t->func[i];
}

static void strtab_free(struct strtab *t)
{
    free(t->s);
    free(t->func);
    free(t->hash);
}

/* --- the samples --------------------------------------------------------- */

/* What the samples of one group share: its label pairs as string indices
 * (key, value), and the scratch of a sample. */
struct gctx {
    struct strtab *st;
    struct wbuf *samples;   /* repeated Sample, as encoded so far */
    struct wbuf msg, packed, label;
    int64_t labels[4][2];
    size_t nlabels;
    uint64_t *locs;         /* a path's locations, leaf first */
    size_t loccap;
};

static int put_sample(struct gctx *g, const struct hrv_pnode *n)
{
    size_t d = 0;

    if (g->loccap < n->depth) {
        uint64_t *nl = realloc(g->locs, n->depth * sizeof *nl);

        if (nl == NULL)
            return -ENOMEM;
        g->locs = nl;
        g->loccap = n->depth;
    }
    for (const struct hrv_pnode *x = n; x->depth > 0; x = x->parent) {
        int64_t f = strtab_func(g->st, x->name);

        if (f < 0)
            return -ENOMEM;
        g->locs[d++] = (uint64_t)f;
    }
    for (size_t i = 0; i < d; i++)
        wb_varint(&g->packed, g->locs[i]);
    wb_message(&g->msg, SAMPLE_LOCATION_ID, &g->packed);
    wb_varint(&g->packed, n->count);
    wb_varint(&g->packed, n->self_sum);
    wb_message(&g->msg, SAMPLE_VALUE, &g->packed);
    for (size_t i = 0; i < g->nlabels; i++) {
        wb_uint(&g->label, LABEL_KEY, (uint64_t)g->labels[i][0]);
        wb_uint(&g->label, LABEL_STR, (uint64_t)g->labels[i][1]);
        wb_message(&g->msg, SAMPLE_LABEL, &g->label);
    }
    wb_message(g->samples, PROFILE_SAMPLE, &g->msg);
    return g->samples->oom ? -ENOMEM : 0;
}

/* The samples of n and its descendants, in the tree's order. */
static int put_samples(struct gctx *g, const struct hrv_pnode *n)
{
    if (n->has && n->depth > 0 && put_sample(g, n) != 0)
        return -ENOMEM;
    for (const struct hrv_pnode *c = n->child; c != NULL; c = c->next) {
        if (put_samples(g, c) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Sets g's label pairs from group gr: those with a value. */
static int group_labels(struct gctx *g, const struct hrv_pgroup *gr)
{
    const char *pairs[4][2] = {
        { HRV_PPROF_LABEL_NODE, gr->node },
        { HRV_PPROF_LABEL_OPERATOR, gr->op },
        { HRV_PPROF_LABEL_BACKEND, gr->backend },
        { HRV_PPROF_LABEL_PHASE, hrp_phase_name(gr->phase) },
    };

    g->nlabels = 0;
    for (size_t i = 0; i < 4; i++) {
        int64_t k, v;

        if (pairs[i][1] == NULL || pairs[i][1][0] == '\0')
            continue;
        k = strtab_get(g->st, pairs[i][0]);
        v = strtab_get(g->st, pairs[i][1]);
        if (k < 0 || v < 0)
            return -ENOMEM;
        g->labels[g->nlabels][0] = k;
        g->labels[g->nlabels][1] = v;
        g->nlabels++;
    }
    return 0;
}

/* --- the profile --------------------------------------------------------- */

/* A ValueType (type, unit) as field `field` of b. */
static int put_value_type(struct wbuf *b, unsigned field, struct strtab *st,
                          const char *type, const char *unit)
{
    struct wbuf m = { 0 };
    int64_t t = strtab_get(st, type), u = strtab_get(st, unit);

    if (t < 0 || u < 0)
        return -ENOMEM;
    wb_uint(&m, VALUE_TYPE_TYPE, (uint64_t)t);
    wb_uint(&m, VALUE_TYPE_UNIT, (uint64_t)u);
    wb_message(b, field, &m);
    free(m.p);
    return 0;
}

/* The mapping, the locations and the functions, one of each per range
 * name (function i has location i), then the string table. */
static void put_tables(struct wbuf *b, const struct strtab *st,
                       int64_t mapping_name)
{
    struct wbuf m = { 0 }, line = { 0 };

    wb_uint(&m, MAPPING_ID, MAPPING_ONE);
    wb_uint(&m, MAPPING_MEMORY_START, 0);
    wb_uint(&m, MAPPING_MEMORY_LIMIT, st->nfuncs + 1);
    wb_uint(&m, MAPPING_FILENAME, (uint64_t)mapping_name);
    wb_uint(&m, MAPPING_HAS_FUNCTIONS, 1);
    wb_message(b, PROFILE_MAPPING, &m);
    for (size_t i = 0; i < st->n; i++) {
        uint32_t f = st->func[i];

        if (f == 0)
            continue;
        wb_uint(&m, LOCATION_ID, f);
        wb_uint(&m, LOCATION_MAPPING_ID, MAPPING_ONE);
        wb_uint(&m, LOCATION_ADDRESS, f);
        wb_uint(&line, LINE_FUNCTION_ID, f);
        wb_message(&m, LOCATION_LINE, &line);
        wb_message(b, PROFILE_LOCATION, &m);
    }
    for (size_t i = 0; i < st->n; i++) {
        uint32_t f = st->func[i];

        if (f == 0)
            continue;
        wb_uint(&m, FUNCTION_ID, f);
        wb_uint(&m, FUNCTION_NAME, i);
        wb_uint(&m, FUNCTION_SYSTEM_NAME, i);
        wb_message(b, PROFILE_FUNCTION, &m);
    }
    for (size_t i = 0; i < st->n; i++)
        wb_bytes(b, PROFILE_STRING_TABLE, st->s[i], strlen(st->s[i]));
    if (m.oom || line.oom)
        b->oom = 1;
    free(m.p);
    free(line.p);
}

int hrv_pprof_encode(const struct hrv_ptree *t, const char *comment,
                     uint8_t **out, size_t *len)
{
    struct strtab st = { 0 };
    struct wbuf b = { 0 }, samples = { 0 };
    struct gctx g = { .st = &st, .samples = &samples };
    int64_t self = 0, mapping = 0, note = 0;
    int rc = -ENOMEM;

    /* "" first, as the format requires. */
    if (strtab_get(&st, "") != 0)
        goto out;
    if (put_value_type(&b, PROFILE_SAMPLE_TYPE, &st, "calls", "count") != 0 ||
        put_value_type(&b, PROFILE_SAMPLE_TYPE, &st, "self",
                       "nanoseconds") != 0)
        goto out;
    self = strtab_get(&st, "self");
    mapping = strtab_get(&st, MAPPING_NAME);
    if (comment != NULL)
        note = strtab_get(&st, comment);
    if (self < 0 || mapping < 0 || note < 0)
        goto out;
    for (const struct hrv_pgroup *gr = t->first; gr != NULL; gr = gr->next) {
        if (group_labels(&g, gr) != 0 || put_samples(&g, &gr->root) != 0)
            goto out;
    }
    wb_raw(&b, samples.p, samples.len);
    put_tables(&b, &st, mapping);
    wb_uint(&b, PROFILE_COMMENT, (uint64_t)note);
    wb_uint(&b, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)self);
    if (b.oom || samples.oom)
        goto out;
    *out = b.p;
    *len = b.len;
    b.p = NULL;
    rc = 0;
out:
    free(b.p);
    free(samples.p);
    free(g.msg.p);
    free(g.packed.p);
    free(g.label.p);
    free(g.locs);
    strtab_free(&st);
    return rc;
}

/* --- gzip ---------------------------------------------------------------- */

/* zlib's window bits for a gzip header and trailer instead of zlib's. */
#define GZIP_WINDOW_BITS (15 + 16)
#define GZIP_MEM_LEVEL 8

int hrv_pprof_write(FILE *f, const struct hrv_ptree *t, const char *comment)
{
    uint8_t *msg, chunk[16384];
    size_t len;
    z_stream z;
    int rc, zrc;

    rc = hrv_pprof_encode(t, comment, &msg, &len);
    if (rc != 0)
        return rc;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS,
                     GZIP_MEM_LEVEL, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(msg);
        return -ENOMEM;
    }
    z.next_in = msg;
    rc = 0;
    do {
        /* avail_in is 32 bits wide: a larger message goes in parts. */
        size_t left = len - (size_t)(z.next_in - msg);
        int flush = left > UINT32_MAX ? Z_NO_FLUSH : Z_FINISH;

        z.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            zrc = deflate(&z, flush);
            if (zrc == Z_STREAM_ERROR) {
                rc = -ENOMEM;
                break;
            }
            if (fwrite(chunk, 1, sizeof chunk - z.avail_out, f) !=
                sizeof chunk - z.avail_out)
                rc = -EIO;
        } while (rc == 0 && z.avail_out == 0);
    } while (rc == 0 && zrc != Z_STREAM_END);
    deflateEnd(&z);
    free(msg);
    if (rc == 0 && ferror(f))
        rc = -EIO;
    return rc;
}
