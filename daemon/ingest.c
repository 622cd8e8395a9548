/* Decoding, validation and aggregation of batches (see ingest.h). */
#include "config.h"

#include "daemon/ingest.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

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
};

const char *hrd_reject_name(enum hrd_reject r)
{
    return r < HRD_REJECT_COUNT ? reject_names[r] : "unknown";
}

void hrd_ingest_init(struct hrd_ingest *in, struct hrd_agg *agg)
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
        free(c);
    }
    in->clients = NULL;
}

static int string_ok(const char *s, int may_be_empty)
{
    size_t n = strnlen(s, HRP_MAX_STRING + 1);

    return n <= HRP_MAX_STRING && (may_be_empty || n > 0);
}

/* Checks every field of a decoded batch. Returns 0 or the reason + 1. */
static int validate(const Hostrange__Batch *b)
{
    size_t n = b->n_sample_label, r = b->n_record_label;

    if (b->version != HRP_VERSION)
        return HRD_REJECT_VERSION + 1;
    if (b->n_sample_range != n || b->n_inclusive_ns != n ||
        b->n_self_ns != n || b->n_record_range != r || b->n_record_ns != r)
        return HRD_REJECT_ARRAYS + 1;
    if (!string_ok(b->process_label, 1) || !string_ok(b->clock, 1))
        return HRD_REJECT_STRING + 1;
    for (size_t i = 0; i < b->n_labels; i++) {
        const Hostrange__LabelSet *l = b->labels[i];
        if (!string_ok(l->node_id, 0) || !string_ok(l->operator_, 1) ||
            !string_ok(l->backend, 1))
            return HRD_REJECT_STRING + 1;
        if (hrp_phase_name(l->phase) == NULL)
            return HRD_REJECT_PHASE + 1;
    }
    for (size_t i = 0; i < b->n_ranges; i++) {
        if (!string_ok(b->ranges[i], 0))
            return HRD_REJECT_STRING + 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (b->sample_label[i] >= b->n_labels ||
            b->sample_range[i] >= b->n_ranges)
            return HRD_REJECT_INDEX + 1;
        if (b->self_ns[i] > b->inclusive_ns[i])
            return HRD_REJECT_VALUE + 1;
    }
    for (size_t i = 0; i < r; i++) {
        if (b->record_label[i] >= b->n_labels ||
            b->record_range[i] >= b->n_ranges)
            return HRD_REJECT_INDEX + 1;
    }
    return 0;
}

static struct hrd_client *client_get(struct hrd_ingest *in,
                                     const Hostrange__Batch *b)
{
    struct hrd_client *c;

    for (c = in->clients; c != NULL; c = c->next) {
        if (c->pid == b->pid && c->instance == b->instance)
            return c;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->label = strdup(b->process_label);
    c->clock = strdup(b->clock);
    if (c->label == NULL || c->clock == NULL) {
        free(c->label);
        free(c->clock);
        free(c);
        return NULL;
    }
    c->pid = b->pid;
    c->instance = b->instance;
    c->next = in->clients;
    in->clients = c;
    in->nclients++;
    return c;
}

/* Aggregates a valid batch. Returns 0 or -ENOMEM (with part of it added). */
static int apply(struct hrd_agg *a, const Hostrange__Batch *b)
{
    uint32_t *lnode = NULL, *lop = NULL, *lback = NULL, *rid = NULL;
    struct hrd_key *k = NULL;
    uint32_t klabel = UINT32_MAX, krange = UINT32_MAX;
    int rc = -ENOMEM;

    lnode = calloc(b->n_labels + 1, sizeof *lnode);
    lop = calloc(b->n_labels + 1, sizeof *lop);
    lback = calloc(b->n_labels + 1, sizeof *lback);
    rid = calloc(b->n_ranges + 1, sizeof *rid);
    if (lnode == NULL || lop == NULL || lback == NULL || rid == NULL)
        goto out;
    for (size_t i = 0; i < b->n_ranges; i++) {
        if ((rid[i] = hrd_agg_str(a, b->ranges[i])) == 0)
            goto out;
        hrd_agg_rank_range(a, rid[i]);
    }
    for (size_t i = 0; i < b->n_labels; i++) {
        const Hostrange__LabelSet *l = b->labels[i];
        if ((lnode[i] = hrd_agg_str(a, l->node_id)) == 0 ||
            (lop[i] = hrd_agg_str(a, l->operator_)) == 0 ||
            (lback[i] = hrd_agg_str(a, l->backend)) == 0)
            goto out;
    }
    /* Nodes are ranked in the order their samples arrive. */
    for (size_t i = 0; i < b->n_sample_label + b->n_record_label; i++) {
        uint32_t l = i < b->n_sample_label
                         ? b->sample_label[i]
                         : b->record_label[i - b->n_sample_label];
        hrd_agg_rank_node(a, lnode[l]);
    }
    for (size_t i = 0; i < b->n_sample_label; i++) {
        uint32_t l = b->sample_label[i], r = b->sample_range[i];
        if (l != klabel || r != krange) {
            k = hrd_agg_key(a, lnode[l], lop[l], lback[l],
                            b->labels[l]->phase, rid[r]);
            if (k == NULL)
                goto out;
            klabel = l;
            krange = r;
        }
        if (hrd_agg_add(a, k, b->inclusive_ns[i], b->self_ns[i]) != 0)
            goto out;
    }
    for (size_t i = 0; i < b->n_record_label; i++) {
        uint32_t l = b->record_label[i], r = b->record_range[i];
        k = hrd_agg_key(a, lnode[l], lop[l], lback[l], b->labels[l]->phase,
                        rid[r]);
        if (k == NULL || hrd_agg_add_record(a, k, b->record_ns[i]) != 0)
            goto out;
    }
    rc = 0;
out:
    free(lnode);
    free(lop);
    free(lback);
    free(rid);
    return rc;
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

enum hrd_ingest_result hrd_ingest_handle(struct hrd_ingest *in,
                                         const uint8_t *msg, size_t len,
                                         uint8_t **ack, size_t *ack_len,
                                         enum hrd_reject *reason)
{
    Hostrange__Batch *b = NULL;
    struct hrd_client *c;
    enum hrd_ingest_result res = HRD_INGEST_REJECTED;
    uint64_t seq = 0;
    int bad;

    *ack = NULL;
    *ack_len = 0;
    if (len > HRP_MAX_INGEST_BYTES) {
        *reason = HRD_REJECT_OVERSIZE;
        goto reject;
    }
    b = hostrange__batch__unpack(NULL, len, msg);
    if (b == NULL) {
        *reason = HRD_REJECT_MALFORMED;
        goto reject;
    }
    seq = b->seq;
    if ((bad = validate(b)) != 0) {
        *reason = (enum hrd_reject)(bad - 1);
        goto reject;
    }
    c = client_get(in, b);
    if (c == NULL) {
        *reason = HRD_REJECT_NOMEM;
        goto reject;
    }
    if (b->seq <= c->max_seq) {
        c->duplicates++;
        make_ack(seq, HOSTRANGE__ACK__STATUS__DUPLICATE, "", ack, ack_len);
        hostrange__batch__free_unpacked(b, NULL);
        return HRD_INGEST_DUPLICATE;
    }
    if (apply(in->agg, b) != 0) {
        /* Part of it may be in: the batch is acknowledged as rejected so
         * the client counts it, never resends it twice. */
        *reason = HRD_REJECT_NOMEM;
        c->max_seq = b->seq;
        goto reject;
    }
    if (b->seq > c->max_seq + 1)
        c->gaps += b->seq - c->max_seq - 1;
    c->max_seq = b->seq;
    c->batches++;
    c->events += b->n_sample_label + b->n_record_label;
    if (b->lost_events > c->lost)
        c->lost = b->lost_events;
    c->out_of_order = b->errors_out_of_order;
    c->open_at_window_end = b->errors_open_at_window_end;
    c->foreign_thread = b->errors_foreign_thread;
    c->label_in_window = b->errors_label_in_window;
    c->too_deep = b->errors_too_deep;
    make_ack(seq, HOSTRANGE__ACK__STATUS__OK, "", ack, ack_len);
    res = HRD_INGEST_OK;
    goto out;
reject:
    in->rejected[*reason]++;
    {
        char why[64];
        snprintf(why, sizeof why, "rejected: %s", hrd_reject_name(*reason));
        make_ack(seq, HOSTRANGE__ACK__STATUS__REJECTED, why, ack, ack_len);
    }
out:
    hostrange__batch__free_unpacked(b, NULL);
    return res;
}
