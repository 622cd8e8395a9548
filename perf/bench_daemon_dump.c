/*
 * daemon.dump: seconds for `hostrangectl dump` (a whole run of the program,
 * every page, JSONL to /dev/null) of a report of 100 nodes x 2 phases x 11
 * ranges x 2 metrics with 5,000 events each (4,400 rows over 22 million
 * values), kept exactly.
 *
 * Baseline: sorting the same samples once, each population on its own,
 * with the sort the daemon uses (hrs_sort_u64), in this process. Each
 * figure is the best of 3. Goal: ratio <= 2.
 */
#include "config.h"

#include "lib/stat/summary.h"
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

#define NODES 100
#define PHASES 2
#define RANGES 11
#define EVENTS 5000
#define KEYS (NODES * PHASES * RANGES)
#define PER_BATCH 16384u

static char *range_names[RANGES] = {
    "binding.body", "binding.tensor_conversion", "binding.device_conversion",
    "dispatch.call", "operator.call", "cache.key", "cache.lookup",
    "cache.construct", "operator.invoke", "backend.submit", "end_to_end",
};

static uint64_t *incl, *self; /* [key * EVENTS + i] */

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return *rng;
}

/* Key k = (node * PHASES + phase) * RANGES + range. */
static void generate(void)
{
    uint64_t rng = 0xfeedfacecafebeefull;

    incl = malloc((size_t)KEYS * EVENTS * sizeof *incl);
    self = malloc((size_t)KEYS * EVENTS * sizeof *self);
    if (incl == NULL || self == NULL)
        bd_die("out of memory");
    for (size_t k = 0; k < KEYS; k++) {
        uint64_t median = 300 + 1000 * (k % RANGES) + 17 * (k / RANGES);

        for (size_t i = 0; i < EVENTS; i++) {
            uint64_t u = next(&rng), v = median / 2 + (u >> 11) % median;
            if ((u & 0x7f) == 0)
                v *= 10;
            incl[k * EVENTS + i] = v;
            self[k * EVENTS + i] = (k % 2) ? v : v / 4 + (u >> 40) % (v / 2);
        }
    }
}

/* Feeds every event: per node, batches that interleave its ranges. */
static void feed(const struct bd_daemon *d)
{
    char node[32];
    int sock = bd_ingest_connect(d);
    uint64_t seq = 0;

    for (int n = 0; n < NODES; n++) {
        struct db_batch x;

        snprintf(node, sizeof node, "bench/dump::node[%03d]", n);
        db_init(&x, 4242, ++seq);
        x.l[0].node_id = x.l[1].node_id = node;
        x.b.n_labels = 2;
        x.b.ranges = range_names;
        x.b.n_ranges = RANGES;
        for (size_t i = 0; i < EVENTS; i++) {
            for (int p = 0; p < PHASES; p++) {
                for (int r = 0; r < RANGES; r++) {
                    size_t k = ((size_t)n * PHASES + p) * RANGES + r;
                    db_sample(&x, (uint32_t)p, (uint32_t)r,
                              incl[k * EVENTS + i], self[k * EVENTS + i]);
                }
            }
            if (x.n >= PER_BATCH || i + 1 == EVENTS) {
                bd_send_batch(sock, &x);
                db_fini(&x);
                db_init(&x, 4242, ++seq);
                x.l[0].node_id = x.l[1].node_id = node;
                x.b.n_labels = 2;
                x.b.ranges = range_names;
                x.b.n_ranges = RANGES;
            }
        }
        db_fini(&x);
        seq--; /* the last batch made was not sent */
    }
    nn_close(sock);
}

/* Runs hostrangectl dump to `out`; returns its seconds. */
static double dump(const struct bd_daemon *d, const char *out)
{
    const char *ctl = bd_hostrangectl();
    double t0 = bd_now();
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        execl(ctl, ctl, "--runtime-dir", d->dir, "--timeout", "60000", "dump",
              "-o", out, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("%s dump failed", ctl);
    return bd_now() - t0;
}

/* Sorts every population once; returns the seconds. */
static double sort_once(uint64_t *work, uint64_t *tmp)
{
    double t0, t = 0;

    for (size_t k = 0; k < KEYS; k++) {
        memcpy(work, incl + k * EVENTS, EVENTS * sizeof *work);
        memcpy(work + EVENTS, self + k * EVENTS, EVENTS * sizeof *work);
        t0 = bd_now();
        hrs_sort_u64(work, EVENTS, tmp);
        hrs_sort_u64(work + EVENTS, EVENTS, tmp);
        t += bd_now() - t0;
    }
    return t;
}

int main(void)
{
    double best_dump = 1e30, best_sort = 1e30;
    uint64_t *work = malloc(2 * EVENTS * sizeof *work);
    uint64_t *tmp = malloc(EVENTS * sizeof *tmp);
    struct bd_daemon d;
    char out[300], line[4096];
    FILE *f;
    int rows = 0;

    generate();
    bd_daemon_start(&d, 0, NULL);
    feed(&d);
    /* Once into a file, to check the report is whole. */
    snprintf(out, sizeof out, "%s/report.jsonl", d.dir);
    dump(&d, out);
    f = fopen(out, "r");
    if (f == NULL)
        bd_die("no report: %s", strerror(errno));
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, "\"count\":5000,") == NULL)
            bd_die("a row without 5000 events: %s", line);
        rows++;
    }
    fclose(f);
    if (rows != KEYS * 2)
        bd_die("%d rows, not %d", rows, KEYS * 2);
    for (int round = 0; round < 3; round++) {
        double t = dump(&d, "/dev/null");
        if (t < best_dump)
            best_dump = t;
        t = sort_once(work, tmp);
        if (t < best_sort)
            best_sort = t;
    }
    bd_daemon_stop(&d);
    bd_report("daemon.dump", best_dump, "s", best_sort);
    free(work);
    free(tmp);
    free(incl);
    free(self);
    return 0;
}
