/*
 * hostrange against the reference design on the shape of an operator
 * call, the reference design interleaved with it in one process: each
 * call opens 11 ranges in the reference's layer tree (binding.body over 3
 * x binding.tensor_conversion and binding.device_conversion, then
 * dispatch.call > operator.call > cache.key, cache.lookup, operator.invoke
 * > backend.submit), each layer a function of its own that opens its
 * range through a scope the profiler chosen at run time dispatches, ends
 * it by a cleanup, and does a little real work between its ranges, as an
 * operator library does: descriptors turned into tensors, a device name
 * parsed, an implementation found in a table, a cache key built and
 * hashed, a hash table probed, the call's data bound to a plan and a
 * small addition run.
 *
 * A measured process runs blocks of BLOCK calls with no profiler, with the
 * reference design and with hostrange in turn (the order rotates each
 * round), and two plain reads of the clock (bench_clock.h) before each
 * round; each figure is the median over the rounds:
 *
 *   operator.thread_per_range[.plain|.waiting]  ns per range of the
 *       calling thread (its processor time over the block) less the block
 *       with no profiler; baseline: the reference design's, in the same
 *       process
 *   operator.cpu_per_range[.plain|.waiting]     ns per range of all the
 *       CPU of the block: the process (every thread, the shipper
 *       included: getrusage) and hostranged, less the block with no
 *       profiler; hostrange's block closes its window and waits until the
 *       daemon has every sample, the reference design's reserves its
 *       samples' room before and computes its report after; baseline:
 *       the reference design's; shipper_ns and daemon_ns: the parts of
 *       hostrange's total outside its thread (the process's other
 *       threads, the shipper's, and hostranged's)
 *   operator.floor                              the reference design's
 *       in-thread ns per range; baseline: two plain reads
 *
 * The unnamed rows are the processor's default reads (waiting on AMD's
 * processors, plain elsewhere: client/clock.c); .plain and .waiting name
 * them. Each line also gives floor_ns (two plain reads of the clock,
 * measured in the same process) and floor_ratio.
 *
 * Usage: bench_operator [CALLS] (calls per block, default 50000).
 * Internally, `bench_operator --worker CALLS DAEMON_PID` is one measured
 * process, its clock chosen by HOSTRANGE_CLOCK.
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

#define ROUNDS 7
#define RANGES_PER_CALL 11

enum name {
    N_BODY, N_TENSOR, N_DEVICE, N_DISPATCH, N_OPERATOR, N_KEY, N_LOOKUP,
    N_INVOKE, N_SUBMIT, NNAMES
};

static hr_site s_body = HR_SITE_INIT("binding.body");
static hr_site s_tensor = HR_SITE_INIT("binding.tensor_conversion");
static hr_site s_device = HR_SITE_INIT("binding.device_conversion");
static hr_site s_dispatch = HR_SITE_INIT("dispatch.call");
static hr_site s_operator = HR_SITE_INIT("operator.call");
static hr_site s_key = HR_SITE_INIT("cache.key");
static hr_site s_lookup = HR_SITE_INIT("cache.lookup");
static hr_site s_invoke = HR_SITE_INIT("operator.invoke");
static hr_site s_submit = HR_SITE_INIT("backend.submit");

enum mode { BARE, REFERENCE, HOSTRANGE, NMODES };

/* The profiler in use, chosen at run time. */
static enum mode g_mode;

/* A scope of the profiler in use: opened by scope_open, ended by the
 * cleanup when the variable goes out of scope (a C++ RAII scope). */
struct scope {
    enum mode mode;
    hr_scope sc;
};

static inline __attribute__((always_inline)) struct scope
scope_open(enum name n, hr_site *site)
{
    struct scope s = { g_mode, { 0, 0, 0 } };

    if (s.mode == HOSTRANGE)
        s.sc = hr_begin(site);
    else if (s.mode == REFERENCE)
        harness_refd_begin(n);
    return s;
}

static inline void scope_close(struct scope *s)
{
    if (s->mode == HOSTRANGE)
        hr_end(s->sc);
    else if (s->mode == REFERENCE)
        harness_refd_end();
}

#define SCOPE(var, n, site)                                               \
    struct scope var __attribute__((cleanup(scope_close))) =              \
        scope_open(n, site)

/* --- The operator ------------------------------------------------------ */

#define MAX_DIMS 4
#define VEC 32 /* elements the backend adds */

struct array_desc {
    const float *data;
    int ndim;
    long shape[MAX_DIMS];
    int dtype;
};

struct tensor {
    const float *data;
    int ndim;
    long shape[MAX_DIMS];
    long stride[MAX_DIMS];
    long numel;
    int dtype;
};

struct device {
    int kind;
    int index;
};

struct impl {
    int op, device_kind, dtype, index;
    int (*run)(const struct impl *impl, const struct tensor *t);
};

#define KEY_WORDS 12
#define CACHE_SLOTS 64u

struct plan {
    uint64_t key[KEY_WORDS];
    int used;
    long numel;
    const float *a, *b;
    float *out;
};

static float g_a[VEC], g_b[VEC], g_out[VEC];
static struct plan g_cache[CACHE_SLOTS];
static volatile uint64_t sink;

static int tensor_convert(const struct array_desc *d, struct tensor *t)
{
    SCOPE(sc, N_TENSOR, &s_tensor);
    long s = 1;

    if (d->ndim < 1 || d->ndim > MAX_DIMS || d->data == NULL)
        return -1;
    t->data = d->data;
    t->ndim = d->ndim;
    t->dtype = d->dtype;
    for (int i = d->ndim - 1; i >= 0; i--) {
        if (d->shape[i] <= 0)
            return -1;
        t->shape[i] = d->shape[i];
        t->stride[i] = s;
        s *= d->shape[i];
    }
    t->numel = s;
    return 0;
}

static int device_convert(const char *name, struct device *dev)
{
    SCOPE(sc, N_DEVICE, &s_device);
    const char *p = name;
    int idx = 0;

    if (strncmp(p, "cpu", 3) == 0)
        dev->kind = 0;
    else if (strncmp(p, "cuda", 4) == 0)
        dev->kind = 1;
    else
        return -1;
    p += dev->kind == 0 ? 3 : 4;
    if (*p == ':')
        for (p++; *p >= '0' && *p <= '9'; p++)
            idx = idx * 10 + (*p - '0');
    dev->index = idx;
    return 0;
}

static int run_add(const struct impl *impl, const struct tensor *t);

static const struct impl g_impls[] = {
    { 1, 1, 0, 0, run_add }, { 1, 1, 1, 0, run_add },
    { 2, 0, 0, 0, run_add }, { 2, 0, 1, 0, run_add },
    { 2, 1, 0, 0, run_add }, { 1, 0, 1, 0, run_add },
    { 1, 0, 0, 1, run_add }, { 1, 0, 0, 0, run_add },
};

static int backend_submit(struct plan *p)
{
    SCOPE(sc, N_SUBMIT, &s_submit);

    for (long i = 0; i < p->numel; i++)
        p->out[i] = p->a[i] + p->b[i];
    __asm__ volatile("" : : "r"(p->out) : "memory");
    return 0;
}

static int operator_invoke(struct plan *p, const struct tensor *t)
{
    SCOPE(sc, N_INVOKE, &s_invoke);

    p->a = t[0].data;
    p->b = t[1].data;
    p->out = (float *)t[2].data;
    if (t[0].numel != t[1].numel || t[0].numel != t[2].numel)
        return -1;
    p->numel = t[0].numel;
    return backend_submit(p);
}

static size_t cache_key(const struct impl *impl, const struct tensor *t,
                        uint64_t *key, uint64_t *hash)
{
    SCOPE(sc, N_KEY, &s_key);
    size_t n = 0;
    uint64_t h = 0xcbf29ce484222325ull;

    key[n++] = (uint64_t)impl->op << 32 | (uint32_t)impl->index;
    key[n++] = (uint64_t)impl->device_kind << 32 | (uint32_t)impl->dtype;
    for (int i = 0; i < 3; i++) {
        key[n++] = (uint64_t)t[i].ndim << 48 | (uint64_t)t[i].numel;
        key[n++] = (uint64_t)t[i].shape[0] << 32 |
                   (uint64_t)(t[i].ndim > 1 ? t[i].shape[1] : 1);
    }
    for (size_t i = 0; i < n; i++) {
        h ^= key[i];
        h *= 0x100000001b3ull;
    }
    *hash = h;
    return n;
}

static struct plan *cache_lookup(const uint64_t *key, size_t n,
                                 uint64_t hash)
{
    SCOPE(sc, N_LOOKUP, &s_lookup);

    for (unsigned i = 0; i < CACHE_SLOTS; i++) {
        struct plan *p = &g_cache[(hash + i) & (CACHE_SLOTS - 1)];

        if (!p->used) {
            memcpy(p->key, key, n * sizeof *key);
            p->used = 1;
            return p;
        }
        if (memcmp(p->key, key, n * sizeof *key) == 0)
            return p;
    }
    return NULL;
}

static int run_add(const struct impl *impl, const struct tensor *t)
{
    SCOPE(sc, N_OPERATOR, &s_operator);
    uint64_t key[KEY_WORDS], hash;
    size_t n = cache_key(impl, t, key, &hash);
    struct plan *p = cache_lookup(key, n, hash);

    if (p == NULL)
        return -1;
    return operator_invoke(p, t);
}

static int dispatch(const struct tensor *t, const struct device *dev)
{
    SCOPE(sc, N_DISPATCH, &s_dispatch);

    for (size_t i = 0; i < sizeof g_impls / sizeof g_impls[0]; i++) {
        const struct impl *m = &g_impls[i];

        if (m->op == 1 && m->device_kind == dev->kind &&
            m->dtype == t[0].dtype && m->index == 0)
            return m->run(m, t);
    }
    return -1;
}

/* The binding: one call of the operator. */
static __attribute__((noinline)) int op_add(const struct array_desc *d,
                                            const char *device)
{
    SCOPE(body, N_BODY, &s_body);
    struct tensor t[3];
    struct device dev;

    for (int i = 0; i < 3; i++)
        if (tensor_convert(&d[i], &t[i]) != 0)
            return -1;
    if (device_convert(device, &dev) != 0)
        return -1;
    return dispatch(t, &dev);
}

/* --- The measured process ---------------------------------------------- */

static double thread_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double process_ns(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
            (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6) *
           1e9;
}

static __attribute__((noinline)) void calls(const struct array_desc *d,
                                            long n)
{
    for (long i = 0; i < n; i++)
        if (op_add(d, "cpu:0") != 0)
            bd_die("the operator failed");
}

/* One block of n calls in `mode`: its thread and total ns (the process and
 * the daemon `daemon`), and the daemon's share of the total. */
static void block(enum mode mode, long n, pid_t daemon,
                  const struct array_desc *d, double *th, double *cpu,
                  double *dmn)
{
    double c0 = process_ns(), d0 = bd_proc_cpu(daemon), t0;
    struct harness_refd_stat st[2 * NNAMES];
    hr_counters before, after;

    hr_counters_get(&before);
    if (mode == REFERENCE &&
        harness_refd_reserve((size_t)n * RANGES_PER_CALL, 0) != 0)
        bd_die("out of memory");
    if (mode == HOSTRANGE && hr_window_begin() != 0)
        bd_die("hr_window_begin failed");
    g_mode = mode;
    t0 = thread_ns();
    calls(d, n);
    *th = thread_ns() - t0;
    g_mode = BARE;
    if (mode == HOSTRANGE) {
        hr_window_end();
        if (hr_flush(600000) != 0)
            bd_die("hr_flush failed");
        hr_counters_get(&after);
        if (after.samples - before.samples != (uint64_t)n * RANGES_PER_CALL ||
            after.delivered - before.delivered !=
                (uint64_t)n * RANGES_PER_CALL)
            bd_die("hostrange lost samples");
    } else if (mode == REFERENCE) {
        if (harness_refd_report(st, NNAMES) != 0 ||
            harness_refd_dropped() != 0 ||
            st[2 * N_TENSOR].count != 3 * (uint64_t)n ||
            st[2 * N_SUBMIT + 1].count != (uint64_t)n)
            bd_die("the reference design lost samples");
        sink += (uint64_t)st[2 * N_BODY].median;
        harness_refd_free();
    }
    *dmn = (bd_proc_cpu(daemon) - d0) * 1e9;
    *cpu = process_ns() - c0 + *dmn;
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

/* Prints, per range: the median in-thread and total ns of the reference
 * design and of hostrange, and the floor. */
static int worker(long n, pid_t daemon)
{
    static struct array_desc d[3];
    double th[NMODES][ROUNDS], cpu[NMODES][ROUNDS], fl[ROUNDS];
    double dmn[ROUNDS], shipper[ROUNDS];
    double ranges = (double)n * RANGES_PER_CALL;

    for (int i = 0; i < VEC; i++) {
        g_a[i] = (float)i;
        g_b[i] = (float)(VEC - i);
    }
    for (int i = 0; i < 3; i++) {
        d[i].data = i == 0 ? g_a : i == 1 ? g_b : g_out;
        d[i].ndim = 2;
        d[i].shape[0] = 4;
        d[i].shape[1] = VEC / 4;
        d[i].dtype = 0;
    }
    if (hr_labels_set("bench/operator", "add", "cpu", HR_PHASE_WARM) != 0)
        return 1;
    /* A warm-up of each mode: sites interned, pages taken. */
    for (int m = 0; m < NMODES; m++) {
        double a, b, c;

        block((enum mode)m, n / 10 + 1, daemon, d, &a, &b, &c);
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t[NMODES], c[NMODES], dm[NMODES];

        fl[r] = bench_clock_pair(2000000);
        for (int i = 0; i < NMODES; i++) {
            int m = (r + i) % NMODES;

            block((enum mode)m, n, daemon, d, &t[m], &c[m], &dm[m]);
        }
        /* hostrange's total beyond its thread: the shipper (and the
         * process's other work) and the daemon. */
        dmn[r] = (dm[HOSTRANGE] - dm[BARE]) / ranges;
        shipper[r] = (c[HOSTRANGE] - dm[HOSTRANGE] - t[HOSTRANGE] -
                      (c[BARE] - dm[BARE] - t[BARE])) /
                     ranges;
        for (int m = NMODES - 1; m >= 0; m--) {
            th[m][r] = (t[m] - t[BARE]) / ranges;
            cpu[m][r] = (c[m] - c[BARE]) / ranges;
        }
    }
    printf("%f %f %f %f %f %f %f\n", median(th[REFERENCE]),
           median(cpu[REFERENCE]), median(th[HOSTRANGE]),
           median(cpu[HOSTRANGE]), median(fl), median(shipper),
           median(dmn));
    return fflush(stdout) == 0 ? 0 : 1;
}

/* --- The driver --------------------------------------------------------- */

static char self_path[4096];

struct took {
    double ref_th, ref_cpu, hr_th, hr_cpu, floor, shipper, daemon;
};

/* Runs one measured process with HOSTRANGE_CLOCK=path against a fresh
 * hostranged. */
static struct took measure(const char *path, long n)
{
    struct bd_daemon dm;
    struct took k;
    char narg[32], parg[32];
    pid_t pid;
    int status;
    FILE *out;

    bd_daemon_start(&dm, 0, NULL);
    setenv("HOSTRANGE_RUNTIME_DIR", dm.dir, 1);
    setenv("HOSTRANGE_CLOCK", path, 1);
    snprintf(narg, sizeof narg, "%ld", n);
    snprintf(parg, sizeof parg, "%ld", (long)dm.pid);
    pid = bd_fork_piped(&out);
    if (pid == 0) {
        execl(self_path, self_path, "--worker", narg, parg, (char *)NULL);
        _exit(127);
    }
    if (fscanf(out, "%lf %lf %lf %lf %lf %lf %lf", &k.ref_th, &k.ref_cpu,
               &k.hr_th, &k.hr_cpu, &k.floor, &k.shipper, &k.daemon) != 7)
        k.floor = -1;
    fclose(out);
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || k.floor < 0)
        bd_die("the %s worker failed", path);
    bd_daemon_stop(&dm);
    unsetenv("HOSTRANGE_CLOCK");
    return k;
}

static void print(const char *name, double value, double baseline,
                  double floor, const struct took *k)
{
    printf("{\"bench\":\"%s\",\"value\":%.2f,\"unit\":\"ns\","
           "\"baseline\":%.2f,\"ratio\":%.3f,\"floor_ns\":%.2f,"
           "\"floor_ratio\":%.3f",
           name, value, baseline, value / baseline, floor, value / floor);
    if (k != NULL)
        printf(",\"shipper_ns\":%.2f,\"daemon_ns\":%.2f", k->shipper,
               k->daemon);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    /* The processor's default reads, then both kinds named. */
    static const char *const path[] = { "fast", "fast,plain",
                                        "fast,waiting" };
    static const char *const suffix[] = { "", ".plain", ".waiting" };
    long n = 50000;

    if (argc == 4 && strcmp(argv[1], "--worker") == 0)
        return worker(atol(argv[2]), (pid_t)atol(argv[3]));
    if (argc > 1)
        n = atol(argv[1]);
    if (n < 1000)
        bd_die("CALLS must be at least 1000");
    bd_self_exe(self_path, sizeof self_path, argv[0]);
    if (!hr_enabled())
        bd_die("collection is off (HOSTRANGE=0)");
    for (size_t i = 0; i < sizeof path / sizeof path[0]; i++) {
        struct took k = measure(path[i], n);
        char name[64];

        snprintf(name, sizeof name, "operator.thread_per_range%s",
                 suffix[i]);
        print(name, k.hr_th, k.ref_th, k.floor, NULL);
        snprintf(name, sizeof name, "operator.cpu_per_range%s", suffix[i]);
        print(name, k.hr_cpu, k.ref_cpu, k.floor, &k);
        if (i == 0)
            print("operator.floor", k.ref_th, k.floor, k.floor, NULL);
    }
    return 0;
}
