/* Keys of run files (see runkey.h). */
#include "config.h"

#include "daemon/runkey.h"
#include "daemon/observer.h"
#include "daemon/pbuf.h"
#include "daemon/runput.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- saving --------------------------------------------------------------- */

static Hostrange__RunHist *hist_to_msg(const struct hrd_hist *h)
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
    m->sumsq_hi = (double)hrd_hist_sumsq(h);
    m->sumsq_lo = (double)(hrd_hist_sumsq(h) - (long double)m->sumsq_hi);
    m->n_buckets = m->n_counts = h->nb;
    {
        uint64_t cnt;
        uint32_t i = 0;

        for (uint32_t b = hrd_hist_next(h, 0, &cnt);
             b < HRD_HIST_BUCKETS && i < h->nb;
             b = hrd_hist_next(h, b + 1, &cnt), i++) {
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
    hrd_sort_u64(v, n, tmp);
    for (size_t i = n; i-- > 1;)
        v[i] -= v[i - 1];
}

/* Fills p (initialised here) from path key pk: its names (borrowed from
 * a) and its values, as a RunKey's. When pk holds the very events of its
 * range key (a mirror's view), already coded in m, the values are copied
 * from m rather than sorted again. Returns 0 or -ENOMEM (p then holds
 * what it holds; runpath_clear frees it). */
static int runpath_from(struct hrd_agg *a, const struct hrd_key *pk,
                        const Hostrange__RunKey *m, int format, int mirror,
                        Hostrange__RunPath *p)
{
    const char *names[HRD_MAX_DEPTH_LIMIT];
    uint32_t depth = hrd_agg_path_names(a, pk->path, names);

    hostrange__run_path__init(p);
    p->path = malloc((depth + 1) * sizeof *p->path);
    if (p->path == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < depth; i++)
        p->path[i] = (char *)names[i];
    p->n_path = depth;
    p->pairs = pk->pairs;
    p->children = pk->children;
    p->descendants = pk->descendants;
    if (format >= HRD_RUN_FORMAT_EVENTS && mirror) {
        p->same_as_key = 1;
        return 0;
    }
    if (format >= HRD_RUN_FORMAT_EVENTS && pk->exact) {
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
            hrd_agg_key_values(pk, p->inclusive, &ni, p->self, &ns);
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
static int runkey_paths(struct hrd_agg *a, const struct hrd_key *k,
                        int format, Hostrange__RunKey *m)
{
    size_t n = 0;

    for (const struct hrd_key *p = k->paths; p != NULL; p = p->pnext)
        n++;
    if (n == 0)
        return 0;
    m->paths = calloc(n, sizeof *m->paths);
    if (m->paths == NULL)
        return -ENOMEM;
    for (const struct hrd_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
        Hostrange__RunPath *x = calloc(1, sizeof *x);
        struct hrd_key tmp;
        const struct hrd_key *p = hrd_agg_path_view(k, pp, &tmp);
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

int hrd_runkey_from(struct hrd_agg *a, const struct hrd_key *k, int format,
                    Hostrange__RunKey *m)
{
    int rc = hrd_runkey_from_range(a, k, format, m);

    if (rc == 0 && runkey_paths(a, k, format, m) != 0) {
        hrd_runkey_clear(m);
        rc = -ENOMEM;
    }
    return rc;
}

int hrd_runkey_from_range(struct hrd_agg *a, const struct hrd_key *k,
                          int format, Hostrange__RunKey *m)
{
    hostrange__run_key__init(m);
    m->node_id = (char *)hrd_agg_str_get(a, k->node);
    m->operator_ = (char *)hrd_agg_str_get(a, k->op);
    m->backend = (char *)hrd_agg_str_get(a, k->backend);
    m->phase = k->phase;
    m->range = (char *)hrd_agg_str_get(a, k->range);
    m->node_rank = a->str.rank[k->node - 1];
    m->range_rank = a->str.rank[k->range - 1];
    m->pairs = k->pairs;
    m->records = k->records;
    m->children = k->children;
    m->descendants = k->descendants;
    if (k->exact && format >= HRD_RUN_FORMAT_EVENTS) {
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
            hrd_runkey_clear(m);
            return -ENOMEM;
        }
        hrd_agg_key_values(k, m->inclusive, &ni, m->self, &ns);
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
        hrd_runkey_clear(m);
        return -ENOMEM;
    }
    return 0;
}

void hrd_runkey_clear(Hostrange__RunKey *m)
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

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hrd_key *x = *(struct hrd_key *const *)pa;
    const struct hrd_key *y = *(struct hrd_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

/* The RunEnd of a save: clients (oldest first), calibrations, clocks and
 * lost counts. Everything is in one allocation besides the calibrations'
 * strings, which a owns. */
static Hostrange__RunEnd *make_end(struct hrd_agg *a,
                                   const struct hrd_ingest *in, uint64_t keys)
{
    struct hrd_calib *cal = NULL;
    size_t ncal = 0, nlost = 0, i;
    const struct hrd_client *c;
    Hostrange__RunEnd *e;
    struct {
        Hostrange__RunEnd e;
        Hostrange__ClientStats *cs;
        Hostrange__Calibration *cm;
        Hostrange__RunNodeLost *lm;
    } *all;

    if (hrd_calib_collect(a, &cal, &ncal) != 0)
        return NULL;
    for (uint32_t id = 1; id <= a->str.n; id++)
        nlost += a->str.lost[id - 1] != 0;
    all = calloc(1, sizeof *all);
    if (all == NULL)
        goto fail;
    e = &all->e;
    hostrange__run_end__init(e);
    e->keys = keys;
    all->cs = calloc(in->nclients + 1, sizeof *all->cs);
    e->clients = calloc(in->nclients + 1, sizeof *e->clients);
    e->clocks = calloc(in->nclients + 1, sizeof *e->clocks);
    all->cm = calloc(ncal + 1, sizeof *all->cm);
    e->calibrations = calloc(ncal + 1, sizeof *e->calibrations);
    all->lm = calloc(nlost + 1, sizeof *all->lm);
    e->lost = calloc(nlost + 1, sizeof *e->lost);
    if (all->cs == NULL || e->clients == NULL || e->clocks == NULL ||
        all->cm == NULL || e->calibrations == NULL || all->lm == NULL ||
        e->lost == NULL)
        goto fail;
    i = in->nclients;
    for (c = in->clients; c != NULL; c = c->next) {
        hrd_ingest_client_stats(&all->cs[--i], c);
        e->clients[i] = &all->cs[i];
    }
    e->n_clients = in->nclients;
    for (i = 0; i < e->n_clients; i++) {
        char *clock = e->clients[i]->clock;
        size_t j;

        for (j = 0; j < e->n_clocks && strcmp(e->clocks[j], clock); j++)
            ;
        if (j == e->n_clocks && clock[0] != '\0')
            e->clocks[e->n_clocks++] = clock;
    }
    for (i = 0; i < ncal; i++) {
        Hostrange__Calibration *m = &all->cm[i];

        hostrange__calibration__init(m);
        m->label = (char *)cal[i].label;
        m->clock = (char *)cal[i].clock;
        m->child_ns = cal[i].child_ns;
        m->residue_ns = cal[i].residue_ns;
        m->empty_ns = cal[i].empty_ns;
        m->timer_ns = cal[i].timer_ns;
        m->calls = cal[i].calls;
        e->calibrations[i] = m;
    }
    e->n_calibrations = ncal;
    for (uint32_t id = 1; id <= a->str.n; id++) {
        if (a->str.lost[id - 1] == 0)
            continue;
        hostrange__run_node_lost__init(&all->lm[e->n_lost]);
        all->lm[e->n_lost].node_id = a->str.s[id - 1];
        all->lm[e->n_lost].lost = a->str.lost[id - 1];
        e->lost[e->n_lost] = &all->lm[e->n_lost];
        e->n_lost++;
    }
    free(cal);
    return e;
fail:
    if (all != NULL) {
        free(all->cs);
        free(all->e.clients);
        free(all->e.clocks);
        free(all->cm);
        free(all->e.calibrations);
        free(all->lm);
        free(all->e.lost);
        free(all);
    }
    free(cal);
    return NULL;
}

static void end_free(Hostrange__RunEnd *e)
{
    /* e is the first member of its allocation (make_end). */
    struct {
        Hostrange__RunEnd e;
        Hostrange__ClientStats *cs;
        Hostrange__Calibration *cm;
        Hostrange__RunNodeLost *lm;
    } *all = (void *)e;

    if (e == NULL)
        return;
    free(all->cs);
    free(e->clients);
    free(e->clocks);
    free(all->cm);
    free(e->calibrations);
    free(all->lm);
    free(e->lost);
    free(all);
}

/* Appends key k of a for run format `format` to out as field 4 of a
 * SaveReply (packed_keys): by hand where hrd_runput_key writes it, else
 * packed by protobuf-c straight into out. Returns 0 or -ENOMEM. */
static int page_put(struct hrd_agg *a, const struct hrd_key *k, int format,
                    struct hrd_pbuf *out, struct hrd_runput_tmp *t)
{
    Hostrange__RunKey m;
    size_t len;
    int rc = format < HRD_RUN_FORMAT_EVENTS
                 ? hrd_runput_key(a, k, 4, out, t)
                 : 1;

    if (rc <= 0)
        return rc;
    if (hrd_runkey_from(a, k, format, &m) != 0)
        return -ENOMEM;
    len = hostrange__run_key__get_packed_size(&m);
    if (hrd_pbuf_room(out, hrd_pb_bytes_size(4, len)) == 0) {
        uint8_t *o = hrd_pb_len(out->p + out->len, 4, len);

        o += hostrange__run_key__pack(&m, o);
        out->len = (size_t)(o - out->p);
        rc = 0;
    } else {
        rc = -ENOMEM;
    }
    hrd_runkey_clear(&m);
    return rc;
}

int hrd_runkey_page(struct hrd_agg *a, const struct hrd_ingest *in,
                    uint32_t *cursor, uint64_t budget, int packed,
                    int format, struct hrd_pbuf *out,
                    Hostrange__SaveReply *r, int *done)
{
    struct hrd_key **ks;
    struct hrd_runput_tmp t = { NULL, 0, NULL, 0 };
    size_t n = 0, used = 0;
    uint64_t values = 0;

    hostrange__save_reply__init(r);
    *done = 0;
    ks = malloc((a->nkeys + 1) * sizeof *ks);
    if (out != NULL) {
        /* Room for a page at the first go (up to 16 MiB): a value takes
         * a byte or two, a key its fields (its 64 values in the budget). */
        uint64_t guess = budget + budget / 2;

        out->len = 0;
        if (budget != 0 &&
            hrd_pbuf_room(out, guess < (16u << 20) ? guess : 16u << 20) != 0)
            goto fail;
    }
    else if (packed)
        r->packed_keys = calloc(a->nkeys + 1, sizeof *r->packed_keys);
    else
        r->keys = calloc(a->nkeys + 1, sizeof *r->keys);
    if (ks == NULL ||
        (out == NULL && r->keys == NULL && r->packed_keys == NULL))
        goto fail;
    for (uint32_t i = 0; i < a->nkeys; i++) {
        if (a->keys[i]->serial >= *cursor)
            ks[n++] = a->keys[i];
    }
    qsort(ks, n, sizeof *ks, cmp_serial);
    while (used < n && (used == 0 || budget == 0 || values < budget)) {
        const struct hrd_key *k = ks[used];
        Hostrange__RunKey *m;

        if (out != NULL) {
            if (page_put(a, k, format, out, &t) != 0)
                goto fail;
            goto next;
        }
        m = malloc(sizeof *m);
        if (m == NULL || hrd_runkey_from(a, k, format, m) != 0) {
            free(m);
            goto fail;
        }
        if (packed) {
            /* Packed at once, so that the page holds the key's bytes,
             * not its arrays of values. */
            ProtobufCBinaryData *b = &r->packed_keys[r->n_packed_keys];

            b->len = hostrange__run_key__get_packed_size(m);
            b->data = malloc(b->len + 1);
            if (b->data != NULL) {
                hostrange__run_key__pack(m, b->data);
                r->n_packed_keys++;
            }
            hrd_runkey_clear(m);
            free(m);
            if (b->data == NULL)
                goto fail;
        } else {
            r->keys[r->n_keys++] = m;
        }
    next:
        values += 64 + (k->exact ? 2 * k->pairs + k->records
                                 : 2 * (uint64_t)(k->incl->nb + k->self->nb));
        for (const struct hrd_key *pp = k->paths; pp != NULL;
             pp = pp->pnext) {
            struct hrd_key tmp;
            const struct hrd_key *p = hrd_agg_path_view(k, pp, &tmp);

            values += 64 + (p->exact ? 2 * p->pairs
                                     : 2 * (uint64_t)(p->incl->nb +
                                                      p->self->nb));
        }
        *cursor = k->serial + 1;
        used++;
    }
    if (used == n) {
        /* The key count of the file is the client's to fill in. */
        r->end = make_end(a, in, 0);
        if (r->end == NULL)
            goto fail;
        *done = 1;
    }
    free(ks);
    hrd_runput_tmp_fini(&t);
    return 0;
fail:
    free(ks);
    hrd_runput_tmp_fini(&t);
    hrd_runkey_page_free(r);
    return -ENOMEM;
}

void hrd_runkey_page_free(Hostrange__SaveReply *r)
{
    for (size_t i = 0; i < r->n_packed_keys; i++)
        free(r->packed_keys[i].data);
    free(r->packed_keys);
    r->packed_keys = NULL;
    r->n_packed_keys = 0;
    for (size_t i = 0; i < r->n_keys; i++) {
        hrd_runkey_clear(r->keys[i]);
        free(r->keys[i]);
    }
    free(r->keys);
    end_free(r->end);
    r->keys = NULL;
    r->n_keys = 0;
    r->end = NULL;
}

/* --- loading -------------------------------------------------------------- */

void hrd_runload_init(struct hrd_runload *l, struct hrd_agg *a)
{
    memset(l, 0, sizeof *l);
    l->a = a;
}

void hrd_runload_fini(struct hrd_runload *l)
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
    size_t n = strlen(s);
    return n > 0 && n <= HRP_MAX_STRING;
}

static int hist_ok(const Hostrange__RunHist *h, uint64_t n)
{
    uint64_t total = 0;

    if (h->n != n || h->n_buckets != h->n_counts ||
        h->n_buckets > HRD_HIST_BUCKETS || (n > 0 && h->min > h->max))
        return 0;
    for (size_t i = 0; i < h->n_buckets; i++) {
        if (h->buckets[i] >= HRD_HIST_BUCKETS ||
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

static struct hrd_hist *hist_from_msg(const Hostrange__RunHist *m)
{
    struct hrd_hist *h = calloc(1, sizeof *h);

    if (h == NULL)
        return NULL;
    hrd_hist_init(h);
    for (size_t i = 0; i < m->n_buckets; i++) {
        if (hrd_hist_set_bucket(h, m->buckets[i], m->counts[i]) != 0) {
            hrd_hist_fini(h);
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
static int hist_merge(struct hrd_agg *a, struct hrd_hist *h,
                      const Hostrange__RunHist *m)
{
    size_t before = hrd_hist_bytes(h);
    uint64_t n0 = h->n, min0 = h->min, max0 = h->max;
    unsigned __int128 sum0 = h->sum;
    unsigned __int128 sq_small0 = h->sumsq_small;
    long double sq_big0 = h->sumsq_big;

    for (size_t i = 0; i < m->n_buckets; i++) {
        uint64_t v = (uint64_t)hrd_hist_value(m->buckets[i]);
        if (hrd_hist_add_n(h, v, m->counts[i]) != 0)
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
    a->bytes += hrd_hist_bytes(h) - before;
    return 0;
}

/* Notes the first run and rank of string id in slot 2 * (id - 1) + which
 * (0: as a node id, 1: as a range name). */
static int note_first(struct hrd_runload *l, uint32_t id, int which,
                      uint32_t rank)
{
    uint64_t v;

    if (rank == 0)
        rank = UINT32_MAX; /* unranked: after the ranked ones */
    v = ((uint64_t)l->run << 32 | rank) + 1;
    size_t slot = 2 * (size_t)(id - 1) + (size_t)which;

    if (slot >= l->cap) {
        uint32_t cap = l->cap ? l->cap : 256;
        uint64_t *nf;

        while (cap <= slot)
            cap *= 2;
        nf = realloc(l->first, cap * sizeof *nf);
        if (nf == NULL)
            return -ENOMEM;
        memset(nf + l->cap, 0, (cap - l->cap) * sizeof *nf);
        l->first = nf;
        l->cap = cap;
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

    if (p->n_path == 0 || p->n_path > HRD_MAX_DEPTH_LIMIT ||
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
            hrd_agg_events_check(p->events.data, p->events.len, &np,
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
 * kept (*id is then 0 or HRD_PATH_TOO_DEEP), -ENOMEM. */
static int path_intern(struct hrd_agg *a, const Hostrange__RunPath *p,
                       uint32_t *id)
{
    *id = 0;
    for (size_t i = 0; i < p->n_path; i++) {
        uint32_t r = hrd_agg_str(a, p->path[i]);

        if (r == 0)
            return -ENOMEM;
        *id = hrd_agg_path(a, *id, r);
        if (*id == HRD_PATH_TOO_DEEP || *id == 0)
            return 1;
    }
    return 0;
}

/* Adds RunPath p to range key k (checked by runpath_ok). Returns 0,
 * -EINVAL (why) or -ENOMEM. */
static int runpath_load(struct hrd_agg *a, struct hrd_key *k,
                        const Hostrange__RunKey *m,
                        const Hostrange__RunPath *given, char *why,
                        size_t whylen)
{
    Hostrange__RunPath same;
    const Hostrange__RunPath *p = given;
    uint64_t *incl = NULL, *self = NULL;
    uint32_t id;
    struct hrd_key *pk;
    int rc = path_intern(a, p, &id);

    if (rc < 0)
        return rc;
    if (rc > 0) {
        /* Kept per range name only, as the daemon does. */
        if (id == 0)
            a->paths_table_full += p->pairs;
        else
            a->paths_too_deep += p->pairs;
        return 0;
    }
    if (given->same_as_key) {
        /* The key's own values, coded as the key's. */
        same = *given;
        same.same_as_key = 0;
        same.pairs = m->pairs;
        same.children = m->children;
        same.descendants = m->descendants;
        same.events = m->events;
        same.inclusive = m->inclusive;
        same.n_inclusive = m->n_inclusive;
        same.self = m->self;
        same.n_self = m->n_self;
        same.inclusive_hist = m->inclusive_hist;
        same.self_hist = m->self_hist;
        p = &same;
    }
    if ((pk = hrd_agg_path_key(a, k, id)) == NULL)
        return -ENOMEM;
    if (p->events.len > 0) {
        if (hrd_agg_path_add_exact(a, pk, p->events.data, p->events.len,
                                   p->pairs) != 0)
            return -ENOMEM;
    } else if (p->inclusive_hist != NULL && pk->exact && pk->pairs == 0) {
        struct hrd_hist *hi = hist_from_msg(p->inclusive_hist);
        struct hrd_hist *hs = hist_from_msg(p->self_hist);

        if (hi == NULL || hs == NULL ||
            hrd_agg_path_set_hist(a, pk, hi, hs, p->pairs) != 0) {
            hrd_hist_fini(hi);
            hrd_hist_fini(hs);
            free(hi);
            free(hs);
            return -ENOMEM;
        }
    } else if (p->inclusive_hist != NULL) {
        if (hrd_agg_key_to_hist(a, pk) != 0 ||
            hrd_agg_key_unshare(a, pk) != 0 ||
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
            rc = hrd_agg_path_add(a, pk, incl[i],
                                  self[i] <= incl[i] ? self[i] : incl[i]);
    }
    pk->children += p->children;
    pk->descendants += p->descendants;
out:
    free(incl);
    free(self);
    return rc;
}

int hrd_runload_key(struct hrd_runload *l, const Hostrange__RunKey *m,
                    char *why, size_t whylen)
{
    struct hrd_agg *a = l->a;
    uint64_t all = m->pairs + m->records, *incl = NULL, *self = NULL;
    uint32_t node, op, backend, range;
    struct hrd_key *k;
    int hist = m->inclusive_hist != NULL || m->self_hist != NULL;
    int coded = m->events.len > 0, keep = 0;
    int rc = 0;

    if (!str_ok(m->node_id) || !str_ok(m->operator_) ||
        !str_ok(m->backend) || !str_ok(m->range))
        return bad(why, whylen, "a key with an empty or overlong name");
    if (hrp_phase_name(m->phase) == NULL)
        return bad(why, whylen, "key %s/%s has phase %u", m->node_id,
                   m->range, m->phase);
    if (all < m->pairs)
        return bad(why, whylen, "key %s/%s has absurd counts", m->node_id,
                   m->range);
    if (coded) {
        uint64_t np, nr;

        if (hist || m->n_inclusive || m->n_self)
            return bad(why, whylen, "key %s/%s holds both events and other "
                       "values", m->node_id, m->range);
        if (hrd_agg_events_check(m->events.data, m->events.len, &np,
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
    } else {
        if (m->n_inclusive != all || m->n_self != m->pairs)
            return bad(why, whylen, "key %s/%s holds %zu inclusive and %zu "
                       "self values for %llu events and %llu records",
                       m->node_id, m->range, m->n_inclusive, m->n_self,
                       (unsigned long long)m->pairs,
                       (unsigned long long)m->records);
        incl = malloc((all + 1) * sizeof *incl);
        self = malloc((m->pairs + 1) * sizeof *self);
        if (incl == NULL || self == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        if (!undelta(m->inclusive, all, incl) ||
            !undelta(m->self, m->pairs, self)) {
            rc = bad(why, whylen, "key %s/%s has values beyond 2^64",
                     m->node_id, m->range);
            goto out;
        }
        for (uint64_t i = 0; i < m->pairs; i++) {
            if (self[i] > incl[m->records + i]) {
                rc = bad(why, whylen, "key %s/%s has self times above its "
                         "inclusive times", m->node_id, m->range);
                goto out;
            }
        }
    }
    for (size_t i = 0; i < m->n_paths; i++) {
        if ((rc = runpath_ok(m, m->paths[i], why, whylen)) != 0)
            goto out;
    }
    node = hrd_agg_str(a, m->node_id);
    op = hrd_agg_str(a, m->operator_);
    backend = hrd_agg_str(a, m->backend);
    range = hrd_agg_str(a, m->range);
    if (node == 0 || op == 0 || backend == 0 || range == 0 ||
        note_first(l, node, 0, m->node_rank) != 0 ||
        note_first(l, range, 1, m->range_rank) != 0 ||
        (k = hrd_agg_key(a, node, op, backend, m->phase, range)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* A key whose one context holds all its events keeps them once: its
     * path key is (or stays) a mirror when it has no other. */
    if (m->n_paths == 1 && m->paths[0]->same_as_key) {
        uint32_t id;

        if ((rc = path_intern(a, m->paths[0], &id)) < 0)
            goto out;
        if (rc == 0 && k->paths == NULL && k->pairs + k->records == 0) {
            struct hrd_key *pk = hrd_agg_path_key_live(a, k, id);

            if (pk == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            keep = pk->mirror;
        } else if (rc == 0) {
            keep = k->paths != NULL && k->paths->pnext == NULL &&
                   k->paths->mirror && k->paths->path == id;
        }
        rc = 0;
    }
    if (!keep && hrd_agg_path_unmirror(a, k) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    if (coded) {
        if ((rc = hrd_agg_key_add_exact(a, k, m->events.data, m->events.len,
                                        m->pairs, m->records)) != 0)
            goto out;
    } else if (hist && k->exact && k->pairs + k->records == 0) {
        struct hrd_hist *hi = hist_from_msg(m->inclusive_hist);
        struct hrd_hist *hs = hist_from_msg(m->self_hist);

        if (hi == NULL || hs == NULL ||
            hrd_agg_key_set_hist(a, k, hi, hs, m->pairs, m->records) != 0) {
            hrd_hist_fini(hi);
            hrd_hist_fini(hs);
            free(hi);
            free(hs);
            rc = -ENOMEM;
            goto out;
        }
    } else if (hist) {
        if (hrd_agg_key_to_hist(a, k) != 0 ||
            hrd_agg_key_unshare(a, k) != 0 ||
            hist_merge(a, k->incl, m->inclusive_hist) != 0 ||
            hist_merge(a, k->self, m->self_hist) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        k->pairs += m->pairs;
        k->records += m->records;
        k->has_scopes |= m->pairs > 0;
        a->events += 2 * m->pairs + m->records;
    } else {
        /* The smallest inclusive values are taken as the records, the
         * others pair with the self values in order (runkey.h). */
        for (uint64_t i = 0; i < m->records && rc == 0; i++)
            rc = hrd_agg_add_record(a, k, incl[i]);
        for (uint64_t i = 0; i < m->pairs && rc == 0; i++)
            rc = hrd_agg_add(a, k, incl[m->records + i], self[i]);
        if (rc != 0)
            goto out;
    }
    k->children += m->children;
    k->descendants += m->descendants;
    for (size_t i = keep; i < m->n_paths && rc == 0; i++)
        rc = runpath_load(a, k, m, m->paths[i], why, whylen);
    if (rc != 0)
        goto out;
    l->keys++;
    hrd_agg_enforce(a);
out:
    free(incl);
    free(self);
    return rc;
}

int hrd_runload_note(struct hrd_runload *l, uint32_t node, uint32_t node_rank,
                     uint32_t range, uint32_t range_rank)
{
    if (note_first(l, node, 0, node_rank) != 0 ||
        note_first(l, range, 1, range_rank) != 0)
        return -ENOMEM;
    return 0;
}

int hrd_runload_end(struct hrd_runload *l, const Hostrange__RunEnd *e)
{
    for (size_t i = 0; e != NULL && i < e->n_lost; i++) {
        uint32_t id;

        if (!str_ok(e->lost[i]->node_id))
            continue;
        id = hrd_agg_str(l->a, e->lost[i]->node_id);
        if (id == 0)
            return -ENOMEM;
        hrd_agg_lost_add(l->a, id, (int64_t)e->lost[i]->lost);
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

int hrd_runload_finish(struct hrd_runload *l)
{
    struct ranked *r = malloc((l->cap / 2 + 1) * sizeof *r);

    if (r == NULL)
        return -ENOMEM;
    hrd_agg_paths_share(l->a);
    for (int which = 0; which < 2; which++) {
        size_t n = 0;

        for (uint32_t slot = (uint32_t)which; slot < l->cap; slot += 2) {
            if (l->first[slot] != 0)
                r[n++] = (struct ranked){ l->first[slot], slot / 2 + 1 };
        }
        qsort(r, n, sizeof *r, cmp_ranked);
        for (size_t i = 0; i < n; i++) {
            if (which == 0)
                hrd_agg_rank_node(l->a, r[i].id);
            else
                hrd_agg_rank_range(l->a, r[i].id);
        }
    }
    free(r);
    return 0;
}
