/*
 * The shipper: one background thread per process that drains the threads'
 * rings into batches, sends them to the daemon's ingest socket (nanomsg
 * REQ/REP over IPC) and waits for each acknowledgement before sending the
 * next, resending after HR__RESEND_MS without an answer (the daemon drops a
 * batch it has already seen). Unacknowledged batches are kept in memory up to
 * HOSTRANGE_BUFFER_MB (default 64); a batch that does not fit is dropped and
 * its events counted as lost, a count that every later batch carries.
 *
 * The program is never made to wait here except in hr_flush and at exit,
 * both bounded by a timeout; when the ingest socket does not exist at all
 * (no daemon), they give up at once.
 */
#include "config.h"

#include "client/client.h"
#include "client/encode.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

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
#include <sys/stat.h>
#include <unistd.h>

#define HR__RESEND_MS 1000u
#define HR__IDLE_MS 10

struct pending {
    struct pending *next;
    uint64_t seq;
    uint32_t events;
    size_t len;
    uint8_t *buf;
};

_Atomic int hr__g_ship_sleeping;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int started;
static int efd = -1;
static int stopping;
static uint64_t flush_asked, flush_done; /* generations */

/* Owned by the shipper thread; read under `lock` where noted. */
static struct pending *queue_head, *queue_tail;
static size_t queue_bytes, queue_max;
static uint64_t seq;
static uint64_t delivered, lost, batches; /* under lock */
static hr_counters retired;               /* under hr__g_reg_lock */
static struct hr__builder builder;
static uint64_t instance;
static char process_label[256];
static char ingest_path[PATH_MAX];
static char ingest_url[PATH_MAX + 16];
static int sock = -1;
static int inflight;
static uint64_t sent_at_ns;

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void hr__ship_wake(void)
{
    uint64_t one = 1;

    if (efd >= 0 && write(efd, &one, sizeof one) < 0) {
        /* The counter is saturated: the shipper has a wake-up pending. */
    }
}

void hr__ship_retired(hr_counters *out)
{
    out->samples += retired.samples;
    out->out_of_order += retired.out_of_order;
    out->open_at_window_end += retired.open_at_window_end;
    out->foreign_thread += retired.foreign_thread;
    out->too_deep += retired.too_deep;
}

void hr__ship_counters(uint64_t *d, uint64_t *l, uint64_t *b)
{
    pthread_mutex_lock(&lock);
    *d = delivered;
    *l = lost;
    *b = batches;
    pthread_mutex_unlock(&lock);
}

static const struct hr__namer namer = { hr__site_name, hr__label_get };

/* Encodes the builder into a batch at the end of the queue, or counts its
 * events as lost when it cannot be kept. Empties the builder. */
static void seal(int even_if_empty)
{
    struct hr__batch_header h = { 0 };
    hr_counters c;
    struct pending *p;
    uint32_t events = hr__builder_events(&builder);
    int rc;

    if (events == 0 && !even_if_empty)
        return;
    hr_counters_get(&c);
    h.pid = (uint32_t)getpid();
    h.instance = instance;
    h.process_label = process_label;
    h.clock = hr_clock_name();
    h.out_of_order = c.out_of_order;
    h.open_at_window_end = c.open_at_window_end;
    h.foreign_thread = c.foreign_thread;
    h.label_in_window = c.label_in_window;
    h.too_deep = c.too_deep;
    p = calloc(1, sizeof *p);
    if (p == NULL)
        goto drop;
    pthread_mutex_lock(&lock);
    h.lost_events = lost;
    pthread_mutex_unlock(&lock);
    h.seq = seq + 1;
    hr__intern_lock();
    rc = hr__batch_encode(&builder, &h, &namer, &p->buf, &p->len);
    hr__intern_unlock();
    if (rc != 0 || queue_bytes + p->len > queue_max) {
        free(p->buf);
        free(p);
        goto drop;
    }
    p->seq = ++seq;
    p->events = events;
    queue_bytes += p->len;
    if (queue_tail != NULL)
        queue_tail->next = p;
    else
        queue_head = p;
    queue_tail = p;
    builder.n = builder.nrec = 0;
    return;
drop:
    pthread_mutex_lock(&lock);
    lost += events;
    pthread_mutex_unlock(&lock);
    builder.n = builder.nrec = 0;
}

/* Moves samples from the rings into the builder, sealing full batches. Frees
 * the state of exited threads once their ring is empty. Returns the number
 * of samples moved. */
static uint64_t drain(void)
{
    struct hr__thread **pp, *t;
    uint64_t moved = 0;
    int again;

    do {
        again = 0;
        pthread_mutex_lock(&hr__g_reg_lock);
        for (pp = &hr__g_threads; (t = *pp) != NULL;) {
            int exited = atomic_load_explicit(&t->exited, memory_order_acquire);
            uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
            uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);

            while (tail != head && !hr__builder_full(&builder)) {
                const struct hr__sample *s = &t->ring[tail & (HR__RING_SIZE - 1)];
                if (s->self == HR__RECORD) {
                    builder.rec_label[builder.nrec] = s->label;
                    builder.rec_range[builder.nrec] = s->range;
                    builder.rec_ns[builder.nrec++] = s->incl;
                } else {
                    builder.label[builder.n] = s->label;
                    builder.range[builder.n] = s->range;
                    builder.incl[builder.n] = hr__clock_ticks_to_ns(s->incl);
                    builder.self[builder.n++] = hr__clock_ticks_to_ns(s->self);
                }
                tail++;
                moved++;
            }
            atomic_store_explicit(&t->tail, tail, memory_order_release);
            if (tail != head) {
                again = 1;
                break;
            }
            if (exited) {
                *pp = t->next;
                retired.samples += head;
                retired.out_of_order += atomic_load(&t->c.out_of_order);
                retired.open_at_window_end +=
                    atomic_load(&t->c.open_at_window_end);
                retired.foreign_thread += atomic_load(&t->c.foreign_thread);
                retired.too_deep += atomic_load(&t->c.too_deep);
                free(t->ring);
                free(t);
                continue;
            }
            pp = &t->next;
        }
        pthread_mutex_unlock(&hr__g_reg_lock);
        if (hr__builder_full(&builder))
            seal(0);
    } while (again);
    return moved;
}

/* 1 when every ring is empty. */
static int rings_empty(void)
{
    struct hr__thread *t;
    int empty = 1;

    pthread_mutex_lock(&hr__g_reg_lock);
    for (t = hr__g_threads; t != NULL && empty; t = t->next)
        empty = atomic_load(&t->head) == atomic_load(&t->tail);
    pthread_mutex_unlock(&hr__g_reg_lock);
    return empty;
}

static void open_socket(void)
{
    int max = -1, resend = 3600000;

    sock = nn_socket(AF_SP, NN_REQ);
    if (sock < 0)
        return;
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(sock, NN_REQ, NN_REQ_RESEND_IVL, &resend, sizeof resend);
    if (nn_connect(sock, ingest_url) < 0) {
        nn_close(sock);
        sock = -1;
    }
}

/* Handles an acknowledgement of the batch at the head of the queue. */
static void on_ack(const uint8_t *buf, size_t len)
{
    Hostrange__Ack *ack = hostrange__ack__unpack(NULL, len, buf);
    struct pending *p = queue_head;

    if (ack == NULL || p == NULL || ack->version != HRP_VERSION ||
        ack->seq != p->seq) {
        /* Not an answer to this batch: keep waiting, resend on time. */
        hostrange__ack__free_unpacked(ack, NULL);
        return;
    }
    pthread_mutex_lock(&lock);
    if (ack->status == HOSTRANGE__ACK__STATUS__REJECTED)
        lost += p->events;
    else
        delivered += p->events;
    batches++;
    pthread_mutex_unlock(&lock);
    hostrange__ack__free_unpacked(ack, NULL);
    queue_head = p->next;
    if (queue_head == NULL)
        queue_tail = NULL;
    queue_bytes -= p->len;
    free(p->buf);
    free(p);
    inflight = 0;
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
        if (inflight && mono_ms() - sent_at_ns > HR__RESEND_MS)
            inflight = 0;
        if (!inflight) {
            if (nn_send(sock, queue_head->buf, queue_head->len,
                        NN_DONTWAIT) < 0)
                return;
            inflight = 1;
            sent_at_ns = mono_ms();
        }
        n = nn_recv(sock, &msg, NN_MSG, NN_DONTWAIT);
        if (n < 0)
            return;
        on_ack(msg, (size_t)n);
        nn_freemsg(msg);
    }
}

static int daemon_absent(void)
{
    struct stat st;

    return stat(ingest_path, &st) != 0;
}

static void *ship_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd fds[2];
        size_t nfds = 1;
        uint64_t asked;
        int stop, idle;

        drain();
        pthread_mutex_lock(&lock);
        asked = flush_asked;
        stop = stopping;
        pthread_mutex_unlock(&lock);
        if (asked != flush_done || stop)
            seal(0);
        pump();
        idle = queue_head == NULL && hr__builder_events(&builder) == 0 &&
               rings_empty();
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
        if (sock >= 0 && inflight) {
            int fd;
            size_t sz = sizeof fd;
            if (nn_getsockopt(sock, NN_SOL_SOCKET, NN_RCVFD, &fd, &sz) == 0) {
                fds[1].fd = fd;
                fds[1].events = POLLIN;
                nfds = 2;
            }
        }
        atomic_store(&hr__g_ship_sleeping, 1);
        if (rings_empty())
            poll(fds, nfds, HR__IDLE_MS);
        atomic_store(&hr__g_ship_sleeping, 0);
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            if (read(efd, &v, sizeof v) < 0) {
                /* Nothing to read: another wake-up took it. */
            }
        }
    }
    return NULL;
}

int hr__ship_start(void)
{
    const char *env;
    char dir[PATH_MAX];
    int rc = 0;

    pthread_mutex_lock(&lock);
    if (started)
        goto out;
    rc = hrp_runtime_dir(dir, sizeof dir, NULL);
    if (rc == 0 && (strlen(dir) + sizeof "/" HRP_INGEST_NAME > sizeof ingest_path))
        rc = -ENAMETOOLONG;
    if (rc != 0)
        goto out;
    snprintf(ingest_path, sizeof ingest_path, "%s/%s", dir, HRP_INGEST_NAME);
    hrp_endpoint(ingest_url, sizeof ingest_url, dir, HRP_INGEST_NAME);
    env = getenv("HOSTRANGE_BUFFER_MB");
    queue_max = (size_t)(env != NULL && atoi(env) > 0 ? atoi(env) : 64) << 20;
    env = getenv("HOSTRANGE_LABEL");
    snprintf(process_label, sizeof process_label, "%s",
             env != NULL ? env : program_invocation_short_name);
    if (getrandom(&instance, sizeof instance, GRND_NONBLOCK) !=
        (ssize_t)sizeof instance)
        instance = ((uint64_t)getpid() << 32) ^ (uint64_t)mono_ms();
    rc = -ENOMEM;
    if (hr__builder_init(&builder) != 0)
        goto out;
    efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0)
        goto fail_efd;
    if (pthread_create(&thread, NULL, ship_main, NULL) != 0)
        goto fail_thread;
    started = 1;
    rc = 0;
    goto out;
fail_thread:
    close(efd);
    efd = -1;
fail_efd:
    hr__builder_fini(&builder);
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Waits (lock held) until the shipper has shipped everything asked for by
 * flush generation `gen`, or until the deadline. Returns 0, -ETIMEDOUT or
 * -ENOTCONN. */
static int wait_flushed(uint64_t gen, int timeout_ms)
{
    uint64_t deadline = mono_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);

    while (flush_done < gen) {
        struct timespec ts;
        uint64_t now = mono_ms(), until;

        if (now >= deadline)
            return -ETIMEDOUT;
        if (daemon_absent())
            return -ENOTCONN;
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

    pthread_mutex_lock(&lock);
    if (!started) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    gen = ++flush_asked;
    pthread_mutex_unlock(&lock);
    hr__ship_wake();
    pthread_mutex_lock(&lock);
    rc = wait_flushed(gen, timeout_ms);
    pthread_mutex_unlock(&lock);
    return rc;
}

void hr__ship_stop(int timeout_ms)
{
    struct pending *p;
    int was;

    hr__ship_flush(timeout_ms);
    pthread_mutex_lock(&lock);
    was = started;
    stopping = 1;
    pthread_mutex_unlock(&lock);
    if (!was)
        return;
    hr__ship_wake();
    pthread_join(thread, NULL);
    /* What is still here was not acknowledged in time. */
    pthread_mutex_lock(&lock);
    for (p = queue_head; p != NULL; p = p->next)
        lost += p->events;
    started = 0;
    pthread_mutex_unlock(&lock);
    while ((p = queue_head) != NULL) {
        queue_head = p->next;
        free(p->buf);
        free(p);
    }
    queue_tail = NULL;
    queue_bytes = 0;
    if (sock >= 0)
        nn_close(sock);
    sock = -1;
    close(efd);
    efd = -1;
    hr__builder_fini(&builder);
}
