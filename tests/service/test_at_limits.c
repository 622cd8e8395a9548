/*
 * What happens at the limits, with a real hostranged: programs correct
 * apart from one unusual name (tests/helpers/limits) lose nothing good,
 * and what they lose is counted. A range name or node id the daemon would
 * refuse (empty, or over HR_MAX_NAME bytes) is caught where it enters: the
 * good events before, after and around it all arrive, and the refusal is
 * counted by the client and in stats. A full table of calling contexts
 * keeps the flat rows, and counts its overflow. A client killed in a
 * window is named unfinished in stats.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostrange.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_rows.h"

static const char *limits_helper(void)
{
    static char path[4096];
    const char *top = getenv("top_builddir");

    snprintf(path, sizeof path, "%s/tests/helpers/limits",
             top != NULL ? top : ".");
    return path;
}

/* What the helper printed. */
struct outcome {
    int labels, window, record, flush;
    unsigned long long samples, delivered, lost, bad_name, bad_label,
        contexts_full;
    pid_t pid;
};

static void run_limits(const char *dir, const char *mode, const char *arg,
                       struct outcome *o, const char *arg2)
{
    char *argv[] = { (char *)limits_helper(), (char *)mode, (char *)arg,
                     (char *)arg2, NULL };
    struct harness_run r;
    const char *p;

    harness_run(argv, dir, 120, &r);
    if (!harness_exited(r.status, 0))
        fail_msg("limits %s: status %d: %s", mode, r.status, r.err);
    p = strstr(r.out, "rc labels=");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "rc labels=%d window=%d record=%d flush=%d",
                            &o->labels, &o->window, &o->record, &o->flush),
                     4);
    p = strstr(r.out, "counters samples=");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "counters samples=%llu delivered=%llu "
                               "lost=%llu bad_name=%llu bad_label=%llu "
                               "contexts_full=%llu",
                            &o->samples, &o->delivered, &o->lost,
                            &o->bad_name, &o->bad_label, &o->contexts_full),
                     6);
    harness_run_free(&r);
}

/* The inclusive count of (node, range) in the daemon's report, 0 when it
 * has no such row. */
static unsigned long long row_count(const char *dir, const char *node,
                                    const char *range)
{
    static struct flat rows[64];
    struct harness_run r;
    unsigned long long n = 0;
    int nrows;

    harness_ctl(dir, &r, "-t", "120000", "dump", "--node", node, "--range",
                range, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("dump: %s", r.err);
    nrows = flat_parse_rows(r.out, rows, 64);
    for (int i = 0; i < nrows; i++) {
        if (strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
            n += strtoull(flat_get(&rows[i], "count"), NULL, 10);
    }
    harness_run_free(&r);
    return n;
}

/* The number of rows of the whole report. */
static int report_rows(const char *dir)
{
    char *text = harness_dump(dir, NULL);
    int n = 0;

    for (const char *p = text; *p != '\0'; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* A client's counter in stats (it must be the only client). */
static unsigned long long client_stat(const char *dir, const char *name)
{
    char *text = harness_stats(dir), key[64];
    unsigned long long v;

    snprintf(key, sizeof key, "client.1.%s", name);
    v = harness_stat(text, key);
    free(text);
    return v;
}

/* A scope whose range name is too long, around which 100 ok.range scopes
 * are open: ok.range counts 100, the bad scopes and record are counted. */
static void test_site_too_long(void **state)
{
    struct harness_daemon *d = *state;
    struct outcome o;

    run_limits(d->dir, "site-long", NULL, &o, NULL);
    assert_int_equal(o.record, -ENAMETOOLONG);
    assert_int_equal(o.flush, 0);
    assert_int_equal(o.bad_name, 101);
    assert_int_equal(o.samples, 100);
    assert_int_equal(o.delivered, 100);
    assert_int_equal(o.lost, 0);
    assert_int_equal(row_count(d->dir, "probe/ok", "ok.range"), 100);
    /* ok.range's inclusive and self rows, nothing else. */
    assert_int_equal(report_rows(d->dir), 2);
    assert_int_equal(client_stat(d->dir, "errors.bad_name"), 101);
    assert_int_equal(client_stat(d->dir, "rejected"), 0);
    assert_int_equal(client_stat(d->dir, "unfinished"), 0);
}

static void test_site_empty(void **state)
{
    struct harness_daemon *d = *state;
    struct outcome o;

    run_limits(d->dir, "site-empty", NULL, &o, NULL);
    assert_int_equal(o.record, -EINVAL);
    assert_int_equal(o.bad_name, 101);
    assert_int_equal(o.delivered, 100);
    assert_int_equal(o.lost, 0);
    assert_int_equal(row_count(d->dir, "probe/ok", "ok.range"), 100);
    assert_int_equal(report_rows(d->dir), 2);
    assert_int_equal(client_stat(d->dir, "errors.bad_name"), 101);
}

/* Labels refused: their window is not collected (counted), the next one,
 * labelled well, is whole, and nothing goes under the earlier labels. */
static void check_label_refused(const char *dir, const char *mode, int err)
{
    struct outcome o;

    run_limits(dir, mode, NULL, &o, NULL);
    assert_int_equal(o.labels, err);
    assert_int_equal(o.window, err);
    assert_int_equal(o.bad_label, 1);
    assert_int_equal(o.samples, 100);
    assert_int_equal(o.delivered, 100);
    assert_int_equal(o.lost, 0);
    assert_int_equal(row_count(dir, "probe/short", "ok.range"), 100);
    assert_int_equal(report_rows(dir), 2);
    assert_int_equal(client_stat(dir, "errors.bad_label"), 1);
    assert_int_equal(client_stat(dir, "rejected"), 0);
}

static void test_label_too_long(void **state)
{
    check_label_refused(((struct harness_daemon *)*state)->dir, "label-long",
                        -ENAMETOOLONG);
}

static void test_label_empty(void **state)
{
    check_label_refused(((struct harness_daemon *)*state)->dir,
                        "label-empty", -EINVAL);
}

static void test_operator_too_long(void **state)
{
    check_label_refused(((struct harness_daemon *)*state)->dir, "op-long",
                        -ENAMETOOLONG);
}

/* 100,000 distinct names at the top of the stack, then 100 ok.range: the
 * 16,384 root contexts fill, the rest are kept under (contexts full), and
 * every flat row is exact. */
static void test_roots_full(void **state)
{
    struct harness_daemon *d = *state;
    struct outcome o;
    /* The names past the table, and ok.range once. */
    const unsigned long long over = 100000 - 16384 + 1;

    run_limits(d->dir, "roots", "100000", &o, NULL);
    assert_int_equal(o.flush, 0);
    assert_int_equal(o.samples, 100100);
    assert_int_equal(o.delivered, 100100);
    assert_int_equal(o.lost, 0);
    assert_int_equal(o.contexts_full, over);
    assert_int_equal(row_count(d->dir, "probe/ok", "ok.range"), 100);
    assert_int_equal(row_count(d->dir, "probe/ok", "step 0"), 1);
    assert_int_equal(row_count(d->dir, "probe/ok", "step 99999"), 1);
    assert_int_equal(client_stat(d->dir, "contexts_full"), over);
}

/* The sum of the inclusive counts of node `node` in the report, and the
 * events its table says were lost under it (*lost), and refused for the
 * memory budget in all (*memory). */
static unsigned long long node_total(const char *dir, const char *node,
                                     unsigned long long *lost,
                                     unsigned long long *memory)
{
    static const char key[] = "\"metric\":\"inclusive\",\"count\":";
    struct harness_run r;
    unsigned long long n = 0;
    const char *p;

    harness_ctl(dir, &r, "-t", "120000", "dump", "--node", node,
                (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("dump: %s", r.err);
    for (p = r.out; (p = strstr(p, key)) != NULL; p += sizeof key - 1)
        n += strtoull(p + sizeof key - 1, NULL, 10);
    harness_run_free(&r);
    harness_ctl(dir, &r, "-t", "120000", "dump", "--format", "table",
                "--node", node, "--range", "-", (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("dump: %s", r.err);
    *lost = *memory = 0;
    for (p = r.out; *p != '\0'; p = strchr(p, '\n') + 1) {
        unsigned long long v;
        char name[256];

        if (sscanf(p, "lost: %llu events of node %255[^\n]", &v, name) == 2
            && strcmp(name, node) == 0)
            *lost += v;
        if (sscanf(p, "memory budget: %llu ", &v) == 1)
            *memory = v;
        if (strchr(p, '\n') == NULL)
            break;
    }
    harness_run_free(&r);
    return n;
}

/* A daemon with a small memory budget and three clients of 16,000
 * distinct names each: what it refuses is counted lost under the node
 * ids, so that the report's counts plus its lost are what was sent, and
 * the table says what the budget refused. */
static void test_memory_budget(void **state)
{
    static const char *const extra[] = { "--max-memory", "2M", NULL };
    static const char *const nodes[] = { "node-a", "node-b", "node-c" };
    struct harness_daemon d = { { 0 }, 0 };
    unsigned long long refused = 0, memory = 0;
    char *stats;

    (void)state;
    harness_mkdtemp(d.dir, sizeof d.dir, "limits");
    harness_daemon_start_args(&d, extra);
    for (int i = 0; i < 3; i++) {
        struct outcome o;

        run_limits(d.dir, "names", "16000", &o, nodes[i]);
        assert_int_equal(o.samples, 16000);
        assert_int_equal(o.delivered + o.lost, 16000);
        refused += o.lost;
    }
    /* The budget refused some of it: the case at hand. */
    assert_true(refused > 0);
    for (int i = 0; i < 3; i++) {
        unsigned long long lost, n = node_total(d.dir, nodes[i], &lost,
                                                &memory);

        assert_int_equal(n + lost, 16000);
    }
    assert_int_equal(memory, refused);
    stats = harness_stats(d.dir);
    assert_int_equal(harness_stat(stats, "daemon.refused_memory_events"),
                     refused);
    assert_true(harness_stat(stats, "rejected.memory_budget") > 0);
    free(stats);
    harness_daemon_stop(&d);
}

/* A client killed after its window is named unfinished, with its node. */
static void test_killed_unfinished(void **state)
{
    struct harness_daemon *d = *state;
    char out[512], *argv[] = { (char *)limits_helper(), "hang", NULL };
    char *text, *stats, buf[256];
    pid_t pid;
    int n;

    snprintf(out, sizeof out, "%s/hang.out", d->dir);
    pid = harness_spawn(argv, d->dir, NULL, out);
    text = harness_wait_lines(out, "flushed", 1, 60);
    free(text);
    kill(pid, SIGKILL);
    harness_wait(pid, 30);
    stats = harness_stats(d->dir);
    n = harness_stat_client(stats, pid);
    assert_int_not_equal(n, 0);
    snprintf(buf, sizeof buf, "client.%d.unfinished", n);
    assert_int_equal(harness_stat(stats, buf), 1);
    snprintf(buf, sizeof buf, "client.%d.node", n);
    assert_string_equal(harness_stat_str(stats, buf, buf, sizeof buf),
                        "probe/hang");
    free(stats);
}

/* record says in one line on stderr what was refused, and exits 3 with
 * --strict; a clean session says nothing and exits 0. */
static void test_record_says(void **state)
{
    const char *ctl = harness_program("HOSTRANGECTL");
    char *bad[] = { (char *)ctl, "record", "--strict", "-o", "/dev/null",
                    "--", (char *)limits_helper(), "site-long", NULL };
    char *loose[] = { (char *)ctl, "record", "-o", "/dev/null", "--",
                      (char *)limits_helper(), "label-long", NULL };
    char *clean[] = { (char *)ctl, "record", "--strict", "-o", "/dev/null",
                      "--", (char *)limits_helper(), "names", "10", "n",
                      NULL };
    struct harness_run r;

    (void)state;
    harness_run(bad, NULL, 120, &r);
    assert_true(harness_exited(r.status, 3));
    assert_non_null(strstr(r.err, "hostrange: 101 scopes of range names "
                                  "empty or over 4096 bytes not collected"));
    assert_int_equal(strcmp(strchr(r.err, '\n'), "\n"), 0);
    harness_run_free(&r);
    harness_run(loose, NULL, 120, &r);
    assert_true(harness_exited(r.status, 0));
    assert_non_null(strstr(r.err, "hostrange: 1 window of refused labels "
                                  "not collected\n"));
    harness_run_free(&r);
    harness_run(clean, NULL, 120, &r);
    assert_true(harness_exited(r.status, 0));
    assert_string_equal(r.err, "");
    harness_run_free(&r);
}

/* record names a process killed before its final counters, with its node
 * ids, and --strict fails on it. */
static void test_record_names_killed(void **state)
{
    char script[8192], tmp[256];
    char *argv[] = { (char *)harness_program("HOSTRANGECTL"), "record",
                     "--strict", "-o", "/dev/null", "--", "/bin/sh", "-c",
                     script, NULL };
    struct harness_run r;

    (void)state;
    harness_mkdtemp(tmp, sizeof tmp, "limits-kill");
    snprintf(script, sizeof script,
             "'%s' hang > '%s/out' & "
             "until grep -q flushed '%s/out'; do sleep 0.05; done; "
             "kill -9 $! && wait $!; exit 0",
             limits_helper(), tmp, tmp);
    harness_run(argv, NULL, 120, &r);
    assert_true(harness_exited(r.status, 3));
    assert_non_null(strstr(r.err, "ended without its final counters "
                                  "(killed or crashed): its last events "
                                  "may be missing; node ids: probe/hang\n"));
    harness_run_free(&r);
    harness_rm_rf(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_site_too_long),
        HARNESS_DAEMON_TEST(test_site_empty),
        HARNESS_DAEMON_TEST(test_label_too_long),
        HARNESS_DAEMON_TEST(test_label_empty),
        HARNESS_DAEMON_TEST(test_operator_too_long),
        HARNESS_DAEMON_TEST(test_roots_full),
        HARNESS_DAEMON_TEST(test_killed_unfinished),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_record_says),
        cmocka_unit_test(test_record_names_killed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
