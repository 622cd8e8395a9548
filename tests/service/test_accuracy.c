/*
 * The accuracy of corrected figures, on the real clock, for the shapes
 * where an observer's cost is largest against what it measures:
 *
 *   fanout  a parent with 32 children of about 100 ns of work each, and
 *           2 us of its own;
 *   chain   6 ranges nested in a line, about 300 ns of work of their own
 *           each;
 *   mixed   a parent with 1 us of its own and three children of 100 ns,
 *           1 us and 10 us.
 *
 * The work is a dependent chain of multiplications, whose duration does not
 * depend on a clock. This program, run with --workload SHAPE CALLS, first
 * times every range's work without any instrumentation, in blocks (the
 * truth: each range's inclusive time, and its own time = inclusive less its
 * children's), then makes CALLS calls of the shape in a window. It prints
 * the truths and the share of the wall time it had the processor.
 *
 * The test calibrates (hostrange-bench --calibrate), runs each shape, and
 * checks every range's corrected median (dump --correct-observer), inclusive
 * and self, against its truth: within max(5%, 1.5 clock steps), the step
 * being the calibration's. A machine too busy to give the workload the
 * processor makes figures that are not the code's: an attempt that misses
 * is run again, up to 5 times; the test then skips when an attempt lacked
 * the processor (under 95% of its wall time), and fails otherwise. Under
 * valgrind or AddressSanitizer it skips: their checks take part in every
 * timing, so the truth is theirs.
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
#include "tests/lib/harness_rows.h"

#define MAX_ROWS 64
#define MAX_RANGES 8
#define ATTEMPTS 5

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
    int child[3];
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

/* Range i of shape s, with its scope when inst. */
static void run_range(int s, int i, int inst)
{
    const struct rdef *d = &g_shapes[s].r[i];
    hr_scope sc = { 0, 0, 0 };

    if (inst)
        sc = hr_begin(&g_sites[s][i]);
    work(g_before[s][i]);
    for (int k = 0; k < d->nchild_kinds; k++) {
        for (int j = 0; j < d->repeat; j++)
            run_range(s, d->child[k], inst);
    }
    if (g_after[s][i] > 0)
        work(g_after[s][i]);
    if (inst)
        hr_end(sc);
}

/* The time of range i of shape s without instrumentation: the shortest
 * of 15 blocks of about 1 ms (another process can only make a block
 * longer). */
static double truth_incl(int s, int i)
{
    double best = 1e300, one;
    unsigned reps;

    one = now();
    run_range(s, i, 0);
    one = now() - one;
    reps = (unsigned)(1e6 / (one + 1)) + 5;
    for (int r = 0; r < 15; r++) {
        double t0 = now(), t;

        for (unsigned k = 0; k < reps; k++)
            run_range(s, i, 0);
        t = (now() - t0) / reps;
        if (t < best)
            best = t;
    }
    return best;
}

static int shape_index(const char *name)
{
    for (size_t s = 0; s < sizeof g_shapes / sizeof g_shapes[0]; s++) {
        if (strcmp(g_shapes[s].name, name) == 0)
            return (int)s;
    }
    return -1;
}

/*
 * Runs shape `name`: times its ranges without instrumentation, then makes
 * CALLS calls of it in a window. With by_path, the window is one of
 * HR_PHASE_BY_PATH, one call more, under node tests/accuracy::cold-NAME:
 * the first call of each calling path is the cold one, the process's first
 * use of its sites and paths.
 */
static int workload(const char *name, int calls, int by_path)
{
    int s = shape_index(name);
    const struct shape *sh;
    double incl[MAX_RANGES], w0, c0, t;
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
    for (int i = 0; i < sh->n; i++)
        incl[i] = truth_incl(s, i);
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
        run_range(s, 0, 1);
    t = now() - w0;
    c0 = cpu_now() - c0;
    hr_window_end();
    for (int i = 0; i < sh->n; i++) {
        const struct rdef *d = &sh->r[i];
        double own = incl[i];

        for (int k = 0; k < d->nchild_kinds; k++)
            own -= d->repeat * incl[d->child[k]];
        printf("truth %s %.2f %.2f\n", d->name, incl[i], own);
    }
    printf("cpu_share %.4f\n", c0 / t);
    return hr_flush(30000) == 0 ? 0 : 1;
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

/*
 * Runs shape `name` once against the daemon of dir and compares. Returns
 * 0 when every figure is within bounds, 1 when one is not; *share is the
 * workload's share of the processor. Failures are printed.
 */
static int attempt(const char *dir, const char *self, const char *name,
                   double step, double *share)
{
    static const char *const opts[] = { "--correct-observer", "--fields",
                                        "observer", "--calibration", "acc",
                                        NULL };
    static struct flat rows[MAX_ROWS];
    char node[128];
    struct harness_run r;
    int n, bad = 0, nt = 0;

    snprintf(node, sizeof node, "tests/accuracy::%s", name);
    run_workload(dir, self, "--workload", name, "3000", &r, share);
    n = node_rows(dir, node, opts, rows);
    for (const char *l = r.out; (l = strstr(l, "truth ")) != NULL; l++) {
        char range[64];
        double truth[2];

        if (sscanf(l, "truth %63s %lf %lf", range, &truth[0], &truth[1]) != 3)
            continue;
        nt++;
        for (int m = 0; m < 2; m++) {
            const struct flat *row =
                find(rows, n, range, m ? "self" : "inclusive", NULL);
            double med, tol = fmax(0.05 * truth[m], 1.5 * step);

            assert_non_null(row);
            assert_string_equal(flat_get(row, "corrected"), "true");
            med = strtod(flat_get(row, "median"), NULL);
            if (fabs(med - truth[m]) > tol) {
                print_message("%s %s: corrected median %.1f ns, true %.1f ns "
                              "(bound %.1f)\n", range,
                              m ? "self" : "inclusive", med, truth[m], tol);
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
    if (min_share < 0.95)
        skip();
    fail_msg("%s: %s in %d attempts on a machine that gave the workload the "
             "processor", label, what, ATTEMPTS);
}

/* Calibrates (hostrange-bench --calibrate, label acc) against the daemon
 * of dir, then runs shape `name` once and compares (attempt). Calibrated
 * in each attempt: a busy machine skews a calibration as much as the
 * workload. */
static int calibrated_attempt(const char *dir, const char *self,
                              const char *name, double *share)
{
    char *argv[] = { g_bench, "--calibrate", "--calls", "100000", NULL };
    struct harness_run r;
    char *stats;
    double step;

    run_ok(argv, dir, &r);
    harness_run_free(&r);
    stats = harness_stats(dir);
    step = stat_num(stats, "calibration.acc.step_ns");
    print_message("calibration: child %.2f +- %.2f, residue %.2f +- "
                  "%.2f, empty %.2f +- %.2f, step %.2f ns\n",
                  stat_num(stats, "calibration.acc.child_ns"),
                  stat_num(stats, "calibration.acc.child_err_ns"),
                  stat_num(stats, "calibration.acc.residue_ns"),
                  stat_num(stats, "calibration.acc.residue_err_ns"),
                  stat_num(stats, "calibration.acc.empty_ns"),
                  stat_num(stats, "calibration.acc.empty_err_ns"), step);
    free(stats);
    assert_true(step > 0);
    return attempt(dir, self, name, step, share);
}

static void check_shape(void **state, const char *name)
{
    /* Built without the ranges, hostrange-bench cannot calibrate. */
    if (!BENCH_HAS_RANGES)
        skip();
    setenv("HOSTRANGE_LABEL", "acc", 1);
    attempts(state, name, name, calibrated_attempt,
             "corrected medians out of bounds");
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

static void test_fanout(void **state) { check_shape(state, "fanout"); }
static void test_chain(void **state) { check_shape(state, "chain"); }
static void test_mixed(void **state) { check_shape(state, "mixed"); }
static void test_cold_chain(void **state) { check_cold(state, "chain"); }
static void test_cold_mixed(void **state) { check_cold(state, "mixed"); }

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_fanout),
        HARNESS_DAEMON_TEST(test_chain),
        HARNESS_DAEMON_TEST(test_mixed),
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
