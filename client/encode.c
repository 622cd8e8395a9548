/* Batch building and encoding (see encode.h). */
#include "config.h"

#include "client/encode.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hr__builder_init(struct hr__builder *b)
{
    size_t n = HR__BATCH_SAMPLES;

    memset(b, 0, sizeof *b);
    b->label = malloc(n * sizeof *b->label);
    b->range = malloc(n * sizeof *b->range);
    b->children = calloc(n, sizeof *b->children);
    b->incl = malloc(n * sizeof *b->incl);
    b->self = malloc(n * sizeof *b->self);
    b->rec_label = malloc(n * sizeof *b->rec_label);
    b->rec_range = malloc(n * sizeof *b->rec_range);
    b->rec_ns = malloc(n * sizeof *b->rec_ns);
    if (!b->label || !b->range || !b->children || !b->incl || !b->self || !b->rec_label ||
        !b->rec_range || !b->rec_ns) {
        hr__builder_fini(b);
        return -ENOMEM;
    }
    return 0;
}

void hr__builder_fini(struct hr__builder *b)
{
    if (b == NULL)
        return;
    free(b->label);
    free(b->range);
    free(b->children);
    free(b->incl);
    free(b->self);
    free(b->rec_label);
    free(b->rec_range);
    free(b->rec_ns);
    memset(b, 0, sizeof *b);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Adds v to the sorted set ids[0..*n) when absent. */
static void set_add(uint32_t *ids, size_t *n, uint32_t v)
{
    size_t i = *n;

    while (i > 0 && ids[i - 1] > v)
        i--;
    if (i > 0 && ids[i - 1] == v)
        return;
    memmove(ids + i + 1, ids + i, (*n - i) * sizeof *ids);
    ids[i] = v;
    (*n)++;
}

/*
 * Collects the distinct values of a[0..n), c[0..m) and e[0..l) into a sorted
 * list (*ids, *nids; the caller frees it). A batch usually holds a few label
 * sets in long runs, so a value equal to the previous one costs a compare.
 * Returns 0 or -ENOMEM.
 */
static int distinct(const uint32_t *a, size_t n, const uint32_t *c, size_t m,
                    const uint32_t *e, size_t l, uint32_t **ids, size_t *nids)
{
    const uint32_t *arr[3] = { a, c, e };
    size_t len[3] = { n, m, l };
    uint32_t *v = malloc((n + m + l + 1) * sizeof *v);
    size_t k = 0;

    if (v == NULL)
        return -ENOMEM;
    for (int j = 0; j < 3; j++) {
        uint32_t last = 0;
        for (size_t i = 0; i < len[j]; i++) {
            if (i > 0 && arr[j][i] == last)
                continue;
            last = arr[j][i];
            set_add(v, &k, last);
        }
    }
    *ids = v;
    *nids = k;
    return 0;
}

/* Maps each a[i] to its index in sorted ids[0..nids) into out[i]. */
static void renumber(const uint32_t *a, size_t n, const uint32_t *ids,
                     size_t nids, uint32_t *out)
{
    uint32_t last = 0, at = 0;

    for (size_t i = 0; i < n; i++) {
        if (i == 0 || a[i] != last) {
            const uint32_t *p = bsearch(&a[i], ids, nids, sizeof *ids,
                                        cmp_u32);
            last = a[i];
            at = (uint32_t)(p - ids);
        }
        out[i] = at;
    }
}

int hr__batch_encode(const struct hr__builder *b,
                     const struct hr__batch_header *h,
                     const struct hr__namer *namer, uint8_t **out,
                     size_t *len)
{
    Hostrange__Batch m = HOSTRANGE__BATCH__INIT;
    uint32_t *lids = NULL;
    size_t nr = 0, nl = 0;
    Hostrange__LabelSet *ls = NULL, **lsp = NULL;
    char **names = NULL;
    uint32_t *idx = NULL;
    uint8_t *buf = NULL;
    int rc = -ENOMEM;

    /* Every range up to the highest used, so that the daemon learns the
     * order of first entry even of ranges with no sample here yet. */
    for (uint32_t i = 0; i < b->n; i++)
        nr = b->range[i] > nr ? b->range[i] : nr;
    for (uint32_t i = 0; i < b->nrec; i++)
        nr = b->rec_range[i] > nr ? b->rec_range[i] : nr;
    if (distinct(b->label, b->n, b->rec_label, b->nrec, h->lost_ids,
                 h->n_lost, &lids, &nl) != 0)
        goto out;
    names = calloc(nr + 1, sizeof *names);
    ls = calloc(nl + 1, sizeof *ls);
    lsp = calloc(nl + 1, sizeof *lsp);
    idx = malloc((2 * (size_t)b->n + 2 * (size_t)b->nrec + h->n_lost + 1) *
                 sizeof *idx);
    if (names == NULL || ls == NULL || lsp == NULL || idx == NULL)
        goto out;
    rc = -EINVAL;
    for (size_t i = 0; i < nr; i++) {
        names[i] = (char *)namer->range_name((uint32_t)i + 1);
        if (names[i] == NULL)
            goto out;
    }
    for (size_t i = 0; i < nl; i++) {
        const char *node, *op, *backend;
        unsigned phase;

        if (namer->label_get(lids[i], &node, &op, &backend, &phase) != 0)
            goto out;
        hostrange__label_set__init(&ls[i]);
        ls[i].node_id = (char *)node;
        ls[i].operator_ = (char *)op;
        ls[i].backend = (char *)backend;
        ls[i].phase = phase;
        lsp[i] = &ls[i];
    }

    m.version = HRP_VERSION;
    m.pid = h->pid;
    m.instance = h->instance;
    m.process_label = (char *)(h->process_label ? h->process_label : "");
    m.seq = h->seq;
    m.clock = (char *)(h->clock ? h->clock : "");
    m.lost_events = h->lost_events;
    m.errors_out_of_order = h->out_of_order;
    m.errors_open_at_window_end = h->open_at_window_end;
    m.errors_foreign_thread = h->foreign_thread;
    m.errors_label_in_window = h->label_in_window;
    m.errors_too_deep = h->too_deep;
    m.n_labels = nl;
    m.labels = lsp;
    m.n_ranges = nr;
    m.ranges = names;

    renumber(b->label, b->n, lids, nl, idx);
    for (uint32_t i = 0; i < b->n; i++)
        idx[b->n + i] = b->range[i] - 1;
    renumber(b->rec_label, b->nrec, lids, nl, idx + 2 * b->n);
    for (uint32_t i = 0; i < b->nrec; i++)
        idx[2 * b->n + b->nrec + i] = b->rec_range[i] - 1;
    m.n_sample_label = m.n_sample_range = b->n;
    m.sample_label = idx;
    m.sample_range = idx + b->n;
    m.n_inclusive_ns = m.n_self_ns = b->n;
    if (b->children != NULL) {
        m.n_sample_children = b->n;
        m.sample_children = b->children;
    }
    m.inclusive_ns = b->incl;
    m.self_ns = b->self;
    m.n_record_label = m.n_record_range = m.n_record_ns = b->nrec;
    m.record_label = idx + 2 * b->n;
    m.record_range = idx + 2 * b->n + b->nrec;
    m.record_ns = b->rec_ns;
    renumber(h->lost_ids, h->n_lost, lids, nl,
             idx + 2 * b->n + 2 * b->nrec);
    m.n_lost_label = m.n_lost_by_label = h->n_lost;
    m.lost_label = idx + 2 * b->n + 2 * b->nrec;
    m.lost_by_label = (uint64_t *)h->lost_counts;

    *len = hostrange__batch__get_packed_size(&m);
    buf = malloc(*len ? *len : 1);
    rc = -ENOMEM;
    if (buf == NULL)
        goto out;
    hostrange__batch__pack(&m, buf);
    *out = buf;
    rc = 0;
out:
    free(lids);
    free(names);
    free(ls);
    free(lsp);
    free(idx);
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
            v = HR__ACK_REJECTED;
            break;
        default:
            v = HR__ACK_RETRY;
            break;
        }
    }
    hostrange__ack__free_unpacked(ack, NULL);
    return v;
}
