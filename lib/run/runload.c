/* Loading keys of run files into an aggregation (see runload.h). */
#include "config.h"

#include "lib/run/runload.h"
#include "lib/agg/agg_impl.h"
#include "lib/agg/observer.h"
#include "lib/util/grow.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hrr_runload_init(struct hrr_runload *l, struct hra_agg *a)
{
    memset(l, 0, sizeof *l);
    l->a = a;
}

void hrr_runload_init_reader(struct hrr_runload *l, struct hra_agg *a)
{
    hrr_runload_init(l, a);
    /* The file holds what its writer kept: nothing of it is dropped. */
    a->exact_cap = UINT64_MAX;
    a->max_depth = HRA_MAX_DEPTH_LIMIT;
    a->max_paths = HRA_MAX_PATHS_LIMIT;
}

void hrr_runload_fini(struct hrr_runload *l)
{
    free(l->first);
    l->first = NULL;
}

static int bad(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static int str_ok(const char *s)
{
    return hrp_name_ok(s, strnlen(s, HRP_MAX_STRING + 1));
}

static int hist_ok(const Hostrange__RunHist *h, uint64_t n)
{
    uint64_t total = 0;

    if (h->n != n || h->n_buckets != h->n_counts ||
        h->n_buckets > HRS_HIST_BUCKETS || (n > 0 && h->min > h->max))
        return 0;
    for (size_t i = 0; i < h->n_buckets; i++) {
        if (h->buckets[i] >= HRS_HIST_BUCKETS ||
            (i > 0 && h->buckets[i] <= h->buckets[i - 1]) ||
            h->counts[i] == 0 || h->counts[i] > n - total)
            return 0;
        total += h->counts[i];
    }
    return total == n;
}

/* Undoes the delta coding into out[0..n). Returns 0 on overflow. */
static int undelta(const uint64_t *d, size_t n, uint64_t *out)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++) {
        if (d[i] > UINT64_MAX - v)
            return 0;
        v += d[i];
        out[i] = v;
    }
    return 1;
}

static struct hrs_hist *hist_from_msg(const Hostrange__RunHist *m)
{
    struct hrs_hist *h = calloc(1, sizeof *h);

    if (h == NULL)
        return NULL;
    hrs_hist_init(h);
    for (size_t i = 0; i < m->n_buckets; i++) {
        if (hrs_hist_set_bucket(h, m->buckets[i], m->counts[i]) != 0) {
            hrs_hist_fini(h);
            free(h);
            return NULL;
        }
    }
    h->n = m->n;
    h->min = m->min;
    h->max = m->max;
    h->sum = (unsigned __int128)m->sum_hi << 64 | m->sum_lo;
    h->sumsq_big = (long double)m->sumsq_hi + (long double)m->sumsq_lo;
    return h;
}

/* Adds the histogram m to h (keeping count, sum, min and max exact). */
static int hist_merge(struct hra_agg *a, struct hrs_hist *h,
                      const Hostrange__RunHist *m)
{
    size_t before = hrs_hist_bytes(h);
    uint64_t n0 = h->n, min0 = h->min, max0 = h->max;
    unsigned __int128 sum0 = h->sum;
    unsigned __int128 sq_small0 = h->sumsq_small;
    long double sq_big0 = h->sumsq_big;

    for (size_t i = 0; i < m->n_buckets; i++) {
        uint64_t v = (uint64_t)hrs_hist_value(m->buckets[i]);
        if (hrs_hist_add_n(h, v, m->counts[i]) != 0)
            return -ENOMEM;
    }
    if (m->n > 0) {
        h->n = n0 + m->n;
        h->sum = sum0 + ((unsigned __int128)m->sum_hi << 64 | m->sum_lo);
        h->sumsq_small = sq_small0;
        h->sumsq_big = sq_big0 + (long double)m->sumsq_hi +
                       (long double)m->sumsq_lo;
        h->min = n0 > 0 && min0 < m->min ? min0 : m->min;
        h->max = n0 > 0 && max0 > m->max ? max0 : m->max;
    }
    a->bytes += hrs_hist_bytes(h) - before;
    return 0;
}

/* Notes the first run and rank of string id in slot 2 * (id - 1) + which
 * (0: as a node id, 1: as a range name). */
static int note_first(struct hrr_runload *l, uint32_t id, int which,
                      uint32_t rank)
{
    uint64_t v;

    if (rank == 0)
        rank = UINT32_MAX; /* unranked: after the ranked ones */
    v = ((uint64_t)l->run << 32 | rank) + 1;
    size_t slot = 2 * (size_t)(id - 1) + (size_t)which;

    if (slot >= l->cap) {
        uint32_t was = l->cap;

        if (hru_grow32(&l->first, &l->cap, slot + 1, sizeof *l->first,
                       256) != 0)
            return -ENOMEM;
        memset(l->first + was, 0, (l->cap - was) * sizeof *l->first);
    }
    if (l->first[slot] == 0 || v < l->first[slot])
        l->first[slot] = v;
    return 0;
}

/* Checks one RunPath of key m. Returns 0 or -EINVAL (why). */
static int runpath_ok(const Hostrange__RunKey *m, const Hostrange__RunPath *p,
                      char *why, size_t whylen)
{
    int hist = p->inclusive_hist != NULL || p->self_hist != NULL;
    int coded = p->events.len > 0;

    if (p->n_path == 0 || p->n_path > HRA_MAX_DEPTH_LIMIT ||
        strcmp(p->path[p->n_path - 1], m->range) != 0)
        return bad(why, whylen, "key %s/%s has a path that does not end "
                   "with its range", m->node_id, m->range);
    for (size_t i = 0; i < p->n_path; i++) {
        if (!str_ok(p->path[i]))
            return bad(why, whylen, "key %s/%s has a path with an empty or "
                       "overlong name", m->node_id, m->range);
    }
    if (p->same_as_key) {
        if (hist || coded || p->n_inclusive || p->n_self ||
            m->n_paths != 1 || m->records != 0 || p->pairs != m->pairs)
            return bad(why, whylen, "key %s/%s has a path said to hold the "
                       "key's events that cannot", m->node_id, m->range);
    } else if (coded) {
        uint64_t np, nr;

        if (hist || p->n_inclusive || p->n_self ||
            hra_events_check(p->events.data, p->events.len, &np,
                                 &nr) != 0 ||
            np != p->pairs || nr != 0)
            return bad(why, whylen, "key %s/%s has a path whose events do "
                       "not decode to its count", m->node_id, m->range);
    } else if (hist) {
        if (p->inclusive_hist == NULL || p->self_hist == NULL ||
            p->n_inclusive || p->n_self ||
            !hist_ok(p->inclusive_hist, p->pairs) ||
            !hist_ok(p->self_hist, p->pairs))
            return bad(why, whylen, "key %s/%s has a path with inconsistent "
                       "histograms", m->node_id, m->range);
    } else if (p->n_inclusive != p->pairs || p->n_self != p->pairs) {
        return bad(why, whylen, "key %s/%s has a path whose values do not "
                   "match its counts", m->node_id, m->range);
    } else {
        uint64_t si = 0, ss = 0;

        for (size_t i = 0; i < p->n_inclusive; i++) {
            if (p->inclusive[i] > UINT64_MAX - si ||
                p->self[i] > UINT64_MAX - ss)
                return bad(why, whylen, "key %s/%s has a path with values "
                           "beyond 2^64", m->node_id, m->range);
            si += p->inclusive[i];
            ss += p->self[i];
        }
    }
    return 0;
}

/* Interns p's path into *id: 0 with the id, 1 when the path cannot be
 * kept (*id is then 0 or HRA_PATH_TOO_DEEP), -ENOMEM. */
static int path_intern(struct hra_agg *a, const Hostrange__RunPath *p,
                       uint32_t *id)
{
    *id = 0;
    for (size_t i = 0; i < p->n_path; i++) {
        uint32_t r = hra_str(a, p->path[i]);

        if (r == 0)
            return -ENOMEM;
        *id = hra_path(a, *id, r);
        if (*id == HRA_PATH_TOO_DEEP || *id == 0)
            return 1;
    }
    return 0;
}

/* Adds RunPath p to range key k (checked by runpath_ok). Returns 0,
 * -EINVAL (why) or -ENOMEM. */
static int runpath_load(struct hra_agg *a, struct hra_key *k,
                        const Hostrange__RunKey *m,
                        const Hostrange__RunPath *given, char *why,
                        size_t whylen)
{
    Hostrange__RunPath same;
    const Hostrange__RunPath *p = given;
    uint64_t *incl = NULL, *self = NULL;
    uint32_t id;
    struct hra_key *pk;
    int rc = path_intern(a, p, &id);

    if (rc < 0)
        return rc;
    if (rc > 0) {
        /* Kept per range name only, as the daemon does. */
        hra_paths_skipped(a, id, p->pairs);
        return 0;
    }
    if (given->same_as_key) {
        /* The key's own values, coded as the key's. */
        same = *given;
        same.same_as_key = 0;
        HRA_KEY_PATH_COUNTERS_COPY(&same, m);
        same.events = m->events;
        same.inclusive = m->inclusive;
        same.n_inclusive = m->n_inclusive;
        same.self = m->self;
        same.n_self = m->n_self;
        same.inclusive_hist = m->inclusive_hist;
        same.self_hist = m->self_hist;
        p = &same;
    }
    if ((pk = hra_path_key(a, k, id)) == NULL)
        return -ENOMEM;
    if (p->events.len > 0) {
        if (hra_path_add_exact(a, pk, p->events.data, p->events.len,
                                   p->pairs) != 0)
            return -ENOMEM;
    } else if (p->inclusive_hist != NULL && pk->exact && pk->pairs == 0) {
        struct hrs_hist *hi = hist_from_msg(p->inclusive_hist);
        struct hrs_hist *hs = hist_from_msg(p->self_hist);

        if (hi == NULL || hs == NULL ||
            hra_path_set_hist(a, pk, hi, hs, p->pairs) != 0) {
            hrs_hist_fini(hi);
            hrs_hist_fini(hs);
            free(hi);
            free(hs);
            return -ENOMEM;
        }
    } else if (p->inclusive_hist != NULL) {
        if (hra_key_to_hist(a, pk) != 0 ||
            hra_key_unshare(a, pk) != 0 ||
            hist_merge(a, pk->incl, p->inclusive_hist) != 0 ||
            hist_merge(a, pk->self, p->self_hist) != 0)
            return -ENOMEM;
        pk->pairs += p->pairs;
        pk->has_scopes |= p->pairs > 0;
    } else {
        incl = malloc((p->pairs + 1) * sizeof *incl);
        self = malloc((p->pairs + 1) * sizeof *self);
        if (incl == NULL || self == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        if (!undelta(p->inclusive, p->pairs, incl) ||
            !undelta(p->self, p->pairs, self)) {
            rc = bad(why, whylen, "key %s/%s has a path with values beyond "
                     "2^64", m->node_id, m->range);
            goto out;
        }
        /* The i-th smallest self time pairs with the i-th smallest
         * inclusive time (runkey.h). */
        for (uint64_t i = 0; i < p->pairs && rc == 0; i++)
            rc = hra_path_add(a, pk, incl[i],
                                  self[i] <= incl[i] ? self[i] : incl[i]);
    }
    HRA_KEY_PATH_COUNTERS_MERGE(pk, p);
out:
    free(incl);
    free(self);
    return rc;
}

/* Checks key m's names, phase and counts, and that it holds its values one
 * way (events, histograms, or delta-coded values) in the numbers its
 * counts say. Returns 0 or -EINVAL (why). */
static int runkey_ok(const Hostrange__RunKey *m, char *why, size_t whylen)
{
    uint64_t all = m->pairs + m->records;
    int hist = m->inclusive_hist != NULL || m->self_hist != NULL;

    if (!hrp_key_names_ok(m->node_id, m->operator_, m->backend, m->range))
        return bad(why, whylen, "a key with an overlong name, or an empty "
                   "node id or range");
    if (hrp_phase_name(m->phase) == NULL)
        return bad(why, whylen, "key %s/%s has phase %u", m->node_id,
                   m->range, m->phase);
    if (all < m->pairs)
        return bad(why, whylen, "key %s/%s has absurd counts", m->node_id,
                   m->range);
    if (m->events.len > 0) {
        uint64_t np, nr;

        if (hist || m->n_inclusive || m->n_self)
            return bad(why, whylen, "key %s/%s holds both events and other "
                       "values", m->node_id, m->range);
        if (hra_events_check(m->events.data, m->events.len, &np,
                                 &nr) != 0)
            return bad(why, whylen, "key %s/%s has events that do not "
                       "decode", m->node_id, m->range);
        if (np != m->pairs || nr != m->records)
            return bad(why, whylen, "key %s/%s holds %llu events and %llu "
                       "records for %llu and %llu", m->node_id, m->range,
                       (unsigned long long)np, (unsigned long long)nr,
                       (unsigned long long)m->pairs,
                       (unsigned long long)m->records);
    } else if (hist) {
        if (m->inclusive_hist == NULL || m->self_hist == NULL ||
            m->n_inclusive || m->n_self ||
            !hist_ok(m->inclusive_hist, all) ||
            !hist_ok(m->self_hist, m->pairs))
            return bad(why, whylen, "key %s/%s has inconsistent histograms",
                       m->node_id, m->range);
    } else if (m->n_inclusive != all || m->n_self != m->pairs) {
        return bad(why, whylen, "key %s/%s holds %zu inclusive and %zu "
                   "self values for %llu events and %llu records",
                   m->node_id, m->range, m->n_inclusive, m->n_self,
                   (unsigned long long)m->pairs,
                   (unsigned long long)m->records);
    }
    return 0;
}

/* The values of a key that holds them delta-coded, decoded: the inclusive
 * times of its records then of its events, and the self times of its
 * events. */
struct key_values {
    uint64_t *incl;  /* [records + pairs] */
    uint64_t *self;  /* [pairs] */
};

/*
 * Decodes the values of key m (checked by runkey_ok, holding delta-coded
 * values) into v and checks them: none beyond 2^64, no self time above
 * its inclusive time. Returns 0, -EINVAL (why) or -ENOMEM; the caller
 * frees v's arrays either way.
 */
static int runkey_values(const Hostrange__RunKey *m, struct key_values *v,
                         char *why, size_t whylen)
{
    uint64_t all = m->pairs + m->records;

    v->incl = malloc((all + 1) * sizeof *v->incl);
    v->self = malloc((m->pairs + 1) * sizeof *v->self);
    if (v->incl == NULL || v->self == NULL)
        return -ENOMEM;
    if (!undelta(m->inclusive, all, v->incl) ||
        !undelta(m->self, m->pairs, v->self))
        return bad(why, whylen, "key %s/%s has values beyond 2^64",
                   m->node_id, m->range);
    for (uint64_t i = 0; i < m->pairs; i++) {
        if (v->self[i] > v->incl[m->records + i])
            return bad(why, whylen, "key %s/%s has self times above its "
                       "inclusive times", m->node_id, m->range);
    }
    return 0;
}

/* The key of m's names in l's aggregation, made when missing, into *k;
 * notes the ranks of its node id and range name. Returns 0 or -ENOMEM. */
static int runkey_find(struct hrr_runload *l, const Hostrange__RunKey *m,
                       struct hra_key **k)
{
    struct hra_agg *a = l->a;
    uint32_t node = hra_str(a, m->node_id);
    uint32_t op = hra_str(a, m->operator_);
    uint32_t backend = hra_str(a, m->backend);
    uint32_t range = hra_str(a, m->range);

    if (node == 0 || op == 0 || backend == 0 || range == 0 ||
        note_first(l, node, 0, m->node_rank) != 0 ||
        note_first(l, range, 1, m->range_rank) != 0 ||
        (*k = hra_agg_key(a, node, op, backend, m->phase, range)) == NULL)
        return -ENOMEM;
    return 0;
}

/*
 * A key whose one context holds all its events keeps them once (agg.h,
 * hra_key_join): when m's one path is same_as_key, that path is k's
 * to mirror, and *mirrored says whether it does (the path then needs no
 * loading of its own). Returns 0 or -ENOMEM.
 */
static int runkey_mirror(struct hra_agg *a, struct hra_key *k,
                         const Hostrange__RunKey *m, int *mirrored)
{
    uint32_t id = 0;
    int rc;

    if (m->n_paths == 1 && m->paths[0]->same_as_key &&
        (rc = path_intern(a, m->paths[0], &id)) != 0) {
        if (rc < 0)
            return rc;
        id = 0; /* not kept: nothing to mirror */
    }
    return hra_key_join(a, k, id, mirrored);
}

/* Adds the values of key m (checked; v its decoded values when it holds
 * delta-coded ones) to k: events as they are, a histogram by its buckets,
 * values one by one. Returns 0 or -ENOMEM. */
static int runkey_load_values(struct hra_agg *a, struct hra_key *k,
                              const Hostrange__RunKey *m,
                              const struct key_values *v)
{
    int hist = m->inclusive_hist != NULL || m->self_hist != NULL;
    int rc = 0;

    if (m->events.len > 0) {
        if ((rc = hra_key_add_exact(a, k, m->events.data, m->events.len,
                                        m->pairs, m->records)) != 0)
            return rc;
    } else if (hist && k->exact && k->pairs + k->records == 0) {
        struct hrs_hist *hi = hist_from_msg(m->inclusive_hist);
        struct hrs_hist *hs = hist_from_msg(m->self_hist);

        if (hi == NULL || hs == NULL ||
            hra_key_set_hist(a, k, hi, hs, m->pairs, m->records) != 0) {
            hrs_hist_fini(hi);
            hrs_hist_fini(hs);
            free(hi);
            free(hs);
            return -ENOMEM;
        }
    } else if (hist) {
        if (hra_key_to_hist(a, k) != 0 ||
            hra_key_unshare(a, k) != 0 ||
            hist_merge(a, k->incl, m->inclusive_hist) != 0 ||
            hist_merge(a, k->self, m->self_hist) != 0)
            return -ENOMEM;
        k->pairs += m->pairs;
        k->records += m->records;
        k->has_scopes |= m->pairs > 0;
        a->events += 2 * m->pairs + m->records;
    } else {
        /* The smallest inclusive values are taken as the records, the
         * others pair with the self values in order (runkey.h). */
        for (uint64_t i = 0; i < m->records && rc == 0; i++)
            rc = hra_add_record(a, k, v->incl[i]);
        for (uint64_t i = 0; i < m->pairs && rc == 0; i++)
            rc = hra_add(a, k, v->incl[m->records + i], v->self[i]);
        if (rc != 0)
            return rc;
    }
    HRA_KEY_COUNTERS_MERGE(k, m);
    return 0;
}

int hrr_runload_key(struct hrr_runload *l, const Hostrange__RunKey *m,
                    char *why, size_t whylen)
{
    struct key_values v = { NULL, NULL };
    int coded = m->events.len > 0;
    int hist = m->inclusive_hist != NULL || m->self_hist != NULL;
    struct hra_key *k;
    int mirrored = 0;
    int rc = runkey_ok(m, why, whylen);

    if (rc == 0 && !coded && !hist)
        rc = runkey_values(m, &v, why, whylen);
    for (size_t i = 0; i < m->n_paths && rc == 0; i++)
        rc = runpath_ok(m, m->paths[i], why, whylen);
    /* Checked: from here on the key is added. */
    if (rc == 0)
        rc = runkey_find(l, m, &k);
    if (rc == 0)
        rc = runkey_mirror(l->a, k, m, &mirrored);
    if (rc == 0)
        rc = runkey_load_values(l->a, k, m, &v);
    for (size_t i = (size_t)mirrored; i < m->n_paths && rc == 0; i++)
        rc = runpath_load(l->a, k, m, m->paths[i], why, whylen);
    if (rc == 0) {
        l->keys++;
        hra_enforce(l->a);
    }
    free(v.incl);
    free(v.self);
    return rc;
}

int hrr_runload_note(struct hrr_runload *l, uint32_t node, uint32_t node_rank,
                     uint32_t range, uint32_t range_rank)
{
    if (note_first(l, node, 0, node_rank) != 0 ||
        note_first(l, range, 1, range_rank) != 0)
        return -ENOMEM;
    return 0;
}

int hrr_runload_end(struct hrr_runload *l, const Hostrange__RunEnd *e)
{
    for (size_t i = 0; e != NULL && i < e->n_lost; i++) {
        uint32_t id;

        if (!str_ok(e->lost[i]->node_id))
            continue;
        id = hra_str(l->a, e->lost[i]->node_id);
        if (id == 0)
            return -ENOMEM;
        hra_lost_add(l->a, id, (int64_t)e->lost[i]->lost);
    }
    l->run++;
    return 0;
}

struct ranked {
    uint64_t first;
    uint32_t id;
};

static int cmp_ranked(const void *pa, const void *pb)
{
    const struct ranked *x = pa, *y = pb;

    if (x->first != y->first)
        return (x->first > y->first) - (x->first < y->first);
    return (x->id > y->id) - (x->id < y->id);
}

int hrr_runload_finish(struct hrr_runload *l)
{
    struct ranked *r = malloc((l->cap / 2 + 1) * sizeof *r);

    if (r == NULL)
        return -ENOMEM;
    hra_paths_share(l->a);
    for (int which = 0; which < 2; which++) {
        size_t n = 0;

        for (uint32_t slot = (uint32_t)which; slot < l->cap; slot += 2) {
            if (l->first[slot] != 0)
                r[n++] = (struct ranked){ l->first[slot], slot / 2 + 1 };
        }
        qsort(r, n, sizeof *r, cmp_ranked);
        for (size_t i = 0; i < n; i++) {
            if (which == 0)
                hra_rank_node(l->a, r[i].id);
            else
                hra_rank_range(l->a, r[i].id);
        }
    }
    free(r);
    return 0;
}
