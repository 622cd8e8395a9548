/* Calling contexts: the path table and the path keys (see agg.h). */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h)
{
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint32_t path_hash(uint32_t parent, uint32_t range)
{
    return (uint32_t)mix(mix(0x9e3779b97f4a7c15ull ^ parent) ^ range);
}

size_t hra_pathtab_bytes(const struct hra_agg *a)
{
    return (size_t)a->path.cap * (2 * sizeof(uint32_t) + 1) +
           (size_t)a->path.slots * sizeof(uint32_t);
}

static uint32_t path_id_hash(const void *ctx, uint32_t id)
{
    const struct hra_pathtab *t = ctx;

    return path_hash(t->parent[id - 1], t->range[id - 1]);
}

static int pathtab_grow(struct hra_agg *a)
{
    struct hra_pathtab *t = &a->path;
    size_t before = hra_pathtab_bytes(a);

    if (t->n == t->cap) {
        /* Three arrays side by side, each resized to the one new room. */
        size_t cap = hru_grow_room(t->cap, (size_t)t->n + 1,
                                   sizeof *t->parent, 64);
        if (cap == 0 || cap > UINT32_MAX ||
            hru_resize(&t->parent, cap, sizeof *t->parent) != 0 ||
            hru_resize(&t->range, cap, sizeof *t->range) != 0 ||
            hru_resize(&t->depth, cap, sizeof *t->depth) != 0)
            return -ENOMEM;
        t->cap = (uint32_t)cap;
    }
    if (hra_index_room(&t->index, &t->slots, t->n, path_id_hash, t) != 0)
        return -ENOMEM;
    a->bytes += hra_pathtab_bytes(a) - before;
    return 0;
}

uint32_t hra_path(struct hra_agg *a, uint32_t parent, uint32_t range)
{
    struct hra_pathtab *t = &a->path;
    uint32_t depth, i;

    if (parent == HRA_PATH_TOO_DEEP)
        return HRA_PATH_TOO_DEEP;
    depth = parent == 0 ? 1u : t->depth[parent - 1] + 1u;
    if (depth > a->max_depth || depth > HRA_MAX_DEPTH_LIMIT)
        return HRA_PATH_TOO_DEEP;
    if (t->slots != 0) {
        for (i = path_hash(parent, range) & (t->slots - 1); t->index[i] != 0;
             i = (i + 1) & (t->slots - 1)) {
            uint32_t id = t->index[i];
            if (t->parent[id - 1] == parent && t->range[id - 1] == range)
                return id;
        }
    }
    if (t->n >= a->max_paths || pathtab_grow(a) != 0)
        return 0;
    t->parent[t->n] = parent;
    t->range[t->n] = range;
    t->depth[t->n] = (uint8_t)depth;
    for (i = path_hash(parent, range) & (t->slots - 1); t->index[i] != 0;
         i = (i + 1) & (t->slots - 1))
        ;
    t->index[i] = ++t->n;
    return t->n;
}

uint32_t hra_path_names(const struct hra_agg *a, uint32_t id,
                            const char **names)
{
    uint32_t d;

    if (id == 0 || id > a->path.n)
        return 0;
    d = a->path.depth[id - 1];
    for (uint32_t i = d; i-- > 0 && id != 0;) {
        names[i] = hra_str_get(a, a->path.range[id - 1]);
        id = a->path.parent[id - 1];
    }
    return d;
}

/* The index of path keys: open addressing on (range key, path). */
static uint32_t pk_hash(const struct hra_key *owner, uint32_t path)
{
    return (uint32_t)mix(mix((uint64_t)(uintptr_t)owner) ^ path);
}

static void pk_insert(struct hra_key **idx, uint32_t slots,
                      const struct hra_key *owner, struct hra_key *pk)
{
    uint32_t j = pk_hash(owner, pk->path) & (slots - 1);

    while (idx[j] != NULL)
        j = (j + 1) & (slots - 1);
    idx[j] = pk;
}

static int pk_build(struct hra_agg *a, uint32_t slots)
{
    struct hra_key **idx = calloc(slots, sizeof *idx);

    if (idx == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        for (struct hra_key *p = a->keys[i]->paths; p != NULL; p = p->pnext)
            pk_insert(idx, slots, a->keys[i], p);
    }
    a->bytes -= (size_t)a->pkslots * sizeof *idx;
    a->bytes += (size_t)slots * sizeof *idx;
    free(a->pkindex);
    a->pkindex = idx;
    a->pkslots = slots;
    return 0;
}

int hra_paths_reindex(struct hra_agg *a)
{
    if (a->pkslots == 0)
        return 0;
    return pk_build(a, a->pkslots);
}

/* A path key's owner is found through its index slot: the key's fields
 * are its owner's labels, so (node, op, backend, phase, range) and path
 * identify it; the owner pointer only spreads the hash. */
static struct hra_key *path_key(struct hra_agg *a, struct hra_key *k,
                                uint32_t path, int live)
{
    struct hra_key *pk, **tail;
    uint32_t i;

    if (2 * (a->npkeys + 1) >= a->pkslots &&
        pk_build(a, a->pkslots ? 2 * a->pkslots : 1024) != 0)
        return NULL;
    for (i = pk_hash(k, path) & (a->pkslots - 1); a->pkindex[i] != NULL;
         i = (i + 1) & (a->pkslots - 1)) {
        pk = a->pkindex[i];
        if (pk->path == path && pk->node == k->node && pk->op == k->op &&
            pk->backend == k->backend && pk->phase == k->phase &&
            pk->range == k->range)
            return pk;
    }
    /* A new path parts a mirror from its range key. */
    if (hra_path_unmirror(a, k) != 0)
        return NULL;
    pk = calloc(1, sizeof *pk);
    if (pk == NULL)
        return NULL;
    pk->node = k->node;
    pk->op = k->op;
    pk->backend = k->backend;
    pk->phase = k->phase;
    pk->range = k->range;
    pk->serial = k->serial;
    pk->exact = 1;
    pk->path = path;
    pk->mirror = live && k->paths == NULL && k->pairs == 0 && k->records == 0;
    for (tail = &k->paths; *tail != NULL; tail = &(*tail)->pnext)
        ;
    *tail = pk;
    a->pkindex[i] = pk;
    a->npkeys++;
    a->bytes += sizeof *pk;
    return pk;
}

struct hra_key *hra_path_key(struct hra_agg *a, struct hra_key *k,
                                 uint32_t path)
{
    return path_key(a, k, path, 0);
}

struct hra_key *hra_path_key_live(struct hra_agg *a, struct hra_key *k,
                                      uint32_t path)
{
    return path_key(a, k, path, 1);
}

/* A new histogram holding src's values, or NULL (ENOMEM). */
static struct hrs_hist *hist_dup(const struct hrs_hist *src)
{
    struct hrs_hist *h = malloc(sizeof *h);

    if (h != NULL && hrs_hist_copy(h, src) != 0) {
        free(h);
        h = NULL;
    }
    return h;
}

static void hist_drop(struct hrs_hist *h)
{
    hrs_hist_fini(h);
    free(h);
}

int hra_path_unmirror(struct hra_agg *a, struct hra_key *k)
{
    struct hra_key *p = k->paths;
    int rc;

    if (p == NULL || !p->mirror)
        return 0;
    /* A mirror's range key has no record (a record parts them). */
    p->mirror = 0;
    if (k->exact) {
        rc = hra_path_set_exact(a, p, k->buf, k->len, k->pairs);
    } else {
        /* A shared histogram (agg.h) stays shared in the copy. */
        struct hrs_hist *hi = hist_dup(k->incl);
        struct hrs_hist *hs = k->self == k->incl ? hi : hist_dup(k->self);

        rc = hi != NULL && hs != NULL
                 ? hra_path_set_hist(a, p, hi, hs, k->pairs)
                 : -ENOMEM;
        if (rc != 0) {
            if (hs != hi)
                hist_drop(hs);
            hist_drop(hi);
        }
    }
    if (rc != 0) {
        p->mirror = 1;
        return rc;
    }
    /* Its counts are the key's (pairs came with its events). */
#define COUNTER(name, runkey, runpath, merge, row) \
    HRA_KF_IF_MERGED(merge)(p->name = k->name;)
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    p->has_scopes = k->has_scopes;
    return 0;
}

const struct hra_key *hra_path_view(const struct hra_key *k,
                                        const struct hra_key *p,
                                        struct hra_key *tmp)
{
    if (!p->mirror)
        return p;
    *tmp = *k;
    tmp->paths = NULL;
    tmp->pnext = p->pnext;
    tmp->path = p->path;
    tmp->serial = p->serial;
    tmp->mirror = 0;
    return tmp;
}

int hra_path_add(struct hra_agg *a, struct hra_key *pk, uint64_t incl_ns,
                     uint64_t self_ns)
{
    uint64_t events = a->events, capped = a->capped;
    int rc = hra__add(a, pk, incl_ns, self_ns);

    a->events = events;
    a->capped = capped;
    return rc;
}

int hra_path_add_exact(struct hra_agg *a, struct hra_key *pk,
                           const uint8_t *buf, size_t len, uint64_t pairs)
{
    uint64_t events = a->events, capped = a->capped;
    int rc = hra_key_add_exact(a, pk, buf, len, pairs, 0);

    a->events = events;
    a->capped = capped;
    return rc;
}

int hra_path_set_exact(struct hra_agg *a, struct hra_key *pk,
                           const uint8_t *buf, size_t len, uint64_t pairs)
{
    uint64_t events = a->events;
    int rc = hra_key_set_exact(a, pk, buf, len, pairs, 0);

    a->events = events;
    return rc;
}

int hra_path_set_hist(struct hra_agg *a, struct hra_key *pk,
                          struct hrs_hist *incl, struct hrs_hist *self,
                          uint64_t pairs)
{
    uint64_t events = a->events;
    int rc = hra_key_set_hist(a, pk, incl, self, pairs, 0);

    a->events = events;
    return rc;
}

int hra_key_join(struct hra_agg *a, struct hra_key *k, uint32_t path,
                     int *mirrored)
{
    *mirrored = 0;
    if (path != 0 && path != HRA_PATH_TOO_DEEP) {
        if (k->paths == NULL && k->pairs + k->records == 0) {
            struct hra_key *pk = hra_path_key_live(a, k, path);

            if (pk == NULL)
                return -ENOMEM;
            *mirrored = pk->mirror;
        } else {
            *mirrored = k->paths != NULL && k->paths->pnext == NULL &&
                        k->paths->mirror && k->paths->path == path;
        }
    }
    if (!*mirrored && hra_path_unmirror(a, k) != 0)
        return -ENOMEM;
    return 0;
}

void hra_paths_skipped(struct hra_agg *a, uint32_t id, uint64_t n)
{
    if (id == 0)
        a->paths_table_full += n;
    else
        a->paths_too_deep += n;
}
