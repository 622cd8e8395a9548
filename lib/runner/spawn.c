/* The processes of the commands that run others (see spawn.h). */
#include "config.h"

#include "lib/runner/spawn.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct hrx_spawn hrx_spawn_init(enum hrx_child kind, char *const *argv)
{
    struct hrx_spawn s;

    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.argv = argv;
    s.fd[0] = s.fd[1] = s.fd[2] = HRX_FD_KEEP;
    return s;
}

/* In the child: sends errno back through fd and ends. */
static void child_fail(int fd)
{
    int err = errno;

    while (write(fd, &err, sizeof err) < 0 && errno == EINTR)
        ;
    _exit(127);
}

/* In the child: its streams, directory and environment, then the
 * program. Returns only through child_fail. */
static void child_run(const struct hrx_spawn *s, int back)
{
    int null = -1;

    for (int i = 0; i < 3; i++) {
        int from = s->fd[i];

        if (i == 1 && s->out != NULL) {
            from = open(s->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                        0600);
            if (from < 0)
                child_fail(back);
        } else if (from == HRX_FD_NULL) {
            if (null < 0 && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
                child_fail(back);
            from = null;
        }
        if (from != HRX_FD_KEEP && from != i && dup2(from, i) < 0)
            child_fail(back);
    }
    if (s->dir != NULL && chdir(s->dir) != 0)
        child_fail(back);
    for (size_t i = 0; i + 1 < 2 * HRX_SPAWN_ENV_MAX && s->env[i] != NULL;
         i += 2) {
        if (setenv(s->env[i], s->env[i + 1], 1) != 0)
            child_fail(back);
    }
    if (s->path != NULL)
        execv(s->path, s->argv);
    else
        execvp(s->argv[0], s->argv);
    child_fail(back);
}

int hrx_spawn(const struct hrx_spawn *s, pid_t *pid)
{
    int back[2], err = 0, status;
    ssize_t got;
    pid_t p;

    if (pipe2(back, O_CLOEXEC) != 0)
        return -errno;
    p = hrx_cleanup_fork(s->kind);
    if (p == 0) {
        close(back[0]);
        child_run(s, back[1]);
    }
    err = errno;
    close(back[1]);
    if (p < 0) {
        close(back[0]);
        return -err;
    }
    /* The pipe closes on exec: nothing read is a program that runs. */
    while ((got = read(back[0], &err, sizeof err)) < 0 && errno == EINTR)
        ;
    close(back[0]);
    if (got == (ssize_t)sizeof err) {
        hrx_cleanup_wait(p, &status);
        return err > 0 ? -err : -ECHILD;
    }
    *pid = p;
    return 0;
}

int hrx_exit_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int hrx_spawn_wait(const struct hrx_spawn *s)
{
    pid_t pid;
    int rc, status;

    if ((rc = hrx_spawn(s, &pid)) != 0)
        return rc;
    if ((rc = hrx_cleanup_wait(pid, &status)) != 0)
        return rc;
    return hrx_exit_status(status);
}

int hrx_daemon_start(const char *daemon, const char *dir, pid_t *pid)
{
    char *argv[] = { (char *)daemon, "--quiet", "--runtime-dir", (char *)dir,
                     NULL };
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_DAEMON, argv);

    return hrx_spawn(&s, pid);
}

void hrx_daemon_path(const char *named, const char *bindir, char *buf,
                     size_t len)
{
    if (named != NULL && named[0] != '\0') {
        snprintf(buf, len, "%s", named);
        return;
    }
    if (bindir != NULL) {
        snprintf(buf, len, "%s/hostranged", bindir);
        if (access(buf, X_OK) == 0)
            return;
        snprintf(buf, len, "%s/../daemon/hostranged", bindir);
        if (access(buf, X_OK) == 0)
            return;
    }
    snprintf(buf, len, "hostranged");
}

int hrx_nvtx_tool_path(const char *bindir, const char *libdir, char *buf,
                       size_t len)
{
    if (bindir != NULL) {
        snprintf(buf, len, "%s/../nvtx/.libs/libhostrange-nvtx.so", bindir);
        if (access(buf, R_OK) == 0)
            return 0;
    }
    snprintf(buf, len, "%s/libhostrange-nvtx.so", libdir);
    return access(buf, R_OK) == 0 ? 0 : -ENOENT;
}

int hrx_run_self(const char *self, char **args, int quiet, const char *out)
{
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_HELPER, args);

    s.path = self;
    s.fd[1] = HRX_FD_NULL;
    s.out = out;
    if (quiet)
        s.fd[2] = HRX_FD_NULL;
    return hrx_spawn_wait(&s);
}

int hrx_merge_rounds(const char *self, const char *out, unsigned format,
                     const struct hrr_meta *meta, char **in, size_t nin)
{
    size_t nmeta = meta != NULL ? meta->n : 0;
    char **args = calloc(2 * nmeta + nin + 8, sizeof *args);
    char **kv = calloc(nmeta + 1, sizeof *kv);
    size_t n = 0;
    int rc = -ENOMEM;

    if (args == NULL || kv == NULL)
        goto out;
    args[n++] = "hostrangectl";
    args[n++] = "merge";
    args[n++] = "-o";
    args[n++] = (char *)out;
    if (format != 1)
        args[n++] = "--unsorted";
    for (size_t i = 0; i < nmeta; i++) {
        if (asprintf(&kv[i], "%s=%s", hrr_meta_key(meta, i),
                     hrr_meta_value(meta, i)) < 0) {
            kv[i] = NULL;
            goto out;
        }
        args[n++] = "--meta";
        args[n++] = kv[i];
    }
    args[n++] = "--";
    for (size_t i = 0; i < nin; i++)
        args[n++] = in[i];
    rc = hrx_run_self(self, args, 0, NULL);
out:
    for (size_t i = 0; kv != NULL && i < nmeta; i++)
        free(kv[i]);
    free(kv);
    free(args);
    return rc;
}

int hrx_git_plain(char **args, char *out, size_t len)
{
    int fd[2], status;
    size_t got = 0;
    pid_t pid;

    if (pipe2(fd, O_CLOEXEC) != 0)
        return -errno;
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        dup2(fd[1], STDOUT_FILENO);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            dup2(null, STDIN_FILENO);
        }
        execvp("git", args);
        _exit(127);
    }
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        return -errno;
    }
    for (;;) {
        char tmp[256];
        ssize_t r = read(fd[0], tmp, sizeof tmp);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r && got + 1 < len; i++)
            out[got++] = tmp[i];
    }
    close(fd[0]);
    if (len > 0)
        out[got] = '\0';
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -errno;
    }
    return hrx_exit_status(status);
}

int hrx_git(char **args, char **out, int quiet)
{
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_HELPER, args);
    int fd[2] = { -1, -1 }, status, rc;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    pid_t pid;

    if (out != NULL && pipe2(fd, O_CLOEXEC) != 0)
        return -errno;
    s.fd[0] = HRX_FD_NULL;
    s.fd[1] = out != NULL ? fd[1] : HRX_FD_NULL;
    if (quiet)
        s.fd[2] = HRX_FD_NULL;
    rc = hrx_spawn(&s, &pid);
    if (out != NULL)
        close(fd[1]);
    if (rc != 0) {
        if (out != NULL)
            close(fd[0]);
        return rc;
    }
    while (out != NULL) {
        ssize_t got;

        if (hru_grow(&buf, &cap, len + 4096 + 1, 1, 8192) != 0)
            break;
        got = read(fd[0], buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    if (out != NULL)
        close(fd[0]);
    if ((rc = hrx_cleanup_wait(pid, &status)) != 0) {
        free(buf);
        return rc;
    }
    if (out != NULL) {
        if (buf == NULL && (buf = malloc(1)) == NULL)
            return -ENOMEM;
        buf[len] = '\0';
        *out = buf;
    }
    return hrx_exit_status(status);
}
