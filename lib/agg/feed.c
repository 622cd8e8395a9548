/*
 * Feeding a decoded batch into the aggregation (agg.h, hra_feed): its
 * names interned, the key and path key of each (label set, context) pair
 * found once per batch, the calling path of each context, and its samples
 * added to both (a path key that mirrors its range key takes nothing of
 * its own). The batch is valid: the daemon's ingest checked it.
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct hra_feed {
    struct hra_agg *a;
    /* The key of each (label set, context) pair of the batch being fed,
     * when there are few enough pairs, and likewise its path key. */
    struct hra_key **kmap;
    struct hra_key **pkmap;
    size_t kmap_cap;
    /* The path of each context of the batch. */
    uint32_t *ctx_path;
    size_t ctx_path_cap;
    /* The string ids of the last batch's label sets (struct names). */
    uint32_t *node, *op, *backend;
};

/* Interned strings of a batch's labels and ranges, and the range of each
 * of its contexts (string ids). */
struct names {
    uint32_t *node, *op, *backend, *range, *ctx_range;
    unsigned clock_path; /* the batch's HRP_PATH_* bit, 0: not known */
};

static int names_intern(struct hra_agg *a, const Hostrange__Batch *b,
                        struct names *n)
{
    n->node = calloc(b->n_labels + 1, sizeof *n->node);
    n->op = calloc(b->n_labels + 1, sizeof *n->op);
    n->backend = calloc(b->n_labels + 1, sizeof *n->backend);
    n->range = calloc(b->n_ranges + 1, sizeof *n->range);
    n->ctx_range = calloc(b->n_context_range + 1, sizeof *n->ctx_range);
    if (n->node == NULL || n->op == NULL || n->backend == NULL ||
        n->range == NULL || n->ctx_range == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < b->n_ranges; i++) {
        if ((n->range[i] = hra_str(a, b->ranges[i])) == 0)
            return -ENOMEM;
        hra_rank_range(a, n->range[i]);
    }
    for (size_t i = 0; i < b->n_context_range; i++)
        n->ctx_range[i] = n->range[b->context_range[i]];
    for (size_t i = 0; i < b->n_labels; i++) {
        const Hostrange__LabelSet *l = b->labels[i];
        if ((n->node[i] = hra_str(a, l->node_id)) == 0 ||
            (n->op[i] = hra_str(a, l->operator_)) == 0 ||
            (n->backend[i] = hra_str(a, l->backend)) == 0)
            return -ENOMEM;
    }
    return 0;
}

/*
 * The keys of a batch's (label, context) pairs, found once per pair:
 * samples of nested ranges interleave, so consecutive samples rarely share
 * a key. A direct table when the batch has few enough pairs (as batches
 * do), else a small direct-mapped cache.
 */
#define KMAP_MAX 65536u
#define KCACHE 256u

struct keys {
    struct hra_key **map;     /* label * n_contexts + context, or NULL */
    struct hra_key **pmap;    /* the same for path keys, or NULL */
    uint32_t *path;           /* context -> path id (below) */
    uint32_t label[KCACHE], ctx[KCACHE];
    struct hra_key *cache[KCACHE];
};

/* The path of a context not yet looked up, and of one whose path the path
 * table had no room for (besides HRA_PATH_TOO_DEEP). */
#define PATH_UNKNOWN (UINT32_MAX - 2)
#define PATH_FULL (UINT32_MAX - 1)
/* Ancestors climbed at most to find a context's path: beyond any depth
 * cap, so a context this far from any known one is too deep. */
#define PATH_CLIMB (HRA_MAX_DEPTH_LIMIT + 1)

/*
 * The path id of context c of a valid batch (interned on first use, so
 * that contexts of records only take no room), HRA_PATH_TOO_DEEP or
 * PATH_FULL. Climbs iteratively: a hostile batch may chain any number of
 * contexts.
 */
static uint32_t ctx_path(struct hra_agg *a, const Hostrange__Batch *b,
                         const struct names *n, uint32_t *path, uint32_t c)
{
    uint32_t chain[PATH_CLIMB], d = 0, x = c, base = 0;
    int root = 0;

    if (path[c] != PATH_UNKNOWN)
        return path[c];
    while (d < PATH_CLIMB && path[x] == PATH_UNKNOWN) {
        chain[d++] = x;
        if (b->context_parent[x] == 0) {
            root = 1;
            break;
        }
        x = b->context_parent[x] - 1;
    }
    if (!root && path[x] == PATH_UNKNOWN)
        return path[c] = HRA_PATH_TOO_DEEP;
    if (!root)
        base = path[x];
    while (d-- > 0) {
        uint32_t id;

        if (base == HRA_PATH_TOO_DEEP || base == PATH_FULL)
            id = base;
        else if ((id = hra_path(a, base, n->ctx_range[chain[d]])) == 0)
            id = PATH_FULL;
        path[chain[d]] = id;
        base = id;
    }
    return path[c];
}

/* The path key of a sample of (label l, context c) whose range key is k;
 * NULL when the context's path is not kept (counted) or on ENOMEM (*nomem
 * set). */
static struct hra_key *path_key_of(struct hra_agg *a,
                                   const Hostrange__Batch *b,
                                   const struct names *n, struct keys *ks,
                                   struct hra_key *k, uint32_t l, uint32_t c,
                                   struct hra_fed *out, int *nomem)
{
    struct hra_key **m = NULL, *pk;
    uint32_t path;

    if (ks->pmap != NULL) {
        m = &ks->pmap[(size_t)l * b->n_context_range + c];
        if (*m != NULL)
            return *m;
    }
    path = ctx_path(a, b, n, ks->path, c);
    if (path == HRA_PATH_TOO_DEEP) {
        a->paths_too_deep++;
        out->too_deep++;
        return NULL;
    }
    if (path == PATH_FULL) {
        a->paths_table_full++;
        out->table_full++;
        return NULL;
    }
    pk = hra_path_key_live(a, k, path);
    if (pk == NULL)
        *nomem = 1;
    else if (m != NULL)
        *m = pk;
    return pk;
}

static struct hra_key *find_key(struct hra_agg *a, const Hostrange__Batch *b,
                                const struct names *n, uint32_t l, uint32_t c)
{
    struct hra_key *k;

    /* Nodes are ranked in the order their samples arrive. */
    hra_rank_node(a, n->node[l]);
    k = hra_agg_key(a, n->node[l], n->op[l], n->backend[l],
                    b->labels[l]->phase, n->ctx_range[c]);
    if (k != NULL)
        k->clock_paths |= (uint8_t)n->clock_path;
    return k;
}

static inline struct hra_key *key_of(struct hra_agg *a,
                                     const Hostrange__Batch *b,
                                     const struct names *n, struct keys *ks,
                                     uint32_t l, uint32_t c)
{
    struct hra_key *k;
    uint32_t slot;

    if (ks->map != NULL) {
        struct hra_key **m = &ks->map[(size_t)l * b->n_context_range + c];
        if (*m == NULL)
            *m = find_key(a, b, n, l, c);
        return *m;
    }
    slot = (l * 31u + c) & (KCACHE - 1);
    if (ks->cache[slot] != NULL && ks->label[slot] == l && ks->ctx[slot] == c)
        return ks->cache[slot];
    k = find_key(a, b, n, l, c);
    if (k != NULL) {
        ks->label[slot] = l;
        ks->ctx[slot] = c;
        ks->cache[slot] = k;
    }
    return k;
}

/* Sets up the key table of a batch in the feed's scratch. */
static void keys_init(struct hra_feed *in, const Hostrange__Batch *b,
                      struct keys *ks)
{
    size_t pairs = b->n_labels * b->n_context_range;

    memset(ks->cache, 0, sizeof ks->cache);
    ks->map = NULL;
    ks->pmap = NULL;
    if (pairs > KMAP_MAX)
        return;
    if (pairs > in->kmap_cap) {
        struct hra_key **m = realloc(in->kmap, pairs * sizeof *m);
        if (m == NULL)
            return;
        in->kmap = m;
        m = realloc(in->pkmap, pairs * sizeof *m);
        if (m == NULL)
            return;
        in->pkmap = m;
        in->kmap_cap = pairs;
    }
    if (pairs > 0) {
        memset(in->kmap, 0, pairs * sizeof *in->kmap);
        memset(in->pkmap, 0, pairs * sizeof *in->pkmap);
    }
    ks->map = in->kmap;
    ks->pmap = in->pkmap;
}

/* Sets up the paths of a batch's contexts (all unknown) in the feed's
 * scratch. Returns 0 or -ENOMEM. */
static int paths_init(struct hra_feed *in, const Hostrange__Batch *b,
                      struct keys *ks)
{
    size_t nc = b->n_context_range;

    if (nc + 1 > in->ctx_path_cap) {
        uint32_t *p = realloc(in->ctx_path, (nc + 1) * sizeof *p);
        if (p == NULL)
            return -ENOMEM;
        in->ctx_path = p;
        in->ctx_path_cap = nc + 1;
    }
    for (size_t i = 0; i < nc; i++)
        in->ctx_path[i] = PATH_UNKNOWN;
    ks->path = in->ctx_path;
    return 0;
}

/* Aggregates the sample stream of a valid batch, counting in *out.
 * Returns 0 or -ENOMEM. */
static int apply_stream(struct hra_agg *a, const Hostrange__Batch *b,
                        const struct names *n, struct keys *ks,
                        struct hra_fed *out)
{
    const uint8_t *p = b->samples.data;
    /* An empty stream may have no buffer: NULL + 0 is not C. */
    const uint8_t *end = p != NULL ? p + b->samples.len : p;
    uint32_t label = 0;
    size_t row = 0; /* label * contexts: the label's keys in the maps */
    struct hrp_item it;
    uint64_t pairs = 0, records = 0;
    int nomem = 0, rc = 0;

    while (p < end) {
        struct hra_key *k, *pk;

        /* The common item first: a leaf whose tag and time take a byte
         * each, of a (label, context) pair whose range and path keys the
         * batch has found; the same as the general case below. */
        if (ks->map != NULL && end - p >= 2 &&
            (p[0] & HRP_LEAF_BYTE_MASK) == HRP_ITEM_LEAF && p[1] < 0x80 &&
            (k = ks->map[row + (p[0] >> 2)]) != NULL &&
            (pk = ks->pmap[row + (p[0] >> 2)]) != NULL) {
            uint64_t incl = p[1];

            if (hra__add(a, k, incl, incl) != 0 ||
                (!pk->mirror && hra_path_add(a, pk, incl, incl) != 0))
                goto nomem;
            pairs++;
            p += 2;
            continue;
        }
        /* The same with a time of two bytes (128 ns to 16 us). */
        if (ks->map != NULL && end - p >= 3 &&
            (p[0] & HRP_LEAF_BYTE_MASK) == HRP_ITEM_LEAF && p[1] >= 0x80 &&
            p[2] < 0x80 && (k = ks->map[row + (p[0] >> 2)]) != NULL &&
            (pk = ks->pmap[row + (p[0] >> 2)]) != NULL) {
            uint64_t incl = (uint64_t)(p[1] & 0x7f) | (uint64_t)p[2] << 7;

            if (hra__add(a, k, incl, incl) != 0 ||
                (!pk->mirror && hra_path_add(a, pk, incl, incl) != 0))
                goto nomem;
            pairs++;
            p += 3;
            continue;
        }
        if (hrp_item_next(&p, end, &it) != 0) {
            rc = -EINVAL; /* validated: never */
            break;
        }
        if (it.kind == HRP_ITEM_LABEL) {
            label = (uint32_t)it.index;
            row = (size_t)label * b->n_context_range;
            continue;
        }
        k = key_of(a, b, n, ks, label, (uint32_t)it.index);
        if (k == NULL)
            goto nomem;
        if (it.kind == HRP_ITEM_RECORD) {
            if (hra_add_record(a, k, it.incl) != 0)
                goto nomem;
            records++;
            continue;
        }
        /* The same sample in its calling context's population: found
         * first, so that a sample kept without a path parts the key from
         * its mirror before it is added. */
        pk = path_key_of(a, b, n, ks, k, label, (uint32_t)it.index, out,
                         &nomem);
        if (pk == NULL &&
            (nomem || hra_path_unmirror(a, k) != 0))
            goto nomem;
        if (hra__add(a, k, it.incl, it.incl - it.child) != 0)
            goto nomem;
        if (it.kind == HRP_ITEM_PARENT) {
            k->children += it.nchild;
            k->descendants += it.nchild + it.extra;
        }
        if (pk != NULL && !pk->mirror) {
            if (hra_path_add(a, pk, it.incl, it.incl - it.child) != 0)
                goto nomem;
            pk->children += it.nchild;
            pk->descendants += it.nchild + it.extra;
        }
        pairs++;
    }
    out->pairs = pairs;
    out->records = records;
    return rc;
nomem:
    out->pairs = pairs;
    out->records = records;
    return -ENOMEM;
}

struct hra_feed *hra_feed_new(struct hra_agg *a)
{
    struct hra_feed *f = calloc(1, sizeof *f);

    if (f != NULL)
        f->a = a;
    return f;
}

/* Frees the string ids of the last batch's label sets. */
static void feed_labels_free(struct hra_feed *f)
{
    free(f->node);
    free(f->op);
    free(f->backend);
    f->node = f->op = f->backend = NULL;
}

void hra_feed_free(struct hra_feed *f)
{
    if (f == NULL)
        return;
    feed_labels_free(f);
    free(f->kmap);
    free(f->pkmap);
    free(f->ctx_path);
    free(f);
}

int hra_feed(struct hra_feed *f, const Hostrange__Batch *b,
                 struct hra_fed *out)
{
    struct hra_agg *a = f->a;
    struct names n = { 0 };
    struct keys *ks = NULL;
    int rc = -ENOMEM;

    memset(out, 0, sizeof *out);
    feed_labels_free(f);
    ks = malloc(sizeof *ks);
    if (ks == NULL || names_intern(a, b, &n) != 0)
        goto out;
    n.clock_path = (unsigned)hrp_clock_path_bit(b->clock_path,
                                                b->clock_order);
    keys_init(f, b, ks);
    if (paths_init(f, b, ks) != 0 ||
        apply_stream(a, b, &n, ks, out) != 0)
        goto out;
    for (size_t i = 0; i < b->n_internal_label; i++) {
        uint32_t l = b->internal_label[i];
        hra_internal_add(a, n.node[l], b->stall_count[i], b->stall_ns[i],
                             b->wake_count[i], b->wake_ns[i]);
    }
    rc = 0;
out:
    /* The label sets' ids stay for the caller (its lost counts). */
    f->node = n.node;
    f->op = n.op;
    f->backend = n.backend;
    out->node = n.node;
    out->op = n.op;
    out->backend = n.backend;
    free(n.range);
    free(n.ctx_range);
    free(ks);
    hra_enforce(a);
    return rc;
}
