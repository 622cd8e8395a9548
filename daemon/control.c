/* Control requests (see control.h). */
#include "config.h"

#include "daemon/control.h"
#include "lib/agg/agg_impl.h"
#include "lib/agg/observer.h"
#include "lib/run/pbuf.h"
#include "lib/run/runfields.h"
#include "daemon/save.h"
#include "lib/run/runkey.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/stream.h"
#include "lib/util/grow.h"

#include <endian.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

struct dump_ctx {
    Hostrange__Row *rows;
    size_t n, cap;
};

static int collect_row(const struct hra_row *r, void *arg)
{
    struct dump_ctx *d = arg;
    Hostrange__Row *row;

    if (hru_grow(&d->rows, &d->cap, d->n + 1, sizeof *d->rows, 256) != 0)
        return -ENOMEM;
    row = &d->rows[d->n++];
    hostrange__row__init(row);
    row->node_id = (char *)r->node_id;
    row->operator_ = (char *)r->op;
    row->backend = (char *)r->backend;
    row->phase = hrp_phase_parse(r->phase);
    row->range = (char *)r->range;
    row->metric = hrp_metric_parse(r->metric);
    row->count = r->count;
    row->mean = r->mean;
    row->median = r->median;
    row->min = r->min;
    row->max = r->max;
    row->p90 = r->p90;
    row->p99 = r->p99;
    row->stddev = r->stddev;
    row->exact = r->exact != 0;
    row->lost = r->lost;
    row->calls = r->calls;
    HRA_KEY_ROW_COUNTERS_COPY(row, r);
    row->clock_path = (char *)hrp_clock_path_name(r->clock_paths);
    if (r->depth > 0) {
        /* A row of a calling context: its names (the aggregation's). */
        row->path = malloc(r->depth * sizeof *row->path);
        if (row->path == NULL) {
            d->n--;
            return -ENOMEM;
        }
        for (uint32_t i = 0; i < r->depth; i++)
            row->path[i] = (char *)r->path[i];
        row->n_path = r->depth;
        row->sum = r->sum;
    }
    return 0;
}

/* The bytes of a reply (struct hrd_control.reply_alloc). */
static uint8_t *reply_buf(const struct hrd_control *ctl, size_t len)
{
    if (ctl->reply_alloc != NULL)
        return ctl->reply_alloc(len); /* exactly len: it is sent whole */
    return malloc(len ? len : 1);
}

static void pack_reply(const struct hrd_control *ctl,
                       Hostrange__ControlReply *m, uint8_t **reply,
                       size_t *reply_len)
{
    *reply_len = hostrange__control_reply__get_packed_size(m);
    *reply = reply_buf(ctl, *reply_len);
    if (*reply == NULL) {
        *reply_len = 0;
        return;
    }
    hostrange__control_reply__pack(m, *reply);
}

/* The cursor on the wire: the five order numbers, little-endian. */
#define CURSOR_BYTES 20

static int cursor_decode(const ProtobufCBinaryData *b, struct hra_cursor *c)
{
    memset(c, 0, sizeof *c);
    if (b->len == 0)
        return 0;
    if (b->len != CURSOR_BYTES)
        return -EINVAL;
    for (int i = 0; i < 5; i++) {
        uint32_t v;
        memcpy(&v, b->data + 4 * i, 4);
        c->pos[i] = le32toh(v);
    }
    c->started = 1;
    return 0;
}

static void cursor_encode(const struct hra_cursor *c, uint8_t *out)
{
    for (int i = 0; i < 5; i++) {
        uint32_t v = htole32(c->pos[i]);
        memcpy(out + 4 * i, &v, 4);
    }
}

/* The calibrations of the aggregation as reply messages, the most recent
 * first (observer.h): arrays the caller frees with calibs_free. */
struct calibs {
    struct hra_calib *c;
    Hostrange__Calibration *m;
    Hostrange__Calibration **p;
    size_t n;
};

static int calibs_make(struct hra_agg *a, struct calibs *cs)
{
    memset(cs, 0, sizeof *cs);
    if (hra_calib_collect(a, &cs->c, &cs->n) != 0)
        return -ENOMEM;
    cs->m = calloc(cs->n + 1, sizeof *cs->m);
    cs->p = calloc(cs->n + 1, sizeof *cs->p);
    if (cs->m == NULL || cs->p == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < cs->n; i++) {
        hra_calib_to_message(&cs->m[i], &cs->c[i]);
        cs->p[i] = &cs->m[i];
    }
    return 0;
}

static void calibs_free(struct calibs *cs)
{
    free(cs->c);
    free(cs->m);
    free(cs->p);
}

/* The events lost under each node id matching glob (empty: any) that
 * lost any, in string order: *lm (the messages) and *lp (pointers to
 * them), n of them; the caller frees both. Returns 0 or -ENOMEM. */
static int lost_make(const struct hra_agg *a, const char *glob,
                     Hostrange__RunNodeLost **lm, Hostrange__RunNodeLost ***lp,
                     size_t *n)
{
    *n = 0;
    *lm = calloc(a->str.n + 1, sizeof **lm);
    *lp = calloc(a->str.n + 1, sizeof **lp);
    if (*lm == NULL || *lp == NULL)
        return -ENOMEM;
    for (uint32_t id = 1; id <= a->str.n; id++) {
        if (a->str.lost[id - 1] == 0 ||
            (glob[0] != '\0' && fnmatch(glob, a->str.s[id - 1], 0) != 0))
            continue;
        hostrange__run_node_lost__init(&(*lm)[*n]);
        (*lm)[*n].node_id = a->str.s[id - 1];
        (*lm)[*n].lost = a->str.lost[id - 1];
        (*lp)[*n] = &(*lm)[*n];
        (*n)++;
    }
    return 0;
}

static void do_dump(struct hrd_control *ctl, const Hostrange__DumpRequest *q,
                    Hostrange__ControlReply *m, uint8_t **reply,
                    size_t *reply_len)
{
    Hostrange__DumpReply d = HOSTRANGE__DUMP_REPLY__INIT;
    Hostrange__Row **ptrs = NULL;
    struct dump_ctx dc = { 0 };
    struct hra_filter f = { q->node_glob, q->operator_glob, q->backend_glob,
                            q->range_glob, q->phase };
    struct hra_cursor cur;
    struct calibs cs = { 0 };
    uint8_t next[CURSOR_BYTES];
    uint64_t budget = 0;
    Hostrange__RunNodeLost *lm = NULL, **lp = NULL;

    if (q->phase != 0 && hrp_phase_name(q->phase) == NULL) {
        m->error = "bad phase in dump request";
        goto pack;
    }
    if (cursor_decode(&q->cursor, &cur) != 0) {
        m->error = "bad cursor in dump request";
        goto pack;
    }
    if (q->paged)
        budget = ctl->page_values ? ctl->page_values : HRD_PAGE_VALUES_DEFAULT;
    if (hra_rows_page_by(ctl->ingest->agg, &f, &cur, budget, q->by_path,
                             collect_row, &dc) != 0) {
        m->error = "out of memory";
        goto pack;
    }
    ptrs = malloc((dc.n + 1) * sizeof *ptrs);
    if (ptrs == NULL) {
        m->error = "out of memory";
        goto pack;
    }
    for (size_t i = 0; i < dc.n; i++)
        ptrs[i] = &dc.rows[i];
    d.n_rows = dc.n;
    d.rows = ptrs;
    if (q->paged && !cur.done) {
        cursor_encode(&cur, next);
        d.next_cursor.data = next;
        d.next_cursor.len = CURSOR_BYTES;
    }
    if (q->calibrations) {
        if (calibs_make(ctl->ingest->agg, &cs) != 0) {
            m->error = "out of memory";
            goto pack;
        }
        d.n_calibrations = cs.n;
        d.calibrations = cs.p;
    }
    if (!q->paged || cur.done) {
        if (lost_make(ctl->ingest->agg, q->node_glob, &lm, &lp,
                      &d.n_lost) != 0) {
            m->error = "out of memory";
            goto pack;
        }
        d.lost = lp;
        d.refused_memory_events = ctl->ingest->refused_memory_events;
    }
    m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_DUMP;
    m->dump = &d;
pack:
    pack_reply(ctl, m, reply, reply_len);
    for (size_t i = 0; i < dc.n; i++)
        free(dc.rows[i].path);
    free(dc.rows);
    free(ptrs);
    free(lm);
    free(lp);
    calibs_free(&cs);
}

/* Adds c to the distinct clocks in out[0..*n). */
static void add_clock(char **out, size_t *n, char *c)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(out[i], c) == 0)
            return;
    }
    out[(*n)++] = c;
}

static void fill_state(Hostrange__StateStats *st, const struct hrd_state_info *s)
{
    hostrange__state_stats__init(st);
    st->dir = (char *)s->dir;
    st->status = s->degraded ? "degraded" : "ok";
    st->last_error = (char *)s->last_error;
    st->journal_bytes = s->journal_bytes;
    st->journal_records = s->journal_records;
    st->snapshots = s->snapshots;
    st->write_errors = s->write_errors;
    st->loaded_keys = s->loaded_keys;
    st->loaded_clients = s->loaded_clients;
    st->replayed_records = s->replayed_records;
    st->load_problems = s->load_problems;
}

static void fill_spool(Hostrange__SpoolStats *st,
                       const struct hrd_spool_info *s)
{
    hostrange__spool_stats__init(st);
    st->dir = (char *)s->dir;
    st->files = s->files;
    st->batches = s->batches;
    st->bytes = s->bytes;
    st->ingested = s->ingested;
    st->duplicates = s->duplicates;
    st->rejected = s->rejected;
    st->rejected_files = s->rejected_files;
    st->lost_events = s->lost_events;
    st->waiting = s->waiting;
}

/* The profiler's own work per node id, for the stats (owned by *w). */
struct internal {
    Hostrange__NodeInternal *v;
    Hostrange__NodeInternal **p;
};

static size_t internal_make(const struct hra_agg *a, struct internal *w)
{
    size_t n = 0;

    w->v = calloc(a->str.n + 1, sizeof *w->v);
    w->p = calloc(a->str.n + 1, sizeof *w->p);
    if (w->v == NULL || w->p == NULL)
        return 0;
    for (uint32_t i = 0; i < a->str.n; i++) {
        const struct hra_internal *x = &a->str.internal[i];

        if (x->stalls == 0 && x->wakes == 0)
            continue;
        hostrange__node_internal__init(&w->v[n]);
        w->v[n].node_id = a->str.s[i];
        w->v[n].stalls = x->stalls;
        w->v[n].stall_ns = x->stall_ns;
        w->v[n].wakes = x->wakes;
        w->v[n].wake_ns = x->wake_ns;
        w->p[n] = &w->v[n];
        n++;
    }
    return n;
}

static void do_stats(struct hrd_control *ctl, Hostrange__ControlReply *m,
                     uint8_t **reply, size_t *reply_len)
{
    Hostrange__StatsReply s = HOSTRANGE__STATS_REPLY__INIT;
    Hostrange__StateStats st;
    Hostrange__SpoolStats sp;
    struct hrd_ingest *in = ctl->ingest;
    struct hra_agg *a = in->agg;
    Hostrange__Counter cnt[HRD_REJECT_COUNT + 1];
    Hostrange__Counter *cptr[HRD_REJECT_COUNT + 1];
    Hostrange__ClientStats *cs = NULL, **csp = NULL;
    struct calibs cal = { 0 };
    struct internal internal = { NULL, NULL };
    size_t ni;
    char **clocks = NULL, **nodes = NULL;
    struct hrd_client *c;
    size_t i = 0, nclocks = 0;

    s.daemon_pid = ctl->pid;
    s.uptime_ns = ctl->now_ns - ctl->start_ns;
    s.keys = a->nkeys;
    s.events = a->events;
    s.memory_bytes = a->bytes;
    s.memory_limit = a->max_bytes;
    s.rss_bytes = ctl->rss_bytes;
    s.exact_cap = a->exact_cap;
    for (uint32_t k = 0; k < a->nkeys; k++)
        s.histogram_keys += !a->keys[k]->exact;
    s.keys_capped = a->capped;
    s.keys_compacted = a->compacted;
    s.over_budget = a->over_budget != 0;
    s.paths = a->path.n;
    s.path_keys = a->npkeys;
    s.paths_too_deep = a->paths_too_deep;
    s.paths_table_full = a->paths_table_full;
    s.path_limit = a->max_paths;
    s.path_depth_limit = a->max_depth;
    s.retries = in->retries;
    s.ingest_bytes = in->bytes;
    s.refused_events = in->refused_events;
    s.refused_memory_events = in->refused_memory_events;
    ni = internal_make(a, &internal);
    s.n_internal = ni;
    s.internal = internal.p;
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
    if (ctl->state != NULL) {
        fill_state(&st, ctl->state);
        s.state = &st;
    }
    if (ctl->spool != NULL) {
        fill_spool(&sp, ctl->spool);
        s.spool = &sp;
    }

    cs = calloc(in->nclients + 1, sizeof *cs);
    csp = calloc(in->nclients + 1, sizeof *csp);
    clocks = calloc(in->nclients + 1, sizeof *clocks);
    nodes = calloc((in->nclients + 1) * HRD_CLIENT_NODES, sizeof *nodes);
    if (cs == NULL || csp == NULL || clocks == NULL || nodes == NULL ||
        calibs_make(a, &cal) != 0) {
        m->error = "out of memory";
        goto pack;
    }
    s.n_calibrations = cal.n;
    s.calibrations = cal.p;
    /* Oldest client first. */
    i = in->nclients;
    for (c = in->clients; c != NULL; c = c->next) {
        hrd_ingest_client_stats(&cs[--i], c);
        csp[i] = &cs[i];
        hrd_ingest_client_nodes(&cs[i], c, a, &nodes[i * HRD_CLIENT_NODES]);
    }
    for (i = 0; i < in->nclients; i++) {
        if (cs[i].clock[0] != '\0')
            add_clock(clocks, &nclocks, cs[i].clock);
    }
    s.n_clients = in->nclients;
    s.clients = csp;
    s.n_clocks = nclocks;
    s.clocks = clocks;
    m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_STATS;
    m->stats = &s;
pack:
    pack_reply(ctl, m, reply, reply_len);
    free(cs);
    free(csp);
    free(clocks);
    free(nodes);
    free(internal.v);
    free(internal.p);
    calibs_free(&cal);
}

static uint32_t reset_filtered(struct hra_agg *agg,
                               const Hostrange__ResetRequest *q)
{
    struct hra_filter f = { q->node_glob, q->operator_glob, q->backend_glob,
                            q->range_glob, q->phase };

    if (f.node[0] == '\0' && f.op[0] == '\0' && f.backend[0] == '\0' &&
        f.range[0] == '\0' && f.phase == 0) {
        uint32_t n = agg->nkeys;
        hra_reset(agg);
        return n;
    }
    return hra_reset_filtered(agg, &f);
}

int64_t hrd_control_apply_reset(struct hra_agg *agg, const uint8_t *msg,
                                size_t len)
{
    Hostrange__ResetRequest *q;
    int64_t n;

    q = hostrange__reset_request__unpack(NULL, len, msg);
    if (q == NULL)
        return -EINVAL;
    n = reset_filtered(agg, q);
    hostrange__reset_request__free_unpacked(q, NULL);
    return n;
}

static void do_reset(struct hrd_control *ctl, const Hostrange__ResetRequest *q,
                     Hostrange__ControlReply *m, Hostrange__ResetReply *rr)
{
    uint8_t *buf;
    size_t len;
    int rc = 0;

    if (q->phase != 0 && hrp_phase_name(q->phase) == NULL) {
        m->error = "bad phase in reset request";
        return;
    }
    if (ctl->journal_reset != NULL) {
        len = hostrange__reset_request__get_packed_size(q);
        buf = malloc(len + 1);
        if (buf == NULL) {
            m->error = "out of memory";
            return;
        }
        hostrange__reset_request__pack(q, buf);
        rc = ctl->journal_reset(ctl->journal_ctx, buf, len);
        free(buf);
    }
    if (rc != 0) {
        m->error = "the reset cannot be written to the state directory "
                   "(see stats); nothing was reset";
        return;
    }
    rr->keys = reset_filtered(ctl->ingest->agg, q);
    m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_RESET;
    m->reset = rr;
}

/* Bytes of x as a protobuf varint. */
static size_t varint_len(uint64_t x)
{
    size_t n = 1;

    while (x >= 0x80) {
        x >>= 7;
        n++;
    }
    return n;
}

/*
 * Packs the reply to a packed save page straight from the page's RunKey
 * messages (r->keys, their events still in the aggregation): the same
 * message as packing m with each key first packed on its own into
 * SaveReply.packed_keys, without that intermediate copy of every key.
 * Field order: ControlReply.version, then ControlReply.save holding the
 * page's small fields (next_cursor, end) and then packed_keys.
 */
static void pack_save_direct(const struct hrd_control *ctl,
                             const Hostrange__ControlReply *m,
                             const Hostrange__SaveReply *r, uint8_t **reply,
                             size_t *reply_len)
{
    Hostrange__SaveReply small = *r;
    size_t ssize, save_len, total, *klen;
    uint8_t *p;

    *reply = NULL;
    *reply_len = 0;
    small.n_keys = 0;
    small.keys = NULL;
    ssize = hostrange__save_reply__get_packed_size(&small);
    klen = malloc((r->n_keys + 1) * sizeof *klen);
    if (klen == NULL)
        return;
    save_len = ssize;
    for (size_t i = 0; i < r->n_keys; i++) {
        klen[i] = hostrange__run_key__get_packed_size(r->keys[i]);
        save_len += 1 + varint_len(klen[i]) + klen[i];
    }
    total = 1 + varint_len(m->version) + 1 + varint_len(save_len) + save_len;
    p = *reply = reply_buf(ctl, total);
    if (p == NULL) {
        free(klen);
        return;
    }
    *p++ = HRR_CONTROLREPLY_VERSION << 3 | 0; /* varint */
    p = hrp_put_varint(p, m->version);
    *p++ = HRR_CONTROLREPLY_SAVE << 3 | 2; /* length-delimited */
    p = hrp_put_varint(p, save_len);
    p += hostrange__save_reply__pack(&small, p);
    for (size_t i = 0; i < r->n_keys; i++) {
        *p++ = HRR_SAVEREPLY_PACKED_KEYS << 3 | 2;
        p = hrp_put_varint(p, klen[i]);
        p += hostrange__run_key__pack(r->keys[i], p);
    }
    free(klen);
    *reply_len = total;
}

/*
 * Packs the reply to a packed save page of run format 1 whose keys were
 * written as the bytes of SaveReply.packed_keys fields (keys): the same
 * message as packing m with those keys in r->packed_keys, the keys' bytes
 * copied once. Field order as pack_save_direct's.
 */
static void pack_save_bytes(const struct hrd_control *ctl,
                            const Hostrange__ControlReply *m,
                            const Hostrange__SaveReply *r,
                            const struct hrr_pbuf *keys, uint8_t **reply,
                            size_t *reply_len)
{
    size_t ssize = hostrange__save_reply__get_packed_size(r);
    size_t save_len = ssize + keys->len;
    size_t total = 1 + varint_len(m->version) + 1 + varint_len(save_len) +
                   save_len;
    uint8_t *p = *reply = reply_buf(ctl, total);

    *reply_len = 0;
    if (p == NULL)
        return;
    *p++ = HRR_CONTROLREPLY_VERSION << 3 | 0; /* varint */
    p = hrp_put_varint(p, m->version);
    *p++ = HRR_CONTROLREPLY_SAVE << 3 | 2; /* length-delimited */
    p = hrp_put_varint(p, save_len);
    p += hostrange__save_reply__pack(r, p);
    if (keys->len != 0)
        memcpy(p, keys->p, keys->len);
    *reply_len = total;
}

/* A page of a save (runkey.h); the cursor is the next serial, 4 bytes
 * little-endian. */
static void do_save(struct hrd_control *ctl, const Hostrange__SaveRequest *q,
                    Hostrange__ControlReply *m, uint8_t **reply,
                    size_t *reply_len)
{
    Hostrange__SaveReply sr = HOSTRANGE__SAVE_REPLY__INIT;
    uint32_t cursor = 0, le;
    uint8_t next[4];
    int done = 0, made = 0;
    int format = q->format < HRR_FORMAT_NEWEST ? (int)q->format
                                            : (int)HRR_FORMAT_NEWEST;
    /* Keys coded as events point into the aggregation: a packed page of
     * them is packed straight from the messages (pack_save_direct). Sorted
     * keys are written one by one as their bytes instead (by hand where
     * they can be, runkey.h), so that the page holds their bytes rather
     * than their arrays of values (pack_save_bytes). */
    int direct = q->packed && format >= HRR_FORMAT_EVENTS;
    int bytes = q->packed && !direct;
    struct hrr_pbuf keys = { NULL, 0, 0 };

    if (q->cursor.len != 0 && q->cursor.len != sizeof cursor) {
        m->error = "bad cursor in save request";
        goto pack;
    }
    if (q->cursor.len != 0) {
        memcpy(&le, q->cursor.data, 4);
        cursor = le32toh(le);
    }
    if (hrd_save_page(ctl->ingest->agg, ctl->ingest, &cursor,
                        ctl->page_values ? ctl->page_values
                                         : HRD_PAGE_VALUES_DEFAULT,
                        q->packed && !direct, format,
                        bytes ? &keys : NULL, &sr, &done) != 0) {
        m->error = "out of memory";
        goto pack;
    }
    made = 1;
    if (!done) {
        le = htole32(cursor);
        memcpy(next, &le, 4);
        sr.next_cursor.data = next;
        sr.next_cursor.len = 4;
    }
    m->body_case = HOSTRANGE__CONTROL_REPLY__BODY_SAVE;
    m->save = &sr;
    if (direct || bytes) {
        if (direct)
            pack_save_direct(ctl, m, &sr, reply, reply_len);
        else
            pack_save_bytes(ctl, m, &sr, &keys, reply, reply_len);
        hrd_save_page_free(&sr);
        free(keys.p);
        return;
    }
pack:
    pack_reply(ctl, m, reply, reply_len);
    free(keys.p);
    if (made)
        hrd_save_page_free(&sr);
}

void hrd_control_handle(struct hrd_control *ctl, const uint8_t *msg,
                        size_t len, uint8_t **reply, size_t *reply_len)
{
    Hostrange__ControlReply m = HOSTRANGE__CONTROL_REPLY__INIT;
    Hostrange__PingReply ping = HOSTRANGE__PING_REPLY__INIT;
    Hostrange__ResetReply rr = HOSTRANGE__RESET_REPLY__INIT;
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
        case HOSTRANGE__CONTROL_REQUEST__BODY_SAVE:
            do_save(ctl, q->save, &m, reply, reply_len);
            goto out;
        case HOSTRANGE__CONTROL_REQUEST__BODY_RESET:
            do_reset(ctl, q->reset, &m, &rr);
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
    pack_reply(ctl, &m, reply, reply_len);
out:
    hostrange__control_request__free_unpacked(q, NULL);
}
