/*
 * The commits of hostrangectl bisect in git: the line from the good end
 * to the bad end, a worktree per commit under the bisect's directory,
 * the build run in it, its subject line, and the worktrees removed. Each
 * runs git (or the build) through spawn.h in the current directory, a
 * git working tree; nothing here prints: a failure is returned, with the
 * reason in the caller's buffer where one is given.
 */
#ifndef HOSTRANGE_RUNNER_WORKTREE_H
#define HOSTRANGE_RUNNER_WORKTREE_H

#include <stddef.h>

#include "lib/runner/bisect.h"

/* The characters of a hash that name a commit's worktree and logs, and
 * a commit in messages. */
#define HRX_BISECT_SHORT 12

/*
 * The line of commits from good to bad (ends included), in order, as git
 * rev-list --ancestry-path gives it. Returns 0 and fills *list and *n
 * (caller frees the list; hrx_bisect_fini frees it in a bisect), or -1
 * with why (whylen bytes) saying why.
 */
int hrx_bisect_line(const char *good, const char *bad,
                    struct hrx_bisect_commit **list, size_t *n, char *why,
                    size_t whylen);

/*
 * Makes commit c's worktree under directory root (root/wt-HASH, its name
 * in c->dir) unless it has one. Returns 0; git worktree add's exit status
 * when it failed (its own message on standard error); or a negative
 * errno.
 */
int hrx_bisect_worktree_add(const char *root, struct hrx_bisect_commit *c);

/*
 * Runs the build `build` (sh -c) in commit c's worktree, with env_name
 * set to c's hash, its standard output and error in root/build-HASH.log
 * (its path written to log, loglen bytes), as a COMMAND child (signals
 * reach it, cleanup.h). Returns its exit status, or a negative errno when
 * it cannot be run.
 */
int hrx_bisect_build(const char *root, const struct hrx_bisect_commit *c,
                     const char *build, const char *env_name, char *log,
                     size_t loglen);

/*
 * Runs fn(arg) in commit c's worktree, with env_name set to its hash and
 * this process's standard error written to the file log (created or
 * truncated, mode 0600), then goes back to the directory `back` (a
 * descriptor) and gives standard error and the environment back. Returns
 * 0 with fn's value in *st (-1 when the worktree or `back` cannot be
 * entered), or a negative errno when the log cannot be written (fn not
 * run).
 */
int hrx_bisect_in_worktree(const struct hrx_bisect_commit *c, int back,
                           const char *env_name, const char *log,
                           int (*fn)(void *arg), void *arg, int *st);

/* The subject line of a commit (caller frees; "" when unknown; NULL when
 * out of memory). */
char *hrx_bisect_subject(const char *hash);

/* Removes commit c's worktree (git worktree remove --force) and forgets
 * its name. Returns 0, or git's exit status or a negative errno when it
 * could not be removed (it goes with the bisect's directory). */
int hrx_bisect_worktree_drop(struct hrx_bisect_commit *c);

/* Removes the bisect's directory root (registered, cleanup.h) with its
 * worktrees and prunes git's records of them. */
void hrx_bisect_worktrees_remove(const char *root);

#endif
