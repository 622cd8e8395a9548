/* Decoding and validation of batches, the client table and the
 * acknowledgement (see ingest.h); lib/agg aggregates them (hra_feed). */
#include "config.h"

#include "daemon/ingest.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"
#include "proto/unpack.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const reject_names[HRD_REJECT_COUNT] = {
    [HRD_REJECT_MALFORMED] = "malformed",
    [HRD_REJECT_VERSION] = "version",
    [HRD_REJECT_OVERSIZE] = "oversize",
    [HRD_REJECT_ARRAYS] = "array_length",
    [HRD_REJECT_INDEX] = "index",
    [HRD_REJECT_PHASE] = "phase",
    [HRD_REJECT_STRING] = "string",
    [HRD_REJECT_VALUE] = "value",
    [HRD_REJECT_NOMEM] = "no_memory",
    [HRD_REJECT_SEQUENCE] = "sequence",
    [HRD_REJECT_MEMORY] = "memory_budget",
    [HRD_REJECT_STREAM] = "stream",
};

const char *hrd_reject_name(enum hrd_reject r)
{
    return r < HRD_REJECT_COUNT ? reject_names[r] : "unknown";
}

void hrd_ingest_init(struct hrd_ingest *in, struct hra_agg *agg)
{
    memset(in, 0, sizeof *in);
    in->agg = agg;
}

void hrd_ingest_fini(struct hrd_ingest *in)
{
    struct hrd_client *c, *next;

    if (in == NULL)
        return;
    for (c = in->clients; c != NULL; c = next) {
        next = c->next;
        free(c->label);
        free(c->clock);
        free(c->clock_order);
        free(c->lost_by);
        free(c);
    }
    free(in->cindex);
    hra_feed_free(in->feed);
    in->feed = NULL;
    in->clients = NULL;
    in->cindex = NULL;
    in->nclients = in->cslots = 0;
}

static int string_ok(const char *s, int may_be_empty)
{
    size_t n = strnlen(s, HRP_MAX_STRING + 1);

    return may_be_empty ? hrp_label_ok(s, n) : hrp_name_ok(s, n);
}


/* Checks a batch's sample stream. Returns 0 or the reason + 1. */
static int validate_stream(const Hostrange__Batch *b)
{
    const uint8_t *p = b->samples.data;
    /* An empty stream may have no buffer: NULL + 0 is not C. */
    const uint8_t *end = p != NULL ? p + b->samples.len : p;
    uint64_t events = 0;
    int have_label = 0;
    struct hrp_item it;

    while (p < end) {
        /* The common item first: a leaf whose tag takes a byte and its
         * time one or two (as item_next reads it, with the same checks). */
        if (end - p >= 2 && (p[0] & HRP_LEAF_BYTE_MASK) == HRP_ITEM_LEAF &&
            (p[1] < 0x80 || (end - p >= 3 && p[2] < 0x80))) {
            if (!have_label)
                return HRD_REJECT_STREAM + 1;
            if ((size_t)(p[0] >> 2) >= b->n_context_range)
                return HRD_REJECT_INDEX + 1;
            events++;
            p += p[1] < 0x80 ? 2 : 3;
            continue;
        }
        if (hrp_item_next(&p, end, &it) != 0)
            return HRD_REJECT_STREAM + 1;
        if (it.kind == HRP_ITEM_LABEL) {
            if (it.index >= b->n_labels)
                return HRD_REJECT_INDEX + 1;
            have_label = 1;
            continue;
        }
        if (!have_label)
            return HRD_REJECT_STREAM + 1;
        if (it.index >= b->n_context_range)
            return HRD_REJECT_INDEX + 1;
        if (it.kind == HRP_ITEM_RECORD && b->context_parent[it.index] != 0)
            return HRD_REJECT_INDEX + 1;
        if (it.kind == HRP_ITEM_PARENT &&
            (it.child > it.incl || it.nchild > UINT32_MAX ||
             it.extra > UINT32_MAX))
            return HRD_REJECT_VALUE + 1;
        events++;
    }
    if (events != b->events)
        return HRD_REJECT_ARRAYS + 1;
    return 0;
}

/* Checks every field of a decoded batch. Returns 0 or the reason + 1. */
static int validate(const Hostrange__Batch *b)
{
    size_t nc = b->n_context_range, ni = b->n_internal_label;

    if (b->version != HRP_VERSION)
        return HRD_REJECT_VERSION + 1;
    if (b->seq == 0)
        return HRD_REJECT_SEQUENCE + 1;
    if (b->n_context_parent != nc || b->n_lost_label != b->n_lost_by_label ||
        b->n_stall_count != ni || b->n_stall_ns != ni ||
        b->n_wake_count != ni || b->n_wake_ns != ni)
        return HRD_REJECT_ARRAYS + 1;
    if (!string_ok(b->process_label, 1) || !string_ok(b->clock, 1) ||
        !string_ok(b->clock_order, 1) || !(b->clock_step_ns >= 0) ||
        b->clock_step_ns > 1e9 ||
        hrp_clock_path_bit(b->clock_path, b->clock_order) < 0)
        return HRD_REJECT_STRING + 1;
    for (size_t i = 0; i < b->n_labels; i++) {
        const Hostrange__LabelSet *l = b->labels[i];
        if (!string_ok(l->node_id, 0) || !string_ok(l->operator_, 1) ||
            !string_ok(l->backend, 1))
            return HRD_REJECT_STRING + 1;
        if (hrp_phase_name(l->phase) == NULL)
            return HRD_REJECT_PHASE + 1;
        if (l->id != i)
            return HRD_REJECT_INDEX + 1;
    }
    for (size_t i = 0; i < b->n_ranges; i++) {
        if (!string_ok(b->ranges[i], 0))
            return HRD_REJECT_STRING + 1;
    }
    for (size_t i = 0; i < nc; i++) {
        /* A parent comes before its child. */
        if (b->context_parent[i] > i || b->context_range[i] >= b->n_ranges)
            return HRD_REJECT_INDEX + 1;
    }
    for (size_t i = 0; i < b->n_lost_label; i++) {
        if (b->lost_label[i] >= b->n_labels)
            return HRD_REJECT_INDEX + 1;
    }
    for (size_t i = 0; i < ni; i++) {
        if (b->internal_label[i] >= b->n_labels)
            return HRD_REJECT_INDEX + 1;
    }
    return validate_stream(b);
}

static uint64_t client_hash(uint32_t pid, uint64_t instance)
{
    uint64_t h = (instance ^ ((uint64_t)pid << 32 | pid)) *
                 0x9e3779b97f4a7c15ull;

    return h ^ (h >> 29);
}

static int cindex_grow(struct hrd_ingest *in)
{
    uint64_t slots = in->cslots ? 2 * in->cslots : 64;
    struct hrd_client **idx = calloc(slots, sizeof *idx);

    if (idx == NULL)
        return -ENOMEM;
    for (struct hrd_client *c = in->clients; c != NULL; c = c->next) {
        uint64_t j = client_hash(c->pid, c->instance) & (slots - 1);
        while (idx[j] != NULL)
            j = (j + 1) & (slots - 1);
        idx[j] = c;
    }
    free(in->cindex);
    in->cindex = idx;
    in->cslots = slots;
    return 0;
}

struct hrd_client *hrd_ingest_client_find(const struct hrd_ingest *in,
                                          uint32_t pid, uint64_t instance)
{
    if (in->cslots == 0)
        return NULL;
    for (uint64_t j = client_hash(pid, instance) & (in->cslots - 1);
         in->cindex[j] != NULL; j = (j + 1) & (in->cslots - 1)) {
        struct hrd_client *c = in->cindex[j];
        if (c->pid == pid && c->instance == instance)
            return c;
    }
    return NULL;
}

struct hrd_client *hrd_ingest_client(struct hrd_ingest *in, uint32_t pid,
                                     uint64_t instance, const char *label,
                                     const char *clock)
{
    struct hrd_client *c;
    uint64_t j;

    if (2 * (in->nclients + 1) >= in->cslots && cindex_grow(in) != 0)
        return NULL;
    for (j = client_hash(pid, instance) & (in->cslots - 1);
         in->cindex[j] != NULL; j = (j + 1) & (in->cslots - 1)) {
        c = in->cindex[j];
        if (c->pid == pid && c->instance == instance)
            return c;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->label = strdup(label);
    c->clock = strdup(clock);
    if (c->label == NULL || c->clock == NULL) {
        free(c->label);
        free(c->clock);
        free(c);
        return NULL;
    }
    c->pid = pid;
    c->instance = instance;
    c->next = in->clients;
    in->clients = c;
    in->nclients++;
    in->cindex[j] = c;
    return c;
}

/* The counters of a client and their ClientStats fields: one list for
 * hrd_ingest_client_stats and hrd_ingest_client_restore, so that a
 * counter is written and read back alike. */
#define CLIENT_COUNTERS(X)                                                 \
    X(batches, batches)                                                    \
    X(events, events)                                                      \
    X(duplicates, duplicates)                                              \
    X(gaps, gaps)                                                          \
    X(lost, lost_events)                                                   \
    X(out_of_order, errors_out_of_order)                                   \
    X(open_at_window_end, errors_open_at_window_end)                       \
    X(foreign_thread, errors_foreign_thread)                               \
    X(label_in_window, errors_label_in_window)                             \
    X(too_deep, errors_too_deep)                                           \
    X(rejected, rejected)                                                  \
    X(marks, marks)                                                        \
    X(bad_name, errors_bad_name)                                           \
    X(bad_label, errors_bad_label)                                         \
    X(contexts_full, contexts_full)                                        \
    X(names_cut, names_cut)                                                \
    X(refused, refused_events)

void hrd_ingest_client_stats(Hostrange__ClientStats *x,
                             const struct hrd_client *c)
{
    hostrange__client_stats__init(x);
    x->pid = c->pid;
    x->instance = c->instance;
    x->process_label = c->label;
    x->clock = c->clock;
#define PUT(field, msg) x->msg = c->field;
    CLIENT_COUNTERS(PUT)
#undef PUT
    x->clock_order = c->clock_order != NULL ? c->clock_order : (char *)"";
    x->clock_step_ns = c->clock_step_ns;
    x->clock_path = (char *)hrp_clock_path_name(c->clock_path);
    x->unfinished = !c->finished;
}

void hrd_ingest_client_nodes(Hostrange__ClientStats *x,
                             const struct hrd_client *c,
                             const struct hra_agg *a, char **nodes)
{
    x->node_ids = nodes;
    x->n_node_ids = 0;
    for (uint32_t j = 0; j < c->nnodes; j++) {
        const char *s = hra_str_get(a, c->nodes[j]);

        if (s[0] != '\0')
            x->node_ids[x->n_node_ids++] = (char *)s;
    }
}

int hrd_ingest_client_restore(struct hrd_ingest *in, struct hrd_client *c,
                              const Hostrange__ClientStats *x)
{
    char *order = NULL;

    if (strlen(x->clock_order) > HRP_MAX_STRING ||
        !(x->clock_step_ns >= 0 && x->clock_step_ns <= 1e9) ||
        x->n_node_ids > HRD_CLIENT_NODES)
        return -EBADMSG;
    if (x->clock_order[0] != '\0' && (order = strdup(x->clock_order)) == NULL)
        return -ENOMEM;
    free(c->clock_order);
    c->clock_order = order;
    c->clock_step_ns = x->clock_step_ns;
    c->clock_path = hrp_clock_paths_parse(x->clock_path);
#define GET(field, msg) c->field = x->msg;
    CLIENT_COUNTERS(GET)
#undef GET
    c->finished = !x->unfinished;
    c->nnodes = 0;
    for (size_t i = 0; i < x->n_node_ids; i++) {
        const char *s = x->node_ids[i];
        uint32_t id;

        if (s[0] == '\0' || strlen(s) > HRP_MAX_STRING ||
            (id = hra_str(in->agg, s)) == 0)
            return -EBADMSG;
        c->nodes[c->nnodes++] = id;
    }
    return 0;
}

int hrd_ingest_lost_set(struct hrd_ingest *in, struct hrd_client *c,
                        uint32_t node, uint32_t op, uint32_t backend,
                        uint32_t phase, uint64_t count)
{
    struct hrd_lost *l = NULL;

    /* Recent label sets are the likely ones: search from the end. */
    for (uint32_t i = c->nlost; i-- > 0;) {
        struct hrd_lost *x = &c->lost_by[i];
        if (x->node == node && x->op == op && x->backend == backend &&
            x->phase == phase) {
            l = x;
            break;
        }
    }
    if (l == NULL) {
        if (hru_grow32(&c->lost_by, &c->caplost, (size_t)c->nlost + 1,
                       sizeof *c->lost_by, 4) != 0)
            return -ENOMEM;
        l = &c->lost_by[c->nlost++];
        l->node = node;
        l->op = op;
        l->backend = backend;
        l->phase = phase;
        l->count = 0;
    }
    hra_lost_add(in->agg, node, (int64_t)(count - l->count));
    l->count = count;
    return 0;
}

static void note_nodes(struct hrd_client *c, const Hostrange__Batch *b,
                       const uint32_t *node);

/* Aggregates a valid batch (hra_feed) and takes its lost counts into
 * client c. Returns 0 or -ENOMEM (with part of it added). */
static int apply(struct hrd_ingest *in, struct hrd_client *c,
                 const Hostrange__Batch *b)
{
    struct hra_fed fed;

    if (in->feed == NULL && (in->feed = hra_feed_new(in->agg)) == NULL) {
        hra_enforce(in->agg);
        return -ENOMEM;
    }
    if (hra_feed(in->feed, b, &fed) != 0)
        return -ENOMEM;
    for (size_t i = 0; i < b->n_lost_label; i++) {
        uint32_t l = b->lost_label[i];
        if (hrd_ingest_lost_set(in, c, fed.node[l], fed.op[l],
                                fed.backend[l], b->labels[l]->phase,
                                b->lost_by_label[i]) != 0)
            return -ENOMEM;
    }
    note_nodes(c, b, fed.node);
    return 0;
}

static void make_ack(uint64_t seq, Hostrange__Ack__Status status,
                     const char *error, uint8_t **ack, size_t *ack_len)
{
    Hostrange__Ack m = HOSTRANGE__ACK__INIT;

    m.version = HRP_VERSION;
    m.seq = seq;
    m.status = status;
    m.error = (char *)error;
    *ack_len = hostrange__ack__get_packed_size(&m);
    *ack = malloc(*ack_len ? *ack_len : 1);
    if (*ack == NULL) {
        *ack_len = 0;
        return;
    }
    hostrange__ack__pack(&m, *ack);
}

/* Takes the counters of an applied batch into its client. */
static void account(struct hrd_client *c, const Hostrange__Batch *b)
{
    if (b->seq > c->max_seq + 1)
        c->gaps += b->seq - c->max_seq - 1;
    c->max_seq = b->seq;
    c->batches++;
    c->events += b->events;
    c->contexts_dropped = b->contexts_dropped;
    c->marks = b->marks;
    if (b->lost_events > c->lost)
        c->lost = b->lost_events;
    c->out_of_order = b->errors_out_of_order;
    c->open_at_window_end = b->errors_open_at_window_end;
    c->foreign_thread = b->errors_foreign_thread;
    c->label_in_window = b->errors_label_in_window;
    c->too_deep = b->errors_too_deep;
    c->bad_name = b->errors_bad_name;
    c->bad_label = b->errors_bad_label;
    c->contexts_full = b->contexts_full;
    c->names_cut = b->names_cut;
    c->finished |= b->final_counters;
}

/* Notes the node ids of a batch's label sets (string ids n->node) among
 * the first HRD_CLIENT_NODES of client c. */
static void note_nodes(struct hrd_client *c, const Hostrange__Batch *b,
                       const uint32_t *node)
{
    for (size_t i = 0; i < b->n_labels && c->nnodes < HRD_CLIENT_NODES;
         i++) {
        uint32_t j;

        for (j = 0; j < c->nnodes && c->nodes[j] != node[i]; j++)
            ;
        if (j == c->nnodes)
            c->nodes[c->nnodes++] = node[i];
    }
}

/*
 * Counts the events of a refused batch b lost under the node ids of their
 * label sets, wherever they can be read: the stream must read to its end,
 * and a label set whose node id is refused counts nowhere. A batch
 * already refused once (its seq, from the socket then from the spool) is
 * not counted again. Returns 1 when its events are counted (now, or
 * before for a batch refused again; the events counted now are in
 * in->last_refused), 0 when they could not be read.
 */
static int count_refused(struct hrd_ingest *in, struct hrd_client *c,
                              const Hostrange__Batch *b)
{
    const uint8_t *p = b->samples.data;
    const uint8_t *end = p != NULL ? p + b->samples.len : p;
    uint64_t *by, total = 0;
    uint64_t label = UINT64_MAX;
    struct hrp_item it;

    if (c != NULL && b->seq != 0 && b->seq <= c->refused_seq)
        return 1;
    by = calloc(b->n_labels + 1, sizeof *by);
    if (by == NULL)
        return 0;
    while (p < end) {
        if (hrp_item_next(&p, end, &it) != 0) {
            free(by);
            return 0;
        }
        if (it.kind == HRP_ITEM_LABEL)
            label = it.index;
        else if (label < b->n_labels)
            by[label]++;
    }
    for (size_t i = 0; i < b->n_labels; i++) {
        uint32_t node;

        if (by[i] == 0 || !string_ok(b->labels[i]->node_id, 0) ||
            (node = hra_str(in->agg, b->labels[i]->node_id)) == 0)
            continue;
        hra_lost_add(in->agg, node, (int64_t)by[i]);
        total += by[i];
    }
    free(by);
    if (c != NULL) {
        c->refused += total;
        c->lost += total;
        if (b->seq > c->refused_seq)
            c->refused_seq = b->seq;
    }
    in->refused_events += total;
    in->last_refused = total;
    return 1;
}

enum hrd_ingest_result hrd_ingest_handle(struct hrd_ingest *in,
                                         const uint8_t *msg, size_t len,
                                         uint8_t **ack, size_t *ack_len,
                                         enum hrd_reject *reason)
{
    Hostrange__Batch *b = NULL;
    struct hrd_client *c;
    enum hrd_ingest_result res = HRD_INGEST_REJECTED;
    uint64_t seq = 0;
    int bad, rc;

    *ack = NULL;
    *ack_len = 0;
    in->last_refused = 0;
    in->last_counted = 0;
    if (len > HRP_MAX_INGEST_BYTES) {
        *reason = HRD_REJECT_OVERSIZE;
        goto reject;
    }
    b = hrp_unpack(&hostrange__batch__descriptor, len, msg, &rc);
    if (rc == -ENOMEM) {
        /* Nothing of it is taken: the client keeps it and sends it again
         * (the bytes may be fine; this daemon lacked the memory). */
        in->retries++;
        make_ack(seq, HOSTRANGE__ACK__STATUS__RETRY,
                 "the daemon is out of memory; send it again later", ack,
                 ack_len);
        return HRD_INGEST_RETRY;
    }
    if (b == NULL) {
        *reason = HRD_REJECT_MALFORMED;
        goto reject;
    }
    seq = b->seq;
    if ((bad = validate(b)) != 0) {
        /* Counted against the client when it is known; an unknown one is
         * not added, so invalid batches cannot fill the table. */
        c = hrd_ingest_client_find(in, b->pid, b->instance);
        if (c != NULL)
            c->rejected++;
        *reason = (enum hrd_reject)(bad - 1);
        goto reject;
    }
    c = hrd_ingest_client(in, b->pid, b->instance, b->process_label,
                          b->clock);
    if (c == NULL) {
        *reason = HRD_REJECT_NOMEM;
        goto reject;
    }
    if (b->clock_order[0] != '\0' &&
        (c->clock_order == NULL || strcmp(c->clock_order, b->clock_order))) {
        char *o = strdup(b->clock_order);

        if (o != NULL) {
            free(c->clock_order);
            c->clock_order = o;
        }
    }
    if (b->clock_step_ns > 0)
        c->clock_step_ns = b->clock_step_ns;
    c->clock_path = (unsigned)hrp_clock_path_bit(b->clock_path,
                                                 b->clock_order);
    if (b->seq <= c->max_seq) {
        if (!in->replaying)
            c->duplicates++;
        make_ack(seq, HOSTRANGE__ACK__STATUS__DUPLICATE, "", ack, ack_len);
        res = HRD_INGEST_DUPLICATE;
        goto out;
    }
    /* A batch of counters alone (no events: losses, the final counters)
     * is taken whatever the budget, so that losses reach the report. */
    if (b->events != 0 && hra_full(in->agg)) {
        *reason = HRD_REJECT_MEMORY;
        goto reject;
    }
    if (in->journal != NULL && in->journal(in->journal_ctx, msg, len) != 0) {
        in->retries++;
        make_ack(seq, HOSTRANGE__ACK__STATUS__RETRY,
                 "the daemon cannot keep batches now; send it again later",
                 ack, ack_len);
        res = HRD_INGEST_RETRY;
        goto out;
    }
    if (apply(in, c, b) != 0) {
        /* Part of it may be in: the batch is acknowledged as rejected so
         * the client counts it, never resends it twice. */
        *reason = HRD_REJECT_NOMEM;
        c->max_seq = b->seq;
        goto reject;
    }
    account(c, b);
    in->bytes += len;
    make_ack(seq, HOSTRANGE__ACK__STATUS__OK, "", ack, ack_len);
    res = HRD_INGEST_OK;
    goto out;
reject:
    in->rejected[*reason]++;
    {
        Hostrange__Ack m = HOSTRANGE__ACK__INIT;
        char why[64];
        int counted = 0;

        /* The events of a batch that decodes are counted lost under its
         * node ids, so that the report's lost column shows them. One
         * that applied in part (no memory) is not: what it holds is
         * partly in, and its client counts it. */
        if (b != NULL && *reason != HRD_REJECT_NOMEM)
            counted = count_refused(
                in, hrd_ingest_client_find(in, b->pid, b->instance), b);
        if (*reason == HRD_REJECT_MEMORY)
            in->refused_memory_events += in->last_refused;
        snprintf(why, sizeof why, "rejected: %s", hrd_reject_name(*reason));
        m.version = HRP_VERSION;
        m.seq = seq;
        m.status = HOSTRANGE__ACK__STATUS__REJECTED;
        m.error = why;
        m.counted_lost = counted != 0;
        in->last_counted = counted;
        *ack_len = hostrange__ack__get_packed_size(&m);
        *ack = malloc(*ack_len ? *ack_len : 1);
        if (*ack == NULL)
            *ack_len = 0;
        else
            hostrange__ack__pack(&m, *ack);
    }
out:
    hostrange__batch__free_unpacked(b, NULL);
    return res;
}
