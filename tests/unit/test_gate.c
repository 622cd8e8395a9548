/* Tests for lib/view/gate.c: JUnit and Markdown of a gate's rows, a
 * hostile name among them (each rule's own tests, over the shared hostile
 * set, are test_escape's). */
#include "config.h"

#include "lib/view/gate.h"
#include "lib/view/svg.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A name with everything the formats must escape: < & " | ` ' a newline,
 * a tab, Markdown's markup, a control character and a byte that is not
 * UTF-8, then a valid non-ASCII character. */
static const char hostile[] = "a<b&c\"d|e`f'g\nh\ti*_[x]~\\\x01\xffz\xc3\xa9";

/* The rows of one comparison: node A with a failure, a warning, a faster
 * and an unchanged key; node B (hostile) with a key of one run only and a
 * slower key; then A again (a node's rows need not be together). */
static struct hrv_gate_row rows[] = {
    { "A", "", "", "warm", "gemm", "inclusive", 1000, 1500, 50, 1e-5, 10,
      NAN, HRV_GATE_SLOWER, 1, 0, NULL, NULL },
    { "A", "", "", "warm", "add", "self", 2000, 2300, 15, 1e-4, 20, 10,
      HRV_GATE_SLOWER, 0, 1, NULL, NULL },
    { "A", "", "", "warm", "copy", "self", 2000, 1000, -50, 1e-4, 10, NAN,
      HRV_GATE_FASTER, 0, 0, NULL, NULL },
    { hostile, "op", "cpu", "cold", hostile, "self", NAN, 5, NAN, NAN, NAN,
      NAN, HRV_GATE_ONLY, 0, 0, "only in the new run", NULL },
    { hostile, "", "", "warm", "x", "self", 100, 130, 30, 1e-3, NAN, NAN,
      HRV_GATE_SLOWER, 0, 0, NULL, NULL },
    { "A", "", "", "cold", "gemm", "inclusive", 1e6, 1e6, 0, 0.9, 10, NAN,
      HRV_GATE_UNCHANGED, 0, 0, NULL, NULL },
};

static char *written(int (*w)(FILE *, const struct hrv_gate *), size_t limit,
                     const char *machines)
{
    struct hrv_gate g = { "hostrangectl diff", rows,
                          sizeof rows / sizeof rows[0], machines, limit,
                          NULL };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(w(f, &g), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;

    for (s = strstr(s, what); s != NULL; s = strstr(s + 1, what))
        n++;
    return n;
}

static void test_counts(void **state)
{
    struct hrv_gate g = { NULL, rows, sizeof rows / sizeof rows[0], NULL, 50,
                          NULL };
    struct hrv_gate_counts c;

    (void)state;
    hrv_gate_count(&g, &c);
    assert_int_equal(c.fail, 1);
    assert_int_equal(c.warn, 1);
    assert_int_equal(c.slower, 1);
    assert_int_equal(c.faster, 1);
    assert_int_equal(c.unchanged, 1);
    assert_int_equal(c.only, 1);
}

static void test_junit(void **state)
{
    char *x = written(hrv_gate_junit, 50, NULL);
    const char *b = strstr(x, "<testsuite name=\"a&lt;");

    (void)state;
    assert_non_null(strstr(x, "<testsuites name=\"hostrangectl diff\" "
                              "tests=\"6\" failures=\"1\" errors=\"0\" "
                              "skipped=\"1\""));
    /* Two suites, A (four keys, its rows brought together) before B. */
    assert_int_equal(count(x, "<testsuite "), 2);
    assert_non_null(strstr(x, "<testsuite name=\"A\" tests=\"4\" "
                              "failures=\"1\" errors=\"0\" skipped=\"0\""));
    assert_non_null(b);
    assert_true(strstr(x, "name=\"cold gemm inclusive\"") < b);
    assert_non_null(strstr(b, "tests=\"2\" failures=\"0\" errors=\"0\" "
                              "skipped=\"1\""));
    assert_non_null(strstr(x, "<testcase name=\"warm gemm inclusive\" "
                              "classname=\"A\" time=\"0\">\n      <failure "
                              "type=\"slower\" message=\"slower than allowed: "
                              "before 1.00 us, after 1.50 us, change +50.0%, "
                              "p 1e-05, threshold 10%\">"));
    assert_non_null(strstr(x, "<system-out>warning: slower than the warning "
                              "level: before 2.00 us, after 2.30 us, change "
                              "+15.0%, p 0.0001, threshold 10% "
                              "(--warn-above)</system-out>"));
    assert_non_null(strstr(x, "<system-out>faster: before 2.00 us"));
    /* The key of one run only: operator and backend in its name. */
    assert_non_null(strstr(x, "<testcase name=\"cold a&lt;b&amp;c&quot;d|e`"
                              "f&#39;g&#10;h i*_[x]~\\??z\xc3\xa9 self "
                              "(op/cpu)\" classname=\"a&lt;"));
    assert_non_null(strstr(x, "<skipped message=\"only in the new run\"/>"));
    assert_non_null(strstr(x, "<testcase name=\"cold gemm inclusive\" "
                              "classname=\"A\" time=\"0\"/>"));
    assert_null(strchr(x, '\xff'));
    free(x);
}

static void test_markdown(void **state)
{
    char *m = written(hrv_gate_markdown, 50, NULL);
    const char *fail, *warn, *slower, *faster;

    (void)state;
    assert_true(strncmp(m, "1 key slower than allowed, 1 slower than the "
                           "warning level, 1 slower, 1 faster, 1 unchanged, "
                           "1 in one run only; machines match\n\nin one run "
                           "only: 1 key (only in the new run)\n\n| node | "
                           "phase | range | metric | before | after | "
                           "change | p | verdict |\n|---|", 220) == 0);
    /* Four changed keys, worst first. */
    assert_int_equal(count(m, "\n| "), 5);
    fail = strstr(m, "| A | warm | gemm | inclusive | 1.00 us | 1.50 us | "
                     "+50.0% | 1e-05 | **slower than allowed** (10%) |\n");
    warn = strstr(m, "| A | warm | add | self | 2.00 us | 2.30 us | +15.0% | "
                     "0.0001 | slower than the warning level (10%) |\n");
    slower = strstr(m, "| a&lt;b&amp;c\"d\\|e\\`f'g h i\\*\\_\\[x\\]&#126;"
                       "\\\\\xef\xbf\xbd\xef\xbf\xbdz\xc3\xa9 | warm | x | "
                       "self | 100.0 ns | 130.0 ns | +30.0% | 0.001 | "
                       "slower |\n");
    faster = strstr(m, "| A | warm | copy | self | 2.00 us | 1.00 us | "
                       "-50.0% | 0.0001 | faster |\n");
    assert_non_null(fail);
    assert_non_null(warn);
    assert_non_null(slower);
    assert_non_null(faster);
    assert_true(fail < warn && warn < slower && slower < faster);
    assert_null(strstr(m, "more changed"));
    free(m);

    m = written(hrv_gate_markdown, 1, "cores 2 and 4");
    assert_non_null(strstr(m, "; machines differ: cores 2 and 4\n"));
    assert_int_equal(count(m, "\n| "), 2);
    assert_non_null(strstr(m, "\n3 more changed keys not shown (--limit 1)."
                              "\n"));
    free(m);

    /* --limit 0: the verdict and how many changed, no table. */
    m = written(hrv_gate_markdown, 0, NULL);
    assert_null(strstr(m, "| node"));
    assert_non_null(strstr(m, "\n4 more changed keys not shown"));
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_markdown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
