/*
 * The cost of the whole pipeline, as the measured program's machine sees
 * it: total CPU time per range event of the instrumented processes (every
 * thread, the shipper included; getrusage of the finished child) plus
 * hostranged (its threads' time on a processor, bd_proc_cpu), against the
 * physical floor, two plain reads of the clock (bench_clock.h), measured
 * in the same run; each line also gives the ratio to two fenced reads (the
 * ordered path's floor: baseline_fenced, ratio_fenced), and the CPU of
 * the threads that ran the scopes against the plain floor (scope_ratio).
 *
 *   pipeline.cpu_per_event.thread1_exact   one thread, 16 keys, each
 *                                          below its exact cap
 *   pipeline.cpu_per_event.thread1_hist    one thread, one key past the
 *                                          exact cap (a histogram)
 *   pipeline.cpu_per_event.threads2        two threads, 16 keys
 *   pipeline.cpu_per_event.procs2          two processes at once, 16 keys
 *                                          each
 *   pipeline.cpu_per_event.thread1_busy    thread1_exact beside a thread
 *                                          of the same loop without the
 *                                          library (two plain reads of
 *                                          the clock and a 32-byte store
 *                                          into a ring of 2 MiB) that runs
 *                                          until the flush returns, its
 *                                          CPU left out (fast path only):
 *                                          one producer's events on a
 *                                          machine as busy as two
 *                                          producers make it, so that
 *                                          threads2 less this row is what
 *                                          a second producer costs the
 *                                          profiler itself
 *   pipeline.cpu_per_event.*.ordered       the same four on the ordered
 *                                          clock path (HOSTRANGE_CLOCK);
 *                                          the others run the fast one
 *   wire.bytes_per_event     bytes the daemon received per event (the
 *                            1-thread exact run); baseline: the bytes of
 *                            one sample in the client's ring
 *   daemon.ingest.clientsN   events per second of the daemon's CPU with
 *                            N = 1, 2, 4 client processes at once;
 *                            baseline: the 1-client figure
 *
 * Each row splits the client's CPU into the threads that ran the scopes
 * (scope_threads_ns) and the rest of the process (client_rest_ns: the
 * library's shipper, and the process's start and exit).
 *
 * Each configuration runs on a fresh private hostranged (no state
 * directory, as `hostrangectl record` runs it). The workload is empty
 * scopes in a loop, flat, over 16 sites (or one), so that everything but
 * the two clock reads is the profiler's own cost. Every event must reach
 * the daemon: a configuration whose counts do not add up fails the
 * benchmark. Each figure is the median of 3 runs.
 *
 * Usage: bench_pipeline [EVENTS] (per configuration, default 20000000).
 * Internally, `bench_pipeline --worker THREADS SITES EVENTS NODE [BUSY]`
 * is one instrumented process (with BUSY threads of the uninstrumented
 * loop beside its THREADS).
 */
#include "config.h"

#include "perf/bench_daemon_util.h"

#include "hostrange.h"
#include "perf/bench_clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 3
#define RING_SAMPLE_BYTES 32.0 /* struct hr__sample (client/client.h) */

static hr_site sites[16] = {
    HR_SITE_INIT("pipe.00"), HR_SITE_INIT("pipe.01"), HR_SITE_INIT("pipe.02"),
    HR_SITE_INIT("pipe.03"), HR_SITE_INIT("pipe.04"), HR_SITE_INIT("pipe.05"),
    HR_SITE_INIT("pipe.06"), HR_SITE_INIT("pipe.07"), HR_SITE_INIT("pipe.08"),
    HR_SITE_INIT("pipe.09"), HR_SITE_INIT("pipe.10"), HR_SITE_INIT("pipe.11"),
    HR_SITE_INIT("pipe.12"), HR_SITE_INIT("pipe.13"), HR_SITE_INIT("pipe.14"),
    HR_SITE_INIT("pipe.15"),
};


struct job {
    long events;
    int nsites;
};

/* CPU ns of the threads that ran scopes, summed (the rest of the
 * process's CPU is the library's shipper and the process's start). */
static _Atomic long long scope_cpu_ns;

/* The busy threads: their CPU ns, summed, and when to stop. */
static _Atomic long long busy_cpu_ns;
static _Atomic int busy_stop;

/* Samples in a busy thread's ring: as many as in a thread's ring in
 * libhostrange (a power of two). */
#define BUSY_RING 65536u

/* What a producer's scopes do, without the library: two plain reads of
 * the clock (bench_clock.h's floor) and a sample's 32 bytes stored into a
 * ring of BUSY_RING, in a loop. */
static void *busy(void *arg)
{
    uint64_t(*ring)[4] = calloc(BUSY_RING, sizeof *ring);
    struct timespec ts;
    uint64_t i = 0;

    (void)arg;
    if (ring == NULL)
        bd_die("out of memory");
    while (!busy_stop) {
        for (int j = 0; j < 4096; j++, i++) {
#if defined(__x86_64__) || defined(__i386__)
            uint64_t a = __rdtsc();
            uint64_t b = __rdtsc();
#else
            uint64_t a = hr_now_ns();
            uint64_t b = hr_now_ns();
#endif
            uint64_t *s = ring[i & (BUSY_RING - 1)];

            s[0] = a;
            s[1] = b - a;
            s[2] = i;
            s[3] = 0;
        }
    }
    bench_clock_sink += ring[i & (BUSY_RING - 1)][1];
    free(ring);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    busy_cpu_ns += (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return NULL;
}

static void *scopes(void *arg)
{
    const struct job *j = arg;
    struct timespec ts;
    int k = 0;

    for (long i = 0; i < j->events; i++) {
        HR_SCOPE(sc, &sites[k]);
        if (++k == j->nsites)
            k = 0;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    scope_cpu_ns += (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return NULL;
}

/* One instrumented process: THREADS threads of EVENTS / THREADS scopes in
 * one window, then a flush, with `nbusy` busy threads running from before
 * the first scope until the flush returns. */
static int worker(int threads, int nsites, long events, const char *node,
                  int nbusy)
{
    pthread_t th[8], bt[8];
    struct job j = { events / threads, nsites };
    int rc = 0;

    if (threads < 1 || threads > 8 || nbusy < 0 || nbusy > 8)
        return 2;
    if (hr_labels_set(node, "pipeline", "cpu", HR_PHASE_WARM) != 0 ||
        hr_window_begin() != 0)
        return 1;
    for (int i = 0; i < nbusy; i++)
        pthread_create(&bt[i], NULL, busy, NULL);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, scopes, &j);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    hr_window_end();
    if (hr_flush(600000) != 0)
        rc = 1;
    busy_stop = 1;
    for (int i = 0; i < nbusy; i++)
        pthread_join(bt[i], NULL);
    if (rc != 0)
        return rc;
    /* The parent reads the scope and busy threads' CPU from our standard
     * output. */
    printf("%lld %lld\n", (long long)scope_cpu_ns, (long long)busy_cpu_ns);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* The program the workers run: this one's executable, not argv[0], which
 * in the build tree is libtool's wrapper script (a shell and sed, about
 * 100 ms of CPU per start, that an instrumented program does not pay). */
static char self_path[4096];

struct result {
    double client_ns, program_ns, daemon_ns, bytes, daemon_eps;
};

static uint64_t stat_u64(const struct bd_daemon *d, int bytes)
{
    Hostrange__ControlReply *r = bd_stats(d);
    uint64_t v = 0;

    if (bytes) {
        for (size_t i = 0; i < r->stats->n_rejections; i++) {
            if (r->stats->rejections[i]->value != 0)
                bd_die("the daemon rejected batches (%s)",
                       r->stats->rejections[i]->name);
        }
        v = r->stats->ingest_bytes;
    } else {
        v = r->stats->events;
    }
    hostrange__control_reply__free_unpacked(r, NULL);
    return v;
}

/* Runs `procs` workers of `threads` threads at once on a fresh daemon,
 * each with `nbusy` busy threads (whose CPU is left out). */
static struct result run(int procs, int threads, int nsites, long events,
                         const char *const *extra, int nbusy)
{
    struct bd_daemon d;
    struct result res = { 0 };
    double d0, d1, client = 0, program = 0;
    uint64_t got;
    char targ[16], sarg[16], earg[32], barg[16];

    bd_daemon_start(&d, 0, extra);
    setenv("HOSTRANGE_RUNTIME_DIR", d.dir, 1);
    snprintf(targ, sizeof targ, "%d", threads);
    snprintf(sarg, sizeof sarg, "%d", nsites);
    snprintf(earg, sizeof earg, "%ld", events / procs);
    snprintf(barg, sizeof barg, "%d", nbusy);
    d0 = bd_proc_cpu(d.pid);
    double w0 = bd_now();
    pid_t pids[8];
    FILE *outs[8];
    for (int p = 0; p < procs; p++) {
        char node[32];
        snprintf(node, sizeof node, "pipeline/%d", p);
        pids[p] = bd_fork_piped(&outs[p]);
        if (pids[p] == 0) {
            execl(self_path, self_path, "--worker", targ, sarg, earg, node,
                  barg, (char *)NULL);
            _exit(127);
        }
    }
    for (int p = 0; p < procs; p++) {
        struct rusage ru;
        long long scope_ns = -1, busy_ns = -1;
        int status;

        if (fscanf(outs[p], "%lld %lld", &scope_ns, &busy_ns) != 2 ||
            busy_ns < 0)
            scope_ns = -1;
        fclose(outs[p]);
        if (wait4(pids[p], &status, 0, &ru) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0 || scope_ns < 0)
            bd_die("a worker failed");
        program += (double)scope_ns / 1e9;
        /* The busy threads are not the profiler's. */
        client += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 -
                  (double)busy_ns / 1e9;
    }
    (void)w0;
    d1 = bd_proc_cpu(d.pid);
    got = stat_u64(&d, 0);
    /* Each range event is two values (inclusive and self). */
    if (got != 2 * (uint64_t)(events / procs / threads * threads * procs))
        bd_die("the daemon holds %llu values, expected %llu",
               (unsigned long long)got,
               2ull * (unsigned long long)(events / procs / threads * threads *
                                           procs));
    got = (uint64_t)(events / procs / threads * threads * procs);
    res.client_ns = client * 1e9 / (double)got;
    res.program_ns = program * 1e9 / (double)got;
    res.daemon_ns = (d1 - d0) * 1e9 / (double)got;
    res.bytes = (double)stat_u64(&d, 1) / (double)got;
    res.daemon_eps = d1 > d0 ? (double)got / (d1 - d0) : 0;
    bd_daemon_stop(&d);
    return res;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double *v)
{
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

/* The floors (bench_clock.h): two plain reads of the clock, the physical
 * one, and two fenced reads, the ordered path's. */
static double floor_plain, floor_fenced;

/* One configuration's line: total CPU per event against the plain floor
 * (ratio) and the fenced one (ratio_fenced), and the scope threads' CPU
 * per event against the plain floor (scope_ratio). */
static void report_cpu(const char *name, struct result *r)
{
    double tot[RUNS], cl[RUNS], pg[RUNS], sh[RUNS], dm[RUNS], t;

    for (int i = 0; i < RUNS; i++) {
        tot[i] = r[i].client_ns + r[i].daemon_ns;
        cl[i] = r[i].client_ns;
        pg[i] = r[i].program_ns;
        sh[i] = r[i].client_ns - r[i].program_ns;
        dm[i] = r[i].daemon_ns;
    }
    t = median3(tot);
    printf("{\"bench\":\"%s\",\"value\":%.2f,\"unit\":\"ns\","
           "\"baseline\":%.2f,\"ratio\":%.3f,\"client_ns\":%.2f,"
           "\"scope_threads_ns\":%.2f,\"scope_ratio\":%.3f,"
           "\"client_rest_ns\":%.2f,\"daemon_ns\":%.2f,"
           "\"baseline_fenced\":%.2f,\"ratio_fenced\":%.3f}\n",
           name, t, floor_plain, t / floor_plain, median3(cl), median3(pg),
           median3(pg) / floor_plain, median3(sh), median3(dm), floor_fenced,
           t / floor_fenced);
    fflush(stdout);
}

/* The four configurations on the clock path `path` (fast or ordered: the
 * workers' HOSTRANGE_CLOCK), their lines named prefix.CONFIG; the results
 * of the first in first (for the wire and ingest figures). */
static void configurations(const char *path, const char *suffix, long n,
                           const char *const *exact,
                           const char *const *hist, struct result *first)
{
    struct result r[RUNS];
    char name[96];

    setenv("HOSTRANGE_CLOCK", path, 1);
    for (int i = 0; i < RUNS; i++)
        first[i] = run(1, 1, 16, n, exact, 0);
    snprintf(name, sizeof name, "pipeline.cpu_per_event.thread1_exact%s",
             suffix);
    report_cpu(name, first);
    for (int i = 0; i < RUNS; i++)
        r[i] = run(1, 1, 1, n, hist, 0);
    snprintf(name, sizeof name, "pipeline.cpu_per_event.thread1_hist%s",
             suffix);
    report_cpu(name, r);
    for (int i = 0; i < RUNS; i++)
        r[i] = run(1, 2, 16, n, exact, 0);
    snprintf(name, sizeof name, "pipeline.cpu_per_event.threads2%s", suffix);
    report_cpu(name, r);
    for (int i = 0; i < RUNS; i++)
        r[i] = run(2, 1, 16, n, exact, 0);
    snprintf(name, sizeof name, "pipeline.cpu_per_event.procs2%s", suffix);
    report_cpu(name, r);
    if (strcmp(path, "fast") != 0)
        return;
    memcpy(first + RUNS, r, sizeof r);
    for (int i = 0; i < RUNS; i++)
        r[i] = run(1, 1, 16, n, exact, 1);
    report_cpu("pipeline.cpu_per_event.thread1_busy", r);
}

int main(int argc, char **argv)
{
    static const char *const hist[] = { "--exact-cap=10000", NULL };
    /* The exact configurations keep every key below its cap (each of the
     * 16 keys gets a sixteenth of the events, in each population). */
    static char capbuf[48];
    const char *exact[] = { capbuf, NULL };
    struct result r[2 * RUNS], ro[2 * RUNS];
    double fl[RUNS], v[RUNS], base[RUNS];
    long n = 20000000;

    if ((argc == 6 || argc == 7) && strcmp(argv[1], "--worker") == 0)
        return worker(atoi(argv[2]), atoi(argv[3]), atol(argv[4]), argv[5],
                      argc == 7 ? atoi(argv[6]) : 0);
    if (argc > 1)
        n = atol(argv[1]);
    if (n < 1000)
        bd_die("EVENTS must be at least 1000");
    snprintf(capbuf, sizeof capbuf, "--exact-cap=%ld", n / 16 * 2 + 1000);
    bd_self_exe(self_path, sizeof self_path, argv[0]);
    if (!hr_enabled())
        bd_die("collection is off (HOSTRANGE=0)");
    for (int i = 0; i < RUNS; i++)
        fl[i] = bench_clock_pair_fenced(10000000);
    floor_fenced = median3(fl);
    for (int i = 0; i < RUNS; i++)
        fl[i] = bench_clock_pair(10000000);
    floor_plain = median3(fl);

    configurations("fast", "", n, exact, hist, r);
    for (int i = 0; i < RUNS; i++)
        v[i] = r[i].bytes;
    bd_report("wire.bytes_per_event", median3(v), "bytes", RING_SAMPLE_BYTES);
    for (int i = 0; i < RUNS; i++)
        base[i] = r[i].daemon_eps;
    configurations("ordered", ".ordered", n, exact, hist, ro);
    setenv("HOSTRANGE_CLOCK", "fast", 1);
    bd_report("daemon.ingest.clients1", median3(base), "events/s",
              median3(base));
    for (int i = 0; i < RUNS; i++)
        v[i] = r[RUNS + i].daemon_eps;
    bd_report("daemon.ingest.clients2", median3(v), "events/s",
              median3(base));
    for (int i = 0; i < RUNS; i++)
        v[i] = run(4, 1, 16, n, exact, 0).daemon_eps;
    bd_report("daemon.ingest.clients4", median3(v), "events/s",
              median3(base));
    return 0;
}
