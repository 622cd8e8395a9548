/* Tests for lib/view/report.c: number text, JSONL, CSV and table output. */
#include "config.h"

#include "lib/view/report.h"
#include "tests/lib/harness_rows.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* An in-memory output stream and the writer on it. */
struct sink {
    FILE *f;
    char *buf;
    size_t len;
    struct hrv_writer w;
};

static void sink_open(struct sink *s, enum hrv_format format, unsigned fields)
{
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    assert_non_null(s->f);
    hrv_writer_init(&s->w, s->f, format, fields);
}

/* Finishes the writer, closes the stream and returns what was written;
 * the caller frees it. */
static char *sink_close(struct sink *s)
{
    assert_int_equal(hrv_writer_finish(&s->w), 0);
    hrv_writer_fini(&s->w);
    assert_int_equal(fclose(s->f), 0);
    return s->buf;
}

/* Reads $srcdir/tests/data/name into a NUL-terminated buffer the caller
 * frees, and its length into *len. */
static char *read_data(const char *name, size_t *len)
{
    const char *srcdir = getenv("srcdir");
    char path[4096];
    char *buf;
    FILE *f;
    long size;

    if (srcdir == NULL || srcdir[0] == '\0')
        srcdir = ".";
    snprintf(path, sizeof(path), "%s/tests/data/%s", srcdir, name);
    f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    buf[size] = '\0';
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static double to_double(const char *s)
{
    char *end;
    double v = strtod(s, &end);

    assert_true(end != s && *end == '\0');
    return v;
}

static void flat_to_row(const struct flat *f, struct hra_row *row)
{
    char *end;

    memset(row, 0, sizeof(*row));
    row->node_id = flat_get(f, "nodeid");
    row->op = flat_get(f, "operator");
    row->backend = flat_get(f, "backend");
    row->phase = flat_get(f, "phase");
    row->range = flat_get(f, "range");
    row->metric = flat_get(f, "metric");
    row->count = strtoull(flat_get(f, "count"), &end, 10);
    assert_int_equal(*end, '\0');
    assert_string_equal(flat_get(f, "unit"), "ns");
    row->mean = to_double(flat_get(f, "mean"));
    row->median = to_double(flat_get(f, "median"));
}

/* Rewrites a reference report from its parsed rows and compares bytes. */
static void reproduce(const char *name)
{
    struct sink s;
    struct flat f;
    struct hra_row row;
    size_t len, rows = 0;
    char *ref = read_data(name, &len);
    char *line, *nl, *out;

    sink_open(&s, HRV_FORMAT_JSONL, 0);
    for (line = ref; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        assert_int_equal(flat_parse(line, &f), 0);
        assert_int_equal(f.n, 10);
        flat_to_row(&f, &row);
        assert_int_equal(hrv_writer_row(&s.w, &row), 0);
        *nl = '\n';
        rows++;
    }
    assert_int_equal(rows, 39);
    out = sink_close(&s);
    assert_int_equal(s.len, len);
    assert_memory_equal(out, ref, len);
    free(out);
    free(ref);
}

static void test_reference_add(void **state)
{
    reproduce("reference-add.jsonl");
}

static void test_reference_gemm(void **state)
{
    reproduce("reference-gemm.jsonl");
}

static void check_number(double v, const char *expected)
{
    char buf[32];
    int n = hrv_format_number(buf, sizeof(buf), v);

    assert_int_equal(n, strlen(expected));
    assert_string_equal(buf, expected);
}

static void test_number_cases(void **state)
{
    check_number(775383.0, "775383.0");
    check_number(10765.666666666666, "10765.666666666666");
    check_number(6947.5, "6947.5");
    check_number(0.0, "0.0");
    check_number(-0.0, "-0.0");
    check_number(1.0, "1.0");
    check_number(-2.5, "-2.5");
    check_number(1e16, "1e+16");
    check_number(-1e16, "-1e+16");
    check_number(1e15, "1000000000000000.0");
    check_number(9999999999999998.0, "9999999999999998.0");
    check_number(1.5e16, "1.5e+16");
    check_number(1.2345e20, "1.2345e+20");
    check_number(0.0001, "0.0001");
    check_number(0.00012, "0.00012");
    check_number(0.00001, "1e-05");
    check_number(0.000015, "1.5e-05");
    check_number(0.1, "0.1");
    check_number(1 / 3.0, "0.3333333333333333");
    check_number(123456789012345680.0, "1.2345678901234568e+17");
    check_number(2.5e-300, "2.5e-300");
    check_number(1e100, "1e+100");
    check_number(DBL_MAX, "1.7976931348623157e+308");
    check_number(-DBL_MAX, "-1.7976931348623157e+308");
    check_number(DBL_MIN, "2.2250738585072014e-308");
    check_number(5e-324, "5e-324");
    check_number(NAN, "nan");
    check_number(-NAN, "nan");
    check_number(INFINITY, "inf");
    check_number(-INFINITY, "-inf");
}

/*
 * Powers of two, where the nearest 16-digit decimal falls out below (the
 * doubles below are twice as dense) but the next one above reads back, so
 * Python's repr is shorter than the naive "%.*e" search. Expected values
 * are Python's repr.
 */
static void test_number_powers_of_two(void **state)
{
    check_number(ldexp(1, -24), "5.960464477539063e-08");
    check_number(ldexp(1, -44), "5.684341886080802e-14");
    check_number(ldexp(1, 89), "6.189700196426902e+26");
    check_number(ldexp(1, -1017), "7.120236347223045e-307");
    check_number(-ldexp(1, 976), "-6.386688990511104e+293");
    check_number(ldexp(1, 53), "9007199254740992.0");
    check_number(ldexp(1, 60), "1.152921504606847e+18");
}

static void test_number_buffer(void **state)
{
    char buf[32];

    assert_int_equal(hrv_format_number(buf, 8, 775383.0), -1);
    assert_int_equal(hrv_format_number(buf, 9, 775383.0), 8);
    assert_string_equal(buf, "775383.0");
    assert_int_equal(hrv_format_number(buf, 0, 1.0), -1);
    assert_int_equal(hrv_format_number(buf, 4, NAN), 3);
    assert_int_equal(hrv_format_number(buf, 32, -DBL_MIN), 24);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1du;
}

static int reads_back(uint64_t mant, int e10, double a)
{
    char tmp[48];

    snprintf(tmp, sizeof(tmp), "%" PRIu64 "e%d", mant, e10);
    return strtod(tmp, NULL) == a;
}

/* Whether some decimal with p significant digits reads back as a > 0. The
 * nearest one, its neighbours, and the one just below 10^k when the nearest
 * is 10^k bracket a, and every such decimal lies beyond one of them. */
static int has_digits(double a, int p)
{
    char tmp[40];
    uint64_t m = 0, one = 1;
    int e10, i;
    const char *s;

    snprintf(tmp, sizeof(tmp), "%.*e", p - 1, a);
    for (s = tmp; *s != 'e'; s++) {
        if (*s >= '0' && *s <= '9')
            m = m * 10 + (uint64_t)(*s - '0');
    }
    e10 = atoi(s + 1) - (p - 1);
    for (i = 1; i < p; i++)
        one *= 10;
    return reads_back(m, e10, a) || reads_back(m + 1, e10, a)
           || reads_back(m - 1, e10, a)
           || (m == one && reads_back(10 * m - 1, e10 - 1, a));
}

/* Counts the significant digits of a number as hrv_format_number writes
 * it (leading and trailing zeros do not count). */
static int significant(const char *s)
{
    int n = 0, trailing = 0, seen = 0;

    for (; *s != '\0' && *s != 'e'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (*s == '0' && !seen)
            continue;
        seen = 1;
        n++;
        trailing = *s == '0' ? trailing + 1 : 0;
    }
    return n - trailing;
}

static void test_number_random(void **state)
{
    char buf[32];
    uint64_t bits, back;
    double v, a, r;
    int i, n, k;

    for (i = 0; i < 100000; i++) {
        bits = next_random();
        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v))
            continue;
        n = hrv_format_number(buf, sizeof(buf), v);
        assert_true(n > 0 && n < 32);
        r = strtod(buf, NULL);
        memcpy(&back, &r, sizeof(back));
        if (back != bits)
            fail_msg("%s does not read back as %a", buf, v);
        a = fabs(v);
        if (a != 0 && (a < 1e-4 || a >= 1e16))
            assert_non_null(strchr(buf, 'e'));
        else
            assert_true(strchr(buf, 'e') == NULL && strchr(buf, '.') != NULL);
        k = significant(buf);
        assert_true(k >= 1 && k <= 17);
        if (a != 0 && k > 1 && has_digits(a, k - 1))
            fail_msg("%s for %a is not the shortest", buf, v);
    }
}

static const struct hra_row sample = {
    .node_id = "ops/add[cpu-float32-13x4]",
    .op = "add",
    .backend = "cpu",
    .phase = "warm",
    .range = "dispatch.call",
    .metric = "inclusive",
    .count = 6500,
    .mean = 7088.95,
    .median = 6947.5,
    .min = 5000.0,
    .max = 123456.25,
    .p90 = 9001.5,
    .p99 = 20000.0,
    .stddev = 1234.5678,
    .exact = 1,
    .lost = 17,
};

static char *write_one(enum hrv_format format, unsigned fields,
                       const struct hra_row *row)
{
    struct sink s;

    sink_open(&s, format, fields);
    assert_int_equal(hrv_writer_row(&s.w, row), 0);
    return sink_close(&s);
}

static void test_jsonl_fields(void **state)
{
    struct hra_row row = sample;
    char *out;

    out = write_one(HRV_FORMAT_JSONL, 0, &row);
    assert_string_equal(out,
        "{\"nodeid\":\"ops/add[cpu-float32-13x4]\",\"operator\":\"add\","
        "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":\"dispatch.call\","
        "\"metric\":\"inclusive\",\"count\":6500,\"unit\":\"ns\","
        "\"mean\":7088.95,\"median\":6947.5}\n");
    free(out);

    out = write_one(HRV_FORMAT_JSONL, HRV_FIELDS_EXTENDED, &row);
    assert_string_equal(out,
        "{\"nodeid\":\"ops/add[cpu-float32-13x4]\",\"operator\":\"add\","
        "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":\"dispatch.call\","
        "\"metric\":\"inclusive\",\"count\":6500,\"unit\":\"ns\","
        "\"mean\":7088.95,\"median\":6947.5,\"min\":5000.0,"
        "\"max\":123456.25,\"p90\":9001.5,\"p99\":20000.0,"
        "\"stddev\":1234.5678,\"exact\":true,\"lost\":17}\n");
    free(out);

    row.exact = 0;
    row.count = UINT64_MAX;
    row.mean = NAN;
    row.median = 1e16;
    row.min = -INFINITY;
    row.max = INFINITY;
    row.lost = 0;
    out = write_one(HRV_FORMAT_JSONL, HRV_FIELDS_EXTENDED, &row);
    assert_string_equal(out,
        "{\"nodeid\":\"ops/add[cpu-float32-13x4]\",\"operator\":\"add\","
        "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":\"dispatch.call\","
        "\"metric\":\"inclusive\",\"count\":18446744073709551615,"
        "\"unit\":\"ns\",\"mean\":NaN,\"median\":1e+16,\"min\":-Infinity,"
        "\"max\":Infinity,\"p90\":9001.5,\"p99\":20000.0,"
        "\"stddev\":1234.5678,\"exact\":false,\"lost\":0}\n");
    free(out);
}

/* Expected text is Python's json.dumps of the bytes decoded with
 * errors="replace". */
static void test_jsonl_escaping(void **state)
{
    struct hra_row row = {
        .node_id = "a\"b\\c\td\x01" "e\xc2\xb5" "f\x7f\xe2\x82\xac"
                   "\xf0\x9f\x98\x80\xff\xe2\x82" "g\xed\xa0\x80"
                   "h\xc0\xafi\n\r\b\f\x1f",
        .op = "", .backend = "b", .phase = "cold", .range = "r/\x7e",
        .metric = "self", .count = 0, .mean = 0.0, .median = -0.0,
    };
    char *out = write_one(HRV_FORMAT_JSONL, 0, &row);

    assert_string_equal(out,
        "{\"nodeid\":\"a\\\"b\\\\c\\td\\u0001e\\u00b5f\\u007f\\u20ac"
        "\\ud83d\\ude00\\ufffd\\ufffdg\\ufffd\\ufffd\\ufffdh\\ufffd\\ufffdi"
        "\\n\\r\\b\\f\\u001f\",\"operator\":\"\",\"backend\":\"b\","
        "\"phase\":\"cold\",\"range\":\"r/~\",\"metric\":\"self\","
        "\"count\":0,\"unit\":\"ns\",\"mean\":0.0,\"median\":-0.0}\n");
    free(out);
}

static void test_csv(void **state)
{
    struct hra_row row = sample;
    struct sink s;
    char *out;

    sink_open(&s, HRV_FORMAT_CSV, 0);
    assert_int_equal(hrv_writer_row(&s.w, &row), 0);
    row.node_id = "ops/x[a,b]";
    row.range = "say \"hi\"";
    row.metric = "two\nlines";
    row.phase = "cr\r";
    row.count = 1;
    row.mean = 1e-05;
    row.median = 2.0;
    assert_int_equal(hrv_writer_row(&s.w, &row), 0);
    out = sink_close(&s);
    assert_string_equal(out,
        "nodeid,operator,backend,phase,range,metric,count,unit,mean,median\n"
        "ops/add[cpu-float32-13x4],add,cpu,warm,dispatch.call,inclusive,"
        "6500,ns,7088.95,6947.5\n"
        "\"ops/x[a,b]\",add,cpu,\"cr\r\",\"say \"\"hi\"\"\",\"two\nlines\","
        "1,ns,1e-05,2.0\n");
    free(out);

    row = sample;
    row.exact = 0;
    out = write_one(HRV_FORMAT_CSV, HRV_FIELDS_EXTENDED, &row);
    assert_string_equal(out,
        "nodeid,operator,backend,phase,range,metric,count,unit,mean,median,"
        "min,max,p90,p99,stddev,exact,lost\n"
        "ops/add[cpu-float32-13x4],add,cpu,warm,dispatch.call,inclusive,"
        "6500,ns,7088.95,6947.5,5000.0,123456.25,9001.5,20000.0,1234.5678,"
        "false,17\n");
    free(out);

    /* An empty report still has its header. */
    sink_open(&s, HRV_FORMAT_CSV, 0);
    out = sink_close(&s);
    assert_string_equal(out,
        "nodeid,operator,backend,phase,range,metric,count,unit,mean,median\n");
    free(out);
}

static void test_table(void **state)
{
#define ROW(n_, o_, p_, r_, m_, c_, mean_, median_)                     \
    { .node_id = n_, .op = o_, .backend = "cpu", .phase = p_, .range = r_, \
      .metric = m_, .count = c_, .mean = mean_, .median = median_ }
    static const struct hra_row rows[] = {
        ROW("ops/add[cpu-float32-13x4]", "add", "cold", "binding.body",
            "inclusive", 1, 775383.0, 775383.0),
        ROW("ops/add[cpu-float32-13x4]", "add", "warm", "binding.body",
            "inclusive", 6500, 7088.96, 6947.4),
        ROW("ops/add[cpu-float32-13x4]", "add", "warm",
            "binding.tensor_conversion", "self", 6500, 1234.0, 1200.0),
        ROW("ops/gemm[cpu-float32-2x3x4]", "gemm", "warm", "end_to_end",
            "inclusive", 10, 12345678.0, 12.0),
    };
#undef ROW
    struct sink s;
    char node[64];
    char *out;
    size_t i;

    sink_open(&s, HRV_FORMAT_TABLE, 0);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct hra_row row = rows[i];

        /* The writer must keep its own copies of the strings. */
        snprintf(node, sizeof(node), "%s", rows[i].node_id);
        row.node_id = node;
        assert_int_equal(hrv_writer_row(&s.w, &row), 0);
        memset(node, 'x', sizeof(node) - 1);
    }
    out = sink_close(&s);
    assert_string_equal(out,
        "ops/add[cpu-float32-13x4]  add/cpu  cold\n"
        "  range                      metric     count    mean_us  median_us\n"
        "  binding.body               inclusive      1    775.383    775.383\n"
        "\n"
        "ops/add[cpu-float32-13x4]  add/cpu  warm\n"
        "  range                      metric     count    mean_us  median_us\n"
        "  binding.body               inclusive   6500      7.089      6.947\n"
        "  binding.tensor_conversion  self        6500      1.234      1.200\n"
        "\n"
        "ops/gemm[cpu-float32-2x3x4]  gemm/cpu  warm\n"
        "  range                      metric     count    mean_us  median_us\n"
        "  end_to_end                 inclusive     10  12345.678      0.012\n");
    free(out);
}

static void test_table_extended(void **state)
{
    static const struct hra_row row = {
        .node_id = "n", .op = "o", .backend = "b", .phase = "warm",
        .range = "r", .metric = "self", .count = 2, .mean = 1500.0,
        .median = 1500.0, .min = 1000.0, .max = 2000.0, .p90 = 1900.0,
        .p99 = 1990.0, .stddev = 500.0, .exact = 1, .lost = 3,
    };
    struct sink s;
    char *out = write_one(HRV_FORMAT_TABLE, HRV_FIELDS_EXTENDED, &row);

    assert_string_equal(out,
        "n  o/b  warm\n"
        "  range  metric  count  mean_us  median_us  min_us  max_us  p90_us"
        "  p99_us  stddev_us  exact  lost\n"
        "  r      self        2    1.500      1.500   1.000   2.000   1.900"
        "   1.990      0.500  yes       3\n");
    free(out);

    /* An empty table writes nothing. */
    sink_open(&s, HRV_FORMAT_TABLE, 0);
    out = sink_close(&s);
    assert_int_equal(s.len, 0);
    free(out);
}

static void test_format_parse(void **state)
{
    enum hrv_format f = HRV_FORMAT_TABLE;

    assert_int_equal(hrv_format_parse("jsonl", &f), 0);
    assert_int_equal(f, HRV_FORMAT_JSONL);
    assert_int_equal(hrv_format_parse("csv", &f), 0);
    assert_int_equal(f, HRV_FORMAT_CSV);
    assert_int_equal(hrv_format_parse("table", &f), 0);
    assert_int_equal(f, HRV_FORMAT_TABLE);
    f = HRV_FORMAT_CSV;
    assert_int_equal(hrv_format_parse("JSONL", &f), -EINVAL);
    assert_int_equal(hrv_format_parse("json", &f), -EINVAL);
    assert_int_equal(hrv_format_parse("", &f), -EINVAL);
    assert_int_equal(hrv_format_parse(NULL, &f), -EINVAL);
    assert_int_equal(f, HRV_FORMAT_CSV);
}

/* A stream that cannot be written makes the writer return -EIO. */
static void test_io_error(void **state)
{
    struct hrv_writer w;
    FILE *f = fopen("/dev/null", "r");

    assert_non_null(f);
    hrv_writer_init(&w, f, HRV_FORMAT_JSONL, 0);
    assert_int_equal(hrv_writer_row(&w, &sample), -EIO);
    hrv_writer_fini(&w);
    clearerr(f);

    hrv_writer_init(&w, f, HRV_FORMAT_TABLE, 0);
    assert_int_equal(hrv_writer_row(&w, &sample), 0);
    assert_int_equal(hrv_writer_finish(&w), -EIO);
    hrv_writer_fini(&w);
    fclose(f);
}

/* Rows kept by a table writer are freed by fini without finish; fini
 * accepts NULL and a finished writer (valgrind checks the rest). */
static void test_fini(void **state)
{
    struct sink s;
    int i;

    sink_open(&s, HRV_FORMAT_TABLE, HRV_FIELDS_EXTENDED);
    for (i = 0; i < 40; i++)
        assert_int_equal(hrv_writer_row(&s.w, &sample), 0);
    assert_int_equal(s.w.nrows, 40);
    hrv_writer_fini(&s.w);
    hrv_writer_fini(&s.w);
    hrv_writer_fini(NULL);
    assert_int_equal(fclose(s.f), 0);
    assert_int_equal(s.len, 0);
    free(s.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_add),
        cmocka_unit_test(test_reference_gemm),
        cmocka_unit_test(test_number_cases),
        cmocka_unit_test(test_number_powers_of_two),
        cmocka_unit_test(test_number_buffer),
        cmocka_unit_test(test_number_random),
        cmocka_unit_test(test_jsonl_fields),
        cmocka_unit_test(test_jsonl_escaping),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_table_extended),
        cmocka_unit_test(test_format_parse),
        cmocka_unit_test(test_io_error),
        cmocka_unit_test(test_fini),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
