/*
 * The processes of the commands that run others: one call that starts a
 * program as a registered child (cleanup.h), with its directory, its
 * standard streams and its environment set, and says whether it could be
 * run; and, built on it, the processes that record, record --rounds, ab
 * and bisect start: a private hostranged on a runtime directory, the
 * measured command under it, this program run again as a helper (a merge
 * of rounds, a diff), git, and where hostranged and the NVTX tool are.
 *
 * A child that cannot be run (no such program, a directory it cannot
 * enter, a file it cannot open) says nothing: it sends its errno back to
 * the parent through a pipe closed on exec, the parent reaps it and the
 * call returns that errno, negated, for the caller to say. What a child
 * prints once it runs is its own.
 */
#ifndef HOSTRANGE_RUNNER_SPAWN_H
#define HOSTRANGE_RUNNER_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/run/runmeta.h"
#include "lib/runner/cleanup.h"

/* A standard stream of a child: inherited, or /dev/null. Any other value
 * of struct hrx_spawn's fd[] is a descriptor of the parent's, put there. */
#define HRX_FD_KEEP (-1)
#define HRX_FD_NULL (-2)

/* The most environment variables a child is given. */
#define HRX_SPAWN_ENV_MAX 4

/* The environment variable that names a private daemon's runtime
 * directory to the processes of the command run under it. */
#define HRX_RUNTIME_ENV "HOSTRANGE_RUNTIME_DIR"

/* How a child is started. Streams are set in order, 0, 1 then 2, so
 * that fd[2] = 1 sends standard error where standard output went. */
struct hrx_spawn {
    enum hrx_child kind;
    char *const *argv;  /* argv[0] is looked for on PATH unless path */
    const char *path;   /* the program to run, or NULL */
    const char *dir;    /* the directory it runs in, or NULL: this one */
    int fd[3];          /* HRX_FD_KEEP, HRX_FD_NULL, or a descriptor */
    const char *out;    /* standard output to this file (created or
                           truncated, mode 0600) instead of fd[1]; or NULL */
    const char *env[2 * HRX_SPAWN_ENV_MAX]; /* NAME, VALUE pairs to set;
                                               NULL ends them */
};

/* A struct hrx_spawn of kind `kind` running argv, its streams inherited
 * (the rest empty). */
struct hrx_spawn hrx_spawn_init(enum hrx_child kind, char *const *argv);

/*
 * Starts s as a registered child. Returns 0 with its pid in *pid, or a
 * negative errno: the fork failed, or the child could not be run (it is
 * reaped then). Wait for it with hrx_cleanup_wait, stop it with
 * hrx_cleanup_stop.
 */
int hrx_spawn(const struct hrx_spawn *s, pid_t *pid);

/* A wait status as a shell gives it: the exit status, or 128 + the
 * signal that killed it. */
int hrx_exit_status(int status);

/*
 * Runs s to its end. Returns its exit status as hrx_exit_status gives
 * it, or a negative errno when it cannot be run or waited for.
 */
int hrx_spawn_wait(const struct hrx_spawn *s);

/*
 * A private daemon: hostranged `daemon` (a path, or a name looked for on
 * PATH) started quiet on runtime directory dir, as a DAEMON child. Returns
 * 0 with its pid in *pid, or a negative errno. Whether it answers is the
 * caller's to ask (its socket is in dir).
 */
int hrx_daemon_start(const char *daemon, const char *dir, pid_t *pid);

/*
 * Where hostranged is: `named` when it is not NULL or empty (the caller's
 * $HOSTRANGED), else beside this program (bindir: the directory this
 * program is in, or NULL when unknown), else in bindir/../daemon (the
 * build tree), else the name "hostranged", for PATH. Writes it to buf
 * (len bytes).
 */
void hrx_daemon_path(const char *named, const char *bindir, char *buf,
                     size_t len);

/*
 * Where the NVTX injection tool is: in the build tree beside this program
 * (bindir/../nvtx/.libs), else in libdir, where it is installed. Writes
 * the last path tried to buf. Returns 0, or -ENOENT when neither is
 * readable.
 */
int hrx_nvtx_tool_path(const char *bindir, const char *libdir, char *buf,
                       size_t len);

/*
 * Runs this program (self: its path) with args (args[0] its name) as a
 * HELPER child, its standard output written to the file `out` (created or
 * truncated, mode 0600; NULL: thrown away), and with `quiet` its standard
 * error thrown away. Returns its exit status (hrx_exit_status), or a
 * negative errno when it cannot be run.
 */
int hrx_run_self(const char *self, char **args, int quiet, const char *out);

/*
 * Merges run files in[0..nin) into out as rounds: this program's merge
 * (self: its path) run as a helper, in run format `format`, with the meta
 * pairs given (meta NULL: none). Returns 0; merge's exit status when it
 * failed (it said why on standard error); or a negative errno when it
 * cannot be run.
 */
int hrx_merge_rounds(const char *self, const char *out, unsigned format,
                     const struct hrr_meta *meta, char **in, size_t nin);

/*
 * Runs git with args (args[0] "git") in the current directory as a
 * HELPER child, its standard input /dev/null, its standard output into
 * *out (NUL-terminated; caller frees) or, with out NULL, thrown away, and
 * with `quiet` its standard error thrown away. Returns git's exit status
 * (hrx_exit_status), or a negative errno when it cannot be run.
 */
int hrx_git(char **args, char **out, int quiet);

/*
 * As hrx_git, for a command that starts no other process (history
 * detect's hint): no registry, no signal caught, standard input and
 * error /dev/null, standard output into out (len bytes, NUL-terminated,
 * cut to fit). Returns git's exit status (hrx_exit_status), or a negative
 * errno when it cannot be started or waited for.
 */
int hrx_git_plain(char **args, char *out, size_t len);

#endif
