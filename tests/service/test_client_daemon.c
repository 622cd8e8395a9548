/*
 * The client library against a real hostranged: threads, fork, phases by
 * calling path and marks, the exit flush, and a daemon that appears only after samples were taken (with a
 * small buffer, so that some are dropped and counted).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

/* Runs the workload with extra arguments (NULL-terminated). */
static void workload(const char *dir, struct harness_run *r, ...)
{
    char *argv[32];
    int n = 0;
    va_list ap;

    argv[n++] = (char *)harness_program("HOSTRANGE_TEST_WORKLOAD");
    va_start(ap, r);
    while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    harness_run(argv, dir, 300, r);
    if (!harness_exited(r->status, 0))
        fail_msg("workload failed: %s", r->err);
}

/* Reads the dump into rows; returns their number. */
static int dump(const char *dir, struct flat *rows, int max)
{
    struct harness_run r;
    int n;

    harness_ctl(dir, &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    n = flat_parse_rows(r.out, rows, max);
    harness_run_free(&r);
    return n;
}

/* The count of (node, phase, range, inclusive), or -1 when absent. */
static long count_of(const struct flat *rows, int n, const char *node,
                     const char *phase, const char *range)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"), node) == 0 &&
            strcmp(flat_get(&rows[i], "phase"), phase) == 0 &&
            strcmp(flat_get(&rows[i], "range"), range) == 0 &&
            strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
            return atol(flat_get(&rows[i], "count"));
    }
    return -1;
}

static unsigned long long stat_value(const char *dir, const char *key)
{
    struct harness_run r;
    char pat[128];
    const char *p;
    unsigned long long v;

    harness_ctl(dir, &r, "stats", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    snprintf(pat, sizeof pat, "\n%s ", key);
    p = strstr(r.out, pat);
    if (p == NULL)
        fail_msg("no %s in stats:\n%s", key, r.out);
    v = strtoull(p + strlen(pat), NULL, 10);
    harness_run_free(&r);
    return v;
}

static void test_threads(void **state)
{
    struct harness_daemon *d = *state;
    static struct flat rows[64];
    struct harness_run r;
    int n;

    workload(d->dir, &r, "-n", "1", "-T", "4", "-c", "1000", "-r", "0",
             NULL);
    harness_run_free(&r);
    n = dump(d->dir, rows, 64);
    assert_int_equal(n, 8);
    assert_int_equal(count_of(rows, n, "tests/workload::node[0]", "warm",
                              "workload.outer"), 1000);
    assert_int_equal(count_of(rows, n, "tests/workload::node[0]", "warm",
                              "workload.inner"), 1000);
    assert_int_equal(count_of(rows, n, "tests/workload::node[0]", "cold",
                              "workload.inner"), 1);
    assert_int_equal(stat_value(d->dir, "client.1.errors.out_of_order"), 0);
    assert_int_equal(stat_value(d->dir, "client.1.errors.foreign_thread"), 0);
}

/* stats shows each client's clock, its clock path, how its reads are
 * ordered and its step: the TSC's on the fast path (plain reads) and on
 * the ordered one (ordered by fences; a step of a few ns at most on any
 * TSC this runs on), and CLOCK_MONOTONIC's (1 ns, read through the vDSO),
 * with the two words of HOSTRANGE_CLOCK together. */
static void test_clock_stats(void **state)
{
    struct harness_daemon *d = *state;
    struct harness_run r;
    char *stats, buf[64];
    const char *clock;
    double step;

    workload(d->dir, &r, "-n", "1", "-c", "10", NULL);
    harness_run_free(&r);
    setenv("HOSTRANGE_CLOCK", "ordered", 1);
    workload(d->dir, &r, "-n", "1", "-c", "10", NULL);
    harness_run_free(&r);
    setenv("HOSTRANGE_CLOCK", "monotonic,ordered", 1);
    workload(d->dir, &r, "-n", "1", "-c", "10", NULL);
    unsetenv("HOSTRANGE_CLOCK");
    harness_run_free(&r);
    stats = harness_stats(d->dir);
    assert_string_equal(harness_stat_str(stats, "client.1.clock_path", buf,
                                         sizeof buf), "fast");
    assert_string_equal(harness_stat_str(stats, "client.2.clock_path", buf,
                                         sizeof buf), "ordered");
    clock = harness_stat_str(stats, "client.1.clock", buf, sizeof buf);
    if (strcmp(clock, "tsc") == 0) {
        assert_string_equal(harness_stat_str(stats, "client.1.clock_order",
                                             buf, sizeof buf),
                            "rdtsc");
        assert_string_equal(harness_stat_str(stats, "client.2.clock_order",
                                             buf, sizeof buf),
                            "rdtsc;lfence..lfence;rdtsc");
        for (int i = 1; i <= 2; i++) {
            char key[64];

            snprintf(key, sizeof key, "client.%d.clock_step_ns", i);
            step = strtod(harness_stat_str(stats, key, buf, sizeof buf),
                          NULL);
            assert_true(step > 0 && step <= 100);
        }
    } else {
        assert_string_equal(clock, "monotonic");
    }
    assert_string_equal(harness_stat_str(stats, "client.3.clock", buf,
                                         sizeof buf), "monotonic");
    assert_string_equal(harness_stat_str(stats, "client.3.clock_path", buf,
                                         sizeof buf), "ordered");
    assert_string_equal(harness_stat_str(stats, "client.3.clock_order", buf,
                                         sizeof buf), "vdso");
    step = strtod(harness_stat_str(stats, "client.3.clock_step_ns", buf,
                                   sizeof buf), NULL);
    assert_true(step >= 1 && step <= 1000);
    free(stats);
}

static void test_fork(void **state)
{
    struct harness_daemon *d = *state;
    static struct flat rows[64];
    struct harness_run r;
    int n;

    workload(d->dir, &r, "-F", "-c", "200", NULL);
    harness_run_free(&r);
    n = dump(d->dir, rows, 64);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-a", "warm",
                              "workload.outer"), 200);
    /* The window open at the fork: 200 calls in each process; the range
     * open at the fork counts once, for the parent. */
    assert_int_equal(count_of(rows, n, "tests/workload::fork-d", "warm",
                              "workload.outer"), 400);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-d", "warm",
                              "workload.forked"), 1);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-b", "warm",
                              "workload.inner"), 200);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-c", "warm",
                              "workload.inner"), 200);
    /* Parent and child are two clients, each with its own identity. */
    assert_int_equal(stat_value(d->dir, "daemon.clients"), 2);
    assert_int_equal(stat_value(d->dir, "client.1.duplicates"), 0);
    assert_int_equal(stat_value(d->dir, "client.2.duplicates"), 0);
}

/* The client's counters (hr_counters) that the workload prints. */
struct counts {
    unsigned long long samples, delivered, lost, batches_sent, out_of_order,
        label_in_window;
};

/* The counters of line `who` of the workload's output (-K). */
static struct counts counters_of(const char *out, const char *who)
{
    struct counts c;
    char pat[32];
    const char *p;

    snprintf(pat, sizeof pat, "\n%s samples=", who);
    p = strstr(out, pat);
    if (p == NULL)
        fail_msg("no line %s in:\n%s", who, out);
    if (sscanf(p + 1 + strlen(who), " samples=%llu delivered=%llu lost=%llu "
               "batches=%llu out_of_order=%llu label_in_window=%llu",
               &c.samples, &c.delivered, &c.lost, &c.batches_sent,
               &c.out_of_order, &c.label_in_window) != 6)
        fail_msg("bad line %s in:\n%s", who, out);
    return c;
}

/* A fork inside an open window, the parent's last samples unsent and its
 * counters set: the child starts with every counter at 0 and ships only
 * its own samples; the parent loses nothing and keeps its counts, which
 * reach the daemon once (marks, errors). */
static void test_fork_clean(void **state)
{
    struct harness_daemon *d = *state;
    static struct flat rows[64];
    struct harness_run r;
    struct counts before, parent, child, pend, cend;
    int n;

    workload(d->dir, &r, "-K", "-c", "300", NULL);
    before = counters_of(r.out, "before");
    parent = counters_of(r.out, "parent");
    child = counters_of(r.out, "child");
    pend = counters_of(r.out, "parent-end");
    cend = counters_of(r.out, "child-end");
    harness_run_free(&r);
    /* 300 calls of two ranges and the range ended out of order. */
    assert_int_equal(before.samples, 601);
    assert_true(before.delivered < before.samples); /* some were unsent */
    assert_int_equal(before.out_of_order, 1);
    assert_int_equal(before.label_in_window, 1);
    /* The child starts clean. */
    assert_int_equal(child.samples, 0);
    assert_int_equal(child.delivered, 0);
    assert_int_equal(child.lost, 0);
    assert_int_equal(child.batches_sent, 0);
    assert_int_equal(child.out_of_order, 0);
    assert_int_equal(child.label_in_window, 0);
    /* and ships its own samples only. */
    assert_int_equal(cend.samples, 600);
    assert_int_equal(cend.delivered, 600);
    assert_int_equal(cend.lost, 0);
    assert_int_equal(cend.out_of_order, 0);
    /* The parent keeps its counters across the fork and delivers all. */
    assert_int_equal(parent.samples, before.samples);
    assert_int_equal(parent.out_of_order, 1);
    assert_int_equal(parent.label_in_window, 1);
    assert_true(parent.delivered >= before.delivered);
    assert_int_equal(pend.samples, 601);
    assert_int_equal(pend.delivered, 601);
    assert_int_equal(pend.lost, 0);
    /* The daemon has each sample once, and the counts once. */
    n = dump(d->dir, rows, 64);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-e", "warm",
                              "workload.outer"), 600);
    assert_int_equal(count_of(rows, n, "tests/workload::fork-e", "warm",
                              "workload.order"), 1);
    assert_int_equal(stat_value(d->dir, "daemon.clients"), 2);
    assert_int_equal(stat_value(d->dir, "client.1.marks") +
                     stat_value(d->dir, "client.2.marks"), 5);
    assert_int_equal(stat_value(d->dir, "client.1.errors.out_of_order") +
                     stat_value(d->dir, "client.2.errors.out_of_order"), 1);
    assert_int_equal(stat_value(d->dir, "client.1.errors.label_in_window") +
                     stat_value(d->dir, "client.2.errors.label_in_window"),
                     1);
    assert_int_equal(stat_value(d->dir, "client.1.duplicates") +
                     stat_value(d->dir, "client.2.duplicates"), 0);
}

/* HR_PHASE_BY_PATH: each calling path's first sample in the process is
 * cold, the later ones warm, whichever thread and window they come from;
 * records likewise. Marks reach stats. */
static void test_phase_by_path(void **state)
{
    struct harness_daemon *d = *state;
    static struct flat rows[64];
    struct harness_run r;
    int n;

    workload(d->dir, &r, "-P", "-n", "2", "-T", "3", "-c", "300", "-r", "4",
             NULL);
    harness_run_free(&r);
    n = dump(d->dir, rows, 64);
    for (int i = 0; i < 2; i++) {
        char node[64];

        snprintf(node, sizeof node, "tests/workload::node[%d]", i);
        /* The paths were first taken under node[0]. */
        assert_int_equal(count_of(rows, n, node, "cold", "workload.outer"),
                         i == 0 ? 1 : -1);
        assert_int_equal(count_of(rows, n, node, "cold", "workload.inner"),
                         i == 0 ? 1 : -1);
        assert_int_equal(count_of(rows, n, node, "warm", "workload.outer"),
                         i == 0 ? 300 : 301);
        assert_int_equal(count_of(rows, n, node, "warm", "workload.inner"),
                         i == 0 ? 300 : 301);
        assert_int_equal(count_of(rows, n, node, "cold", "end_to_end"),
                         i == 0 ? 1 : -1);
        assert_int_equal(count_of(rows, n, node, "warm", "end_to_end"),
                         i == 0 ? 3 : 4);
    }
    assert_int_equal(stat_value(d->dir, "client.1.marks"), 6);
    assert_int_equal(stat_value(d->dir, "client.1.errors.label_in_window"),
                     0);
}

static void test_exit_flush(void **state)
{
    struct harness_daemon *d = *state;
    static struct flat rows[64];
    struct harness_run r;
    int n;

    /* One cold call and one record, then return from main at once. */
    workload(d->dir, &r, "-n", "1", "-c", "0", "-r", "1", NULL);
    harness_run_free(&r);
    n = dump(d->dir, rows, 64);
    assert_int_equal(count_of(rows, n, "tests/workload::node[0]", "cold",
                              "workload.outer"), 1);
    assert_int_equal(count_of(rows, n, "tests/workload::node[0]", "warm",
                              "end_to_end"), 1);
    assert_int_equal(stat_value(d->dir, "client.1.lost_events"), 0);
}

static void test_late_daemon(void **state)
{
    char dir[200];
    char wait_file[256], ready[300], out[300];
    char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                     "-c", "400000", "-r", "0", "-p", "-w", wait_file,
                     NULL };
    struct harness_daemon d = { { 0 }, 0 };
    unsigned long long samples, delivered, lost, sum = 0;
    static struct flat rows[64];
    struct stat st;
    FILE *f;
    char text[4096] = "";
    int rc, n, status;
    pid_t pid;

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "late");
    snprintf(wait_file, sizeof wait_file, "%s.go", dir);
    snprintf(ready, sizeof ready, "%s.ready", wait_file);
    snprintf(out, sizeof out, "%s.out", dir);
    /* Node 0 with no daemon and a 1 MiB buffer: more than fits. */
    pid = harness_spawn(argv, dir, "HOSTRANGE_BUFFER_MB=1", out);
    /* Its 400,000 calls take a minute or more under valgrind on a busy
     * machine: it is waited for as long as for its exit (300 s). */
    for (int i = 0; i < (harness_valgrind() ? 30000 : 6000) &&
                    stat(ready, &st) != 0; i++)
        usleep(10000);
    assert_int_equal(stat(ready, &st), 0);
    /* The daemon appears; node 1 is delivered. */
    snprintf(d.dir, sizeof d.dir, "%s", dir);
    d.pid = harness_daemon_spawn(dir);
    {
        struct harness_run r;
        harness_ctl(dir, &r, "ping", "--wait", "10000", (char *)NULL);
        assert_true(harness_exited(r.status, 0));
        harness_run_free(&r);
    }
    f = fopen(wait_file, "w");
    assert_non_null(f);
    fclose(f);
    status = harness_wait(pid, 300);
    assert_true(harness_exited(status, 0));
    f = fopen(out, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "flush=0 "));
    assert_int_equal(sscanf(strstr(text, "flush="),
                            "flush=%d samples=%llu delivered=%llu lost=%llu",
                            &rc, &samples, &delivered, &lost), 4);
    /* 2 x (1 + 400000) x 2 range samples (the profiler's own stalls are
     * not samples). About 3 bytes each on the wire: node 0's do not fit in
     * the 1 MiB buffer. */
    assert_int_equal(samples, 1600004);
    assert_true(lost > 0);
    assert_int_equal(delivered + lost, samples);
    /* The daemon holds exactly what was delivered, and knows the loss. */
    n = dump(dir, rows, 64);
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
            sum += strtoull(flat_get(&rows[i], "count"), NULL, 10);
    }
    if (sum != delivered)
        fail_msg("the report holds %llu samples in %d rows, the client had "
                 "%llu delivered", sum, n, delivered);
    assert_int_equal(stat_value(dir, "client.1.events"), delivered);
    assert_int_equal(stat_value(dir, "client.1.lost_events"), lost);
    harness_daemon_stop(&d);
    unlink(wait_file);
    unlink(ready);
    unlink(out);
}

/* Reads `flush=F samples=S delivered=D lost=L` from a workload's output. */
static void read_counters(const char *path, unsigned long long *samples,
                          unsigned long long *delivered,
                          unsigned long long *lost)
{
    char text[4096];
    const char *p;
    FILE *f = fopen(path, "r");
    int rc;

    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    p = strstr(text, "flush=");
    if (p == NULL ||
        sscanf(p, "flush=%d samples=%llu delivered=%llu lost=%llu", &rc,
               samples, delivered, lost) != 4)
        fail_msg("no counters in the workload's output: %s", text);
    assert_int_equal(rc, 0);
}

/*
 * Four clients send while the daemon, keeping state in a state directory,
 * is killed with SIGKILL and started again on the same directories. Every
 * acknowledged batch is in the report exactly once, and for every client
 * delivered + lost = sent.
 */
static void test_daemon_killed_and_restarted(void **state)
{
    char rundir[200], statedir[200];
    const char *extra[] = { "--state-dir", statedir, NULL };
    struct harness_daemon d;
    static struct flat rows[256];
    char out[4][300], prefix[4][64], cmd[400];
    pid_t pid[4];
    int n;

    (void)state;
    harness_mkdtemp(rundir, sizeof rundir, "restart");
    harness_mkdtemp(statedir, sizeof statedir, "state");
    memset(&d, 0, sizeof d);
    snprintf(d.dir, sizeof d.dir, "%s", rundir);
    harness_daemon_start_args(&d, extra);
    for (int k = 0; k < 4; k++) {
        char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                         "-N", prefix[k], "-n", "3", "-c", "20000", "-r",
                         "0", "-p", NULL };
        snprintf(prefix[k], sizeof prefix[k], "tests/restart/client%d", k);
        snprintf(out[k], sizeof out[k], "%s.out%d", rundir, k);
        pid[k] = harness_spawn(argv, rundir, NULL, out[k]);
    }
    usleep(300000);
    assert_true(harness_daemon_signal(&d, SIGKILL) != 0);
    /* The clients were still sending: otherwise this proves nothing. */
    for (int k = 0; k < 4; k++)
        assert_int_equal(waitpid(pid[k], NULL, WNOHANG), 0);
    usleep(200000);
    harness_daemon_start_args(&d, extra);
    for (int k = 0; k < 4; k++)
        assert_true(harness_exited(harness_wait(pid[k], 300), 0));

    n = dump(rundir, rows, 256);
    for (int k = 0; k < 4; k++) {
        unsigned long long samples, delivered, lost, sum = 0;
        size_t plen = strlen(prefix[k]);

        read_counters(out[k], &samples, &delivered, &lost);
        assert_true(samples >= 3 * 20001 * 2);
        assert_int_equal(delivered + lost, samples);
        for (int i = 0; i < n; i++) {
            if (strncmp(flat_get(&rows[i], "nodeid"), prefix[k], plen) == 0 &&
                strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
                sum += strtoull(flat_get(&rows[i], "count"), NULL, 10);
        }
        if (sum != delivered)
            fail_msg("client %d: %llu acknowledged, %llu in the report", k,
                     delivered, sum);
        if (lost == 0) {
            char node[128];
            snprintf(node, sizeof node, "%s::node[2]", prefix[k]);
            assert_int_equal(count_of(rows, n, node, "warm",
                                      "workload.inner"), 20000);
        }
        unlink(out[k]);
    }
    harness_daemon_stop(&d);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", statedir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_threads),
        HARNESS_DAEMON_TEST(test_clock_stats),
        HARNESS_DAEMON_TEST(test_fork),
        HARNESS_DAEMON_TEST(test_fork_clean),
        HARNESS_DAEMON_TEST(test_phase_by_path),
        HARNESS_DAEMON_TEST(test_exit_flush),
        cmocka_unit_test(test_late_daemon),
        cmocka_unit_test(test_daemon_killed_and_restarted),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
