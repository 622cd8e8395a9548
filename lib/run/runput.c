/* Exact keys of run format 1 written by hand (see runput.h). */
#include "config.h"

#include "lib/run/runput.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/runfields.h"
#include "lib/stat/summary.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One array pair of a key or path being written: its values sorted and
 * delta-coded in place, and the bytes each takes coded. */
struct coded {
    uint64_t *incl, *self;
    size_t ni, ns;
    size_t li, ls;
    int self_is_incl;      /* self's values are incl's (no child, no record) */
};

/* A path of the key being written: its values, and its RunPath's size. */
struct hrr_runput_path {
    struct coded c;
    size_t size;
    int same;             /* a mirror: c is the key's */
};

/* Sorts v[0..n) (tmp: room for n), replaces each value by its difference
 * from the one before, and returns the bytes they take as varints. */
static size_t delta_size(uint64_t *v, size_t n, uint64_t *tmp)
{
    uint64_t prev = 0;
    size_t len = 0;

    hrs_sort_u64(v, n, tmp);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];

        v[i] = x - prev;
        prev = x;
        len += hrr_pb_varint_size(v[i]);
    }
    return len;
}

/* Fills c from exact key (or path key view) k, its values in v (room for
 * 2 * (pairs + records)), tmp as delta_size's. Events that are all leaves
 * have the same self and inclusive values: those are sorted and coded
 * once. */
static void code_values(const struct hra_key *k, uint64_t *v, uint64_t *tmp,
                        struct coded *c)
{
    c->incl = v;
    c->self = v + k->pairs + k->records;
    hra_key_values(k, c->incl, &c->ni, c->self, &c->ns);
    c->self_is_incl = c->ni == c->ns &&
                      memcmp(c->incl, c->self, c->ni * sizeof *v) == 0;
    c->li = delta_size(c->incl, c->ni, tmp);
    if (c->self_is_incl) {
        c->self = c->incl;
        c->ls = c->li;
    } else {
        c->ls = delta_size(c->self, c->ns, tmp);
    }
}

/* The bytes of c's two packed fields (numbers fi and fs). */
static size_t coded_size(const struct coded *c, unsigned fi, unsigned fs)
{
    return (c->ni ? hrr_pb_bytes_size(fi, c->li) : 0) +
           (c->ns ? hrr_pb_bytes_size(fs, c->ls) : 0);
}

static uint8_t *put_values(uint8_t *o, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];

        /* Deltas of sorted times mostly take one or two bytes. */
        if (x < 0x80) {
            *o++ = (uint8_t)x;
        } else if (x < 0x4000) {
            o[0] = (uint8_t)(x | 0x80);
            o[1] = (uint8_t)(x >> 7);
            o += 2;
        } else {
            o = hrp_put_varint(o, x);
        }
    }
    return o;
}

/* Writes c's two packed fields (numbers fi and fs) at o; self's bytes are
 * a copy of incl's when they are the same values. */
static uint8_t *put_coded(uint8_t *o, const struct coded *c, unsigned fi,
                          unsigned fs)
{
    const uint8_t *ib = NULL;

    if (c->ni) {
        o = hrr_pb_len(o, fi, c->li);
        ib = o;
        o = put_values(o, c->incl, c->ni);
    }
    if (c->ns) {
        o = hrr_pb_len(o, fs, c->ls);
        if (c->self_is_incl) {
            memcpy(o, ib, c->ls);
            o += c->ls;
        } else {
            o = put_values(o, c->self, c->ns);
        }
    }
    return o;
}

/*
 * A field of a record, in the order it is written: a varint (nothing for
 * 0), a proto3 string (nothing when empty) or bytes (always written).
 * hrr_runput_key sizes a record and writes it from one table of these, so
 * the size and the bytes cannot drift apart.
 */
enum field_kind { FIELD_VARINT, FIELD_STRING, FIELD_BYTES };
struct field {
    unsigned num;
    enum field_kind kind;
    uint64_t v;      /* FIELD_VARINT */
    const char *s;   /* FIELD_STRING, FIELD_BYTES */
};

#define VARINT(num, v) { (num), FIELD_VARINT, (v), NULL }
#define STRING(num, s) { (num), FIELD_STRING, 0, (s) }

static size_t fields_size(const struct field *f, size_t n)
{
    size_t size = 0;

    for (size_t i = 0; i < n; i++) {
        switch (f[i].kind) {
        case FIELD_VARINT:
            size += hrr_pb_field_size(f[i].num, f[i].v);
            break;
        case FIELD_STRING:
            size += hrr_pb_string_size(f[i].num, f[i].s);
            break;
        case FIELD_BYTES:
            size += hrr_pb_bytes_size(f[i].num, strlen(f[i].s));
            break;
        }
    }
    return size;
}

static uint8_t *fields_put(uint8_t *o, const struct field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (f[i].kind) {
        case FIELD_VARINT:
            o = hrr_pb_field(o, f[i].num, f[i].v);
            break;
        case FIELD_STRING:
            o = hrr_pb_string(o, f[i].num, f[i].s);
            break;
        case FIELD_BYTES:
            o = hrr_pb_bytes(o, f[i].num, f[i].s, strlen(f[i].s));
            break;
        }
    }
    return o;
}

/*
 * The counters (keyfields.h) of key k numbered above lo and below hi as
 * fields into f, in the table's order; path: a path key's RunPath fields
 * (else its RunKey's). Returns their number.
 */
static inline size_t counters(const struct hra_key *k, int path,
                              unsigned lo, unsigned hi, struct field *f)
{
    size_t n = 0;

#define COUNTER(name, runkey, runpath, merge, row)                          \
    do {                                                                    \
        unsigned num = path ? (unsigned)HRA_KF_PATHNUM(runpath) : runkey;  \
        if (num > lo && num < hi)                                           \
            f[n++] = (struct field)VARINT(num, k->name);                    \
    } while (0);
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return n;
}

/* The most fields of a RunPath's head: its names and counters. */
#define PATH_HEAD_MAX (HRA_MAX_DEPTH_LIMIT + HRA_KEY_NCOUNTERS)

/* The fields of the RunPath of path key view p before its values, into
 * f[0..PATH_HEAD_MAX). Returns their number. */
static size_t path_head(struct hra_agg *a, const struct hra_key *p,
                        struct field *f)
{
    const char *names[HRA_MAX_DEPTH_LIMIT];
    uint32_t depth = hra_path_names(a, p->path, names);
    size_t n = 0;

    for (uint32_t i = 0; i < depth; i++)
        f[n++] = (struct field){ HRR_RUNPATH_PATH, FIELD_BYTES, 0, names[i] };
    return n + counters(p, 1, 0, HRR_RUNPATH_INCLUSIVE, f + n);
}

/* The fields of the RunPath of path key view p after its values, into
 * f[0..HRA_KEY_NCOUNTERS). Returns their number. */
static size_t path_tail(const struct hra_key *p, struct field *f)
{
    return counters(p, 1, HRR_RUNPATH_SELF_HIST, UINT_MAX, f);
}

/* The size of the RunPath of path key view p other than its values. */
static size_t path_head_size(struct hra_agg *a, const struct hra_key *p)
{
    struct field f[PATH_HEAD_MAX], t[HRA_KEY_NCOUNTERS];
    size_t n = path_head(a, p, f), nt = path_tail(p, t);

    return fields_size(f, n) + fields_size(t, nt);
}

void hrr_runput_tmp_fini(struct hrr_runput_tmp *t)
{
    free(t->v);
    free(t->paths);
    memset(t, 0, sizeof *t);
}

/* Makes *p hold n elements of size bytes, *cap of them allocated (what it
 * held is not kept: it is scratch, not worth copying). Returns 0 or
 * -ENOMEM. */
static int scratch_room(void **p, size_t *cap, size_t n, size_t size)
{
    size_t c;

    if (n <= *cap)
        return 0;
    c = n > 2 * *cap ? n : 2 * *cap;
    free(*p);
    *cap = 0;
    if ((*p = malloc(c * size)) == NULL)
        return -ENOMEM;
    *cap = c;
    return 0;
}

/* Makes t hold n values and np paths. Returns 0 or -ENOMEM. */
static int tmp_room(struct hrr_runput_tmp *t, size_t n, size_t np)
{
    void *v = t->v, *paths = t->paths;
    int rc = scratch_room(&v, &t->cap, n, sizeof *t->v);

    t->v = v;
    if (rc == 0)
        rc = scratch_room(&paths, &t->pcap, np, sizeof *t->paths);
    t->paths = paths;
    return rc;
}

/* The values hrr_runput_key decodes at once for key k (its values twice,
 * inclusive and self, and each path's but a mirror's) into *need, and the
 * most it sorts at once into *most; *np: its paths. Returns 0, or 1 for a
 * key it does not write. */
static int room_needed(const struct hra_key *k, size_t *need, size_t *most,
                       size_t *np)
{
    size_t all = k->pairs + k->records;

    if (!k->exact)
        return 1;
    *need = 2 * all;
    *most = all;
    *np = 0;
    for (const struct hra_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        struct hra_key view;
        const struct hra_key *p = hra_path_view(k, pp, &view);

        if (!p->exact || (pp->mirror && p->pairs != k->pairs))
            return 1;
        if (!pp->mirror || k->records != 0)
            *need += 2 * (p->pairs + p->records);
        if (p->pairs + p->records > *most)
            *most = p->pairs + p->records;
        (*np)++;
    }
    return 0;
}

size_t hrr_runput_scratch(const struct hra_key *k)
{
    size_t need, most, np;

    if (room_needed(k, &need, &most, &np) != 0)
        return 0;
    return (need + most + 1) * sizeof(uint64_t) +
           (np + 1) * sizeof(struct hrr_runput_path);
}

/*
 * Codes the values of k's paths into t->paths (a mirror takes the key's
 * own, kc), from v on, sorting in sorttmp, and gives each its size.
 * Returns the bytes of the RunKey's paths fields.
 */
static size_t code_paths(struct hra_agg *a, const struct hra_key *k,
                         const struct coded *kc, uint64_t *v,
                         uint64_t *sorttmp, struct hrr_runput_tmp *t)
{
    size_t np = 0, size = 0;

    for (const struct hra_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        struct hrr_runput_path *tp = &t->paths[np++];
        struct hra_key view;
        const struct hra_key *p = hra_path_view(k, pp, &view);

        /* A mirror holds its range key's very events (its only path, no
         * record): the key's coded values. */
        tp->same = pp->mirror && k->records == 0 && kc->ni == k->pairs &&
                   kc->ns == k->pairs;
        if (tp->same) {
            tp->c = *kc;
        } else {
            code_values(p, v, sorttmp, &tp->c);
            v += 2 * (p->pairs + p->records);
        }
        tp->size = path_head_size(a, p) +
                   coded_size(&tp->c, HRR_RUNPATH_INCLUSIVE,
                              HRR_RUNPATH_SELF);
        size += hrr_pb_bytes_size(HRR_RUNKEY_PATHS, tp->size);
    }
    return size;
}

/*
 * Writes k's paths fields at o, as code_paths coded and sized them; a
 * mirror's values are the key's, whose inclusive and self fields start
 * at vals (coded as kc). Returns the end of what it wrote.
 */
static uint8_t *put_paths(uint8_t *o, struct hra_agg *a,
                          const struct hra_key *k, const struct coded *kc,
                          const uint8_t *vals,
                          const struct hrr_runput_tmp *t)
{
    size_t np = 0;

    for (const struct hra_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        const struct hrr_runput_path *tp = &t->paths[np++];
        struct hra_key view;
        const struct hra_key *p = hra_path_view(k, pp, &view);
        struct field f[PATH_HEAD_MAX], pt[HRA_KEY_NCOUNTERS];
        size_t nf = path_head(a, p, f), npt = path_tail(p, pt);

        o = hrr_pb_len(o, HRR_RUNKEY_PATHS, tp->size);
        o = fields_put(o, f, nf);
        if (tp->same) {
            /* The key's inclusive and self fields as the path's: the
             * same bytes past their tags. */
            const uint8_t *src = vals;

            if (kc->ni) {
                src += hrr_pb_bytes_size(HRR_RUNKEY_INCLUSIVE, kc->li) -
                       kc->li;
                o = hrr_pb_bytes(o, HRR_RUNPATH_INCLUSIVE, src, kc->li);
                src += kc->li;
            }
            if (kc->ns) {
                src += hrr_pb_bytes_size(HRR_RUNKEY_SELF, kc->ls) - kc->ls;
                o = hrr_pb_bytes(o, HRR_RUNPATH_SELF, src, kc->ls);
            }
        } else {
            o = put_coded(o, &tp->c, HRR_RUNPATH_INCLUSIVE,
                          HRR_RUNPATH_SELF);
        }
        o = fields_put(o, pt, npt);
    }
    return o;
}

int hrr_runput_key(struct hra_agg *a, const struct hra_key *k,
                   unsigned field, struct hrr_pbuf *out,
                   struct hrr_runput_tmp *t)
{
    /* The RunKey's fields before its values, after them, and after its
     * paths (counters numbered above them). */
    struct field head[7 + HRA_KEY_NCOUNTERS] = {
        STRING(HRR_RUNKEY_NODE_ID, hra_str_get(a, k->node)),
        STRING(HRR_RUNKEY_OPERATOR, hra_str_get(a, k->op)),
        STRING(HRR_RUNKEY_BACKEND, hra_str_get(a, k->backend)),
        VARINT(HRR_RUNKEY_PHASE, k->phase),
        STRING(HRR_RUNKEY_RANGE, hra_str_get(a, k->range)),
        VARINT(HRR_RUNKEY_NODE_RANK, a->str.rank[k->node - 1]),
        VARINT(HRR_RUNKEY_RANGE_RANK, a->str.rank[k->range - 1]),
    };
    struct field tail[HRA_KEY_NCOUNTERS], end[HRA_KEY_NCOUNTERS] = { 0 };
    const size_t nhead = 7 + counters(k, 0, 0, HRR_RUNKEY_INCLUSIVE,
                                      head + 7);
    const size_t ntail = counters(k, 0, HRR_RUNKEY_SELF_HIST,
                                  HRR_RUNKEY_PATHS, tail);
    const size_t nend = counters(k, 0, HRR_RUNKEY_PATHS, UINT_MAX, end);
    size_t all = k->pairs + k->records, need, most, np, size;
    uint64_t *sorttmp;
    struct coded kc;
    uint8_t *o, *key_at, *vals;

    /* Room: the key's values twice (inclusive and self) and each path's
     * but a mirror's, and the sort's for the most values sorted at once. */
    if (room_needed(k, &need, &most, &np) != 0)
        return 1;
    if (tmp_room(t, need + most + 1, np + 1) != 0)
        return -ENOMEM;
    sorttmp = t->v + need;
    code_values(k, t->v, sorttmp, &kc);
    size = fields_size(head, nhead) +
           coded_size(&kc, HRR_RUNKEY_INCLUSIVE, HRR_RUNKEY_SELF) +
           fields_size(tail, ntail) + fields_size(end, nend) +
           code_paths(a, k, &kc, t->v + 2 * all, sorttmp, t);
    if (hrr_pbuf_room(out, size + (field ? hrr_pb_bytes_size(field, size)
                                          : 0)) != 0)
        return -ENOMEM;
    o = out->p + out->len;
    if (field)
        o = hrr_pb_len(o, field, size);
    key_at = o;
    o = fields_put(o, head, nhead);
    vals = o; /* where the key's values start, for its mirror's copy */
    o = put_coded(o, &kc, HRR_RUNKEY_INCLUSIVE, HRR_RUNKEY_SELF);
    o = fields_put(o, tail, ntail);
    o = put_paths(o, a, k, &kc, vals, t);
    o = fields_put(o, end, nend);
    assert((size_t)(o - key_at) == size);
    out->len = (size_t)(o - out->p);
    return 0;
}
