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

struct feed {
    struct hrd_history_look *l;
    size_t pos[RUNS];
    size_t per_series; /* series changed when each is judged alone */
};

static int feed(void *ctx, const char *const *key, const double *x, size_t n)
{
    struct feed *f = ctx;
    static const struct hrd_cp_opts alone = { HRD_CP_ALPHA_DEFAULT,
                                              HRD_CP_MIN_CHANGE_DEFAULT,
                                              HRD_CP_WINDOW_DEFAULT, 0 };
    struct hrd_cp cp[RUNS];

    f->per_series += hrd_cp_detect(x, n, &alone, cp, RUNS) > 0;
    return hrd_history_look_add(f->l, key, "Test CPU 3000, 4 cores; clock fast",
                                x, f->pos, n);
}

/* Looks at the suite s into l; returns how many series a look of each
 * series alone at alpha (the method before the rule) reports changed. */
static size_t look(struct hrd_history_look *l, const struct harness_suite *s)
{
    static const struct hrd_cp_opts o = { HRD_CP_ALPHA_DEFAULT,
                                          HRD_CP_MIN_CHANGE_DEFAULT,
                                          HRD_CP_WINDOW_DEFAULT, 0 };
    struct feed f = { l, { 0 }, 0 };

    for (size_t r = 0; r < RUNS; r++)
        f.pos[r] = r;
    hrd_history_look_init(l, &o);
    assert_int_equal(harness_suite_each(s, feed, &f), 0);
    assert_int_equal(hrd_history_look_finish(l), 0);
    return f.per_series;
}

static const struct hrd_history_change *start(const struct hrd_history_look *l,
                                              size_t i)
{
    return &l->changes[l->findings[i].start];
}

static void print_findings(const struct hrd_history_look *l, size_t alone)
{
    print_message("%zu series tested, %zu changed judged alone; level %.3g; "
                  "clock step %g ns; %zu findings\n", l->tested, alone,
                  l->level, l->nmachines ? l->step[0] : 0.0, l->nfindings);
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct hrd_history_change *c = start(l, i);
        const struct hrd_history_look_series *s = &l->s[c->series];

        print_message("  finding %zu: run %zu, %zu nodes, %zu series, starts "
                      "in %s %s %s %s (%+.1f%%), p %.3g\n", i,
                      l->findings[i].pos, l->findings[i].nodes,
                      l->findings[i].n, s->key[0], s->key[3], s->key[4],
                      s->key[5], c->cp.change * 100, l->findings[i].p);
    }
}

/* The finding i names node `node`, starts in `layer`'s self time, at run
 * `run` or the next, and holds that node only. */
static void assert_finding(const struct hrd_history_look *l, size_t i,
                           const char *node, const char *layer, size_t run)
{
    const struct hrd_history_change *c = start(l, i);
    const struct hrd_history_look_series *s = &l->s[c->series];

    assert_string_equal(s->key[0], node);
    assert_string_equal(s->key[4], layer);
    assert_string_equal(s->key[5], "self");
    assert_int_equal(l->findings[i].nodes, 1);
    assert_true(l->findings[i].pos == run || l->findings[i].pos == run + 1);
}

static void test_one_step(void **state)
{
    static const struct harness_suite_step step = { 1234, 7, 12, 0.3 };
    struct harness_suite s = { NODES, RUNS, 0.01, 1, &step, 1 };
    struct hrd_history_look l;
    size_t alone;

    (void)state;
    alone = look(&l, &s);
    print_findings(&l, alone);
    assert_int_equal(l.tested, NODES * HARNESS_SUITE_SERIES);
    assert_true(l.step[0] == HARNESS_SUITE_STEP_NS);
    assert_int_equal(l.nfindings, 1);
    assert_finding(&l, 0, "n1234", "layer7", 12);
    hrd_history_look_fini(&l);
}

static void test_two_steps(void **state)
{
    static const struct harness_suite_step steps[2] = {
        { 1234, 7, 12, 0.3 }, { 77, 2, 8, 0.3 } };
    struct harness_suite s = { NODES, RUNS, 0.01, 2, steps, 2 };
    struct hrd_history_look l;
    size_t alone;

    (void)state;
    alone = look(&l, &s);
    print_findings(&l, alone);
    assert_int_equal(l.nfindings, 2);
    /* Numbered in the order of their first change: node n77 first. */
    assert_finding(&l, 0, "n77", "layer2", 8);
    assert_finding(&l, 1, "n1234", "layer7", 12);
    hrd_history_look_fini(&l);
}

/* Pure noise, five histories each of a loaded machine (the run's noise
 * 1%) and a quiet one (0.2%). */
static void test_noise(void **state)
{
    (void)state;
    for (int quiet = 0; quiet < 2; quiet++) {
        for (uint64_t seed = 10; seed < 15; seed++) {
            struct harness_suite s = { NODES, RUNS, quiet ? 0.002 : 0.01,
                                       seed, NULL, 0 };
            struct hrd_history_look l;
            size_t alone = look(&l, &s);

            print_findings(&l, alone);
            assert_int_equal(l.nfindings, 0);
            hrd_history_look_fini(&l);
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
