/* Run files read into populations for diff and bisect (see runside.h). */
#include "config.h"

#include "lib/run/runside.h"
#include "lib/stat/hist.h"
#include "lib/run/runscan.h"
#include "lib/stat/summary.h"
#include "lib/util/grow.h"
#include "proto/stream.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends population p to s. Returns 0 or -ENOMEM. */
static int pop_add(struct hrr_diff_side *s, struct hrr_diff_pop *p)
{
    if (hru_grow(&s->p, &s->cap, s->n + 1, sizeof *s->p, 256) != 0)
        return -ENOMEM;
    p->id = s->n;
    s->p[s->n++] = *p;
    return 0;
}

/* Room for the distinct values of n values. Returns 0 or -ENOMEM. */
static int pop_room(struct hrr_diff_pop *p, size_t n)
{
    p->v = malloc((n + 1) * sizeof *p->v);
    p->w = malloc((n + 1) * sizeof *p->w);
    return p->v == NULL || p->w == NULL ? -ENOMEM : 0;
}

/* Completes a population of n values whose `distinct` distinct values
 * are in p->v / p->w: the smallest gap between them (`gap`, when `any`),
 * the total and the median. */
static void pop_done(struct hrr_diff_pop *p, size_t n, size_t distinct, uint64_t any,
                     uint64_t gap)
{
    p->n = distinct;
    p->step = any ? (double)gap : INFINITY;
    p->total = n;
    p->median = hrs_signif_median(&(struct hrs_wsample){ p->v, p->w, p->n,
                                                         p->total });
}

/* Distinct values of n ascending values, given as they are (`deltas` 0)
 * or delta-coded (each value less the one before it; 1). Without
 * branches on the values: each value is written at the slot of its group
 * of equal values (the group's last one stays), with the count of values
 * so far, which a pass over the groups then turns into their counts.
 * Returns 0 or -ENOMEM. */
static inline int from_ascending(struct hrr_diff_pop *p, const uint64_t *a, size_t n,
                                 int deltas)
{
    /* The smallest gap less 1: a gap of 0 (equal values) wraps to the
     * largest. */
    uint64_t v = 0, gap1 = UINT64_MAX;
    size_t at = 0;
    int rc = pop_room(p, n);

    if (rc != 0)
        return rc;
    if (n > 0) {
        v = a[0];
        p->v[0] = (double)v;
        p->w[0] = 1;
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t di = deltas ? a[i] : a[i] - a[i - 1];

        v += di;
        at += di != 0; /* a new distinct value */
        p->v[at] = (double)v;
        p->w[at] = i + 1;
        gap1 = di - 1 < gap1 ? di - 1 : gap1;
    }
    for (size_t g = at; g > 0; g--)
        p->w[g] -= p->w[g - 1];
    pop_done(p, n, n > 0 ? at + 1 : 0, at > 0, gap1 + 1);
    return 0;
}

static int from_deltas(struct hrr_diff_pop *p, const uint64_t *d, size_t n)
{
    return from_ascending(p, d, n, 1);
}

static int from_sorted(struct hrr_diff_pop *p, const uint64_t *v, size_t n)
{
    return from_ascending(p, v, n, 0);
}

/* The population of a saved histogram: its buckets' values. Returns 0,
 * -ENOMEM, or -EINVAL (a bucket out of range, or given twice). */
static int from_hist(struct hrr_diff_pop *p, const Hostrange__RunHist *m)
{
    struct hrs_hist h;
    const double half = 0.5;
    int rc;

    p->hist = 1;
    p->step = INFINITY;
    hrs_hist_init(&h);
    rc = pop_room(p, m->n_buckets);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < m->n_buckets; i++) {
        /* The bucket is checked before its value is taken. */
        rc = hrs_hist_set_bucket(&h, m->buckets[i], m->counts[i]);
        if (rc != 0) {
            hrs_hist_fini(&h);
            return rc;
        }
        p->v[i] = hrs_hist_value(m->buckets[i]);
        p->w[i] = m->counts[i];
    }
    p->n = m->n_buckets;
    p->total = m->n;
    h.n = m->n;
    h.min = m->min;
    h.max = m->max;
    hrs_hist_quantiles(&h, &half, 1, &p->median);
    hrs_hist_fini(&h);
    return 0;
}

int hrr_runside_open(struct hrr_diff_side *s, const char *path, char *err,
                     size_t errlen)
{
    int rc;

    s->path = path;
    rc = hrr_open(&s->r, path, &s->header, err, errlen);
    if (rc == -ENOMEM)
        return rc;
    if (rc != 0)
        return -EIO;
    s->open = 1;
    return 0;
}

/* Room for n values in each of the side's scratch arrays. Returns 0, or
 * -ENOMEM with why in err. */
static int side_room(struct hrr_diff_side *s, uint64_t n, char *err, size_t errlen)
{
    if (n + 1 > s->vcap) {
        size_t cap = (size_t)n + 1;
        uint64_t *a = realloc(s->incl, cap * sizeof *a);
        uint64_t *b = a ? realloc(s->self, cap * sizeof *b) : NULL;
        uint64_t *c = b ? realloc(s->tmp, cap * sizeof *c) : NULL;

        s->incl = a ? a : s->incl;
        s->self = b ? b : s->self;
        s->tmp = c ? c : s->tmp;
        if (c == NULL) {
            snprintf(err, errlen, "%s: out of memory", s->path);
            return -ENOMEM;
        }
        s->vcap = cap;
    }
    return 0;
}

/* Decodes a key's events (RunKey.events) into s->incl and s->self, each
 * sorted. Returns 0, or with why in err -ENOMEM or -EINVAL (events that do
 * not match the key's counts). */
static int coded_values(struct hrr_diff_side *s, const Hostrange__RunKey *k,
                        char *err, size_t errlen)
{
    uint64_t all = k->pairs + k->records;
    size_t ni, ns;
    int rc;

    if (all < k->pairs || all > k->events.len || k->n_inclusive ||
        k->n_self)
        goto damaged;
    rc = side_room(s, all, err, errlen);
    if (rc != 0)
        return rc;
    if (hra_events_decode(k->events.data, k->events.len, s->incl, all,
                              &ni, s->self, k->pairs, &ns) != 0 ||
        ni != all || ns != k->pairs)
        goto damaged;
    hrs_sort_u64(s->incl, ni, s->tmp);
    hrs_sort_u64(s->self, ns, s->tmp);
    return 0;
damaged:
    snprintf(err, errlen, "%s: damaged (key %s/%s holds events that do not "
             "match its counts)", s->path, k->node_id, k->range);
    return -EINVAL;
}

/* What a population takes from its key, from the key's message or read
 * in place: node id, operator, backend and range (n[i] bytes at s[i]),
 * phase, ranks and counts. */
struct keyhead {
    const char *s[4];
    size_t n[4];
    uint32_t phase, node_rank, range_rank;
    uint64_t pairs;
    HRA_KEY_ROW_COUNTER_FIELDS
};

/* Starts population `metric` (1 inclusive, 2 self) of key h: everything
 * but its values. Returns 0 or -ENOMEM (pop_free frees what was had). */
static int pop_start(struct hrr_diff_pop *p, const struct keyhead *h, uint32_t metric,
                     uint32_t order)
{
    *p = (struct hrr_diff_pop){ 0 };
    p->node = strndup(h->s[0], h->n[0]);
    p->op = strndup(h->s[1], h->n[1]);
    p->backend = strndup(h->s[2], h->n[2]);
    p->range = strndup(h->s[3], h->n[3]);
    p->phase = h->phase;
    p->metric = metric;
    p->node_rank = h->node_rank ? h->node_rank : UINT32_MAX;
    p->range_rank = h->range_rank ? h->range_rank : UINT32_MAX;
    p->order = order;
    p->scopes = h->pairs > 0;
    p->calls = h->pairs;
    HRA_KEY_ROW_COUNTERS_COPY(p, h);
    return p->node && p->op && p->backend && p->range ? 0 : -ENOMEM;
}

static void pop_free(struct hrr_diff_pop *p)
{
    free(p->node);
    free(p->op);
    free(p->backend);
    free(p->range);
    free(p->v);
    free(p->w);
}

/* Appends population p, whose values were filled (`bad` non-zero: or not;
 * -EINVAL: a damaged histogram, else out of memory), to s when it has
 * values; frees it otherwise. Returns 0, or -EINVAL or -ENOMEM with why in
 * err. */
static int pop_keep(struct hrr_diff_side *s, struct hrr_diff_pop *p, int bad, char *err,
                    size_t errlen)
{
    if (bad == 0 && p->total > 0) {
        bad = pop_add(s, p);
        if (bad == 0)
            return 0;
    }
    pop_free(p);
    if (bad == -EINVAL) {
        snprintf(err, errlen, "%s: damaged (a histogram holds a bucket out "
                 "of range, or one twice)", s->path);
        return -EINVAL;
    }
    if (bad != 0) {
        snprintf(err, errlen, "%s: out of memory", s->path);
        return -ENOMEM;
    }
    return 0;
}

/* Decodes n varints, which hrr_runscan_key checked, at q into out. */
static void get_varints(const uint8_t *q, size_t len, uint64_t *out, size_t n)
{
    const uint8_t *end = q + len;

    for (size_t i = 0; i < n; i++) {
        if (*q < 0x80)
            out[i] = *q++;
        else
            (void)hrp_get_varint(&q, end, &out[i]);
    }
}

/* The populations of a key of run format 1 read in place (sc, simple:
 * runscan.h), its delta-coded arrays decoded straight from the record's
 * bytes. Returns 0, or -ENOMEM with why in err. */
static int key_scanned(struct hrr_diff_side *s, const struct hrr_runscan *sc,
                       char *err, size_t errlen)
{
    struct keyhead h = { .phase = sc->phase, .node_rank = sc->node_rank,
                         .range_rank = sc->range_rank, .pairs = sc->pairs };
    uint64_t all = sc->pairs + sc->records;
    int rc;

    HRA_KEY_ROW_COUNTERS_COPY(&h, &sc->v);

    for (int i = 0; i < 4; i++) {
        h.s[i] = (const char *)sc->s[i];
        h.n[i] = sc->n[i];
    }
    rc = side_room(s, all, err, errlen);
    if (rc != 0)
        return rc;
    get_varints(sc->v.incl, sc->v.li, s->incl, all);
    get_varints(sc->v.self, sc->v.ls, s->self, sc->pairs);
    for (uint32_t metric = 1; metric <= 2; metric++) {
        struct hrr_diff_pop p;
        int bad;

        if (metric == 2 && sc->pairs == 0)
            break;
        bad = pop_start(&p, &h, metric, s->order) != 0 ||
              from_deltas(&p, metric == 1 ? s->incl : s->self,
                          metric == 1 ? all : sc->pairs) != 0;
        rc = pop_keep(s, &p, bad, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The populations of an unpacked key. Returns 0, or with why in err
 * -ENOMEM or -EINVAL (values that do not match the key's counts). A
 * histogram that cannot be read is told as out of memory. */
static int key_unpacked(struct hrr_diff_side *s, const Hostrange__RunKey *k,
                        char *err, size_t errlen)
{
    struct keyhead h = { .phase = k->phase, .node_rank = k->node_rank,
                         .range_rank = k->range_rank, .pairs = k->pairs };
    const char *names[4] = { k->node_id, k->operator_, k->backend,
                             k->range };
    int rc;

    HRA_KEY_ROW_COUNTERS_COPY(&h, k);
    for (int i = 0; i < 4; i++) {
        h.s[i] = names[i];
        h.n[i] = strlen(names[i]);
    }
    if (k->events.len > 0 && (rc = coded_values(s, k, err, errlen)) != 0)
        return rc;
    for (uint32_t metric = 1; metric <= 2; metric++) {
        struct hrr_diff_pop p;
        int bad;

        if (metric == 2 && k->pairs == 0)
            break;
        bad = pop_start(&p, &h, metric, s->order) != 0;
        if (bad)
            ;
        else if (k->inclusive_hist != NULL && k->self_hist != NULL)
            bad = from_hist(&p, metric == 1 ? k->inclusive_hist
                                            : k->self_hist);
        else if (k->events.len > 0)
            bad = from_sorted(&p, metric == 1 ? s->incl : s->self,
                              metric == 1 ? k->pairs + k->records : k->pairs);
        else if (metric == 1 && k->n_inclusive == k->pairs + k->records)
            bad = from_deltas(&p, k->inclusive, k->n_inclusive);
        else if (metric == 2 && k->n_self == k->pairs)
            bad = from_deltas(&p, k->self, k->n_self);
        else {
            snprintf(err, errlen, "%s: damaged (key %s/%s holds values "
                     "that do not match its counts)", s->path, k->node_id,
                     k->range);
            pop_free(&p);
            return -EINVAL;
        }
        rc = pop_keep(s, &p, bad, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int hrr_runside_next(struct hrr_diff_side *s, char *err, size_t errlen)
{
    const uint8_t *packed;
    size_t len;
    struct hrr_runscan sc;
    int rc = hrr_next_packed(&s->r, &packed, &len, &s->end, err,
                                 errlen);

    if (rc < 0)
        goto fail;
    if (rc == 2) {
        hrr_close(&s->r);
        s->open = 0;
        s->ended = 1;
        if (s->end->n_calibrations > 0)
            s->cal = s->end->calibrations[0];
        return 0;
    }
    /* Keys of run format 1 (sorted) are read in place, without unpacking
     * their arrays; any other key (events, histograms, or one that is not
     * in the layout runscan.h vouches for) is unpacked. */
    if (hrr_runscan_key(packed, len, HRR_FORMAT_SORTED, &sc)) {
        rc = key_scanned(s, &sc, err, errlen);
    } else {
        Hostrange__RunKey *k = NULL;

        rc = hrr_unpack_key(&s->r, packed, len, &k, err, errlen);
        if (rc == 0)
            rc = key_unpacked(s, k, err, errlen);
        hostrange__run_key__free_unpacked(k, NULL);
    }
    if (rc != 0)
        goto fail;
    s->order++;
    return 0;
fail:
    /* Out of memory is not the file's fault: err is left alone. */
    return rc == -ENOMEM ? rc : -EIO;
}

void hrr_runside_free(struct hrr_diff_side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->p[i].node);
        free(s->p[i].op);
        free(s->p[i].backend);
        free(s->p[i].range);
        free(s->p[i].v);
        free(s->p[i].w);
    }
    free(s->p);
    free(s->incl);
    free(s->self);
    free(s->tmp);
    if (s->open)
        hrr_close(&s->r);
    if (s->end != NULL)
        hostrange__run_end__free_unpacked(s->end, NULL);
    if (s->header != NULL)
        hostrange__run_header__free_unpacked(s->header, NULL);
}

double hrr_runside_clock_step(const struct hrr_diff_side *s)
{
    return s->header != NULL && s->header->fingerprint != NULL
               ? s->header->fingerprint->clock_step_ns
               : 0;
}
