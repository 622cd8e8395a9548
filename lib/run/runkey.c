/* Keys of run files (see runkey.h). */
#include "config.h"

#include "lib/run/runkey.h"
#include "lib/agg/agg_impl.h"
#include "lib/agg/observer.h"
#include "lib/run/pbuf.h"
#include "lib/run/runput.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- saving --------------------------------------------------------------- */

static Hostrange__RunHist *hist_to_msg(const struct hrs_hist *h)
{
    Hostrange__RunHist *m = malloc(sizeof *m);

    if (m == NULL)
        return NULL;
    hostrange__run_hist__init(m);
    m->buckets = malloc((h->nb + 1) * sizeof *m->buckets);
    m->counts = malloc((h->nb + 1) * sizeof *m->counts);
    if (m->buckets == NULL || m->counts == NULL) {
        free(m->buckets);
        free(m->counts);
        free(m);
        return NULL;
    }
    m->n = h->n;
    m->min = h->min;
    m->max = h->max;
    m->sum_lo = (uint64_t)h->sum;
    m->sum_hi = (uint64_t)(h->sum >> 64);
    m->sumsq_hi = (double)hrs_hist_sumsq(h);
    m->sumsq_lo = (double)(hrs_hist_sumsq(h) - (long double)m->sumsq_hi);
    m->n_buckets = m->n_counts = h->nb;
    {
        uint64_t cnt;
        uint32_t i = 0;

        for (uint32_t b = hrs_hist_next(h, 0, &cnt);
             b < HRS_HIST_BUCKETS && i < h->nb;
             b = hrs_hist_next(h, b + 1, &cnt), i++) {
            m->buckets[i] = b;
            m->counts[i] = cnt;
        }
    }
    return m;
}

static void hist_msg_free(Hostrange__RunHist *m)
{
    if (m == NULL)
        return;
    free(m->buckets);
    free(m->counts);
    free(m);
}

/* Sorts v[0..n) and replaces each value by its difference from the one
 * before. */
static void delta_code(uint64_t *v, size_t n, uint64_t *tmp)
{
    hrs_sort_u64(v, n, tmp);
    for (size_t i = n; i-- > 1;)
        v[i] -= v[i - 1];
}

/* Fills p (initialised here) from path key pk: its names (borrowed from
 * a) and its values, as a RunKey's. When pk holds the very events of its
 * range key (a mirror's view), already coded in m, the values are copied
 * from m rather than sorted again. Returns 0 or -ENOMEM (p then holds
 * what it holds; runpath_clear frees it). */
static int runpath_from(struct hra_agg *a, const struct hra_key *pk,
                        const Hostrange__RunKey *m, int format, int mirror,
                        Hostrange__RunPath *p)
{
    const char *names[HRA_MAX_DEPTH_LIMIT];
    uint32_t depth = hra_path_names(a, pk->path, names);

    hostrange__run_path__init(p);
    p->path = malloc((depth + 1) * sizeof *p->path);
    if (p->path == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < depth; i++)
        p->path[i] = (char *)names[i];
    p->n_path = depth;
    HRA_KEY_PATH_COUNTERS_COPY(p, pk);
    if (format >= HRR_FORMAT_EVENTS && mirror) {
        p->same_as_key = 1;
        return 0;
    }
    if (format >= HRR_FORMAT_EVENTS && pk->exact) {
        /* Borrowed from the key (runkey.h). */
        p->events.data = pk->buf;
        p->events.len = pk->len;
        return 0;
    }
    if (pk->exact) {
        size_t ni, ns;
        uint64_t *tmp = malloc((pk->pairs + 1) * sizeof *tmp);

        p->inclusive = malloc((pk->pairs + 1) * sizeof *p->inclusive);
        p->self = malloc((pk->pairs + 1) * sizeof *p->self);
        if (tmp == NULL || p->inclusive == NULL || p->self == NULL) {
            free(tmp);
            return -ENOMEM;
        }
        if (m != NULL) {
            ni = ns = pk->pairs;
            memcpy(p->inclusive, m->inclusive, ni * sizeof *p->inclusive);
            memcpy(p->self, m->self, ns * sizeof *p->self);
        } else {
            hra_key_values(pk, p->inclusive, &ni, p->self, &ns);
            delta_code(p->inclusive, ni, tmp);
            delta_code(p->self, ns, tmp);
        }
        p->n_inclusive = ni;
        p->n_self = ns;
        free(tmp);
        return 0;
    }
    p->inclusive_hist = hist_to_msg(pk->incl);
    p->self_hist = hist_to_msg(pk->self);
    return p->inclusive_hist == NULL || p->self_hist == NULL ? -ENOMEM : 0;
}

static void runpath_clear(Hostrange__RunPath *p)
{
    p->events.data = NULL; /* borrowed */
    p->events.len = 0;
    free(p->path);
    free(p->inclusive);
    free(p->self);
    hist_msg_free(p->inclusive_hist);
    hist_msg_free(p->self_hist);
}

/* Fills m->paths from k's path keys. Returns 0 or -ENOMEM. */
static int runkey_paths(struct hra_agg *a, const struct hra_key *k,
                        int format, Hostrange__RunKey *m)
{
    size_t n = 0;

    for (const struct hra_key *p = k->paths; p != NULL; p = p->pnext)
        n++;
    if (n == 0)
        return 0;
    m->paths = calloc(n, sizeof *m->paths);
    if (m->paths == NULL)
        return -ENOMEM;
    for (const struct hra_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        Hostrange__RunPath *x = calloc(1, sizeof *x);
        struct hra_key tmp;
        const struct hra_key *p = hra_path_view(k, pp, &tmp);
        /* A mirror holds its range key's very events (its only path, no
         * record), already coded in m. */
        int same = pp->mirror && k->exact && m->n_inclusive == k->pairs &&
                   m->n_self == k->pairs;

        if (x == NULL)
            return -ENOMEM;
        m->paths[m->n_paths++] = x;
        if (runpath_from(a, p, same ? m : NULL, format, pp->mirror, x) != 0)
            return -ENOMEM;
    }
    return 0;
}

int hrr_runkey_from(struct hra_agg *a, const struct hra_key *k, int format,
                    Hostrange__RunKey *m)
{
    int rc = hrr_runkey_from_range(a, k, format, m);

    if (rc == 0 && runkey_paths(a, k, format, m) != 0) {
        hrr_runkey_clear(m);
        rc = -ENOMEM;
    }
    return rc;
}

int hrr_runkey_from_range(struct hra_agg *a, const struct hra_key *k,
                          int format, Hostrange__RunKey *m)
{
    hostrange__run_key__init(m);
    m->node_id = (char *)hra_str_get(a, k->node);
    m->operator_ = (char *)hra_str_get(a, k->op);
    m->backend = (char *)hra_str_get(a, k->backend);
    m->phase = k->phase;
    m->range = (char *)hra_str_get(a, k->range);
    m->node_rank = a->str.rank[k->node - 1];
    m->range_rank = a->str.rank[k->range - 1];
#define COUNTER(name, runkey, runpath, merge, row) m->name = k->name;
    HRA_KEY_COUNTERS(COUNTER)
#undef COUNTER
    if (k->exact && format >= HRR_FORMAT_EVENTS) {
        /* Borrowed from the key (runkey.h). */
        m->events.data = k->buf;
        m->events.len = k->len;
        return 0;
    }
    if (k->exact) {
        size_t all = k->pairs + k->records, ni, ns;
        uint64_t *tmp = malloc((all + 1) * sizeof *tmp);

        m->inclusive = malloc((all + 1) * sizeof *m->inclusive);
        m->self = malloc((k->pairs + 1) * sizeof *m->self);
        if (tmp == NULL || m->inclusive == NULL || m->self == NULL) {
            free(tmp);
            hrr_runkey_clear(m);
            return -ENOMEM;
        }
        hra_key_values(k, m->inclusive, &ni, m->self, &ns);
        delta_code(m->inclusive, ni, tmp);
        delta_code(m->self, ns, tmp);
        m->n_inclusive = ni;
        m->n_self = ns;
        free(tmp);
        return 0;
    }
    m->inclusive_hist = hist_to_msg(k->incl);
    m->self_hist = hist_to_msg(k->self);
    if (m->inclusive_hist == NULL || m->self_hist == NULL) {
        hrr_runkey_clear(m);
        return -ENOMEM;
    }
    return 0;
}

void hrr_runkey_clear(Hostrange__RunKey *m)
{
    m->events.data = NULL; /* borrowed */
    m->events.len = 0;
    for (size_t i = 0; i < m->n_paths; i++) {
        runpath_clear(m->paths[i]);
        free(m->paths[i]);
    }
    free(m->paths);
    m->paths = NULL;
    m->n_paths = 0;
    free(m->inclusive);
    free(m->self);
    hist_msg_free(m->inclusive_hist);
    hist_msg_free(m->self_hist);
    m->inclusive = m->self = NULL;
    m->inclusive_hist = m->self_hist = NULL;
    m->n_inclusive = m->n_self = 0;
}
