/*
 * Other tools' results as runs (lib/history/import.c): Google Benchmark's
 * JSON with repetitions (each a round), aggregates only and errors;
 * pytest-benchmark's JSON with and without its data points; CSV with its
 * quotes, units, runs and rounds; times with offsets; the options' commit,
 * time and machine over the file's; ids made from content; and what is
 * refused, with its reason.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/history/import.h"

static const struct hrh_import_opts none;

static struct hrh_import *read_ok(enum hrh_import_format f, const char *s,
                                  const struct hrh_import_opts *o)
{
    struct hrh_import *im = NULL;
    char err[512] = "";
    int rc = hrh_import_read(f, "f.json", s, strlen(s), o, &im, err,
                             sizeof err);

    if (rc != 0)
        fail_msg("refused: %s", err);
    return im;
}

static void read_bad(enum hrh_import_format f, const char *s,
                     const struct hrh_import_opts *o, const char *why)
{
    struct hrh_import *im = NULL;
    char err[512] = "";

    assert_int_equal(hrh_import_read(f, "f.json", s, strlen(s), o, &im, err,
                                     sizeof err), -EINVAL);
    assert_null(im);
    assert_string_equal(err, why);
}

static void assert_key(const struct hrh_point *p, const char *node,
                       const char *op, const char *range,
                       const char *metric)
{
    assert_string_equal(p->node, node);
    assert_string_equal(p->op, op);
    assert_string_equal(p->backend, "-");
    assert_string_equal(p->phase, "warm");
    assert_string_equal(p->range, range);
    assert_string_equal(p->metric, metric);
}

static void test_time(void **state)
{
    int64_t ns = 0;

    (void)state;
    assert_int_equal(hrh_import_time("1700000000", &ns), 0);
    assert_true(ns == 1700000000000000000);
    assert_int_equal(hrh_import_time("1700000000.5", &ns), 0);
    assert_true(ns == 1700000000500000000);
    assert_int_equal(hrh_import_time("2023-11-14T22:13:20", &ns), 0);
    assert_true(ns == 1700000000000000000);
    assert_int_equal(hrh_import_time("2023-11-14 22:13:20Z", &ns), 0);
    assert_true(ns == 1700000000000000000);
    assert_int_equal(hrh_import_time("2023-11-15T00:13:20+02:00", &ns), 0);
    assert_true(ns == 1700000000000000000);
    assert_int_equal(hrh_import_time("2023-11-14T20:43:20.25-01:30", &ns),
                     0);
    assert_true(ns == 1700000000250000000);
    assert_int_equal(hrh_import_time("2019/08/01-16:07:41", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2023-11-14T22:13", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2023-13-14T22:13:20", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2023-11-14T22:13:20+2", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("-5", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("0x10", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("1e9", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("", &ns), -EINVAL);
}

/* Times at the edges: what an int64_t of ns holds and no further (no
 * wrap to another century), dates that are none (Feb 30, :60 outside a
 * leap second), fractions read exactly, and what is no number. */
static void test_time_limits(void **state)
{
    int64_t ns = 0;

    (void)state;
    /* The last second that fits, and the first that does not. */
    assert_int_equal(hrh_import_time("2262-04-11T23:47:16Z", &ns), 0);
    assert_true(ns == 9223372036000000000);
    assert_int_equal(hrh_import_time("2262-04-11T23:47:16.854775807Z", &ns),
                     0);
    assert_true(ns == INT64_MAX);
    assert_int_equal(hrh_import_time("2262-04-11T23:47:16.854775808Z", &ns),
                     -EINVAL);
    assert_int_equal(hrh_import_time("2262-04-11T23:47:17Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2262-12-31T00:00:00Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("9999-12-31T23:59:59Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("0000-01-01T00:00:00Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("1677-09-21T00:12:43Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("1677-09-21T00:12:44Z", &ns), 0);
    assert_true(ns == -9223372036000000000);
    assert_int_equal(hrh_import_time("9223372036.854775807", &ns), 0);
    assert_true(ns == INT64_MAX);
    assert_int_equal(hrh_import_time("9223372036.854775808", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("9223372037", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("99999999999999999999999999999", &ns),
                     -EINVAL);
    /* Before 1970 as a date; never as negative seconds. */
    assert_int_equal(hrh_import_time("1969-12-31T23:59:59Z", &ns), 0);
    assert_true(ns == -1000000000);
    /* Leading zeros are many digits, one number. */
    assert_int_equal(hrh_import_time("000000000000000000000000000000000007",
                                     &ns), 0);
    assert_true(ns == 7000000000);
    /* A fraction is read exactly and rounded to the nanosecond, in both
     * forms alike. */
    assert_int_equal(hrh_import_time("1.001", &ns), 0);
    assert_true(ns == 1001000000);
    assert_int_equal(hrh_import_time("1970-01-01T00:00:01.001Z", &ns), 0);
    assert_true(ns == 1001000000);
    assert_int_equal(hrh_import_time("1.0000000005", &ns), 0);
    assert_true(ns == 1000000001);
    assert_int_equal(hrh_import_time("1.99999999999999999999", &ns), 0);
    assert_true(ns == 2000000000);
    assert_int_equal(hrh_import_time("1.", &ns), 0);
    assert_true(ns == 1000000000);
    assert_int_equal(hrh_import_time(".5", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("1.2.3", &ns), -EINVAL);
    /* Days a month has not. */
    assert_int_equal(hrh_import_time("2026-02-30T00:00:00", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2026-02-29T00:00:00", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2024-02-29T00:00:00", &ns), 0);
    assert_int_equal(hrh_import_time("1900-02-29T00:00:00", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2000-02-29T00:00:00", &ns), 0);
    assert_int_equal(hrh_import_time("2026-04-31T00:00:00", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2026-00-10T00:00:00", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2026-01-00T00:00:00", &ns), -EINVAL);
    /* A leap second is 23:59:60 UTC (the next second, as POSIX counts),
     * also given in another zone; :60 of another minute is none. */
    assert_int_equal(hrh_import_time("2016-12-31T23:59:60Z", &ns), 0);
    assert_true(ns == 1483228800000000000);
    assert_int_equal(hrh_import_time("2017-01-01T01:29:60+01:30", &ns), 0);
    assert_true(ns == 1483228800000000000);
    assert_int_equal(hrh_import_time("2016-12-31T12:00:60Z", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2016-12-31T23:59:61Z", &ns), -EINVAL);
    /* Offsets are at most 23:59. */
    assert_int_equal(hrh_import_time("2026-01-01T00:00:00+24:00", &ns),
                     -EINVAL);
    assert_int_equal(hrh_import_time("2026-01-01T00:00:00+23:59", &ns), 0);
    /* No number, no white space. */
    assert_int_equal(hrh_import_time("nan", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("inf", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("1e3", &ns), -EINVAL);
    assert_int_equal(hrh_import_time(" 5", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("5 ", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("+5", &ns), -EINVAL);
    assert_int_equal(hrh_import_time("2026-01-01T00:00:00Z ", &ns),
                     -EINVAL);
}

/* Two benchmarks, three repetitions each, in us; their aggregates; one
 * that failed. As Google Benchmark 1.7 writes them, less some fields. */
static const char gbench[] =
    "{\"context\": {\"date\": \"2023-11-15T00:13:20+02:00\",\n"
    "  \"host_name\": \"ci-7\", \"executable\": \"./build/bench_add\",\n"
    "  \"num_cpus\": 2, \"mhz_per_cpu\": 2596, \"commit\": \"abc123\",\n"
    "  \"caches\": [{\"type\": \"Data\", \"level\": 1}]},\n"
    " \"benchmarks\": [\n"
    "  {\"name\": \"BM_Add/64\", \"run_name\": \"BM_Add/64\", \"run_type\": "
    "\"iteration\", \"repetitions\": 3, \"repetition_index\": 0, "
    "\"real_time\": 1.5, \"cpu_time\": 1.25, \"time_unit\": \"us\"},\n"
    "  {\"name\": \"BM_Add/64\", \"run_name\": \"BM_Add/64\", \"run_type\": "
    "\"iteration\", \"repetitions\": 3, \"repetition_index\": 1, "
    "\"real_time\": 1.0, \"cpu_time\": 1.0, \"time_unit\": \"us\"},\n"
    "  {\"name\": \"BM_Add/64\", \"run_name\": \"BM_Add/64\", \"run_type\": "
    "\"iteration\", \"repetitions\": 3, \"repetition_index\": 2, "
    "\"real_time\": 2.0, \"cpu_time\": 1.5, \"time_unit\": \"us\"},\n"
    "  {\"name\": \"BM_Add/64_mean\", \"run_name\": \"BM_Add/64\", "
    "\"run_type\": \"aggregate\", \"aggregate_name\": \"mean\", "
    "\"real_time\": 1.5, \"cpu_time\": 1.25, \"time_unit\": \"us\"},\n"
    "  {\"name\": \"BM_Add/64_median\", \"run_name\": \"BM_Add/64\", "
    "\"run_type\": \"aggregate\", \"aggregate_name\": \"median\", "
    "\"real_time\": 1.5, \"cpu_time\": 1.25, \"time_unit\": \"us\"},\n"
    "  {\"name\": \"BM_Fail\", \"run_name\": \"BM_Fail\", \"run_type\": "
    "\"iteration\", \"error_occurred\": true, \"error_message\": \"x\"},\n"
    "  {\"name\": \"BM_Sub\", \"run_type\": \"iteration\", "
    "\"real_time\": 40, \"cpu_time\": 30}\n"
    " ]}\n";

static void test_gbench(void **state)
{
    struct hrh_import *im = read_ok(HRH_IMPORT_GBENCH, gbench, &none);
    const struct hrh_import_run *r = &im->runs[0];
    const struct hrh_point *p = r->p;

    (void)state;
    assert_int_equal(im->nruns, 1);
    assert_int_equal(im->skipped, 1);
    assert_int_equal(r->n, 4);
    assert_string_equal(r->run.machine, "2 cpus, 2596 MHz");
    assert_string_equal(r->run.commit, "abc123");
    assert_string_equal(r->run.host, "ci-7");
    assert_string_equal(r->run.kernel, "");
    assert_string_equal(r->run.file, "f.json");
    assert_true(r->run.time_ns == 1700000000000000000);
    assert_int_equal(strlen(r->id), 32);
    assert_int_equal(r->id[0], 'c');
    assert_key(&p[0], "gbench", "bench_add", "BM_Add/64", "real_time");
    assert_int_equal(p[0].count, 3);
    assert_true(p[0].mean == 1500.0);
    assert_true(p[0].median == 1500.0);
    assert_true(p[0].p10 == 1100.0);
    assert_true(p[0].p90 == 1900.0);
    assert_int_equal(p[0].nrounds, 3);
    assert_true(p[0].rounds[0] == 1500.0 && p[0].rounds[1] == 1000.0 &&
                p[0].rounds[2] == 2000.0);
    assert_key(&p[1], "gbench", "bench_add", "BM_Add/64", "cpu_time");
    assert_true(p[1].median == 1250.0);
    assert_key(&p[2], "gbench", "bench_add", "BM_Sub", "real_time");
    assert_int_equal(p[2].count, 1);
    assert_true(p[2].median == 40.0);
    assert_int_equal(p[2].nrounds, 0);
    assert_true(p[3].median == 30.0);
    hrh_import_free(im);
}

static void test_gbench_aggregates(void **state)
{
    static const char only[] =
        "{\"context\": {\"date\": \"2023-11-14T22:13:20+00:00\"},\n"
        " \"benchmarks\": [{\"name\": \"BM_A_median\", \"run_name\": "
        "\"BM_A\", \"run_type\": \"aggregate\", \"aggregate_name\": "
        "\"median\", \"repetitions\": 5, \"real_time\": 2, \"cpu_time\": 1, "
        "\"time_unit\": \"ms\"}]}";
    const char *key[] = { "team" }, *value[] = { "perf" };
    struct hrh_import_opts o = { "runner-a", "def456", "1700000060", key,
                                 value, 1, 0 };
    struct hrh_import *im = read_ok(HRH_IMPORT_GBENCH, only, &o);
    const struct hrh_import_run *r = &im->runs[0];

    (void)state;
    assert_int_equal(r->n, 2);
    assert_key(&r->p[0], "gbench", "-", "BM_A", "real_time");
    assert_int_equal(r->p[0].count, 5);
    assert_true(r->p[0].median == 2e6 && r->p[0].p10 == 2e6);
    assert_true(r->p[1].mean == 1e6);
    assert_string_equal(r->run.machine, "runner-a");
    assert_string_equal(r->run.commit, "def456");
    assert_true(r->run.time_ns == 1700000060000000000);
    assert_int_equal(r->run.nmeta, 1);
    assert_string_equal(r->run.meta_key[0], "team");
    hrh_import_free(im);
    /* No CPUs named: no machine unless --machine gives one. */
    read_bad(HRH_IMPORT_GBENCH, only, &none,
             "f.json: no machine in the file (--machine NAME names it)");
    read_bad(HRH_IMPORT_GBENCH, "{\"context\": {}, \"benchmarks\": []}",
             &none, "f.json: no benchmark results");
    read_bad(HRH_IMPORT_GBENCH, "{\"benchmarks\": []}", &none,
             "f.json: not Google Benchmark's JSON (no context and "
             "benchmarks)");
    read_bad(HRH_IMPORT_GBENCH, "{\"context\": {}, \"benchmarks\": [{"
             "\"name\": \"B\", \"real_time\": 1, \"cpu_time\": 1, "
             "\"time_unit\": \"fortnight\"}]}", &none,
             "f.json: benchmark B: unknown time_unit");
    read_bad(HRH_IMPORT_GBENCH, "{\"context\": {}, \"benchmarks\": [1]}",
             &none, "f.json: benchmark 0 has no name");
    read_bad(HRH_IMPORT_GBENCH, "{\"context\": {},}", &none,
             "f.json: not JSON: line 1, column 16: an object's member "
             "without a name");
}

/* As pytest-benchmark 3.2 writes it, less some fields. */
static const char pytest_json[] =
    "{\"machine_info\": {\"node\": \"vm\", \"processor\": \"\", \"machine\": "
    "\"x86_64\", \"release\": \"6.1.0-13-amd64\", \"cpu\": {\"brand\": "
    "\"AMD EPYC\", \"count\": 4}},\n"
    " \"commit_info\": {\"id\": \"0123abc\", \"time\": null},\n"
    " \"benchmarks\": [\n"
    "  {\"group\": null, \"name\": \"test_add\", \"fullname\": "
    "\"tests/test_ops.py::test_add\", \"stats\": {\"min\": 1e-06, \"max\": "
    "5e-06, \"mean\": 2.2e-06, \"stddev\": 1e-06, \"rounds\": 5, \"median\": "
    "2e-06, \"q1\": 1.5e-06, \"q3\": 2.5e-06, \"data\": [2e-06, 1e-06, "
    "3e-06, 5e-06, 2e-06]}},\n"
    "  {\"group\": \"gemm\", \"name\": \"test_gemm\", \"fullname\": "
    "\"tests/test_ops.py::test_gemm\", \"stats\": {\"rounds\": 9, \"mean\": "
    "0.001, \"median\": 0.0009, \"q1\": 0.0008, \"q3\": 0.0012, \"stddev\": "
    "NaN}}],\n"
    " \"datetime\": \"2023-11-14T22:13:20.500000\", \"version\": \"3.2.2\"}";

static void test_pytest(void **state)
{
    struct hrh_import *im = read_ok(HRH_IMPORT_PYTEST_BENCHMARK, pytest_json,
                                    &none);
    const struct hrh_import_run *r = &im->runs[0];
    const struct hrh_point *p = r->p;

    (void)state;
    assert_int_equal(im->nruns, 1);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->run.machine, "AMD EPYC, 4 cores");
    assert_string_equal(r->run.commit, "0123abc");
    assert_string_equal(r->run.host, "vm");
    assert_string_equal(r->run.kernel, "6.1.0-13-amd64");
    assert_true(r->run.time_ns == 1700000000500000000);
    assert_key(&p[0], "pytest-benchmark", "-", "tests/test_ops.py::test_add",
               "time");
    /* From its data points: 1, 2, 2, 3, 5 us. */
    assert_int_equal(p[0].count, 5);
    assert_true(fabs(p[0].mean - 2600.0) < 1e-6);
    assert_true(fabs(p[0].median - 2000.0) < 1e-6);
    assert_true(fabs(p[0].p10 - 1400.0) < 1e-6);
    assert_true(fabs(p[0].p90 - 4200.0) < 1e-6);
    assert_int_equal(p[0].nrounds, 0);
    /* From its stats: quartiles for p10 and p90. */
    assert_key(&p[1], "pytest-benchmark", "gemm",
               "tests/test_ops.py::test_gemm", "time");
    assert_int_equal(p[1].count, 9);
    assert_true(fabs(p[1].median - 900000.0) < 1e-6);
    assert_true(fabs(p[1].p10 - 800000.0) < 1e-6);
    assert_true(fabs(p[1].p90 - 1200000.0) < 1e-6);
    hrh_import_free(im);
    read_bad(HRH_IMPORT_PYTEST_BENCHMARK, "{\"benchmarks\": [{\"name\": "
             "\"t\", \"stats\": {\"rounds\": 1}}], \"machine_info\": {}}",
             &none, "f.json: benchmark t: stats without rounds, mean, "
             "median, q1 and q3");
    read_bad(HRH_IMPORT_PYTEST_BENCHMARK, "[]", &none, "f.json: not an object");
}

static void test_csv(void **state)
{
    static const char csv[] =
        "commit,time,machine,name,value,unit\r\n"
        "c1,1700000000,m1,\"a,\"\"b\"\"\",10,us\r\n"
        "c1,1700000000,m1,plain,7\n"
        "c1,1700000000,m1,\"a,\"\"b\"\"\",30,us\n"
        "\n"
        "c2,2023-11-14T22:14:20Z,m1,plain,0.5,s\n";
    struct hrh_import *im = read_ok(HRH_IMPORT_CSV, csv, &none);
    struct hrh_import *grown, *moved;
    const struct hrh_import_run *r = &im->runs[0];
    struct hrh_import_opts o = none;
    char *more;

    (void)state;
    assert_int_equal(im->nruns, 2);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->run.commit, "c1");
    assert_string_equal(r->run.machine, "m1");
    assert_key(&r->p[0], "csv", "-", "a,\"b\"", "time");
    assert_int_equal(r->p[0].count, 2);
    assert_true(r->p[0].median == 20000.0);
    assert_int_equal(r->p[0].nrounds, 2);
    assert_true(r->p[0].rounds[0] == 10000.0 && r->p[0].rounds[1] == 30000.0);
    assert_key(&r->p[1], "csv", "-", "plain", "time");
    assert_true(r->p[1].median == 7.0);
    r = &im->runs[1];
    assert_string_equal(r->run.commit, "c2");
    assert_true(r->run.time_ns == 1700000060000000000);
    assert_true(r->p[0].median == 5e8);
    assert_string_not_equal(im->runs[0].id, im->runs[1].id);
    /* Each run's id stays its own as the runs' array grows. */
    assert_string_equal(im->runs[0].run.id, im->runs[0].id);
    assert_string_equal(im->runs[1].run.id, im->runs[1].id);
    /* A file that grew: its first runs keep their ids. */
    more = malloc(sizeof csv + 64);
    snprintf(more, sizeof csv + 64, "%sc3,1700000120,m1,plain,9\n", csv);
    grown = read_ok(HRH_IMPORT_CSV, more, &none);
    assert_int_equal(grown->nruns, 3);
    assert_string_equal(grown->runs[0].id, im->runs[0].id);
    assert_string_equal(grown->runs[1].id, im->runs[1].id);
    free(more);
    /* --machine over the file's: another run. */
    o.machine = "m9";
    moved = read_ok(HRH_IMPORT_CSV, csv, &o);
    assert_string_equal(moved->runs[0].run.machine, "m9");
    hrh_import_free(moved);
    hrh_import_free(grown);
    hrh_import_free(im);
    read_bad(HRH_IMPORT_CSV, "c,1,m,n,1,furlongs\n", &none,
             "f.json: line 1: unit 'furlongs' is not a time (ns, us, ms or "
             "s)");
    read_bad(HRH_IMPORT_CSV, "c,1,m,n,x\n", &none,
             "f.json: line 1: value 'x' is not a number of at least 0");
    read_bad(HRH_IMPORT_CSV, "c,1,m,n\n", &none,
             "f.json: line 1: not commit,time,machine,name,value[,unit]");
    read_bad(HRH_IMPORT_CSV, "c,1,m,\"n,1\n", &none,
             "f.json: line 1: not commit,time,machine,name,value[,unit]");
    read_bad(HRH_IMPORT_CSV, "c,1,,n,1\n", &none,
             "f.json: no machine in the file (--machine NAME names it)");
    read_bad(HRH_IMPORT_CSV, "c,yesterday,m,n,1\n", &none,
             "f.json: time 'yesterday' is not a time ("
             HRH_IMPORT_TIME_FORMS ")");
    read_bad(HRH_IMPORT_CSV, "c,9999-12-31T23:59:59Z,m,n,1\n", &none,
             "f.json: time '9999-12-31T23:59:59Z' is not a time ("
             HRH_IMPORT_TIME_FORMS ")");
    read_bad(HRH_IMPORT_CSV, "commit,time,machine,name,value\n", &none,
             "f.json: no results");
}

static void test_formats(void **state)
{
    enum hrh_import_format f;

    (void)state;
    assert_int_equal(hrh_import_format_parse("gbench", &f), 0);
    assert_int_equal(f, HRH_IMPORT_GBENCH);
    assert_int_equal(hrh_import_format_parse("google-benchmark", &f), 0);
    assert_int_equal(f, HRH_IMPORT_GBENCH);
    assert_int_equal(hrh_import_format_parse("pytest-benchmark", &f), 0);
    assert_int_equal(f, HRH_IMPORT_PYTEST_BENCHMARK);
    assert_int_equal(hrh_import_format_parse("csv", &f), 0);
    assert_int_equal(f, HRH_IMPORT_CSV);
    assert_int_equal(hrh_import_format_parse("json", &f), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_time_limits),
        cmocka_unit_test(test_gbench),
        cmocka_unit_test(test_gbench_aggregates),
        cmocka_unit_test(test_pytest),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
