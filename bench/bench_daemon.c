/*
 * hostrange-bench and its daemon: when no hostranged answers, the benchmark
 * runs itself again under `hostrangectl record`, which starts a private one
 * and prints its report. hostrangectl is found as it finds hostranged:
 * $HOSTRANGECTL, else beside this program (or in ../ctl, as in the build
 * tree), else on PATH.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostrange.h"
#include "bench/bench.h"
#include "proto/protocol.h"

#define PRIVATE_ENV "HOSTRANGE_BENCH_PRIVATE"

static int executable(const char *path)
{
    return access(path, X_OK) == 0;
}

/* Writes the path of hostrangectl into buf; returns 0, or -1 when none. */
static int ctl_path(const char *self, char *buf, size_t len)
{
    static const char *const beside[] = {
        "hostrangectl", "../ctl/hostrangectl",
        "../../ctl/hostrangectl",  /* from libtool's .libs */
    };
    const char *env = getenv("HOSTRANGECTL"), *path = getenv("PATH");
    char dir[PATH_MAX];
    char *slash;

    if (env != NULL && env[0] != '\0') {
        snprintf(buf, len, "%s", env);
        return 0;
    }
    snprintf(dir, sizeof dir, "%s", self);
    slash = strrchr(dir, '/');
    if (slash != NULL) {
        *slash = '\0';
        for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
            if ((size_t)snprintf(buf, len, "%s/%s", dir, beside[i]) < len &&
                executable(buf))
                return 0;
        }
    }
    while (path != NULL && *path != '\0') {
        size_t n = strcspn(path, ":");

        snprintf(buf, len, "%.*s/hostrangectl", (int)n,
                 n > 0 ? path : ".");
        if (executable(buf))
            return 0;
        path += n + (path[n] == ':');
    }
    return -1;
}

/* 1 when `hostrangectl ping` gets an answer from the client's daemon. */
static int daemon_answers(const char *ctl)
{
    pid_t pid = fork();
    int status;

    if (pid < 0)
        return 0;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execl(ctl, ctl, "--timeout", "2000", "ping", (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return 0;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The path of this program: /proc/self/exe, else argv0. */
static void self_path(const char *argv0, char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);

    if (n <= 0)
        snprintf(buf, len, "%s", argv0);
    else
        buf[n] = '\0';
}

int bench_daemon_reset_calibration(const char *label)
{
    char self[PATH_MAX], ctl[PATH_MAX], pattern[1024];
    size_t k = 0;
    pid_t pid;
    int status;

    self_path(program_invocation_name, self, sizeof self);
    if (ctl_path(self, ctl, sizeof ctl) != 0) {
        fprintf(stderr, "hostrange-bench: no hostrangectl to reset the "
                "previous calibration with (set HOSTRANGECTL)\n");
        return -1;
    }
    /* The label as a shell pattern that matches only itself. */
    for (const char *p = label; *p != '\0' && k + 2 < sizeof pattern; p++) {
        if (strchr("*?[]\\", *p) != NULL)
            pattern[k++] = '\\';
        pattern[k++] = *p;
    }
    pattern[k] = '\0';
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hostrange-bench: cannot fork: %s\n",
                strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);

        if (null >= 0)
            dup2(null, 1);
        execl(ctl, ctl, "reset", "--node", HRP_CALIB_NODE, "--operator",
              pattern, (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "hostrange-bench: %s reset of the previous "
                "calibration failed\n", ctl);
        return -1;
    }
    return 0;
}

int bench_daemon_ensure(int argc, char **argv, const char *output)
{
    char self[PATH_MAX], ctl[PATH_MAX];
    char **args;
    int k = 0;

    if (!hr_compiled() || !hr_enabled())
        return 0;
    self_path(argv[0], self, sizeof self);
    if (ctl_path(self, ctl, sizeof ctl) != 0) {
        if (getenv(PRIVATE_ENV) != NULL)
            return 0;
        fprintf(stderr, "hostrange-bench: no hostrangectl to reach or start "
                "a daemon (set HOSTRANGECTL, or HOSTRANGE=0 to run "
                "without reporting)\n");
        return -1;
    }
    if (daemon_answers(ctl))
        return 0;
    if (getenv(PRIVATE_ENV) != NULL) {
        fprintf(stderr, "hostrange-bench: the private daemon started by %s "
                "does not answer\n", ctl);
        return -1;
    }
    args = calloc((size_t)argc + 6, sizeof *args);
    if (args == NULL) {
        fprintf(stderr, "hostrange-bench: out of memory\n");
        return -1;
    }
    args[k++] = ctl;
    args[k++] = "record";
    if (output != NULL) {
        args[k++] = "-o";
        args[k++] = (char *)output;
    }
    args[k++] = "--";
    args[k++] = self;
    for (int i = 1; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    setenv(PRIVATE_ENV, "1", 1);
    fflush(NULL);
    execv(ctl, args);
    fprintf(stderr, "hostrange-bench: cannot run %s: %s\n", ctl,
            strerror(errno));
    free(args);
    return -1;
}
