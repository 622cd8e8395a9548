/*
 * daemon.state.snapshot_s, daemon.state.snapshot_bytes and
 * daemon.state.load_s: the state directory of a daemon holding 100,000
 * keys (1,000,000 events, one calling context each, kept exactly), fed
 * with --state-dir. snapshot_s is the wall time of a stop (SIGTERM to
 * exit), which writes the final snapshot, syncs it and renames it;
 * snapshot_bytes its size; load_s the wall time of a start on that
 * directory until the daemon answers, which loads it.
 *
 * Baselines, in the same run: `hostrangectl save --unsorted` of the same
 * daemon (its wall time and its file's size: the run file of the same
 * keys), and a start on an empty state directory.
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODES 100000
#define PER_BATCH_NODES 1000
#define EVENTS 10


static double file_size(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        bd_die("%s: %s", path, strerror(errno));
    return (double)st.st_size;
}

/* SIGTERM; returns the seconds until the daemon exited. */
static double stop(struct bd_daemon *d)
{
    double t = bd_now();
    int status;

    kill(d->pid, SIGTERM);
    if (waitpid(d->pid, &status, 0) != d->pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("hostranged did not stop cleanly");
    d->pid = 0;
    return bd_now() - t;
}

/* A daemon on state directory `state`; returns the seconds until it
 * answered. */
static double start_on(struct bd_daemon *d, const char *state)
{
    const char *extra[] = { "--state-dir", state, NULL };
    double t = bd_now();

    bd_daemon_start(d, 0, extra);
    return bd_now() - t;
}

int main(void)
{
    char state[300], empty[300], run[400], snap[400];
    const char *ctl = bd_hostrangectl();
    double save_s, write_s, load_s, empty_s;
    struct bd_daemon d;
    int sock;

    bd_tempdir(state, sizeof state, "state");
    bd_tempdir(empty, sizeof empty, "empty");
    snprintf(run, sizeof run, "%s/run.hrs", empty);
    snprintf(snap, sizeof snap, "%s/snapshot", state);
    start_on(&d, state);
    sock = bd_ingest_connect(&d);
    bd_feed_nodes(sock, "state", NODES, PER_BATCH_NODES, EVENTS);
    nn_close(sock);
    {
        char *argv[] = { (char *)ctl, "--runtime-dir", d.dir, "--timeout",
                         "60000", "save", "--unsorted", "-o", run, NULL };
        bd_run_cpu(argv, d.pid, &save_s);
    }
    write_s = stop(&d);
    bd_rmdir(d.dir);
    load_s = start_on(&d, state);
    stop(&d);
    bd_rmdir(d.dir);
    {
        char fresh[300];

        bd_tempdir(fresh, sizeof fresh, "fresh");
        empty_s = start_on(&d, fresh);
        stop(&d);
        bd_rmdir(d.dir);
        bd_rmdir(fresh);
    }
    bd_report("daemon.state.snapshot_s", write_s, "s", save_s);
    bd_report("daemon.state.snapshot_bytes", file_size(snap), "B",
              file_size(run));
    bd_report("daemon.state.load_s", load_s, "s", empty_s);
    bd_rmdir(state);
    bd_rmdir(empty);
    return 0;
}
