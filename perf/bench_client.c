/*
 * Benchmarks of libhostrange (run by `make bench` under a private daemon).
 * Each prints one JSON line {"bench","value","unit","baseline","ratio"},
 * the baseline measured in the same run:
 *
 *   client.scope.active    ns per complete scope in a window, over 10
 *                          million scopes, including the waits for
 *                          shipping and the final flush to the daemon;
 *                          baseline: two reads of the clock in use
 *   client.scope.active.loop  the same loop without the final flush: what
 *                          the instrumented code itself pays while the
 *                          shipper and the daemon work beside it
 *   client.scope.hotpath   ns per scope in windows of 20,000 scopes, each
 *                          fitting in the thread's buffer and shipped
 *                          after it closes: the cost of measuring and
 *                          buffering alone, with no shipping beside it
 *   client.scope.context   ns per scope as hotpath measures it, but every
 *                          scope nested and entered under another parent
 *                          each time (a leaf site alternately under two
 *                          parents, so its calling context is found in the
 *                          thread's cache of contexts, never in the site's
 *                          last one): an upper bound of what tracking the
 *                          calling context costs a scope; baseline:
 *                          client.scope.hotpath in the same run (the aim:
 *                          at most 2 ns more)
 *   client.scope.nested3   the same as active with scopes nested three
 *                          deep, per scope
 *   client.scope.inactive  ns per scope outside any window; baseline: an
 *                          empty call that is not inlined
 *   client.scope.threads2  ns per scope per thread with two threads
 *                          collecting at once; baseline: one thread alone
 *
 * Each figure is the median of 5 repetitions (each of 10 million scopes,
 * or of the number given as the first argument).
 */
#include "config.h"

#include "perf/bench_report.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostrange.h"
#include "perf/bench_clock.h"
#include "proto/monotonic.h"

#define REPS 5

static hr_site s_a = HR_SITE_INIT("bench.a");
static hr_site s_b = HR_SITE_INIT("bench.b");
static hr_site s_c = HR_SITE_INIT("bench.c");
static hr_site s_leaf = HR_SITE_INIT("bench.leaf");

static double now_ns(void)
{
    return (double)hrp_mono_ns();
}

/* The median of the REPS rounds of a figure. */
static double median(double *v)
{
    return bench_median(v, REPS);
}


static __attribute__((noinline)) void empty_call(void)
{
    __asm__ volatile("" ::: "memory");
}

static void window(const char *node)
{
    hr_labels_set(node, "bench", "cpu", HR_PHASE_WARM);
    hr_window_begin();
}

/* ns per scope for n flat scopes in a window, flush included; the loop
 * alone in *loop. */
static double active(long n, double *loop)
{
    double t0 = now_ns();

    window("bench/client.scope.active");
    for (long i = 0; i < n; i++) {
        HR_SCOPE(sc, &s_a);
    }
    hr_window_end();
    *loop = (now_ns() - t0) / (double)n;
    hr_flush(600000);
    return (now_ns() - t0) / (double)n;
}

/* ns per scope, timing only windows of 20,000 scopes that fit in the
 * ring; each is shipped (flushed) before the next begins. */
static double hotpath(long n)
{
    double total = 0;
    long done = 0;

    while (done < n) {
        double t0;

        window("bench/client.scope.hotpath");
        t0 = now_ns();
        for (long i = 0; i < 20000; i++) {
            HR_SCOPE(sc, &s_a);
        }
        total += now_ns() - t0;
        hr_window_end();
        hr_flush(600000);
        done += 20000;
    }
    return total / (double)done;
}

/* As hotpath, with scopes two deep whose leaf changes parent at each
 * entry: windows of 20,000 scopes, 4 a round. */
static double context(long n)
{
    double total = 0;
    long done = 0;

    while (done < n) {
        double t0;

        window("bench/client.scope.context");
        t0 = now_ns();
        for (long i = 0; i < 5000; i++) {
            {
                HR_SCOPE(a, &s_a);
                HR_SCOPE(leaf, &s_leaf);
            }
            {
                HR_SCOPE(b, &s_b);
                HR_SCOPE(leaf, &s_leaf);
            }
        }
        total += now_ns() - t0;
        hr_window_end();
        hr_flush(600000);
        done += 20000;
    }
    return total / (double)done;
}

static double nested3(long n)
{
    double t0 = now_ns();

    window("bench/client.scope.nested3");
    for (long i = 0; i < n / 3; i++) {
        HR_SCOPE(a, &s_a);
        HR_SCOPE(b, &s_b);
        HR_SCOPE(c, &s_c);
    }
    hr_window_end();
    hr_flush(600000);
    return (now_ns() - t0) / (double)(n / 3 * 3);
}

static double inactive(long n)
{
    double t0 = now_ns();

    for (long i = 0; i < n; i++) {
        HR_SCOPE(sc, &s_a);
    }
    return (now_ns() - t0) / (double)n;
}

static double empty(long n)
{
    double t0 = now_ns();

    for (long i = 0; i < n; i++)
        empty_call();
    return (now_ns() - t0) / (double)n;
}

static void *scopes(void *arg)
{
    long n = *(long *)arg;

    for (long i = 0; i < n; i++) {
        HR_SCOPE(sc, &s_a);
    }
    return NULL;
}

/* ns per scope per thread, `threads` threads of n scopes at once. */
static double threaded(int threads, long n)
{
    pthread_t th[2];
    double t0 = now_ns();

    window(threads == 1 ? "bench/client.scope.threads1"
                        : "bench/client.scope.threads2");
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, scopes, &n);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    hr_window_end();
    hr_flush(600000);
    return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
    long n = 10000000;
    double v[REPS], b[REPS], l[REPS];
    hr_counters c;

    if (argc > 1)
        n = atol(argv[1]);
    if (!hr_enabled()) {
        fprintf(stderr, "bench_client: collection is off (HOSTRANGE=0)\n");
        return 1;
    }
    for (int r = 0; r < REPS; r++) {
        b[r] = bench_clock_pair(n);
        v[r] = active(n, &l[r]);
    }
    bench_print("client.scope.active", median(v), median(b));
    bench_print("client.scope.active.loop", median(l), median(b));
    for (int r = 0; r < REPS; r++) {
        b[r] = bench_clock_pair(n / 10);
        v[r] = hotpath(n / 10);
    }
    bench_print("client.scope.hotpath", median(v), median(b));
    for (int r = 0; r < REPS; r++) {
        b[r] = hotpath(n / 10);
        v[r] = context(n / 10);
    }
    bench_print("client.scope.context", median(v), median(b));
    for (int r = 0; r < REPS; r++) {
        b[r] = bench_clock_pair(n);
        v[r] = nested3(n);
    }
    bench_print("client.scope.nested3", median(v), median(b));
    for (int r = 0; r < REPS; r++) {
        b[r] = empty(n);
        v[r] = inactive(n);
    }
    bench_print("client.scope.inactive", median(v), median(b));
    for (int r = 0; r < REPS; r++) {
        b[r] = threaded(1, n / 2);
        v[r] = threaded(2, n / 2);
    }
    bench_print("client.scope.threads2", median(v), median(b));
    hr_counters_get(&c);
    if (c.lost != 0) {
        fprintf(stderr, "bench_client: %llu samples lost\n",
                (unsigned long long)c.lost);
        return 1;
    }
    return 0;
}
