/* hostrangectl: the command-line client of hostranged. */
#include "config.h"

#include "daemon/report.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    "  reset    drop every sample the daemon holds\n"
    "  ping     check that the daemon answers\n"
    "  record   run a command under a private daemon and write its report\n"
    "\n"
    "Options:\n"
    "  -r, --runtime-dir=DIR  the daemon's runtime directory (default:\n"
    "                         $HOSTRANGE_RUNTIME_DIR, else\n"
    "                         $XDG_RUNTIME_DIR/hostrange, else /run/hostrange\n"
    "                         for root and /tmp/hostrange-UID for others)\n"
    "  -t, --timeout=MS       wait at most MS milliseconds for an answer\n"
    "                         (default 5000)\n"
    "  -h, --help             show this help (COMMAND --help: the command's)\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 on success, 1 when the daemon cannot be reached or fails,\n"
    "2 on a usage error; record exits with the command's status.\n";

static const char usage_dump[] =
    "Usage: hostrangectl dump [--format=FORMAT] [--fields=FIELDS] "
    "[--node=GLOB] [-o FILE]\n"
    "Print the daemon's report.\n"
    "\n"
    "  -f, --format=FORMAT  jsonl (default: one JSON object per row, the\n"
    "                       reference schema), csv, or table (aligned, in us)\n"
    "      --fields=FIELDS  reference (default: the ten reference fields) or\n"
    "                       all (adds min, max, exact)\n"
    "  -n, --node=GLOB      only nodes whose id matches the shell pattern GLOB\n"
    "  -o, --output=FILE    write to FILE (atomically: a temporary file then a\n"
    "                       rename; a device or pipe is written in place; -\n"
    "                       is standard output) instead of standard output\n"
    "  -h, --help           show this help and exit\n";

static const char usage_record[] =
    "Usage: hostrangectl record [-o FILE] [--format=FORMAT] [--fields=FIELDS]"
    " -- COMMAND [ARG]...\n"
    "Run COMMAND under a private hostranged and write its report.\n"
    "\n"
    "Starts hostranged on a fresh temporary runtime directory, runs COMMAND\n"
    "with HOSTRANGE_RUNTIME_DIR set to it (so every process it starts reports\n"
    "there), waits for it, writes the report, stops the daemon and removes the\n"
    "directory. Exits with COMMAND's exit status (128+N when killed by signal\n"
    "N). The daemon is $HOSTRANGED when set, else the hostranged beside this\n"
    "program, else the one on PATH.\n"
    "\n"
    "  -o, --output=FILE    write the report to FILE (default: standard output)\n"
    "  -f, --format=FORMAT  jsonl (default), csv or table\n"
    "      --fields=FIELDS  reference (default) or all\n"
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
    "Print the daemon's counters, one `name value` pair per line: daemon.*\n"
    "(pid, uptime, keys, events held, memory of samples), rejected.* (batches\n"
    "and requests refused, by reason) and client.N.* for each client process\n"
    "(pid, label, clock, batches, events, duplicates, gaps, lost events and\n"
    "its range errors by kind).\n";

static const char usage_reset[] =
    "Usage: hostrangectl reset\n"
    "Drop every sample the daemon holds (client counters stay).\n";

static char g_dir[4096];
static int g_timeout_ms = 5000;

static void die_usage(const char *cmd, int c, const char *arg)
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

/*
 * Sends a control request and waits for its reply. On success returns 0
 * and the decoded reply in *out (caller frees with
 * hostrange__control_reply__free_unpacked). On failure returns -1 with a
 * one-line reason in err.
 */
static int request(const Hostrange__ControlRequest *q,
                   Hostrange__ControlReply **out, int timeout_ms, char *err,
                   size_t errlen)
{
    char url[4200], path[4200];
    struct stat st;
    uint8_t *buf;
    void *msg = NULL;
    size_t len;
    int sock, n, max = -1;

    snprintf(path, sizeof path, "%s/%s", g_dir, HRP_CONTROL_NAME);
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "no hostranged serves %s (%s does not exist)",
                 g_dir, path);
        return -1;
    }
    hrp_endpoint(url, sizeof url, g_dir, HRP_CONTROL_NAME);
    len = hostrange__control_request__get_packed_size(q);
    buf = malloc(len ? len : 1);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hostrange__control_request__pack(q, buf);
    sock = nn_socket(AF_SP, NN_REQ);
    if (sock < 0) {
        free(buf);
        snprintf(err, errlen, "cannot open a socket: %s",
                 nn_strerror(nn_errno()));
        return -1;
    }
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    if (nn_connect(sock, url) < 0 || nn_send(sock, buf, len, 0) < 0 ||
        (n = nn_recv(sock, &msg, NN_MSG, 0)) < 0) {
        int e = nn_errno();
        snprintf(err, errlen, "cannot reach hostranged at %s: %s", g_dir,
                 e == ETIMEDOUT ? "no answer in time" : nn_strerror(e));
        nn_close(sock);
        free(buf);
        return -1;
    }
    free(buf);
    *out = hostrange__control_reply__unpack(NULL, (size_t)n, msg);
    nn_freemsg(msg);
    nn_close(sock);
    if (*out == NULL) {
        snprintf(err, errlen, "hostranged at %s sent a reply that cannot be "
                 "decoded", g_dir);
        return -1;
    }
    if ((*out)->version != HRP_VERSION) {
        snprintf(err, errlen, "hostranged at %s speaks protocol version %u, "
                 "this hostrangectl speaks %u", g_dir, (*out)->version,
                 HRP_VERSION);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -1;
    }
    if ((*out)->error[0] != '\0') {
        snprintf(err, errlen, "hostranged at %s: %s", g_dir, (*out)->error);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -1;
    }
    return 0;
}

static const char *metric_name(unsigned m)
{
    return m == HRP_METRIC_SELF ? "self" : "inclusive";
}

/* Writes the rows of a dump reply through a report writer to f. */
static int write_rows(FILE *f, const Hostrange__DumpReply *d,
                      enum hrd_format format, unsigned fields)
{
    struct hrd_writer w;
    int rc = 0;

    hrd_writer_init(&w, f, format, fields);
    for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
        const Hostrange__Row *r = d->rows[i];
        struct hrd_row row = {
            .node_id = r->node_id,
            .op = r->operator_,
            .backend = r->backend,
            .phase = hrp_phase_name(r->phase),
            .range = r->range,
            .metric = metric_name(r->metric),
            .count = r->count,
            .mean = r->mean,
            .median = r->median,
            .min = r->min,
            .max = r->max,
            .exact = r->exact,
        };
        if (row.phase == NULL)
            row.phase = "?";
        rc = hrd_writer_row(&w, &row);
    }
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
    return rc;
}

/* Dumps the report to `output` (atomically) or stdout. Returns 0 or 1. */
static int dump_to(const char *output, const char *node_glob,
                   enum hrd_format format, unsigned fields)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    char err[8400], tmp[PATH_MAX + 32];
    struct stat st;
    FILE *f = stdout;
    int rc, fd = -1;

    q.version = HRP_VERSION;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_DUMP;
    dq.node_glob = (char *)(node_glob ? node_glob : "");
    q.dump = &dq;
    if (request(&q, &rep, g_timeout_ms, err, sizeof err) != 0) {
        fprintf(stderr, "hostrangectl: %s\n", err);
        return 1;
    }
    if (rep->body_case != HOSTRANGE__CONTROL_REPLY__BODY_DUMP) {
        fprintf(stderr, "hostrangectl: hostranged at %s sent no report\n",
                g_dir);
        hostrange__control_reply__free_unpacked(rep, NULL);
        return 1;
    }
    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;
    if (output != NULL && stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device or a pipe (/dev/null, /dev/stdout): written in place. */
        f = fopen(output, "w");
        if (f == NULL) {
            fprintf(stderr, "hostrangectl: cannot write %s: %s\n", output,
                    strerror(errno));
            hostrange__control_reply__free_unpacked(rep, NULL);
            return 1;
        }
        rc = write_rows(f, rep->dump, format, fields);
        hostrange__control_reply__free_unpacked(rep, NULL);
        if (fclose(f) != 0 && rc == 0)
            rc = -errno;
        if (rc != 0)
            fprintf(stderr, "hostrangectl: cannot write %s: %s\n", output,
                    strerror(-rc));
        return rc != 0;
    }
    if (output != NULL) {
        snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", output);
        fd = mkstemp(tmp);
        if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
            fprintf(stderr, "hostrangectl: cannot write %s: %s\n", output,
                    strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            hostrange__control_reply__free_unpacked(rep, NULL);
            return 1;
        }
    }
    rc = write_rows(f, rep->dump, format, fields);
    hostrange__control_reply__free_unpacked(rep, NULL);
    if (output != NULL) {
        if (rc == 0 && (fflush(f) != 0 || fsync(fd) != 0))
            rc = -errno;
        if (fclose(f) != 0 && rc == 0)
            rc = -errno;
        if (rc == 0 && rename(tmp, output) != 0)
            rc = -errno;
        if (rc != 0) {
            unlink(tmp);
            fprintf(stderr, "hostrangectl: cannot write %s: %s\n", output,
                    strerror(-rc));
            return 1;
        }
    } else if (rc != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "hostrangectl: cannot write the report: %s\n",
                strerror(rc ? -rc : errno));
        return 1;
    }
    return 0;
}

static int parse_fields(const char *v, unsigned *fields)
{
    if (strcmp(v, "reference") == 0)
        *fields = 0;
    else if (strcmp(v, "all") == 0)
        *fields = HRD_FIELDS_EXTENDED;
    else
        return -1;
    return 0;
}

/* Parses the report options shared by dump and record. Returns 1 when the
 * option was one of them. */
static int report_option(const char *cmd, int c, const char *arg,
                         enum hrd_format *format, unsigned *fields,
                         const char **output)
{
    switch (c) {
    case 'f':
        if (hrd_format_parse(arg, format) != 0) {
            fprintf(stderr, "hostrangectl %s: bad format '%s' (jsonl, csv or "
                    "table)\n", cmd, arg);
            exit(2);
        }
        return 1;
    case 'F':
        if (parse_fields(arg, fields) != 0) {
            fprintf(stderr, "hostrangectl %s: bad fields '%s' (reference or "
                    "all)\n", cmd, arg);
            exit(2);
        }
        return 1;
    case 'o':
        *output = arg;
        return 1;
    default:
        return 0;
    }
}

static int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "fields", required_argument, NULL, 'F' },
        { "node", required_argument, NULL, 'n' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    enum hrd_format format = HRD_FORMAT_JSONL;
    unsigned fields = 0;
    const char *output = NULL, *node = NULL;
    int c;

    while ((c = getopt_long(argc, argv, ":f:n:o:h", longopts, NULL)) != -1) {
        if (report_option("dump", c, optarg, &format, &fields, &output))
            continue;
        if (c == 'n') {
            node = optarg;
        } else if (c == 'h') {
            fputs(usage_dump, stdout);
            return 0;
        } else {
            die_usage("dump", c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl dump: unexpected argument '%s'\n",
                argv[optind]);
        return 2;
    }
    return dump_to(output, node, format, fields);
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
        die_usage(cmd, c, argv[optind - 1]);
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl %s: unexpected argument '%s'\n", cmd,
                argv[optind]);
        exit(2);
    }
}

static int simple(Hostrange__ControlRequest__BodyCase body,
                  Hostrange__ControlReply **rep, int timeout_ms, int quiet)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;
    Hostrange__ResetRequest rq = HOSTRANGE__RESET_REQUEST__INIT;
    Hostrange__PingRequest pq = HOSTRANGE__PING_REQUEST__INIT;
    char err[8400];

    q.version = HRP_VERSION;
    q.body_case = body;
    if (body == HOSTRANGE__CONTROL_REQUEST__BODY_STATS)
        q.stats = &sq;
    else if (body == HOSTRANGE__CONTROL_REQUEST__BODY_RESET)
        q.reset = &rq;
    else
        q.ping = &pq;
    if (request(&q, rep, timeout_ms, err, sizeof err) != 0) {
        if (!quiet)
            fprintf(stderr, "hostrangectl: %s\n", err);
        return 1;
    }
    return 0;
}

static int cmd_stats(int argc, char **argv)
{
    Hostrange__ControlReply *rep;
    const Hostrange__StatsReply *s;

    no_options("stats", usage_stats, argc, argv);
    if (simple(HOSTRANGE__CONTROL_REQUEST__BODY_STATS, &rep, g_timeout_ms, 0))
        return 1;
    s = rep->stats;
    if (s == NULL) {
        fprintf(stderr, "hostrangectl: hostranged at %s sent no stats\n",
                g_dir);
        hostrange__control_reply__free_unpacked(rep, NULL);
        return 1;
    }
    printf("daemon.pid %u\n", s->daemon_pid);
    printf("daemon.uptime_s %.3f\n", (double)s->uptime_ns / 1e9);
    printf("daemon.keys %llu\n", (unsigned long long)s->keys);
    printf("daemon.events %llu\n", (unsigned long long)s->events);
    printf("daemon.memory_bytes %llu\n", (unsigned long long)s->memory_bytes);
    printf("daemon.clients %zu\n", s->n_clients);
    for (size_t i = 0; i < s->n_rejections; i++)
        printf("rejected.%s %llu\n", s->rejections[i]->name,
               (unsigned long long)s->rejections[i]->value);
    for (size_t i = 0; i < s->n_clients; i++) {
        const Hostrange__ClientStats *c = s->clients[i];
#define P(name, v) printf("client.%zu.%s %llu\n", i + 1, name, \
                          (unsigned long long)(v))
        P("pid", c->pid);
        printf("client.%zu.label %s\n", i + 1, c->process_label);
        printf("client.%zu.clock %s\n", i + 1, c->clock);
        P("batches", c->batches);
        P("events", c->events);
        P("duplicates", c->duplicates);
        P("gaps", c->gaps);
        P("lost_events", c->lost_events);
        P("errors.out_of_order", c->errors_out_of_order);
        P("errors.open_at_window_end", c->errors_open_at_window_end);
        P("errors.foreign_thread", c->errors_foreign_thread);
        P("errors.label_in_window", c->errors_label_in_window);
        P("errors.too_deep", c->errors_too_deep);
#undef P
    }
    hostrange__control_reply__free_unpacked(rep, NULL);
    return 0;
}

static int cmd_reset(int argc, char **argv)
{
    Hostrange__ControlReply *rep;

    no_options("reset", usage_reset, argc, argv);
    if (simple(HOSTRANGE__CONTROL_REQUEST__BODY_RESET, &rep, g_timeout_ms, 0))
        return 1;
    hostrange__control_reply__free_unpacked(rep, NULL);
    return 0;
}

/* Pings until the daemon answers or wait_ms pass. Returns 0 or 1. */
static int ping_wait(int wait_ms, int quiet)
{
    Hostrange__ControlReply *rep;
    uint64_t deadline = mono_ms() + (uint64_t)wait_ms;

    for (;;) {
        int last = mono_ms() >= deadline;
        if (simple(HOSTRANGE__CONTROL_REQUEST__BODY_PING, &rep,
                   g_timeout_ms, quiet || !last) == 0) {
            if (!quiet)
                printf("hostranged pid %u serves %s\n",
                       rep->ping ? rep->ping->daemon_pid : 0, g_dir);
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
            die_usage("ping", c, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostrangectl ping: unexpected argument '%s'\n",
                argv[optind]);
        return 2;
    }
    return ping_wait(wait_ms, 0);
}

/* Finds hostranged: $HOSTRANGED, beside this program, or on PATH. */
static void daemon_path(char *buf, size_t len)
{
    const char *env = getenv("HOSTRANGED");
    char self[PATH_MAX];
    ssize_t n;

    if (env != NULL && env[0] != '\0') {
        snprintf(buf, len, "%s", env);
        return;
    }
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        snprintf(buf, len, "%s/hostranged", dirname(self));
        if (access(buf, X_OK) == 0)
            return;
    }
    snprintf(buf, len, "hostranged");
}

/* Removes dir and whatever a daemon left in it. */
static void remove_dir(const char *dir)
{
    static const char *const names[] = { HRP_INGEST_NAME, HRP_CONTROL_NAME,
                                         HRP_LOCK_NAME };
    char p[4200];

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static int exit_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

static int cmd_record(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "fields", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    enum hrd_format format = HRD_FORMAT_JSONL;
    unsigned fields = 0;
    const char *output = NULL, *tmpdir = getenv("TMPDIR");
    char daemon[PATH_MAX], dir[PATH_MAX];
    pid_t dpid, cpid;
    int c, status, rc;

    /* "+": stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+:f:o:h", longopts, NULL)) != -1) {
        if (report_option("record", c, optarg, &format, &fields, &output))
            continue;
        if (c == 'h') {
            fputs(usage_record, stdout);
            return 0;
        }
        die_usage("record", c, argv[optind - 1]);
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl record: no command to run (see "
                "--help)\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/hostrange-record-XXXXXX",
             tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "hostrangectl record: cannot create a runtime "
                "directory in %s: %s\n", tmpdir ? tmpdir : "/tmp",
                strerror(errno));
        return 1;
    }
    snprintf(g_dir, sizeof g_dir, "%s", dir);
    daemon_path(daemon, sizeof daemon);
    dpid = fork();
    if (dpid == 0) {
        execlp(daemon, daemon, "--quiet", "--runtime-dir", dir, (char *)NULL);
        fprintf(stderr, "hostrangectl record: cannot run %s: %s\n", daemon,
                strerror(errno));
        _exit(127);
    }
    if (dpid < 0 || ping_wait(10000, 1) != 0) {
        fprintf(stderr, "hostrangectl record: hostranged (%s) did not start "
                "on %s\n", daemon, dir);
        if (dpid > 0) {
            kill(dpid, SIGTERM);
            waitpid(dpid, NULL, 0);
        }
        remove_dir(dir);
        return 1;
    }

    /* The command gets the terminal's signals; we stay to clean up. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    cpid = fork();
    if (cpid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        setenv("HOSTRANGE_RUNTIME_DIR", dir, 1);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "hostrangectl record: cannot run %s: %s\n",
                argv[optind], strerror(errno));
        _exit(127);
    }
    status = 0;
    if (cpid < 0) {
        fprintf(stderr, "hostrangectl record: cannot fork: %s\n",
                strerror(errno));
        status = 1 << 8;
    } else {
        while (waitpid(cpid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    rc = dump_to(output, NULL, format, fields);
    kill(dpid, SIGTERM);
    waitpid(dpid, NULL, 0);
    remove_dir(dir);
    if (rc != 0)
        return 1;
    return exit_status(status);
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
    int c;

    while ((c = getopt_long(argc, argv, "+:r:t:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            dir = optarg;
            break;
        case 't':
            g_timeout_ms = (int)parse_ms(NULL, "timeout", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            puts("hostrangectl " PACKAGE_VERSION);
            return 0;
        default:
            die_usage(NULL, c, argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl: no command (see --help)\n");
        return 2;
    }
    if (hrp_runtime_dir(g_dir, sizeof g_dir, dir) != 0) {
        fprintf(stderr, "hostrangectl: runtime directory name too long\n");
        return 2;
    }
    cmd = argv[optind];
    argc -= optind;
    argv += optind;
    optind = 0; /* restart getopt for the command's own options */
    if (strcmp(cmd, "dump") == 0)
        return cmd_dump(argc, argv);
    if (strcmp(cmd, "stats") == 0)
        return cmd_stats(argc, argv);
    if (strcmp(cmd, "reset") == 0)
        return cmd_reset(argc, argv);
    if (strcmp(cmd, "ping") == 0)
        return cmd_ping(argc, argv);
    if (strcmp(cmd, "record") == 0)
        return cmd_record(argc, argv);
    fprintf(stderr, "hostrangectl: unknown command '%s' (see --help)\n", cmd);
    return 2;
}
