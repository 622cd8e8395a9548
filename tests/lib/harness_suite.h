/*
 * A made-up history of a suite the size of a real one, for the tests and
 * the benchmark of history detect: `nodes` test nodes, each a cold call
 * and a warm window through HARNESS_SUITE_LAYERS nested layer ranges
 * ("layer0" calls "layer1" ... calls "layer9"), so 40 series a node (2
 * phases x 10 ranges x inclusive and self), over `runs` runs.
 *
 * The noise, per run: the whole run slower or faster (normal, sd
 * `run_sd`), each node's part of it too (sd run_sd / 2); a warm value is
 * a median of many samples (normal noise of sd 0.3%) read to the nearest
 * clock step, one in five on a half step (a median of an even count); a
 * cold value is one sample (sd 5%, one in 30 an outlier up to 3 times
 * as slow) read as the difference of two clock reads (the step dithered).
 * The true self times are drawn per node, log-uniform: warm from 15 to
 * 400 ns (many are a few clock steps), cold 3 to 20 times as long. A step
 * makes a layer's self time (both phases) slower from a run on by a share
 * of its node's warm inclusive time of layer0; the layers above it
 * (their inclusive times) move with it. Deterministic in `seed`.
 */
#ifndef HOSTRANGE_HARNESS_SUITE_H
#define HOSTRANGE_HARNESS_SUITE_H

#include <stddef.h>
#include <stdint.h>

#define HARNESS_SUITE_LAYERS 10
#define HARNESS_SUITE_SERIES (2 * 2 * HARNESS_SUITE_LAYERS)
#define HARNESS_SUITE_STEP_NS 10.0

struct harness_suite_step {
    size_t node, layer, run; /* from run `run` on */
    double share;            /* of the node's warm inclusive layer0 time */
};

struct harness_suite {
    size_t nodes, runs;
    double run_sd;
    uint64_t seed;
    const struct harness_suite_step *steps;
    size_t nsteps;
};

/*
 * Calls fn once per series, node by node: its key (node "nK", operator
 * "gemm", backend "cpu", phase, range, metric) and its values x[0..runs).
 * A non-zero return of fn stops and is returned.
 */
int harness_suite_each(const struct harness_suite *s,
                       int (*fn)(void *ctx, const char *const *key,
                                 const double *x, size_t n),
                       void *ctx);

/* The machine of the runs harness_suite_write writes. */
#define HARNESS_SUITE_MACHINE "Test CPU 3000, 4 cores; clock fast"

/*
 * Writes suite s as a history at dsn (harness_suite_db.c, through
 * lib/history): run r of id "s" and r in 31 hex digits, commit "cR", a
 * minute after the run before, on HARNESS_SUITE_MACHINE; a cold point of
 * count 1, a warm one of 1000. Returns 0, or non-zero with err filled.
 */
int harness_suite_write(const struct harness_suite *s, const char *dsn,
                        char *err, size_t errlen);

#endif
