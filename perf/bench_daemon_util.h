/*
 * Helpers of the daemon's benchmarks: a private hostranged on temporary
 * directories, its memory, requests to its control socket, the clock, and
 * the JSON line every benchmark prints.
 *
 * hostranged is $HOSTRANGED when set, else the hostranged beside the
 * hostrangectl that runs the benchmark (`make bench` runs each one under
 * `hostrangectl record`), else ../daemon/hostranged from the benchmark.
 * Every helper exits with status 1 and a message on failure.
 */
#ifndef HOSTRANGE_BENCH_DAEMON_UTIL_H
#define HOSTRANGE_BENCH_DAEMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proto/hostrange.pb-c.h"
#include "tests/lib/harness_batch.h"

struct bd_daemon {
    char dir[256];        /* runtime directory */
    char state[300];      /* state directory, or "" */
    pid_t pid;
};

/* Seconds on the monotonic clock. */
double bd_now(void);

/* Prints {"bench":NAME,"value":V,"unit":U,"baseline":B,"ratio":V/B}. */
void bd_report(const char *name, double value, const char *unit,
               double baseline);

/* A fresh temporary directory (mode 0700) in $TMPDIR or /tmp. */
void bd_tempdir(char *buf, size_t len, const char *what);

/* Removes a directory and what is in it. */
void bd_rmdir(const char *dir);

/* The path of hostranged / hostrangectl. */
const char *bd_hostranged(void);
const char *bd_hostrangectl(void);

/* Starts hostranged on fresh directories (with a state directory when
 * with_state), extra arguments after them (NULL-terminated, may be NULL),
 * and waits until it answers. */
void bd_daemon_start(struct bd_daemon *d, int with_state,
                     const char *const *extra);

/* SIGTERM, wait, remove the directories. */
void bd_daemon_stop(struct bd_daemon *d);

/* A REQ socket connected to the daemon's ingest socket, taking replies of
 * any size. */
int bd_ingest_connect(const struct bd_daemon *d);

/* Sends one batch on the connected REQ socket `sock` and checks that the
 * daemon took it (an OK acknowledgement). Returns the seconds from sending
 * to the acknowledgement. */
double bd_send_batch(int sock, const struct db_batch *x);

/* Feeds sock nodes warm nodes "PREFIX/node[NNNNNN]" (add, cpu), per_batch
 * (at most 1000) to a batch, each `events` samples of the one range
 * dispatch.call. */
void bd_feed_nodes(int sock, const char *prefix, int nodes, int per_batch,
                   int events);

/* The resident memory of a process, in bytes. */
uint64_t bd_rss(pid_t pid);

/* The CPU time of a live process so far, in seconds: the sum of its
 * threads' time on a processor (/proc/PID/task/T/schedstat, in ns), or its
 * utime + stime (/proc/PID/stat, in clock ticks) where schedstat is not
 * kept. Threads that exited are counted only by the latter. */
double bd_proc_cpu(pid_t pid);

/* Runs argv (a program and its arguments, its output to /dev/null) and dies
 * unless it exits with 0. Returns the CPU seconds it took, with those of
 * process `also` meanwhile (0: none), and its wall seconds in *wall unless
 * wall is NULL. */
double bd_run_cpu(char *const *argv, pid_t also, double *wall);

/* Sends a control request to the daemon, returns its reply (caller frees
 * with hostrange__control_reply__free_unpacked). */
Hostrange__ControlReply *bd_control(const struct bd_daemon *d,
                                    Hostrange__ControlRequest *q);

/* The daemon's stats (caller frees the reply). */
Hostrange__ControlReply *bd_stats(const struct bd_daemon *d);

/* The path of this program's own executable, for a benchmark that runs
 * itself as workers: /proc/self/exe, so that a worker is the program and
 * not a wrapper script that starts it (argv0 where that cannot be read). */
void bd_self_exe(char *buf, size_t len, const char *argv0);

/* Forks a child whose standard output is a pipe that *out reads in the
 * parent, as benchmarks read their measured processes' figures. Returns
 * the child's pid in the parent (with *out open) and 0 in the child;
 * exits with a message when the pipe or the fork fails. */
pid_t bd_fork_piped(FILE **out);

/* Exits with a message. */
void bd_die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
                                                 noreturn));

/*
 * A synthetic but typical workload: the ten ranges of the example
 * operators (binding.body ... backend.submit, nested, leaves with self ==
 * inclusive) with durations spread around their medians (1 to 20 us), and
 * end_to_end records. Fills x (already db_init'ed, whose range names it
 * replaces) with n range events of label `label`, drawing from *rng.
 */
void bd_workload(struct db_batch *x, size_t n, uint32_t label,
                 uint64_t *rng);

#endif
