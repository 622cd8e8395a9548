/* hostrangectl: the command-line client of hostranged. */
#include "config.h"

#include "daemon/ctl.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "Usage: hostrangectl [-r DIR] [-t MS] COMMAND [OPTION]...\n"
    "Talk to hostranged, the hostrange daemon.\n"
    "\n"
    "Commands:\n"
    "  dump     print the report: one row per key (node, operator, backend,\n"
    "           phase, range, metric) with count, mean and median\n"
    "  stats    print the daemon's counters and those of every client\n"
    "  reset    drop the samples of every key, or of the keys selected\n"
    "  ping     check that the daemon answers\n"
    "  record   run a command under a private daemon and write its report\n"
    "  save     save what the daemon holds as a run file (.hrs)\n"
    "  merge    join run files (CI shards, many hosts) into one\n"
    "  diff     compare two run files key by key, with significance\n"
    "\n"
    "Options:\n"
    "  -r, --runtime-dir=DIR  the daemon's runtime directory (default:\n"
    "                         $HOSTRANGE_RUNTIME_DIR, else\n"
    "                         $XDG_RUNTIME_DIR/hostrange, else /run/hostrange\n"
    "                         for root and /tmp/hostrange-UID for others)\n"
    "  -t, --timeout=MS       wait at most MS milliseconds for each answer\n"
    "                         (default 5000)\n"
    "  -h, --help             show this help (COMMAND --help: the command's)\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 on success, 1 when the daemon cannot be reached or fails,\n"
    "2 on a usage error; record exits with the command's status; diff\n"
    "exits 1 when --fail-above is given and exceeded.\n";

#define FILTER_HELP                                                         \
    "  -n, --node=GLOB      only nodes whose id matches the shell pattern\n"  \
    "                       GLOB\n"                                           \
    "      --operator=GLOB  only operators matching GLOB\n"                   \
    "      --backend=GLOB   only backends matching GLOB\n"                    \
    "      --phase=PHASE    only the cold or the warm phase\n"                \
    "      --range=GLOB     only ranges matching GLOB\n"

static const char usage_dump[] =
    "Usage: hostrangectl dump [--format=FORMAT] [--fields=FIELDS]\n"
    "                         [--correct-observer] [--calibration=LABEL]\n"
    "                         [FILTER]... [-o FILE] [--from=RUN]\n"
    "Print the daemon's report, one row per key and metric, in report order\n"
    "(nodes as first seen, cold before warm, ranges as first entered,\n"
    "inclusive before self, recorded values last). The daemon sends it in\n"
    "pages, so a large report does not hold up the samples arriving.\n"
    "\n"
    "  -f, --format=FORMAT  jsonl (default: one JSON object per row, the\n"
    "                       reference schema), csv, or table (aligned,\n"
    "                       durations in microseconds, grouped by node and\n"
    "                       phase)\n"
    "      --fields=FIELDS  reference (default: the ten reference fields),\n"
    "                       all (adds min, max, p90, p99, stddev in ns;\n"
    "                       exact, false when the daemon keeps the key in a\n"
    "                       histogram and quantiles are within 0.1%; lost,\n"
    "                       the events clients lost under the node),\n"
    "                       observer, or all,observer. observer adds, from\n"
    "                       the daemon's calibration (hostrange-bench\n"
    "                       --calibrate): children (direct child ranges per\n"
    "                       call), observer_ns (children x the cost of one\n"
    "                       child scope to its parent on an inclusive row,\n"
    "                       x the self time it leaves in its parent on a\n"
    "                       self row), observer_share (observer_ns / median)\n"
    "                       and unstable (share of 10% or more). They are\n"
    "                       null on rows of recorded values, and on every\n"
    "                       row, with a warning, when there is no\n"
    "                       calibration.\n"
    "      --correct-observer\n"
    "                       subtract the calibrated cost from mean, median,\n"
    "                       min, max, p90 and p99 (observer_ns + the time\n"
    "                       inside an empty scope, never below 0); adds the\n"
    "                       observer fields and \"corrected\" (true on each\n"
    "                       row corrected). Only direct children count: the\n"
    "                       cost of deeper descendants stays in inclusive\n"
    "                       figures (self figures are corrected whole)\n"
    "      --calibration=LABEL\n"
    "                       use the calibration of process label LABEL\n"
    "                       (default: the most recent one)\n"
    FILTER_HELP
    "  -o, --output=FILE    write to FILE (atomically: a temporary file then a\n"
    "                       rename; a device or pipe is written in place; -\n"
    "                       is standard output) instead of standard output\n"
    "      --from=RUN       report run file RUN (hostrangectl save, merge)\n"
    "                       instead of asking the daemon; no daemon is\n"
    "                       needed, and the calibrations are the file's\n"
    "  -h, --help           show this help and exit\n";

static const char usage_ping[] =
    "Usage: hostrangectl ping [--wait=MS]\n"
    "Check that the daemon answers; print its pid.\n"
    "\n"
    "  -w, --wait=MS  keep trying for up to MS milliseconds while no daemon\n"
    "                 answers (for scripts that have just started one)\n"
    "  -h, --help     show this help and exit\n";

static const char usage_stats[] =
    "Usage: hostrangectl stats\n"
    "Print the daemon's counters, one `name value` pair per line:\n"
    "  daemon.*    pid, uptime, keys, events held, memory of samples and its\n"
    "              limit, resident memory, the exact cap and the keys kept in\n"
    "              histograms, the clocks the clients use, batches answered\n"
    "              `retry`\n"
    "  state.*     the state directory: status (ok or degraded), journal and\n"
    "              snapshot counters, what the last start loaded\n"
    "  rejected.*  batches and requests refused, by reason\n"
    "  client.N.*  each client process: pid, label, clock, batches, events,\n"
    "              duplicates dropped, gaps in sequence numbers, batches\n"
    "              rejected, lost events and its range errors by kind\n"
    "  calibration.LABEL.*\n"
    "              each calibration (hostrange-bench --calibrate), the most\n"
    "              recent first: clock, child_ns (the cost of one child\n"
    "              scope to its parent), residue_ns (the self time a parent\n"
    "              gains per child), empty_ns (the time inside an empty\n"
    "              scope), timer_ns (one clock read) and calls\n"
    "  node.*      the profiler's own work under each node id that had any,\n"
    "              as `node.NAME VALUE NODEID`: stalls and stall_ns (waits\n"
    "              of a thread for room in its buffer), wakes and wake_ns\n"
    "              (wake-ups of a shipper by a thread); never report rows\n"
    "\n"
    "  -h, --help  show this help and exit\n";

static const char usage_reset[] =
    "Usage: hostrangectl reset [FILTER]...\n"
    "Drop the samples of every key, or of the keys the filters select (all\n"
    "filters must match). Client counters stay. With a state directory the\n"
    "reset is journaled, so a restart does not bring the samples back.\n"
    "\n"
    FILTER_HELP
    "  -h, --help           show this help and exit\n";

char hrd_ctl_dir[4096];
int hrd_ctl_timeout_ms = 5000;

/* The one control socket of this process, opened on first use. */
static int g_sock = -1;

void hrd_ctl_die_usage(const char *cmd, int c, const char *arg)
{
    if (c == ':')
        fprintf(stderr, "hostrangectl%s%s: missing value for option '%s' "
                "(see --help)\n", cmd ? " " : "", cmd ? cmd : "", arg);
    else
        fprintf(stderr, "hostrangectl%s%s: unknown option '%s' (see --help)\n",
                cmd ? " " : "", cmd ? cmd : "", arg);
    exit(2);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int open_socket(int timeout_ms, char *err, size_t errlen)
{
    char url[4200];
    int max = -1;

    hrp_endpoint(url, sizeof url, hrd_ctl_dir, HRP_CONTROL_NAME);
    g_sock = nn_socket(AF_SP, NN_REQ);
    if (g_sock < 0) {
        snprintf(err, errlen, "cannot open a socket: %s",
                 nn_strerror(nn_errno()));
        return -1;
    }
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    if (nn_connect(g_sock, url) < 0) {
        snprintf(err, errlen, "cannot reach hostranged at %s: %s",
                 hrd_ctl_dir, nn_strerror(nn_errno()));
        nn_close(g_sock);
        g_sock = -1;
        return -1;
    }
    return 0;
}

static void close_socket(void)
{
    if (g_sock >= 0)
        nn_close(g_sock);
    g_sock = -1;
}

int hrd_ctl_request(const Hostrange__ControlRequest *q,
                    Hostrange__ControlReply **out, int timeout_ms, char *err,
                    size_t errlen)
{
    char path[4200];
    struct stat st;
    uint8_t *buf;
    void *msg = NULL;
    size_t len;
    int n;

    snprintf(path, sizeof path, "%s/%s", hrd_ctl_dir, HRP_CONTROL_NAME);
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "no hostranged serves %s (%s does not exist)",
                 hrd_ctl_dir, path);
        return -1;
    }
    if (g_sock < 0 && open_socket(timeout_ms, err, errlen) != 0)
        return -1;
    len = hostrange__control_request__get_packed_size(q);
    buf = malloc(len ? len : 1);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hostrange__control_request__pack(q, buf);
    if (nn_send(g_sock, buf, len, 0) < 0 ||
        (n = nn_recv(g_sock, &msg, NN_MSG, 0)) < 0) {
        int e = nn_errno();
        snprintf(err, errlen, "cannot reach hostranged at %s: %s",
                 hrd_ctl_dir,
                 e == ETIMEDOUT ? "no answer in time" : nn_strerror(e));
        /* A REQ socket that timed out may get the late answer: start
         * afresh next time. */
        close_socket();
        free(buf);
        return -1;
    }
    free(buf);
    *out = hostrange__control_reply__unpack(NULL, (size_t)n, msg);
    nn_freemsg(msg);
    if (*out == NULL) {
        snprintf(err, errlen, "hostranged at %s sent a reply that cannot be "
                 "decoded", hrd_ctl_dir);
        return -1;
    }
    if ((*out)->version != HRP_VERSION) {
        snprintf(err, errlen, "hostranged at %s speaks protocol version %u, "
                 "this hostrangectl speaks %u", hrd_ctl_dir, (*out)->version,
                 HRP_VERSION);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -1;
    }
    if ((*out)->error[0] != '\0') {
        snprintf(err, errlen, "hostranged at %s: %s", hrd_ctl_dir,
                 (*out)->error);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -1;
    }
    return 0;
}

/* Rejects arguments left after a command's options. */
static void no_arguments(const char *cmd, int argc, char **argv)
{
    if (optind < argc) {
        fprintf(stderr, "hostrangectl %s: unexpected argument '%s' (see "
                "--help)\n", cmd, argv[optind]);
        exit(2);
    }
}

/* The long options of the filters; 'n' also has a short form. */
#define FILTER_LONGOPTS                                   \
    { "node", required_argument, NULL, 'n' },             \
    { "operator", required_argument, NULL, 'O' },         \
    { "backend", required_argument, NULL, 'B' },          \
    { "phase", required_argument, NULL, 'P' },            \
    { "range", required_argument, NULL, 'R' }

static int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "fields", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "from", required_argument, NULL, 'I' },
        { "help", no_argument, NULL, 'h' },
        FILTER_LONGOPTS,
        HRD_CTL_OBSERVER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct hrd_ctl_report rep = { HRD_FORMAT_JSONL, 0, NULL, 0, NULL, NULL };
    struct hrd_ctl_filter f = { NULL, NULL, NULL, NULL, 0 };
    int c;

    while ((c = getopt_long(argc, argv, ":f:n:o:h", longopts, NULL)) != -1) {
        if (hrd_ctl_report_option("dump", c, optarg, &f, &rep))
            continue;
        if (c == 'I') {
            rep.from = optarg;
            continue;
        }
        if (c == 'h') {
            fputs(usage_dump, stdout);
            return 0;
        }
        hrd_ctl_die_usage("dump", c, argv[optind - 1]);
    }
    no_arguments("dump", argc, argv);
    return hrd_ctl_dump(&f, &rep);
}

/* Parses a command with no options but --help. */
static void no_options(const char *cmd, const char *help, int argc,
                       char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            exit(0);
        }
        hrd_ctl_die_usage(cmd, c, argv[optind - 1]);
    }
    no_arguments(cmd, argc, argv);
}

/* Sends a request with the given body; prints the failure unless quiet.
 * Returns 0 with the reply in *rep, or 1. */
static int ask(Hostrange__ControlRequest *q, Hostrange__ControlReply **rep,
               int quiet)
{
    char err[8400];

    q->version = HRP_VERSION;
    if (hrd_ctl_request(q, rep, hrd_ctl_timeout_ms, err, sizeof err) != 0) {
        if (!quiet)
            fprintf(stderr, "hostrangectl: %s\n", err);
        return 1;
    }
    return 0;
}

static void print_state(const Hostrange__StateStats *st)
{
#define P(name, v) printf("state.%s %llu\n", name, (unsigned long long)(v))
    printf("state.dir %s\n", st->dir);
    printf("state.status %s\n", st->status);
    if (st->last_error[0] != '\0')
        printf("state.last_error %s\n", st->last_error);
    P("journal_bytes", st->journal_bytes);
    P("journal_records", st->journal_records);
    P("snapshots", st->snapshots);
    P("write_errors", st->write_errors);
    P("loaded_keys", st->loaded_keys);
    P("loaded_clients", st->loaded_clients);
    P("replayed_records", st->replayed_records);
    P("load_problems", st->load_problems);
#undef P
}

static void print_client(size_t i, const Hostrange__ClientStats *c)
{
#define P(name, v) printf("client.%zu.%s %llu\n", i, name, \
                          (unsigned long long)(v))
    P("pid", c->pid);
    printf("client.%zu.label %s\n", i, c->process_label);
    printf("client.%zu.clock %s\n", i, c->clock);
    P("batches", c->batches);
    P("events", c->events);
    P("duplicates", c->duplicates);
    P("gaps", c->gaps);
    P("rejected", c->rejected);
    P("lost_events", c->lost_events);
    P("errors.out_of_order", c->errors_out_of_order);
    P("errors.open_at_window_end", c->errors_open_at_window_end);
    P("errors.foreign_thread", c->errors_foreign_thread);
    P("errors.label_in_window", c->errors_label_in_window);
    P("errors.too_deep", c->errors_too_deep);
#undef P
}

/* Writes `name number` with the number in the report's style. */
static void print_number(const char *label, const char *name, double v)
{
    char buf[32];

    if (hrd_format_number(buf, sizeof buf, v) < 0)
        snprintf(buf, sizeof buf, "%g", v);
    printf("calibration.%s.%s %s\n", label, name, buf);
}

static void print_calibration(const Hostrange__Calibration *c)
{
    printf("calibration.%s.clock %s\n", c->label, c->clock);
    print_number(c->label, "child_ns", c->child_ns);
    print_number(c->label, "residue_ns", c->residue_ns);
    print_number(c->label, "empty_ns", c->empty_ns);
    print_number(c->label, "timer_ns", c->timer_ns);
    printf("calibration.%s.calls %llu\n", c->label,
           (unsigned long long)c->calls);
}

static int cmd_stats(int argc, char **argv)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    const Hostrange__StatsReply *s;

    no_options("stats", usage_stats, argc, argv);
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    if (ask(&q, &rep, 0) != 0)
        return 1;
    s = rep->stats;
    if (rep->body_case != HOSTRANGE__CONTROL_REPLY__BODY_STATS || s == NULL) {
        fprintf(stderr, "hostrangectl: hostranged at %s sent no stats\n",
                hrd_ctl_dir);
        hostrange__control_reply__free_unpacked(rep, NULL);
        return 1;
    }
#define P(name, v) printf("daemon.%s %llu\n", name, (unsigned long long)(v))
    P("pid", s->daemon_pid);
    printf("daemon.uptime_s %.3f\n", (double)s->uptime_ns / 1e9);
    P("keys", s->keys);
    P("events", s->events);
    P("memory_bytes", s->memory_bytes);
    P("memory_limit_bytes", s->memory_limit);
    P("rss_bytes", s->rss_bytes);
    P("exact_cap", s->exact_cap);
    P("histogram_keys", s->histogram_keys);
    P("keys_capped", s->keys_capped);
    P("keys_compacted", s->keys_compacted);
    P("over_budget", s->over_budget);
    P("retries", s->retries);
    P("clients", s->n_clients);
#undef P
    fputs("daemon.clock ", stdout);
    for (size_t i = 0; i < s->n_clocks; i++)
        printf("%s%s", i ? "," : "", s->clocks[i]);
    puts(s->n_clocks ? "" : "none");
    if (s->state != NULL)
        print_state(s->state);
    for (size_t i = 0; i < s->n_rejections; i++)
        printf("rejected.%s %llu\n", s->rejections[i]->name,
               (unsigned long long)s->rejections[i]->value);
    for (size_t i = 0; i < s->n_clients; i++)
        print_client(i + 1, s->clients[i]);
    for (size_t i = 0; i < s->n_calibrations; i++)
        print_calibration(s->calibrations[i]);
    /* The profiler's own work, per node id (last on the line: it may hold
     * spaces). */
    for (size_t i = 0; i < s->n_internal; i++) {
        const Hostrange__NodeInternal *w = s->internal[i];
        printf("node.stalls %llu %s\n", (unsigned long long)w->stalls,
               w->node_id);
        printf("node.stall_ns %llu %s\n", (unsigned long long)w->stall_ns,
               w->node_id);
        printf("node.wakes %llu %s\n", (unsigned long long)w->wakes,
               w->node_id);
        printf("node.wake_ns %llu %s\n", (unsigned long long)w->wake_ns,
               w->node_id);
    }
    hostrange__control_reply__free_unpacked(rep, NULL);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_reset(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        FILTER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__ResetRequest rq = HOSTRANGE__RESET_REQUEST__INIT;
    struct hrd_ctl_filter f = { NULL, NULL, NULL, NULL, 0 };
    Hostrange__ControlReply *rep;
    int c;

    while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        if (hrd_ctl_report_option("reset", c, optarg, &f, NULL))
            continue;
        if (c == 'h') {
            fputs(usage_reset, stdout);
            return 0;
        }
        hrd_ctl_die_usage("reset", c, argv[optind - 1]);
    }
    no_arguments("reset", argc, argv);
    rq.node_glob = (char *)(f.node ? f.node : "");
    rq.operator_glob = (char *)(f.op ? f.op : "");
    rq.backend_glob = (char *)(f.backend ? f.backend : "");
    rq.range_glob = (char *)(f.range ? f.range : "");
    rq.phase = f.phase;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_RESET;
    q.reset = &rq;
    if (ask(&q, &rep, 0) != 0)
        return 1;
    printf("dropped %llu keys\n",
           (unsigned long long)(rep->reset ? rep->reset->keys : 0));
    hostrange__control_reply__free_unpacked(rep, NULL);
    return 0;
}

int hrd_ctl_ping_wait(int wait_ms, int quiet)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__PingRequest pq = HOSTRANGE__PING_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    uint64_t deadline = mono_ms() + (uint64_t)wait_ms;

    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_PING;
    q.ping = &pq;
    for (;;) {
        int last = mono_ms() >= deadline;
        if (ask(&q, &rep, quiet || !last) == 0) {
            if (!quiet)
                printf("hostranged pid %u serves %s\n",
                       rep->ping ? rep->ping->daemon_pid : 0, hrd_ctl_dir);
            hostrange__control_reply__free_unpacked(rep, NULL);
            return 0;
        }
        if (last)
            return 1;
        usleep(20000);
    }
}

static long parse_ms(const char *cmd, const char *what, const char *v)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < 0 || n > INT_MAX) {
        fprintf(stderr, "hostrangectl%s%s: bad %s '%s' (milliseconds, a "
                "whole number)\n", cmd ? " " : "", cmd ? cmd : "", what, v);
        exit(2);
    }
    return n;
}

static int cmd_ping(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "wait", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, wait_ms = 0;

    while ((c = getopt_long(argc, argv, ":w:h", longopts, NULL)) != -1) {
        if (c == 'w') {
            wait_ms = (int)parse_ms("ping", "wait", optarg);
        } else if (c == 'h') {
            fputs(usage_ping, stdout);
            return 0;
        } else {
            hrd_ctl_die_usage("ping", c, argv[optind - 1]);
        }
    }
    no_arguments("ping", argc, argv);
    return hrd_ctl_ping_wait(wait_ms, 0);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "runtime-dir", required_argument, NULL, 'r' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *dir = NULL, *cmd;
    int c, rc;

    while ((c = getopt_long(argc, argv, "+:r:t:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            dir = optarg;
            break;
        case 't':
            hrd_ctl_timeout_ms = (int)parse_ms(NULL, "timeout", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            puts("hostrangectl " PACKAGE_VERSION);
            return 0;
        default:
            hrd_ctl_die_usage(NULL, c, argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl: no command (see --help)\n");
        return 2;
    }
    if (hrp_runtime_dir(hrd_ctl_dir, sizeof hrd_ctl_dir, dir) != 0) {
        fprintf(stderr, "hostrangectl: runtime directory name too long\n");
        return 2;
    }
    cmd = argv[optind];
    argc -= optind;
    argv += optind;
    optind = 0; /* restart getopt for the command's own options */
    if (strcmp(cmd, "dump") == 0)
        rc = cmd_dump(argc, argv);
    else if (strcmp(cmd, "stats") == 0)
        rc = cmd_stats(argc, argv);
    else if (strcmp(cmd, "reset") == 0)
        rc = cmd_reset(argc, argv);
    else if (strcmp(cmd, "ping") == 0)
        rc = cmd_ping(argc, argv);
    else if (strcmp(cmd, "record") == 0)
        rc = hrd_ctl_record(argc, argv);
    else if (strcmp(cmd, "save") == 0)
        rc = hrd_ctl_save(argc, argv);
    else if (strcmp(cmd, "merge") == 0)
        rc = hrd_ctl_merge(argc, argv);
    else if (strcmp(cmd, "diff") == 0)
        rc = hrd_ctl_diff(argc, argv);
    else {
        fprintf(stderr, "hostrangectl: unknown command '%s' (see --help)\n",
                cmd);
        return 2;
    }
    close_socket();
    return rc;
}
