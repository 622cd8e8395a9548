/*
 * hostrange-bench --control: what collecting costs the program, measured in
 * one process. Rounds of the same calls run with collection active (inside
 * a window, every range sampled and shipped to the daemon) and inactive (no
 * window: each scope one load and a branch), interleaved in a random order
 * so that drifts of the machine fall on both conditions alike. The ratio of
 * the medians of their per-call times comes with a bootstrap 95% confidence
 * interval (rounds resampled with replacement within each condition).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostrange.h"
#include "bench/bench.h"

#define MIN_ROUNDS 7u
#define MAX_ROUNDS 200u
#define MIN_ROUND_NS 1000000u
#define RESAMPLES 2000u

/* xorshift64*: enough randomness for an order and for resampling. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* A uniform index below n. */
static unsigned below(uint64_t *s, unsigned n)
{
    return (unsigned)((next_random(s) >> 11) % n);
}

/* The median of n values drawn with replacement from v. */
static double resampled_median(uint64_t *s, const double *v, unsigned n,
                               double *tmp)
{
    for (unsigned i = 0; i < n; i++)
        tmp[i] = v[below(s, n)];
    return bench_median(tmp, n);
}

/* The value at quantile q of sorted v[0..n) (linear between ranks). */
static double quantile(const double *v, unsigned n, double q)
{
    double pos = q * (double)(n - 1);
    unsigned r = (unsigned)pos;

    if (r + 1 >= n)
        return v[n - 1];
    return v[r] + (pos - (double)r) * (v[r + 1] - v[r]);
}

/* Fills the ratio and its interval from the rounds of each condition. */
static int bootstrap(uint64_t *seed, const double *act, const double *inact,
                     unsigned n, struct bench_control *out)
{
    double *tmp = malloc(n * sizeof *tmp);
    double *ratios = malloc(RESAMPLES * sizeof *ratios);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);

    if (tmp == NULL || ratios == NULL || a == NULL || b == NULL) {
        free(tmp);
        free(ratios);
        free(a);
        free(b);
        return -ENOMEM;
    }
    memcpy(a, act, n * sizeof *a);
    memcpy(b, inact, n * sizeof *b);
    out->active_ns = bench_median(a, n);
    out->inactive_ns = bench_median(b, n);
    out->ratio = out->active_ns / out->inactive_ns;
    for (unsigned i = 0; i < RESAMPLES; i++)
        ratios[i] = resampled_median(seed, act, n, tmp) /
                    resampled_median(seed, inact, n, tmp);
    bench_median(ratios, RESAMPLES); /* sorts them */
    out->lo = quantile(ratios, RESAMPLES, 0.025);
    out->hi = quantile(ratios, RESAMPLES, 0.975);
    free(tmp);
    free(ratios);
    free(a);
    free(b);
    return 0;
}

int bench_control_case(const struct bench_run *r, const char *node,
                       unsigned calls, unsigned rounds, unsigned target_ms,
                       unsigned max_calls, struct bench_control *out)
{
    const struct bench_case *c = r->c;
    uint64_t seed = hr_now_ns() ^ ((uint64_t)getpid() << 32) ^
                    0x9e3779b97f4a7c15ull;
    double *act = NULL, *inact = NULL;
    unsigned char *order = NULL;
    unsigned na = 0, ni = 0;
    char control_node[300];
    uint64_t ns = 0;
    int rc;

    /* Warm both conditions' paths once before anything is timed. */
    snprintf(control_node, sizeof control_node, "control/%s", node);
    hr_labels_set(control_node, bench_op_name(c->op),
                  bench_backend_name(c->backend), HR_PHASE_WARM);
    hr_window_begin();
    rc = bench_call(r);
    hr_window_end();
    if (rc != 0)
        return rc;
    calls = bench_block_max(r->c, calls);
    if (calls == 0)
        rc = bench_autorange(r, MIN_ROUND_NS,
                             bench_block_max(r->c, max_calls), &calls, &ns);
    else
        rc = bench_time_block(r, calls, 0, &ns);
    if (rc != 0)
        return rc;
    if (rounds == 0) {
        uint64_t fit = (uint64_t)target_ms * 1000000u / (2 * (ns + 1));

        rounds = fit > MAX_ROUNDS ? MAX_ROUNDS : (unsigned)fit;
    }
    if (rounds < MIN_ROUNDS)
        rounds = MIN_ROUNDS;

    act = calloc(rounds, sizeof *act);
    inact = calloc(rounds, sizeof *inact);
    order = malloc(2 * (size_t)rounds);
    if (act == NULL || inact == NULL || order == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* As many rounds of each, shuffled (Fisher-Yates). */
    for (unsigned i = 0; i < 2 * rounds; i++)
        order[i] = i < rounds;
    for (unsigned i = 2 * rounds - 1; i > 0; i--) {
        unsigned j = below(&seed, i + 1);
        unsigned char t = order[i];

        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < 2 * rounds && rc == 0; i++) {
        if (order[i]) {
            /* The window is opened and closed outside the timed calls,
             * and what the round collected is delivered before the next
             * one, so that shipping it slows no inactive round. */
            hr_window_begin();
            rc = bench_time_block(r, calls, 0, &ns);
            hr_window_end();
            hr_flush(10000);
            act[na++] = (double)ns / calls;
        } else {
            rc = bench_time_block(r, calls, 0, &ns);
            inact[ni++] = (double)ns / calls;
        }
    }
    if (rc != 0)
        goto out;
    out->rounds = rounds;
    out->calls = calls;
    rc = bootstrap(&seed, act, inact, rounds, out);
out:
    free(act);
    free(inact);
    free(order);
    return rc;
}
