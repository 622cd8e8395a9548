/*
 * daemon.dump.ingest_pause: the longest wait for an acknowledgement of a
 * small batch while `hostrangectl dump` reads a report of 100,000 keys
 * (1,000,000 events) from the same daemon: how long a large dump holds up
 * ingest. The daemon answers dumps in pages, so the pause is one page's
 * work, not the whole report's.
 *
 * Baseline: the longest wait for the same acknowledgements with no dump,
 * over as many batches, in the same run.
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODES 100000
#define PER_BATCH_NODES 1000
#define EVENTS 10

static int sock;


/* A small batch of another client, numbered seq. */
static double probe(uint64_t seq)
{
    struct db_batch x;
    double t;

    db_init(&x, 7, seq);
    db_sample(&x, 1, 0, 1000, 500);
    t = bd_send_batch(sock, &x);
    db_fini(&x);
    return t;
}

int main(void)
{
    const char *ctl = bd_hostrangectl();
    double idle = 0, during = 0, t;
    uint64_t seq = 0, probes = 0;
    Hostrange__ControlReply *rep;
    struct bd_daemon d;
    int status;
    pid_t pid;

    bd_daemon_start(&d, 0, NULL);
    sock = bd_ingest_connect(&d);
    bd_feed_nodes(sock, "pause", NODES, PER_BATCH_NODES, EVENTS);
    rep = bd_stats(&d);
    if (rep->stats->keys != NODES + 0)
        bd_die("%llu keys, not %d", (unsigned long long)rep->stats->keys,
               NODES);
    hostrange__control_reply__free_unpacked(rep, NULL);

    pid = fork();
    if (pid == 0) {
        execl(ctl, ctl, "--runtime-dir", d.dir, "--timeout", "60000", "dump",
              "-o", "/dev/null", (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        bd_die("fork: %s", strerror(errno));
    for (;;) {
        t = probe(++seq);
        probes++;
        if (t > during)
            during = t;
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bd_die("%s dump failed", ctl);
    for (uint64_t i = 0; i < probes; i++) {
        t = probe(++seq);
        if (t > idle)
            idle = t;
    }
    fprintf(stderr, "bench: %llu small batches sent while the dump ran\n",
            (unsigned long long)probes);
    nn_close(sock);
    bd_daemon_stop(&d);
    bd_report("daemon.dump.ingest_pause", during, "s", idle);
    return 0;
}
