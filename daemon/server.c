/* The daemon's event loop (see server.h). */
#include "config.h"

#include "daemon/server.h"
#include "lib/agg/agg_impl.h"
#include "daemon/control.h"
#include "lib/run/run.h"
#include "daemon/ingest.h"
#include "daemon/notify.h"
#include "daemon/runtime_dir.h"
#include "daemon/spool.h"
#include "daemon/state.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

struct server {
    uv_loop_t loop;
    uv_poll_t ingest_poll, control_poll;
    uv_signal_t sigterm, sigint;
    int signals_started;        /* the watchers above were started */
    uv_timer_t tick;
    int ingest, control;
    struct hra_agg agg;
    struct hrd_ingest in;
    struct hrd_control ctl;
    struct hrd_state state;
    int have_state;
    struct hrd_spool spool;
    int have_spool;
    uv_idle_t spool_idle;      /* runs while spool files wait */
    uv_fs_event_t spool_event; /* the spool folder changed */
    struct timespec spool_mtime; /* of the folder, at the last look */
    int quiet;
    uint64_t log_sec;        /* second of the last rejection logged */
    uint64_t log_suppressed; /* rejections not logged since */
};

static void vlogf_(struct server *s, const char *fmt, va_list ap)
{
    if (s->quiet)
        return;
    fputs("hostranged: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void logf_(struct server *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf_(s, fmt, ap);
    va_end(ap);
}

static void state_log(void *ctx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlogf_(ctx, fmt, ap);
    va_end(ap);
}

/* The resident memory of this process, from /proc (0 when unknown). */
static uint64_t rss_bytes(void)
{
    unsigned long long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    int n;

    if (f == NULL)
        return 0;
    n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return n == 2 ? resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* Logs a rejection, at most one line per second. */
static void log_reject(struct server *s, enum hrd_reject why)
{
    uint64_t sec = hrp_mono_ns() / 1000000000u;

    if (sec == s->log_sec) {
        s->log_suppressed++;
        return;
    }
    logf_(s, "rejected a batch: %s (%llu more rejections not logged)",
          hrd_reject_name(why), (unsigned long long)s->log_suppressed);
    s->log_sec = sec;
    s->log_suppressed = 0;
}

/* Batches handled per wake-up of the ingest socket. While clients keep it
 * full, the loop then still gets to control requests, the state's timer
 * and signals: the socket stays readable, so the rest comes next turn. */
#define INGEST_BURST 16

static void on_ingest(uv_poll_t *h, int status, int events)
{
    struct server *s = h->data;

    (void)status;
    (void)events;
    for (int i = 0; i < INGEST_BURST; i++) {
        void *msg = NULL;
        uint8_t *ack;
        size_t ack_len;
        enum hrd_reject why;
        int n = nn_recv(s->ingest, &msg, NN_MSG, NN_DONTWAIT);

        if (n < 0)
            break;
        if (hrd_ingest_handle(&s->in, msg, (size_t)n, &ack, &ack_len, &why) ==
            HRD_INGEST_REJECTED)
            log_reject(s, why);
        nn_freemsg(msg);
        if (ack != NULL)
            nn_send(s->ingest, ack, ack_len, NN_DONTWAIT);
        free(ack);
    }
}

/* Replies are nanomsg messages from the start, so that sending one hands
 * it to the socket instead of copying it (a save's pages are megabytes). */
static void *reply_alloc(size_t len)
{
    return nn_allocmsg(len, 0);
}

static void on_control(uv_poll_t *h, int status, int events)
{
    struct server *s = h->data;

    (void)status;
    (void)events;
    for (;;) {
        void *msg = NULL;
        uint8_t *reply;
        size_t reply_len;
        int n = nn_recv(s->control, &msg, NN_MSG, NN_DONTWAIT);

        if (n < 0)
            break;
        s->ctl.now_ns = hrp_mono_ns();
        s->ctl.rss_bytes = rss_bytes();
        hrd_control_handle(&s->ctl, msg, (size_t)n, &reply, &reply_len);
        nn_freemsg(msg);
        /* On success the socket owns the reply. */
        if (reply != NULL && nn_send(s->control, &reply, NN_MSG,
                                     NN_DONTWAIT) < 0)
            nn_freemsg(reply);
        (void)reply_len;
    }
}

/* Spool batches taken per turn of the loop, so that the sockets are
 * served in between. */
#define SPOOL_BURST 4

static void on_spool_idle(uv_idle_t *h)
{
    struct server *s = h->data;

    if (hrd_spool_step(&s->spool, SPOOL_BURST) == 0)
        uv_idle_stop(h);
}

/* Looks at the spool folder again soon. */
static void spool_wake(struct server *s)
{
    struct stat st;

    if (fstat(s->spool.dirfd, &st) == 0)
        s->spool_mtime = st.st_mtim;
    hrd_spool_poke(&s->spool);
    uv_idle_start(&s->spool_idle, on_spool_idle);
}

static void on_spool_event(uv_fs_event_t *h, const char *name, int events,
                           int status)
{
    (void)name;
    (void)events;
    (void)status;
    spool_wake(h->data);
}

static void on_tick(uv_timer_t *h)
{
    struct server *s = h->data;
    struct stat st;

    if (s->have_state)
        hrd_state_tick(&s->state, hrp_mono_ns() / 1000000u);
    /* A file the journal refused is tried again, and a change the folder
     * watch missed is seen here. */
    if (s->have_spool && !uv_is_active((uv_handle_t *)&s->spool_idle) &&
        (s->spool.deferred ||
         (fstat(s->spool.dirfd, &st) == 0 &&
          (st.st_mtim.tv_sec != s->spool_mtime.tv_sec ||
           st.st_mtim.tv_nsec != s->spool_mtime.tv_nsec))))
        spool_wake(s);
}

/* Stops accepting: the request being handled has been answered (the loop
 * is single-threaded); the state is written once the loop has ended. */
static void on_signal(uv_signal_t *h, int signum)
{
    struct server *s = h->data;

    logf_(s, "signal %d: stopping", signum);
    hrd_notify_stopping();
    uv_poll_stop(&s->ingest_poll);
    uv_poll_stop(&s->control_poll);
    if (s->have_spool) {
        uv_idle_stop(&s->spool_idle);
        uv_fs_event_stop(&s->spool_event);
    }
    uv_stop(&s->loop);
}

/* Opens a REP socket bound at dir/name and watches it with cb. */
static int open_rep(struct server *s, struct hrd_rundir *rd, const char *name,
                    int *sock, uv_poll_t *poll, uv_poll_cb cb, char *err,
                    size_t errlen)
{
    const char *dir = rd->path;
    char url[4200];
    int fd, max = (int)HRP_MAX_INGEST_BYTES * 2;
    size_t sz = sizeof fd;

    hrp_endpoint(url, sizeof url, dir, name);
    *sock = nn_socket(AF_SP, NN_REP);
    if (*sock < 0)
        goto fail;
    /* Larger than the cap, so an oversized batch is seen and counted. */
    nn_setsockopt(*sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    if (nn_bind(*sock, url) < 0 ||
        nn_getsockopt(*sock, NN_SOL_SOCKET, NN_RCVFD, &fd, &sz) < 0)
        goto fail;
    if (hrd_runtime_dir_share(rd, name, err, errlen) != 0)
        return -EPERM;
    if (uv_poll_init(&s->loop, poll, fd) != 0 ||
        uv_poll_start(poll, UV_READABLE, cb) != 0)
        goto fail;
    poll->data = s;
    return 0;
fail:
    snprintf(err, errlen, "cannot serve %s: %s", url, nn_strerror(nn_errno()));
    return -EIO;
}

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* Opens the state directory and hooks it into ingest and control. */
static int open_state(struct server *s, const struct hrd_server_opts *o,
                      char *err, size_t errlen)
{
    int rc;

    if (o->state_dir == NULL)
        return 0;
    rc = hrd_state_open(&s->state, o->state_dir, &o->state, &s->agg, &s->in,
                        state_log, s, err, errlen);
    if (rc != 0)
        return rc;
    s->have_state = 1;
    s->in.journal = hrd_state_journal_batch;
    s->in.journal_ctx = &s->state;
    s->ctl.journal_reset = hrd_state_journal_reset;
    s->ctl.journal_ctx = &s->state;
    s->ctl.state = &s->state.info;
    if (s->state.info.loaded_keys || s->state.info.loaded_clients)
        logf_(s, "state: loaded %llu keys and %llu clients from %s",
              (unsigned long long)s->state.info.loaded_keys,
              (unsigned long long)s->state.info.loaded_clients,
              o->state_dir);
    return 0;
}

/* A server for options o, before anything is opened; NULL when out of
 * memory. server_free frees it. */
static struct server *server_new(const struct hrd_server_opts *o)
{
    struct server *s = calloc(1, sizeof *s);

    if (s == NULL)
        return NULL;
    s->quiet = o->quiet;
    s->ingest = s->control = -1;
    hra_init(&s->agg);
    if (o->exact_cap != 0)
        s->agg.exact_cap = o->exact_cap;
    if (o->max_memory != 0)
        s->agg.max_bytes = o->max_memory;
    hrd_ingest_init(&s->in, &s->agg);
    s->ctl.ingest = &s->in;
    s->ctl.pid = (uint32_t)getpid();
    s->ctl.start_ns = hrp_mono_ns();
    s->ctl.page_values = o->dump_page;
    s->ctl.reply_alloc = reply_alloc;
    return s;
}

static void server_free(struct server *s)
{
    hrd_ingest_fini(&s->in);
    hra_fini(&s->agg);
    free(s);
}

/* --load: serves run file `path`. Returns 0, or a negative errno with the
 * reason in err. */
static int load_run(struct server *s, const char *path, char *err,
                    size_t errlen)
{
    struct hrr_runload l;
    int rc;

    hrr_runload_init(&l, &s->agg);
    rc = hrr_load(&l, path, NULL, NULL, NULL, NULL, err, errlen);
    if (rc == 0 && hrr_runload_finish(&l) != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -ENOMEM;
    }
    hrr_runload_fini(&l);
    if (rc == 0)
        logf_(s, "loaded %u keys from %s", s->agg.nkeys, path);
    return rc;
}

/* Opens the ingest and control sockets in runtime directory rd. Returns
 * 0, or a negative errno with the reason in err. */
static int open_sockets(struct server *s, struct hrd_rundir *rd, char *err,
                        size_t errlen)
{
    int rc = open_rep(s, rd, HRP_INGEST_NAME, &s->ingest, &s->ingest_poll,
                      on_ingest, err, errlen);

    if (rc == 0)
        rc = open_rep(s, rd, HRP_CONTROL_NAME, &s->control,
                      &s->control_poll, on_control, err, errlen);
    return rc;
}

/* Starts what the loop watches besides the sockets: SIGTERM and SIGINT,
 * the tick, and the spool (what processes left while no daemon answered,
 * taken now and whenever the folder changes). */
static void start_watchers(struct server *s)
{
    uv_signal_init(&s->loop, &s->sigterm);
    uv_signal_init(&s->loop, &s->sigint);
    s->sigterm.data = s->sigint.data = s;
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    s->signals_started = 1;
    uv_timer_init(&s->loop, &s->tick);
    s->tick.data = s;
    uv_timer_start(&s->tick, on_tick, 1000, 1000);
    uv_idle_init(&s->loop, &s->spool_idle);
    s->spool_idle.data = s;
    uv_fs_event_init(&s->loop, &s->spool_event);
    s->spool_event.data = s;
    if (uv_fs_event_start(&s->spool_event, on_spool_event,
                          s->spool.info.dir, 0) != 0)
        logf_(s, "cannot watch %s; looking at it every second",
              s->spool.info.dir);
    spool_wake(s);
}

/* A guard's callback: never called (its loop never runs). */
static void on_guard(uv_signal_t *h, int signum)
{
    (void)h;
    (void)signum;
}

/* Closes every handle of the loop, the loop and the sockets. The signal
 * watchers close first, and SIGTERM and SIGINT are ignored from then on
 * (closing them puts back the default, fatal action): a second signal,
 * such as timeout(1) sends to the process and then to its group, or a
 * second Ctrl-C, must not kill the daemon while it writes its final
 * snapshot. */
static void close_loop(struct server *s)
{
    if (s->signals_started) {
        /* Guards on a loop of their own, never run or closed, keep
         * libuv's handler of SIGTERM and SIGINT in place while the
         * watchers below close (the last watcher of a signal to close
         * puts back its default action); the signals are then
         * ignored. */
        static uv_loop_t guard_loop;
        static uv_signal_t guard[2];

        if (uv_loop_init(&guard_loop) == 0 &&
            uv_signal_init(&guard_loop, &guard[0]) == 0 &&
            uv_signal_init(&guard_loop, &guard[1]) == 0) {
            uv_signal_start(&guard[0], on_guard, SIGTERM);
            uv_signal_start(&guard[1], on_guard, SIGINT);
        }
        uv_close((uv_handle_t *)&s->sigterm, NULL);
        uv_close((uv_handle_t *)&s->sigint, NULL);
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
    }
    uv_walk(&s->loop, close_walk, NULL);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    if (s->ingest >= 0)
        nn_close(s->ingest);
    if (s->control >= 0)
        nn_close(s->control);
}

int hrd_server_run(const struct hrd_server_opts *o, char *err, size_t errlen)
{
    struct server *s;
    struct hrd_rundir rd;
    char dir[4096], status[4200];
    int rc;

    rc = hrp_runtime_dir(dir, sizeof dir, o->runtime_dir);
    if (rc != 0) {
        snprintf(err, errlen, "runtime directory name too long");
        return rc;
    }
    s = server_new(o);
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    signal(SIGPIPE, SIG_IGN);
    if (o->load != NULL) {
        rc = load_run(s, o->load, err, errlen);
        if (rc != 0)
            goto fail_load;
    }
    rc = hrd_runtime_dir_open(&rd, dir, o->gid, err, errlen);
    if (rc != 0)
        goto fail_rundir;
    rc = open_state(s, o, err, errlen);
    if (rc != 0)
        goto fail_state;
    rc = hrd_spool_open(&s->spool, dir, o->gid, &s->in, state_log, s, err,
                        errlen);
    if (rc != 0)
        goto fail_spool;
    s->have_spool = 1;
    s->ctl.spool = &s->spool.info;
    if (s->have_state) {
        s->spool.sync = hrd_state_sync;
        s->spool.sync_ctx = &s->state;
    }
    rc = uv_loop_init(&s->loop);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the event loop: %s",
                 uv_strerror(rc));
        goto fail_loop;
    }
    rc = open_sockets(s, &rd, err, errlen);
    if (rc != 0)
        goto fail_sockets;
    start_watchers(s);
    snprintf(status, sizeof status, "serving %s", dir);
    logf_(s, "serving %s (pid %ld)", dir, (long)getpid());
    hrd_notify_ready(status);

    uv_run(&s->loop, UV_RUN_DEFAULT);
    rc = 0;

fail_sockets:
    close_loop(s);
fail_loop:
    hrd_spool_close(&s->spool);
fail_spool:
    /* A final snapshot that cannot be written is logged; the journals
     * stay and hold everything acknowledged. */
    if (s->have_state)
        hrd_state_close(&s->state);
fail_state:
    hrd_runtime_dir_close(&rd);
fail_rundir:
fail_load:
    server_free(s);
    return rc;
}
