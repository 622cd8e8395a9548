/*
 * hostrange against the reference design (tests/lib/harness_refdesign.h:
 * the in-process RAII profiler on CLOCK_MONOTONIC that hostrange
 * replaces), on the example operators' nested workload: a call of 11
 * ranges, binding.body over 3 x binding.tensor_conversion,
 * binding.device_conversion and dispatch.call > operator.call >
 * (cache.key, cache.lookup, operator.invoke > backend.submit), each with a
 * little work of its own. Each way of measuring runs in a process of its
 * own, CALLS calls in a loop, in interleaved rounds; every figure is the
 * median over the rounds:
 *
 *   reference.thread_per_range          ns per range of the thread that
 *                                       ran the calls (its processor time
 *                                       in the loop), less the same loop
 *                                       uninstrumented: hostrange on the
 *                                       fast path; baseline: the reference
 *                                       design
 *   reference.cpu_per_range             ns per range of all the CPU the
 *                                       measuring took: the process (every
 *                                       thread, the shipper included, its
 *                                       start and exit) and hostranged,
 *                                       less the uninstrumented process;
 *                                       the reference design's process
 *                                       reserves its samples' room and
 *                                       computes count, mean and median per
 *                                       range and metric at the end;
 *                                       baseline: the reference design
 *   reference.thread_per_range.ordered  the same on the ordered path
 *   reference.cpu_per_range.ordered
 *   reference.*_per_range.plain         the fast path with plain rdtsc
 *   reference.*_per_range.waiting       and with reads that wait for the
 *                                       work before them (rdtscp): the
 *                                       unnamed rows are the processor's
 *                                       default, waiting on AMD's
 *                                       processors, plain elsewhere
 *   reference.floor                     the reference design's in-thread ns
 *                                       per range; baseline: two plain
 *                                       reads of the clock (bench_clock.h)
 *   reference.object.*                  the same four on the scope-object
 *                                       shape: the same 11 ranges, each
 *                                       opened and closed through a scope
 *                                       object that a switch on the
 *                                       profiler in use dispatches (out of
 *                                       line, as a C++ profiler's scope
 *                                       class with several back ends is),
 *                                       the open scope stored in the
 *                                       object in memory between its begin
 *                                       and end, and about 300 ns of
 *                                       backend work in backend.submit
 *
 * The reference design reserves its samples' room and takes its pages on
 * their first writes, inside its ranges, as the reference does; each line
 * also gives the baseline of the reference design with that room written
 * before the calls (baseline_touched, ratio_touched: its best case), the
 * floor (floor_ns: two plain reads of the clock) and the value's ratio to
 * it (floor_ratio). hostrange runs on a fresh private hostranged (as
 * `hostrangectl record` runs it), and every range must reach it.
 *
 * Usage: bench_reference [CALLS] (default 300000). Internally,
 * `bench_reference --worker MODE CALLS SHAPE` is one measured process
 * (MODE: bare, reference, reference-touched or hostrange; SHAPE: nested
 * or object).
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "tests/lib/harness_refdesign.h"

#include "hostrange.h"
#include "perf/bench_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5
#define RANGES_PER_CALL 11
/* Steps of each range's own work (a dependent chain: a few ns). */
#define OWN_STEPS 6u
/* Steps of backend.submit's work in the scope-object shape (about 300 ns:
 * a dependent chain of multiplications). */
#define BACKEND_STEPS 100u

enum name {
    N_BODY, N_TENSOR, N_DEVICE, N_DISPATCH, N_OPERATOR, N_KEY, N_LOOKUP,
    N_INVOKE, N_SUBMIT, NNAMES
};

static hr_site sites[NNAMES] = {
    HR_SITE_INIT("binding.body"),
    HR_SITE_INIT("binding.tensor_conversion"),
    HR_SITE_INIT("binding.device_conversion"),
    HR_SITE_INIT("dispatch.call"),
    HR_SITE_INIT("operator.call"),
    HR_SITE_INIT("cache.key"),
    HR_SITE_INIT("cache.lookup"),
    HR_SITE_INIT("operator.invoke"),
    HR_SITE_INIT("backend.submit"),
};

enum mode { BARE, REFERENCE, HOSTRANGE };

static volatile uint64_t sink;

/* `steps` steps of a dependent chain of multiplications; `steps` is a
 * constant where it is inlined. */
static inline __attribute__((always_inline)) void chain(unsigned steps)
{
    uint64_t x = sink;

    for (unsigned i = 0; i < steps; i++) {
        x = x * 0x9E3779B97F4A7C15ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
}

static __attribute__((noinline)) void own_work(void)
{
    chain(OWN_STEPS);
}

/* A range of the workload as each mode opens and closes it; `mode` is a
 * constant where these are inlined, so each mode has its own code. */
static inline __attribute__((always_inline)) hr_scope range_open(
    enum mode mode, enum name n)
{
    hr_scope sc = { 0, 0, 0 };

    if (mode == HOSTRANGE)
        sc = hr_begin(&sites[n]);
    else if (mode == REFERENCE)
        harness_refd_begin(n);
    return sc;
}

static inline __attribute__((always_inline)) void range_close(enum mode mode,
                                                              hr_scope sc)
{
    if (mode == HOSTRANGE)
        hr_end(sc);
    else if (mode == REFERENCE)
        harness_refd_end();
}

static inline __attribute__((always_inline)) void leaf(enum mode mode,
                                                       enum name n)
{
    hr_scope sc = range_open(mode, n);

    own_work();
    range_close(mode, sc);
}

static inline __attribute__((always_inline)) void call(enum mode mode)
{
    hr_scope body = range_open(mode, N_BODY), dispatch, op, invoke;

    own_work();
    for (int i = 0; i < 3; i++)
        leaf(mode, N_TENSOR);
    leaf(mode, N_DEVICE);
    dispatch = range_open(mode, N_DISPATCH);
    own_work();
    op = range_open(mode, N_OPERATOR);
    own_work();
    leaf(mode, N_KEY);
    leaf(mode, N_LOOKUP);
    invoke = range_open(mode, N_INVOKE);
    own_work();
    leaf(mode, N_SUBMIT);
    range_close(mode, invoke);
    range_close(mode, op);
    range_close(mode, dispatch);
    range_close(mode, body);
}

/*
 * The scope-object shape. A profiler's scope object, as an operator
 * library with several profilers behind one interface has it: the
 * profiler in use is a field, each begin and end a switch on it, out of
 * line, and the open scope is kept in the object (in memory) until its
 * end. The objects live in the caller's frame.
 */
struct scope_obj {
    enum mode kind;
    hr_scope sc;
};

static __attribute__((noinline)) void obj_begin(struct scope_obj *o,
                                                enum mode kind, enum name n)
{
    o->kind = kind;
    switch (kind) {
    case HOSTRANGE:
        o->sc = hr_begin(&sites[n]);
        break;
    case REFERENCE:
        harness_refd_begin(n);
        break;
    default:
        break;
    }
}

static __attribute__((noinline)) void obj_end(struct scope_obj *o)
{
    switch (o->kind) {
    case HOSTRANGE:
        hr_end(o->sc);
        break;
    case REFERENCE:
        harness_refd_end();
        break;
    default:
        break;
    }
}

static __attribute__((noinline)) void backend_work(void)
{
    chain(BACKEND_STEPS);
}

static __attribute__((noinline)) void obj_leaf(enum mode mode, enum name n,
                                               struct scope_obj *o)
{
    obj_begin(o, mode, n);
    if (n == N_SUBMIT)
        backend_work();
    else
        own_work();
    obj_end(o);
}

/* One call of the operators' shape through scope objects; `mode` is a
 * variable here, as a profiler chosen at run time is. */
static __attribute__((noinline)) void obj_call(enum mode mode)
{
    struct scope_obj o[RANGES_PER_CALL];

    obj_begin(&o[0], mode, N_BODY);
    own_work();
    for (int i = 0; i < 3; i++)
        obj_leaf(mode, N_TENSOR, &o[1 + i]);
    obj_leaf(mode, N_DEVICE, &o[4]);
    obj_begin(&o[5], mode, N_DISPATCH);
    own_work();
    obj_begin(&o[6], mode, N_OPERATOR);
    own_work();
    obj_leaf(mode, N_KEY, &o[7]);
    obj_leaf(mode, N_LOOKUP, &o[8]);
    obj_begin(&o[9], mode, N_INVOKE);
    own_work();
    obj_leaf(mode, N_SUBMIT, &o[10]);
    obj_end(&o[9]);
    obj_end(&o[6]);
    obj_end(&o[5]);
    obj_end(&o[0]);
}

static enum mode g_shape_mode;
static int g_object;

static __attribute__((noinline)) void calls_object(long n)
{
    for (long i = 0; i < n; i++)
        obj_call(g_shape_mode);
}

static __attribute__((noinline)) void calls_bare(long n)
{
    for (long i = 0; i < n; i++)
        call(BARE);
}

static __attribute__((noinline)) void calls_reference(long n)
{
    for (long i = 0; i < n; i++)
        call(REFERENCE);
}

static __attribute__((noinline)) void calls_hostrange(long n)
{
    for (long i = 0; i < n; i++)
        call(HOSTRANGE);
}

static double thread_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One measured process: CALLS calls in MODE. Prints the loop's thread
 * processor time in ns. */
static int worker(const char *mode, long calls, const char *shape)
{
    struct harness_refd_stat st[2 * NNAMES];
    double t0, t;

    if (strcmp(shape, "object") == 0)
        g_object = 1;
    else if (strcmp(shape, "nested") != 0)
        return 2;
    if (strcmp(mode, "bare") == 0) {
        g_shape_mode = BARE;
        t0 = thread_ns();
        if (g_object)
            calls_object(calls);
        else
            calls_bare(calls);
        t = thread_ns() - t0;
    } else if (strncmp(mode, "reference", 9) == 0) {
        if (harness_refd_reserve((size_t)calls * RANGES_PER_CALL,
                                 strcmp(mode, "reference-touched") == 0) != 0)
            return 1;
        g_shape_mode = REFERENCE;
        t0 = thread_ns();
        if (g_object)
            calls_object(calls);
        else
            calls_reference(calls);
        t = thread_ns() - t0;
        /* The report the reference computes at the end, counted in its
         * process's CPU. */
        if (harness_refd_report(st, NNAMES) != 0 ||
            harness_refd_dropped() != 0 ||
            st[2 * N_TENSOR].count != 3 * (uint64_t)calls ||
            st[2 * N_SUBMIT + 1].count != (uint64_t)calls)
            return 1;
        sink += (uint64_t)st[2 * N_BODY].median;
        harness_refd_free();
    } else if (strcmp(mode, "hostrange") == 0) {
        hr_counters c;

        if (hr_labels_set("bench/reference", "nested", "cpu",
                          HR_PHASE_WARM) != 0 ||
            hr_window_begin() != 0)
            return 1;
        g_shape_mode = HOSTRANGE;
        t0 = thread_ns();
        if (g_object)
            calls_object(calls);
        else
            calls_hostrange(calls);
        t = thread_ns() - t0;
        hr_window_end();
        if (hr_flush(600000) != 0)
            return 1;
        hr_counters_get(&c);
        if (c.samples != (uint64_t)calls * RANGES_PER_CALL ||
            c.delivered != c.samples)
            return 1;
    } else {
        return 2;
    }
    printf("%.0f\n", t);
    return fflush(stdout) == 0 ? 0 : 1;
}

static char self_path[4096];

/* What one measured process took: its loop's thread time and all its
 * CPU with the daemon's, in ns. */
struct took {
    double thread_ns, cpu_ns;
};

/* Runs `self --worker MODE CALLS` with HOSTRANGE_CLOCK=path (NULL: the
 * mode does not collect), against a fresh hostranged when path is set. */
static struct took measure(const char *mode, const char *path, long calls,
                           const char *shape)
{
    struct bd_daemon d;
    struct took k = { 0, 0 };
    struct rusage ru;
    char carg[32];
    double d0 = 0;
    pid_t pid;
    int status;
    FILE *out;

    if (path != NULL) {
        bd_daemon_start(&d, 0, NULL);
        setenv("HOSTRANGE_RUNTIME_DIR", d.dir, 1);
        setenv("HOSTRANGE_CLOCK", path, 1);
        d0 = bd_proc_cpu(d.pid);
    }
    snprintf(carg, sizeof carg, "%ld", calls);
    pid = bd_fork_piped(&out);
    if (pid == 0) {
        execl(self_path, self_path, "--worker", mode, carg, shape,
              (char *)NULL);
        _exit(127);
    }
    if (fscanf(out, "%lf", &k.thread_ns) != 1)
        k.thread_ns = -1;
    fclose(out);
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || k.thread_ns < 0)
        bd_die("the %s worker failed", mode);
    k.cpu_ns = ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6) *
               1e9;
    if (path != NULL) {
        k.cpu_ns += (bd_proc_cpu(d.pid) - d0) * 1e9;
        bd_daemon_stop(&d);
        unsetenv("HOSTRANGE_CLOCK");
    }
    return k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v)
{
    qsort(v, ROUNDS, sizeof *v, cmp_double);
    return v[ROUNDS / 2];
}

static void print(const char *name, double value, double baseline,
                  double touched, double floor)
{
    printf("{\"bench\":\"%s\",\"value\":%.2f,\"unit\":\"ns\","
           "\"baseline\":%.2f,\"ratio\":%.3f,\"baseline_touched\":%.2f,"
           "\"ratio_touched\":%.3f,\"floor_ns\":%.2f,"
           "\"floor_ratio\":%.3f}\n",
           name, value, baseline, value / baseline, touched,
           value / touched, floor, value / floor);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    enum { BARE_K, REF_K, TOUCHED_K, FAST_K, ORDERED_K, PLAIN_K, WAIT_K,
           NK };
    static const char *const mode[NK] = { "bare", "reference",
                                          "reference-touched", "hostrange",
                                          "hostrange", "hostrange",
                                          "hostrange" };
    /* fast: the processor's default reads (waiting on AMD's, plain
     * elsewhere: client/clock.c); then both kinds of read, named. */
    static const char *const path[NK] = { NULL, NULL, NULL, "fast",
                                          "ordered", "fast,plain",
                                          "fast,waiting" };
    enum { NSHAPES = 2 };
    static const char *const shape[NSHAPES] = { "nested", "object" };
    static const char *const prefix[NSHAPES] = { "", "object." };
    double th[NSHAPES][NK][ROUNDS], cpu[NSHAPES][NK][ROUNDS], fl[ROUNDS];
    double floor;
    long calls = 300000;
    double ranges;

    if (argc == 5 && strcmp(argv[1], "--worker") == 0)
        return worker(argv[2], atol(argv[3]), argv[4]);
    if (argc > 1)
        calls = atol(argv[1]);
    if (calls < 1000)
        bd_die("CALLS must be at least 1000");
    bd_self_exe(self_path, sizeof self_path, argv[0]);
    if (!hr_enabled())
        bd_die("collection is off (HOSTRANGE=0)");
    ranges = (double)calls * RANGES_PER_CALL;
    for (int r = 0; r < ROUNDS; r++) {
        fl[r] = bench_clock_pair(10000000);
        for (int sh = 0; sh < NSHAPES; sh++) {
            for (int k = 0; k < NK; k++) {
                struct took t = measure(mode[k], path[k], calls, shape[sh]);

                th[sh][k][r] = t.thread_ns;
                cpu[sh][k][r] = t.cpu_ns;
            }
            /* Per range, less the uninstrumented process of the round. */
            for (int k = NK - 1; k >= 0; k--) {
                th[sh][k][r] = (th[sh][k][r] - th[sh][BARE_K][r]) / ranges;
                cpu[sh][k][r] = (cpu[sh][k][r] - cpu[sh][BARE_K][r]) / ranges;
            }
        }
    }
    floor = median(fl);
    for (int sh = 0; sh < NSHAPES; sh++) {
        double ref_th = median(th[sh][REF_K]), ref_cpu = median(cpu[sh][REF_K]);
        double tch_th = median(th[sh][TOUCHED_K]);
        double tch_cpu = median(cpu[sh][TOUCHED_K]);
        char name[96];

#define NAME(what) (snprintf(name, sizeof name, "reference.%s%s", \
                             prefix[sh], what), name)
        /* Each hostrange kind: its rows' suffix ("": the default). */
        for (int k = FAST_K; k < NK; k++) {
            static const char *const suffix[NK] = {
                [FAST_K] = "", [ORDERED_K] = ".ordered",
                [PLAIN_K] = ".plain", [WAIT_K] = ".waiting"
            };
            char what[32];

            snprintf(what, sizeof what, "thread_per_range%s", suffix[k]);
            print(NAME(what), median(th[sh][k]), ref_th, tch_th, floor);
            snprintf(what, sizeof what, "cpu_per_range%s", suffix[k]);
            print(NAME(what), median(cpu[sh][k]), ref_cpu, tch_cpu, floor);
        }
        print(NAME("floor"), ref_th, floor, tch_th, floor);
#undef NAME
    }
    return 0;
}
