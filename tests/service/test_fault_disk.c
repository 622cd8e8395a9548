/*
 * A state directory that cannot be written, with a real hostranged keeping
 * state and real clients sending:
 *
 * - the daemon's file size limit (RLIMIT_FSIZE, lowered while it runs):
 *   journal writes fail with EFBIG;
 * - a full file system (a small tmpfs, filled; needs root and mount);
 * - a read-only one (a tmpfs mounted read-only, as root; for other users a
 *   directory of mode 0500), from the start.
 *
 * In each case the daemon says so (its log and `stats`), keeps serving what
 * it holds, answers the batches it cannot journal RETRY without taking
 * them (so the clients keep them), and takes them all, exactly once, when
 * the directory can be written again; after a SIGKILL and a restart on the
 * same directory the report is the same: all of it was journaled.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness.h"

enum fault { FAULT_FSIZE, FAULT_FULL, FAULT_READONLY };

struct scenario {
    enum fault fault;
    char top[256];     /* holds everything; a tmpfs mount point or not */
    char rundir[300];
    char statedir[300];
    char log[300];
    int mounted;
    struct harness_daemon d;
};

static void unmount_top(struct scenario *s)
{
    if (s->mounted) {
        if (umount2(s->top, MNT_DETACH) != 0)
            fprintf(stderr, "cannot unmount %s: %s\n", s->top,
                    strerror(errno));
        s->mounted = 0;
    }
}

static int teardown(void **state)
{
    struct scenario *s = *state;

    if (s == NULL)
        return 0;
    if (s->d.pid > 0)
        harness_daemon_signal(&s->d, SIGKILL);
    s->d.dir[0] = '\0';
    if (s->statedir[0] != '\0')
        chmod(s->statedir, 0700);
    harness_rm_rf(s->rundir);
    unlink(s->log);
    unmount_top(s);
    harness_rm_rf(s->top);
    free(s);
    return 0;
}

/* Mounts a small tmpfs on s->top; skips the test when that is not allowed
 * (it needs root, and a kernel and container that let it). */
static void mount_tmpfs(struct scenario *s, int read_only)
{
    if (geteuid() != 0)
        skip();
    if (mount("tmpfs", s->top, "tmpfs", 0, "size=2m,mode=0700") != 0) {
        printf("# cannot mount a tmpfs (%s): skipped\n", strerror(errno));
        skip();
    }
    s->mounted = 1;
    assert_int_equal(mkdir(s->statedir, 0700), 0);
    if (read_only)
        assert_int_equal(mount(NULL, s->top, NULL,
                               MS_REMOUNT | MS_RDONLY, NULL), 0);
}

static struct scenario *scenario_new(void **state, enum fault f)
{
    struct scenario *s = calloc(1, sizeof *s);

    assert_non_null(s);
    *state = s;
    s->fault = f;
    harness_mkdtemp(s->top, sizeof s->top, "disk");
    harness_mkdtemp(s->rundir, sizeof s->rundir, "disk-run");
    snprintf(s->statedir, sizeof s->statedir, "%s/state", s->top);
    snprintf(s->log, sizeof s->log, "%s.log", s->rundir);
    snprintf(s->d.dir, sizeof s->d.dir, "%s", s->rundir);
    return s;
}

static void start(struct scenario *s, unsigned long long fsize)
{
    const char *extra[] = { "--state-dir", s->statedir, NULL };
    struct harness_daemon_opts o = { extra, s->log, fsize };

    harness_daemon_start_opts(&s->d, &o);
}

/* Starts the workload helper for node prefix; returns its pid. */
static pid_t workload(struct scenario *s, const char *prefix, char *out,
                      size_t outlen)
{
    char *argv[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                     "-N", (char *)prefix, "-n", "2", "-c", "3000", "-r",
                     "5", "-p", NULL };

    snprintf(out, outlen, "%s.%s", s->rundir, strrchr(prefix, '/') + 1);
    return harness_spawn(argv, s->rundir, NULL, out);
}

/* Waits for a workload; checks that it delivered everything. */
static void workload_done(pid_t pid, const char *out)
{
    struct harness_counters c;
    char *text;

    assert_true(harness_exited(harness_wait(pid, 300), 0));
    text = harness_read_file(out);
    if (harness_counters(text, "flush=0", &c) != 0)
        fail_msg("the workload did not deliver everything: %s", text);
    /* 2 nodes x (1 + 3000) calls x 2 ranges + 2 x 5 records, and maybe
     * the library's own samples: all of it delivered, nothing lost. */
    assert_true(c.samples >= 12014);
    assert_int_equal(c.lost, 0);
    assert_int_equal(c.delivered, c.samples);
    free(text);
    unlink(out);
}

/* Checks the warm counts of a workload's nodes in report text. */
static void expect_nodes(const char *report, const char *prefix, int present)
{
    for (int n = 0; n < 2; n++) {
        char want[512];

        snprintf(want, sizeof want,
                 "{\"nodeid\":\"%s::node[%d]\",\"operator\":\"synthetic\","
                 "\"backend\":\"cpu\",\"phase\":\"warm\",\"range\":"
                 "\"workload.inner\",\"metric\":\"inclusive\",\"count\":3000,",
                 prefix, n);
        if ((strstr(report, want) != NULL) != present)
            fail_msg("%s: %s expected %s in:\n%s", prefix,
                     present ? "rows" : "no rows",
                     present ? "" : "(not acknowledged)", report);
    }
}

/* Waits until the daemon has answered `retries` batches RETRY. */
static void wait_retries(struct scenario *s, unsigned long long retries)
{
    for (int i = 0; i < 12000; i++) {
        char *st = harness_stats(s->rundir);
        unsigned long long r = harness_stat(st, "daemon.retries");

        free(st);
        if (r >= retries)
            return;
        usleep(10000);
    }
    fail_msg("no batch was answered RETRY");
}

static void fill(const char *path)
{
    static char block[65536];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    assert_true(fd >= 0);
    memset(block, 0x5a, sizeof block);
    for (;;) {
        ssize_t w = write(fd, block, sizeof block);
        if (w <= 0) {
            assert_int_equal(errno, ENOSPC);
            break;
        }
    }
    /* The last bytes too. */
    while (write(fd, block, 1) == 1)
        ;
    close(fd);
}

static void run(struct scenario *s)
{
    char out_a[400], out_b[400], filler[400], status[64], *st, *rep, *rep2,
        *log;
    const char *why = NULL;
    pid_t a, b;

    snprintf(filler, sizeof filler, "%s/filler", s->top);
    if (s->fault == FAULT_FSIZE)
        start(s, 1ull << 30);
    else
        start(s, 0);

    /* A: before the trouble, when there is a before. */
    if (s->fault != FAULT_READONLY) {
        a = workload(s, "tests/disk/a", out_a, sizeof out_a);
        workload_done(a, out_a);
        st = harness_stats(s->rundir);
        assert_string_equal(harness_stat_str(st, "state.status", status,
                                             sizeof status), "ok");
        free(st);
    }

    /* The trouble. */
    switch (s->fault) {
    case FAULT_FSIZE: {
        struct rlimit rl = { 4096, 1ull << 30 };
        assert_int_equal(prlimit(s->d.pid, RLIMIT_FSIZE, &rl, NULL), 0);
        why = "File too large";
        break;
    }
    case FAULT_FULL:
        fill(filler);
        why = "No space left on device";
        break;
    case FAULT_READONLY:
        why = s->mounted ? "Read-only file system" : "Permission denied";
        break;
    }

    /* B: sent while the directory cannot be written. */
    b = workload(s, "tests/disk/b", out_b, sizeof out_b);
    wait_retries(s, 2);
    st = harness_stats(s->rundir);
    assert_string_equal(harness_stat_str(st, "state.status", status,
                                         sizeof status), "degraded");
    assert_true(harness_stat(st, "state.write_errors") >= 1);
    {
        char err[600];
        harness_stat_str(st, "state.last_error", err, sizeof err);
        if (strstr(err, why) == NULL)
            fail_msg("state.last_error '%s' does not say '%s'", err, why);
    }
    assert_int_equal(harness_stat_rejected(st), 0);
    free(st);
    /* It serves what it holds; nothing of B was taken. */
    rep = harness_dump(s->rundir, NULL);
    if (s->fault != FAULT_READONLY)
        expect_nodes(rep, "tests/disk/a", 1);
    expect_nodes(rep, "tests/disk/b", 0);
    free(rep);
    log = harness_read_file(s->log);
    if (strstr(log, why) == NULL ||
        strstr(log, "batches are answered `retry`") == NULL)
        fail_msg("the daemon's log does not say why:\n%s", log);
    free(log);

    /* The directory can be written again: B is taken, exactly once. */
    switch (s->fault) {
    case FAULT_FSIZE: {
        struct rlimit rl = { 1ull << 30, 1ull << 30 };
        assert_int_equal(prlimit(s->d.pid, RLIMIT_FSIZE, &rl, NULL), 0);
        break;
    }
    case FAULT_FULL:
        assert_int_equal(unlink(filler), 0);
        break;
    case FAULT_READONLY:
        if (s->mounted)
            assert_int_equal(mount(NULL, s->top, NULL, MS_REMOUNT, NULL), 0);
        else
            assert_int_equal(chmod(s->statedir, 0700), 0);
        break;
    }
    workload_done(b, out_b);
    st = harness_stats(s->rundir);
    assert_string_equal(harness_stat_str(st, "state.status", status,
                                         sizeof status), "ok");
    assert_int_equal(harness_stat_rejected(st), 0);
    for (int i = 1; i <= (s->fault == FAULT_READONLY ? 1 : 2); i++) {
        char key[64];
        snprintf(key, sizeof key, "client.%d.duplicates", i);
        assert_int_equal(harness_stat(st, key), 0);
    }
    free(st);
    rep = harness_dump(s->rundir, "all");
    if (s->fault != FAULT_READONLY)
        expect_nodes(rep, "tests/disk/a", 1);
    expect_nodes(rep, "tests/disk/b", 1);
    log = harness_read_file(s->log);
    if (strstr(log, "can be written again") == NULL)
        fail_msg("the daemon's log does not say it recovered:\n%s", log);
    free(log);

    /* Everything acknowledged was journaled. */
    assert_true(WIFSIGNALED(harness_daemon_signal(&s->d, SIGKILL)));
    start(s, 0);
    rep2 = harness_dump(s->rundir, "all");
    assert_string_equal(rep2, rep);
    free(rep);
    free(rep2);
    harness_daemon_stop(&s->d);
}

static void test_file_size_limit(void **state)
{
    run(scenario_new(state, FAULT_FSIZE));
}

static void test_disk_full(void **state)
{
    struct scenario *s = scenario_new(state, FAULT_FULL);

    mount_tmpfs(s, 0);
    run(s);
}

static void test_read_only(void **state)
{
    struct scenario *s = scenario_new(state, FAULT_READONLY);

    if (geteuid() == 0) {
        mount_tmpfs(s, 1);
    } else {
        assert_int_equal(mkdir(s->statedir, 0500), 0);
    }
    run(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_file_size_limit, teardown),
        cmocka_unit_test_teardown(test_disk_full, teardown),
        cmocka_unit_test_teardown(test_read_only, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
