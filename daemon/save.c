/* A page of a save from the daemon's live state (see save.h). */
#include "config.h"

#include "daemon/save.h"
#include "lib/agg/agg_impl.h"
#include "lib/agg/observer.h"
#include "lib/run/pbuf.h"
#include "lib/run/runfields.h"
#include "lib/run/runkey.h"
#include "lib/run/runput.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_serial(const void *pa, const void *pb)
{
    const struct hra_key *x = *(struct hra_key *const *)pa;
    const struct hra_key *y = *(struct hra_key *const *)pb;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

/* Everything is in one allocation besides the calibrations' strings,
 * which a owns. */
Hostrange__RunEnd *hrd_save_end(struct hra_agg *a,
                                const struct hrd_ingest *in, uint64_t keys)
{
    struct hra_calib *cal = NULL;
    size_t ncal = 0, nlost = 0, i;
    const struct hrd_client *c;
    Hostrange__RunEnd *e;
    struct {
        Hostrange__RunEnd e;
        Hostrange__ClientStats *cs;
        Hostrange__Calibration *cm;
        Hostrange__RunNodeLost *lm;
    } *all;

    if (hra_calib_collect(a, &cal, &ncal) != 0)
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
        hra_calib_to_message(&all->cm[i], &cal[i]);
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

void hrd_save_end_free(Hostrange__RunEnd *e)
{
    /* e is the first member of its allocation (hrd_save_end). */
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

/* Appends key k of a for run format `format` to out as a SaveReply's
 * packed_keys field: by hand where hrr_runput_key writes it, else
 * packed by protobuf-c straight into out. Returns 0 or -ENOMEM. */
static int page_put(struct hra_agg *a, const struct hra_key *k, int format,
                    struct hrr_pbuf *out, struct hrr_runput_tmp *t)
{
    Hostrange__RunKey m;
    size_t len;
    int rc = format < HRR_FORMAT_EVENTS
                 ? hrr_runput_key(a, k, HRR_SAVEREPLY_PACKED_KEYS, out, t)
                 : 1;

    if (rc <= 0)
        return rc;
    if (hrr_runkey_from(a, k, format, &m) != 0)
        return -ENOMEM;
    len = hostrange__run_key__get_packed_size(&m);
    if (hrr_pbuf_room(out, hrr_pb_bytes_size(HRR_SAVEREPLY_PACKED_KEYS,
                                              len)) == 0) {
        uint8_t *o = hrr_pb_len(out->p + out->len,
                                HRR_SAVEREPLY_PACKED_KEYS, len);

        o += hostrange__run_key__pack(&m, o);
        out->len = (size_t)(o - out->p);
        rc = 0;
    } else {
        rc = -ENOMEM;
    }
    hrr_runkey_clear(&m);
    return rc;
}

int hrd_save_page(struct hra_agg *a, const struct hrd_ingest *in,
                    uint32_t *cursor, uint64_t budget, int packed,
                    int format, struct hrr_pbuf *out,
                    Hostrange__SaveReply *r, int *done)
{
    struct hra_key **ks;
    struct hrr_runput_tmp t = { NULL, 0, NULL, 0 };
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
            hrr_pbuf_room(out, guess < (16u << 20) ? guess : 16u << 20) != 0)
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
        const struct hra_key *k = ks[used];
        Hostrange__RunKey *m;

        if (out != NULL) {
            if (page_put(a, k, format, out, &t) != 0)
                goto fail;
            goto next;
        }
        m = malloc(sizeof *m);
        if (m == NULL || hrr_runkey_from(a, k, format, m) != 0) {
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
            hrr_runkey_clear(m);
            free(m);
            if (b->data == NULL)
                goto fail;
        } else {
            r->keys[r->n_keys++] = m;
        }
    next:
        values += 64 + (k->exact ? 2 * k->pairs + k->records
                                 : 2 * (uint64_t)(k->incl->nb + k->self->nb));
        for (const struct hra_key *pp = k->paths; pp != NULL;
             pp = pp->pnext) {
            struct hra_key tmp;
            const struct hra_key *p = hra_path_view(k, pp, &tmp);

            values += 64 + (p->exact ? 2 * p->pairs
                                     : 2 * (uint64_t)(p->incl->nb +
                                                      p->self->nb));
        }
        *cursor = k->serial + 1;
        used++;
    }
    if (used == n) {
        /* The key count of the file is the client's to fill in. */
        r->end = hrd_save_end(a, in, 0);
        if (r->end == NULL)
            goto fail;
        *done = 1;
    }
    free(ks);
    hrr_runput_tmp_fini(&t);
    return 0;
fail:
    free(ks);
    hrr_runput_tmp_fini(&t);
    hrd_save_page_free(r);
    return -ENOMEM;
}

void hrd_save_page_free(Hostrange__SaveReply *r)
{
    for (size_t i = 0; i < r->n_packed_keys; i++)
        free(r->packed_keys[i].data);
    free(r->packed_keys);
    r->packed_keys = NULL;
    r->n_packed_keys = 0;
    for (size_t i = 0; i < r->n_keys; i++) {
        hrr_runkey_clear(r->keys[i]);
        free(r->keys[i]);
    }
    free(r->keys);
    hrd_save_end_free(r->end);
    r->keys = NULL;
    r->n_keys = 0;
    r->end = NULL;
}
