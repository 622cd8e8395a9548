/*
 * Refusals that must not harm a daemon already serving: while clients send
 * to a real hostranged keeping state, a second hostranged on the same
 * runtime directory, and another on the same state directory, are refused
 * with a one-line message; the first daemon keeps its sockets, its lock and
 * its state, and every batch of the clients is taken once. A state
 * directory of another user or writable by others is refused too (the
 * runtime directory's refusals are tested in test_daemon_service).
 */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
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

#include "proto/protocol.h"
#include "tests/lib/harness.h"

/* Runs hostranged with argv[1..]; expects exit status 1 and a one-line
 * error containing `want`. */
static void expect_refused(char *const argv[], const char *want)
{
    struct harness_run r;

    harness_run(argv, NULL, 60, &r);
    if (!harness_exited(r.status, 1) || strstr(r.err, want) == NULL)
        fail_msg("expected exit 1 and '%s'; got status %d: %s", want,
                 r.status, r.err);
    assert_non_null(strchr(r.err, '\n'));
    assert_true(strchr(r.err, '\n')[1] == '\0');
    harness_run_free(&r);
}

static int exists(const char *dir, const char *name)
{
    char p[600];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

static void test_second_daemon_while_serving(void **state)
{
    char rundir[256], statedir[256], other[256], pidtext[64], want[320];
    char out[3][300], prefix[3][64], *st, *rep, *rep2, *lock;
    const char *extra[] = { "--state-dir", statedir, NULL };
    char *same_run[] = { (char *)harness_program("HOSTRANGED"),
                         "--runtime-dir", rundir, NULL };
    char *same_state[] = { (char *)harness_program("HOSTRANGED"),
                           "--runtime-dir", other, "--state-dir", statedir,
                           NULL };
    struct harness_daemon d = { { 0 }, 0 };
    unsigned long long first_pid;
    pid_t pid[3];

    (void)state;
    harness_mkdtemp(rundir, sizeof rundir, "taken-run");
    harness_mkdtemp(statedir, sizeof statedir, "taken-state");
    harness_mkdtemp(other, sizeof other, "taken-other");
    snprintf(d.dir, sizeof d.dir, "%s", rundir);
    harness_daemon_start_args(&d, extra);
    st = harness_stats(rundir);
    first_pid = harness_stat(st, "daemon.pid");
    free(st);
    snprintf(pidtext, sizeof pidtext, "%llu", first_pid);

    for (int k = 0; k < 3; k++) {
        char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                         "-N", prefix[k], "-n", "3", "-c", "4000", "-r", "2",
                         "-p", NULL };
        snprintf(prefix[k], sizeof prefix[k], "tests/taken/client%d", k);
        snprintf(out[k], sizeof out[k], "%s.out%d", rundir, k);
        pid[k] = harness_spawn(argv, rundir, NULL, out[k]);
    }
    /* Refused while the clients send, each time with a clear reason. */
    snprintf(want, sizeof want, "another hostranged (pid %s) already "
             "serves %s", pidtext, rundir);
    for (int i = 0; i < 3; i++) {
        expect_refused(same_run, want);
        expect_refused(same_state, "another hostranged uses the state "
                                   "directory");
    }
    /* The first keeps its sockets and its lock. */
    assert_true(exists(rundir, HRP_INGEST_NAME));
    assert_true(exists(rundir, HRP_CONTROL_NAME));
    snprintf(want, sizeof want, "%s/%s", rundir, HRP_LOCK_NAME);
    lock = harness_read_file(want);
    assert_int_equal(strtoull(lock, NULL, 10), first_pid);
    free(lock);
    /* The refused one left nothing in its own runtime directory. */
    assert_false(exists(other, HRP_INGEST_NAME));
    assert_false(exists(other, HRP_LOCK_NAME));

    for (int k = 0; k < 3; k++) {
        struct harness_counters c;
        char *text;

        assert_true(harness_exited(harness_wait(pid[k], 300), 0));
        text = harness_read_file(out[k]);
        assert_int_equal(harness_counters(text, "flush=0", &c), 0);
        assert_int_equal(c.lost, 0);
        assert_int_equal(c.delivered, c.samples);
        free(text);
        unlink(out[k]);
    }
    st = harness_stats(rundir);
    assert_int_equal(harness_stat(st, "daemon.pid"), first_pid);
    assert_int_equal(harness_stat(st, "daemon.clients"), 3);
    assert_int_equal(harness_stat_rejected(st), 0);
    free(st);
    rep = harness_dump(rundir, "all");
    for (int k = 0; k < 3; k++) {
        for (int n = 0; n < 3; n++) {
            char row[400];
            snprintf(row, sizeof row,
                     "{\"nodeid\":\"%s::node[%d]\",\"operator\":\"synthetic\","
                     "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":"
                     "\"workload.outer\",\"metric\":\"self\",\"count\":4000,",
                     prefix[k], n);
            if (strstr(rep, row) == NULL)
                fail_msg("no row %s in:\n%s", row, rep);
        }
    }

    /* Its state is whole: after a SIGKILL and a restart, the same report. */
    assert_true(WIFSIGNALED(harness_daemon_signal(&d, SIGKILL)));
    harness_daemon_start_args(&d, extra);
    rep2 = harness_dump(rundir, "all");
    assert_string_equal(rep2, rep);
    free(rep);
    free(rep2);
    harness_daemon_stop(&d);
    harness_rm_rf(statedir);
    harness_rm_rf(other);
}

static void test_state_dir_refusals(void **state)
{
    char rundir[256], statedir[256];
    char *argv[] = { (char *)harness_program("HOSTRANGED"), "--runtime-dir",
                     rundir, "--state-dir", statedir, NULL };

    (void)state;
    harness_mkdtemp(rundir, sizeof rundir, "refuse-run");
    harness_mkdtemp(statedir, sizeof statedir, "refuse-state");
    assert_int_equal(chmod(statedir, 0777), 0);
    expect_refused(argv, "has mode 0777: it must not be group- or "
                         "world-writable; refusing to use it");
    assert_int_equal(chmod(statedir, 0720), 0);
    expect_refused(argv, "has mode 0720");
    assert_int_equal(chmod(statedir, 0700), 0);
    if (geteuid() == 0) {
        char want[400];
        assert_int_equal(chown(statedir, 65534, (gid_t)-1), 0);
        snprintf(want, sizeof want, "state directory %s is owned by uid "
                 "65534, not by this user (uid 0)", statedir);
        expect_refused(argv, want);
        assert_int_equal(chown(statedir, 0, (gid_t)-1), 0);
    }
    /* Nothing was written in either directory. */
    assert_false(exists(statedir, "lock"));
    assert_false(exists(rundir, HRP_INGEST_NAME));
    assert_false(exists(rundir, HRP_LOCK_NAME));
    harness_rm_rf(rundir);
    harness_rm_rf(statedir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_daemon_while_serving),
        cmocka_unit_test(test_state_dir_refusals),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
