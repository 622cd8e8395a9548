/*
 * What the commands that start processes and make directories (record,
 * record --rounds, ab, bisect) leave behind: nothing, whatever stops them. One
 * registry per process holds the children a command started (its private
 * daemons, the command it runs, the helpers it runs as processes of
 * their own) and the temporary directories it made; every way out (a
 * return, exit(), SIGINT, SIGTERM, SIGHUP, SIGPIPE) goes through
 * hrx_cleanup_all, which stops the children and removes the
 * directories.
 *
 * Signals. hrx_cleanup_init catches the four signals and keeps them
 * blocked in the calling thread (and so in the threads it starts later),
 * so that no socket exchange or file write of the command is cut short:
 * they are let in only while a COMMAND child is waited for
 * (hrx_cleanup_wait) and when the command asks whether it was stopped
 * (hrx_cleanup_stopped). The handler notes the first signal and
 * forwards each one to the running COMMAND child (its process group when
 * it has one of its own); a second signal kills that child (SIGKILL). A
 * signal the terminal sent to the process group that the command shares
 * with COMMAND is not forwarded: COMMAND got it already. The command then
 * saves what it collected and ends with status 128 + the signal.
 *
 * Children. A DAEMON or a HELPER child runs in a process group of its own
 * (the terminal's signals do not reach it; the command stops it when it
 * is done); a COMMAND child runs in the command's process group when that
 * is the foreground group of a terminal (job control works as without
 * hostrangectl), else in a group of its own, so that a forwarded signal
 * reaches every process it started. A child gets the signal dispositions
 * and mask the command had before hrx_cleanup_init (SIGINT and
 * SIGQUIT: the default), and a DAEMON child is sent SIGTERM should the
 * command end without stopping it (even by SIGKILL).
 *
 * Everything here is for one thread of one process: the registry is
 * static, and a child forked here starts with an empty one.
 */
#ifndef HOSTRANGE_RUNNER_CLEANUP_H
#define HOSTRANGE_RUNNER_CLEANUP_H

#include <stddef.h>
#include <sys/types.h>

/* What a child is: how it is started, stopped and signalled. */
enum hrx_child {
    HRX_CHILD_DAEMON,  /* stopped with SIGTERM when done */
    HRX_CHILD_COMMAND, /* gets the signals the command gets */
    HRX_CHILD_HELPER,  /* left to finish; SIGTERM on a sudden exit */
};

/* The --meta key of a run saved after a signal stopped its command (its
 * value: the signal's name, as hrx_cleanup_signame gives it). */
#define HRX_STOPPED_META "stopped"

/* The most children and directories registered at once. */
#define HRX_CLEANUP_MAX 8

/*
 * Installs the handlers of SIGINT, SIGTERM, SIGHUP and SIGPIPE, ignores
 * SIGQUIT (which the terminal sends COMMAND), blocks the four in this
 * thread, and has hrx_cleanup_all run at exit(). A second call does
 * nothing. Returns 0, or a negative errno.
 */
int hrx_cleanup_init(void);

/*
 * Lets pending signals in (their handler runs) and blocks them again.
 * Returns the first signal caught since hrx_cleanup_init, or 0.
 */
int hrx_cleanup_stopped(void);

/* "SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", or "a signal". */
const char *hrx_cleanup_signame(int sig);

/*
 * Makes a private temporary directory $TMPDIR/hostrange-KIND-XXXXXX
 * (TMPDIR unset or empty: /tmp), writes its path to dir (len bytes) and
 * registers it, to be removed with all it holds. Returns 0; or a negative
 * errno, *in then set to the folder it was to be made in, or to NULL when
 * it was not tried (the registry full, the signals not caught, len over
 * PATH_MAX).
 */
int hrx_cleanup_tempdir(const char *kind, char *dir, size_t len,
                        const char **in);

/* The same for a daemon's runtime directory: in /tmp where the one in
 * $TMPDIR would be too long a path for its sockets
 * (hrp_runtime_dir_max), so that a long $TMPDIR does not stop a private
 * daemon from serving. */
int hrx_cleanup_rundir(const char *kind, char *dir, size_t len,
                       const char **in);

/* Removes registered directory dir and everything in it (no link is
 * followed), and forgets it. */
void hrx_cleanup_rmdir(const char *dir);

/*
 * Forks a child of kind `kind` and registers it. Returns as fork() does:
 * the child's pid in the parent, 0 in the child (its process group,
 * signal dispositions and mask set as above, its registry empty), or -1
 * with errno set (-1 and EMFILE when the registry is full).
 */
pid_t hrx_cleanup_fork(enum hrx_child kind);

/*
 * Waits for registered child pid to end (signals let in meanwhile when it
 * is a COMMAND, so that they are forwarded to it), reaps it and forgets
 * it. Returns 0 with its wait status in *status, or a negative errno.
 */
int hrx_cleanup_wait(pid_t pid, int *status);

/* Sends registered child pid SIGTERM, reaps it and forgets it. */
void hrx_cleanup_stop(pid_t pid);

/*
 * Every way out: kills each registered COMMAND child (SIGKILL), sends the
 * others SIGTERM, reaps them all, and removes the registered directories,
 * the last made first. Runs at exit() too; does nothing in a child.
 */
void hrx_cleanup_all(void);

#endif
