/*
 * daemon.feed_cpu_per_event: the processor time per range event to
 * unpack a client's batches and aggregate them (hra_feed: the keys'
 * lookups, the exact store), in this process, with no socket and no other
 * process: the largest part of hostranged's cost per event that depends
 * on its own code, measured where the machine's load moves it least (the
 * daemon's validation of each batch, daemon/ingest.c, is not in it). 48
 * batches of 16384 events of bench_daemon_ingest's workload (bd_workload:
 * the example operators' ten ranges, 1 to 20 us) go into a fresh
 * aggregate each round, every key kept exactly.
 *
 * Baseline: the same batches unpacked and freed (protobuf-c), which any
 * reader of the message pays. Each figure is the least of 9 rounds, the
 * two alternated.
 *
 * Usage: bench_daemon_feed [ROUNDS] (default 9).
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "perf/bench_daemon_util.h"
#include "proto/hostrange.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCHES 48
#define EVENTS_PER_BATCH 16384u

static uint8_t *buf[BATCHES];
static size_t len[BATCHES];
static size_t events;

static double cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per event of unpacking the batches and feeding them to a fresh
 * aggregate. */
static double feed_round(void)
{
    struct hra_agg a;
    struct hra_feed *f;
    double t0, t;

    hra_init(&a);
    a.exact_cap = UINT32_MAX;
    f = hra_feed_new(&a);
    if (f == NULL)
        bd_die("out of memory");
    t0 = cpu_ns();
    for (int i = 0; i < BATCHES; i++) {
        Hostrange__Batch *b = hostrange__batch__unpack(NULL, len[i], buf[i]);
        struct hra_fed out;

        if (b == NULL || hra_feed(f, b, &out) != 0)
            bd_die("batch %d not taken", i);
        hostrange__batch__free_unpacked(b, NULL);
    }
    t = (cpu_ns() - t0) / (double)events;
    hra_feed_free(f);
    hra_fini(&a);
    return t;
}

/* ns per event of unpacking and freeing the batches. */
static double unpack_round(void)
{
    double t0 = cpu_ns();

    for (int i = 0; i < BATCHES; i++) {
        Hostrange__Batch *b = hostrange__batch__unpack(NULL, len[i], buf[i]);

        if (b == NULL)
            bd_die("batch %d does not unpack", i);
        hostrange__batch__free_unpacked(b, NULL);
    }
    return (cpu_ns() - t0) / (double)events;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 9;
    double feed = 1e300, unpack = 1e300;

    if (rounds < 1)
        bd_die("usage: bench_daemon_feed [ROUNDS]");
    for (int i = 0; i < BATCHES; i++) {
        uint64_t rng = 0x1234567887654321ull + (uint64_t)i;
        struct db_batch x;

        db_init(&x, 1000, (uint64_t)i + 1);
        bd_workload(&x, EVENTS_PER_BATCH, 0, &rng);
        events += db_events(&x);
        buf[i] = db_pack(&x, &len[i]);
        db_fini(&x);
    }
    for (int r = 0; r < rounds; r++) {
        double h = feed_round(), u = unpack_round();

        if (h < feed)
            feed = h;
        if (u < unpack)
            unpack = u;
    }
    bd_report("daemon.feed_cpu_per_event", feed, "ns", unpack);
    for (int i = 0; i < BATCHES; i++)
        free(buf[i]);
    return 0;
}
