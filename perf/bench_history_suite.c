/*
 * The run history at a suite's size in `make bench` (issue 47), each
 * figure with CPU seconds (user + system, getrusage) and peak memory (the
 * largest resident set, of the process that did the work), against a
 * baseline measured in the same run:
 *
 * - history add of a run of 60,000 keys (6,000 nodes x 10 ranges, 120,000
 *   report rows) into a new SQLite history, against reading the same run
 *   (hostrangectl dump --from);
 * - history detect over 120,000 series x 20 runs (tests/lib/
 *   harness_suite.h: 3,000 nodes x 40 series, one real step), a SQLite
 *   history, against detect --series of the same history (each series
 *   judged alone: the method without the rule);
 * - history plot of the same history, against detect (the same look, and
 *   the page written besides), and the page's size: index.html (what a
 *   browser opens) against the whole directory (index.html and every
 *   chunk of charts);
 * - the look's growth with the runs: lib/history/look.c over 4,000 series
 *   (100 nodes) of 20, 100 and 500 runs, CPU ms per series, against the
 *   figure of 20 runs.
 */
#include "config.h"

#include "lib/history/look.h"
#include "perf/bench_daemon_util.h"
#include "tests/lib/harness_runfile.h"
#include "tests/lib/harness_suite.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ADD_NODES 6000
#define ADD_RANGES 10
#define SUITE_NODES 3000
#define SUITE_RUNS 20
#define GROWTH_NODES 100

/* What one process used: CPU seconds and its peak resident set, MB. */
struct usage {
    double cpu, rss_mb;
};

static void usage_of(const struct rusage *ru, struct usage *u)
{
    u->cpu = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
             (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
    u->rss_mb = (double)ru->ru_maxrss / 1024;
}

/* Runs argv (stdout to /dev/null) and waits for it: its usage. */
static struct usage run(char *const *argv)
{
    struct rusage ru;
    struct usage u;
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("%s %s failed", argv[0], argv[1] != NULL ? argv[1] : "");
    usage_of(&ru, &u);
    return u;
}

/* Runs fn(arg) in a child and waits for it; dies when it fails. The
 * programs measured are started by this process, which must stay small:
 * a child's peak resident set counts what it was forked from (its copy
 * of this process's memory, up to its exec), so what makes a large input
 * is done in a child of its own. */
static void in_child(void (*fn)(const void *arg), const void *arg)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        fn(arg);
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("making the bench's input failed");
}

/* A run file of ADD_NODES x ADD_RANGES keys, five events each. */
static void write_big_run(const void *arg)
{
    const char *path = arg;
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunFingerprint fp = HOSTRANGE__RUN_FINGERPRINT__INIT;
    struct harness_runfile f;
    char node[64], range[32];

    fp.host = "bench";
    fp.cpu_model = "bench";
    fp.cores = 1;
    fp.kernel = "bench";
    fp.clock_path = "fast";
    h.host = "bench";
    h.id = "5b000000000000000000000000000001";
    h.fingerprint = &fp;
    harness_runfile_create_header(&f, path, 1, &h);
    for (size_t n = 0; n < ADD_NODES; n++) {
        snprintf(node, sizeof node, "tests/test_gemm.py::case[%zu]", n);
        for (size_t r = 0; r < ADD_RANGES; r++) {
            struct hra_key *k;

            snprintf(range, sizeof range, "layer%zu", r);
            k = harness_runfile_key(&f, node, 2, range);
            for (uint64_t d = 0; d < 5; d++)
                harness_runfile_add(&f, k, 1000 + 10 * r + d, 100 + d);
            harness_runfile_put(&f, k);
        }
    }
    harness_runfile_commit(&f);
    hra_fini(&f.a);
}

static void add(const char *dir, char *ctl)
{
    char path[300], db[300];
    char *dump[] = { ctl, "dump", "--from", path, "-f", "jsonl", NULL };
    char *hadd[] = { ctl, "history", "add", "--db", db, path, NULL };
    struct usage base = { 1e30, 0 }, u = { 1e30, 0 };

    snprintf(path, sizeof path, "%s/big.hrs", dir);
    in_child(write_big_run, path);
    for (int i = 0; i < 3; i++) {
        struct usage d = run(dump), a;

        snprintf(db, sizeof db, "%s/add%d.db", dir, i);
        a = run(hadd);
        base = d.cpu < base.cpu ? d : base;
        u = a.cpu < u.cpu ? a : u;
    }
    fprintf(stderr, "history.suite.add: a run of %d keys into SQLite %.2f CPU "
            "s, %.0f MB; reading it (dump --from) %.2f CPU s, %.0f MB\n",
            ADD_NODES * ADD_RANGES, u.cpu, u.rss_mb, base.cpu, base.rss_mb);
    bd_report("history.suite.add_60000_keys_cpu_s", u.cpu, "s", base.cpu);
    bd_report("history.suite.add_60000_keys_peak_mb", u.rss_mb, "MB",
              base.rss_mb);
}

/* The bytes of file path (0: none). */
static double file_mb(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
}

/* The page of the suite's history db, against detect's usage look: the
 * usage of plot, and the size of the page it writes in dir/page. */
static void plot(const char *dir, char *ctl, const char *db,
                 struct usage look)
{
    char page[300], path[600];
    char *cmd[] = { ctl, "history", "plot", "--db", (char *)db, "-o", page,
                    NULL };
    double index_mb, total_mb;
    struct dirent *e;
    struct usage u;
    DIR *d;

    snprintf(page, sizeof page, "%s/page", dir);
    u = run(cmd);
    snprintf(path, sizeof path, "%s/index.html", page);
    total_mb = index_mb = file_mb(path);
    snprintf(path, sizeof path, "%s/data", page);
    if ((d = opendir(path)) == NULL)
        bd_die("no %s", path);
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/data/%s", page, e->d_name);
        if (e->d_name[0] != '.')
            total_mb += file_mb(path);
    }
    closedir(d);
    fprintf(stderr, "history.suite.plot: %d series x %d runs (SQLite): %.2f "
            "CPU s, %.0f MB; the page: index.html %.2f MB of %.1f MB\n",
            SUITE_NODES * HARNESS_SUITE_SERIES, SUITE_RUNS, u.cpu, u.rss_mb,
            index_mb, total_mb);
    bd_report("history.suite.plot_120000x20_cpu_s", u.cpu, "s", look.cpu);
    bd_report("history.suite.plot_120000x20_peak_mb", u.rss_mb, "MB",
              look.rss_mb);
    bd_report("history.suite.plot_120000x20_index_mb", index_mb, "MB",
              total_mb);
}

/* The suite's history, one real step, at db (a path). */
static void write_suite(const void *db)
{
    static const struct harness_suite_step step = { 1234, 7, 12, 0.3 };
    struct harness_suite s = { SUITE_NODES, SUITE_RUNS, 0.01, 1, &step, 1,
                               0 };
    char err[4096];

    if (harness_suite_write(&s, db, err, sizeof err) != 0)
        bd_die("writing the suite's history: %s", err);
}

static void detect(const char *dir, char *ctl)
{
    char db[300];
    char *look[] = { ctl, "history", "detect", "--db", db, NULL };
    char *alone[] = { ctl, "history", "detect", "--db", db, "--series", NULL };
    struct usage base, u;

    snprintf(db, sizeof db, "%s/suite.db", dir);
    in_child(write_suite, db);
    base = run(alone);
    u = run(look);
    fprintf(stderr, "history.suite.detect: %d series x %d runs (SQLite): "
            "the look %.2f CPU s, %.0f MB; each series alone (--series) "
            "%.2f CPU s, %.0f MB\n", SUITE_NODES * HARNESS_SUITE_SERIES,
            SUITE_RUNS, u.cpu, u.rss_mb, base.cpu, base.rss_mb);
    bd_report("history.suite.detect_120000x20_cpu_s", u.cpu, "s", base.cpu);
    bd_report("history.suite.detect_120000x20_peak_mb", u.rss_mb, "MB",
              base.rss_mb);
    plot(dir, ctl, db, u);
}

struct feed {
    struct hrh_look *l;
    size_t *pos;
    uint64_t *one, *many;
};

static int feed(void *ctx, const char *const *key, const double *x, size_t n)
{
    struct feed *f = ctx;

    return hrh_look_add(f->l, key, HARNESS_SUITE_MACHINE, x,
                                strcmp(key[3], "cold") == 0 ? f->one
                                                            : f->many,
                                f->pos, n);
}

/* The look over GROWTH_NODES nodes of `runs` runs, in a child: its usage
 * (generating the series included). */
static struct usage growth_one(size_t runs)
{
    static const struct harness_suite_step step = { 12, 7, 0, 0.3 };
    struct rusage ru;
    struct usage u;
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        static const struct hrs_cp_opts o = { HRS_CP_ALPHA_DEFAULT,
                                              HRS_CP_MIN_CHANGE_DEFAULT,
                                              HRS_CP_WINDOW_DEFAULT, 0, 0 };
        struct harness_suite_step st = step;
        struct harness_suite s = { GROWTH_NODES, runs, 0.01, 7, &st, 1,
                                   0 };
        struct feed f;

        st.run = runs / 2;
        f.l = hrh_look_new(&o);
        f.pos = malloc(runs * sizeof *f.pos);
        f.one = malloc(runs * sizeof *f.one);
        f.many = malloc(runs * sizeof *f.many);
        if (f.l == NULL || f.pos == NULL || f.one == NULL || f.many == NULL)
            _exit(1);
        for (size_t r = 0; r < runs; r++) {
            f.pos[r] = r;
            f.one[r] = 1;
            f.many[r] = 1000;
        }
        if (harness_suite_each(&s, feed, &f) != 0 ||
            hrh_look_finish(f.l) != 0)
            _exit(1);
        fprintf(stderr, "history.suite.look: %zu runs, one step: %zu "
                "findings\n", runs, hrh_look_nfindings(f.l));
        _exit(0);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        bd_die("the look over %zu runs failed", runs);
    usage_of(&ru, &u);
    return u;
}

static void growth(void)
{
    static const size_t runs[3] = { 20, 100, 500 };
    double series = GROWTH_NODES * HARNESS_SUITE_SERIES, base = 0;

    for (int i = 0; i < 3; i++) {
        struct usage u = growth_one(runs[i]);
        double ms = u.cpu * 1e3 / series;
        char name[96];

        if (i == 0)
            base = ms;
        fprintf(stderr, "history.suite.look: %.0f series x %zu runs: %.2f "
                "CPU s (%.3f ms a series), %.0f MB\n", series, runs[i],
                u.cpu, ms, u.rss_mb);
        snprintf(name, sizeof name, "history.suite.look_ms_per_series_n%zu",
                 runs[i]);
        bd_report(name, ms, "ms", base);
    }
}

int main(void)
{
    char dir[256];
    char *ctl = (char *)bd_hostrangectl();

    bd_tempdir(dir, sizeof dir, "history-suite");
    add(dir, ctl);
    detect(dir, ctl);
    bd_rmdir(dir);
    growth();
    return 0;
}
