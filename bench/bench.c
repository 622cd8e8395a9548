/*
 * hostrange-bench: the benchmark driver of the example operators. For each
 * case it checks one call against a double-precision reference, then makes
 * the populations that hostranged aggregates: cold (one call after the
 * operator cache was cleared, in its own window), end_to_end (timed blocks
 * of calls with collection inactive, one sample per block: its time divided
 * by its calls) and warm (as many calls replayed, in blocks, inside one
 * window). With --raw it also times the bare backend work in blocks that
 * alternate with the end_to_end ones and prints the ratio of the medians.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostrange.h"
#include "bench/bench.h"
#include "bench/ref.h"

#define MAX_CASES 256
#define MIN_BLOCK_NS 50000u

/* The ranges of the --spin-control records: a chain of dependent
 * integer steps (bound by latency), and sweeps of an array with float
 * multiply-adds (bound by throughput and the cache, as the operators'
 * kernels are). */
#define BENCH_SPIN_RANGE "control.spin"
#define BENCH_STREAM_RANGE "control.stream"

/* The array of control.stream (32 KiB) and how many sweeps of it. */
#define STREAM_FLOATS 8192u
#define STREAM_SWEEPS 4u

static hr_site s_e2e = HR_SITE_INIT("end_to_end");
static hr_site s_spin = HR_SITE_INIT(BENCH_SPIN_RANGE);
static hr_site s_stream = HR_SITE_INIT(BENCH_STREAM_RANGE);

/* The work of the --spin-control loop: this many dependent steps of a
 * multiply-add, about 20 us on a 3 GHz core. */
#define SPIN_STEPS 20000u

/* Times SPIN_STEPS dependent multiply-adds (the same fixed work every
 * time), in ns. */
static uint64_t spin_control(void)
{
    struct timespec t0, t1;
    volatile uint64_t sink;
    uint64_t x = 88172645463325252ull;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < SPIN_STEPS; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
    (void)sink;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
           (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
}

/* Times STREAM_SWEEPS sweeps of a 32 KiB array of floats, each element
 * multiplied and added into it (the same fixed work every time), in
 * ns. */
static uint64_t stream_control(void)
{
    static float a[STREAM_FLOATS];
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned k = 0; k < STREAM_SWEEPS; k++) {
        for (unsigned i = 0; i < STREAM_FLOATS; i++)
            a[i] = a[i] * 0.5f + 1.0f;
    }
    __asm__ __volatile__("" : : "r"(a) : "memory");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
           (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
}

static const char usage[] =
    "Usage: hostrange-bench [OPTION]...\n"
    "Run the example operators of libhrops through all their layers and\n"
    "report their cold, warm and end_to_end populations to hostranged.\n"
    "\n"
    "For each case: one call checked against a double-precision reference;\n"
    "cold: the operator cache cleared, the device synchronized, one call in\n"
    "its own window; end_to_end: blocks of calls timed with collection\n"
    "inactive, the device synchronized only between blocks, each block one\n"
    "sample (its time divided by its calls); warm: as many calls again, in\n"
    "blocks of the same size, inside one window. The node id of a case is\n"
    "ops/OP[BACKEND-DTYPE-SHAPES], e.g. ops/add[cpu-float32-13x4].\n"
    "\n"
    "Cases (default: add float32 13x4 and gemm float32 4x48x64,4x64x6, on\n"
    "every backend available: cpu, and nvidia when a CUDA device is\n"
    "present):\n"
    "      --op=OP         add or gemm (default: both)\n"
    "      --backend=B     cpu or nvidia (CUDA devices; cuda is accepted too)\n"
    "                      (default: every backend available)\n"
    "      --dtype=T       float32 (default), float64, float16 or bfloat16\n"
    "                      (gemm: float32 and float64 on cpu; float32,\n"
    "                      float16 and bfloat16 on nvidia)\n"
    "      --shape=S       the operands' shapes, lengths joined by 'x' and\n"
    "                      shapes by ',' (needs --op): add A (a and b alike)\n"
    "                      or A,B (broadcast to the output); gemm A,B (a and\n"
    "                      b as stored, rank 2, or rank 3 with the batch\n"
    "                      first)\n"
    "      --trans=T       gemm: transpose a, b or ab (default none)\n"
    "      --cases=FILE    the cases in FILE, one a line:\n"
    "                        op=OP [backend=B] [dtype=T] [shape=S] [trans=T]\n"
    "                      ('#' starts a comment); --backend applies to the\n"
    "                      lines naming none\n"
    "\n"
    "Timing:\n"
    "      --target-ms=MS  time to spend on the end_to_end blocks of a case\n"
    "                      (default 200)\n"
    "      --max-calls=N   the most calls the automatic choices make: per\n"
    "                      block, and in all the blocks together unless\n"
    "                      --blocks is given (the warm window makes as many\n"
    "                      calls as the blocks) (default 10000)\n"
    "      --calls=N       calls per block (default: the first of 1, 2, 5,\n"
    "                      10, 20, 50, ... whose block takes 50 us or more);\n"
    "                      on nvidia at most 256, so that a block times the\n"
    "                      host's submission and not a full launch queue\n"
    "      --blocks=N      blocks (default: as many as --target-ms and\n"
    "                      --max-calls allow, at least 1)\n"
    "      --raw           also time the bare backend work (the CPU loop, the\n"
    "                      kernel launch or cublasLtMatmul, prepared once) in\n"
    "                      blocks alternating with the end_to_end ones, and\n"
    "                      print a JSON line per case:\n"
    "                        {\"bench\":\"ops.OP.BACKEND.e2e\",\"value\":E2E,"
    "\"unit\":\"ns\",\n"
    "                         \"baseline\":RAW,\"ratio\":E2E/RAW}\n"
    "                      (medians of the per-call block times; a case other\n"
    "                      than the default one has -DTYPE-SHAPES before\n"
    "                      .e2e)\n"
    "\n"
    "Observer cost:\n"
    "      --calibrate     instead of the cases: calibrate what measuring\n"
    "                      costs (run it in the environment of the programs\n"
    "                      measured): --calls (default 100000) empty scopes\n"
    "                      nested three deep, calibration.outer >\n"
    "                      calibration.mid > calibration.inner, in a window\n"
    "                      of node `calibration` (operator: the process\n"
    "                      label, $HOSTRANGE_LABEL or the program's name;\n"
    "                      backend: the clock), and --blocks (default 1001)\n"
    "                      pairs of reads of the client's clock, recorded as\n"
    "                      calibration.timer. The daemon's keys of that\n"
    "                      label under node `calibration` are reset first, so\n"
    "                      it keeps only the latest calibration of a label;\n"
    "                      it derives the figures (hostrangectl stats,\n"
    "                      calibration.LABEL.*) that hostrangectl dump\n"
    "                      --fields observer and --correct-observer use\n"
    "      --control       for each case, instead of its populations: rounds\n"
    "                      of --calls calls (default: a round of 1 ms or\n"
    "                      more) with collection active (a window of node\n"
    "                      control/NODE) and inactive, --blocks rounds of each\n"
    "                      (at least 7; default: as many as --target-ms\n"
    "                      allows, up to 200), in a random order (what an\n"
    "                      active round collected is delivered before the\n"
    "                      next round, untimed); prints a JSON line per\n"
    "                      case:\n"
    "                        {\"bench\":\"control.OP.BACKEND\",\"value\":ACTIVE,\n"
    "                         \"unit\":\"ns\",\"baseline\":INACTIVE,\n"
    "                         \"ratio\":ACTIVE/INACTIVE,\"ci95\":[LO,HI]}\n"
    "                      (medians of the per-call round times; the ratio's\n"
    "                      bootstrap 95% confidence interval; a case other\n"
    "                      than the default one has .DTYPE-SHAPES after\n"
    "                      BACKEND)\n"
    "\n"
    "Testing gates:\n"
    "      --slow=RANGE=PCT  make RANGE (binding.body, backend.submit or\n"
    "                      dispatch.call) PCT percent slower, by spinning\n"
    "                      inside it at its end for PCT% of the time spent\n"
    "                      in it so far (hrops_slow); may be given for each\n"
    "      --slow-ns=RANGE=NS\n"
    "                      add about NS ns of fixed work at the start of RANGE\n"
    "                      (as --slow): a chain of dependent multiply-adds,\n"
    "                      its length calibrated at the start (hrops_slow_ns),\n"
    "                      that the rest of the range waits for (lfence on\n"
    "                      x86), as a small regression in the code would;\n"
    "                      may be given for each\n"
    "      --spin-control  after each warm block, time two fixed loops, the\n"
    "                      same work every time, and report each as a record\n"
    "                      under the case's warm labels: control.spin (20000\n"
    "                      dependent integer multiply-adds, bound by latency)\n"
    "                      and control.stream (4 sweeps of a 32 KiB float\n"
    "                      array, a multiply-add each, bound by throughput and\n"
    "                      the cache): yardsticks of the machine's speed in\n"
    "                      each round, for hostrangectl diff --normalize\n"
    "\n"
    "Report:\n"
    "  -o, --output=FILE   when a private daemon is started, write its report\n"
    "                      to FILE instead of standard output\n"
    "      --list          print the node id of each case and exit\n"
    "  -h, --help          show this help and exit\n"
    "  -V, --version       show the version and exit\n"
    "\n"
    "The samples go to the hostranged of $HOSTRANGE_RUNTIME_DIR (see\n"
    "hostrangectl --help for the default). When none answers there, the\n"
    "benchmark runs itself under `hostrangectl record`, which starts a\n"
    "private daemon and prints the report when the benchmark is done;\n"
    "hostrangectl is $HOSTRANGECTL, else the one beside this program, else\n"
    "the one on PATH. HOSTRANGE=0 runs without collecting. Built with\n"
    "--disable-host-range-profiling, the benchmark has no ranges and reports\n"
    "nothing (--raw still prints its lines).\n"
    "\n"
    "Exit status: 0 on success, 1 when a case fails (an error, a wrong\n"
    "result, an unavailable backend, no daemon), 2 on a usage error.\n";

struct options {
    int raw;
    int list;
    int control;
    int calibrate;
    int spin;                   /* --spin-control */
    unsigned target_ms;
    unsigned max_calls;
    unsigned calls;             /* 0: automatic */
    unsigned blocks;            /* 0: automatic */
    const char *output;
};

static void die_usage(const char *fmt, const char *arg)
{
    fputs("hostrange-bench: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see --help)\n", stderr);
    exit(2);
}

/* --slow-ns RANGE=NS: sets the knob of hrops_slow_ns; exits on a bad
 * value. */
static void parse_slow_ns(const char *v)
{
    const char *eq = strrchr(v, '=');
    char range[64], *end;
    double ns;

    if (eq == NULL || eq == v || (size_t)(eq - v) >= sizeof range)
        die_usage("bad --slow-ns '%s' (RANGE=NS)", v);
    memcpy(range, v, (size_t)(eq - v));
    range[eq - v] = '\0';
    ns = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || hrops_slow_ns(range, ns) != 0)
        die_usage("bad --slow-ns '%s' (binding.body, backend.submit or "
                  "dispatch.call, and ns from 0 to 1000000)", v);
}

/* --slow RANGE=PCT: sets the knob of hrops_slow; exits on a bad value. */
static void parse_slow(const char *v)
{
    const char *eq = strrchr(v, '=');
    char range[64], *end;
    double pct;

    if (eq == NULL || eq == v || (size_t)(eq - v) >= sizeof range)
        die_usage("bad --slow '%s' (RANGE=PCT)", v);
    memcpy(range, v, (size_t)(eq - v));
    range[eq - v] = '\0';
    pct = strtod(eq + 1, &end);
    if (end == eq + 1 || *end != '\0' || hrops_slow(range, pct) != 0)
        die_usage("bad --slow '%s' (binding.body, backend.submit or "
                  "dispatch.call, and a percentage from 0 to 10000)", v);
}

static unsigned parse_count(const char *opt, const char *s, unsigned min)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || s[0] == '\0' || s[0] == '-' ||
        v < min || v > 100000000ul)
        die_usage("bad value for %s", opt);
    return (unsigned)v;
}

/* The end_to_end and raw medians of a case, in ns per call. */
struct result {
    double e2e, raw;
};

static int measure(struct bench_run *r, const struct options *o,
                   const char *node, struct result *res)
{
    const struct bench_case *c = r->c;
    unsigned calls = o->calls ? bench_block_max(c, o->calls) : 0;
    unsigned blocks = o->blocks;
    uint64_t ns = 0;
    double *e2e = NULL, *raw = NULL;
    int rc;

    /* Cold: the first call after the cache was cleared. */
    hrops_cache_clear();
    if ((rc = hrops_sync(r->device)) != 0)
        return rc;
    hr_labels_set(node, bench_op_name(c->op), bench_backend_name(c->backend),
                  HR_PHASE_COLD);
    hr_window_begin();
    rc = bench_call(r);
    hr_window_end();
    if (rc == 0)
        rc = hrops_sync(r->device);
    if (rc != 0)
        return rc;

    /* Blocks: autoranged to MIN_BLOCK_NS unless given. */
    if (calls == 0) {
        if ((rc = bench_autorange(r, MIN_BLOCK_NS,
                                  bench_block_max(c, o->max_calls), &calls,
                                  &ns)) != 0)
            return rc;
    } else if ((rc = bench_time_block(r, calls, 0, &ns)) != 0) {
        return rc;
    }
    if (blocks == 0) {
        uint64_t by_time = (uint64_t)o->target_ms * 1000000u / (ns + 1);
        uint64_t by_calls = o->max_calls / calls;

        blocks = (unsigned)(by_time < by_calls ? by_time : by_calls);
        if (blocks < 1)
            blocks = 1;
    }
    if (o->raw) {
        rc = c->op == BENCH_ADD
                 ? hrops_raw_add_new(&r->x[0].d, &r->x[1].d, &r->x[2].d,
                                     r->device, 0, &r->raw)
                 : hrops_raw_gemm_new(&r->x[0].d, &r->x[1].d, &r->x[2].d,
                                      1.0, 0.0, c->flags, r->device, 0,
                                      &r->raw);
        if (rc != 0)
            return rc;
        /* Warm the bare path as the layered one was. */
        if ((rc = bench_time_block(r, calls, 1, &ns)) != 0)
            return rc;
    }
    e2e = calloc(blocks, sizeof *e2e);
    raw = calloc(blocks, sizeof *raw);
    if (e2e == NULL || raw == NULL) {
        rc = -ENOMEM;
        goto out;
    }

    /* end_to_end, collection inactive; the records carry the warm labels. */
    hr_labels_set(node, bench_op_name(c->op), bench_backend_name(c->backend),
                  HR_PHASE_WARM);
    for (unsigned b = 0; b < blocks; b++) {
        if ((rc = bench_time_block(r, calls, 0, &ns)) != 0)
            goto out;
        e2e[b] = (double)ns / calls;
        hr_record(&s_e2e, ns / calls);
        if (o->raw) {
            if ((rc = bench_time_block(r, calls, 1, &ns)) != 0)
                goto out;
            raw[b] = (double)ns / calls;
        }
    }

    /* Warm: the same calls inside one window (with --spin-control, a
     * timed spin after each block, as a record of the warm labels). */
    hr_window_begin();
    for (unsigned b = 0; b < blocks && rc == 0; b++) {
        for (unsigned i = 0; i < calls && rc == 0; i++)
            rc = bench_call(r);
        if (rc == 0)
            rc = hrops_sync(r->device);
        if (rc == 0 && o->spin) {
            hr_record(&s_spin, spin_control());
            hr_record(&s_stream, stream_control());
        }
    }
    hr_window_end();
    if (rc != 0)
        goto out;
    res->e2e = bench_median(e2e, blocks);
    res->raw = o->raw ? bench_median(raw, blocks) : 0;
out:
    free(e2e);
    free(raw);
    return rc;
}

/* Runs one expanded case; returns 0, or 1 with a message printed. */
static int run_case(const struct bench_case *c, const struct options *o)
{
    struct bench_run r;
    struct result res = { 0, 0 };
    double *ref = NULL, *bound = NULL, err;
    char node[256];
    int64_t worst = 0;
    int rc, status = 1;

    bench_node_id(c, node, sizeof node);
    rc = bench_run_init(&r, c, &ref, &bound);
    if (rc != 0) {
        fprintf(stderr, "hostrange-bench: %s: cannot set up: %s\n", node,
                strerror(-rc));
        goto out;
    }
    /* The correctness call. */
    rc = bench_call(&r);
    if (rc == 0)
        rc = hrops_sync(r.device);
    if (rc == 0)
        rc = ref_download(&r.x[2]);
    if (rc != 0) {
        fprintf(stderr, "hostrange-bench: %s: the call failed: %s\n", node,
                strerror(-rc));
        goto out;
    }
    err = ref_check(&r.x[2], ref, bound, ref_tolerance(c->dtype), &worst);
    if (!(err <= 1.0)) {
        fprintf(stderr, "hostrange-bench: %s: wrong result: element %lld is "
                "%g, expected %g\n", node, (long long)worst,
                ref_get(&r.x[2], worst), ref[worst]);
        goto out;
    }
    if (o->control) {
        struct bench_control ctl;
        char name[256];

        rc = bench_control_case(&r, node, o->calls, o->blocks, o->target_ms,
                                o->max_calls, &ctl);
        if (rc != 0) {
            fprintf(stderr, "hostrange-bench: %s: %s\n", node,
                    strerror(-rc));
            goto out;
        }
        bench_control_name(c, name, sizeof name);
        printf("{\"bench\":\"%s\",\"value\":%.1f,\"unit\":\"ns\","
               "\"baseline\":%.1f,\"ratio\":%.4f,\"ci95\":[%.4f,%.4f]}\n",
               name, ctl.active_ns, ctl.inactive_ns, ctl.ratio, ctl.lo,
               ctl.hi);
        fflush(stdout);
        status = 0;
        goto out;
    }
    rc = measure(&r, o, node, &res);
    if (rc != 0) {
        fprintf(stderr, "hostrange-bench: %s: %s\n", node, strerror(-rc));
        goto out;
    }
    if (o->raw) {
        char name[256];

        bench_raw_name(c, name, sizeof name);
        printf("{\"bench\":\"%s\",\"value\":%.1f,\"unit\":\"ns\","
               "\"baseline\":%.1f,\"ratio\":%.3f}\n",
               name, res.e2e, res.raw, res.raw > 0 ? res.e2e / res.raw : 0.0);
        fflush(stdout);
    }
    status = 0;
out:
    free(ref);
    free(bound);
    bench_run_fini(&r);
    return status;
}

/* 1 when the backend implements the op for the dtype. */
static int supported(int op, int backend, int dtype)
{
    if (op == BENCH_ADD)
        return 1;
    if (backend == BENCH_CPU)
        return dtype == HROPS_FLOAT32 || dtype == HROPS_FLOAT64;
    return dtype != HROPS_FLOAT64;
}

/* Expands the specs into cases with one backend each. Returns the number,
 * or -1 with a message printed (*usage_err set for a usage error). */
static int expand(const struct bench_case *specs, int nspecs, int backend,
                  struct bench_case *out, int *usage_err)
{
    int have_cuda = hrops_cuda_device_count() > 0, n = 0;

    for (int i = 0; i < nspecs; i++) {
        int b = specs[i].backend != BENCH_ANY ? specs[i].backend : backend;

        for (int k = BENCH_CPU; k <= BENCH_CUDA; k++) {
            struct bench_case c = specs[i];

            if (b != BENCH_ANY && b != k)
                continue;
            if (b == BENCH_ANY && (k == BENCH_CUDA && !have_cuda))
                continue;
            if (!supported(c.op, k, c.dtype)) {
                if (b == BENCH_ANY)
                    continue;
                fprintf(stderr, "hostrange-bench: %s %s is not implemented "
                        "on %s\n", bench_op_name(c.op),
                        hrops_dtype_name(c.dtype), bench_backend_name(k));
                *usage_err = 1;
                return -1;
            }
            if (k == BENCH_CUDA && !have_cuda) {
                fprintf(stderr, "hostrange-bench: backend nvidia is not "
                        "available: %s\n", hrops_cuda_error());
                return -1;
            }
            if (n == MAX_CASES) {
                fprintf(stderr, "hostrange-bench: more than %d cases\n",
                        MAX_CASES);
                *usage_err = 1;
                return -1;
            }
            c.backend = k;
            out[n++] = c;
        }
    }
    if (n == 0) {
        fprintf(stderr, "hostrange-bench: no case to run on the backends "
                "available\n");
        *usage_err = 1;
        return -1;
    }
    return n;
}

/* Reads a cases file into specs; returns their number or -1 (printed). */
static int read_cases(const char *path, struct bench_case *specs)
{
    FILE *f = fopen(path, "r");
    char line[1024], err[256];
    int n = 0, lineno = 0;

    if (f == NULL) {
        fprintf(stderr, "hostrange-bench: cannot read %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        int rc;

        lineno++;
        rc = bench_case_line(line, &specs[n], err, sizeof err);
        if (rc < 0 || (rc > 0 && ++n == MAX_CASES)) {
            fprintf(stderr, "hostrange-bench: %s:%d: %s\n", path, lineno,
                    rc < 0 ? err : "too many cases");
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "hostrange-bench: %s: no case\n", path);
        return -1;
    }
    return n;
}

/* What the command line asks for: the run's options and the cases'
 * selection. */
struct args {
    struct options o;
    const char *shape, *cases_file;
    int op, backend, dtype, flags;
};

/*
 * Parses the command line into *a; exits with status 2 on a usage error.
 * Returns 0, or 1 when --help or --version was printed (the program then
 * exits with 0).
 */
static int parse_args(int argc, char **argv, struct args *a)
{
    enum { OPT_OP = 256, OPT_BACKEND, OPT_DTYPE, OPT_SHAPE, OPT_TRANS,
           OPT_CASES, OPT_TARGET, OPT_MAX, OPT_CALLS, OPT_BLOCKS, OPT_RAW,
           OPT_LIST, OPT_CONTROL, OPT_CALIBRATE, OPT_SLOW, OPT_SPIN,
           OPT_SLOW_NS };
    static const struct option longopts[] = {
        { "op", required_argument, NULL, OPT_OP },
        { "backend", required_argument, NULL, OPT_BACKEND },
        { "dtype", required_argument, NULL, OPT_DTYPE },
        { "shape", required_argument, NULL, OPT_SHAPE },
        { "trans", required_argument, NULL, OPT_TRANS },
        { "cases", required_argument, NULL, OPT_CASES },
        { "target-ms", required_argument, NULL, OPT_TARGET },
        { "max-calls", required_argument, NULL, OPT_MAX },
        { "calls", required_argument, NULL, OPT_CALLS },
        { "blocks", required_argument, NULL, OPT_BLOCKS },
        { "raw", no_argument, NULL, OPT_RAW },
        { "list", no_argument, NULL, OPT_LIST },
        { "control", no_argument, NULL, OPT_CONTROL },
        { "calibrate", no_argument, NULL, OPT_CALIBRATE },
        { "slow", required_argument, NULL, OPT_SLOW },
        { "slow-ns", required_argument, NULL, OPT_SLOW_NS },
        { "spin-control", no_argument, NULL, OPT_SPIN },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct options *o = &a->o;
    int c;

    *a = (struct args){ { 0, 0, 0, 0, 0, 200, 10000, 0, 0, NULL }, NULL, NULL,
                        0, BENCH_ANY, -1, -1 };
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:hV", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OP:
            if ((a->op = bench_op_parse(optarg)) < 0)
                die_usage("unknown op '%s'", optarg);
            break;
        case OPT_BACKEND:
            if ((a->backend = bench_backend_parse(optarg)) < 0)
                die_usage("unknown backend '%s'", optarg);
            break;
        case OPT_DTYPE:
            if ((a->dtype = bench_dtype_parse(optarg)) < 0)
                die_usage("unknown dtype '%s'", optarg);
            break;
        case OPT_SHAPE:
            a->shape = optarg;
            break;
        case OPT_TRANS:
            if ((a->flags = bench_trans_parse(optarg)) < 0)
                die_usage("bad transpose '%s' (none, a, b or ab)", optarg);
            break;
        case OPT_CASES:
            a->cases_file = optarg;
            break;
        case OPT_TARGET:
            o->target_ms = parse_count("--target-ms", optarg, 1);
            break;
        case OPT_MAX:
            o->max_calls = parse_count("--max-calls", optarg, 1);
            break;
        case OPT_CALLS:
            o->calls = parse_count("--calls", optarg, 1);
            break;
        case OPT_BLOCKS:
            o->blocks = parse_count("--blocks", optarg, 1);
            break;
        case OPT_RAW:
            o->raw = 1;
            break;
        case OPT_LIST:
            o->list = 1;
            break;
        case OPT_CONTROL:
            o->control = 1;
            break;
        case OPT_CALIBRATE:
            o->calibrate = 1;
            break;
        case OPT_SLOW:
            parse_slow(optarg);
            break;
        case OPT_SLOW_NS:
            parse_slow_ns(optarg);
            break;
        case OPT_SPIN:
            o->spin = 1;
            break;
        case 'o':
            o->output = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 1;
        case 'V':
            printf("hostrange-bench (%s) %s\n", PACKAGE_NAME,
                   PACKAGE_VERSION);
            return 1;
        case ':':
            die_usage("missing value for option '%s'", argv[optind - 1]);
            break;
        default:
            /* An unknown short option inside a word of several ("-qx"):
             * getopt names it. */
            if (optopt > ' ' && optopt <= '~') {
                char opt[3] = { '-', (char)optopt, '\0' };

                die_usage("unknown option '%s'", opt);
            }
            die_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        die_usage("unexpected argument '%s'", argv[optind]);
    if (a->cases_file != NULL &&
        (a->op != 0 || a->dtype >= 0 || a->shape != NULL || a->flags >= 0))
        die_usage("%s", "--cases excludes --op, --dtype, --shape and "
                  "--trans");
    if (a->shape != NULL && a->op == 0)
        die_usage("%s", "--shape needs --op");
    if (o->calibrate &&
        (o->control || o->raw || o->list || a->cases_file != NULL ||
         a->op != 0 || a->backend != BENCH_ANY || a->dtype >= 0 ||
         a->flags >= 0))
        die_usage("%s", "--calibrate runs no case: it takes only --calls, "
                  "--blocks and -o");
    if (o->control && o->raw)
        die_usage("%s", "--control and --raw are two different runs");
    if (o->control && o->blocks != 0 && o->blocks < 7)
        die_usage("%s", "--control needs --blocks of 7 or more");
    return 0;
}

/* --calibrate: calibrates against the daemon (started when none answers)
 * and waits for its samples to arrive. Returns the exit status. */
static int run_calibrate(int argc, char **argv, const struct options *o)
{
    if (bench_daemon_ensure(argc, argv, o->output) != 0 ||
        bench_calibrate(o->calls ? o->calls : 100000,
                        o->blocks ? o->blocks : 1001) != 0)
        return 1;
    if (hr_flush(10000) != 0) {
        fprintf(stderr, "hostrange-bench: not every sample reached the "
                "daemon\n");
        return 1;
    }
    return 0;
}

/* The cases asked for, before they are expanded per backend: those of
 * --cases, or the default case of each operator (or of --op) with
 * --shape, --dtype and --trans applied. Returns their number, or -1 when
 * the cases file cannot be read (said on stderr); exits with status 2 on
 * a bad case. */
static int asked_cases(const struct args *a, struct bench_case *specs)
{
    char err[256];
    int n = 0;

    if (a->cases_file != NULL)
        return read_cases(a->cases_file, specs);
    for (int k = BENCH_ADD; k <= BENCH_GEMM; k++) {
        if (a->op != 0 && a->op != k)
            continue;
        bench_case_default(&specs[n], k);
        if (a->shape != NULL && bench_case_shape(&specs[n], a->shape) != 0)
            die_usage("bad shape '%s'", a->shape);
        if (a->dtype >= 0 && a->dtype != specs[n].dtype) {
            specs[n].dtype = a->dtype;
            specs[n].is_default = 0;
        }
        if (a->flags > 0) {
            specs[n].flags = a->flags;
            specs[n].is_default = 0;
        }
        if (bench_case_check(&specs[n], err, sizeof err) != 0)
            die_usage("%s", err);
        n++;
    }
    return n;
}

/* Runs the n cases against the daemon (started when none answers) and
 * waits for their samples to arrive. Returns the exit status. */
static int run_cases(int argc, char **argv, const struct bench_case *cases,
                     int n, const struct options *o)
{
    int status = 0;

    if (bench_daemon_ensure(argc, argv, o->output) != 0)
        return 1;
    if (o->control && (!hr_compiled() || !hr_enabled())) {
        fprintf(stderr, "hostrange-bench: --control: collection is off "
                "(HOSTRANGE=0, or built without the ranges): no active "
                "condition to compare\n");
        return 0;
    }
    for (int i = 0; i < n; i++)
        status |= run_case(&cases[i], o);
    hrops_cache_clear();
    if (hr_enabled() && hr_flush(10000) != 0) {
        fprintf(stderr, "hostrange-bench: not every sample reached the "
                "daemon\n");
        status = 1;
    }
    return status;
}

int main(int argc, char **argv)
{
    static struct bench_case specs[MAX_CASES], cases[MAX_CASES];
    struct args a;
    int n, usage_error = 0;

    if (parse_args(argc, argv, &a) != 0)
        return 0;
    if (a.o.calibrate)
        return run_calibrate(argc, argv, &a.o);
    n = asked_cases(&a, specs);
    if (n < 0)
        return 1;
    n = expand(specs, n, a.backend, cases, &usage_error);
    if (n < 0)
        return usage_error ? 2 : 1;
    if (a.o.list) {
        for (int i = 0; i < n; i++) {
            char node[256];

            bench_node_id(&cases[i], node, sizeof node);
            puts(node);
        }
        return 0;
    }
    return run_cases(argc, argv, cases, n, &a.o);
}
