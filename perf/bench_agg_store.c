/*
 * agg.exact_store: the daemon's cost of keeping range events exactly, in
 * processor time (user and system: the kernel's zeroing of the pages
 * counts) per event, 16 keys of 2,000,000 leaf events each (about 4 MiB
 * of exact buffer a key, 2 bytes an event), each key added to in turn as
 * a batch of many contexts arrives. Value: exact buffers in transparent
 * huge pages where the kernel allows them (the default, agg.c: HUGE);
 * baseline: the same in 4 KiB pages (small_pages). Also gives each way's
 * peak resident memory (rss_kib, baseline_rss_kib), which must not grow.
 *
 * Each figure is the least of 5 rounds, the two ways alternated, each
 * in a fresh process.
 *
 * Usage: bench_agg_store [EVENTS_PER_KEY] (default 2000000).
 */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "perf/bench_daemon_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEYS 16
#define ROUNDS 5
/* Events added to one key before the next: a batch's run of one context. */
#define RUN 64

/* One measurement in this process: ns of processor time per event, and
 * the peak resident KiB. Returns 0, or -1 when the events did not all go
 * in exactly. */
static int measure(int small, long per_key, double *ns, long *rss_kib)
{
    struct hra_agg a;
    struct hra_key *k[KEYS];
    struct rusage r0, r1;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    char name[32];

    hra_init(&a);
    a.small_pages = small;
    a.exact_cap = (uint64_t)per_key * 2 + 1000;
    a.max_bytes = (size_t)16 << 30;
    for (int i = 0; i < KEYS; i++) {
        uint32_t n, r;

        snprintf(name, sizeof name, "range.%d", i);
        n = hra_str(&a, "bench/agg");
        r = hra_str(&a, name);
        hra_rank_node(&a, n);
        hra_rank_range(&a, r);
        k[i] = hra_agg_key(&a, n, hra_str(&a, "op"),
                           hra_str(&a, "cpu"), 2, r);
        if (k[i] == NULL)
            return -1;
    }
    getrusage(RUSAGE_SELF, &r0);
    for (long done = 0; done < per_key; done += RUN) {
        for (int i = 0; i < KEYS; i++) {
            for (int j = 0; j < RUN; j++) {
                /* 10 to 40 ns, as empty scopes read on the fast path. */
                uint64_t v;

                x = x * 6364136223846793005ull + 1442695040888963407ull;
                v = 10 + (x >> 59);
                if (hra_add(&a, k[i], v, v) != 0)
                    return -1;
            }
        }
    }
    getrusage(RUSAGE_SELF, &r1);
    for (int i = 0; i < KEYS; i++)
        if (!k[i]->exact)
            return -1;
    *ns = ((double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
           (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
           (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
           (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6) *
          1e9 / ((double)KEYS * (double)((per_key + RUN - 1) / RUN * RUN));
    *rss_kib = r1.ru_maxrss;
    return 0;
}

/* Runs measure() in a child; its figures come back through a pipe. */
static void in_child(int small, long per_key, double *ns, long *rss_kib)
{
    FILE *f;
    int status;
    pid_t pid = bd_fork_piped(&f);

    if (pid == 0) {
        double v;
        long m;

        if (measure(small, per_key, &v, &m) != 0)
            _exit(1);
        printf("%.6f %ld\n", v, m);
        _exit(fflush(stdout) == 0 ? 0 : 1);
    }
    if (fscanf(f, "%lf %ld", ns, rss_kib) != 2)
        *ns = -1;
    fclose(f);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || *ns < 0)
        bd_die("a round failed (events not kept exactly)");
}

int main(int argc, char **argv)
{
    long per_key = argc > 1 ? atol(argv[1]) : 2000000;
    double best[2] = { 1e300, 1e300 };
    long rss[2] = { 0, 0 };

    if (per_key < 1000)
        bd_die("EVENTS_PER_KEY must be at least 1000");
    for (int r = 0; r < ROUNDS; r++) {
        for (int small = 0; small < 2; small++) {
            double ns;
            long m;

            in_child(small, per_key, &ns, &m);
            if (ns < best[small])
                best[small] = ns;
            if (m > rss[small])
                rss[small] = m;
        }
    }
    printf("{\"bench\":\"agg.exact_store\",\"value\":%.3f,\"unit\":\"ns\","
           "\"baseline\":%.3f,\"ratio\":%.3f,\"rss_kib\":%ld,"
           "\"baseline_rss_kib\":%ld}\n",
           best[0], best[1], best[0] / best[1], rss[0], rss[1]);
    return fflush(stdout) == 0 ? 0 : 1;
}
