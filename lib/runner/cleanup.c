/* What record, record --rounds, ab and bisect leave behind: nothing (see
 * cleanup.h). */
#include "config.h"

#include "lib/runner/cleanup.h"
#include "proto/protocol.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The signals that stop a command, caught here. */
static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
#define NCAUGHT (sizeof caught / sizeof caught[0])

_Static_assert(sizeof(pid_t) <= sizeof(sig_atomic_t),
               "the handler reads the COMMAND child's pid in one load");

/* Written by the handler: the first signal caught, how many were, and
 * (written by the thread, read by the handler) the COMMAND child that
 * runs, 0 when none does, and whether it leads a group of its own. */
static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_signals;
static volatile sig_atomic_t g_command;
static volatile sig_atomic_t g_command_group;

/* Set up once, in the process that called hrx_cleanup_init. */
static int g_ready;
static pid_t g_owner;
static sigset_t g_set;
static sigset_t g_old_mask;

/* The registry. */
struct child {
    pid_t pid;
    enum hrx_child kind;
    int group; /* it leads a process group of its own */
};

static struct child g_children[HRX_CLEANUP_MAX];
static size_t g_nchildren;
static char g_dirs[HRX_CLEANUP_MAX][PATH_MAX];
static size_t g_ndirs;

/* Notes the signal and forwards it to the COMMAND child, if one runs:
 * the first as it came (unless the terminal sent it to the group that
 * child shares), a later one as SIGKILL. Only async-signal-safe calls. */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    pid_t cmd = (pid_t)g_command;
    pid_t to = g_command_group ? -cmd : cmd;

    (void)uctx;
    if (g_signal == 0)
        g_signal = sig;
    g_signals++;
    if (cmd > 0) {
        if (g_signals > 1)
            kill(to, SIGKILL);
        else if (g_command_group || info == NULL ||
                 info->si_code != SI_KERNEL)
            kill(to, sig);
    }
    errno = saved;
}

int hrx_cleanup_init(void)
{
    struct sigaction sa, ign;

    if (g_ready)
        return 0;
    sigemptyset(&g_set);
    for (size_t i = 0; i < NCAUGHT; i++)
        sigaddset(&g_set, caught[i]);
    if (sigprocmask(SIG_BLOCK, &g_set, &g_old_mask) != 0)
        return -errno;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sa.sa_mask = g_set;
    for (size_t i = 0; i < NCAUGHT; i++) {
        if (sigaction(caught[i], &sa, NULL) != 0)
            return -errno;
    }
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGQUIT, &ign, NULL);
    if (atexit(hrx_cleanup_all) != 0)
        return -ENOMEM;
    g_owner = getpid();
    g_ready = 1;
    return 0;
}

int hrx_cleanup_stopped(void)
{
    sigset_t old;

    if (!g_ready)
        return 0;
    /* A pending signal is delivered before sigprocmask returns. */
    sigprocmask(SIG_UNBLOCK, &g_set, &old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return (int)g_signal;
}

const char *hrx_cleanup_signame(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case SIGPIPE:
        return "SIGPIPE";
    default:
        return "a signal";
    }
}

/* hrx_cleanup_tempdir and hrx_cleanup_rundir: the directory made in
 * $TMPDIR, or in /tmp where $TMPDIR is unset or empty, or (sockets set)
 * where the path it would have there is too long for a runtime
 * directory's sockets. */
static int tempdir(const char *kind, int sockets, char *dir, size_t len,
                   const char **in)
{
    const char *tmpdir = getenv("TMPDIR");
    int rc = hrx_cleanup_init();

    *in = NULL;
    if (rc != 0)
        return rc;
    if (g_ndirs == HRX_CLEANUP_MAX)
        return -EMFILE;
    if (len > PATH_MAX)
        return -ENAMETOOLONG;
    if (tmpdir == NULL || tmpdir[0] == '\0' ||
        (sockets && strlen(tmpdir) + sizeof "/hostrange--XXXXXX" - 1 +
                            strlen(kind) > hrp_runtime_dir_max()))
        tmpdir = "/tmp";
    /* The signals are blocked: none ends the command between the two. */
    if ((size_t)snprintf(dir, len, "%s/hostrange-%s-XXXXXX", tmpdir, kind) >=
        len) {
        *in = tmpdir;
        return -ENAMETOOLONG;
    }
    if (mkdtemp(dir) == NULL) {
        *in = tmpdir;
        return -errno;
    }
    snprintf(g_dirs[g_ndirs++], PATH_MAX, "%s", dir);
    return 0;
}

int hrx_cleanup_tempdir(const char *kind, char *dir, size_t len,
                        const char **in)
{
    return tempdir(kind, 0, dir, len, in);
}

int hrx_cleanup_rundir(const char *kind, char *dir, size_t len,
                       const char **in)
{
    return tempdir(kind, 1, dir, len, in);
}

static int remove_one(const char *path, const struct stat *st, int type,
                      struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

/* Removes dir and all it holds, following no link and staying on its
 * file system. */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void hrx_cleanup_rmdir(const char *dir)
{
    for (size_t i = 0; i < g_ndirs; i++) {
        if (strcmp(g_dirs[i], dir) != 0)
            continue;
        remove_tree(g_dirs[i]);
        memmove(g_dirs[i], g_dirs[i + 1],
                (g_ndirs - i - 1) * sizeof g_dirs[0]);
        g_ndirs--;
        return;
    }
}

static struct child *find_child(pid_t pid)
{
    for (size_t i = 0; i < g_nchildren; i++) {
        if (g_children[i].pid == pid)
            return &g_children[i];
    }
    return NULL;
}

static void forget_child(pid_t pid)
{
    struct child *c = find_child(pid);

    if (c == NULL)
        return;
    if (c->kind == HRX_CHILD_COMMAND)
        g_command = 0;
    *c = g_children[--g_nchildren];
}

/* Whether this process's group is the foreground group of a terminal
 * that its standard input, output or error is. */
static int terminal_foreground(void)
{
    pid_t pg = getpgrp();

    for (int fd = 0; fd <= 2; fd++) {
        if (isatty(fd) && tcgetpgrp(fd) == pg)
            return 1;
    }
    return 0;
}

/* A new child: its group, its signals, an empty registry. */
static void child_setup(enum hrx_child kind, int group)
{
    struct sigaction dfl;
    sigset_t mask = g_old_mask;

    g_nchildren = 0;
    g_ndirs = 0;
    g_command = 0;
    g_ready = 0;
    if (group)
        setpgid(0, 0);
    /* A daemon does not outlive the command, even one killed by
     * SIGKILL; one whose parent is gone already stops now. */
    if (kind == HRX_CHILD_DAEMON &&
        (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != g_owner))
        _exit(1);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (size_t i = 0; i < NCAUGHT; i++) {
        sigaction(caught[i], &dfl, NULL);
        sigdelset(&mask, caught[i]);
    }
    sigaction(SIGQUIT, &dfl, NULL);
    sigprocmask(SIG_SETMASK, &mask, NULL);
}

pid_t hrx_cleanup_fork(enum hrx_child kind)
{
    int group, rc = hrx_cleanup_init();
    pid_t pid;

    if (rc != 0) {
        errno = -rc;
        return -1;
    }
    if (g_nchildren == HRX_CLEANUP_MAX) {
        errno = EMFILE;
        return -1;
    }
    group = kind != HRX_CHILD_COMMAND || !terminal_foreground();
    /* The signals are blocked: the child is registered before any
     * handler can run, and runs none of its own. */
    pid = fork();
    if (pid == 0) {
        child_setup(kind, group);
        return 0;
    }
    if (pid < 0)
        return -1;
    /* Here too, so that the group exists before a signal is forwarded
     * to it, whichever of the two runs first. */
    if (group)
        setpgid(pid, pid);
    g_children[g_nchildren].pid = pid;
    g_children[g_nchildren].kind = kind;
    g_children[g_nchildren].group = group;
    g_nchildren++;
    if (kind == HRX_CHILD_COMMAND) {
        g_command_group = group;
        g_command = pid;
    }
    return pid;
}

/* Reaps pid. Returns 0 with its status in *status, or a negative errno. */
static int reap(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR)
            return -errno;
    }
    return 0;
}

int hrx_cleanup_wait(pid_t pid, int *status)
{
    struct child *c = find_child(pid);
    siginfo_t si;
    sigset_t old;
    int rc;

    if (c == NULL)
        return -ECHILD;
    if (c->kind == HRX_CHILD_COMMAND) {
        /* Signals are let in until it has ended; it is reaped only once
         * they are blocked again, so that none is forwarded to a pid
         * used again by then. */
        sigprocmask(SIG_UNBLOCK, &g_set, &old);
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 &&
               errno == EINTR)
            ;
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    rc = reap(pid, status);
    forget_child(pid);
    return rc;
}

void hrx_cleanup_stop(pid_t pid)
{
    int status;

    if (find_child(pid) == NULL)
        return;
    kill(pid, SIGTERM);
    reap(pid, &status);
    forget_child(pid);
}

void hrx_cleanup_all(void)
{
    int status;

    if (!g_ready || getpid() != g_owner)
        return;
    g_command = 0;
    while (g_nchildren > 0) {
        const struct child *c = &g_children[g_nchildren - 1];

        if (c->kind == HRX_CHILD_COMMAND)
            kill(c->group ? -c->pid : c->pid, SIGKILL);
        else
            kill(c->pid, SIGTERM);
        reap(c->pid, &status);
        g_nchildren--;
    }
    while (g_ndirs > 0)
        remove_tree(g_dirs[--g_ndirs]);
}
