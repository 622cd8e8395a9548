/*
 * lib/runner with real processes: the registry stops a real child and
 * removes a real directory on the way out; a child that cannot be run is
 * told to the caller as an errno; a child gets its directory, streams and
 * environment; git's output is read; and two rounds of the workload, each
 * under a real private hostranged started by hrx_daemon_start, saved and
 * merged as rounds by hostrangectl run as a helper. bisect's measuring
 * with rounds of known medians: the commit where the level changes is
 * found, and a commit that does not build is skipped; and a bisect's
 * commits in a real git repository: the line, a worktree, a build in it,
 * the subject, the worktree dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

#include "lib/runner/bisect.h"
#include "lib/runner/cleanup.h"
#include "proto/protocol.h"
#include "lib/runner/rounds.h"
#include "lib/runner/spawn.h"
#include "lib/runner/worktree.h"
#include "lib/stat/signif.h"
#include "tests/lib/harness.h"

/* Whether path exists. */
static int exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
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

/* A runtime directory for a daemon is made in $TMPDIR while its sockets'
 * paths fit (DIR/control: hrp_runtime_dir_max), else in /tmp; a plain
 * temporary directory stays in $TMPDIR (here: where neither exists, so
 * that the place tried is what *in says). */
static void test_rundir(void **state)
{
    char dir[PATH_MAX], other[PATH_MAX], saved[PATH_MAX], tmp[PATH_MAX];
    const char *in, *was = getenv("TMPDIR");
    size_t fit = hrp_runtime_dir_max() - strlen("/hostrange-unit-XXXXXX");
    int rc;

    (void)state;
    assert_int_equal(hrp_runtime_dir_max(), 99);
    snprintf(saved, sizeof saved, "%s", was != NULL ? was : "");
    /* The longest TMPDIR that is kept, and one byte more. */
    snprintf(tmp, sizeof tmp, "/nonexistent-%0*d", (int)(fit - 13), 0);
    assert_int_equal(strlen(tmp), fit);
    setenv("TMPDIR", tmp, 1);
    assert_int_equal(hrx_cleanup_rundir("unit", dir, sizeof dir, &in),
                     -ENOENT);
    assert_string_equal(in, tmp);
    strcat(tmp, "0");
    setenv("TMPDIR", tmp, 1);
    rc = hrx_cleanup_rundir("unit", dir, sizeof dir, &in);
    assert_int_equal(hrx_cleanup_tempdir("unit", other, sizeof other, &in),
                     -ENOENT);
    assert_string_equal(in, tmp);
    if (saved[0] != '\0')
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    assert_int_equal(rc, 0);
    assert_int_equal(strncmp(dir, "/tmp/hostrange-unit-", 20), 0);
    assert_true(exists(dir));
    hrx_cleanup_rmdir(dir);
    assert_false(exists(dir));
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
    char dir[PATH_MAX], out[PATH_MAX + 8], *text;
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
    text = harness_read_file(out);
    assert_non_null(realpath(dir, want));
    snprintf(want + strlen(want), sizeof want - strlen(want), "\n");
    assert_true(strncmp(text, "the value\n", 10) == 0);
    assert_true(strncmp(text + 10, want, strlen(want)) == 0);
    assert_string_equal(text + 10 + strlen(want), "err\n");
    free(text);
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
    hrx_daemon_path(daemon, NULL, buf, sizeof buf);
    assert_string_equal(buf, daemon);
    hrx_daemon_path("", NULL, buf, sizeof buf);
    assert_string_equal(buf, "hostranged");
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

/* A round of test_rounds_run: round K (counted in *ctx) writes its file
 * and returns status K - 1, but round 3 is cut short by a signal when
 * the count starts at 100, and round 2 writes nothing when it starts at
 * 200. */
static int fake_round(void *ctx, const char *save, int *cut)
{
    int *k = ctx;
    FILE *f;

    ++*k;
    *cut = *k == 103;
    if (*k == 202)
        return 0;
    assert_non_null(f = fopen(save, "w"));
    fclose(f);
    return *k % 100 - 1;
}

/* The rounds: all done with the first failing status kept; a cut round
 * left out and the rounds stopped; a round that left no file stops them. */
static void test_rounds_run(void **state)
{
    char dir[PATH_MAX], want[PATH_MAX + 32];
    struct hrx_rounds r;
    const char *in;
    int k = 0;

    (void)state;
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &in), 0);
    assert_int_equal(hrx_rounds_run(4, dir, fake_round, &k, &r), 0);
    assert_int_equal(r.made, 4);
    assert_int_equal(r.done, 4);
    assert_int_equal(r.cut_in, 0);
    assert_int_equal(r.status, 1);
    snprintf(want, sizeof want, "%s/round-4.hrs", dir);
    assert_string_equal(r.files[3], want);
    hrx_rounds_fini(&r);
    k = 100;
    assert_int_equal(hrx_rounds_run(5, dir, fake_round, &k, &r), 0);
    assert_int_equal(k, 103);
    assert_int_equal(r.made, 3);
    assert_int_equal(r.done, 2);
    assert_int_equal(r.cut_in, 3);
    hrx_rounds_fini(&r);
    /* Round 2 of the last run writes nothing: the file of the run before
     * must not stand in for it. */
    snprintf(want, sizeof want, "%s/round-2.hrs", dir);
    assert_int_equal(unlink(want), 0);
    k = 200;
    assert_int_equal(hrx_rounds_run(5, dir, fake_round, &k, &r), -ENOENT);
    assert_int_equal(r.made, 2);
    assert_int_equal(r.done, 1);
    hrx_rounds_fini(&r);
    hrx_cleanup_rmdir(dir);
}

/* A line of 9 commits, 0 the good end and 8 the bad end: commits 0 to 4
 * take 100 us a round, 5 to 8 take 110 (+10%), each round a little off
 * (up to 0.2%, by a fixed rule); commit 3's build fails. */
#define LINE_N 9
#define LINE_FIRST_BAD 5
#define LINE_BROKEN 3

struct line {
    unsigned rounds;
    int steps[LINE_N];  /* the commits of the steps, in order */
    int nsteps;
    int said;
    struct hrx_bisect *b;
};

static int line_prepare(void *ctx, struct hrx_bisect_commit *c)
{
    struct line *l = ctx;

    if (c - l->b->c == LINE_BROKEN) {
        c->build = HRX_BISECT_BUILD_FAILED;
        c->why = strdup("its build failed (status 1)");
        return 1;
    }
    c->build = HRX_BISECT_BUILD_OK;
    return 0;
}

static int line_round(void *ctx, struct hrx_bisect_commit *c, double *v,
                      int *sig)
{
    struct line *l = ctx;
    long i = c - l->b->c;
    double level = i >= LINE_FIRST_BAD ? 110000.0 : 100000.0;

    *sig = 0;
    l->rounds++;
    *v = level * (1.0 + 0.001 * (double)((int)(l->rounds * 7 % 5) - 2));
    return 0;
}

static double line_clock_step(void *ctx)
{
    (void)ctx;
    return 10.0;
}

static void line_step(void *ctx, struct hrx_bisect_commit *c)
{
    struct line *l = ctx;

    assert_true(l->nsteps < LINE_N);
    l->steps[l->nsteps++] = (int)(c - l->b->c);
}

static void line_say(void *ctx, const char *msg)
{
    struct line *l = ctx;

    (void)msg;
    l->said++;
}

static void test_bisect_search(void **state)
{
    struct hrx_bisect b;
    struct hrx_bisect_answer a;
    struct line l;
    int sig = 0, broken_step = 0;

    (void)state;
    memset(&b, 0, sizeof b);
    memset(&l, 0, sizeof l);
    l.b = &b;
    b.n = LINE_N;
    assert_non_null(b.c = calloc(LINE_N, sizeof *b.c));
    assert_non_null(b.v = calloc(LINE_N, sizeof *b.v));
    for (int i = 0; i < LINE_N; i++)
        snprintf(b.c[i].hash, sizeof b.c[i].hash, "%040d", i);
    b.v[0] = HRS_BISECT_GOOD;
    b.v[LINE_N - 1] = HRS_BISECT_BAD;
    b.plan.first = HRS_DECIDE_FIRST_DEFAULT;
    b.plan.max = 10;
    b.plan.alpha = HRS_SIGNIF_ALPHA;
    b.ends_plan.first = HRS_DECIDE_FIRST_DEFAULT;
    b.ends_plan.max = HRS_DECIDE_MAX_DEFAULT;
    b.ends_plan.alpha = HRS_SIGNIF_ALPHA;
    b.threshold = 2;
    b.ops.prepare = line_prepare;
    b.ops.round = line_round;
    b.ops.clock_step = line_clock_step;
    b.ops.step = line_step;
    b.ops.say = line_say;
    b.ops.ctx = &l;
    assert_int_equal(hrx_bisect_ends(&b, &sig), 0);
    assert_int_equal(sig, 0);
    assert_true(b.have_ends);
    assert_int_equal(b.ends.verdict, HRS_DECIDE_SLOWER);
    b.dir = b.ends.verdict;
    assert_int_equal(hrx_bisect_search(&b, &a, &sig), 0);
    assert_int_equal(a.hi, LINE_FIRST_BAD);
    assert_int_equal(a.lo, LINE_FIRST_BAD - 1);
    assert_false(a.two);
    assert_int_equal(a.unclear, 0);
    /* Each step told once, in order, numbered from 1. */
    assert_int_equal(l.nsteps, b.steps);
    for (int k = 0; k < l.nsteps; k++) {
        const struct hrx_bisect_commit *c = &b.c[l.steps[k]];

        assert_int_equal(c->step, k + 1);
        assert_int_equal(b.v[l.steps[k]], c->verdict);
        if (l.steps[k] == LINE_BROKEN) {
            broken_step = 1;
            assert_int_equal(c->verdict, HRS_BISECT_SKIPPED);
            assert_string_equal(c->why, "its build failed (status 1)");
        }
    }
    assert_int_equal(a.skipped, broken_step);
    assert_int_equal(b.v[LINE_FIRST_BAD], HRS_BISECT_BAD);
    assert_int_equal(b.v[LINE_FIRST_BAD - 1], HRS_BISECT_GOOD);
    hrx_bisect_fini(&b);
    assert_null(b.c);
}

/* A descriptor of the current directory, kept open for the test's run
 * (the repository, when it is called). */
static int cwd_repo(void)
{
    static int fd = -1;

    if (fd >= 0)
        close(fd);
    fd = open(".", O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

/* git with args in the current directory, quietly; its status. */
static int git(const char *a1, const char *a2, const char *a3,
               const char *a4)
{
    char *args[] = { "git", "-c", "user.name=unit", "-c",
                     "user.email=unit@example.org", "-c",
                     "commit.gpgsign=false", (char *)a1, (char *)a2,
                     (char *)a3, (char *)a4, NULL };

    return hrx_git(args, NULL, 1);
}

/* The full hash of a tag, into out. */
static void rev(const char *tag, char *out, size_t len)
{
    char *args[] = { "git", "rev-parse", (char *)tag, NULL };
    char *got = NULL;

    assert_int_equal(hrx_git(args, &got, 1), 0);
    got[strcspn(got, "\n")] = '\0';
    snprintf(out, len, "%s", got);
    free(got);
}

/* hrx_bisect_in_worktree's fn: says where it runs and its commit on
 * standard error; returns 7. */
static int in_worktree(void *arg)
{
    char here[PATH_MAX];
    const char *commit = getenv("HR_UNIT");

    (void)arg;
    assert_non_null(getcwd(here, sizeof here));
    fprintf(stderr, "%s %s\n", here, commit != NULL ? commit : "-");
    return 7;
}

static void test_bisect_git(void **state)
{
    char dir[PATH_MAX], repo[PATH_MAX], log[PATH_MAX + 32], buf[256];
    char h[3][HRX_BISECT_HASH_MAX], why[256], *subject, *text;
    struct hrx_bisect_commit *line = NULL, *none = NULL;
    const char *in;
    size_t n = 0, nn = 0;
    int cwd;

    (void)state;
    if (git("--version", NULL, NULL, NULL) < 0)
        skip();
    /* The repository, and apart from it the bisect's directory of
     * worktrees; git runs in the repository, never in the tree of the
     * test. */
    assert_int_equal(hrx_cleanup_tempdir("unit", repo, sizeof repo, &in),
                     0);
    assert_int_equal(hrx_cleanup_tempdir("unit", dir, sizeof dir, &in), 0);
    assert_true((cwd = open(".", O_RDONLY | O_DIRECTORY)) >= 0);
    assert_int_equal(chdir(repo), 0);
    assert_int_equal(git("init", "-q", ".", NULL), 0);
    for (int i = 0; i < 3; i++) {
        char msg[32], tag[8];

        snprintf(msg, sizeof msg, "commit %d", i);
        snprintf(tag, sizeof tag, "c%d", i);
        {
            char *args[] = { "git", "-c", "user.name=unit", "-c",
                             "user.email=unit@example.org", "-c",
                             "commit.gpgsign=false", "commit", "-q",
                             "--allow-empty", "-m", msg, NULL };

            assert_int_equal(hrx_git(args, NULL, 1), 0);
        }
        assert_int_equal(git("tag", tag, NULL, NULL), 0);
        rev(tag, h[i], sizeof h[i]);
    }
    /* The line from c0 to c2: the three, in order. */
    assert_int_equal(hrx_bisect_line(h[0], h[2], &line, &n, why, sizeof why),
                     0);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(line[i].hash, h[i]);
    /* The other way round: not an ancestor, said. */
    assert_int_equal(hrx_bisect_line(h[2], h[0], &none, &nn, why,
                                     sizeof why), -1);
    assert_null(none);
    assert_non_null(strstr(why, "is not an ancestor of the bad end"));
    assert_non_null(subject = hrx_bisect_subject(h[1]));
    assert_string_equal(subject, "commit 1");
    free(subject);
    /* c1's worktree, a build in it that sees its commit, dropped. */
    assert_int_equal(hrx_bisect_worktree_add(dir, &line[1]), 0);
    assert_non_null(line[1].dir);
    assert_true(exists(line[1].dir));
    assert_int_equal(hrx_bisect_build(dir, &line[1],
                                      "git rev-parse HEAD; echo $HR_UNIT; "
                                      "exit 4", "HR_UNIT", log, sizeof log),
                     4);
    text = harness_read_file(log);
    snprintf(why, sizeof why, "%s\n%s\n", h[1], h[1]);
    assert_string_equal(text, why);
    free(text);
    /* A function run in the worktree, its standard error in a log, then
     * back here with standard error and the environment as they were. */
    {
        char rundir[PATH_MAX], here[PATH_MAX], want[PATH_MAX + 128];
        int st = 0;

        snprintf(log, sizeof log, "%s/round.log", dir);
        assert_int_equal(hrx_bisect_in_worktree(&line[1], cwd_repo(),
                                                "HR_UNIT", log, in_worktree,
                                                NULL, &st), 0);
        assert_int_equal(st, 7);
        assert_null(getenv("HR_UNIT"));
        assert_non_null(getcwd(here, sizeof here));
        assert_non_null(realpath(repo, rundir));
        assert_string_equal(here, rundir);
        assert_non_null(realpath(line[1].dir, rundir));
        snprintf(want, sizeof want, "%s %s\n", rundir, h[1]);
        text = harness_read_file(log);
        assert_string_equal(text, want);
        free(text);
    }
    /* git without the registry: the same HEAD as through it. */
    {
        char *args[] = { "git", "rev-parse", "HEAD", NULL };

        assert_int_equal(hrx_git_plain(args, buf, sizeof buf), 0);
        assert_true(strncmp(buf, h[2], strlen(h[2])) == 0);
    }
    snprintf(why, sizeof why, "%s", line[1].dir);
    assert_int_equal(hrx_bisect_worktree_drop(&line[1]), 0);
    assert_null(line[1].dir);
    assert_false(exists(why));
    free(line);
    hrx_bisect_worktrees_remove(dir);
    assert_false(exists(dir));
    assert_int_equal(fchdir(cwd), 0);
    close(cwd);
    hrx_cleanup_rmdir(repo);
    assert_false(exists(repo));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tempdir),
        cmocka_unit_test(test_rundir),
        cmocka_unit_test(test_spawn_fails),
        cmocka_unit_test(test_spawn_streams),
        cmocka_unit_test(test_git),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_rounds_run),
        cmocka_unit_test(test_bisect_search),
        cmocka_unit_test(test_bisect_git),
        cmocka_unit_test(test_cleanup_all),
    };

    assert_int_equal(hrx_cleanup_init(), 0);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
