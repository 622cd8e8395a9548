/* Integration test harness (see harness.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/harness.h"

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

pid_t harness_daemon_spawn(const char *dir)
{
    const char *daemon = harness_program("HOSTRANGED");
    pid_t pid = fork();

    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl(daemon, daemon, "--quiet", "--runtime-dir", dir, (char *)NULL);
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
    harness_ctl(d->dir, &r, "ping", "--wait", "10000", (char *)NULL);
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
        execv(daemon, argv);
        _exit(127);
    }
    assert_true(pid > 0);
    d->pid = pid;
    harness_ctl(d->dir, &r, "ping", "--wait", "10000", (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostranged did not start on %s: %s", d->dir, r.err);
    harness_run_free(&r);
}

int harness_daemon_signal(struct harness_daemon *d, int sig)
{
    int status = 0;

    if (d->pid > 0) {
        kill(d->pid, sig);
        wait_limited(d->pid, &status, 10);
        d->pid = 0;
    }
    return status;
}

void harness_daemon_stop(struct harness_daemon *d)
{
    char cmd[512];
    int status;

    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        wait_limited(d->pid, &status, 10);
        d->pid = 0;
    }
    if (d->dir[0] != '\0') {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", d->dir);
        d->dir[0] = '\0';
    }
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
        execv(argv[0], argv);
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
        execv(argv[0], argv);
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
