/* Control requests (see control.h). */
#include "config.h"

#include "daemon/control.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dump_ctx {
    Hostrange__Row *rows;
    Hostrange__Row **ptrs;
    size_t n, cap;
};

static int collect_row(const struct hrd_row *r, void *arg)
{
    struct dump_ctx *d = arg;
    Hostrange__Row *row;

    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        Hostrange__Row *nr = realloc(d->rows, cap * sizeof *nr);
        if (nr == NULL)
            return -ENOMEM;
        d->rows = nr;
        d->cap = cap;
    }
    row = &d->rows[d->n++];
    hostrange__row__init(row);
    row->node_id = (char *)r->node_id;
    row->operator_ = (char *)r->op;
    row->backend = (char *)r->backend;
    row->phase = hrp_phase_parse(r->phase);
    row->range = (char *)r->range;
    row->metric = strcmp(r->metric, "self") == 0 ? HRP_METRIC_SELF
                                                 : HRP_METRIC_INCLUSIVE;
    row->count = r->count;
    row->mean = r->mean;
    row->median = r->median;
    row->min = r->min;
    row->max = r->max;
    row->exact = r->exact != 0;
    return 0;
}

static void pack_reply(Hostrange__ControlReply *m, uint8_t **reply,
                       size_t *reply_len)
{
    *reply_len = hostrange__control_reply__get_packed_size(m);
    *reply = malloc(*reply_len ? *reply_len : 1);
    if (*reply == NULL) {
        *reply_len = 0;
        return;
    }
    hostrange__control_reply__pack(m, *reply);
}

static void do_dump(struct hrd_control *ctl, const Hostrange__DumpRequest *q,
                    Hostrange__ControlReply *m, uint8_t **reply,
                    size_t *reply_len)
{
    Hostrange__DumpReply d = HOSTRANGE__DUMP_REPLY__INIT;
    struct dump_ctx dc = { 0 };

    if (hrd_agg_rows(ctl->ingest->agg, q->node_glob, collect_row, &dc) != 0) {
        m->error = "out of memory";
    } else {
        dc.ptrs = malloc((dc.n + 1) * sizeof *dc.ptrs);
        if (dc.ptrs == NULL) {
            m->error = "out of memory";
        } else {
            for (size_t i = 0; i < dc.n; i++)
                dc.ptrs[i] = &dc.rows[i];
            d.n_rows = dc.n;
            d.rows = dc.ptrs;
            m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_DUMP;
            m->dump = &d;
        }
    }
    pack_reply(m, reply, reply_len);
    free(dc.rows);
    free(dc.ptrs);
}

static void do_stats(struct hrd_control *ctl, Hostrange__ControlReply *m,
                     uint8_t **reply, size_t *reply_len)
{
    Hostrange__StatsReply s = HOSTRANGE__STATS_REPLY__INIT;
    struct hrd_ingest *in = ctl->ingest;
    Hostrange__Counter cnt[HRD_REJECT_COUNT + 1];
    Hostrange__Counter *cptr[HRD_REJECT_COUNT + 1];
    Hostrange__ClientStats *cs = NULL, **csp = NULL;
    struct hrd_client *c;
    size_t i = 0;

    s.daemon_pid = ctl->pid;
    s.uptime_ns = ctl->now_ns - ctl->start_ns;
    s.keys = in->agg->nkeys;
    s.events = in->agg->events;
    s.memory_bytes = in->agg->bytes;
    for (int r = 0; r < HRD_REJECT_COUNT; r++) {
        hostrange__counter__init(&cnt[r]);
        cnt[r].name = (char *)hrd_reject_name((enum hrd_reject)r);
        cnt[r].value = in->rejected[r];
        cptr[r] = &cnt[r];
    }
    hostrange__counter__init(&cnt[HRD_REJECT_COUNT]);
    cnt[HRD_REJECT_COUNT].name = "control";
    cnt[HRD_REJECT_COUNT].value = ctl->control_rejected;
    cptr[HRD_REJECT_COUNT] = &cnt[HRD_REJECT_COUNT];
    s.n_rejections = HRD_REJECT_COUNT + 1;
    s.rejections = cptr;

    cs = calloc(in->nclients + 1, sizeof *cs);
    csp = calloc(in->nclients + 1, sizeof *csp);
    if (cs == NULL || csp == NULL) {
        m->error = "out of memory";
        goto pack;
    }
    /* Oldest client first. */
    i = in->nclients;
    for (c = in->clients; c != NULL; c = c->next) {
        Hostrange__ClientStats *x = &cs[--i];
        hostrange__client_stats__init(x);
        x->pid = c->pid;
        x->instance = c->instance;
        x->process_label = c->label;
        x->batches = c->batches;
        x->events = c->events;
        x->duplicates = c->duplicates;
        x->gaps = c->gaps;
        x->lost_events = c->lost;
        x->errors_out_of_order = c->out_of_order;
        x->errors_open_at_window_end = c->open_at_window_end;
        x->errors_foreign_thread = c->foreign_thread;
        x->errors_label_in_window = c->label_in_window;
        x->errors_too_deep = c->too_deep;
        x->clock = c->clock;
        csp[i] = x;
    }
    s.n_clients = in->nclients;
    s.clients = csp;
    m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_STATS;
    m->stats = &s;
pack:
    pack_reply(m, reply, reply_len);
    free(cs);
    free(csp);
}

void hrd_control_handle(struct hrd_control *ctl, const uint8_t *msg,
                        size_t len, uint8_t **reply, size_t *reply_len)
{
    Hostrange__ControlReply m = HOSTRANGE__CONTROL_REPLY__INIT;
    Hostrange__PingReply ping = HOSTRANGE__PING_REPLY__INIT;
    Hostrange__ControlRequest *q;

    m.version = HRP_VERSION;
    q = hostrange__control_request__unpack(NULL, len, msg);
    if (q == NULL) {
        ctl->control_rejected++;
        m.error = "malformed control request";
    } else if (q->version != HRP_VERSION) {
        ctl->control_rejected++;
        m.error = "protocol version mismatch";
    } else {
        switch (q->body_case) {
        case HOSTRANGE__CONTROL_REQUEST__BODY_DUMP:
            do_dump(ctl, q->dump, &m, reply, reply_len);
            goto out;
        case HOSTRANGE__CONTROL_REQUEST__BODY_STATS:
            do_stats(ctl, &m, reply, reply_len);
            goto out;
        case HOSTRANGE__CONTROL_REQUEST__BODY_RESET:
            hrd_agg_reset(ctl->ingest->agg);
            break;
        case HOSTRANGE__CONTROL_REQUEST__BODY_PING:
            ping.daemon_pid = ctl->pid;
            m.body_case = HOSTRANGE__CONTROL_REPLY__BODY_PING;
            m.ping = &ping;
            break;
        default:
            ctl->control_rejected++;
            m.error = "unknown control request";
            break;
        }
    }
    pack_reply(&m, reply, reply_len);
out:
    hostrange__control_request__free_unpacked(q, NULL);
}
