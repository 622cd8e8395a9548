/*
 * What libhrops references, read with nm and readelf: built with the
 * ranges, it calls into libhostrange; built with
 * --disable-host-range-profiling, it has no hr_ symbol at all, needs no
 * libhostrange, and none of its undefined symbols is one that libhostrange
 * defines. In both, it exports only hrops_ symbols. Skips (77) when nm or
 * readelf is missing or the library is not a shared one.
 */
#include "config.h"

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

#ifdef HOSTRANGE_DISABLE
#define PROFILING 0
#else
#define PROFILING 1
#endif

#define MAX_SYMS 4096

struct syms {
    int n;
    char name[MAX_SYMS][128];
    char type[MAX_SYMS];
};

static char g_lib[4096], g_client[4096], g_la[4096];

/* Runs a shell command and stores its output lines "X NAME" (nm's type
 * and name) in *s; returns the command's exit status. */
static int nm_read(const char *cmd, struct syms *s)
{
    FILE *p = popen(cmd, "r");
    char line[1024];

    s->n = 0;
    assert_non_null(p);
    while (fgets(line, sizeof line, p) != NULL) {
        char f[3][512], type, *name;
        char *at;
        int n = sscanf(line, "%511s %511s %511s", f[0], f[1], f[2]);

        /* "ADDRESS TYPE NAME", or "TYPE NAME" for an undefined symbol. */
        if (n == 3) {
            type = f[1][0];
            name = f[2];
        } else if (n == 2) {
            type = f[0][0];
            name = f[1];
        } else {
            continue;
        }
        at = strchr(name, '@');
        if (at != NULL)
            *at = '\0';
        assert_true(s->n < MAX_SYMS);
        s->type[s->n] = type;
        snprintf(s->name[s->n], sizeof s->name[s->n], "%.127s", name);
        s->n++;
    }
    return pclose(p);
}

static int has(const struct syms *s, const char *name)
{
    for (int i = 0; i < s->n; i++) {
        if (strcmp(s->name[i], name) == 0)
            return 1;
    }
    return 0;
}

static int tool_missing(const char *tool)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) != 0;
}

static int setup(void **state)
{
    const char *top = getenv("top_builddir");

    (void)state;
    if (top == NULL || top[0] == '\0')
        top = ".";
    snprintf(g_lib, sizeof g_lib, "%s/ops/.libs/libhrops.so", top);
    snprintf(g_la, sizeof g_la, "%s/ops/libhrops.la", top);
    snprintf(g_client, sizeof g_client, "%s/client/.libs/libhostrange.so",
             top);
    return 0;
}

static void test_exports_only_hrops(void **state)
{
    static struct syms s;
    char cmd[8192];

    (void)state;
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", g_lib);
    assert_int_equal(nm_read(cmd, &s), 0);
    assert_true(has(&s, "hrops_add"));
    assert_true(has(&s, "hrops_gemm"));
    assert_true(has(&s, "hrops_cache_clear"));
    for (int i = 0; i < s.n; i++) {
        if (strchr("TDBRV", s.type[i]) != NULL &&
            strncmp(s.name[i], "hrops_", 6) != 0 && s.name[i][0] != '_')
            fail_msg("libhrops exports %s", s.name[i]);
    }
}

static void test_client_references(void **state)
{
    static struct syms all, undef, client;
    char cmd[8192];
    int into_client = 0, hr = 0;

    (void)state;
    snprintf(cmd, sizeof cmd, "nm -D '%s'", g_lib);
    assert_int_equal(nm_read(cmd, &all), 0);
    snprintf(cmd, sizeof cmd, "nm -D --undefined-only '%s'", g_lib);
    assert_int_equal(nm_read(cmd, &undef), 0);
    for (int i = 0; i < all.n; i++)
        hr += strncmp(all.name[i], "hr_", 3) == 0;
    if (access(g_client, R_OK) == 0) {
        snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", g_client);
        assert_int_equal(nm_read(cmd, &client), 0);
        assert_true(has(&client, "hr_labels_set"));
        for (int i = 0; i < undef.n; i++) {
            if (has(&client, undef.name[i])) {
                into_client++;
                if (!PROFILING)
                    fail_msg("libhrops references %s of libhostrange",
                             undef.name[i]);
            }
        }
    }
    if (PROFILING) {
        /* The ranges' calls are there. */
        assert_true(into_client > 0);
    } else {
        assert_int_equal(hr, 0);
        assert_int_equal(into_client, 0);
    }
}

static void test_needed_libraries(void **state)
{
    char cmd[8192], line[1024];
    FILE *p;
    int needed = 0, client = 0;

    (void)state;
    snprintf(cmd, sizeof cmd, "readelf -d '%s'", g_lib);
    p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p) != NULL) {
        if (strstr(line, "(NEEDED)") == NULL)
            continue;
        needed++;
        client += strstr(line, "libhostrange") != NULL;
    }
    assert_int_equal(pclose(p), 0);
    assert_true(needed > 0);
    assert_int_equal(client, PROFILING);

    /* libtool's record of the library agrees. */
    p = fopen(g_la, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p) != NULL) {
        if (strncmp(line, "dependency_libs=", 16) == 0)
            assert_int_equal(strstr(line, "libhostrange") != NULL,
                             PROFILING);
    }
    fclose(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exports_only_hrops),
        cmocka_unit_test(test_client_references),
        cmocka_unit_test(test_needed_libraries),
    };

    setup(NULL);
    if (tool_missing("nm") || tool_missing("readelf")) {
        fprintf(stderr, "nm or readelf is missing\n");
        return 77;
    }
    if (access(g_lib, R_OK) != 0) {
        fprintf(stderr, "%s: no shared library to read\n", g_lib);
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
