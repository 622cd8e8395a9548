/* Exact keys of run format 1 written by hand (see runput.h). */
#include "config.h"

#include "lib/run/runput.h"
#include "lib/run/runfields.h"
#include "lib/stat/summary.h"

#include <assert.h>
#include <errno.h>
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
struct hrd_runput_path {
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

    hrd_sort_u64(v, n, tmp);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];

        v[i] = x - prev;
        prev = x;
        len += hrd_pb_varint_size(v[i]);
    }
    return len;
}

/* Fills c from exact key (or path key view) k, its values in v (room for
 * 2 * (pairs + records)), tmp as delta_size's. Events that are all leaves
 * have the same self and inclusive values: those are sorted and coded
 * once. */
static void code_values(const struct hrd_key *k, uint64_t *v, uint64_t *tmp,
                        struct coded *c)
{
    c->incl = v;
    c->self = v + k->pairs + k->records;
    hrd_agg_key_values(k, c->incl, &c->ni, c->self, &c->ns);
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
    return (c->ni ? hrd_pb_bytes_size(fi, c->li) : 0) +
           (c->ns ? hrd_pb_bytes_size(fs, c->ls) : 0);
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
        o = hrd_pb_len(o, fi, c->li);
        ib = o;
        o = put_values(o, c->incl, c->ni);
    }
    if (c->ns) {
        o = hrd_pb_len(o, fs, c->ls);
        if (c->self_is_incl) {
            memcpy(o, ib, c->ls);
            o += c->ls;
        } else {
            o = put_values(o, c->self, c->ns);
        }
    }
    return o;
}

/* The size of the RunPath of path key view p other than its values. */
static size_t path_head_size(struct hrd_agg *a, const struct hrd_key *p)
{
    const char *names[HRD_MAX_DEPTH_LIMIT];
    uint32_t depth = hrd_agg_path_names(a, p->path, names);
    size_t n = hrd_pb_field_size(HRD_RUNPATH_PAIRS, p->pairs) +
               hrd_pb_field_size(HRD_RUNPATH_CHILDREN, p->children) +
               hrd_pb_field_size(HRD_RUNPATH_DESCENDANTS, p->descendants);

    for (uint32_t i = 0; i < depth; i++)
        n += hrd_pb_bytes_size(HRD_RUNPATH_PATH, strlen(names[i]));
    return n;
}

void hrd_runput_tmp_fini(struct hrd_runput_tmp *t)
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
static int tmp_room(struct hrd_runput_tmp *t, size_t n, size_t np)
{
    void *v = t->v, *paths = t->paths;
    int rc = scratch_room(&v, &t->cap, n, sizeof *t->v);

    t->v = v;
    if (rc == 0)
        rc = scratch_room(&paths, &t->pcap, np, sizeof *t->paths);
    t->paths = paths;
    return rc;
}

/* The values hrd_runput_key decodes at once for key k (its values twice,
 * inclusive and self, and each path's but a mirror's) into *need, and the
 * most it sorts at once into *most; *np: its paths. Returns 0, or 1 for a
 * key it does not write. */
static int room_needed(const struct hrd_key *k, size_t *need, size_t *most,
                       size_t *np)
{
    size_t all = k->pairs + k->records;

    if (!k->exact)
        return 1;
    *need = 2 * all;
    *most = all;
    *np = 0;
    for (const struct hrd_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        struct hrd_key view;
        const struct hrd_key *p = hrd_agg_path_view(k, pp, &view);

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

size_t hrd_runput_scratch(const struct hrd_key *k)
{
    size_t need, most, np;

    if (room_needed(k, &need, &most, &np) != 0)
        return 0;
    return (need + most + 1) * sizeof(uint64_t) +
           (np + 1) * sizeof(struct hrd_runput_path);
}

int hrd_runput_key(struct hrd_agg *a, const struct hrd_key *k,
                   unsigned field, struct hrd_pbuf *out,
                   struct hrd_runput_tmp *t)
{
    const char *node = hrd_agg_str_get(a, k->node);
    const char *op = hrd_agg_str_get(a, k->op);
    const char *backend = hrd_agg_str_get(a, k->backend);
    const char *range = hrd_agg_str_get(a, k->range);
    uint32_t node_rank = a->str.rank[k->node - 1];
    uint32_t range_rank = a->str.rank[k->range - 1];
    size_t all = k->pairs + k->records, need, most, np, size;
    uint64_t *v, *sorttmp;
    struct coded kc;
    uint8_t *o, *key_at;

    /* Room: the key's values twice (inclusive and self) and each path's
     * but a mirror's (below), and the sort's for the most values sorted
     * at once. */
    if (room_needed(k, &need, &most, &np) != 0)
        return 1;
    if (tmp_room(t, need + most + 1, np + 1) != 0)
        return -ENOMEM;
    v = t->v;
    sorttmp = v + need;
    code_values(k, v, sorttmp, &kc);
    v += 2 * all;
    size = hrd_pb_string_size(HRD_RUNKEY_NODE_ID, node) +
           hrd_pb_string_size(HRD_RUNKEY_OPERATOR, op) +
           hrd_pb_string_size(HRD_RUNKEY_BACKEND, backend) +
           hrd_pb_field_size(HRD_RUNKEY_PHASE, k->phase) +
           hrd_pb_string_size(HRD_RUNKEY_RANGE, range) +
           hrd_pb_field_size(HRD_RUNKEY_NODE_RANK, node_rank) +
           hrd_pb_field_size(HRD_RUNKEY_RANGE_RANK, range_rank) +
           hrd_pb_field_size(HRD_RUNKEY_PAIRS, k->pairs) +
           hrd_pb_field_size(HRD_RUNKEY_RECORDS, k->records) +
           hrd_pb_field_size(HRD_RUNKEY_CHILDREN, k->children) +
           coded_size(&kc, HRD_RUNKEY_INCLUSIVE, HRD_RUNKEY_SELF) +
           hrd_pb_field_size(HRD_RUNKEY_DESCENDANTS, k->descendants);
    np = 0;
    for (const struct hrd_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        struct hrd_runput_path *tp = &t->paths[np++];
        struct hrd_key view;
        const struct hrd_key *p = hrd_agg_path_view(k, pp, &view);

        /* A mirror holds its range key's very events (its only path, no
         * record): the key's coded values. */
        tp->same = pp->mirror && k->records == 0 && kc.ni == k->pairs &&
                   kc.ns == k->pairs;
        if (tp->same) {
            tp->c = kc;
        } else {
            code_values(p, v, sorttmp, &tp->c);
            v += 2 * (p->pairs + p->records);
        }
        tp->size = path_head_size(a, p) +
                   coded_size(&tp->c, HRD_RUNPATH_INCLUSIVE,
                              HRD_RUNPATH_SELF);
        size += hrd_pb_bytes_size(HRD_RUNKEY_PATHS, tp->size);
    }
    if (hrd_pbuf_room(out, size + (field ? hrd_pb_bytes_size(field, size)
                                          : 0)) != 0)
        return -ENOMEM;
    o = out->p + out->len;
    if (field)
        o = hrd_pb_len(o, field, size);
    key_at = o;
    o = hrd_pb_string(o, HRD_RUNKEY_NODE_ID, node);
    o = hrd_pb_string(o, HRD_RUNKEY_OPERATOR, op);
    o = hrd_pb_string(o, HRD_RUNKEY_BACKEND, backend);
    o = hrd_pb_field(o, HRD_RUNKEY_PHASE, k->phase);
    o = hrd_pb_string(o, HRD_RUNKEY_RANGE, range);
    o = hrd_pb_field(o, HRD_RUNKEY_NODE_RANK, node_rank);
    o = hrd_pb_field(o, HRD_RUNKEY_RANGE_RANK, range_rank);
    o = hrd_pb_field(o, HRD_RUNKEY_PAIRS, k->pairs);
    o = hrd_pb_field(o, HRD_RUNKEY_RECORDS, k->records);
    o = hrd_pb_field(o, HRD_RUNKEY_CHILDREN, k->children);
    {
        /* Where the key's values start, for its mirror's copy. */
        uint8_t *vals = o;

        o = put_coded(o, &kc, HRD_RUNKEY_INCLUSIVE, HRD_RUNKEY_SELF);
        o = hrd_pb_field(o, HRD_RUNKEY_DESCENDANTS, k->descendants);
        np = 0;
        for (const struct hrd_key *pp = k->paths; pp != NULL;
             pp = pp->pnext) {
            const struct hrd_runput_path *tp = &t->paths[np++];
            struct hrd_key view;
            const struct hrd_key *p = hrd_agg_path_view(k, pp, &view);
            const char *names[HRD_MAX_DEPTH_LIMIT];
            uint32_t depth = hrd_agg_path_names(a, p->path, names);

            o = hrd_pb_len(o, HRD_RUNKEY_PATHS, tp->size);
            for (uint32_t i = 0; i < depth; i++)
                o = hrd_pb_bytes(o, HRD_RUNPATH_PATH, names[i],
                                 strlen(names[i]));
            o = hrd_pb_field(o, HRD_RUNPATH_PAIRS, p->pairs);
            o = hrd_pb_field(o, HRD_RUNPATH_CHILDREN, p->children);
            if (tp->same) {
                /* The key's inclusive and self fields as the path's: the
                 * same bytes past their tags. */
                const uint8_t *src = vals;

                if (kc.ni) {
                    src += hrd_pb_bytes_size(HRD_RUNKEY_INCLUSIVE, kc.li) -
                           kc.li;
                    o = hrd_pb_bytes(o, HRD_RUNPATH_INCLUSIVE, src, kc.li);
                    src += kc.li;
                }
                if (kc.ns) {
                    src += hrd_pb_bytes_size(HRD_RUNKEY_SELF, kc.ls) -
                           kc.ls;
                    o = hrd_pb_bytes(o, HRD_RUNPATH_SELF, src, kc.ls);
                }
            } else {
                o = put_coded(o, &tp->c, HRD_RUNPATH_INCLUSIVE,
                              HRD_RUNPATH_SELF);
            }
            o = hrd_pb_field(o, HRD_RUNPATH_DESCENDANTS, p->descendants);
        }
    }
    assert((size_t)(o - key_at) == size);
    out->len = (size_t)(o - out->p);
    return 0;
}
