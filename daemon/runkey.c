/* Keys of run files (see runkey.h). */
#include "config.h"

#include "daemon/runkey.h"
#include "daemon/observer.h"
#include "daemon/pbuf.h"
#include "daemon/runput.h"
#include "proto/protocol.h"

#include <errno.h>
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
        hrd_calib_to_message(&all->cm[i], &cal[i]);
        e->calibrations[i] = &all->cm[i];
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
