/*
 * Integration: a real hostranged on a private runtime directory, the real
 * instrumented workload helper reporting into it, and hostrangectl reading the
 * report back.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

static const char *const ref_fields[10] = {
    "nodeid", "operator", "backend", "phase", "range",
    "metric", "count",    "unit",    "mean",  "median",
};

static double num(const struct flat *f, const char *key)
{
    return strtod(flat_get(f, key), NULL);
}

static void run_workload(const char *dir, const char *calls, const char *code,
                         struct harness_run *r)
{
    char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                     "-c", (char *)calls, "-x", (char *)code, NULL };

    harness_run(argv, dir, 120, r);
}

/* Finds the row for (node, phase, range, metric); fails when absent. */
static const struct flat *find(const struct flat *rows, int n,
                               const char *node, const char *phase,
                               const char *range, const char *metric)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"), node) == 0 &&
            strcmp(flat_get(&rows[i], "phase"), phase) == 0 &&
            strcmp(flat_get(&rows[i], "range"), range) == 0 &&
            strcmp(flat_get(&rows[i], "metric"), metric) == 0)
            return &rows[i];
    }
    fail_msg("no row %s %s %s %s", node, phase, range, metric);
    return NULL;
}

static void test_report_of_nested_ranges(void **state)
{
    struct harness_daemon *d = *state;
    struct harness_run w, r;
    static struct flat rows[64];
    double timer_ns, tol;
    int n;

    run_workload(d->dir, "1000", "0", &w);
    assert_true(harness_exited(w.status, 0));
    assert_int_equal(sscanf(w.out, "timer_ns=%lf", &timer_ns), 1);
    harness_run_free(&w);

    harness_ctl(d->dir, &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    n = flat_parse_rows(r.out, rows, 64);
    /* Per node: cold then warm; outer (entered first) before inner;
     * inclusive before self; the records (end_to_end, made under the warm
     * labels still in force) last. */
    assert_int_equal(n, 2 * 9);
    for (int i = 0; i < n; i++) {
        assert_int_equal(rows[i].n, 10);
        for (int f = 0; f < 10; f++)
            assert_string_equal(rows[i].key[f], ref_fields[f]);
        assert_string_equal(flat_get(&rows[i], "operator"), "synthetic");
        assert_string_equal(flat_get(&rows[i], "backend"), "cpu");
        assert_string_equal(flat_get(&rows[i], "unit"), "ns");
    }
    for (int node = 0; node < 2; node++) {
        static const char *const expect[9][3] = {
            { "cold", "workload.outer", "inclusive" },
            { "cold", "workload.outer", "self" },
            { "cold", "workload.inner", "inclusive" },
            { "cold", "workload.inner", "self" },
            { "warm", "workload.outer", "inclusive" },
            { "warm", "workload.outer", "self" },
            { "warm", "workload.inner", "inclusive" },
            { "warm", "workload.inner", "self" },
            { "warm", "end_to_end", "inclusive" },
        };
        char name[64];

        snprintf(name, sizeof name, "tests/workload::node[%d]", node);
        for (int i = 0; i < 9; i++) {
            const struct flat *row = &rows[node * 9 + i];
            const char *count = i < 4 ? "1" : i < 8 ? "1000" : "10";

            assert_string_equal(flat_get(row, "nodeid"), name);
            assert_string_equal(flat_get(row, "phase"), expect[i][0]);
            assert_string_equal(flat_get(row, "range"), expect[i][1]);
            assert_string_equal(flat_get(row, "metric"), expect[i][2]);
            assert_string_equal(flat_get(row, "count"), count);
        }
    }

    /* The numbers: tolerance from the measured cost of a clock read. */
    tol = 50.0 * timer_ns + 200.0;
    for (int node = 0; node < 2; node++) {
        char name[64];
        const struct flat *oi, *os, *ii, *is, *e2e;

        snprintf(name, sizeof name, "tests/workload::node[%d]", node);
        oi = find(rows, n, name, "warm", "workload.outer", "inclusive");
        os = find(rows, n, name, "warm", "workload.outer", "self");
        ii = find(rows, n, name, "warm", "workload.inner", "inclusive");
        is = find(rows, n, name, "warm", "workload.inner", "self");
        e2e = find(rows, n, name, "warm", "end_to_end", "inclusive");
        assert_true(num(oi, "median") >= num(os, "median"));
        assert_true(num(oi, "mean") >= num(os, "mean"));
        assert_true(num(ii, "median") >= num(is, "median"));
        /* No child: inner's self is its inclusive time. */
        assert_true(num(ii, "median") == num(is, "median"));
        assert_true(num(ii, "median") >= 5000.0);
        assert_true(num(ii, "median") <= 5000.0 + tol);
        assert_true(num(oi, "median") >= 20000.0);
        assert_true(num(oi, "median") <= 20000.0 + tol);
        if (!(num(os, "median") >= num(oi, "median") - num(ii, "median") - tol &&
              num(os, "median") <= num(oi, "median") - num(ii, "median") + tol))
            fail_msg("outer self %.1f vs outer %.1f - inner %.1f (tol %.1f)",
                     num(os, "median"), num(oi, "median"), num(ii, "median"),
                     tol);
        /* Records 20000..20009: mean and median 20004.5. */
        assert_string_equal(flat_get(e2e, "mean"), "20004.5");
        assert_string_equal(flat_get(e2e, "median"), "20004.5");
    }
    harness_run_free(&r);

    /* The client's counters reached the daemon: 2 x (1 + 1000) x 2 range
     * samples + 2 x 10 records, nothing lost, no error. */
    harness_ctl(d->dir, &r, "stats", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    assert_non_null(strstr(r.out, "daemon.clients 1\n"));
    assert_non_null(strstr(r.out, "client.1.events 4024\n"));
    assert_non_null(strstr(r.out, "client.1.lost_events 0\n"));
    assert_non_null(strstr(r.out, "client.1.duplicates 0\n"));
    assert_non_null(strstr(r.out, "client.1.errors.out_of_order 0\n"));
    assert_non_null(strstr(r.out, "rejected.malformed 0\n"));
    harness_run_free(&r);
}

static void test_two_processes_merge(void **state)
{
    struct harness_daemon *d = *state;
    struct harness_run w, r;
    static struct flat rows[64];
    int n;

    run_workload(d->dir, "100", "0", &w);
    harness_run_free(&w);
    run_workload(d->dir, "50", "0", &w);
    harness_run_free(&w);
    harness_ctl(d->dir, &r, "dump", "--node", "*node\\[1\\]", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    n = flat_parse_rows(r.out, rows, 64);
    assert_int_equal(n, 9);
    assert_string_equal(
        flat_get(find(rows, n, "tests/workload::node[1]", "warm",
                      "workload.inner", "self"), "count"), "150");
    assert_string_equal(
        flat_get(find(rows, n, "tests/workload::node[1]", "cold",
                      "workload.outer", "inclusive"), "count"), "2");
    harness_run_free(&r);

    harness_ctl(d->dir, &r, "reset", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    harness_run_free(&r);
    harness_ctl(d->dir, &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    assert_string_equal(r.out, "");
    harness_run_free(&r);
}

static void test_ctl_unreachable(void **state)
{
    struct harness_run r;

    (void)state;
    harness_ctl("/nonexistent/hostrange-dir", &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 1));
    assert_non_null(strstr(r.err, "/nonexistent/hostrange-dir"));
    assert_non_null(strstr(r.err, "does not exist"));
    /* One line. */
    assert_non_null(strchr(r.err, '\n'));
    assert_true(strchr(r.err, '\n')[1] == '\0');
    harness_run_free(&r);

    harness_ctl("/nonexistent/hostrange-dir", &r, "dump", "--bogus",
                (char *)NULL);
    assert_true(harness_exited(r.status, 2));
    harness_run_free(&r);
}

/*
 * Runs hostrangectl -r dir ping as a user who may not open the daemon's
 * socket: as root, in a child that becomes nobody (65534), for whom the
 * runtime directory (mode 0700) is closed; otherwise with the socket's mode
 * taken away for the time of the call. Returns the exit status and stderr
 * in err; -1 when the program cannot be run as that user.
 */
static int ctl_denied(const char *dir, char *err, size_t errlen)
{
    const char *ctl = harness_program("HOSTRANGECTL");
    char sock[300];
    int fd[2], status;
    ssize_t n, got = 0;
    pid_t pid;

    snprintf(sock, sizeof sock, "%s/control", dir);
    if (geteuid() != 0)
        assert_int_equal(chmod(sock, 0), 0);
    assert_int_equal(pipe(fd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 ||
                               setgid(65534) != 0 || setuid(65534) != 0))
            _exit(126);
        execl(ctl, ctl, "-r", dir, "ping", (char *)NULL);
        _exit(errno == EACCES ? 126 : 127);
    }
    close(fd[1]);
    while (got < (ssize_t)errlen - 1 &&
           (n = read(fd[0], err + got, errlen - 1 - (size_t)got)) > 0)
        got += n;
    err[got] = '\0';
    close(fd[0]);
    status = harness_wait(pid, 60);
    if (geteuid() != 0)
        assert_int_equal(chmod(sock, 0600), 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
        return -1;
    return status;
}

/* A socket that exists but is not this user's to open is told apart from
 * an absent daemon, with the ways out named. */
static void test_ctl_permission_denied(void **state)
{
    struct harness_daemon *d = *state;
    char err[4096];
    int status = ctl_denied(d->dir, err, sizeof err);

    if (status == -1)
        skip(); /* the build tree cannot be run by another user */
    assert_true(harness_exited(status, 1));
    assert_non_null(strstr(err, d->dir));
    assert_non_null(strstr(err, "does not let this user connect"));
    assert_non_null(strstr(err, "Permission denied"));
    assert_non_null(strstr(err, "--group"));
    assert_non_null(strstr(err, "runtime directory"));
    assert_null(strstr(err, "does not exist"));
    assert_non_null(strchr(err, '\n'));
    assert_true(strchr(err, '\n')[1] == '\0');
}

static void test_second_daemon_refused(void **state)
{
    struct harness_daemon *d = *state;
    char *argv[] = { (char *)harness_program("HOSTRANGED"), "--runtime-dir",
                     d->dir, NULL };
    struct harness_run r;

    harness_run(argv, NULL, 30, &r);
    assert_true(harness_exited(r.status, 1));
    assert_non_null(strstr(r.err, "another hostranged"));
    harness_run_free(&r);
    harness_ctl(d->dir, &r, "ping", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    harness_run_free(&r);
}

/* The default of HOSTRANGE_FLUSH_TIMEOUT_MS (hostrange(3)): the longest a
 * program's exit waits for a daemon. */
#define DEFAULT_FLUSH_TIMEOUT_MS 2000ull

/* A program that never reached a daemon does not wait for one at exit:
 * the recorder's exit, with the default timeout, waits under a quarter of
 * it (an exit that waited the whole timeout fails). */
static void test_no_daemon_does_not_hang(void **state)
{
    char *argv[] = { (char *)harness_recorder(), "-N",
                     "tests/integration::alone", "-R", "-n", "1000", NULL };
    struct harness_run w;
    unsigned long long wait_ns;
    char dir[256];

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "empty");
    unsetenv("HOSTRANGE_FLUSH_TIMEOUT_MS");
    harness_run(argv, dir, 120, &w);
    assert_true(harness_exited(w.status, 0));
    wait_ns = harness_last_field(w.out, "final", "exit_wait_ns");
    print_message("no daemon: the exit waited %.1f ms (default timeout "
                  "%llu ms)\n", (double)wait_ns / 1e6,
                  DEFAULT_FLUSH_TIMEOUT_MS);
    assert_true(wait_ns < DEFAULT_FLUSH_TIMEOUT_MS * 1000000ull / 4);
    harness_run_free(&w);
    harness_rm_rf(dir);
}

static void test_record(void **state)
{
    char dir[256], out[300];
    char *argv[] = { (char *)harness_program("HOSTRANGECTL"), "record", "-o",
                     out, "--",
                     (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"), "-c",
                     "10", "-x", "3", NULL };
    struct harness_run r;
    struct stat st;

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "record-out");
    snprintf(out, sizeof out, "%s/report.jsonl", dir);
    harness_run(argv, NULL, 120, &r);
    /* record exits with the command's status. */
    assert_true(harness_exited(r.status, 3));
    harness_run_free(&r);
    assert_int_equal(stat(out, &st), 0);
    {
        FILE *f = fopen(out, "r");
        char line[4096];
        int lines = 0;
        assert_non_null(f);
        while (fgets(line, sizeof line, f) != NULL)
            lines++;
        fclose(f);
        assert_int_equal(lines, 18);
    }
    unlink(out);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HARNESS_DAEMON_TEST(test_report_of_nested_ranges),
        HARNESS_DAEMON_TEST(test_two_processes_merge),
        HARNESS_DAEMON_TEST(test_second_daemon_refused),
        cmocka_unit_test(test_ctl_unreachable),
        HARNESS_DAEMON_TEST(test_ctl_permission_denied),
        cmocka_unit_test(test_no_daemon_does_not_hang),
        cmocka_unit_test(test_record),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
