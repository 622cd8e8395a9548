/*
 * lib/runner with real processes: the registry stops a real child and
 * removes a real directory on the way out; a child that cannot be run is
 * told to the caller as an errno; a child gets its directory, streams and
 * environment; git's output is read; and two rounds of the workload, each
 * under a real private hostranged started by hrx_daemon_start, saved and
 * merged as rounds by hostrangectl run as a helper.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/runner/cleanup.h"
#include "lib/runner/spawn.h"
#include "tests/lib/harness.h"

/* Whether path exists. */
static int exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* The whole of a small file, NUL-terminated, into buf. */
static void read_all(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Whether pid is gone: reaped, not a zombie left behind. */
static int gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* A registered directory with a tree in it, and a registered child that
 * would run for a minute: hrx_cleanup_all stops and reaps the child and
 * removes the tree. */
static void test_cleanup_all(void **state)
{
    char dir[PATH_MAX], sub[PATH_MAX + 8], file[PATH_MAX + 16];
    char *argv[] = { "sleep", "60", NULL };
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_DAEMON, argv);
    const char *in;
    pid_t pid;
    FILE *f;

    (void)state;
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &in), 0);
    assert_non_null(strstr(dir, "/hostrange-unit-"));
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(file, sizeof file, "%s/file", sub);
    assert_non_null(f = fopen(file, "w"));
    fputs("x\n", f);
    fclose(f);
    assert_int_equal(hrx_spawn(&s, &pid), 0);
    assert_int_equal(kill(pid, 0), 0);
    hrx_cleanup_all();
    assert_true(gone(pid));
    assert_false(exists(dir));
}

/* hrx_cleanup_rmdir removes one directory and forgets it; a temporary
 * directory that cannot be made says where it was tried. */
static void test_tempdir(void **state)
{
    char dir[PATH_MAX], saved[PATH_MAX];
    const char *in, *tmp = getenv("TMPDIR");
    int rc;

    (void)state;
    snprintf(saved, sizeof saved, "%s", tmp != NULL ? tmp : "");
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &in), 0);
    assert_true(exists(dir));
    hrx_cleanup_rmdir(dir);
    assert_false(exists(dir));
    setenv("TMPDIR", "/nonexistent-hostrange-dir", 1);
    rc = hrx_cleanup_tempdir("unit", dir, sizeof dir, &in);
    if (saved[0] != '\0')
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    assert_int_equal(rc, -ENOENT);
    assert_string_equal(in, "/nonexistent-hostrange-dir");
}

/* A program that does not exist, or a directory that does not, is an
 * errno to the caller; nothing is left registered or running. */
static void test_spawn_fails(void **state)
{
    char *argv[] = { "hostrange-no-such-program", NULL };
    char *sh[] = { "sh", "-c", "exit 0", NULL };
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_COMMAND, argv);
    struct hrx_spawn d = hrx_spawn_init(HRX_CHILD_HELPER, sh);
    pid_t pid = 0;

    (void)state;
    assert_int_equal(hrx_spawn(&s, &pid), -ENOENT);
    assert_int_equal(pid, 0);
    d.dir = "/nonexistent-hostrange-dir";
    assert_int_equal(hrx_spawn_wait(&d), -ENOENT);
    /* The registry holds room for HRX_CLEANUP_MAX: none was kept. */
    for (int i = 0; i < HRX_CLEANUP_MAX + 2; i++)
        assert_int_equal(hrx_spawn(&s, &pid), -ENOENT);
    d.dir = NULL;
    assert_int_equal(hrx_spawn_wait(&d), 0);
}

/* A child runs in its directory with its environment, its standard output
 * in a file and its standard error sent there too; its status is the
 * shell's. */
static void test_spawn_streams(void **state)
{
    char dir[PATH_MAX], out[PATH_MAX + 8], buf[PATH_MAX + 64];
    char want[PATH_MAX + 64];
    char *argv[] = { "sh", "-c", "echo \"$HR_UNIT\"; pwd; echo err >&2; exit 3",
                     NULL };
    char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
    struct hrx_spawn s = hrx_spawn_init(HRX_CHILD_HELPER, argv);
    struct hrx_spawn k = hrx_spawn_init(HRX_CHILD_HELPER, killed);
    const char *in;

    (void)state;
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &in), 0);
    snprintf(out, sizeof out, "%s/out", dir);
    s.dir = dir;
    s.out = out;
    s.fd[2] = STDOUT_FILENO;
    s.env[0] = "HR_UNIT";
    s.env[1] = "the value";
    assert_int_equal(hrx_spawn_wait(&s), 3);
    read_all(out, buf, sizeof buf);
    assert_non_null(realpath(dir, want));
    snprintf(want + strlen(want), sizeof want - strlen(want), "\n");
    assert_true(strncmp(buf, "the value\n", 10) == 0);
    assert_true(strncmp(buf + 10, want, strlen(want)) == 0);
    assert_string_equal(buf + 10 + strlen(want), "err\n");
    assert_int_equal(hrx_spawn_wait(&k), 128 + SIGTERM);
    hrx_cleanup_rmdir(dir);
}

/* git's standard output read whole; skipped without git. */
static void test_git(void **state)
{
    char *args[] = { "git", "--version", NULL };
    char *bad[] = { "git", "no-such-git-command", NULL };
    char *out = NULL;
    int st;

    (void)state;
    st = hrx_git(args, &out, 1);
    if (st == -ENOENT)
        skip();
    assert_int_equal(st, 0);
    assert_non_null(out);
    assert_true(strncmp(out, "git version ", 12) == 0);
    free(out);
    assert_true(hrx_git(bad, NULL, 1) > 0);
}

/* One round: the workload under a private daemon of its own, the run
 * saved, the daemon stopped and reaped. Writes the run to file. */
static void one_round(const char *daemon, const char *dir, const char *file)
{
    const char *workload = harness_program("HOSTRANGE_TEST_WORKLOAD");
    char *argv[] = { (char *)workload, "-n", "2", "-c", "20", NULL };
    struct hrx_spawn cmd = hrx_spawn_init(HRX_CHILD_COMMAND, argv);
    struct harness_run r;
    pid_t dpid, cpid;
    int status;

    assert_int_equal(hrx_daemon_start(daemon, dir, &dpid), 0);
    harness_ctl(dir, &r, "ping", "--wait", "10000", (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("hostranged did not start on %s: %s", dir, r.err);
    harness_run_free(&r);
    cmd.fd[1] = HRX_FD_NULL;
    cmd.env[0] = HRX_RUNTIME_ENV;
    cmd.env[1] = dir;
    assert_int_equal(hrx_spawn(&cmd, &cpid), 0);
    assert_int_equal(hrx_cleanup_wait(cpid, &status), 0);
    assert_int_equal(hrx_exit_status(status), 0);
    harness_ctl(dir, &r, "save", "-o", file, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("save: %s", r.err);
    harness_run_free(&r);
    hrx_cleanup_stop(dpid);
    assert_true(gone(dpid));
}

/* Two rounds under real private daemons, merged as rounds by this
 * program's merge run as a helper; a merge of a file that is not there
 * is merge's failure, its status returned. */
static void test_rounds(void **state)
{
    const char *ctl = harness_program("HOSTRANGECTL");
    const char *daemon = harness_program("HOSTRANGED");
    char dir[PATH_MAX], rt[2][PATH_MAX], files[2][PATH_MAX + 16];
    char merged[PATH_MAX + 16], buf[PATH_MAX], none[PATH_MAX + 16];
    char *in[2] = { files[0], files[1] }, *missing[1] = { none };
    struct hrr_meta meta;
    struct harness_run r;
    const char *where;

    (void)state;
    setenv("HOSTRANGED", daemon, 1);
    hrx_daemon_path(NULL, buf, sizeof buf);
    assert_string_equal(buf, daemon);
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &where),
                     0);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(hrx_cleanup_tempdir("unit", rt[k], sizeof rt[k],
                                             &where), 0);
        snprintf(files[k], sizeof files[k], "%s/round-%d.hrs", dir, k + 1);
        one_round(daemon, rt[k], files[k]);
        hrx_cleanup_rmdir(rt[k]);
        assert_false(exists(rt[k]));
    }
    memset(&meta, 0, sizeof meta);
    assert_int_equal(hrr_meta_add(&meta, "round", 5, "unit"), 0);
    snprintf(merged, sizeof merged, "%s/merged.hrs", dir);
    assert_int_equal(hrx_merge_rounds(ctl, merged, 1, &meta, in, 2), 0);
    hrr_meta_fini(&meta);
    /* The merged run holds both rounds: --fields rounds shows 2. */
    harness_ctl(dir, &r, "dump", "--from", merged, "--fields", "rounds",
                (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    assert_non_null(strstr(r.out, "\"rounds\":2"));
    harness_run_free(&r);
    snprintf(none, sizeof none, "%s/no-such.hrs", dir);
    assert_true(hrx_merge_rounds(ctl, merged, 1, NULL, missing, 1) > 0);
    hrx_cleanup_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tempdir),
        cmocka_unit_test(test_spawn_fails),
        cmocka_unit_test(test_spawn_streams),
        cmocka_unit_test(test_git),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_cleanup_all),
    };

    assert_int_equal(hrx_cleanup_init(), 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
