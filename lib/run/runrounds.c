/* Rounds in run files: built for a merge, found for a report (see
 * runrounds.h). */
#include "config.h"

#include "lib/run/runrounds.h"
#include "lib/run/runside.h"
#include "lib/stat/rounds.h"
#include "lib/util/grow.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One key and metric in one round. */
struct ent {
    char *node, *op, *backend, *range;
    uint32_t phase, metric, round;
    uint64_t count;
    double median;
};

struct ents {
    struct ent *e;
    size_t n, cap;
};

static int ents_add(struct ents *t, const char *node, const char *op,
                    const char *backend, uint32_t phase, const char *range,
                    uint32_t metric, uint32_t round, uint64_t count,
                    double median)
{
    struct ent *e;

    if (hru_grow(&t->e, &t->cap, t->n + 1, sizeof *t->e, 256) != 0)
        return -ENOMEM;
    e = &t->e[t->n];
    e->node = strdup(node);
    e->op = strdup(op);
    e->backend = strdup(backend);
    e->range = strdup(range);
    if (e->node == NULL || e->op == NULL || e->backend == NULL ||
        e->range == NULL) {
        free(e->node);
        free(e->op);
        free(e->backend);
        free(e->range);
        return -ENOMEM;
    }
    e->phase = phase;
    e->metric = metric;
    e->round = round;
    e->count = count;
    e->median = median;
    t->n++;
    return 0;
}

static void ents_free(struct ents *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].node);
        free(t->e[i].op);
        free(t->e[i].backend);
        free(t->e[i].range);
    }
    free(t->e);
}

static int cmp_names(const char *an, const char *ao, const char *ab,
                     uint32_t ap, const char *ar, uint32_t am,
                     const char *bn, const char *bo, const char *bb,
                     uint32_t bp, const char *br, uint32_t bm)
{
    int c;

    if ((c = strcmp(an, bn)) != 0 || (c = strcmp(ao, bo)) != 0 ||
        (c = strcmp(ab, bb)) != 0 || (c = strcmp(ar, br)) != 0)
        return c;
    if (ap != bp)
        return ap < bp ? -1 : 1;
    return am < bm ? -1 : am > bm;
}

static int cmp_ent(const void *pa, const void *pb)
{
    const struct ent *a = pa, *b = pb;
    int c = cmp_names(a->node, a->op, a->backend, a->phase, a->range,
                      a->metric, b->node, b->op, b->backend, b->phase,
                      b->range, b->metric);

    if (c != 0)
        return c;
    return a->round < b->round ? -1 : a->round > b->round;
}

static int same_key(const struct ent *a, const struct ent *b)
{
    return cmp_names(a->node, a->op, a->backend, a->phase, a->range,
                     a->metric, b->node, b->op, b->backend, b->phase,
                     b->range, b->metric) == 0;
}

static int cmp_rk(const void *pa, const void *pb)
{
    const Hostrange__RoundKey *a = *(Hostrange__RoundKey *const *)pa;
    const Hostrange__RoundKey *b = *(Hostrange__RoundKey *const *)pb;

    return cmp_names(a->node_id, a->operator_, a->backend, a->phase,
                     a->range, a->metric, b->node_id, b->operator_,
                     b->backend, b->phase, b->range, b->metric);
}

int hrr_round_index_init(struct hrr_round_index *x,
                         const Hostrange__RunEnd *end)
{
    memset(x, 0, sizeof *x);
    x->end = end;
    if (end == NULL || end->rounds < 2 || end->n_round_keys == 0)
        return 0;
    x->sorted = malloc(end->n_round_keys * sizeof *x->sorted);
    if (x->sorted == NULL)
        return -ENOMEM;
    memcpy(x->sorted, end->round_keys, end->n_round_keys * sizeof
           *x->sorted);
    x->n = end->n_round_keys;
    qsort(x->sorted, x->n, sizeof *x->sorted, cmp_rk);
    return 0;
}

void hrr_round_index_fini(struct hrr_round_index *x)
{
    free(x->sorted);
    x->sorted = NULL;
    x->n = 0;
}

/* The RoundKey of a key and metric, or NULL. */
static const Hostrange__RoundKey *
find(const struct hrr_round_index *x, const char *node, const char *op,
     const char *backend, uint32_t phase, const char *range,
     uint32_t metric);

size_t hrr_round_medians_normalized(
    const struct hrr_round_index *x, const char *node, const char *op,
    const char *backend, uint32_t phase, const char *range, uint32_t metric,
    const char *control, double *v, size_t max)
{
    const Hostrange__RoundKey *k = find(x, node, op, backend, phase, range,
                                        metric);
    const Hostrange__RoundKey *c = NULL;
    size_t n = 0;

    if (k == NULL)
        return 0;
    c = find(x, node, op, backend, phase, control, HRP_METRIC_INCLUSIVE);
    if (c == NULL)
        return 0;
    for (size_t i = 0; i < k->n_count && i < k->n_median && n < max; i++) {
        if (k->count[i] > 0 && i < c->n_count && i < c->n_median &&
            c->count[i] > 0 && c->median[i] > 0)
            v[n++] = k->median[i] / c->median[i];
    }
    return n;
}

static const Hostrange__RoundKey *
find(const struct hrr_round_index *x, const char *node, const char *op,
     const char *backend, uint32_t phase, const char *range, uint32_t metric)
{
    size_t lo = 0, hi = x->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const Hostrange__RoundKey *k = x->sorted[mid];
        int c = cmp_names(node, op, backend, phase, range, metric,
                          k->node_id, k->operator_, k->backend, k->phase,
                          k->range, k->metric);

        if (c == 0)
            return k;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

size_t hrr_round_medians(const struct hrr_round_index *x, const char *node,
                         const char *op, const char *backend, uint32_t phase,
                         const char *range, uint32_t metric, double *v,
                         size_t max)
{
    const Hostrange__RoundKey *k = find(x, node, op, backend, phase, range,
                                        metric);
    size_t n = 0;

    if (k == NULL)
        return 0;
    for (size_t i = 0; i < k->n_count && i < k->n_median && n < max; i++) {
        if (k->count[i] > 0)
            v[n++] = k->median[i];
    }
    return n;
}

/* Notes input `path`'s keys: each key and metric that its own rounds do
 * not cover (idx) as one round, `round`. Returns 0, -ENOMEM, or -EIO with
 * why in err. */
static int read_input(struct ents *t, const char *path,
                      const struct hrr_round_index *idx, uint32_t round,
                      char *err, size_t errlen)
{
    struct hrr_diff_side s;
    size_t done = 0;
    int rc;

    memset(&s, 0, sizeof s);
    rc = hrr_runside_open(&s, path, err, errlen);
    while (rc == 0 && !s.ended) {
        rc = hrr_runside_next(&s, err, errlen);
        for (; rc == 0 && done < s.n; done++) {
            struct hrr_diff_pop *p = &s.p[done];
            free(p->v);
            free(p->w);
            p->v = NULL;
            p->w = NULL;
            if (p->total == 0 ||
                find(idx, p->node, p->op, p->backend, p->phase, p->range,
                     p->metric) != NULL)
                continue;
            rc = ents_add(t, p->node, p->op, p->backend, p->phase, p->range,
                          p->metric, round, p->total, p->median);
        }
    }
    hrr_runside_free(&s);
    return rc;
}

/* Makes the RoundKey of entries e[0..n) (one key, rounds ascending) over
 * `rounds` rounds. Returns it, or NULL for want of memory. */
static Hostrange__RoundKey *make_key(const struct ent *e, size_t n,
                                     uint32_t rounds)
{
    Hostrange__RoundKey *k = calloc(1, sizeof *k);

    if (k == NULL)
        return NULL;
    hostrange__round_key__init(k);
    k->count = calloc(rounds, sizeof *k->count);
    k->median = calloc(rounds, sizeof *k->median);
    k->node_id = strdup(e->node);
    k->operator_ = strdup(e->op);
    k->backend = strdup(e->backend);
    k->range = strdup(e->range);
    k->phase = e->phase;
    k->metric = e->metric;
    k->n_count = k->n_median = rounds;
    if (k->count == NULL || k->median == NULL || k->node_id == NULL ||
        k->operator_ == NULL || k->backend == NULL || k->range == NULL) {
        hostrange__round_key__free_unpacked(k, NULL);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        k->count[e[i].round] += e[i].count;
        k->median[e[i].round] = e[i].median;
    }
    return k;
}

int hrr_runrounds_build(struct hrr_runrounds *r, char *const *in,
                        size_t nin, Hostrange__RunEnd *const *ends, int read,
                        char *err, size_t errlen)
{
    struct ents t = { NULL, 0, 0 };
    uint32_t base = 0;
    int rc = 0;

    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < nin && rc == 0; i++) {
        const Hostrange__RunEnd *e = ends[i];
        uint32_t own = e->rounds > 1 && e->n_round_keys > 0 ? e->rounds : 1;
        struct hrr_round_index idx;

        for (size_t j = 0; own > 1 && j < e->n_round_keys && rc == 0; j++) {
            const Hostrange__RoundKey *k = e->round_keys[j];

            for (size_t q = 0; q < k->n_count && q < k->n_median &&
                               q < own && rc == 0; q++) {
                if (k->count[q] > 0)
                    rc = ents_add(&t, k->node_id, k->operator_, k->backend,
                                  k->phase, k->range, k->metric,
                                  base + (uint32_t)q, k->count[q],
                                  k->median[q]);
            }
        }
        if (rc == 0 && read) {
            rc = hrr_round_index_init(&idx, e);
            if (rc == 0)
                rc = read_input(&t, in[i], &idx, base, err, errlen);
            hrr_round_index_fini(&idx);
        }
        base += own;
    }
    if (rc == 0 && t.n > 0)
        qsort(t.e, t.n, sizeof *t.e, cmp_ent);
    for (size_t i = 0, j; rc == 0 && i < t.n; i = j) {
        Hostrange__RoundKey *k, **nk;

        size_t distinct = 1;

        for (j = i + 1; j < t.n && same_key(&t.e[i], &t.e[j]); j++)
            distinct += t.e[j].round != t.e[j - 1].round;
        if (distinct < 2)
            continue;
        k = make_key(&t.e[i], j - i, base);
        nk = k == NULL ? NULL : realloc(r->keys, (r->n + 1) * sizeof *nk);
        if (nk == NULL) {
            hostrange__round_key__free_unpacked(k, NULL);
            rc = -ENOMEM;
            break;
        }
        r->keys = nk;
        r->keys[r->n++] = k;
    }
    ents_free(&t);
    if (rc == 0 && r->n > 0)
        r->rounds = base;
    if (rc != 0)
        hrr_runrounds_fini(r);
    return rc;
}

void hrr_runrounds_fini(struct hrr_runrounds *r)
{
    for (size_t i = 0; i < r->n; i++)
        hostrange__round_key__free_unpacked(r->keys[i], NULL);
    free(r->keys);
    memset(r, 0, sizeof *r);
}

void hrr_runrounds_put(const struct hrr_runrounds *r, Hostrange__RunEnd *end)
{
    end->rounds = r->rounds;
    end->round_keys = r->keys;
    end->n_round_keys = r->n;
}

size_t hrr_round_row_room(const struct hrr_round_index *x)
{
    return 2 * (x->end->rounds > 1 ? x->end->rounds : 1);
}

void hrr_round_row(const struct hrr_round_index *x, struct hra_row *r,
                   double *medians)
{
    size_t max = x->end->rounds;
    double *tmp = medians + (max > 1 ? max : 1);
    size_t n = hrr_round_medians(x, r->node_id, r->op, r->backend,
                                 hrp_phase_parse(r->phase), r->range,
                                 hrp_metric_parse(r->metric), medians, max);

    if (n == 0) {
        /* One round: the pooled median is its median. */
        medians[0] = r->median;
        n = 1;
    }
    r->rounds = (uint32_t)n;
    r->round_medians = medians;
    memcpy(tmp, medians, n * sizeof *tmp);
    r->round_spread = hrs_rounds_spread(tmp, n);
}
