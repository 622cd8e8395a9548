/* Joining one key's records of several run files (see runjoin.h). */
#include "config.h"

#include "lib/run/runjoin.h"
#include "lib/agg/agg.h"
#include "lib/run/pbuf.h"
#include "lib/run/runfields.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A sorted, delta-coded array being read: the value read last, and how
 * many are left (its bytes were checked: simple keys). */
struct arr {
    const uint8_t *p;
    uint64_t v, left;
};

static inline uint64_t get_delta(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;

    for (unsigned sh = 0;; sh += 7) {
        uint8_t b = *p++;

        x |= (uint64_t)(b & 0x7f) << sh;
        if (b < 0x80)
            break;
    }
    *pp = p;
    return x;
}

/* Moves a to its next value. */
static inline void arr_next(struct arr *a)
{
    a->v += get_delta(&a->p);
    a->left--;
}

/* Restores the heap order (least value first) below position i. */
static void sift(struct arr **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        struct arr *t;

        if (l < n && h[l]->v < h[m]->v)
            m = l;
        if (l + 1 < n && h[l + 1]->v < h[m]->v)
            m = l + 1;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Merges two sorted arrays (their first values read, `total` values in
 * all; b none when b_live is 0) into tmp, delta-coded: the common case,
 * without a heap. */
static int merge2(struct hrr_pbuf *tmp, struct arr *a, struct arr *b,
                  int b_live, uint64_t total)
{
    uint64_t prev = 0;
    int a_live = 1;

    for (uint64_t t = 0; t < total;) {
        uint64_t chunk = total - t < 4096 ? total - t : 4096;

        if (hrr_pbuf_room(tmp, 10 * (size_t)chunk) != 0)
            return -ENOMEM;
        for (uint64_t c = 0; c < chunk; c++) {
            int take_a = !b_live || (a_live && a->v <= b->v);
            struct arr *m = take_a ? a : b;

            tmp->len = (size_t)(hrp_put_varint(tmp->p + tmp->len,
                                               m->v - prev) - tmp->p);
            prev = m->v;
            if (m->left == 0) {
                if (take_a)
                    a_live = 0;
                else
                    b_live = 0;
            } else {
                arr_next(m);
            }
        }
        t += chunk;
    }
    return 0;
}

/*
 * Merges the sorted arrays a[0..n) (each with its count in left, unread)
 * into field `field` of b, delta-coded again; nothing when they are all
 * empty. Returns 0 or -ENOMEM.
 */
static int merge_into(struct hrr_pbuf *b, unsigned field,
                      struct arr *a, size_t n, struct hrr_pbuf *tmp)
{
    struct arr **h = malloc((n + 1) * sizeof *h);
    uint64_t total = 0, prev = 0;
    size_t live = 0;
    int rc = 0;

    if (h == NULL)
        return -ENOMEM;
    tmp->len = 0;
    for (size_t i = 0; i < n; i++) {
        total += a[i].left;
        if (a[i].left > 0) {
            arr_next(&a[i]);
            h[live++] = &a[i];
        }
    }
    if (live <= 2) {
        /* One array: its values coded again (minimally, as a save
         * does). */
        if (live > 0)
            rc = merge2(tmp, h[0], live == 2 ? h[1] : h[0], live == 2,
                        total);
        live = 0;
    }
    for (size_t i = live / 2; i-- > 0;)
        sift(h, live, i);
    while (live > 0) {
        struct arr *m = h[0];

        /* Room for the values of this array up to the next one's (at
         * most 10 bytes each), in one check. */
        if (hrr_pbuf_room(tmp, 10 * (size_t)(m->left < 4096 ? m->left + 1
                                                             : 4096)) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        for (size_t k = 0; k < 4096; k++) {
            tmp->len = (size_t)(hrp_put_varint(tmp->p + tmp->len,
                                               m->v - prev) - tmp->p);
            prev = m->v;
            if (m->left == 0) {
                h[0] = h[--live];
                break;
            }
            arr_next(m);
            if (live > 1 && (m->v > h[1]->v ||
                             (live > 2 && m->v > h[2]->v)))
                break;
        }
        sift(h, live, 0);
    }
    if (rc == 0 && total > 0)
        rc = hrr_pbuf_put_bytes(b, field, tmp->p, tmp->len);
out:
    free(h);
    return rc;
}

/* One path of the joined key: where its records hold it. */
struct jpath {
    uint32_t id;
    uint32_t first;       /* the input that has it first */
    uint32_t at;          /* and its index there */
};

/* Joins the counts *src into *dst (lib/agg/keyfields.h: a count of
 * values adds up as the values join). */
static inline void counters_join(struct hrr_runscan_values *dst,
                                 const struct hrr_runscan_values *src)
{
#define COUNTER(name, runkey, runpath, merge, row) \
    dst->name = HRA_KF_MERGE(merge, dst->name, src->name);
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
}

/* Appends the counters of *c numbered above lo and below hi to pb, in the
 * table's order; path: as RunPath fields (else RunKey's). Returns 0 or
 * -ENOMEM. */
static inline int put_counters(struct hrr_pbuf *pb,
                               const struct hrr_runscan_values *c, int path,
                               unsigned lo, unsigned hi)
{
#define COUNTER(name, runkey, runpath, merge, row)                          \
    do {                                                                    \
        unsigned num = path ? (unsigned)HRA_KF_PATHNUM(runpath) : runkey;  \
        if (num > lo && num < hi &&                                         \
            hrr_pbuf_put_field(pb, num, c->name) != 0)                      \
            return -ENOMEM;                                                 \
    } while (0);
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    return 0;
}

/* Writes joined path `id` (first held by input in[first], path at) of
 * in[0..n) into out as a RunKey's paths field. */
static int put_path(const struct hrr_runjoin_in *in, size_t n,
                    const struct jpath *jp, struct hrr_pbuf *out,
                    struct hrr_pbuf *pb, struct hrr_pbuf *tmp,
                    struct arr *ai, struct arr *as,
                    const struct hrr_pbuf *kv)
{
    int same = 1;
    const uint8_t *names[HRA_MAX_DEPTH_LIMIT];
    uint32_t lens[HRA_MAX_DEPTH_LIMIT];
    struct hrr_runscan_values c = { 0 };
    uint32_t depth = hrr_runscan_path_names(&in[jp->first].s, jp->at, names,
                                            lens);
    size_t na = 0;

    pb->len = 0;
    for (uint32_t d = 0; d < depth; d++) {
        if (hrr_pbuf_put_bytes(pb, HRR_RUNPATH_PATH, names[d], lens[d]) != 0)
            return -ENOMEM;
    }
    for (size_t i = jp->first; i < n; i++) {
        for (uint32_t j = 0; j < in[i].s.npaths; j++) {
            struct hrr_runscan_values v;

            if (in[i].path_id[j] != jp->id)
                continue;
            hrr_runscan_path_values(&in[i].s, j, &v);
            same &= in[i].s.records == 0 && v.pairs == in[i].s.pairs &&
                    v.li == in[i].s.v.li && v.ls == in[i].s.v.ls &&
                    (v.li == 0 || !memcmp(v.incl, in[i].s.v.incl, v.li)) &&
                    (v.ls == 0 || !memcmp(v.self, in[i].s.v.self, v.ls));
            counters_join(&c, &v);
            ai[na] = (struct arr){ v.incl, 0, v.pairs };
            as[na++] = (struct arr){ v.self, 0, v.pairs };
        }
    }
    /* A path of every record holding its key's very values (the key's
     * one context) has the key's joined values. */
    same &= na == n;
    if (put_counters(pb, &c, 1, 0, HRR_RUNPATH_INCLUSIVE) != 0)
        return -ENOMEM;
    if (same ? (c.pairs > 0 &&
                (hrr_pbuf_put_bytes(pb, HRR_RUNPATH_INCLUSIVE, kv[0].p,
                                    kv[0].len) != 0 ||
                 hrr_pbuf_put_bytes(pb, HRR_RUNPATH_SELF, kv[1].p,
                                    kv[1].len) != 0))
             : (merge_into(pb, HRR_RUNPATH_INCLUSIVE, ai, na, tmp) != 0 ||
                merge_into(pb, HRR_RUNPATH_SELF, as, na, tmp) != 0))
        return -ENOMEM;
    if (put_counters(pb, &c, 1, HRR_RUNPATH_SELF_HIST, UINT_MAX) != 0)
        return -ENOMEM;
    return hrr_pbuf_put_bytes(out, HRR_RUNKEY_PATHS, pb->p, pb->len);
}

int hrr_runjoin(const struct hrr_runjoin_in *in, size_t n,
                uint32_t node_rank, uint32_t range_rank,
                struct hrr_pbuf *out)
{
    const struct hrr_runscan *s0 = &in[0].s;
    struct hrr_pbuf tmp = { NULL, 0, 0 }, pb = { NULL, 0, 0 };
    struct hrr_pbuf kv[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
    struct hrr_runscan_values c = { 0 };
    struct arr *ai = calloc(n * HRR_RUNSCAN_PATHS + 1, sizeof *ai);
    struct arr *as = calloc(n * HRR_RUNSCAN_PATHS + 1, sizeof *as);
    struct jpath *jp = calloc(n * HRR_RUNSCAN_PATHS + 1, sizeof *jp);
    size_t njp = 0;
    int rc = -ENOMEM;

    out->len = 0;
    if (ai == NULL || as == NULL || jp == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct hrr_runscan *s = &in[i].s;

        counters_join(&c, &s->v);
        ai[i] = (struct arr){ s->v.incl, 0, s->pairs + s->records };
        as[i] = (struct arr){ s->v.self, 0, s->pairs };
        for (uint32_t j = 0; j < s->npaths; j++) {
            size_t k;

            for (k = 0; k < njp && jp[k].id != in[i].path_id[j]; k++)
                ;
            if (k == njp)
                jp[njp++] = (struct jpath){ in[i].path_id[j], (uint32_t)i,
                                            j };
        }
    }
    if (hrr_pbuf_put_bytes(out, HRR_RUNKEY_NODE_ID, s0->s[0],
                           s0->n[0]) != 0 ||
        hrr_pbuf_put_bytes(out, HRR_RUNKEY_OPERATOR, s0->s[1],
                           s0->n[1]) != 0 ||
        hrr_pbuf_put_bytes(out, HRR_RUNKEY_BACKEND, s0->s[2],
                           s0->n[2]) != 0 ||
        hrr_pbuf_put_field(out, HRR_RUNKEY_PHASE, s0->phase) != 0 ||
        hrr_pbuf_put_bytes(out, HRR_RUNKEY_RANGE, s0->s[3], s0->n[3]) != 0 ||
        hrr_pbuf_put_field(out, HRR_RUNKEY_NODE_RANK, node_rank) != 0 ||
        hrr_pbuf_put_field(out, HRR_RUNKEY_RANGE_RANK, range_rank) != 0 ||
        put_counters(out, &c, 0, 0, HRR_RUNKEY_INCLUSIVE) != 0 ||
        merge_into(out, HRR_RUNKEY_INCLUSIVE, ai, n, &kv[0]) != 0 ||
        merge_into(out, HRR_RUNKEY_SELF, as, n, &kv[1]) != 0 ||
        put_counters(out, &c, 0, HRR_RUNKEY_SELF_HIST,
                     HRR_RUNKEY_PATHS) != 0)
        goto out;
    for (size_t k = 0; k < njp; k++) {
        if (put_path(in, n, &jp[k], out, &pb, &tmp, ai, as, kv) != 0)
            goto out;
    }
    if (put_counters(out, &c, 0, HRR_RUNKEY_PATHS, UINT_MAX) != 0)
        goto out;
    rc = 0;
out:
    free(tmp.p);
    free(pb.p);
    free(kv[0].p);
    free(kv[1].p);
    free(ai);
    free(as);
    free(jp);
    return rc;
}
