/*
 * The shipper: one background thread per process that drains the threads'
 * rings into batches, sends them to the daemon's ingest socket (nanomsg
 * REQ/REP over IPC) and waits for each acknowledgement before sending the
 * next, resending after HR__RESEND_MS without an answer (the daemon drops a
 * batch it has already seen, by process identity and sequence number).
 *
 * Memory: unacknowledged batches are kept up to HOSTRANGE_BUFFER_MB (default
 * 64). While the daemon answers (an acknowledgement within HR__LIVE_MS), a
 * full queue holds the rings back, so a fast producer waits for a slower
 * daemon (the wait is measured and left out of its ranges) and nothing is
 * lost. When the daemon does not answer, what does not fit is dropped and
 * counted as lost, per label set; every later batch carries the counts.
 *
 * The program is never made to wait here except in hr_flush and at exit,
 * both bounded by a timeout, during which a daemon that is away (its socket
 * missing, connections refused, or no answer) is tried again every
 * HR__RETRY_MS: it may be restarting. A process that has never reached a
 * daemon does not wait when none listens.
 *
 * At exit, what is still not acknowledged (the queue, and counts no
 * acknowledged batch carried) goes to a spool file (client/spool.h) for the
 * next daemon, up to HOSTRANGE_SPOOL_MB: the batches past it, and all of
 * them when no file can be written, are counted lost.
 *
 * fork: the shipper parks (after waiting up to HR__PARK_WAIT_MS for the
 * answer to a batch in flight) and closes its socket before the fork (nanomsg
 * cannot be used in a child forked while a socket is open); the parent
 * resumes; the child starts with empty state, a new identity and no
 * shipper, which starts again when needed. A program that keeps nanomsg
 * sockets of its own open across fork cannot use hostrange in the child.
 */
#include "config.h"

#include "client/client.h"
#include "client/encode.h"
#include "client/spool.h"
#include "proto/hostrange.pb-c.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"
#include "proto/spool.h"

#include <errno.h>
#include <limits.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define HR__RESEND_MS 1000u
#define HR__LIVE_MS 2000u
/* While there is work (a window open, samples or batches about), the
 * shipper drains the rings this often; without a daemon to send to, it
 * looks for one this often. Otherwise it sleeps until it is woken. */
#define HR__CADENCE_MS 20
#define HR__ABSENT_MS 250
/* While a flush waits for a daemon that is away, the shipper tries again
 * this often (nanomsg reconnects within HR__RECONNECT_MAX_MS). */
#define HR__RETRY_MS 20
#define HR__RECONNECT_MS 20
#define HR__RECONNECT_MAX_MS 200

/* A sealed batch, with its events per label set (process ids; one
 * allocation with the struct) and the cumulative counts it carries. */
struct pending {
    struct pending *next;
    uint64_t seq;
    uint32_t events;
    int sent;                  /* sent at least once */
    int final;                 /* carries the final counters */
    uint64_t lost_at, marks_at;
    size_t len;
    uint8_t *buf;              /* the spare buffer (below) when is_spare */
    int is_spare;
    uint32_t nlab;
    uint32_t *lab;
    uint64_t *lab_events;
};

_Atomic int hr__g_ship_sleeping;
/* The shipper sleeps with no timeout (nothing to do). */
static _Atomic int deep_sleep;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static _Atomic int started;
static int efd = -1;
static int stopping, parking, parked;  /* under lock */
static uint64_t flush_asked, flush_done; /* generations, under lock */
static uint64_t delivered, lost, batches; /* under lock */
static uint64_t spooled;                  /* under lock */
/* A daemon has answered this process, and when it last did. */
static _Atomic int reached;
static _Atomic uint64_t answered_ms;
static uint64_t *lost_by_label;           /* label id -> count, under lock */
static uint32_t lost_cap;

/* Owned by the shipper thread. */
static struct pending *queue_head, *queue_tail;
static size_t queue_bytes, queue_max;
/* Buffers of HR__SPARE_BYTES, room for any batch the encoder seals,
 * that batches are packed into (hr__enc_seal_into): at most HR__SPARES,
 * made as needed and kept from one delivered batch to the next, so that
 * the pages a batch is written to are mapped and cleared once rather
 * than once per batch (a new allocation of a batch's size is often a new
 * mapping, and memory given back is mapped again). spares[0..nspare) are
 * free; spares_out are held by batches of the queue. A batch that finds
 * none free gets a buffer of its own size. The free ones are given back
 * when the shipper goes to sleep with nothing to do. */
#define HR__SPARE_BYTES (HR__BATCH_BYTES + 65536u)
#define HR__SPARES 4
static uint8_t *spares[HR__SPARES];
static int nspare, spares_out;

/* A free spare buffer, or NULL. */
static uint8_t *spare_take(void)
{
    if (nspare == 0 && spares_out < HR__SPARES &&
        (spares[0] = malloc(HR__SPARE_BYTES)) != NULL)
        nspare = 1;
    return nspare > 0 ? spares[nspare - 1] : NULL;
}

/* Frees batch p, its buffer kept when it is a spare. */
static void pending_free(struct pending *p)
{
    if (p->is_spare) {
        spares[nspare++] = p->buf;
        spares_out--;
    } else {
        free(p->buf);
    }
    free(p);
}

/* Frees the free spare buffers. */
static void spares_free(void)
{
    while (nspare > 0)
        free(spares[--nspare]);
}
static uint64_t seq;
static struct hr__enc enc;
static int enc_ok;
static uint64_t instance;
static char process_label[256];
static char ingest_path[PATH_MAX];
static char ingest_url[PATH_MAX + 16];
static int sock = -1;
static int inflight;
static uint64_t sent_at_ms, first_sent_ms, last_ack_ms;
static uint64_t lost_reported; /* the lost count the last batch carried */
static uint64_t marks_reported; /* the marks count the last batch carried */
/* The sum of the refusals (bad_name, bad_label, contexts_full) the last
 * batch carried. */
static uint64_t refused_reported;
/* The process exits (hr__ship_stop): batches carry its final counters,
 * and one is sent even when no count changed; final_sealed once one is,
 * final_answered once a daemon has answered one. exit_listens: whether a
 * daemon listens, looked at once per exit (-1: not yet; see
 * final_to_daemon). */
static _Atomic int exiting;
static int final_sealed, final_answered;
static int exit_listens = -1;
/* The counts the last acknowledged batch carried. */
static uint64_t lost_acked, marks_acked;
static char spool_dir[PATH_MAX];
static size_t spool_max;


void hr__ship_wake(void)
{
    uint64_t one = 1;

    if (efd >= 0 && write(efd, &one, sizeof one) < 0) {
        /* The counter is saturated: the shipper has a wake-up pending. */
    }
}

void hr__ship_kick(void)
{
    /* Sequentially consistent with the shipper's store of deep_sleep and
     * its look at the rings and windows before it sleeps: either it sees
     * the new work, or this sees it asleep. */
    if (atomic_load(&deep_sleep))
        hr__ship_wake();
}

int hr__ship_started(void)
{
    return atomic_load_explicit(&started, memory_order_acquire);
}

void hr__ship_counters(hr_counters *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&lock);
    out->delivered = delivered;
    out->lost = lost;
    out->batches_sent = batches;
    out->spooled = spooled;
    pthread_mutex_unlock(&lock);
    hr__reg_counters(out);
}

/* The namer of the encoder: the intern tables, read under their lock
 * (their strings are never freed, so the pointers stay valid after it). */
static const char *range_name(uint32_t id)
{
    const char *name;

    hr__intern_lock();
    name = hr__site_name(id);
    hr__intern_unlock();
    return name;
}

static int label_get(uint32_t id, const char **node_id, const char **op,
                     const char **backend, unsigned *phase)
{
    int rc;

    hr__intern_lock();
    rc = hr__label_get(id, node_id, op, backend, phase);
    hr__intern_unlock();
    return rc;
}

static const struct hr__namer namer = { range_name, label_get, hr__ctx_get };

/* Makes room in lost_by_label for every label set (lock held). */
static void lost_grow_locked(void)
{
    uint32_t need = hr__label_count() + 1;

    if (need > lost_cap) {
        uint64_t *n = realloc(lost_by_label, need * sizeof *n);
        if (n != NULL) {
            memset(n + lost_cap, 0, (need - lost_cap) * sizeof *n);
            lost_by_label = n;
            lost_cap = need;
        }
    }
}

/* Counts a sealed batch's events as lost, per label set (lock held). */
static void count_batch_lost_locked(const struct pending *p)
{
    lost_grow_locked();
    lost += p->events;
    for (uint32_t i = 0; i < p->nlab; i++) {
        if (p->lab[i] < lost_cap)
            lost_by_label[p->lab[i]] += p->lab_events[i];
    }
}

/* Counts the encoder's events as lost, per label set, and empties it (lock
 * held). */
static void count_lost_locked(void)
{
    lost_grow_locked();
    lost += enc.events;
    for (uint32_t i = 0; i < enc.lab.n; i++) {
        if (enc.lab.ids[i] < lost_cap)
            lost_by_label[enc.lab.ids[i]] += enc.events_by[i];
    }
    hr__enc_clear(&enc);
}

static int daemon_absent(void)
{
    struct stat st;

    return stat(ingest_path, &st) != 0;
}

/* 1 when nothing listens on the ingest socket: its path is missing, or a
 * connection to it is refused (a daemon that died left it). */
static int daemon_unreachable(void)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    int fd, rc;

    if (daemon_absent())
        return 1;
    if (strlen(ingest_path) >= sizeof a.sun_path)
        return 0; /* nanomsg cannot reach it either; not ours to judge */
    memcpy(a.sun_path, ingest_path, strlen(ingest_path) + 1);
    /* Not blocking: a frozen daemon's full backlog is a listening one. */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 0;
    rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    rc = rc != 0 && (errno == ECONNREFUSED || errno == ENOENT);
    close(fd);
    return rc;
}

/* 1 when a daemon answers: it acknowledged something within HR__LIVE_MS,
 * or its socket exists and the batch in flight was first sent less than
 * that long ago. */
static int daemon_live(void)
{
    uint64_t now = hrp_mono_ms();

    if (last_ack_ms != 0 && now - last_ack_ms < HR__LIVE_MS)
        return 1;
    return inflight && now - first_sent_ms < HR__LIVE_MS && !daemon_absent();
}

/*
 * Exiting: 1 when the final counters go to a daemon, in a batch of their
 * own that the exit flush waits for; 0 when the spool carries them. They
 * go to a daemon that answers (daemon_live) and, failing that, to one
 * whose socket takes a connection: a process idle for longer than
 * HR__LIVE_MS has had nothing for its daemon to answer, which is still
 * there. The socket is looked at once per exit.
 */
static int final_to_daemon(void)
{
    if (daemon_live())
        return 1;
    if (exit_listens < 0)
        exit_listens = !daemon_unreachable();
    return exit_listens;
}

static int queue_full(void)
{
    return queue_bytes >= queue_max;
}

/* Fills h with the process's counters and lost counts per label set (ids
 * and counts: room for 1024 each), for batch number `number`. */
static void header_fill(struct hr__batch_header *h, uint64_t number,
                        uint32_t *ids, uint64_t *counts)
{
    hr_counters c;

    memset(h, 0, sizeof *h);
    hr__ship_counters(&c);
    h->pid = (uint32_t)getpid();
    h->instance = instance;
    h->process_label = process_label;
    h->clock = hr_clock_name();
    h->clock_order = hr__clock_order();
    h->clock_step_ns = hr__clock_step();
    h->clock_path = hr_clock_path();
    h->lost_events = c.lost;
    h->out_of_order = c.out_of_order;
    h->open_at_window_end = c.open_at_window_end;
    h->foreign_thread = c.foreign_thread;
    h->label_in_window = c.label_in_window;
    h->too_deep = c.too_deep;
    h->contexts_dropped = hr__ctx_dropped();
    h->bad_name = c.bad_name;
    h->bad_label = c.bad_label;
    h->contexts_full = c.contexts_full;
    h->names_cut = c.names_cut;
    h->final_counters = atomic_load(&exiting);
    h->marks = atomic_load_explicit(&hr__g_marks, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    for (uint32_t i = 1; i < lost_cap && h->n_lost < 1024; i++) {
        if (lost_by_label[i] != 0) {
            ids[h->n_lost] = i;
            counts[h->n_lost++] = lost_by_label[i];
        }
    }
    pthread_mutex_unlock(&lock);
    h->lost_ids = ids;
    h->lost_counts = counts;
    h->seq = number;
}

/* A new pending batch with room for the encoder's label sets and their
 * events (which it copies), or NULL. */
static struct pending *pending_new(void)
{
    uint32_t n = 0;
    struct pending *p;

    for (uint32_t i = 0; i < enc.lab.n; i++)
        n += enc.events_by[i] != 0;
    p = calloc(1, sizeof *p + n * (sizeof *p->lab_events + sizeof *p->lab));
    if (p == NULL)
        return NULL;
    p->lab_events = (uint64_t *)(p + 1);
    p->lab = (uint32_t *)(p->lab_events + n);
    for (uint32_t i = 0; i < enc.lab.n; i++) {
        if (enc.events_by[i] != 0) {
            p->lab[p->nlab] = enc.lab.ids[i];
            p->lab_events[p->nlab++] = enc.events_by[i];
        }
    }
    return p;
}

/*
 * Seals the encoder's batch at the end of the queue. When the queue is
 * full, a live daemon makes it wait (-EAGAIN, the batch kept); otherwise
 * its events are dropped and counted as lost.
 */
static int seal(int force)
{
    struct hr__batch_header h;
    uint8_t *spare;
    uint32_t events = enc.events, ids[1024];
    uint64_t counts[1024];
    struct pending *p;
    int rc;

    if (events == 0 && !force)
        return 0;
    if (queue_full()) {
        if (daemon_live())
            return -EAGAIN;
        goto drop;
    }
    header_fill(&h, seq + 1, ids, counts);
    lost_reported = h.lost_events;
    marks_reported = h.marks;
    refused_reported = h.bad_name + h.bad_label + h.contexts_full +
                       h.names_cut;
    final_sealed |= h.final_counters;
    p = pending_new();
    if (p == NULL)
        goto drop;
    spare = spare_take();
    rc = hr__enc_seal_into(&enc, &h, spare, spare != NULL ? HR__SPARE_BYTES
                                                          : 0,
                           &p->buf, &p->len);
    if (rc != 0) {
        free(p);
        goto drop;
    }
    if (spare != NULL && p->buf == spare) {
        p->is_spare = 1;
        nspare--;
        spares_out++;
    }
    p->seq = ++seq;
    p->events = events;
    p->lost_at = h.lost_events;
    p->marks_at = h.marks;
    p->final = h.final_counters;
    queue_bytes += p->len;
    if (queue_tail != NULL)
        queue_tail->next = p;
    else
        queue_head = p;
    queue_tail = p;
    return 0;
drop:
    pthread_mutex_lock(&lock);
    count_lost_locked();
    pthread_mutex_unlock(&lock);
    return 0;
}

/* Counts the samples left in the rings as lost, per label set, and empties
 * the rings (lock held; the owners no longer write). */
static void count_rings_lost_locked(void)
{
    struct hr__thread *t;

    hr__reg_lock();
    for (t = *hr__reg_threads(); t != NULL; t = t->next_thread) {
        uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);

        for (; tail != head; tail++) {
            const struct hr__sample *x = &t->ring[tail & (HR__RING_SIZE - 1)];
            uint32_t kind = x->ctx >> HR__KIND_SHIFT;

            if (kind != HR__KIND_RANGE && kind != HR__KIND_RECORD)
                continue;
            lost++;
            if (x->label < lost_cap)
                lost_by_label[x->label]++;
        }
        atomic_store_explicit(&t->tail, tail, memory_order_release);
    }
    hr__reg_unlock();
}

/* Encodes one ring sample. An encoder out of memory loses it (counted). */
static void take(const struct hr__sample *s, uint64_t mult)
{
    uint32_t kind = s->ctx >> HR__KIND_SHIFT, ctx = s->ctx & HR__CTX_MASK;
    int rc;

    switch (kind) {
    case HR__KIND_RANGE:
        rc = hr__enc_sample(&enc, s->label, ctx, hr__ticks_ns(s->incl, mult),
                            hr__ticks_ns(s->child, mult), s->nchild,
                            s->ndesc, 0);
        break;
    case HR__KIND_RECORD:
        rc = hr__enc_sample(&enc, s->label, ctx, s->incl, 0, 0, 0, 1);
        break;
    default:
        hr__enc_internal(&enc, s->label, kind == HR__KIND_WAKE,
                         hr__ticks_ns(s->incl, mult));
        return;
    }
    if (rc != 0) {
        pthread_mutex_lock(&lock);
        lost++;
        if (s->label < lost_cap)
            lost_by_label[s->label]++;
        pthread_mutex_unlock(&lock);
    }
}

/*
 * Encodes the ranges at the start of ring samples [tail, head) under the
 * batch's current label set and of contexts the batch has, leaves and
 * parents, as long as the encoder is not full; returns the first sample
 * it did not take. The same bytes as hr__enc_sample one sample at a time,
 * with the encoder's state in registers and the ring read ahead: the
 * samples were written by another core, and each 64-byte line holds two.
 * Parents are taken too: a call's ranges alternate leaves and parents,
 * and each one left to the general path costs its call and checks.
 */
static uint64_t drain_ranges(const struct hr__thread *t, uint64_t tail,
                             uint64_t head, uint64_t mult)
{
    const struct hr__sample *ring = t->ring;
    const uint32_t *stamp = enc.ctx.stamp, *local = enc.ctx.local;
    uint32_t label = enc.label, cap = enc.ctx.cap, st = enc.stamp, n = 0;
    uint8_t *p = enc.buf + enc.len, *start = p, *stop;
    uint64_t left;

    if (label == 0 || hr__enc_full(&enc))
        return tail;
    /* Below these the encoder is not full (hr__enc_full). */
    stop = enc.buf + (HR__BATCH_BYTES - enc.table_bytes);
    left = HR__BATCH_EVENTS - enc.events;
    if (head - tail < left)
        left = head - tail;
    for (; n < left && p < stop; n++) {
        const struct hr__sample *s = &ring[(tail + n) & (HR__RING_SIZE - 1)];
        uint32_t ctx = s->ctx;

        __builtin_prefetch(&ring[(tail + n + 8) & (HR__RING_SIZE - 1)]);
        uint64_t incl, child;
        uint32_t nchild;

        /* A range (kind 0) has its context id as ctx. */
        if (ctx >> HR__KIND_SHIFT != HR__KIND_RANGE || s->label != label ||
            ctx >= cap || stamp[ctx] != st)
            break;
        incl = hr__ticks_ns(s->incl, mult);
        nchild = s->nchild;
        if (nchild == 0 && s->child == 0) {
            p = hrp_put_varint(p, (uint64_t)local[ctx] << 2 | HRP_ITEM_LEAF);
            p = hrp_put_varint(p, incl);
            continue;
        }
        /* A parent: as hr__enc_sample writes it. */
        child = hr__ticks_ns(s->child, mult);
        if (nchild == 0 && child == 0) {
            p = hrp_put_varint(p, (uint64_t)local[ctx] << 2 | HRP_ITEM_LEAF);
            p = hrp_put_varint(p, incl);
            continue;
        }
        p = hrp_put_varint(p, (uint64_t)local[ctx] << 2 | HRP_ITEM_PARENT);
        p = hrp_put_varint(p, incl);
        p = hrp_put_varint(p, child <= incl ? child : incl);
        p = hrp_put_varint(p, nchild);
        p = hrp_put_varint(p, s->ndesc >= nchild ? s->ndesc - nchild : 0);
    }
    if (n != 0) {
        enc.len += (size_t)(p - start);
        enc.events += n;
        enc.events_by[enc.label_local] += n;
    }
    return tail + n;
}

/* Moves samples from the rings into the encoder, sealing full batches,
 * until the rings are empty or the queue holds them back. Frees the state
 * of exited threads once their ring is empty. */
static void drain(void)
{
    struct hr__thread **pp, *t;
    uint64_t mult = hr__clock_mult();
    int full;

    do {
        full = 0;
        hr__reg_lock();
        for (pp = hr__reg_threads(); (t = *pp) != NULL;) {
            int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
            uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
            uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);

            while ((tail = drain_ranges(t, tail, head, mult)) != head &&
                   !(full = hr__enc_full(&enc))) {
                const struct hr__sample *s =
                    &t->ring[tail & (HR__RING_SIZE - 1)];
                /* Leaves of known contexts, the bulk of the samples,
                 * take the encoder's inline path. */
                if (s->ctx >> HR__KIND_SHIFT != HR__KIND_RANGE ||
                    s->nchild != 0 || s->child != 0 ||
                    !hr__enc_leaf(&enc, s->label, s->ctx & HR__CTX_MASK,
                                  hr__ticks_ns(s->incl, mult)))
                    take(s, mult);
                tail++;
            }
            atomic_store_explicit(&t->tail, tail, memory_order_release);
            if (tail != head)
                break;
            if (exited) {
                hr__reg_retire(pp);
                continue;
            }
            pp = &t->next_thread;
        }
        hr__reg_unlock();
    } while (full && seal(0) == 0);
}

/* 1 when every ring is empty. */
static int rings_empty(void)
{
    struct hr__thread *t;
    int empty = 1;

    hr__reg_lock();
    for (t = *hr__reg_threads(); t != NULL && empty; t = t->next_thread)
        empty = atomic_load(&t->head) == atomic_load(&t->tail);
    hr__reg_unlock();
    return empty;
}

static void open_socket(void)
{
    int max = -1, resend = 3600000, ivl = HR__RECONNECT_MS,
        ivl_max = HR__RECONNECT_MAX_MS;

    sock = nn_socket(AF_SP, NN_REQ);
    if (sock < 0)
        return;
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RECONNECT_IVL, &ivl, sizeof ivl);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RECONNECT_IVL_MAX, &ivl_max,
                  sizeof ivl_max);
    nn_setsockopt(sock, NN_REQ, NN_REQ_RESEND_IVL, &resend, sizeof resend);
    if (nn_connect(sock, ingest_url) < 0) {
        nn_close(sock);
        sock = -1;
    }
}

/* Frees every batch of the queue. */
static void queue_free(void)
{
    struct pending *p;

    while ((p = queue_head) != NULL) {
        queue_head = p->next;
        pending_free(p);
    }
    queue_tail = NULL;
    queue_bytes = 0;
    spares_free();
}

static void close_socket(void)
{
    if (sock >= 0)
        nn_close(sock);
    sock = -1;
    inflight = 0;
}

/* Handles an answer to the batch at the head of the queue. */
static void on_ack(const uint8_t *buf, size_t len)
{
    struct pending *p = queue_head;
    enum hr__ack_verdict v;

    if (p == NULL)
        return;
    v = hr__ack_read(buf, len, p->seq);
    if (v == HR__ACK_IGNORE)
        return; /* resent on time */
    last_ack_ms = hrp_mono_ms();
    atomic_store(&answered_ms, last_ack_ms);
    atomic_store(&reached, 1);
    if (v == HR__ACK_RETRY) {
        /* Still in flight as far as resending goes: sent again after
         * HR__RESEND_MS. */
        sent_at_ms = hrp_mono_ms();
        return;
    }
    pthread_mutex_lock(&lock);
    if (v == HR__ACK_REJECTED) {
        count_batch_lost_locked(p);
    } else if (v == HR__ACK_REJECTED_COUNTED) {
        /* In the daemon's report already: the total only. */
        lost += p->events;
    } else {
        delivered += p->events;
        lost_acked = p->lost_at;
        marks_acked = p->marks_at;
    }
    batches++;
    pthread_mutex_unlock(&lock);
    final_answered |= p->final;
    queue_head = p->next;
    if (queue_head == NULL)
        queue_tail = NULL;
    queue_bytes -= p->len;
    pending_free(p);
    inflight = 0;
    first_sent_ms = 0;
}

/* Sends the head batch when none is in flight and takes answers. */
static void pump(void)
{
    for (;;) {
        void *msg = NULL;
        int n;

        if (sock < 0)
            open_socket();
        if (sock < 0 || queue_head == NULL)
            return;
        if (inflight && hrp_mono_ms() - sent_at_ms > HR__RESEND_MS)
            inflight = 0;
        if (!inflight) {
            if (nn_send(sock, queue_head->buf, queue_head->len,
                        NN_DONTWAIT) < 0)
                return;
            inflight = 1;
            queue_head->sent = 1;
            sent_at_ms = hrp_mono_ms();
            if (first_sent_ms == 0)
                first_sent_ms = sent_at_ms;
        }
        n = nn_recv(sock, &msg, NN_MSG, NN_DONTWAIT);
        if (n < 0)
            return;
        on_ack(msg, (size_t)n);
        nn_freemsg(msg);
    }
}

/* How long a fork waits for the answer to a batch in flight before the
 * socket is closed (the batch is sent again afterwards, a duplicate the
 * daemon drops, when the answer does not come in time). */
#define HR__PARK_WAIT_MS 200u

/* Parks for a fork (lock held on entry and exit). */
static void park(void)
{
    uint64_t until = hrp_mono_ms() + HR__PARK_WAIT_MS;

    pthread_mutex_unlock(&lock);
    while (inflight && sock >= 0 && hrp_mono_ms() < until) {
        struct timespec pause = { 0, 200000 };
        void *msg = NULL;
        int n = nn_recv(sock, &msg, NN_MSG, NN_DONTWAIT);

        if (n >= 0) {
            on_ack(msg, (size_t)n);
            nn_freemsg(msg);
        } else {
            nanosleep(&pause, NULL);
        }
    }
    close_socket();
    pthread_mutex_lock(&lock);
    parked = 1;
    pthread_cond_broadcast(&cond);
    while (parking)
        pthread_cond_wait(&cond, &lock);
    parked = 0;
}

/* How long the shipper may sleep: 0 while a flush waits for rings it can
 * drain, the cadence while there is work, longer while batches wait for a
 * daemon that is not there (but HR__RETRY_MS while a flush waits for it),
 * and with no limit (-1) when there is nothing to do: no window open,
 * every ring empty, nothing queued or in flight. */
static int sleep_ms(int flushing)
{
    int empty = rings_empty();

    if (flushing && !empty && !queue_full())
        return 0;
    if (queue_head != NULL && !inflight && (sock < 0 || daemon_absent()))
        return flushing ? HR__RETRY_MS : HR__ABSENT_MS;
    if (!empty || queue_head != NULL || enc.events != 0 ||
        __atomic_load_n(&hr__active, __ATOMIC_SEQ_CST))
        return HR__CADENCE_MS;
    /* Going to sleep for good: a window that opens, or a record, after
     * this store wakes the shipper (hr__ship_kick); one before it is seen
     * by the look that follows. */
    atomic_store(&deep_sleep, 1);
    if (__atomic_load_n(&hr__active, __ATOMIC_SEQ_CST) || !rings_empty()) {
        atomic_store(&deep_sleep, 0);
        return HR__CADENCE_MS;
    }
    /* Nothing queued: the spare buffers go back until the next batch. */
    spares_free();
    return -1;
}

static void *ship_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd fds[2];
        size_t nfds = 1;
        uint64_t asked;
        int stop, idle;

        pthread_mutex_lock(&lock);
        if (parking)
            park();
        asked = flush_asked;
        stop = stopping;
        pthread_mutex_unlock(&lock);

        drain();
        if (asked != flush_done || stop) {
            hr_counters c;
            hr__ship_counters(&c);
            /* A count of losses, marks or refusals that no batch has
             * carried yet travels in a batch of its own. Exiting, the
             * final counters go in a batch of their own to a daemon that
             * listens; to the spool otherwise (its file carries them). */
            seal((atomic_load(&exiting) && !final_sealed &&
                  final_to_daemon()) ||
                 c.lost != lost_reported ||
                 atomic_load(&hr__g_marks) != marks_reported ||
                 c.bad_name + c.bad_label + c.contexts_full +
                         c.names_cut != refused_reported);
        } else if (queue_head == NULL && enc.events != 0) {
            /* Nothing in flight: what was drained goes now, so that a
             * batch grows with the rate of samples while one is sent. */
            seal(0);
        }
        pump();
        idle = queue_head == NULL && enc.events == 0 && rings_empty();
        if (asked != flush_done && idle) {
            pthread_mutex_lock(&lock);
            flush_done = asked;
            pthread_cond_broadcast(&cond);
            pthread_mutex_unlock(&lock);
        }
        if (stop)
            break;

        fds[0].fd = efd;
        fds[0].events = POLLIN;
        fds[0].revents = 0;
        if (sock >= 0 && inflight) {
            int fd;
            size_t sz = sizeof fd;
            if (nn_getsockopt(sock, NN_SOL_SOCKET, NN_RCVFD, &fd, &sz) == 0) {
                fds[1].fd = fd;
                fds[1].events = POLLIN;
                fds[1].revents = 0;
                nfds = 2;
            }
        }
        atomic_store(&hr__g_ship_sleeping, 1);
        poll(fds, nfds, sleep_ms(asked != flush_done));
        atomic_store(&hr__g_ship_sleeping, 0);
        atomic_store(&deep_sleep, 0);
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            if (read(efd, &v, sizeof v) < 0) {
                /* Nothing to read: another wake-up took it. */
            }
        }
    }
    return NULL;
}

/* The process's label: s, cut to the most bytes process_label holds at a
 * UTF-8 character's boundary when longer. */
static void label_set(const char *s)
{
    size_t n = strlen(s);

    if (n >= sizeof process_label) {
        n = sizeof process_label - 1;
        /* Not inside a character: back off its continuation bytes. */
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    memcpy(process_label, s, n);
    process_label[n] = '\0';
}

int hr__ship_start(void)
{
    const char *env;
    char dir[PATH_MAX];
    int rc = 0;

    if (hr__ship_started())
        return 0;
    pthread_mutex_lock(&lock);
    if (atomic_load(&started))
        goto out;
    rc = hrp_runtime_dir(dir, sizeof dir, NULL);
    if (rc == 0 &&
        (strlen(dir) + sizeof "/" HRP_INGEST_NAME > sizeof ingest_path ||
         strlen(dir) + sizeof "/" HRP_SPOOL_NAME > sizeof spool_dir))
        rc = -ENAMETOOLONG;
    if (rc != 0)
        goto out;
    snprintf(ingest_path, sizeof ingest_path, "%s/%s", dir, HRP_INGEST_NAME);
    snprintf(spool_dir, sizeof spool_dir, "%s/%s", dir, HRP_SPOOL_NAME);
    hrp_endpoint(ingest_url, sizeof ingest_url, dir, HRP_INGEST_NAME);
    queue_max = (size_t)hrp_env_number(getenv("HOSTRANGE_BUFFER_MB"), 1,
                                       LONG_MAX >> 20, 64) << 20;
    spool_max = (size_t)hrp_env_number(getenv("HOSTRANGE_SPOOL_MB"), 0,
                                       LONG_MAX >> 20,
                                       HRP_SPOOL_MB_DEFAULT) << 20;
    env = getenv("HOSTRANGE_LABEL");
    label_set(env != NULL ? env : program_invocation_short_name);
    if (instance == 0 &&
        getrandom(&instance, sizeof instance, GRND_NONBLOCK) !=
            (ssize_t)sizeof instance)
        instance = ((uint64_t)getpid() << 32) ^ (uint64_t)hrp_mono_ms();
    rc = -ENOMEM;
    if (!enc_ok) {
        if (hr__enc_init(&enc, &namer) != 0)
            goto out;
        enc_ok = 1;
    }
    efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0)
        goto out;
    if (pthread_create(&thread, NULL, ship_main, NULL) != 0)
        goto fail_thread;
    atomic_store_explicit(&started, 1, memory_order_release);
    rc = 0;
    goto out;
fail_thread:
    close(efd);
    efd = -1;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

/*
 * Waits (lock held) until the shipper has shipped everything asked for by
 * flush generation `gen`, or until the deadline. A daemon that is away is
 * waited for: the shipper tries again meanwhile. Returns 0; -ETIMEDOUT at
 * the deadline when a daemon answered during the wait, -ENOTCONN when none
 * did; and -ENOTCONN at once when no daemon ever answered this process and
 * none listens now.
 */
static int wait_flushed(uint64_t gen, int timeout_ms)
{
    uint64_t start = hrp_mono_ms(),
             deadline = start + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    int listening = 0;

    while (flush_done < gen) {
        struct timespec ts;
        uint64_t now = hrp_mono_ms(), until;

        if (now >= deadline)
            return atomic_load(&answered_ms) >= start ? -ETIMEDOUT
                                                      : -ENOTCONN;
        /* Looked at once per wait: each look is a connection the daemon
         * accepts. */
        if (!atomic_load(&reached) && !listening) {
            if (daemon_unreachable())
                return -ENOTCONN;
            listening = 1;
        }
        until = now + 20 < deadline ? now + 20 : deadline;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(until - now) * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&cond, &lock, &ts);
    }
    return 0;
}

int hr__ship_flush(int timeout_ms)
{
    uint64_t gen;
    int rc;

    /* A forked child may hold samples and no shipper yet. */
    if (!hr__ship_started() && (rings_empty() || hr__ship_start() != 0))
        return 0;
    pthread_mutex_lock(&lock);
    gen = ++flush_asked;
    pthread_mutex_unlock(&lock);
    hr__ship_wake();
    pthread_mutex_lock(&lock);
    rc = wait_flushed(gen, timeout_ms);
    pthread_mutex_unlock(&lock);
    return rc;
}

/*
 * Writes what no daemon acknowledged to the spool (the shipper has
 * stopped): the queued batches up to spool_max bytes, and a last batch with
 * the final counts. What is not written is counted lost.
 */
static void spool_queue(void)
{
    struct hr__batch_header h;
    struct hr__spool_batch *sb = NULL;
    struct hr__spool sp = { 0 };
    uint32_t ids[1024], n = 0, nq = 0;
    uint64_t counts[1024], events = 0;
    uint8_t *final = NULL;
    size_t used = 0, final_len = 0;
    struct pending *p, *stop = NULL;
    hr_counters c;
    int rc = -ENOMEM;

    for (p = queue_head; p != NULL; p = p->next)
        nq++;
    sb = calloc((size_t)nq + 1, sizeof *sb);
    /* The batches that fit; those past the limit are lost, and the last
     * batch counts them. */
    for (p = queue_head; p != NULL; p = p->next) {
        used += p->len + HRP_SPOOL_REC_HEADER;
        if (used > spool_max || sb == NULL)
            break;
        sb[n].seq = p->seq;
        sb[n].events = p->events;
        sb[n].sent = p->sent;
        sb[n].buf = p->buf;
        sb[n].len = p->len;
        sb[n].nlab = p->nlab;
        sb[n].lab = p->lab;
        sb[n].lab_events = p->lab_events;
        sp.unacknowledged += p->sent ? p->events : 0;
        events += p->events;
        n++;
    }
    stop = p;
    pthread_mutex_lock(&lock);
    for (p = stop; p != NULL; p = p->next) {
        count_batch_lost_locked(p);
        sp.over_limit += p->events;
    }
    pthread_mutex_unlock(&lock);
    /* HOSTRANGE_SPOOL_MB=0: no file at all. */
    if (sb == NULL || spool_max == 0)
        goto out;
    header_fill(&h, seq + 1, ids, counts);
    hr__ship_counters(&c);
    sp.pid = h.pid;
    sp.instance = instance;
    sp.samples = c.samples;
    sp.delivered = c.delivered;
    sp.lost = c.lost;
    sp.spooled = events;
    sp.batches = sb;
    sp.nbatches = n;
    sp.label_get = label_get;
    if (enc_ok && hr__enc_seal(&enc, &h, &final, &final_len) == 0) {
        sp.final_batch = final;
        sp.final_len = final_len;
        rc = hr__spool_write(spool_dir, &sp);
        free(final);
    }
out:
    pthread_mutex_lock(&lock);
    if (rc == 0) {
        spooled += events;
    } else {
        for (p = queue_head; p != stop; p = p->next)
            count_batch_lost_locked(p);
    }
    pthread_mutex_unlock(&lock);
    free(sb);
}

void hr__ship_stop(int timeout_ms)
{
    hr_counters c;

    if (hr__ship_started())
        atomic_store(&exiting, 1);
    hr__ship_flush(timeout_ms);
    if (!hr__ship_started())
        return;
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_mutex_unlock(&lock);
    hr__ship_wake();
    pthread_join(thread, NULL);
    /* What was not even drained (the queue was held back) is lost. */
    pthread_mutex_lock(&lock);
    count_lost_locked();
    count_rings_lost_locked();
    pthread_mutex_unlock(&lock);
    /* What is still here was not acknowledged in time; and the final
     * counters of a process a daemon knows, when no daemon answered them
     * (none listened at exit), go to the next one. */
    hr__ship_counters(&c);
    if (queue_head != NULL || c.lost != lost_acked ||
        atomic_load(&hr__g_marks) != marks_acked ||
        (atomic_load(&reached) && !final_answered))
        spool_queue();
    pthread_mutex_lock(&lock);
    atomic_store(&started, 0);
    stopping = 0;
    pthread_mutex_unlock(&lock);
    queue_free();
    close_socket();
    close(efd);
    efd = -1;
}

void hr__ship_fork_prepare(void)
{
    pthread_mutex_lock(&lock);
    if (atomic_load(&started)) {
        parking = 1;
        hr__ship_wake();
        while (!parked)
            pthread_cond_wait(&cond, &lock);
    }
}

void hr__ship_fork_parent(void)
{
    parking = 0;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

void hr__ship_fork_child(void)
{
    /* The parent's batches and counts are the parent's. */
    queue_free();
    seq = 0;
    inflight = 0;
    sock = -1;
    last_ack_ms = first_sent_ms = 0;
    lost_reported = 0;
    marks_reported = 0;
    refused_reported = 0;
    atomic_store(&exiting, 0);
    final_sealed = final_answered = 0;
    exit_listens = -1;
    lost_acked = marks_acked = 0;
    delivered = lost = batches = spooled = 0;
    atomic_store(&reached, 0);
    atomic_store(&answered_ms, 0);
    if (lost_by_label != NULL)
        memset(lost_by_label, 0, lost_cap * sizeof *lost_by_label);
    flush_asked = flush_done = 0;
    parking = parked = stopping = 0;
    if (enc_ok)
        hr__enc_clear(&enc);
    if (efd >= 0)
        close(efd);
    efd = -1;
    instance = 0;
    if (getrandom(&instance, sizeof instance, GRND_NONBLOCK) !=
        (ssize_t)sizeof instance)
        instance = ((uint64_t)getpid() << 32) ^ (uint64_t)hrp_mono_ms();
    atomic_store(&started, 0);
    atomic_store(&deep_sleep, 0);
    atomic_store(&hr__g_ship_sleeping, 0);
    pthread_cond_init(&cond, NULL);
    pthread_mutex_unlock(&lock);
}
