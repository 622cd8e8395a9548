/*
 * The ranges of libhrops as a real hostranged sees them: hostrange-bench,
 * run with a fixed number of blocks and calls against a daemon on a private
 * runtime directory, must produce for each operator exactly the rows of the
 * reference's reports (the same ranges, phases and metrics in the same
 * order), with exact counts: one sample per range for the cold call (three
 * binding.tensor_conversion), blocks x calls in the warm window, one
 * end_to_end per block. Built with --disable-host-range-profiling, the same
 * runs must produce no row at all. Also: the private daemon the benchmark
 * starts when none answers, its --raw line, and its command line.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ops/hrops.h"
#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

#ifdef HOSTRANGE_DISABLE
#define PROFILING 0
#else
#define PROFILING 1
#endif

#define MAX_ROWS 128

static char g_bench[4096];

/* Reads the reference's report for `op` (tests/data/reference-OP.jsonl). */
static int reference_rows(const char *op, struct flat *rows)
{
    const char *srcdir = getenv("srcdir");
    char path[4096], *text;
    FILE *f;
    long len;
    int n;

    snprintf(path, sizeof path, "%s/tests/data/reference-%s.jsonl",
             srcdir != NULL ? srcdir : ".", op);
    f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    n = flat_parse_rows(text, rows, MAX_ROWS);
    free(text);
    return n;
}

/* Runs hostrange-bench with the arguments (NULL-terminated) against the
 * daemon of dir; fails unless it exits with `code`. */
static void bench(const char *dir, int code, struct harness_run *r, ...)
{
    char *argv[32];
    int n = 0;
    va_list ap;

    argv[n++] = g_bench;
    va_start(ap, r);
    while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    harness_run(argv, dir, 120, r);
    if (!harness_exited(r->status, code))
        fail_msg("hostrange-bench: status 0x%x, expected exit %d: %s",
                 r->status, code, r->err);
}

/*
 * Checks the report rows of one case run with `blocks` blocks of `calls`
 * calls against the reference's report of the same operator.
 */
static void check_case_rows(const struct flat *rows, int n, const char *op,
                            const char *node, int blocks, int calls)
{
    static struct flat ref[MAX_ROWS];
    int nref = reference_rows(op, ref);

    assert_int_equal(n, nref);
    for (int i = 0; i < n; i++) {
        const char *phase = flat_get(&rows[i], "phase");
        const char *range = flat_get(&rows[i], "range");
        long count = strtol(flat_get(&rows[i], "count"), NULL, 10);
        long want;

        assert_int_equal(rows[i].n, 10);
        for (int k = 0; k < 10; k++)
            assert_string_equal(rows[i].key[k], ref[i].key[k]);
        assert_string_equal(flat_get(&rows[i], "nodeid"), node);
        assert_string_equal(flat_get(&rows[i], "operator"), op);
        assert_string_equal(flat_get(&rows[i], "backend"), "cpu");
        assert_string_equal(phase, flat_get(&ref[i], "phase"));
        assert_string_equal(range, flat_get(&ref[i], "range"));
        assert_string_equal(flat_get(&rows[i], "metric"),
                            flat_get(&ref[i], "metric"));
        if (strcmp(range, "end_to_end") == 0)
            want = blocks;
        else
            want = (strcmp(phase, "cold") == 0 ? 1 : blocks * calls) *
                   (strcmp(range, "binding.tensor_conversion") == 0 ? 3 : 1);
        if (count != want)
            fail_msg("%s %s %s: count %ld, expected %ld", phase, range,
                     flat_get(&rows[i], "metric"), count, want);
    }
}

static void run_and_check(const char *dir, const char *op, const char *node)
{
    static struct flat rows[MAX_ROWS];
    struct harness_run r, d;
    int n;

    bench(dir, 0, &r, "--op", op, "--backend", "cpu", "--calls", "4",
          "--blocks", "3", (char *)NULL);
    /* Reporting to a daemon that answers: nothing on stdout. */
    assert_string_equal(r.out, "");
    harness_run_free(&r);
    harness_ctl(dir, &d, "dump", (char *)NULL);
    assert_true(harness_exited(d.status, 0));
    n = flat_parse_rows(d.out, rows, MAX_ROWS);
    if (PROFILING)
        check_case_rows(rows, n, op, node, 3, 4);
    else
        assert_int_equal(n, 0);
    harness_run_free(&d);
}

static void test_add_rows(void **state)
{
    struct harness_daemon *d = *state;

    run_and_check(d->dir, "add", "ops/add[cpu-float32-13x4]");
}

static void test_gemm_rows(void **state)
{
    struct harness_daemon *d = *state;

    run_and_check(d->dir, "gemm", "ops/gemm[cpu-float32-4x48x64-4x64x6]");
}

static void test_other_case_and_stats(void **state)
{
    static struct flat rows[MAX_ROWS];
    struct harness_daemon *d = *state;
    struct harness_run r;
    int n, constructs = 0;

    bench(d->dir, 0, &r, "--op", "gemm", "--backend", "cpu", "--dtype",
          "float64", "--shape", "2x5x3,2x5x4", "--trans", "a", "--calls",
          "2", "--blocks", "2", (char *)NULL);
    harness_run_free(&r);
    harness_ctl(d->dir, &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    n = flat_parse_rows(r.out, rows, MAX_ROWS);
    for (int i = 0; i < n; i++) {
        assert_string_equal(flat_get(&rows[i], "nodeid"),
                            "ops/gemm[cpu-float64-2x5x3-2x5x4-ta]");
        if (strcmp(flat_get(&rows[i], "range"), "cache.construct") == 0) {
            assert_string_equal(flat_get(&rows[i], "phase"), "cold");
            assert_string_equal(flat_get(&rows[i], "count"), "1");
            constructs++;
        }
    }
    assert_int_equal(n, PROFILING ? 39 : 0);
    assert_int_equal(constructs, PROFILING ? 2 : 0);
    harness_run_free(&r);

    /* Every range closed in order, nothing lost. */
    harness_ctl(d->dir, &r, "stats", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    if (PROFILING) {
        assert_non_null(strstr(r.out, "client.1.lost_events 0\n"));
        assert_non_null(strstr(r.out, "client.1.errors.out_of_order 0\n"));
    }
    harness_run_free(&r);
}

static void test_raw_line(void **state)
{
    struct harness_daemon *d = *state;
    static const char *const keys[5] = { "bench", "value", "unit",
                                         "baseline", "ratio" };
    struct harness_run r;
    struct flat row;
    double value, baseline, ratio;

    bench(d->dir, 0, &r, "--raw", "--op", "add", "--backend", "cpu",
          "--calls", "4", "--blocks", "3", (char *)NULL);
    assert_non_null(strchr(r.out, '\n'));
    assert_string_equal(strchr(r.out, '\n'), "\n");
    *strchr(r.out, '\n') = '\0';
    assert_int_equal(flat_parse(r.out, &row), 0);
    assert_int_equal(row.n, 5);
    for (int k = 0; k < 5; k++)
        assert_string_equal(row.key[k], keys[k]);
    assert_string_equal(flat_get(&row, "bench"), "ops.add.cpu.e2e");
    assert_string_equal(flat_get(&row, "unit"), "ns");
    value = strtod(flat_get(&row, "value"), NULL);
    baseline = strtod(flat_get(&row, "baseline"), NULL);
    ratio = strtod(flat_get(&row, "ratio"), NULL);
    assert_true(value > 0 && baseline > 0);
    /* The printed ratio is the ratio of the unrounded medians. */
    if (!(ratio > (value - 0.05) / (baseline + 0.05) - 0.0005 &&
          ratio < (value + 0.05) / (baseline - 0.05) + 0.0005))
        fail_msg("ratio %g for %g / %g", ratio, value, baseline);
    harness_run_free(&r);
}

static void test_private_daemon(void **state)
{
    static struct flat rows[MAX_ROWS];
    char dir[256];
    struct harness_run r;
    int n;

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "bench-nodaemon");
    /* No daemon on dir: the benchmark starts a private one through
     * hostrangectl record, which prints the report. */
    bench(dir, 0, &r, "--op", "add", "--backend", "cpu", "--calls", "3",
          "--blocks", "2", (char *)NULL);
    n = flat_parse_rows(r.out, rows, MAX_ROWS);
    if (PROFILING)
        check_case_rows(rows, n, "add", "ops/add[cpu-float32-13x4]", 2, 3);
    else
        assert_int_equal(n, 0);
    harness_run_free(&r);
    rmdir(dir);
}

/* Fails unless stderr holds exactly one line containing `what`. */
static void one_line(const struct harness_run *r, const char *what)
{
    const char *nl = strchr(r->err, '\n');

    if (nl == NULL || nl[1] != '\0' || strstr(r->err, what) == NULL)
        fail_msg("expected one line with '%s', got: %s", what, r->err);
}

static void test_command_line(void **state)
{
    char dir[256], path[300];
    struct harness_run r;
    FILE *f;

    (void)state;
    bench(NULL, 0, &r, "--help", (char *)NULL);
    assert_true(strncmp(r.out, "Usage: hostrange-bench", 22) == 0);
    assert_non_null(strstr(r.out, "--raw"));
    harness_run_free(&r);

    bench(NULL, 2, &r, "--bogus", (char *)NULL);
    one_line(&r, "--bogus");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--op", "mul", (char *)NULL);
    one_line(&r, "mul");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--shape", "3x4", (char *)NULL);
    one_line(&r, "--op");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--calls", "0", (char *)NULL);
    one_line(&r, "--calls");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--op", "gemm", "--shape", "3x4,5x6", (char *)NULL);
    one_line(&r, "multiply");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--op", "gemm", "--backend", "cpu", "--dtype",
          "float16", (char *)NULL);
    one_line(&r, "not implemented");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--backend", "gpu", (char *)NULL);
    one_line(&r, "unknown backend 'gpu'");
    harness_run_free(&r);
    if (hrops_cuda_device_count() == 0) {
        /* The CUDA backend is nvidia in reports; cuda is its alias. */
        bench(NULL, 1, &r, "--backend", "nvidia", (char *)NULL);
        one_line(&r, "backend nvidia is not available: ");
        harness_run_free(&r);
        bench(NULL, 1, &r, "--backend", "cuda", (char *)NULL);
        one_line(&r, "backend nvidia is not available: ");
        harness_run_free(&r);
    }

    /* A cases file, listed. */
    harness_mkdtemp(dir, sizeof dir, "bench-cases");
    snprintf(path, sizeof path, "%s/cases", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("# the cases\n"
          "op=add shape=13x4,1x4 dtype=float16 backend=cpu\n"
          "\n"
          "op=gemm backend=cpu trans=b shape=3x4,5x4   # c is 3x5\n", f);
    fclose(f);
    bench(NULL, 0, &r, "--cases", path, "--list", (char *)NULL);
    assert_string_equal(r.out, "ops/add[cpu-float16-13x4-1x4]\n"
                               "ops/gemm[cpu-float32-3x4-5x4-tb]\n");
    harness_run_free(&r);
    bench(NULL, 2, &r, "--cases", path, "--op", "add", (char *)NULL);
    one_line(&r, "--cases");
    harness_run_free(&r);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("op=add dtype=float8\n", f);
    fclose(f);
    bench(NULL, 1, &r, "--cases", path, (char *)NULL);
    one_line(&r, ":1:");
    harness_run_free(&r);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_add_rows),
        HARNESS_DAEMON_TEST(test_gemm_rows),
        HARNESS_DAEMON_TEST(test_other_case_and_stats),
        HARNESS_DAEMON_TEST(test_raw_line),
        cmocka_unit_test(test_private_daemon),
        cmocka_unit_test(test_command_line),
    };
    const char *top = getenv("top_builddir");

    snprintf(g_bench, sizeof g_bench, "%s/bench/hostrange-bench",
             top != NULL && top[0] != '\0' ? top : ".");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
