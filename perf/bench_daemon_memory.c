/*
 * daemon.bytes_per_event: the daemon's resident memory per range event in
 * exact mode (an inclusive and a self time), measured as the growth of
 * hostranged's RSS while 4 million typical range events (ten ranges of
 * two label sets, see bd_workload) arrive, divided by their number. The
 * keys exist before the measurement starts, so their fixed cost is not
 * counted; everything else is (encoded events, buffer slack, the
 * allocator's overhead and fragmentation).
 *
 * Baseline: 16 bytes, an inclusive and a self time kept as two uint64_t.
 * Goal: value <= 10.
 *
 * Usage: bench_daemon_memory [MILLIONS_OF_EVENTS] (default 4).
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENTS_PER_BATCH 16384u

int main(int argc, char **argv)
{
    uint64_t millions = argc > 1 ? strtoull(argv[1], NULL, 10) : 4;
    uint64_t rng = 0x5deece66dull, seq = 0, events = 0, rss0, rss1;
    Hostrange__ControlReply *rep;
    struct bd_daemon d;
    int sock;

    if (millions == 0)
        bd_die("usage: bench_daemon_memory [MILLIONS_OF_EVENTS]");
    bd_daemon_start(&d, 0, NULL);
    sock = bd_ingest_connect(&d);

    /* Every key made, and the daemon's fixed memory in place. */
    for (uint32_t label = 0; label < 2; label++) {
        struct db_batch x;
        db_init(&x, 77, ++seq);
        bd_workload(&x, 1000, label, &rng);
        bd_send_batch(sock, &x);
        db_fini(&x);
    }
    rss0 = bd_rss(d.pid);
    while (events < millions * 1000000u) {
        struct db_batch x;
        db_init(&x, 77, ++seq);
        bd_workload(&x, EVENTS_PER_BATCH, (uint32_t)(seq % 2), &rng);
        events += x.n;
        bd_send_batch(sock, &x);
        db_fini(&x);
    }
    rss1 = bd_rss(d.pid);
    rep = bd_stats(&d);
    if (rep->stats->histogram_keys != 0)
        bd_die("keys left exact mode");
    fprintf(stderr, "bench: %llu range events in %llu keys; the daemon "
            "counts %.2f bytes of samples per event\n",
            (unsigned long long)events,
            (unsigned long long)rep->stats->keys,
            (double)rep->stats->memory_bytes / (double)(events + 2000));
    hostrange__control_reply__free_unpacked(rep, NULL);
    nn_close(sock);
    bd_daemon_stop(&d);
    bd_report("daemon.bytes_per_event", (double)(rss1 - rss0) / (double)events,
              "bytes", 16.0);
    return 0;
}
