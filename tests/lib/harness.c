/* Integration test harness (see harness.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness.h"

const char *harness_program(const char *var)
{
    const char *p = getenv(var);

    if (p == NULL || p[0] == '\0')
        fail_msg("%s is not set (run the tests through make check)", var);
    return p;
}

int harness_exited(int status, int code)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

int harness_valgrind(void)
{
    const char *v = getenv("HOSTRANGE_TEST_VALGRIND");

    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

int harness_short_of_memory(int (*fn)(void *ctx), void *ctx, size_t extra)
{
    const char *pre = getenv("LD_PRELOAD");
    int status;
    pid_t pid;

#if defined(__SANITIZE_ADDRESS__)
    return -1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return -1;
#endif
#endif
    if (harness_valgrind() || (pre != NULL && strstr(pre, "vgpreload")))
        return -1;
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsigned long pages = 0;
        struct rlimit lim;
        FILE *f;

#ifdef __GLIBC__
        /* Memory the process freed but malloc kept would be taken first,
         * within its use at the start: given back, the limit is what it
         * says. */
        malloc_trim(0);
#endif
        f = fopen("/proc/self/statm", "r");
        if (f == NULL || fscanf(f, "%lu", &pages) != 1)
            _exit(127);
        fclose(f);
        lim.rlim_cur = lim.rlim_max =
            (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)extra;
        if (setrlimit(RLIMIT_AS, &lim) != 0)
            _exit(127);
        _exit(fn(ctx) & 0xff);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_not_equal(WEXITSTATUS(status), 127);
    return WEXITSTATUS(status);
}

/* 1 when path is the program named by the environment variable var. */
static int is_program(const char *path, const char *var)
{
    const char *p = getenv(var);

    return p != NULL && strcmp(p, path) == 0;
}

/*
 * Replaces this (forked) process with argv. Under HOSTRANGE_TEST_VALGRIND
 * the daemon and the workload run under valgrind memcheck, through
 * libtool's execute mode so that a libtool wrapper script is resolved to
 * the real program: any memcheck error or definite leak makes the process
 * exit with status 99. Returns only when nothing could be run.
 */
static void exec_program(char *const argv[])
{
    static char *const vg[] = {
        "valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
        "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
        "--track-fds=no",
        /* No gdbserver: its FIFOs in /tmp outlive a program killed with
         * SIGKILL, as the fault tests kill the daemon. */
        "--vgdb=no", NULL,
    };
    char libtool[4096], *args[64];
    const char *top = getenv("top_builddir");
    size_t n = 0;

    if (!harness_valgrind() || (!is_program(argv[0], "HOSTRANGED") &&
                                !is_program(argv[0], "HOSTRANGE_TEST_WORKLOAD"))) {
        execv(argv[0], argv);
        return;
    }
    snprintf(libtool, sizeof libtool, "%s/libtool",
             top != NULL && top[0] != '\0' ? top : ".");
    args[n++] = libtool;
    args[n++] = "--mode=execute";
    for (size_t i = 0; vg[i] != NULL; i++)
        args[n++] = vg[i];
    for (size_t i = 0; argv[i] != NULL && n < 63; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    execv(libtool, args);
}

/* How long a stopping daemon may take (valgrind's leak check at exit takes
 * a while), and how long a starting one may take to answer. */
static int stop_limit_s(void)
{
    return harness_valgrind() ? 120 : 10;
}

static char *start_wait_ms(void)
{
    return harness_valgrind() ? "60000" : "10000";
}

pid_t harness_daemon_spawn(const char *dir)
{
    const char *daemon = harness_program("HOSTRANGED");
    pid_t pid = fork();

    if (pid == 0) {
        char *argv[] = { (char *)daemon, "--quiet", "--runtime-dir",
                         (char *)dir, NULL };
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        exec_program(argv);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

int harness_daemon_start(struct harness_daemon *d)
{
    const char *tmp = getenv("TMPDIR");
    struct harness_run r;

    snprintf(d->dir, sizeof d->dir, "%s/hostrange-test-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(d->dir));
    d->pid = harness_daemon_spawn(d->dir);
    harness_ctl(d->dir, &r, "ping", "--wait", start_wait_ms(), (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostranged did not start on %s: %s", d->dir, r.err);
    harness_run_free(&r);
    return 0;
}

/* Waits up to limit_s seconds for pid; kills it after. Returns 1 when it
 * had to be killed. */
static int wait_limited(pid_t pid, int *status, int limit_s)
{
    for (int i = 0; i < limit_s * 100; i++) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, status, 0);
    return 1;
}

void harness_daemon_start_args(struct harness_daemon *d,
                               const char *const *extra)
{
    const char *daemon = harness_program("HOSTRANGED");
    char *argv[32];
    struct harness_run r;
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)daemon;
    argv[n++] = "--quiet";
    argv[n++] = "--runtime-dir";
    argv[n++] = d->dir;
    for (int i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        exec_program(argv);
        _exit(127);
    }
    assert_true(pid > 0);
    d->pid = pid;
    harness_ctl(d->dir, &r, "ping", "--wait", start_wait_ms(), (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostranged did not start on %s: %s", d->dir, r.err);
    harness_run_free(&r);
}

int harness_daemon_signal(struct harness_daemon *d, int sig)
{
    int status = 0;

    if (d->pid > 0) {
        kill(d->pid, sig);
        wait_limited(d->pid, &status, stop_limit_s());
        d->pid = 0;
    }
    return status;
}

int harness_setup_daemon(void **state)
{
    struct harness_daemon *d = calloc(1, sizeof *d);

    assert_non_null(d);
    harness_daemon_start(d);
    *state = d;
    return 0;
}

int harness_teardown_daemon(void **state)
{
    harness_daemon_stop(*state);
    free(*state);
    return 0;
}

void harness_daemon_stop(struct harness_daemon *d)
{
    char cmd[512];
    int status = 0, killed = 0;
    pid_t pid = d->pid;

    if (pid > 0) {
        kill(pid, SIGTERM);
        killed = wait_limited(pid, &status, stop_limit_s());
        d->pid = 0;
    }
    if (d->dir[0] != '\0') {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", d->dir);
        d->dir[0] = '\0';
    }
    /* A clean stop: SIGTERM ends the daemon with status 0 (under valgrind,
     * 99 is a memory error or a definite leak). */
    if (pid > 0 && (killed || !harness_exited(status, 0)))
        fail_msg("hostranged (pid %ld) did not stop cleanly on SIGTERM: %s "
                 "%d", (long)pid,
                 killed ? "killed after waiting, status"
                        : WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status)
                                   : WIFSIGNALED(status) ? WTERMSIG(status)
                                                         : status);
}

/* Appends what is readable on fd to *buf. Returns 0 at end of file. */
static int slurp(int fd, char **buf, size_t *len)
{
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);

    if (n <= 0)
        return n < 0 && errno == EINTR;
    *buf = realloc(*buf, *len + (size_t)n + 1);
    assert_non_null(*buf);
    memcpy(*buf + *len, chunk, (size_t)n);
    *len += (size_t)n;
    (*buf)[*len] = '\0';
    return 1;
}

void harness_run(char *const argv[], const char *dir, int limit_s,
                 struct harness_run *r)
{
    int out[2], err[2];
    size_t olen = 0, elen = 0;
    struct pollfd fds[2];
    int open_fds = 2;
    uint64_t deadline = (uint64_t)time(NULL) + (uint64_t)limit_s;
    pid_t pid;

    memset(r, 0, sizeof *r);
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    assert_true(pipe(out) == 0 && pipe(err) == 0);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        if (dir != NULL)
            setenv("HOSTRANGE_RUNTIME_DIR", dir, 1);
        exec_program(argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    assert_true(pid > 0);
    close(out[1]);
    close(err[1]);
    fds[0].fd = out[0];
    fds[1].fd = err[0];
    fds[0].events = fds[1].events = POLLIN;
    while (open_fds > 0 && (uint64_t)time(NULL) <= deadline) {
        if (poll(fds, 2, 100) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP))) {
                if (!slurp(fds[i].fd, i == 0 ? &r->out : &r->err,
                           i == 0 ? &olen : &elen)) {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    open_fds--;
                }
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    }
    if (wait_limited(pid, &r->status, open_fds > 0 ? 0 : limit_s))
        fail_msg("%s ran past %d s and was killed", argv[0], limit_s);
}

void harness_run_free(struct harness_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

void harness_ctl(const char *dir, struct harness_run *r, ...)
{
    char *argv[32];
    int n = 0;
    va_list ap;

    argv[n++] = (char *)harness_program("HOSTRANGECTL");
    argv[n++] = "--runtime-dir";
    argv[n++] = (char *)dir;
    va_start(ap, r);
    while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    harness_run(argv, NULL, 120, r);
}

pid_t harness_spawn(char *const argv[], const char *dir, const char *env,
                    const char *out_path)
{
    pid_t pid = fork();

    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (dir != NULL)
            setenv("HOSTRANGE_RUNTIME_DIR", dir, 1);
        if (env != NULL)
            putenv((char *)env);
        exec_program(argv);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

int harness_wait(pid_t pid, int limit_s)
{
    int status;

    if (wait_limited(pid, &status, limit_s))
        fail_msg("pid %ld ran past %d s and was killed", (long)pid, limit_s);
    return status;
}

/* --- additions for the reliability tests ------------------------------- */

const char *harness_tool(const char *name, char *buf, size_t len)
{
    const char *path = getenv("PATH");
    char dirs[4096], *dir, *save = NULL;

    snprintf(dirs, sizeof dirs, "%s",
             path != NULL && path[0] != '\0' ? path : "/usr/bin:/bin");
    for (dir = strtok_r(dirs, ":", &save); dir != NULL;
         dir = strtok_r(NULL, ":", &save)) {
        snprintf(buf, len, "%s/%s", dir[0] != '\0' ? dir : ".", name);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return NULL;
}

void harness_mkdtemp(char *buf, size_t len, const char *tag)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(buf, len, "%s/hostrange-%s-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", tag);
    if (mkdtemp(buf) == NULL)
        fail_msg("cannot make a directory %s: %s", buf, strerror(errno));
}

void harness_rm_rf(const char *path)
{
    char cmd[4200];

    if (path == NULL || path[0] == '\0')
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", path);
}

char *harness_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;

    if (f == NULL)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    for (;;) {
        char chunk[65536];
        size_t n = fread(chunk, 1, sizeof chunk, f);
        buf = realloc(buf, len + n + 1);
        assert_non_null(buf);
        memcpy(buf + len, chunk, n);
        len += n;
        buf[len] = '\0';
        if (n < sizeof chunk)
            break;
    }
    fclose(f);
    return buf;
}

char *harness_wait_lines(const char *path, const char *tag, int n,
                         int limit_s)
{
    for (int i = 0; i < limit_s * 100; i++) {
        char *text;
        int seen = 0;

        if (access(path, R_OK) != 0) {
            usleep(10000);
            continue;
        }
        text = harness_read_file(path);
        for (const char *p = text; (p = strstr(p, tag)) != NULL; p++)
            seen += p == text || p[-1] == '\n';
        if (seen >= n)
            return text;
        free(text);
        usleep(10000);
    }
    fail_msg("%s: fewer than %d '%s' lines after %d s", path, n, tag,
             limit_s);
    return NULL;
}

const char *harness_recorder(void)
{
    static char path[4096];
    const char *top = getenv("top_builddir");

    snprintf(path, sizeof path, "%s/tests/helpers/recorder",
             top != NULL ? top : ".");
    return path;
}

unsigned long long harness_last_field(const char *text, const char *tag,
                                      const char *key)
{
    const char *line = NULL, *p;
    char pat[64];

    for (p = text; (p = strstr(p, tag)) != NULL; p++) {
        if (p == text || p[-1] == '\n')
            line = p;
    }
    if (line == NULL)
        fail_msg("no '%s' line in:\n%s", tag, text);
    snprintf(pat, sizeof pat, " %s=", key);
    p = strstr(line, pat);
    if (p == NULL || (strchr(line, '\n') != NULL && p > strchr(line, '\n')))
        fail_msg("no %s on the last '%s' line of:\n%s", key, tag, text);
    return strtoull(p + strlen(pat), NULL, 10);
}

unsigned long long harness_client_events(const char *dir, pid_t pid)
{
    char *st = harness_stats(dir), key[64];
    int ci = harness_stat_client(st, (long)pid);
    unsigned long long v = 0;

    if (ci != 0) {
        snprintf(key, sizeof key, "client.%d.events", ci);
        v = harness_stat(st, key);
    }
    free(st);
    return v;
}

void harness_wait_events(const char *dir, pid_t pid)
{
    for (int i = 0; harness_client_events(dir, pid) == 0; i++) {
        if (i == 6000)
            fail_msg("no events from pid %ld", (long)pid);
        usleep(10000);
    }
}

void harness_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

void harness_daemon_start_opts(struct harness_daemon *d,
                               const struct harness_daemon_opts *o)
{
    const char *daemon = harness_program("HOSTRANGED");
    char *argv[40];
    struct harness_run r;
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)daemon;
    if (o->log_path == NULL)
        argv[n++] = "--quiet";
    argv[n++] = "--runtime-dir";
    argv[n++] = d->dir;
    for (int i = 0; o->extra != NULL && o->extra[i] != NULL && n < 39; i++)
        argv[n++] = (char *)o->extra[i];
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (o->log_path != NULL) {
            int fd = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd < 0)
                _exit(126);
            dup2(fd, 2);
            close(fd);
        }
        if (o->fsize_limit != 0) {
            struct rlimit rl = { o->fsize_limit, o->fsize_limit };
            /* A write past the limit then fails with EFBIG instead of
             * killing the process. */
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
                _exit(126);
        }
        exec_program(argv);
        _exit(127);
    }
    assert_true(pid > 0);
    d->pid = pid;
    harness_ctl(d->dir, &r, "ping", "--wait", start_wait_ms(), (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostranged did not start on %s: %s", d->dir, r.err);
    harness_run_free(&r);
}

char *harness_stats(const char *dir)
{
    struct harness_run r;
    char *text;

    /* A long wait for the answer: a busy daemon (under valgrind, or with
     * clients keeping it busy) may take seconds; this guards a hang. */
    harness_ctl(dir, &r, "-t", "120000", "stats", (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostrangectl stats failed: %s", r.err);
    text = r.out;
    r.out = NULL;
    harness_run_free(&r);
    return text;
}

/* The value text of `key` in stats text, or NULL. */
static const char *stat_find(const char *text, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    const char *p = text;

    while (p != NULL && *p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t n = eol != NULL ? (size_t)(eol - p) : strlen(p);

        if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
            *len = n - klen - 1;
            return p + klen + 1;
        }
        p = eol != NULL ? eol + 1 : NULL;
    }
    return NULL;
}

unsigned long long harness_stat(const char *text, const char *key)
{
    size_t len;
    const char *v = stat_find(text, key, &len);
    char *end;
    unsigned long long x;

    if (v == NULL)
        fail_msg("no %s in the stats:\n%s", key, text);
    x = strtoull(v, &end, 10);
    if (end != v + len)
        fail_msg("%s is not a whole number in the stats: %.*s", key,
                 (int)len, v);
    return x;
}

const char *harness_stat_str(const char *text, const char *key, char *buf,
                             size_t buflen)
{
    size_t len;
    const char *v = stat_find(text, key, &len);

    if (v == NULL)
        fail_msg("no %s in the stats:\n%s", key, text);
    snprintf(buf, buflen, "%.*s", (int)len, v);
    return buf;
}

int harness_stat_client(const char *text, long pid)
{
    char key[64];
    size_t len;

    for (int i = 1;; i++) {
        snprintf(key, sizeof key, "client.%d.pid", i);
        if (stat_find(text, key, &len) == NULL)
            return 0;
        if ((long)harness_stat(text, key) == pid)
            return i;
    }
}

unsigned long long harness_stat_rejected(const char *text)
{
    unsigned long long sum = 0;
    const char *p = text;

    while (p != NULL && *p != '\0') {
        if (strncmp(p, "rejected.", 9) == 0) {
            const char *sp = strchr(p, ' ');
            if (sp != NULL)
                sum += strtoull(sp + 1, NULL, 10);
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return sum;
}

char *harness_dump(const char *dir, const char *fields)
{
    struct harness_run r;
    char *text;

    if (fields != NULL)
        harness_ctl(dir, &r, "-t", "120000", "dump", "--fields", fields,
                    (char *)NULL);
    else
        harness_ctl(dir, &r, "-t", "120000", "dump", (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostrangectl dump failed: %s", r.err);
    text = r.out;
    r.out = NULL;
    harness_run_free(&r);
    return text;
}

int harness_counters(const char *text, const char *tag,
                     struct harness_counters *c)
{
    const char *p = text, *last = NULL;
    char fmt[96];

    /* The last line that carries the tag. */
    while ((p = strstr(p, tag)) != NULL) {
        if (p == text || p[-1] == '\n')
            last = p;
        p += strlen(tag);
    }
    memset(c, 0, sizeof *c);
    if (last == NULL)
        return -1;
    snprintf(fmt, sizeof fmt, "%s samples=%%llu delivered=%%llu lost=%%llu",
             tag);
    if (sscanf(last, fmt, &c->samples, &c->delivered, &c->lost) != 3)
        return -1;
    p = strstr(last, " spooled=");
    if (p != NULL && (strchr(last, '\n') == NULL || p < strchr(last, '\n')))
        c->spooled = strtoull(p + strlen(" spooled="), NULL, 10);
    return 0;
}
