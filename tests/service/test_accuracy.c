/*
 * The accuracy of hostrange's figures, on the real clock, for the shapes
 * where an observer's cost is largest against what it measures:
 *
 *   fanout  a parent with 32 children of about 100 ns of work each, and
 *           2 us of its own;
 *   chain   6 ranges nested in a line, about 300 ns of work of their own
 *           each;
 *   leaves  a parent with 500 ns of its own and short leaves of 50, 100,
 *           200 and 400 ns;
 *   mixed   a parent with 1 us of its own and three children of 100 ns,
 *           1 us and 10 us.
 *
 * The work is a dependent chain of multiplications, whose duration does not
 * depend on a clock. This program, run with --workload SHAPE CALLS, first
 * times every range's work without any instrumentation, in blocks (the
 * truth: each range's inclusive time, and its own time = inclusive less its
 * children's, timed as its own work with each child's call returning at
 * once), then makes CALLS calls of the shape in a window, then as
 * many under the reference design (tests/lib/harness_refdesign.h, the
 * in-process profiler hostrange replaces). It prints the truths, the
 * reference design's medians and the share of the wall time it had the
 * processor.
 *
 * On the default clock path (fast), each test calibrates (hostrange-bench
 * --calibrate), runs a shape, and checks every range's median, inclusive
 * and self:
 *   - raw (what dump prints by default): at least as close to its truth as
 *     the reference design's median of the same run (fanout, chain and
 *     leaves: the shapes of short ranges), to within one step of the
 *     clock (both medians are readings of a clock that advances in steps,
 *     the calibration's step, so a distance to the truth is known to a
 *     step and no better) plus how far the calibration saw the plain end
 *     reads run ahead of the work (-bias_ns when it is below 0): on a
 *     processor that executes a plain read that far ahead of a dependent
 *     chain, a plain read of that work reads low by about as much, whatever
 *     the library around it;
 *   - corrected (dump --correct-observer): within max(5%, 1.5 clock steps)
 *     of its truth, the step being the calibration's. A row flagged
 *     unstable or resolution_limited may miss that bound, but it must
 *     then be within what the flag declares: the uncertainty the daemon
 *     states for a fast-path correction (observer_ns plus the larger of
 *     the calibration's empty_ns and |bias_ns| plus a clock step,
 *     lib/agg/observer.h) and half a step more: 1.5 clock steps in all.
 *     A flag widens a row's bound to the daemon's own claim; it never
 *     excuses a row.
 * On the ordered path (HOSTRANGE_CLOCK=ordered, calibration and workload),
 * every corrected median must be within max(5%, 1.5 clock steps), flags or
 * not. Each attempt prints its figures (lines `accuracy ...`).
 *
 * A machine too busy to give the workload the processor makes figures
 * that are not the code's: an attempt that misses is run again, up to
 * ATTEMPTS times; the test then skips when an attempt lacked the
 * processor (under 95% of its wall time), and fails otherwise. A skip for
 * a busy machine prints a line `hostrange-busy-skip: ...`, which .ci/run
 * puts in CI's summary. Under valgrind or
 * AddressSanitizer it skips: their checks take part in every timing, so
 * the truth is theirs.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostrange.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_refdesign.h"
#include "tests/lib/harness_rows.h"

#define MAX_ROWS 64
#define MAX_RANGES 8
#define ATTEMPTS 8

static char g_bench[4096];

/* --- the work ----------------------------------------------------------- */

static volatile uint64_t g_sink;
/* Steps of the chain per ns, measured at start. */
static double g_steps_per_ns = 1.0;

static __attribute__((noinline)) void work(unsigned steps)
{
    uint64_t x = g_sink;

    for (unsigned i = 0; i < steps; i++) {
        x = x * 0x9E3779B97F4A7C15ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    g_sink = x;
}

static unsigned steps_for(double ns)
{
    double s = ns * g_steps_per_ns;

    return s < 1 ? 1u : (unsigned)(s + 0.5);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* This thread's processor time, in ns. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* --- the shapes ----------------------------------------------------------- */

/* A range of a shape: its site, its own work before and after its
 * children, and its children (indices into the shape's ranges). */
struct rdef {
    const char *name;
    double own_before_ns, own_after_ns;
    int nchild_kinds;
    int child[4];
    int repeat; /* each child kind is called this many times */
};

struct shape {
    const char *name;
    int n;
    struct rdef r[MAX_RANGES];
};

static const struct shape g_shapes[] = {
    { "fanout", 2, {
        { "fanout.parent", 1000, 1000, 1, { 1 }, 32 },
        { "fanout.child", 100, 0, 0, { 0 }, 0 },
    } },
    { "chain", 6, {
        { "chain.1", 150, 150, 1, { 1 }, 1 },
        { "chain.2", 150, 150, 1, { 2 }, 1 },
        { "chain.3", 150, 150, 1, { 3 }, 1 },
        { "chain.4", 150, 150, 1, { 4 }, 1 },
        { "chain.5", 150, 150, 1, { 5 }, 1 },
        { "chain.6", 300, 0, 0, { 0 }, 0 },
    } },
    { "leaves", 5, {
        { "leaves.parent", 250, 250, 4, { 1, 2, 3, 4 }, 1 },
        { "leaves.50ns", 50, 0, 0, { 0 }, 0 },
        { "leaves.100ns", 100, 0, 0, { 0 }, 0 },
        { "leaves.200ns", 200, 0, 0, { 0 }, 0 },
        { "leaves.400ns", 400, 0, 0, { 0 }, 0 },
    } },
    { "mixed", 4, {
        { "mixed.parent", 500, 500, 3, { 1, 2, 3 }, 1 },
        { "mixed.100ns", 100, 0, 0, { 0 }, 0 },
        { "mixed.1us", 1000, 0, 0, { 0 }, 0 },
        { "mixed.10us", 10000, 0, 0, { 0 }, 0 },
    } },
};

static hr_site g_sites[sizeof g_shapes / sizeof g_shapes[0]][MAX_RANGES];
static unsigned g_before[sizeof g_shapes / sizeof g_shapes[0]][MAX_RANGES];
static unsigned g_after[sizeof g_shapes / sizeof g_shapes[0]][MAX_RANGES];

/* How a range is measured: not at all (the truth), by hostrange, or by
 * the reference design. HOLLOW: its own work only, each child called but
 * returning at once (EMPTY), for the truth of its own time. */
enum inst { BARE, HOSTRANGE, REFERENCE, HOLLOW, EMPTY };

/* Range i of shape s, measured as inst says. */
static void run_range(int s, int i, enum inst inst)
{
    const struct rdef *d = &g_shapes[s].r[i];
    enum inst below = inst == HOLLOW ? EMPTY : inst;
    hr_scope sc = { 0, 0, 0 };

    if (inst == EMPTY)
        return;
    if (inst == HOSTRANGE)
        sc = hr_begin(&g_sites[s][i]);
    else if (inst == REFERENCE)
        harness_refd_begin((uint32_t)i);
    work(g_before[s][i]);
    for (int k = 0; k < d->nchild_kinds; k++) {
        for (int j = 0; j < d->repeat; j++)
            run_range(s, d->child[k], below);
    }
    if (g_after[s][i] > 0)
        work(g_after[s][i]);
    if (inst == HOSTRANGE)
        hr_end(sc);
    else if (inst == REFERENCE)
        harness_refd_end();
}

/* The time of range i of shape s measured as inst says: the shortest of
 * 15 blocks of about 1 ms (another process can only make a block
 * longer). */
static double shortest(int s, int i, enum inst inst)
{
    double best = 1e300, one;
    unsigned reps;

    one = now();
    run_range(s, i, inst);
    one = now() - one;
    reps = (unsigned)(1e6 / (one + 1)) + 5;
    for (int r = 0; r < 15; r++) {
        double t0 = now(), t;

        for (unsigned k = 0; k < reps; k++)
            run_range(s, i, inst);
        t = (now() - t0) / reps;
        if (t < best)
            best = t;
    }
    return best;
}

/* The time of range i of shape s without instrumentation. */
static double truth_incl(int s, int i)
{
    return shortest(s, i, BARE);
}

/*
 * Its own time: its inclusive time less its children's, measured
 * directly, as its own work with each child called and returning at once,
 * less those calls (a child's call is the child's, as in its inclusive
 * truth). The difference of two inclusive truths would carry the noise
 * of both, which on a parent of 12 us with 1 us of its own is a fifth of
 * it.
 */
static double truth_own(int s, int i)
{
    const struct rdef *d = &g_shapes[s].r[i];
    double own;

    if (d->nchild_kinds == 0)
        return truth_incl(s, i);
    own = shortest(s, i, HOLLOW);
    for (int k = 0; k < d->nchild_kinds; k++)
        own -= d->repeat * shortest(s, d->child[k], EMPTY);
    return own;
}

static int shape_index(const char *name)
{
    for (size_t s = 0; s < sizeof g_shapes / sizeof g_shapes[0]; s++) {
        if (strcmp(g_shapes[s].name, name) == 0)
            return (int)s;
    }
    return -1;
}

/* The number of ranges of one call of shape s from its range i. */
static size_t ranges_per_call(int s, int i)
{
    const struct rdef *d = &g_shapes[s].r[i];
    size_t n = 1;

    for (int k = 0; k < d->nchild_kinds; k++)
        n += (size_t)d->repeat * ranges_per_call(s, d->child[k]);
    return n;
}

/* Makes `calls` calls of shape s under the reference design, after the
 * window, and prints its medians: `ref NAME INCLUSIVE SELF`. Returns 0, or
 * 1 when it could not. */
static int reference(int s, int calls)
{
    const struct shape *sh = &g_shapes[s];
    struct harness_refd_stat st[2 * MAX_RANGES];

    if (harness_refd_reserve((size_t)calls * ranges_per_call(s, 0), 0) != 0)
        return 1;
    for (int k = 0; k < calls; k++)
        run_range(s, 0, REFERENCE);
    if (harness_refd_dropped() != 0 ||
        harness_refd_report(st, (uint32_t)sh->n) != 0)
        return 1;
    for (int i = 0; i < sh->n; i++)
        printf("ref %s %.2f %.2f\n", sh->r[i].name, st[2 * i].median,
               st[2 * i + 1].median);
    harness_refd_free();
    return 0;
}

/*
 * Runs shape `name`: times its ranges without instrumentation, then makes
 * CALLS calls of it in a window, then as many under the reference design.
 * With by_path, the window is one of HR_PHASE_BY_PATH, one call more,
 * under node tests/accuracy::cold-NAME: the first call of each calling
 * path is the cold one, the process's first use of its sites and paths
 * (and the reference design is not run).
 */
static int workload(const char *name, int calls, int by_path)
{
    int s = shape_index(name);
    const struct shape *sh;
    double incl[MAX_RANGES], own[MAX_RANGES], w0, c0, t;
    char node[128];

    if (s < 0)
        return 2;
    sh = &g_shapes[s];
    /* Steps per ns, from the shortest of 5 blocks of a million. */
    t = 1e300;
    for (int r = 0; r < 5; r++) {
        double t0 = now();

        work(1000000);
        t = fmin(t, now() - t0);
    }
    g_steps_per_ns = 1e6 / t;
    for (int i = 0; i < sh->n; i++) {
        g_sites[s][i].name = sh->r[i].name;
        g_before[s][i] = steps_for(sh->r[i].own_before_ns);
        g_after[s][i] = sh->r[i].own_after_ns > 0
                            ? steps_for(sh->r[i].own_after_ns)
                            : 0;
    }
    for (int i = 0; i < sh->n; i++) {
        incl[i] = truth_incl(s, i);
        own[i] = truth_own(s, i);
    }
    snprintf(node, sizeof node, "tests/accuracy::%s%s",
             by_path ? "cold-" : "", name);
    if (by_path)
        calls++;
    if (hr_labels_set(node, "synthetic", "cpu",
                      by_path ? HR_PHASE_BY_PATH : HR_PHASE_WARM) != 0 ||
        hr_window_begin() != 0) {
        fprintf(stderr, "test_accuracy: cannot open a window\n");
        return 1;
    }
    w0 = now();
    c0 = cpu_now();
    for (int k = 0; k < calls; k++)
        run_range(s, 0, HOSTRANGE);
    t = now() - w0;
    c0 = cpu_now() - c0;
    hr_window_end();
    /* Shipped before the reference design runs, so that the shipper does
     * not take the processor from it. */
    if (hr_flush(30000) != 0)
        return 1;
    if (!by_path) {
        double w1 = now(), c1 = cpu_now();

        if (reference(s, calls) != 0) {
            fprintf(stderr, "test_accuracy: the reference design failed\n");
            return 1;
        }
        t += now() - w1;
        c0 += cpu_now() - c1;
    }
    for (int i = 0; i < sh->n; i++)
        printf("truth %s %.2f %.2f\n", sh->r[i].name, incl[i], own[i]);
    printf("cpu_share %.4f\n", c0 / t);
    return 0;
}

/* --- the test ------------------------------------------------------------- */

static void run_ok(char *const argv[], const char *dir, struct harness_run *r)
{
    harness_run(argv, dir, 300, r);
    if (!harness_exited(r->status, 0))
        fail_msg("%s: status 0x%x: %s", argv[0], r->status, r->err);
}

static double stat_num(const char *stats, const char *key)
{
    char buf[64];

    return strtod(harness_stat_str(stats, key, buf, sizeof buf), NULL);
}

/* The row of range and metric, and of phase unless it is NULL. */
static const struct flat *find(const struct flat *rows, int n,
                               const char *range, const char *metric,
                               const char *phase)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "range"), range) == 0 &&
            strcmp(flat_get(&rows[i], "metric"), metric) == 0 &&
            (phase == NULL || strcmp(flat_get(&rows[i], "phase"), phase) == 0))
            return &rows[i];
    }
    return NULL;
}

/*
 * Runs this program as `self MODE NAME CALLS` (the workload of a shape, in
 * a process of its own) against the daemon of dir: its output in *r, its
 * share of the processor in *share.
 */
static void run_workload(const char *dir, const char *self, const char *mode,
                         const char *name, const char *calls,
                         struct harness_run *r, double *share)
{
    char *argv[] = { (char *)self, (char *)mode, (char *)name, (char *)calls,
                     NULL };
    const char *p;

    run_ok(argv, dir, r);
    p = strstr(r->out, "cpu_share ");
    assert_non_null(p);
    *share = strtod(p + 10, NULL);
}

/* The rows of node in the daemon of dir, dumped with the options of dump
 * `opts` (NULL-terminated, at most 8), into rows; returns their number. */
static int node_rows(const char *dir, const char *node,
                     const char *const *opts, struct flat *rows)
{
    char *a[16] = { (char *)harness_program("HOSTRANGECTL"), "-r",
                    (char *)dir, "dump" };
    struct harness_run d;
    int k = 4, n;

    for (int i = 0; opts[i] != NULL && i < 8; i++)
        a[k++] = (char *)opts[i];
    a[k++] = "--node";
    a[k++] = (char *)node;
    a[k] = NULL;
    run_ok(a, NULL, &d);
    n = flat_parse_rows(d.out, rows, MAX_ROWS);
    harness_run_free(&d);
    return n;
}

/* Drops node's keys from the daemon of dir, for the next attempt. */
static void reset_node(const char *dir, const char *node)
{
    char *a[] = { (char *)harness_program("HOSTRANGECTL"), "-r", (char *)dir,
                  "reset", "--node", (char *)node, NULL };
    struct harness_run d;

    run_ok(a, NULL, &d);
    harness_run_free(&d);
}

/* What an attempt on a clock path checks (check_shape sets it). */
struct path_check {
    const char *path;       /* HOSTRANGE_CLOCK of calibration and workload */
    const char *label;      /* the calibration's label */
    int raw_vs_reference;   /* raw medians at least as close to the truth
                               as the reference design's, to a clock
                               step */
    int flagged_may_miss;   /* a row flagged unstable or
                               resolution_limited is held to the
                               uncertainty the daemon states for it (the
                               fast path's) instead of 5% */
};
static const struct path_check *g_check;
/* The path the daemon named the latest calibration's (calibrated_attempt):
 * g_check's, or waiting for the fast path's waiting reads; the rows it
 * corrects say the same. */
static char g_daemon_path[16];
/* What the latest calibration says of the reads (calibrated_attempt): the
 * larger of empty_ns and |bias_ns|, the reads' part of the uncertainty a
 * fast-path correction is stated to have (lib/agg/observer.h). */
static double g_reads_uncertainty_ns;
/* How far the calibration saw plain end reads run ahead of the work they
 * end (-bias_ns where bias_ns < 0, else 0): a raw median on the fast path
 * reads low by about that much, a property of the processor, not of the
 * library's code (doc/accuracy.md). */
static double g_read_ahead_ns;

/* The figure after `key NAME ` in out, for range name and column col (0:
 * inclusive, 1: self); NAN when missing. */
static double line_value(const char *out, const char *key, const char *name,
                         int col)
{
    size_t kn = strlen(key), nn = strlen(name);

    for (const char *l = out; (l = strstr(l, key)) != NULL; l++) {
        double v[2];

        if ((l != out && l[-1] != '\n') || l[kn] != ' ' ||
            strncmp(l + kn + 1, name, nn) != 0 || l[kn + 1 + nn] != ' ')
            continue;
        if (sscanf(l + kn + 1 + nn, "%lf %lf", &v[0], &v[1]) == 2)
            return v[col];
    }
    return NAN;
}

static int flag_set(const struct flat *row, const char *field)
{
    return strcmp(flat_get(row, field), "true") == 0;
}

/*
 * Runs shape `name` once against the daemon of dir and compares, as
 * g_check says. Returns 0 when every figure is within bounds, 1 when one
 * is not; *share is the workload's share of the processor. Every figure is
 * printed (`accuracy PATH RANGE METRIC truth ref raw corrected FLAGS`),
 * and the misses.
 */
static int attempt(const char *dir, const char *self, const char *name,
                   double step, double *share)
{
    const char *c_opts[] = { "--correct-observer", "--fields", "observer",
                             "--calibration", g_check->label, NULL };
    const char *r_opts[] = { "--fields", "observer", "--calibration",
                             g_check->label, NULL };
    static struct flat crows[MAX_ROWS], rrows[MAX_ROWS];
    char node[128];
    struct harness_run r;
    int nc, nr, bad = 0, nt = 0;

    snprintf(node, sizeof node, "tests/accuracy::%s", name);
    run_workload(dir, self, "--workload", name, "3000", &r, share);
    nc = node_rows(dir, node, c_opts, crows);
    nr = node_rows(dir, node, r_opts, rrows);
    for (const char *l = r.out; (l = strstr(l, "truth ")) != NULL; l++) {
        char range[64];
        double truth[2];

        if (sscanf(l, "truth %63s %lf %lf", range, &truth[0], &truth[1]) != 3)
            continue;
        nt++;
        for (int m = 0; m < 2; m++) {
            const char *metric = m ? "self" : "inclusive";
            const struct flat *c = find(crows, nc, range, metric, NULL);
            const struct flat *w = find(rrows, nr, range, metric, NULL);
            double corr, raw, ref, tol = fmax(0.05 * truth[m], 1.5 * step);
            double stated;
            int flagged, held;

            assert_non_null(c);
            assert_non_null(w);
            assert_string_equal(flat_get(c, "corrected"), "true");
            assert_string_equal(flat_get(c, "clock_path"), g_daemon_path);
            corr = strtod(flat_get(c, "median"), NULL);
            raw = strtod(flat_get(w, "median"), NULL);
            ref = line_value(r.out, "ref", range, m);
            assert_false(isnan(ref));
            flagged = flag_set(c, "unstable") ||
                      flag_set(c, "resolution_limited");
            print_message("accuracy %s %s %s truth %.1f ref %.1f raw %.1f "
                          "corrected %.1f%s%s\n", g_check->path, range,
                          metric, truth[m], ref, raw, corr,
                          flag_set(c, "unstable") ? " unstable" : "",
                          flag_set(c, "resolution_limited")
                              ? " resolution_limited"
                              : "");
            /* A flagged row is held to the flag's claim: corrected to
             * within observer_ns plus the reads' uncertainty, read on a
             * clock of steps. */
            held = g_check->flagged_may_miss && flagged;
            stated = held ? strtod(flat_get(c, "observer_ns"), NULL) +
                                g_reads_uncertainty_ns + 1.5 * step
                          : 0;
            if (fabs(corr - truth[m]) > tol) {
                if (held)
                    print_message("%s %s: corrected median %.1f ns, true "
                                  "%.1f ns (bound %.1f): flagged, held to "
                                  "its stated uncertainty %.1f ns: %s\n",
                                  range, metric, corr, truth[m], tol,
                                  stated,
                                  fabs(corr - truth[m]) > stated ? "missed"
                                                                 : "within");
                else
                    print_message("%s %s: corrected median %.1f ns, true "
                                  "%.1f ns (bound %.1f)\n", range, metric,
                                  corr, truth[m], tol);
                if (fabs(corr - truth[m]) > fmax(tol, stated))
                    bad = 1;
            }
            if (g_check->raw_vs_reference &&
                fabs(raw - truth[m]) >
                    fabs(ref - truth[m]) + step + g_read_ahead_ns) {
                print_message("%s %s: raw median %.1f ns, true %.1f ns: "
                              "farther than the reference design's %.1f "
                              "ns by more than a clock step (%.1f ns) and "
                              "the read-ahead the calibration measured "
                              "(%.1f ns)\n",
                              range, metric, raw, truth[m], ref, step,
                              g_read_ahead_ns);
                bad = 1;
            }
        }
    }
    assert_true(nt >= 2);
    harness_run_free(&r);
    reset_node(dir, node);
    return bad;
}

/*
 * Runs `once` (an attempt on shape `name`) up to ATTEMPTS times, until one
 * is within bounds. A machine too busy to give the workload the processor
 * (under 95% of its wall time in an attempt) makes figures that are not the
 * code's: the test then skips; otherwise it fails, saying `what` missed.
 * Under valgrind or AddressSanitizer it skips: their checks take part in
 * every timing.
 */
typedef int (*attempt_fn)(const char *dir, const char *self,
                          const char *name, double *share);
static void attempts(void **state, const char *label, const char *name,
                     attempt_fn once, const char *what)
{
    struct harness_daemon *d = *state;
    char self[4096];
    double share, min_share = 1;
    ssize_t len;

    if (harness_valgrind() || HARNESS_BUILT_WITH_ASAN)
        skip(); /* the timings are valgrind's or ASan's, not the code's */
    len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = '\0';
    for (int a = 0; a < ATTEMPTS; a++) {
        if (once(d->dir, self, name, &share) == 0)
            return;
        if (share < min_share)
            min_share = share;
        print_message("%s: attempt %d missed (the workload had %.0f%% of "
                      "the processor)\n", label, a + 1, 100 * share);
    }
    if (min_share < 0.95) {
        /* Said on stdout, in the test's log, where CI looks for it. */
        printf("hostrange-busy-skip: test_accuracy: %s: skipped, the "
               "machine was busy (the workload had %.0f%% of the processor "
               "at worst in %d attempts)\n", label, 100 * min_share,
               ATTEMPTS);
        fflush(stdout);
        skip();
    }
    fail_msg("%s: %s in %d attempts on a machine that gave the workload the "
             "processor", label, what, ATTEMPTS);
}

/* Calibrates (hostrange-bench --calibrate, label and path g_check's)
 * against the daemon of dir, then runs shape `name` once on that path and
 * compares (attempt). Calibrated in each attempt: a busy machine skews a
 * calibration as much as the workload. */
static int calibrated_attempt(const char *dir, const char *self,
                              const char *name, double *share)
{
    char *argv[] = { g_bench, "--calibrate", "--calls", "100000", NULL };
    struct harness_run r;
    char *stats, key[128];
    double step;
    int rc;

    setenv("HOSTRANGE_CLOCK", g_check->path, 1);
    setenv("HOSTRANGE_LABEL", g_check->label, 1);
    run_ok(argv, dir, &r);
    harness_run_free(&r);
    stats = harness_stats(dir);
#define CAL(field) \
    (snprintf(key, sizeof key, "calibration.%s." field, g_check->label), \
     stat_num(stats, key))
    step = CAL("step_ns");
    g_reads_uncertainty_ns = fmax(CAL("empty_ns"), fabs(CAL("bias_ns")));
    g_read_ahead_ns = fmax(0.0, -CAL("bias_ns"));
    print_message("calibration (%s): child %.2f +- %.2f, residue %.2f +- "
                  "%.2f, empty %.2f +- %.2f, bias %.2f, step %.2f ns\n",
                  g_check->path, CAL("child_ns"), CAL("child_err_ns"),
                  CAL("residue_ns"), CAL("residue_err_ns"), CAL("empty_ns"),
                  CAL("empty_err_ns"), CAL("bias_ns"), step);
#undef CAL
    snprintf(key, sizeof key, "calibration.%s.clock_path", g_check->label);
    {
        char buf[64];
        const char *got = harness_stat_str(stats, key, buf, sizeof buf);

        /* The fast path is named waiting where its reads wait for the
         * work (the processor's default on AMD's); the workload's rows,
         * on the same path, are corrected only by a calibration of the
         * same name, which the corrected figures below need. */
        snprintf(g_daemon_path, sizeof g_daemon_path, "%s", got);
        if (strcmp(g_check->path, "fast") == 0 && strcmp(got, "waiting") == 0)
            got = "fast";
        assert_string_equal(got, g_check->path);
    }
    free(stats);
    assert_true(step > 0);
    rc = attempt(dir, self, name, step, share);
    unsetenv("HOSTRANGE_CLOCK");
    unsetenv("HOSTRANGE_LABEL");
    return rc;
}

/* The default path: raw medians against the reference design's (where
 * raw_vs_reference), corrected ones within bounds or flagged. */
static const struct path_check g_fast = { "fast", "acc", 1, 1 };
static const struct path_check g_fast_long = { "fast", "acc", 0, 1 };
/* The ordered path: corrected medians within bounds, flags or not. */
static const struct path_check g_ordered = { "ordered", "acc-ordered", 0, 0 };

static void check_shape(void **state, const char *name,
                        const struct path_check *chk)
{
    char label[64];

    /* Built without the ranges, hostrange-bench cannot calibrate. */
    if (!BENCH_HAS_RANGES)
        skip();
    g_check = chk;
    snprintf(label, sizeof label, "%s (%s)", name, chk->path);
    attempts(state, label, name, calibrated_attempt,
             chk->raw_vs_reference
                 ? "medians out of bounds, or raw ones farther from the "
                   "truth than the reference design's"
                 : "corrected medians out of bounds");
}

/*
 * The cold call of a new calling path against the warm ones: the process's
 * first use of a site or a path interns it (a lock, a copy, the first
 * writes to tables: several us), a module's first call into the library
 * binds it, and a thread's ring takes page faults on its first pass. None
 * of that is the program's: a cold range's self time may exceed the warm
 * median by COLD_LEAF_NS for a range without children (or 5% of it) and by
 * COLD_PARENT_NS for one with children, whose cold self time also holds
 * the library's first runs of its own code for them. Before, leaves were 0.6
 * to 1.2 us and parents 4 to 20 us above. Returns 0 within bounds, 1 not.
 */
#define COLD_LEAF_NS 500.0
#define COLD_PARENT_NS 2000.0
static int cold_attempt(const char *dir, const char *self, const char *name,
                        double *share)
{
    static const char *const opts[] = { "--fields", "all,observer", NULL };
    static struct flat rows[MAX_ROWS];
    char node[128];
    struct harness_run r;
    int n, bad = 0, nc = 0;

    snprintf(node, sizeof node, "tests/accuracy::cold-%s", name);
    run_workload(dir, self, "--cold", name, "1000", &r, share);
    harness_run_free(&r);
    n = node_rows(dir, node, opts, rows);
    for (int i = 0; i < n; i++) {
        const struct flat *c = &rows[i], *w;
        double extra, bound, warm;

        if (strcmp(flat_get(c, "phase"), "cold") != 0 ||
            strcmp(flat_get(c, "metric"), "self") != 0)
            continue;
        w = find(rows, n, flat_get(c, "range"), "self", "warm");
        assert_non_null(w);
        assert_string_equal(flat_get(c, "count"), "1");
        nc++;
        warm = strtod(flat_get(w, "median"), NULL);
        extra = strtod(flat_get(c, "median"), NULL) - warm;
        bound = strcmp(flat_get(c, "children"), "0") == 0
                    ? fmax(COLD_LEAF_NS, 0.05 * warm)
                    : COLD_PARENT_NS;
        if (extra > bound) {
            print_message("%s: the cold self time is %.0f ns above the warm "
                          "median (bound %.0f)\n", flat_get(c, "range"),
                          extra, bound);
            bad = 1;
        }
    }
    assert_true(nc >= 2);
    reset_node(dir, node);
    return bad;
}

static void check_cold(void **state, const char *name)
{
    char label[64];

    snprintf(label, sizeof label, "cold %s", name);
    attempts(state, label, name, cold_attempt,
             "the library's first-use costs are in the cold ranges");
}

static void test_fanout(void **state)
{
    check_shape(state, "fanout", &g_fast);
}
static void test_chain(void **state) { check_shape(state, "chain", &g_fast); }
static void test_leaves(void **state)
{
    check_shape(state, "leaves", &g_fast);
}
static void test_mixed(void **state)
{
    check_shape(state, "mixed", &g_fast_long);
}
static void test_ordered_fanout(void **state)
{
    check_shape(state, "fanout", &g_ordered);
}
static void test_ordered_chain(void **state)
{
    check_shape(state, "chain", &g_ordered);
}
static void test_ordered_mixed(void **state)
{
    check_shape(state, "mixed", &g_ordered);
}
static void test_cold_chain(void **state) { check_cold(state, "chain"); }
static void test_cold_mixed(void **state) { check_cold(state, "mixed"); }

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_fanout),
        HARNESS_DAEMON_TEST(test_chain),
        HARNESS_DAEMON_TEST(test_leaves),
        HARNESS_DAEMON_TEST(test_mixed),
        HARNESS_DAEMON_TEST(test_ordered_fanout),
        HARNESS_DAEMON_TEST(test_ordered_chain),
        HARNESS_DAEMON_TEST(test_ordered_mixed),
        HARNESS_DAEMON_TEST(test_cold_chain),
        HARNESS_DAEMON_TEST(test_cold_mixed),
    };
    const char *top = getenv("top_builddir");

    if (argc == 4 && strcmp(argv[1], "--workload") == 0)
        return workload(argv[2], atoi(argv[3]), 0);
    if (argc == 4 && strcmp(argv[1], "--cold") == 0)
        return workload(argv[2], atoi(argv[3]), 1);
    snprintf(g_bench, sizeof g_bench, "%s/bench/hostrange-bench",
             top != NULL && top[0] != '\0' ? top : ".");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
