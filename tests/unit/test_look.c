/*
 * One look at a history of a suite's size (lib/history/look.c): 3,000
 * nodes x 40 series x 20 runs (tests/lib/harness_suite.h), with one real
 * step, two, or none. The step must come out as one finding at its run
 * (or the next), naming its node and the layer whose self time moved; the
 * 2,999 unchanged nodes must give no finding; pure noise none, in five
 * histories, under the noise of a loaded machine and of a quiet one.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/history/look.h"
#include "tests/lib/harness_suite.h"

#include <stdio.h>
#include <string.h>

#define NODES 3000
#define RUNS 20

#define MACHINE "Test CPU 3000, 4 cores; clock fast"

struct feed {
    struct hrh_look *l;
    size_t pos[RUNS];
    uint64_t one[RUNS], many[RUNS]; /* a cold row's counts, a warm's */
    size_t per_series; /* series changed when each is judged alone */
};

static int feed(void *ctx, const char *const *key, const double *x, size_t n)
{
    struct feed *f = ctx;
    static const struct hrs_cp_opts alone = { HRS_CP_ALPHA_DEFAULT,
                                              HRS_CP_MIN_CHANGE_DEFAULT,
                                              HRS_CP_WINDOW_DEFAULT, 0, 0 };
    struct hrs_cp cp[RUNS];

    f->per_series += hrs_cp_detect(x, n, &alone, cp, RUNS) > 0;
    return hrh_look_add(f->l, key, MACHINE, x,
                                strcmp(key[3], "cold") == 0 ? f->one
                                                            : f->many,
                                f->pos, n);
}

/* Looks at the suite s; returns the look, and in *alone how many series a
 * look of each series alone at alpha (the method before the rule)
 * reports changed. */
static struct hrh_look *look(const struct harness_suite *s,
                                     size_t *alone)
{
    static const struct hrs_cp_opts o = { HRS_CP_ALPHA_DEFAULT,
                                          HRS_CP_MIN_CHANGE_DEFAULT,
                                          HRS_CP_WINDOW_DEFAULT, 0, 0 };
    struct feed f;

    memset(&f, 0, sizeof f);
    for (size_t r = 0; r < RUNS; r++) {
        f.pos[r] = r;
        f.one[r] = 1;
        f.many[r] = 1000;
    }
    f.l = hrh_look_new(&o);
    assert_non_null(f.l);
    assert_int_equal(harness_suite_each(s, feed, &f), 0);
    assert_int_equal(hrh_look_finish(f.l), 0);
    *alone = f.per_series;
    return f.l;
}

static void print_findings(const struct hrh_look *l, size_t alone)
{
    size_t nf = hrh_look_nfindings(l);

    print_message("%zu series tested, %zu changed judged alone; level %.3g; "
                  "clock step %g ns; %zu findings\n",
                  hrh_look_tested(l), alone,
                  hrh_look_level(l), hrh_look_step(l, MACHINE),
                  nf);
    for (size_t i = 0; i < nf; i++) {
        struct hrh_finding f;
        struct hrh_change c;

        hrh_look_finding(l, i, &f);
        hrh_look_change(l, i, f.start, &c);
        print_message("  finding %zu: run %zu, %zu nodes, %zu series, starts "
                      "in %s %s %s %s (%+.1f%%), p %.3g\n", i, f.pos,
                      f.nodes, f.nchanges, c.key[0], c.key[3], c.key[4],
                      c.key[5], c.cp.change * 100, f.p);
    }
}

/* The finding i names node `node`, starts in `layer`'s self time, at run
 * `run` or the next, holds that node only, and with it the inclusive
 * times of the layers above (layer0 to `layer`, warm: a median of many
 * samples moves surely). */
static void assert_finding(const struct hrh_look *l, size_t i,
                           const char *node, int layer, size_t run)
{
    struct hrh_finding f;
    struct hrh_change c;
    char name[16];
    int warm_incl = 0, warm_self = 0;

    hrh_look_finding(l, i, &f);
    hrh_look_change(l, i, f.start, &c);
    snprintf(name, sizeof name, "layer%d", layer);
    assert_string_equal(c.key[0], node);
    assert_string_equal(c.key[4], name);
    assert_string_equal(c.key[5], "self");
    assert_int_equal(f.nodes, 1);
    assert_true(f.pos == run || f.pos == run + 1);
    for (size_t j = 0; j < f.nchanges; j++) {
        hrh_look_change(l, i, j, &c);
        assert_string_equal(c.key[0], node);
        if (strcmp(c.key[3], "warm") != 0)
            continue;
        if (strcmp(c.key[5], "inclusive") == 0)
            warm_incl++;
        else
            warm_self += strcmp(c.key[4], name) == 0;
    }
    assert_int_equal(warm_incl, layer + 1);
    assert_int_equal(warm_self, 1);
}

static void test_one_step(void **state)
{
    static const struct harness_suite_step step = { 1234, 7, 12, 0.3 };
    struct harness_suite s = { NODES, RUNS, 0.01, 1, &step, 1, 0 };
    struct hrh_look *l;
    size_t alone;

    (void)state;
    l = look(&s, &alone);
    print_findings(l, alone);
    assert_int_equal(hrh_look_tested(l), NODES * HARNESS_SUITE_SERIES);
    assert_true(hrh_look_step(l, MACHINE) == HARNESS_SUITE_STEP_NS);
    assert_int_equal(hrh_look_nfindings(l), 1);
    assert_finding(l, 0, "n1234", 7, 12);
    hrh_look_free(l);
}

static void test_two_steps(void **state)
{
    static const struct harness_suite_step steps[2] = {
        { 1234, 7, 12, 0.3 }, { 77, 2, 8, 0.3 } };
    struct harness_suite s = { NODES, RUNS, 0.01, 2, steps, 2, 0 };
    struct hrh_look *l;
    size_t alone;

    (void)state;
    l = look(&s, &alone);
    print_findings(l, alone);
    assert_int_equal(hrh_look_nfindings(l), 2);
    /* Numbered in the order of their first change: node n77 first. */
    assert_finding(l, 0, "n77", 2, 8);
    assert_finding(l, 1, "n1234", 7, 12);
    hrh_look_free(l);
}

/* Pure noise, five histories each of a loaded machine (the run's noise
 * 1%) and a quiet one (0.2%). */
static void test_noise(void **state)
{
    (void)state;
    for (int quiet = 0; quiet < 2; quiet++) {
        for (uint64_t seed = 10; seed < 15; seed++) {
            struct harness_suite s = { NODES, RUNS, quiet ? 0.002 : 0.01,
                                       seed, NULL, 0, 0 };
            size_t alone;
            struct hrh_look *l = look(&s, &alone);

            print_findings(l, alone);
            assert_int_equal(hrh_look_nfindings(l), 0);
            hrh_look_free(l);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_step),
        cmocka_unit_test(test_two_steps),
        cmocka_unit_test(test_noise),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
