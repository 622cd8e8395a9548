/*
 * Run ids (lib/run/runid.c): random ids differ and have the form of an id;
 * a merge's id depends on its parts, not their order; a file without an
 * id is known by its content (a copy has the same id, another file
 * another), one with an id by it; and hostrangectl merge refuses two
 * files of the same content with exit status 3.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/run/runid.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_runfile.h"

static void test_random(void **state)
{
    char a[HRR_RUNID_LEN + 1], b[HRR_RUNID_LEN + 1];

    (void)state;
    assert_int_equal(hrr_runid_new(a), 0);
    assert_int_equal(hrr_runid_new(b), 0);
    assert_int_equal(strlen(a), HRR_RUNID_LEN);
    assert_true(hrr_runid_valid(a));
    assert_string_not_equal(a, b);
    assert_false(hrr_runid_valid("x0123"));
    assert_false(hrr_runid_valid("0123456789abcdef0123456789abcdeg"));
}

static void test_parts(void **state)
{
    char p1[] = "00000000000000000000000000000001";
    char p2[] = "00000000000000000000000000000002";
    char *ab[] = { p1, p2 }, *ba[] = { p2, p1 };
    char x[HRR_RUNID_LEN + 1], y[HRR_RUNID_LEN + 1];

    (void)state;
    hrr_runid_of_parts(ab, 2, x);
    hrr_runid_of_parts(ba, 2, y);
    assert_string_equal(x, y);
    assert_true(hrr_runid_valid(x));
    assert_true(x[0] != HRR_RUNID_CONTENT);
    hrr_runid_of_parts(ab, 1, y);
    assert_string_not_equal(x, y);
}

static void write_run(const char *path, uint64_t ns)
{
    struct harness_runfile f;
    struct hra_key *k;

    harness_runfile_create(&f, path, 1);
    k = harness_runfile_key(&f, "n", 2, "r");
    harness_runfile_add(&f, k, ns, ns / 2);
    harness_runfile_put(&f, k);
    harness_runfile_commit(&f);
}

static int run_merge(const char *out, const char *a, const char *b)
{
    const char *ctl = getenv("HOSTRANGECTL");
    char cmd[8192];
    int st;

    assert_non_null(ctl);
    snprintf(cmd, sizeof cmd, "'%s' merge -o '%s' '%s' '%s' >/dev/null "
             "2>&1", ctl, out, a, b);
    st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void test_content(void **state)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    char dir[4096], a[4200], b[4200], c[4200], out[4200], cmd[8500];
    char ia[HRR_RUNID_LEN + 1], ib[HRR_RUNID_LEN + 1];
    char ic[HRR_RUNID_LEN + 1], err[512];

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "runid");
    snprintf(a, sizeof a, "%s/a.hrs", dir);
    snprintf(b, sizeof b, "%s/b.hrs", dir);
    snprintf(c, sizeof c, "%s/c.hrs", dir);
    snprintf(out, sizeof out, "%s/out.hrs", dir);
    write_run(a, 1000);
    write_run(c, 2000);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", a, b);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(hrr_runid_of_file(a, NULL, ia, err, sizeof err), 0);
    assert_int_equal(hrr_runid_of_file(b, &h, ib, err, sizeof err), 0);
    assert_int_equal(hrr_runid_of_file(c, NULL, ic, err, sizeof err), 0);
    assert_int_equal(ia[0], HRR_RUNID_CONTENT);
    assert_true(hrr_runid_valid(ia));
    assert_string_equal(ia, ib);
    assert_string_not_equal(ia, ic);
    h.id = "0123456789abcdef0123456789abcdef";
    assert_int_equal(hrr_runid_of_file(a, &h, ib, err, sizeof err), 0);
    assert_string_equal(ib, h.id);
    assert_int_equal(hrr_runid_of_file("/nonexistent/x.hrs", NULL, ib, err,
                                       sizeof err), -ENOENT);
    /* merge: two copies refused, two different files merged. */
    assert_int_equal(run_merge(out, a, b), 3);
    assert_int_equal(access(out, F_OK), -1);
    assert_int_equal(run_merge(out, a, c), 0);
    /* The merge holds both: merging it with either is refused. */
    assert_int_equal(run_merge(out, out, b), 3);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
