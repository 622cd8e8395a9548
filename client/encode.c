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

int hr__enc_seal(struct hr__enc *e, const struct hr__batch_header *h,
                 uint8_t **out, size_t *len)
{
    Hostrange__Batch m = HOSTRANGE__BATCH__INIT;
    Hostrange__LabelSet *ls = NULL, **lsp = NULL;
    uint32_t nc = e->ctx.n, nl, nr = 0, ni = 0;
    uint32_t *ranges = NULL, *cparent = NULL, *crange = NULL, *lost = NULL;
    uint32_t *ilabel = NULL;
    uint64_t *iv = NULL;
    char **names = NULL;
    uint8_t *buf;
    int rc = -ENOMEM;

    if (e->failed)
        goto out;
    /* Label sets with losses belong to the batch too. */
    lost = malloc((h->n_lost + 1) * sizeof *lost);
    if (lost == NULL)
        goto out;
    for (uint32_t i = 0; i < h->n_lost; i++) {
        if ((lost[i] = label_local(e, h->lost_ids[i])) == NONE)
            goto out;
    }
    nl = e->lab.n;
    ranges = malloc((nc + 1) * sizeof *ranges);
    cparent = malloc((nc + 1) * sizeof *cparent);
    crange = malloc((nc + 1) * sizeof *crange);
    ls = calloc(nl + 1, sizeof *ls);
    lsp = calloc(nl + 1, sizeof *lsp);
    ilabel = malloc((nl + 1) * sizeof *ilabel);
    iv = malloc(4 * ((size_t)nl + 1) * sizeof *iv);
    if (ranges == NULL || cparent == NULL || crange == NULL || ls == NULL ||
        lsp == NULL || ilabel == NULL || iv == NULL)
        goto out;

    /* Range names in the process's order of first entry (its ids). */
    for (uint32_t i = 0; i < nc; i++) {
        uint32_t parent;
        e->namer->ctx_get(e->ctx.ids[i], &parent, &crange[i]);
        cparent[i] = parent != 0 ? idmap_get(&e->ctx, parent, e->stamp) + 1
                                 : 0;
        ranges[i] = crange[i];
    }
    qsort(ranges, nc, sizeof *ranges, cmp_u32);
    for (uint32_t i = 0; i < nc; i++) {
        if (nr == 0 || ranges[nr - 1] != ranges[i])
            ranges[nr++] = ranges[i];
    }
    for (uint32_t i = 0; i < nc; i++)
        crange[i] = rank_of(ranges, nr, crange[i]);
    names = calloc(nr + 1, sizeof *names);
    if (names == NULL)
        goto out;
    rc = -EINVAL;
    for (uint32_t i = 0; i < nr; i++) {
        names[i] = (char *)e->namer->range_name(ranges[i]);
        if (names[i] == NULL)
            goto out;
    }
    for (uint32_t i = 0; i < nl; i++) {
        const char *node, *op, *backend;
        unsigned phase;

        if (e->namer->label_get(e->lab.ids[i], &node, &op, &backend,
                                &phase) != 0)
            goto out;
        hostrange__label_set__init(&ls[i]);
        ls[i].node_id = (char *)node;
        ls[i].operator_ = (char *)op;
        ls[i].backend = (char *)backend;
        ls[i].phase = phase;
        ls[i].id = i;
        lsp[i] = &ls[i];
        if (e->stall_n[i] != 0 || e->wake_n[i] != 0) {
            ilabel[ni] = i;
            iv[ni] = e->stall_n[i];
            iv[nl + 1 + ni] = e->stall_ns[i];
            iv[2 * (nl + 1) + ni] = e->wake_n[i];
            iv[3 * (nl + 1) + ni] = e->wake_ns[i];
            ni++;
        }
    }

    m.version = HRP_VERSION;
    m.pid = h->pid;
    m.instance = h->instance;
    m.process_label = (char *)(h->process_label ? h->process_label : "");
    m.seq = h->seq;
    m.clock = (char *)(h->clock ? h->clock : "");
    m.clock_order = (char *)(h->clock_order ? h->clock_order : "");
    m.clock_step_ns = h->clock_step_ns;
    m.clock_path = (char *)(h->clock_path ? h->clock_path : "");
    m.lost_events = h->lost_events;
    m.errors_out_of_order = h->out_of_order;
    m.errors_open_at_window_end = h->open_at_window_end;
    m.errors_foreign_thread = h->foreign_thread;
    m.errors_label_in_window = h->label_in_window;
    m.errors_too_deep = h->too_deep;
    m.contexts_dropped = h->contexts_dropped;
    m.errors_bad_name = h->bad_name;
    m.errors_bad_label = h->bad_label;
    m.contexts_full = h->contexts_full;
    m.names_cut = h->names_cut;
    m.final_counters = h->final_counters != 0;
    m.marks = h->marks;
    m.n_labels = nl;
    m.labels = lsp;
    m.n_ranges = nr;
    m.ranges = names;
    m.n_context_parent = m.n_context_range = nc;
    m.context_parent = cparent;
    m.context_range = crange;
    m.samples.data = e->buf;
    m.samples.len = e->len;
    m.events = e->events;
    m.n_lost_label = m.n_lost_by_label = h->n_lost;
    m.lost_label = lost;
    m.lost_by_label = (uint64_t *)h->lost_counts;
    m.n_internal_label = m.n_stall_count = m.n_stall_ns = m.n_wake_count =
        m.n_wake_ns = ni;
    m.internal_label = ilabel;
    m.stall_count = iv;
    m.stall_ns = iv + (nl + 1);
    m.wake_count = iv + 2 * (nl + 1);
    m.wake_ns = iv + 3 * (nl + 1);

    *len = hostrange__batch__get_packed_size(&m);
    buf = malloc(*len ? *len : 1);
    rc = -ENOMEM;
    if (buf == NULL)
        goto out;
    hostrange__batch__pack(&m, buf);
    *out = buf;
    rc = 0;
out:
    free(lost);
    free(ranges);
    free(cparent);
    free(crange);
    free(ls);
    free(lsp);
    free(ilabel);
    free(iv);
    free(names);
    if (rc == 0)
        hr__enc_clear(e);
    return rc;
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
