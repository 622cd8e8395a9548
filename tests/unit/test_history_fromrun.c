/*
 * A run read for the history (lib/history/fromrun.c) and a run judged
 * against it (judge.c): a run file saved with an id, meta and two keys
 * becomes one run of the history, its points the keys' rows, its order
 * and commit its meta's, --meta pairs over the file's; a meta time that
 * is not one, and a file that is not a run file, are refused with their
 * reasons. A run's point judged against a series of 12 runs: one 20%
 * slower differs and is kept, alone a finding; one at the series' level
 * does not; too short a series, or fewer runs than min_history, are not
 * judged. check's rule over it (hrh_check_*): the series it reads, the
 * keys not judged by reason, findings, limits, gate rows and verdicts.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/history/fromrun.h"
#include "lib/history/gate.h"
#include "lib/history/judge.h"
#include "lib/history/series.h"
#include "tests/lib/harness_runfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/hostrange-test-fromrun-XXXXXX";

/* Writes a run of id `id` (NULL: none) and meta time `t` to path: keys
 * a/x (median 1000 ns) and a/y (2000 ns), five events each. */
static void write_run(const char *path, const char *id, const char *t)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunFingerprint fp = HOSTRANGE__RUN_FINGERPRINT__INIT;
    Hostrange__RunMeta m[2] = { HOSTRANGE__RUN_META__INIT,
                                HOSTRANGE__RUN_META__INIT };
    Hostrange__RunMeta *mp[2] = { &m[0], &m[1] };
    struct harness_runfile f;
    static const char *const range[2] = { "x", "y" };

    fp.host = "hostA";
    fp.cpu_model = "Test CPU 3000";
    fp.cores = 4;
    fp.kernel = "Linux 6.1.0";
    fp.clock_path = "fast";
    fp.version = PACKAGE_VERSION;
    h.fingerprint = &fp;
    h.id = (char *)id;
    h.time_ns = 1700000000000000000ull;
    m[0].key = "commit";
    m[0].value = "abc123";
    m[1].key = "time";
    m[1].value = (char *)t;
    h.meta = mp;
    h.n_meta = 2;
    harness_runfile_create_header(&f, path, 1, &h);
    for (int i = 0; i < 2; i++) {
        struct hra_key *k = harness_runfile_key(&f, "a", 2, range[i]);

        for (uint64_t d = 0; d < 5; d++)
            harness_runfile_add(&f, k, 1000 * (i + 1) + d - 2, 500);
        harness_runfile_put(&f, k);
    }
    harness_runfile_commit(&f);
}

static void test_load(void **state)
{
    struct hrh_fromrun r;
    char path[256], err[8400];
    char extra0[] = "commit=def456", extra1[] = "who=ci";
    char *extra[2] = { extra0, extra1 };
    double inclusive[2] = { 0, 0 };
    const char *who = NULL;

    (void)state;
    snprintf(path, sizeof path, "%s/run.hrs", dir);
    write_run(path, "0123456789abcdef0123456789abcdef", "1700000100");
    assert_int_equal(hrh_fromrun_load(&r, path, extra, 2, NULL, NULL,
                                              NULL, err, sizeof err), 0);
    assert_string_equal(r.run.id, "0123456789abcdef0123456789abcdef");
    assert_string_equal(r.run.commit, "def456"); /* --meta over the file */
    assert_true(r.run.time_ns == 1700000100000000000ll);
    assert_true(r.run.saved_ns == 1700000000000000000ll);
    assert_string_equal(r.run.host, "hostA");
    assert_string_equal(r.run.kernel, "Linux 6.1.0");
    assert_non_null(strstr(r.run.machine, "Test CPU 3000"));
    assert_null(strstr(r.run.machine, "hostA"));
    assert_string_equal(r.run.file, path);
    for (size_t i = 0; i < r.run.nmeta; i++) {
        if (strcmp(r.run.meta_key[i], "who") == 0)
            who = r.run.meta_value[i];
    }
    assert_non_null(who);
    assert_string_equal(who, "ci");
    /* Two keys, each an inclusive and a self row. */
    assert_int_equal(r.n, 4);
    for (size_t i = 0; i < r.n; i++) {
        const struct hrh_point *p = &r.p[i];

        assert_string_equal(p->node, "a");
        assert_int_equal(p->count, 5);
        if (strcmp(p->metric, "inclusive") == 0)
            inclusive[strcmp(p->range, "y") == 0] = p->median;
    }
    assert_true(inclusive[0] == 1000 && inclusive[1] == 2000);
    assert_int_equal(r.unreadable, 0);
    hrh_fromrun_fini(&r);

    /* --machine names the machine. */
    assert_int_equal(hrh_fromrun_load(&r, path, NULL, 0, "box", NULL,
                                              NULL, err, sizeof err), 0);
    assert_string_equal(r.run.machine, "box");
    assert_string_equal(r.run.commit, "abc123");
    hrh_fromrun_fini(&r);
    unlink(path);
}

static void test_refused(void **state)
{
    struct hrh_fromrun r;
    char path[256], err[8400];
    FILE *f;

    (void)state;
    snprintf(path, sizeof path, "%s/badtime.hrs", dir);
    write_run(path, NULL, "not a time");
    assert_int_equal(hrh_fromrun_load(&r, path, NULL, 0, NULL, NULL,
                                              NULL, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "meta time 'not a time' is not a time"));
    assert_int_equal(r.unreadable, 0); /* read, then refused */
    /* A run without an id is known by the hash of its bytes. */
    assert_int_equal(r.id[0], 'c');
    assert_int_equal(strlen(r.id), 32);
    hrh_fromrun_fini(&r);
    unlink(path);

    snprintf(path, sizeof path, "%s/junk.hrs", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("junk\n", f);
    fclose(f);
    assert_int_equal(hrh_fromrun_load(&r, path, NULL, 0, NULL, NULL,
                                              NULL, err, sizeof err),
                     -EINVAL);
    assert_int_equal(r.unreadable, 1);
    assert_non_null(strstr(err, "junk.hrs"));
    hrh_fromrun_fini(&r);
    unlink(path);
}

/* A series of key a/x on machine m of n runs at about 1000 ns (+-0.1%). */
static void make_series(struct hrh_series *s, size_t n)
{
    struct hrh_point p;
    char run[16];

    memset(s, 0, sizeof *s);
    memset(&p, 0, sizeof p);
    p.node = "a";
    p.op = "op";
    p.backend = "cpu";
    p.phase = "warm";
    p.range = "x";
    p.metric = "inclusive";
    p.machine = "m";
    p.commit = "c";
    p.run = run;
    for (size_t i = 0; i < n; i++) {
        snprintf(run, sizeof run, "r%zu", i);
        p.median = 1000 + (i % 3) - 1;
        if (i == 0)
            assert_int_equal(hrh_series_start(s, &p), 0);
        assert_true(hrh_series_same(s, &p));
        assert_int_equal(hrh_series_push(s, &p), 0);
    }
}

static void test_judge(void **state)
{
    struct hrs_cp_opts cp = { HRS_CP_ALPHA_DEFAULT,
                              HRS_CP_MIN_CHANGE_DEFAULT,
                              HRS_CP_WINDOW_DEFAULT, 0, 0 };
    struct hrh_series s, shortone;
    struct hrh_judge jg;
    struct hrh_judged j;
    struct hrh_point run[2];
    struct hrs_cp res;
    size_t keys, nodes, start;

    (void)state;
    make_series(&s, 12);
    make_series(&shortone, 1);
    memset(run, 0, sizeof run);
    for (int i = 0; i < 2; i++) {
        run[i].node = "a";
        run[i].op = "op";
        run[i].backend = "cpu";
        run[i].phase = "warm";
        run[i].metric = "inclusive";
        run[i].machine = "m";
    }
    run[0].range = "x";
    run[0].median = 1200;
    run[1].range = "z";
    run[1].median = 1000;

    assert_int_equal(hrh_judge_init(&jg, &cp, 0, NULL, 5), 0);
    assert_int_equal(hrh_judge_run(&jg, run, 2), 0);
    assert_ptr_equal(hrh_judge_find(&jg, &s), &run[0]);
    assert_int_equal(jg.seen[0], 1);
    assert_int_equal(jg.seen[1], 0);
    assert_int_equal(hrh_judge_point(&jg, &s, &run[0], &res, &j),
                     HRH_JUDGE_DIFFERS);
    assert_true(res.change > 0.19 && res.change < 0.21);
    assert_true(res.p < 0.01);
    assert_int_equal(j.by_rounds, 0);
    assert_true(j.threshold == 5);
    assert_int_equal(jg.judged, 1);
    assert_int_equal(jg.npend, 1);
    assert_string_equal(jg.pend[0].key[4], "x");

    /* At the series' level: the same. */
    run[0].median = 1000;
    assert_int_equal(hrh_judge_point(&jg, &s, &run[0], &res, &j),
                     HRH_JUDGE_SAME);
    assert_int_equal(jg.npend, 1);
    /* One run of history: too short a segment. */
    assert_int_equal(hrh_judge_point(&jg, &shortone, &run[0], &res,
                                             &j),
                     HRH_JUDGE_SHORT);
    assert_int_equal(jg.judged, 2);

    /* The rule keeps the key that differs, a finding of its own. */
    assert_int_equal(hrh_judge_rule(&jg), 0);
    assert_int_equal(jg.found, 1);
    assert_int_equal(jg.pend[0].keep, 1);
    assert_int_equal(hrh_judge_root(&jg, 0), 0);
    hrh_judge_finding(&jg, 0, &keys, &nodes, &start);
    assert_int_equal(keys, 1);
    assert_int_equal(nodes, 1);
    assert_int_equal(start, 0);
    hrh_judge_fini(&jg);

    /* Fewer runs than min_history: not judged. */
    assert_int_equal(hrh_judge_init(&jg, &cp, 20, NULL, 5), 0);
    assert_int_equal(hrh_judge_point(&jg, &s, &run[0], &res, &j),
                     HRH_JUDGE_FEW);
    assert_int_equal(jg.judged, 0);
    hrh_judge_fini(&jg);
    hrh_series_fini(&s);
    hrh_series_fini(&shortone);
}

/* The run's points for check: a/x (median `x`), a/z (a key of no
 * series) and b/x (a node the filter leaves out). */
static void check_run(struct hrh_point *run, double x)
{
    static const char *const node[3] = { "a", "a", "b" };
    static const char *const range[3] = { "x", "z", "x" };

    memset(run, 0, 3 * sizeof *run);
    for (int i = 0; i < 3; i++) {
        run[i].node = node[i];
        run[i].op = "op";
        run[i].backend = "cpu";
        run[i].phase = "warm";
        run[i].range = range[i];
        run[i].metric = "inclusive";
        run[i].run = "pr";
        run[i].median = 1000;
    }
    run[0].median = x;
}

/* check's rule (judge.c, hrh_check_*): the series it reads (the run's
 * machine, not the run itself, the filters), the keys not judged by
 * reason, a finding and its key slower beyond its limit, the gate rows
 * of a key that differs and of one that does not, and the verdict. */
static void test_check(void **state)
{
    struct hrs_cp_opts cp = { HRS_CP_ALPHA_DEFAULT,
                              HRS_CP_MIN_CHANGE_DEFAULT,
                              HRS_CP_WINDOW_DEFAULT, 0, 0 };
    struct hra_filter f = { .node = "a" };
    struct hrs_limits limits = { 0 };
    struct hrh_series s, shortone;
    struct hrh_check c;
    struct hrh_check_said said;
    struct hrh_check_finding fd = { 0 };
    struct hrh_gate g = { 0 };
    struct hrh_point run[3], other;
    const struct hrh_point *p;
    struct hrh_judged j;
    struct hrs_cp res;
    enum hrh_unjudged why;
    char err[128];
    size_t k = 0;

    (void)state;
    assert_int_equal(hrs_limits_parse(&limits, "10", err, sizeof err), 0);
    make_series(&s, 12);
    make_series(&shortone, 1);
    check_run(run, 1200);
    assert_int_equal(hrh_check_init(&c, &cp, 0, &limits, 5, &f, NULL, "m",
                                    run, 3), 0);
    c.exclude = "pr";
    for (int i = 0; i < 3; i++)
        assert_string_equal(run[i].machine, "m");

    /* Another machine's points, and the run's own, are not read, nor do
     * they say that the history knows the machine. */
    other = run[0];
    other.machine = "m2";
    assert_false(hrh_check_keep(&c, &other));
    other.machine = "m";
    other.run = "pr";
    assert_false(hrh_check_keep(&c, &other));
    assert_int_equal(c.machine_seen, 0);
    /* One the filter leaves out does. */
    other.run = "r1";
    other.node = "b";
    assert_false(hrh_check_keep(&c, &other));
    assert_int_equal(c.machine_seen, 1);
    other.node = "a";
    assert_true(hrh_check_keep(&c, &other));

    /* 20% slower: it differs, for the rule; too short a history: not
     * judged. */
    assert_int_equal(hrh_check_series(&c, &s, &p, &res, &j, &why),
                     HRH_CHECK_LATER);
    assert_ptr_equal(p, &run[0]);
    assert_int_equal(c.jg.npend, 1);
    assert_int_equal(hrh_check_series(&c, &shortone, &p, &res, &j, &why),
                     HRH_CHECK_UNJUDGED);
    assert_int_equal(why, HRH_UNJUDGED_TOO_SHORT);
    assert_int_equal(c.unjudged[HRH_UNJUDGED_TOO_SHORT], 1);

    /* One finding of one key, beyond its limit of 10%. */
    assert_int_equal(hrh_judge_rule(&c.jg), 0);
    assert_int_equal(hrh_check_next_finding(&c, &fd), 1);
    assert_int_equal(fd.number, 1);
    assert_int_equal(fd.root, 0);
    assert_int_equal(fd.keys, 1);
    assert_true(hrh_check_in_finding(&c, &fd, 0));
    assert_int_equal(hrh_check_next_finding(&c, &fd), 0);
    assert_int_equal(c.findings, 1);
    hrh_check_pending(&c, &c.jg.pend[0], &said);
    assert_int_equal(said.over, 1);
    assert_int_equal(said.not_judged, 0);
    assert_int_equal(c.slower, 1);

    /* a/z has no series on a machine the history knows; b/x is not
     * asked for. */
    p = hrh_check_unseen(&c, &k, &why);
    assert_ptr_equal(p, &run[1]);
    assert_int_equal(why, HRH_UNJUDGED_NO_KEY);
    assert_null(hrh_check_unseen(&c, &k, &why));
    assert_int_equal(hrh_check_unjudged_total(&c), 2);
    assert_int_equal(hrh_check_refused(&c), 0);
    assert_int_equal(hrh_check_verdict(&c), HRH_CHECK_SLOWER);

    /* Its gate row fails; a key settled unchanged keeps its figures. */
    assert_int_equal(hrh_gate_add_judged(&g, &limits, c.jg.pend[0].key, "m",
                                         &c.jg.pend[0].res, 1,
                                         &c.jg.pend[0].j, &said), 0);
    assert_int_equal(g.v[0].verdict, HRV_GATE_SLOWER);
    assert_int_equal(g.v[0].fail, 1);
    assert_true(g.v[0].fail_pct == 10);
    assert_true(g.v[0].detectable == c.jg.pend[0].j.detectable);
    hrh_check_settle(&c, &c.jg.pend[0].j, &said);
    assert_int_equal(said.over, 0);
    assert_int_equal(hrh_gate_add_judged(&g, &limits, c.jg.pend[0].key, "m",
                                         &c.jg.pend[0].res, 0,
                                         &c.jg.pend[0].j, &said), 0);
    assert_int_equal(g.v[1].verdict, HRV_GATE_UNCHANGED);
    assert_int_equal(g.v[1].fail, 0);
    assert_true(g.v[1].after == 1200);
    hrh_gate_fini(&g);
    hrh_check_fini(&c);

    /* With --min-history 20, on a machine the history does not know:
     * refused, the keys of no series too. */
    check_run(run, 1000);
    assert_int_equal(hrh_check_init(&c, &cp, 20, NULL, 5, &f, NULL, "m",
                                    run, 3), 0);
    assert_int_equal(hrh_check_series(&c, &s, &p, &res, &j, &why),
                     HRH_CHECK_UNJUDGED);
    assert_int_equal(why, HRH_UNJUDGED_FEW_RUNS);
    k = 0;
    assert_ptr_equal(hrh_check_unseen(&c, &k, &why), &run[1]);
    assert_int_equal(why, HRH_UNJUDGED_NO_MACHINE);
    assert_int_equal(hrh_check_refused(&c), 2);
    assert_int_equal(hrh_check_verdict(&c), HRH_CHECK_REFUSED);
    hrh_check_fini(&c);

    /* A key whose detectable change is above its limit is not judged at
     * it, and has a line; one judged by rounds is counted by verdict. */
    assert_int_equal(hrh_check_init(&c, &cp, 0, &limits, 5, &f, NULL, "m",
                                    run, 3), 0);
    assert_int_equal(hrh_check_verdict(&c), HRH_CHECK_PASSED);
    memset(&j, 0, sizeof j);
    j.limited = j.gated = 1;
    j.threshold = 10;
    j.detectable = 25;
    j.by_rounds = 1;
    j.dec.verdict = HRS_DECIDE_SAME;
    hrh_check_settle(&c, &j, &said);
    assert_int_equal(said.not_judged, 1);
    assert_true(hrh_check_said_line(&said));
    assert_int_equal(c.not_judged_limit, 1);
    assert_int_equal(c.verdicts[HRS_DECIDE_SAME], 1);
    assert_int_equal(hrh_check_verdict(&c), HRH_CHECK_NOT_JUDGED);
    j.detectable = 2;
    hrh_check_settle(&c, &j, &said);
    assert_false(hrh_check_said_line(&said));
    hrh_check_fini(&c);

    hrs_limits_fini(&limits);
    hrh_series_fini(&s);
    hrh_series_fini(&shortone);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_check),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
