/* Batch encoding (see encode.h). */
#include "config.h"

#include "client/encode.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static void idmap_fini(struct hr__idmap *m)
{
    free(m->local);
    free(m->stamp);
    free(m->ids);
    memset(m, 0, sizeof *m);
}

/* The batch number of process id `id`, or NONE when it has none yet. */
static inline uint32_t idmap_get(const struct hr__idmap *m, uint32_t id,
                                 uint32_t stamp)
{
    return id < m->cap && m->stamp[id] == stamp ? m->local[id] : NONE;
}

/* Gives `id` the next batch number. Returns it, or NONE on ENOMEM. */
static uint32_t idmap_add(struct hr__idmap *m, uint32_t id, uint32_t stamp)
{
    if (id >= m->cap) {
        uint32_t cap = m->cap ? m->cap : 64;
        uint32_t *l, *s;

        while (cap <= id)
            cap *= 2;
        l = realloc(m->local, cap * sizeof *l);
        if (l == NULL)
            return NONE;
        m->local = l;
        s = realloc(m->stamp, cap * sizeof *s);
        if (s == NULL)
            return NONE;
        memset(s + m->cap, 0, (cap - m->cap) * sizeof *s);
        m->stamp = s;
        m->cap = cap;
    }
    if (m->n == m->idcap) {
        uint32_t cap = m->idcap ? 2 * m->idcap : 64;
        uint32_t *ids = realloc(m->ids, cap * sizeof *ids);
        if (ids == NULL)
            return NONE;
        m->ids = ids;
        m->idcap = cap;
    }
    m->stamp[id] = stamp;
    m->local[id] = m->n;
    m->ids[m->n] = id;
    return m->n++;
}

int hr__enc_init(struct hr__enc *e, const struct hr__namer *namer)
{
    memset(e, 0, sizeof *e);
    e->namer = namer;
    e->cap = HR__BATCH_BYTES + 2 * HRP_ITEM_MAX;
    e->buf = malloc(e->cap);
    if (e->buf == NULL)
        return -ENOMEM;
    e->stamp = 1;
    return 0;
}

void hr__enc_fini(struct hr__enc *e)
{
    if (e == NULL)
        return;
    free(e->buf);
    idmap_fini(&e->ctx);
    idmap_fini(&e->lab);
    free(e->events_by);
    free(e->stall_n);
    free(e->stall_ns);
    free(e->wake_n);
    free(e->wake_ns);
    memset(e, 0, sizeof *e);
}

void hr__enc_clear(struct hr__enc *e)
{
    e->len = 0;
    e->table_bytes = 0;
    e->events = 0;
    e->label = 0;
    e->failed = 0;
    e->ctx.n = e->lab.n = 0;
    if (e->internal_cap != 0) {
        memset(e->events_by, 0, e->internal_cap * sizeof *e->events_by);
        memset(e->stall_n, 0, e->internal_cap * sizeof *e->stall_n);
        memset(e->stall_ns, 0, e->internal_cap * sizeof *e->stall_ns);
        memset(e->wake_n, 0, e->internal_cap * sizeof *e->wake_n);
        memset(e->wake_ns, 0, e->internal_cap * sizeof *e->wake_ns);
    }
    if (++e->stamp == 0) {
        /* Once in 2^32 batches: no stale stamp may match. */
        if (e->ctx.cap != 0)
            memset(e->ctx.stamp, 0, e->ctx.cap * sizeof *e->ctx.stamp);
        if (e->lab.cap != 0)
            memset(e->lab.stamp, 0, e->lab.cap * sizeof *e->lab.stamp);
        e->stamp = 1;
    }
}

/* Makes the per-label arrays hold label number l. Returns 0 or -ENOMEM. */
static int label_arrays(struct hr__enc *e, uint32_t l)
{
    uint64_t **arr[5] = { &e->events_by, &e->stall_n, &e->stall_ns,
                          &e->wake_n, &e->wake_ns };
    uint32_t cap = e->internal_cap ? 2 * e->internal_cap : 16;

    if (l < e->internal_cap)
        return 0;
    while (cap <= l)
        cap *= 2;
    for (int i = 0; i < 5; i++) {
        uint64_t *a = realloc(*arr[i], cap * sizeof *a);
        if (a == NULL)
            return -ENOMEM;
        memset(a + e->internal_cap, 0, (cap - e->internal_cap) * sizeof *a);
        *arr[i] = a;
    }
    e->internal_cap = cap;
    return 0;
}

/* The batch number of label set `label`, added when new. */
static uint32_t label_local(struct hr__enc *e, uint32_t label)
{
    uint32_t l = idmap_get(&e->lab, label, e->stamp);
    const char *node, *op, *backend;
    unsigned phase;

    if (l != NONE)
        return l;
    if (e->namer->label_get(label, &node, &op, &backend, &phase) != 0 ||
        label_arrays(e, e->lab.n) != 0)
        return NONE;
    l = idmap_add(&e->lab, label, e->stamp);
    if (l != NONE)
        e->table_bytes += strlen(node) + strlen(op) + strlen(backend) + 16;
    return l;
}

/* The batch number of context ctx, added (after its parents) when new. */
static uint32_t ctx_local(struct hr__enc *e, uint32_t ctx)
{
    uint32_t l = idmap_get(&e->ctx, ctx, e->stamp), parent, range;
    const char *name;

    if (l != NONE)
        return l;
    e->namer->ctx_get(ctx, &parent, &range);
    if (parent != 0 && ctx_local(e, parent) == NONE)
        return NONE;
    name = e->namer->range_name(range);
    if (name == NULL)
        return NONE;
    l = idmap_add(&e->ctx, ctx, e->stamp);
    /* The context's two numbers, and its name when the batch may not have
     * it yet (counted for each context: an upper bound). */
    if (l != NONE)
        e->table_bytes += strlen(name) + 12;
    return l;
}

int hr__enc_sample(struct hr__enc *e, uint32_t label, uint32_t ctx,
                   uint64_t incl_ns, uint64_t child_ns, uint32_t nchild,
                   uint32_t ndesc, int record)
{
    uint8_t *p = e->buf + e->len;
    uint32_t c;

    if (label != e->label) {
        uint32_t l = label_local(e, label);
        if (l == NONE) {
            e->failed = 1;
            return -ENOMEM;
        }
        p = hrp_put_varint(p, (uint64_t)l << 2 | HRP_ITEM_LABEL);
        e->len = (size_t)(p - e->buf);
        e->label = label;
        e->label_local = l;
    }
    c = idmap_get(&e->ctx, ctx, e->stamp);
    if (c == NONE && (c = ctx_local(e, ctx)) == NONE) {
        e->failed = 1;
        return -ENOMEM;
    }
    if (record) {
        p = hrp_put_varint(p, (uint64_t)c << 2 | HRP_ITEM_RECORD);
        p = hrp_put_varint(p, incl_ns);
    } else if (nchild == 0 && child_ns == 0) {
        p = hrp_put_varint(p, (uint64_t)c << 2 | HRP_ITEM_LEAF);
        p = hrp_put_varint(p, incl_ns);
    } else {
        p = hrp_put_varint(p, (uint64_t)c << 2 | HRP_ITEM_PARENT);
        p = hrp_put_varint(p, incl_ns);
        p = hrp_put_varint(p, child_ns <= incl_ns ? child_ns : incl_ns);
        p = hrp_put_varint(p, nchild);
        p = hrp_put_varint(p, ndesc >= nchild ? ndesc - nchild : 0);
    }
    e->len = (size_t)(p - e->buf);
    e->events++;
    e->events_by[e->label_local]++;
    return 0;
}

int hr__enc_internal(struct hr__enc *e, uint32_t label, int wake, uint64_t ns)
{
    uint32_t l = label_local(e, label);

    if (l == NONE)
        return -ENOMEM;
    if (wake) {
        e->wake_n[l]++;
        e->wake_ns[l] += ns;
    } else {
        e->stall_n[l]++;
        e->stall_ns[l] += ns;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The position of v in sorted a[0..n). */
static uint32_t rank_of(const uint32_t *a, uint32_t n, uint32_t v)
{
    const uint32_t *p = bsearch(&v, a, n, sizeof *a, cmp_u32);

    return (uint32_t)(p - a);
}

/* What sealing a batch builds besides the encoder's own arrays: its
 * calling contexts, range names, label sets and counts per label set. */
struct seal {
    uint32_t nc, nl, nr, ni;   /* contexts, label sets, ranges, internal */
    uint32_t *ranges, *cparent, *crange, *lost, *ilabel;
    uint64_t *iv;              /* stalls, their ns, wakes, their ns */
    Hostrange__LabelSet *ls, **lsp;
    char **names;
};

static void seal_free(struct seal *sl)
{
    free(sl->lost);
    free(sl->ranges);
    free(sl->cparent);
    free(sl->crange);
    free(sl->ls);
    free(sl->lsp);
    free(sl->ilabel);
    free(sl->iv);
    free(sl->names);
}

/* Allocates sl's arrays for e's contexts and label sets, the label sets
 * with losses in h included (they belong to the batch too). Returns 0 or
 * -ENOMEM; seal_free frees them either way. */
static int seal_alloc(struct hr__enc *e, const struct hr__batch_header *h,
                      struct seal *sl)
{
    memset(sl, 0, sizeof *sl);
    sl->nc = e->ctx.n;
    sl->lost = malloc((h->n_lost + 1) * sizeof *sl->lost);
    if (sl->lost == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < h->n_lost; i++) {
        if ((sl->lost[i] = label_local(e, h->lost_ids[i])) == NONE)
            return -ENOMEM;
    }
    sl->nl = e->lab.n;
    sl->ranges = malloc((sl->nc + 1) * sizeof *sl->ranges);
    sl->cparent = malloc((sl->nc + 1) * sizeof *sl->cparent);
    sl->crange = malloc((sl->nc + 1) * sizeof *sl->crange);
    sl->ls = calloc(sl->nl + 1, sizeof *sl->ls);
    sl->lsp = calloc(sl->nl + 1, sizeof *sl->lsp);
    sl->ilabel = malloc((sl->nl + 1) * sizeof *sl->ilabel);
    sl->iv = malloc(4 * ((size_t)sl->nl + 1) * sizeof *sl->iv);
    if (sl->ranges == NULL || sl->cparent == NULL || sl->crange == NULL ||
        sl->ls == NULL || sl->lsp == NULL || sl->ilabel == NULL ||
        sl->iv == NULL)
        return -ENOMEM;
    return 0;
}

/* The batch's calling contexts (parent and range of each) and its range
 * names, in the process's order of first entry (their ids). Returns 0,
 * -ENOMEM, or -EINVAL for a range the namer does not know. */
static int seal_contexts(struct hr__enc *e, struct seal *sl)
{
    uint32_t nc = sl->nc, nr = 0;

    for (uint32_t i = 0; i < nc; i++) {
        uint32_t parent;
        e->namer->ctx_get(e->ctx.ids[i], &parent, &sl->crange[i]);
        sl->cparent[i] = parent != 0
                             ? idmap_get(&e->ctx, parent, e->stamp) + 1
                             : 0;
        sl->ranges[i] = sl->crange[i];
    }
    qsort(sl->ranges, nc, sizeof *sl->ranges, cmp_u32);
    for (uint32_t i = 0; i < nc; i++) {
        if (nr == 0 || sl->ranges[nr - 1] != sl->ranges[i])
            sl->ranges[nr++] = sl->ranges[i];
    }
    sl->nr = nr;
    for (uint32_t i = 0; i < nc; i++)
        sl->crange[i] = rank_of(sl->ranges, nr, sl->crange[i]);
    sl->names = calloc(nr + 1, sizeof *sl->names);
    if (sl->names == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < nr; i++) {
        sl->names[i] = (char *)e->namer->range_name(sl->ranges[i]);
        if (sl->names[i] == NULL)
            return -EINVAL;
    }
    return 0;
}

/* The batch's label sets, and the library's own work (stalls and
 * wake-ups) of those that had some. Returns 0, or -EINVAL for a label
 * set the namer does not know. */
static int seal_labels(struct hr__enc *e, struct seal *sl)
{
    uint32_t nl = sl->nl;

    for (uint32_t i = 0; i < nl; i++) {
        const char *node, *op, *backend;
        unsigned phase;

        if (e->namer->label_get(e->lab.ids[i], &node, &op, &backend,
                                &phase) != 0)
            return -EINVAL;
        hostrange__label_set__init(&sl->ls[i]);
        sl->ls[i].node_id = (char *)node;
        sl->ls[i].operator_ = (char *)op;
        sl->ls[i].backend = (char *)backend;
        sl->ls[i].phase = phase;
        sl->ls[i].id = i;
        sl->lsp[i] = &sl->ls[i];
        if (e->stall_n[i] != 0 || e->wake_n[i] != 0) {
            sl->ilabel[sl->ni] = i;
            sl->iv[sl->ni] = e->stall_n[i];
            sl->iv[nl + 1 + sl->ni] = e->stall_ns[i];
            sl->iv[2 * (nl + 1) + sl->ni] = e->wake_n[i];
            sl->iv[3 * (nl + 1) + sl->ni] = e->wake_ns[i];
            sl->ni++;
        }
    }
    return 0;
}

/* The batch message m of e, header h and sl (pointers borrowed). */
static void seal_message(const struct hr__enc *e,
                         const struct hr__batch_header *h,
                         const struct seal *sl, Hostrange__Batch *m)
{
    uint32_t nl = sl->nl;

    m->version = HRP_VERSION;
    m->pid = h->pid;
    m->instance = h->instance;
    m->process_label = (char *)(h->process_label ? h->process_label : "");
    m->seq = h->seq;
    m->clock = (char *)(h->clock ? h->clock : "");
    m->clock_order = (char *)(h->clock_order ? h->clock_order : "");
    m->clock_step_ns = h->clock_step_ns;
    m->clock_path = (char *)(h->clock_path ? h->clock_path : "");
    m->lost_events = h->lost_events;
    m->errors_out_of_order = h->out_of_order;
    m->errors_open_at_window_end = h->open_at_window_end;
    m->errors_foreign_thread = h->foreign_thread;
    m->errors_label_in_window = h->label_in_window;
    m->errors_too_deep = h->too_deep;
    m->contexts_dropped = h->contexts_dropped;
    m->errors_bad_name = h->bad_name;
    m->errors_bad_label = h->bad_label;
    m->contexts_full = h->contexts_full;
    m->names_cut = h->names_cut;
    m->final_counters = h->final_counters != 0;
    m->marks = h->marks;
    m->n_labels = nl;
    m->labels = sl->lsp;
    m->n_ranges = sl->nr;
    m->ranges = sl->names;
    m->n_context_parent = m->n_context_range = sl->nc;
    m->context_parent = sl->cparent;
    m->context_range = sl->crange;
    m->samples.data = e->buf;
    m->samples.len = e->len;
    m->events = e->events;
    m->n_lost_label = m->n_lost_by_label = h->n_lost;
    m->lost_label = sl->lost;
    m->lost_by_label = (uint64_t *)h->lost_counts;
    m->n_internal_label = m->n_stall_count = m->n_stall_ns =
        m->n_wake_count = m->n_wake_ns = sl->ni;
    m->internal_label = sl->ilabel;
    m->stall_count = sl->iv;
    m->stall_ns = sl->iv + (nl + 1);
    m->wake_count = sl->iv + 2 * (nl + 1);
    m->wake_ns = sl->iv + 3 * (nl + 1);
}

int hr__enc_seal_into(struct hr__enc *e, const struct hr__batch_header *h,
                      uint8_t *spare, size_t spare_cap, uint8_t **out,
                      size_t *len)
{
    Hostrange__Batch m = HOSTRANGE__BATCH__INIT;
    struct seal sl;
    uint8_t *buf;
    int rc;

    if (e->failed)
        return -ENOMEM;
    rc = seal_alloc(e, h, &sl);
    if (rc == 0)
        rc = seal_contexts(e, &sl);
    if (rc == 0)
        rc = seal_labels(e, &sl);
    if (rc == 0) {
        seal_message(e, h, &sl, &m);
        *len = hostrange__batch__get_packed_size(&m);
        if (spare != NULL && spare_cap >= *len)
            buf = spare;
        else
            buf = malloc(*len ? *len : 1);
        if (buf == NULL) {
            rc = -ENOMEM;
        } else {
            hostrange__batch__pack(&m, buf);
            *out = buf;
        }
    }
    seal_free(&sl);
    if (rc == 0)
        hr__enc_clear(e);
    return rc;
}

int hr__enc_seal(struct hr__enc *e, const struct hr__batch_header *h,
                 uint8_t **out, size_t *len)
{
    return hr__enc_seal_into(e, h, NULL, 0, out, len);
}

enum hr__ack_verdict hr__ack_read(const uint8_t *buf, size_t len,
                                  uint64_t seq)
{
    Hostrange__Ack *ack = hostrange__ack__unpack(NULL, len, buf);
    enum hr__ack_verdict v = HR__ACK_IGNORE;

    if (ack == NULL)
        return v;
    if (ack->version == HRP_VERSION && ack->seq == seq) {
        switch (ack->status) {
        case HOSTRANGE__ACK__STATUS__OK:
        case HOSTRANGE__ACK__STATUS__DUPLICATE:
            v = HR__ACK_DELIVERED;
            break;
        case HOSTRANGE__ACK__STATUS__REJECTED:
            v = ack->counted_lost ? HR__ACK_REJECTED_COUNTED
                                  : HR__ACK_REJECTED;
            break;
        default:
            v = HR__ACK_RETRY;
            break;
        }
    }
    hostrange__ack__free_unpacked(ack, NULL);
    return v;
}
