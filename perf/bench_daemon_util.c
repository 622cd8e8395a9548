/* Helpers of the daemon's benchmarks (see bench_daemon_util.h). */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void bd_self_exe(char *buf, size_t len, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);

    if (n <= 0 || (size_t)n >= len - 1)
        snprintf(buf, len, "%s", argv0);
    else
        buf[n] = '\0';
}

pid_t bd_fork_piped(FILE **out)
{
    int fd[2];
    pid_t pid;

    if (pipe(fd) != 0)
        bd_die("pipe failed");
    /* Nothing buffered here is written twice. */
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bd_die("fork failed");
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0)
            _exit(127);
        close(fd[1]);
        return 0;
    }
    close(fd[1]);
    if ((*out = fdopen(fd[0], "r")) == NULL)
        bd_die("fdopen failed");
    return pid;
}

void bd_die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

double bd_now(void)
{
    return (double)hrp_mono_ns() / 1e9;
}

void bd_report(const char *name, double value, const char *unit,
               double baseline)
{
    printf("{\"bench\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
           "\"baseline\":%.6g,\"ratio\":%.4f}\n",
           name, value, unit, baseline, baseline != 0 ? value / baseline : 0);
    fflush(stdout);
}

void bd_tempdir(char *buf, size_t len, const char *what)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(buf, len, "%s/hostrange-bench-%s-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", what);
    if (mkdtemp(buf) == NULL)
        bd_die("cannot make a directory %s: %s", buf, strerror(errno));
}

void bd_rmdir(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: cannot remove %s\n", dir);
}

/* The directory of the program running process pid (static buffer), or
 * NULL. */
static const char *exe_dir(const char *proc)
{
    static char buf[PATH_MAX];
    char link[64];
    ssize_t n;

    snprintf(link, sizeof link, "/proc/%s/exe", proc);
    n = readlink(link, buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return dirname(buf);
}

static const char *find(const char *env, const char *name)
{
    static char paths[2][PATH_MAX];
    char *out = paths[strcmp(name, "hostranged") == 0];
    const char *e = getenv(env), *dir;
    char ppid[32];

    if (e != NULL && e[0] != '\0')
        return e;
    snprintf(ppid, sizeof ppid, "%ld", (long)getppid());
    dir = exe_dir(ppid);
    if (dir != NULL) {
        snprintf(out, PATH_MAX, "%s/%s", dir, name);
        if (access(out, X_OK) == 0)
            return out;
    }
    dir = exe_dir("self");
    if (dir != NULL) {
        /* A libtool wrapper runs the program from .libs. */
        snprintf(out, PATH_MAX, "%s/../daemon/%s", dir, name);
        if (access(out, X_OK) == 0)
            return out;
        snprintf(out, PATH_MAX, "%s/../../daemon/%s", dir, name);
        if (access(out, X_OK) == 0)
            return out;
    }
    bd_die("cannot find %s (set %s)", name, env);
}

const char *bd_hostranged(void)
{
    return find("HOSTRANGED", "hostranged");
}

const char *bd_hostrangectl(void)
{
    return find("HOSTRANGECTL", "hostrangectl");
}

Hostrange__ControlReply *bd_control(const struct bd_daemon *d,
                                    Hostrange__ControlRequest *q)
{
    Hostrange__ControlReply *rep;
    char url[400];
    int sock, max = -1, ms = 60000, n;
    void *msg = NULL;
    uint8_t *buf;
    size_t len;

    q->version = HRP_VERSION;
    hrp_endpoint(url, sizeof url, d->dir, HRP_CONTROL_NAME);
    sock = nn_socket(AF_SP, NN_REQ);
    if (sock < 0)
        bd_die("nn_socket: %s", nn_strerror(nn_errno()));
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms);
    len = hostrange__control_request__get_packed_size(q);
    buf = malloc(len + 1);
    hostrange__control_request__pack(q, buf);
    if (nn_connect(sock, url) < 0 || nn_send(sock, buf, len, 0) < 0 ||
        (n = nn_recv(sock, &msg, NN_MSG, 0)) < 0)
        bd_die("no answer from hostranged at %s: %s", d->dir,
               nn_strerror(nn_errno()));
    rep = hostrange__control_reply__unpack(NULL, (size_t)n, msg);
    nn_freemsg(msg);
    nn_close(sock);
    free(buf);
    if (rep == NULL || rep->error[0] != '\0')
        bd_die("hostranged at %s: %s", d->dir, rep ? rep->error : "bad reply");
    return rep;
}

Hostrange__ControlReply *bd_stats(const struct bd_daemon *d)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__StatsRequest sq = HOSTRANGE__STATS_REQUEST__INIT;

    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_STATS;
    q.stats = &sq;
    return bd_control(d, &q);
}

void bd_daemon_start(struct bd_daemon *d, int with_state,
                     const char *const *extra)
{
    const char *daemon = bd_hostranged();
    char *argv[32], sock[400];
    struct stat st;
    int n = 0;

    bd_tempdir(d->dir, sizeof d->dir, "run");
    d->state[0] = '\0';
    argv[n++] = (char *)daemon;
    argv[n++] = "--quiet";
    argv[n++] = "--runtime-dir";
    argv[n++] = d->dir;
    if (with_state) {
        bd_tempdir(d->state, sizeof d->state, "state");
        argv[n++] = "--state-dir";
        argv[n++] = d->state;
    }
    for (int i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    d->pid = fork();
    if (d->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execv(daemon, argv);
        _exit(127);
    }
    if (d->pid < 0)
        bd_die("fork: %s", strerror(errno));
    snprintf(sock, sizeof sock, "%s/%s", d->dir, HRP_CONTROL_NAME);
    for (int i = 0; stat(sock, &st) != 0; i++) {
        int status;
        if (i == 1000 || waitpid(d->pid, &status, WNOHANG) == d->pid)
            bd_die("%s did not start on %s", daemon, d->dir);
        usleep(10000);
    }
    hostrange__control_reply__free_unpacked(bd_stats(d), NULL);
}

void bd_daemon_stop(struct bd_daemon *d)
{
    int status;

    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        waitpid(d->pid, &status, 0);
        d->pid = 0;
    }
    bd_rmdir(d->dir);
    if (d->state[0] != '\0')
        bd_rmdir(d->state);
}

uint64_t bd_rss(pid_t pid)
{
    unsigned long long size, resident;
    char path[64];
    FILE *f;
    int n;

    snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        bd_die("cannot read %s", path);
    n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    if (n != 2)
        bd_die("cannot read %s", path);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* utime + stime of process pid, in seconds (clock ticks). */
static double stat_cpu(pid_t pid)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL || fgets(buf, sizeof buf, f) == NULL)
        bd_die("cannot read %s", path);
    fclose(f);
    p = strrchr(buf, ')');
    /* After the name: state ppid pgrp session tty tpgid flags minflt
     * cminflt majflt cmajflt utime stime. */
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
               &ut, &st) != 2)
        bd_die("cannot parse %s", path);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double bd_proc_cpu(pid_t pid)
{
    char path[300];
    struct dirent *e;
    double ns = 0;
    DIR *d;

    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    d = opendir(path);
    if (d == NULL)
        bd_die("cannot read %s", path);
    while ((e = readdir(d)) != NULL) {
        unsigned long long run;
        FILE *f;
        int n;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%s/schedstat", (long)pid,
                 e->d_name);
        f = fopen(path, "r");
        if (f == NULL) {
            /* No schedstat in this kernel, or the thread exited. */
            if (errno == ENOENT && access(path, F_OK) != 0 &&
                e->d_name[0] != '\0') {
                char task[300];

                snprintf(task, sizeof task, "/proc/%ld/task/%s", (long)pid,
                         e->d_name);
                if (access(task, F_OK) == 0) {
                    closedir(d);
                    return stat_cpu(pid);
                }
            }
            continue;
        }
        n = fscanf(f, "%llu", &run);
        fclose(f);
        if (n == 1)
            ns += (double)run;
    }
    closedir(d);
    return ns / 1e9;
}

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return *rng;
}

/* The ranges, their median inclusive times, and whether they are leaves. */
static char *const wl_names[11] = {
    "binding.body", "binding.tensor_conversion", "binding.device_conversion",
    "dispatch.call", "operator.call", "cache.key", "cache.lookup",
    "cache.construct", "operator.invoke", "backend.submit", "end_to_end",
};
static const uint64_t wl_median[10] = { 20000, 2000, 1500, 15000, 13000,
                                        500, 300, 40000, 11000, 8000 };
static const int wl_leaf[10] = { 0, 1, 1, 0, 0, 1, 1, 0, 0, 1 };

void bd_workload(struct db_batch *x, size_t n, uint32_t label,
                 uint64_t *rng)
{
    x->b.ranges = (char **)wl_names;
    x->b.n_ranges = 11;
    for (size_t i = 0; i < n; i++) {
        /* cache.construct only now and then, as in cold calls. */
        uint32_t r = (uint32_t)(i % 10);
        uint64_t m = wl_median[r], u = next(rng), v, self;

        if (r == 7 && (u & 63) != 0)
            r = 6, m = wl_median[6];
        /* Around the median (+-50%), with a 1% tail ten times longer. */
        v = m / 2 + (u >> 11) % m;
        if ((u & 0x7f) == 0)
            v *= 10;
        self = wl_leaf[r] ? v : v / 20 + (u >> 40) % (v / 4 + 1);
        db_sample(x, label, r, v, self);
        if (i % 100 == 99)
            db_record(x, label, 50000 + (u >> 20) % 20000);
    }
    /* Records name range 10 (end_to_end). */
    for (size_t i = 0; i < x->nrec; i++)
        x->rec_range[i] = 10;
}

int bd_ingest_connect(const struct bd_daemon *d)
{
    char url[400];
    int sock, max = -1;

    hrp_endpoint(url, sizeof url, d->dir, HRP_INGEST_NAME);
    sock = nn_socket(AF_SP, NN_REQ);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    if (sock < 0 || nn_connect(sock, url) < 0)
        bd_die("cannot connect to %s", url);
    return sock;
}

double bd_send_batch(int sock, const struct db_batch *x)
{
    Hostrange__Ack *ack;
    void *msg = NULL;
    uint8_t *buf;
    size_t len;
    double t0;
    int n;

    buf = db_pack(x, &len);
    t0 = bd_now();
    if (nn_send(sock, buf, len, 0) < 0 ||
        (n = nn_recv(sock, &msg, NN_MSG, 0)) < 0)
        bd_die("cannot send a batch: %s", nn_strerror(nn_errno()));
    t0 = bd_now() - t0;
    ack = hostrange__ack__unpack(NULL, (size_t)n, msg);
    if (ack == NULL || ack->status != HOSTRANGE__ACK__STATUS__OK)
        bd_die("a batch was not taken");
    hostrange__ack__free_unpacked(ack, NULL);
    nn_freemsg(msg);
    free(buf);
    return t0;
}

double bd_run_cpu(char *const *argv, pid_t also, double *wall)
{
    double t0 = bd_now(), c0 = also != 0 ? bd_proc_cpu(also) : 0;
    struct rusage ru;
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("%s %s failed", argv[0], argv[1] != NULL ? argv[1] : "");
    if (wall != NULL)
        *wall = bd_now() - t0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 +
           (also != 0 ? bd_proc_cpu(also) - c0 : 0);
}

void bd_feed_nodes(int sock, const char *prefix, int nodes, int per_batch,
                   int events)
{
    static Hostrange__LabelSet labels[1000];
    static Hostrange__LabelSet *lp[1000];
    static char names[1000][64];
    static char *ranges[1] = { "dispatch.call" };

    if (per_batch < 1 || per_batch > 1000)
        bd_die("bd_feed_nodes: %d nodes a batch (1 to 1000)", per_batch);
    for (int b = 0; b < nodes / per_batch; b++) {
        struct db_batch x;

        db_init(&x, 99, (uint64_t)b + 1);
        for (int l = 0; l < per_batch; l++) {
            hostrange__label_set__init(&labels[l]);
            snprintf(names[l], sizeof names[l], "%s/node[%06d]", prefix,
                     b * per_batch + l);
            labels[l].node_id = names[l];
            labels[l].operator_ = "add";
            labels[l].backend = "cpu";
            labels[l].phase = HRP_PHASE_WARM;
            lp[l] = &labels[l];
            for (int e = 0; e < events; e++) {
                uint64_t in = 1000 + (uint64_t)(e * 37 + l);
                db_sample(&x, (uint32_t)l, 0, in, in / 2);
            }
        }
        x.b.instance = 99;
        x.b.n_labels = (size_t)per_batch;
        x.b.labels = lp;
        x.b.n_ranges = 1;
        x.b.ranges = ranges;
        bd_send_batch(sock, &x);
        db_fini(&x);
    }
}
