/*
 * runs.save and runs.merge: MB/s of the run file written.
 *
 * Two shards, each a private hostranged fed 4 million typical range events
 * (see bd_workload) of 20 nodes, cold and warm, kept exactly. runs.save is
 * `hostrangectl save -o FILE` of the first shard (a whole run of the
 * program: every page requested, encoded, checksummed, written, synced and
 * renamed); runs.merge is `hostrangectl merge -o OUT` of both shards' files
 * (read, checked, joined and written as one). runs.save.unsorted and
 * runs.merge.unsorted are the same with --unsorted (run format 2: the
 * events as the daemon holds them, merged from files saved so).
 *
 * Baseline: `cp` of the same file (the shard's run file, the merged file).
 *
 * Both are MB per CPU second: the CPU time (user and system) of every
 * process involved, hostrangectl and, for a save, hostranged (all its
 * threads), or cp; on a shared machine with two cores, wall time measures
 * the neighbours. Each figure is the best of 3 (the wall times go to
 * stderr). Goal: ratio >= 0.3.
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODES 20
#define EVENTS_PER_NODE 200000u
#define PER_BATCH 16384u
#define ROUNDS 3

/* Feeds the nodes [first, first + NODES), cold and warm. */
static void feed(const struct bd_daemon *d, int first, uint64_t *rng)
{
    char url[400], node[64];
    int sock = nn_socket(AF_SP, NN_REQ), max = -1;
    uint64_t seq = 0;

    hrp_endpoint(url, sizeof url, d->dir, HRP_INGEST_NAME);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    if (sock < 0 || nn_connect(sock, url) < 0)
        bd_die("cannot connect to %s", url);
    for (int n = first; n < first + NODES; n++) {
        snprintf(node, sizeof node, "bench/runs::node[%03d]", n);
        for (size_t sent = 0; sent < EVENTS_PER_NODE; sent += PER_BATCH) {
            struct db_batch x;

            db_init(&x, 4343, ++seq);
            x.l[0].node_id = x.l[1].node_id = node;
            x.b.n_labels = 2;
            bd_workload(&x, PER_BATCH / 2, 0, rng);
            bd_workload(&x, PER_BATCH / 2, 1, rng);
            bd_send_batch(sock, &x);
            db_fini(&x);
        }
    }
    nn_close(sock);
}

static double file_mb(const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0)
        bd_die("no file %s", path);
    return (double)st.st_size / 1e6;
}

/* The best of 3 runs of argv (with process `also`), and of 3 `cp` of the
 * file it writes; prints the figure. */
static void measure(const char *name, char *const *argv, pid_t also,
                    const char *out, const char *copy)
{
    char *cp[] = { "cp", (char *)out, (char *)copy, NULL };
    double best = 1e30, best_cp = 1e30, wall = 1e30, wall_cp = 1e30, w, mb;

    for (int round = 0; round < ROUNDS; round++) {
        double t;

        /* Both write a new file: replacing one would count the freeing of
         * the old one's pages to one side only. */
        unlink(out);
        t = bd_run_cpu(argv, also, &w);

        if (t < best)
            best = t;
        if (w < wall)
            wall = w;
        unlink(copy);
        t = bd_run_cpu(cp, 0, &w);
        if (t < best_cp)
            best_cp = t;
        if (w < wall_cp)
            wall_cp = w;
    }
    unlink(copy);
    mb = file_mb(out);
    fprintf(stderr, "%s: %.1f MB, %.3f CPU s (%.3f s), cp %.3f CPU s "
            "(%.3f s)\n", name, mb, best, wall, best_cp, wall_cp);
    bd_report(name, mb / best, "MB/s", mb / best_cp);
}

int main(void)
{
    char dir[300], shard[2][400], ushard[2][400], all[400], copy[400];
    char *ctl = (char *)bd_hostrangectl();
    uint64_t rng = 0x2545f4914f6cdd1dull;
    double wall;

    bd_tempdir(dir, sizeof dir, "runs");
    snprintf(all, sizeof all, "%s/all.hrs", dir);
    snprintf(copy, sizeof copy, "%s/copy.hrs", dir);
    for (int i = 0; i < 2; i++) {
        struct bd_daemon d;
        char *save[] = { ctl, "--runtime-dir", d.dir, "--timeout", "60000",
                         "save", "-o", shard[i], NULL };
        char *usave[] = { ctl, "--runtime-dir", d.dir, "--timeout", "60000",
                          "save", "--unsorted", "-o", ushard[i], NULL };

        snprintf(shard[i], sizeof shard[i], "%s/shard%d.hrs", dir, i);
        snprintf(ushard[i], sizeof ushard[i], "%s/ushard%d.hrs", dir, i);
        bd_daemon_start(&d, 0, NULL);
        feed(&d, i * NODES, &rng);
        if (i == 0) {
            measure("runs.save", save, d.pid, shard[i], copy);
            measure("runs.save.unsorted", usave, d.pid, ushard[i], copy);
        } else {
            bd_run_cpu(save, 0, &wall);
            bd_run_cpu(usave, 0, &wall);
        }
        bd_daemon_stop(&d);
    }
    {
        char *merge[] = { ctl, "merge", "-o", all, shard[0], shard[1], NULL };
        char *umerge[] = { ctl, "merge", "--unsorted", "-o", all, ushard[0],
                           ushard[1], NULL };

        measure("runs.merge", merge, 0, all, copy);
        measure("runs.merge.unsorted", umerge, 0, all, copy);
    }
    bd_rmdir(dir);
    return 0;
}
