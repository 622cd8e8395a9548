/* Aggregation of samples per key (see agg.h). */
#include "config.h"

#include "daemon/agg.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_key(uint32_t node, uint32_t op, uint32_t backend,
                         uint32_t phase, uint32_t range)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    uint32_t v[5] = { node, op, backend, phase, range };

    for (int i = 0; i < 5; i++) {
        h ^= v[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

void hrd_agg_init(struct hrd_agg *a)
{
    memset(a, 0, sizeof *a);
}

static void values_free(struct hrd_values *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

void hrd_agg_reset(struct hrd_agg *a)
{
    for (uint32_t i = 0; i < a->nkeys; i++) {
        values_free(&a->keys[i]->incl);
        values_free(&a->keys[i]->self);
        free(a->keys[i]);
    }
    free(a->keys);
    free(a->kindex);
    a->keys = NULL;
    a->kindex = NULL;
    a->nkeys = a->capkeys = a->kslots = 0;
    a->events = 0;
    a->bytes = 0;
}

void hrd_agg_fini(struct hrd_agg *a)
{
    if (a == NULL)
        return;
    hrd_agg_reset(a);
    for (uint32_t i = 0; i < a->str.n; i++)
        free(a->str.s[i]);
    free(a->str.s);
    free(a->str.rank);
    free(a->str.index);
    memset(a, 0, sizeof *a);
}

uint32_t hrd_agg_str(struct hrd_agg *a, const char *s)
{
    struct hrd_strtab *t = &a->str;
    uint32_t i;

    if (t->slots != 0) {
        for (i = (uint32_t)hash_bytes(s) & (t->slots - 1); t->index[i] != 0;
             i = (i + 1) & (t->slots - 1)) {
            if (strcmp(t->s[t->index[i] - 1], s) == 0)
                return t->index[i];
        }
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 64;
        char **ns = realloc(t->s, cap * sizeof *ns);
        if (ns == NULL)
            return 0;
        t->s = ns;
        uint32_t *nr = realloc(t->rank, cap * sizeof *nr);
        if (nr == NULL)
            return 0;
        t->rank = nr;
        t->cap = cap;
    }
    if (2 * (t->n + 1) >= t->slots) {
        uint32_t slots = t->slots ? 2 * t->slots : 256;
        uint32_t *idx = calloc(slots, sizeof *idx);
        if (idx == NULL)
            return 0;
        for (uint32_t id = 1; id <= t->n; id++) {
            uint32_t j = (uint32_t)hash_bytes(t->s[id - 1]) & (slots - 1);
            while (idx[j] != 0)
                j = (j + 1) & (slots - 1);
            idx[j] = id;
        }
        free(t->index);
        t->index = idx;
        t->slots = slots;
    }
    t->s[t->n] = strdup(s);
    if (t->s[t->n] == NULL)
        return 0;
    t->rank[t->n] = 0;
    for (i = (uint32_t)hash_bytes(s) & (t->slots - 1); t->index[i] != 0;
         i = (i + 1) & (t->slots - 1))
        ;
    t->index[i] = ++t->n;
    return t->n;
}

const char *hrd_agg_str_get(const struct hrd_agg *a, uint32_t id)
{
    return (id >= 1 && id <= a->str.n) ? a->str.s[id - 1] : "";
}

void hrd_agg_rank_node(struct hrd_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->node_ranks;
}

void hrd_agg_rank_range(struct hrd_agg *a, uint32_t id)
{
    if (a->str.rank[id - 1] == 0)
        a->str.rank[id - 1] = ++a->range_ranks;
}

static int kindex_grow(struct hrd_agg *a)
{
    uint32_t slots = a->kslots ? 2 * a->kslots : 1024;
    uint32_t *idx = calloc(slots, sizeof *idx);

    if (idx == NULL)
        return -ENOMEM;
    for (uint32_t k = 0; k < a->nkeys; k++) {
        const struct hrd_key *key = a->keys[k];
        uint32_t j = (uint32_t)hash_key(key->node, key->op, key->backend,
                                        key->phase, key->range) &
                     (slots - 1);
        while (idx[j] != 0)
            j = (j + 1) & (slots - 1);
        idx[j] = k + 1;
    }
    free(a->kindex);
    a->kindex = idx;
    a->kslots = slots;
    return 0;
}

struct hrd_key *hrd_agg_key(struct hrd_agg *a, uint32_t node, uint32_t op,
                            uint32_t backend, uint32_t phase, uint32_t range)
{
    uint64_t h = hash_key(node, op, backend, phase, range);
    struct hrd_key *k;
    uint32_t i;

    if (2 * (a->nkeys + 1) >= a->kslots && kindex_grow(a) != 0)
        return NULL;
    for (i = (uint32_t)h & (a->kslots - 1); a->kindex[i] != 0;
         i = (i + 1) & (a->kslots - 1)) {
        k = a->keys[a->kindex[i] - 1];
        if (k->node == node && k->op == op && k->backend == backend &&
            k->phase == phase && k->range == range)
            return k;
    }
    if (a->nkeys == a->capkeys) {
        uint32_t cap = a->capkeys ? 2 * a->capkeys : 256;
        struct hrd_key **nk = realloc(a->keys, cap * sizeof *nk);
        if (nk == NULL)
            return NULL;
        a->keys = nk;
        a->capkeys = cap;
    }
    k = calloc(1, sizeof *k);
    if (k == NULL)
        return NULL;
    k->node = node;
    k->op = op;
    k->backend = backend;
    k->phase = phase;
    k->range = range;
    k->serial = a->nkeys;
    a->keys[a->nkeys++] = k;
    a->kindex[i] = a->nkeys;
    return k;
}

static int values_add(struct hrd_agg *a, struct hrd_values *v, uint64_t x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        uint64_t *nv = realloc(v->v, cap * sizeof *nv);
        if (nv == NULL)
            return -ENOMEM;
        a->bytes += (cap - v->cap) * sizeof *nv;
        v->v = nv;
        v->cap = cap;
    }
    if (v->n == 0 || x < v->min)
        v->min = x;
    if (v->n == 0 || x > v->max)
        v->max = x;
    v->v[v->n++] = x;
    a->events++;
    return 0;
}

int hrd_agg_add(struct hrd_agg *a, struct hrd_key *k, uint64_t incl_ns,
                uint64_t self_ns)
{
    int rc = values_add(a, &k->incl, incl_ns);

    if (rc == 0 && (rc = values_add(a, &k->self, self_ns)) != 0) {
        /* Keep the two populations the same size. */
        k->incl.n--;
        a->events--;
    }
    if (rc == 0)
        k->has_scopes = 1;
    return rc;
}

int hrd_agg_add_record(struct hrd_agg *a, struct hrd_key *k, uint64_t value_ns)
{
    return values_add(a, &k->incl, value_ns);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;
    return (x > y) - (x < y);
}

void hrd_stats(uint64_t *v, size_t n, double *mean, double *median)
{
    unsigned __int128 sum = 0;

    if (n == 0) {
        *mean = *median = 0.0;
        return;
    }
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, n, sizeof *v, cmp_u64);
    *mean = (double)((long double)sum / (long double)n);
    if (n % 2 == 1)
        *median = (double)v[n / 2];
    else
        *median = (double)(((long double)v[n / 2 - 1] + (long double)v[n / 2]) / 2);
}

/* Sort order of keys in a report (see agg.h). */
static const struct hrd_agg *sort_agg;

static int cmp_keys(const void *pa, const void *pb)
{
    const struct hrd_key *x = *(struct hrd_key *const *)pa;
    const struct hrd_key *y = *(struct hrd_key *const *)pb;
    const uint32_t *rank = sort_agg->str.rank;
    uint32_t a1, b1;

#define CMP(p, q)                          \
    do {                                   \
        a1 = (p);                          \
        b1 = (q);                          \
        if (a1 != b1)                      \
            return a1 < b1 ? -1 : 1;       \
    } while (0)
    CMP(rank[x->node - 1], rank[y->node - 1]);
    CMP(x->phase, y->phase);
    CMP(!x->has_scopes, !y->has_scopes);
    CMP(rank[x->range - 1], rank[y->range - 1]);
    CMP(x->serial, y->serial);
#undef CMP
    return 0;
}

static int emit(struct hrd_agg *a, const struct hrd_key *k,
                struct hrd_values *v, const char *metric, hrd_row_fn fn,
                void *ctx)
{
    struct hrd_row row;

    memset(&row, 0, sizeof row);
    row.node_id = hrd_agg_str_get(a, k->node);
    row.op = hrd_agg_str_get(a, k->op);
    row.backend = hrd_agg_str_get(a, k->backend);
    row.phase = hrp_phase_name(k->phase);
    row.range = hrd_agg_str_get(a, k->range);
    row.metric = metric;
    row.count = v->n;
    hrd_stats(v->v, v->n, &row.mean, &row.median);
    row.min = (double)v->min;
    row.max = (double)v->max;
    row.exact = 1;
    return fn(&row, ctx);
}

int hrd_agg_rows(struct hrd_agg *a, const char *node_glob, hrd_row_fn fn,
                 void *ctx)
{
    struct hrd_key **order;
    uint32_t n = 0;
    int rc = 0;

    order = malloc((a->nkeys + 1) * sizeof *order);
    if (order == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        struct hrd_key *k = a->keys[i];
        if (node_glob == NULL || node_glob[0] == '\0' ||
            fnmatch(node_glob, hrd_agg_str_get(a, k->node), 0) == 0)
            order[n++] = k;
    }
    sort_agg = a;
    qsort(order, n, sizeof *order, cmp_keys);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct hrd_key *k = order[i];
        rc = emit(a, k, &k->incl, "inclusive", fn, ctx);
        if (rc == 0 && k->has_scopes)
            rc = emit(a, k, &k->self, "self", fn, ctx);
    }
    free(order);
    return rc;
}
