/*
 * The run history (hostrangectl history) in `make bench`:
 *
 * - the power of detect's method, on synthetic series of 50 runs with 2%
 *   run-to-run noise (multiplicative: normal with a standard deviation of
 *   2%, and uniform within +-2%), with the defaults: the
 *   share of 5% steps (at a run drawn from 10 to 40) found at their run or
 *   the next (goal >= 0.95), the share of noise-only series reported
 *   changed (goal <= 0.01), and the same with one +50% spike per series
 *   (goal <= 0.01); each as {"value": share, "baseline": goal}; and,
 *   under normal noise, the share that an oracle knowing both levels and
 *   the noise places at their run or the next, the bound of any method;
 * - what it costs: history add of a run of 2,000 keys into SQLite against
 *   reading the run with dump --from (CPU seconds, best of 3); the bytes
 *   of the database per run of 2,000 keys, SQLite and PostgreSQL (a
 *   server started here, when one can be); detect's milliseconds per
 *   series for histories of 100 to 500 runs (of 200 keys each).
 */
#include "config.h"

#include "lib/stat/changepoint.h"
#include "perf/bench_daemon_util.h"
#include "tests/lib/harness_runfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SERIES 2000
#define RUNS 50
#define NOISE 0.02

static uint64_t rng_state;

static double uniform(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* The run-to-run noise: normal with a standard deviation of NOISE, or
 * uniform within +-NOISE. */
static int uniform_noise;

static void noise(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = 1000 * (1 + NOISE * (uniform_noise ? 2 * uniform() - 1
                                                  : gauss()));
}

static void report(const char *what, double value, double goal)
{
    char name[128];

    snprintf(name, sizeof name, "history.power.%s.%s",
             uniform_noise ? "uniform2pct" : "normal2pct", what);
    bd_report(name, value, "share", goal);
}

/*
 * The bound no method can pass: the later run c of the likeliest pair of
 * neighbouring runs (c - 1, c) for a step of the series x[0..RUNS), found
 * by an oracle that knows both levels, the normal noise and that the step
 * lies at a run from 10 to 40 (the exact posterior of the step's run).
 */
static size_t oracle(const double *x)
{
    double ll[RUNS + 1], acc = 0, best = -1e300;
    size_t at = 10;

    for (size_t i = RUNS; i-- > 0;) {
        double z0 = (x[i] - 1000) / (1000 * NOISE);
        double z1 = (x[i] - 1050) / (1050 * NOISE);

        acc += (z0 * z0 - z1 * z1) / 2 - log(1.05);
        ll[i] = acc;
    }
    for (size_t c = 10; c <= 41; c++) {
        double a = c > 10 ? ll[c - 1] : -1e300, b = c <= 40 ? ll[c] : -1e300;
        double hi = fmax(a, b), pair = hi + log(exp(a - hi) + exp(b - hi));

        if (pair > best) {
            best = pair;
            at = c;
        }
    }
    return at;
}

static void power(void)
{
    /* Series of real numbers: no clock step, no tail check. */
    const struct hrs_cp_opts o = { HRS_CP_ALPHA_DEFAULT,
                                   HRS_CP_MIN_CHANGE_DEFAULT,
                                   HRS_CP_WINDOW_DEFAULT, 0, 0 };
    struct hrs_cp cp[RUNS];
    double x[RUNS];
    size_t right = 0, near = 0, found = 0, fp = 0, spike_fp = 0, late = 0;
    size_t bound = 0;
    double t0;

    rng_state = 42;
    t0 = bd_now();
    for (int s = 0; s < SERIES; s++) {
        size_t at = 10 + (size_t)(uniform() * 31), n;
        int hit = 0, hit_near = 0;

        noise(x, RUNS);
        for (size_t i = at; i < RUNS; i++)
            x[i] *= 1.05;
        n = (size_t)hrs_cp_detect(x, RUNS, &o, cp, RUNS);
        found += n > 0;
        for (size_t i = 0; i < n; i++) {
            hit |= cp[i].at == at || cp[i].at == at + 1;
            hit_near |= cp[i].at + 1 >= at && cp[i].at <= at + 1;
        }
        right += hit;
        near += hit_near;
        bound += oracle(x) - at <= 1; /* unsigned: at or at + 1 */
        /* The step in the last --window runs. */
        noise(x, RUNS);
        for (size_t i = RUNS - HRS_CP_WINDOW_DEFAULT; i < RUNS; i++)
            x[i] *= 1.05;
        n = (size_t)hrs_cp_detect(x, RUNS, &o, cp, RUNS);
        late += n > 0 && cp[n - 1].at >= RUNS - HRS_CP_WINDOW_DEFAULT;
        noise(x, RUNS);
        fp += hrs_cp_detect(x, RUNS, &o, cp, RUNS) > 0;
        noise(x, RUNS);
        x[(size_t)(uniform() * RUNS)] *= 1.5;
        spike_fp += hrs_cp_detect(x, RUNS, &o, cp, RUNS) > 0;
    }
    fprintf(stderr, "history.power: %d series of %d runs, %s %.0f%% noise, "
            "%.1f us per series: step 5%% at its run or the next %zu, "
            "within a run %zu, found at all %zu, in the last %d runs %zu; "
            "noise only %zu; one +50%% spike %zu\n", SERIES, RUNS,
            uniform_noise ? "uniform +-" : "normal, sd", NOISE * 100,
            (bd_now() - t0) / (4.0 * SERIES) * 1e6, right, near, found,
            HRS_CP_WINDOW_DEFAULT, late, fp, spike_fp);
    /* The oracle's likelihood is the normal noise's. */
    if (!uniform_noise) {
        fprintf(stderr, "history.power: an oracle knowing both levels and "
                "the noise places %zu of the steps at their run or the "
                "next\n", bound);
        report("step5_at_run_or_next_oracle", (double)bound / SERIES, 0.95);
    }
    report("step5_at_run_or_next", (double)right / SERIES, 0.95);
    report("step5_within_one_run", (double)near / SERIES, 0.95);
    report("step5_in_last_window", (double)late / SERIES, 0.95);
    report("noise_false_positive", (double)fp / SERIES, 0.01);
    report("spike_false_positive", (double)spike_fp / SERIES, 0.01);
}

/* A run file of nkeys keys, each of 5 events around v ns, of id
 * (number) id, time `t` seconds. */
static void write_run(const char *path, size_t nkeys, double v, unsigned id,
                      unsigned t)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunFingerprint fp = HOSTRANGE__RUN_FINGERPRINT__INIT;
    Hostrange__RunMeta m = HOSTRANGE__RUN_META__INIT, *mp = &m;
    struct harness_runfile f;
    char idbuf[40], tbuf[32], node[64], range[64];

    snprintf(idbuf, sizeof idbuf, "%032x", id);
    snprintf(tbuf, sizeof tbuf, "%u", t);
    fp.host = "bench";
    fp.cpu_model = "bench";
    fp.cores = 1;
    fp.kernel = "bench";
    fp.clock_path = "fast";
    h.host = "bench";
    h.id = idbuf;
    h.fingerprint = &fp;
    m.key = "time";
    m.value = tbuf;
    h.meta = &mp;
    h.n_meta = 1;
    harness_runfile_create_header(&f, path, 1, &h);
    for (size_t k = 0; k < nkeys; k++) {
        uint64_t ns = (uint64_t)(v * (1 + NOISE * gauss()));
        struct hra_key *key;

        snprintf(node, sizeof node, "tests/test_%zu.py::case", k / 10);
        snprintf(range, sizeof range, "layer%zu.call", k % 10);
        key = harness_runfile_key(&f, node, 2, range);
        for (uint64_t d = 0; d < 5; d++)
            harness_runfile_add(&f, key, ns + d, ns / 2);
        harness_runfile_put(&f, key);
    }
    harness_runfile_commit(&f);
    hra_fini(&f.a);
}

static double file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (double)st.st_size : 0;
}

/* The run of 2,000 keys every figure compares with. */
static char run0_path[300];

/*
 * The bytes per run of 2,000 keys in PostgreSQL: a server started here as
 * the tests start theirs (Debian's postgresql-15, as the postgres user when
 * run as root, a Unix socket in a temporary directory), 20 runs added after
 * a first, the database's size before and after (each after VACUUM).
 * Says why on stderr, and reports nothing, when no server can be started.
 */
static void pg_bytes(const char *dir, const char *ctl)
{
    static const char script[] =
        "set -u; pgbin=/usr/lib/postgresql/15/bin; d=$1; ctl=$2\n"
        "[ -x $pgbin/initdb ] && command -v psql >/dev/null || exit 77\n"
        "pg=$(mktemp -d ${TMPDIR:-/tmp}/hostrange-bench-pg-XXXXXX) || exit 1\n"
        "as() { if [ $(id -u) -eq 0 ]; then runuser -u postgres -- \"$@\"; "
        "else \"$@\"; fi; }\n"
        "[ $(id -u) -eq 0 ] && chown postgres $pg\n"
        "trap 'as $pgbin/pg_ctl -D $pg/data -m immediate stop >/dev/null "
        "2>&1; rm -rf $pg' EXIT\n"
        "as $pgbin/initdb -D $pg/data -A trust -U hostrange --no-locale "
        "-E UTF8 --no-sync >/dev/null 2>&1 || exit 77\n"
        "as $pgbin/pg_ctl -D $pg/data -w -l $pg/log -o \"-k $pg -c "
        "listen_addresses= -F\" start >/dev/null 2>&1 || exit 77\n"
        "db=\"host=$pg user=hostrange dbname=postgres\"\n"
        "size() { psql -X -q \"$db\" -c VACUUM >/dev/null && psql -X -tA "
        "\"$db\" -c \"SELECT pg_database_size('postgres')\"; }\n"
        "$ctl history add --db \"$db\" $d/p0.hrs >/dev/null || exit 1\n"
        "a=$(size) || exit 1\n"
        "$ctl history add --db \"$db\" $d/p[1-9].hrs $d/p[1-9][0-9].hrs "
        ">/dev/null || exit 1\n"
        "b=$(size) || exit 1\n"
        "echo $(( (b - a) / 20 )) > $d/pg.bytes\n";
    char path[300], cmd[1200];
    FILE *f;
    double bytes;
    int st;

    for (unsigned r = 0; r <= 20; r++) {
        snprintf(path, sizeof path, "%s/p%u.hrs", dir, r);
        write_run(path, 2000, 1000, 5000 + r, 1700000000 + r);
    }
    snprintf(path, sizeof path, "%s/pg.sh", dir);
    if ((f = fopen(path, "w")) == NULL || fputs(script, f) == EOF ||
        fclose(f) != 0)
        bd_die("cannot write %s", path);
    snprintf(cmd, sizeof cmd, "sh '%s' '%s' '%s'", path, dir, ctl);
    st = system(cmd);
    snprintf(path, sizeof path, "%s/pg.bytes", dir);
    if (st != 0 || (f = fopen(path, "r")) == NULL) {
        fprintf(stderr, "history.bytes: no PostgreSQL server could be "
                "started (postgresql-15): no figure\n");
        return;
    }
    if (fscanf(f, "%lf", &bytes) == 1)
        bd_report("history.postgresql_bytes_per_run_2000_keys", bytes, "B",
                  file_size(run0_path));
    fclose(f);
}

static void cost(void)
{
    char *ctl = (char *)bd_hostrangectl();
    char dir[256], run0[300], db[300], path[300];
    double best_add = 1e30, best_dump = 1e30, one = 0, ms100 = 0;
    enum { BYTES_RUNS = 20, DETECT_KEYS = 200 };

    bd_tempdir(dir, sizeof dir, "history");
    rng_state = 7;
    snprintf(run0, sizeof run0, "%s/run0.hrs", dir);
    snprintf(run0_path, sizeof run0_path, "%s", run0);
    write_run(run0, 2000, 1000, 1, 1700000000);
    for (int r = 0; r < 3; r++) {
        char *add[] = { ctl, "history", "add", "--db", db, run0, NULL };
        char *dump[] = { ctl, "dump", "--from", run0, NULL };
        double t;

        snprintf(db, sizeof db, "%s/add%d.db", dir, r);
        if ((t = bd_run_cpu(add, 0, NULL)) < best_add)
            best_add = t;
        if ((t = bd_run_cpu(dump, 0, NULL)) < best_dump)
            best_dump = t;
    }
    fprintf(stderr, "history.add: a run of 2000 keys into SQLite %.3f CPU s, "
            "dump --from %.3f CPU s\n", best_add, best_dump);
    bd_report("history.add_2000_keys_vs_dump_from", best_add, "s",
              best_dump);

    /* Bytes per run: BYTES_RUNS runs of 2000 keys, the file after the
     * last add (its WAL checkpointed when the last connection closed). */
    snprintf(db, sizeof db, "%s/bytes.db", dir);
    for (unsigned r = 0; r < BYTES_RUNS; r++) {
        char *add[] = { ctl, "history", "add", "--db", db, path, NULL };

        snprintf(path, sizeof path, "%s/b%u.hrs", dir, r);
        write_run(path, 2000, 1000, 100 + r, 1700000000 + r);
        bd_run_cpu(add, 0, NULL);
        if (r == 0)
            one = file_size(db);
        unlink(path);
    }
    fprintf(stderr, "history.bytes: %.0f bytes after 1 run, %.0f after "
            "%d\n", one, file_size(db), BYTES_RUNS);
    bd_report("history.sqlite_bytes_per_run_2000_keys",
              (file_size(db) - one) / (BYTES_RUNS - 1), "B",
              file_size(run0));

    pg_bytes(dir, ctl);

    /* detect: ms per series as the history grows (a 5% step at run 50). */
    snprintf(db, sizeof db, "%s/detect.db", dir);
    for (unsigned n = 100; n <= 500; n += 100) {
        char *add[110];
        char files[100][300];
        char *detect[] = { ctl, "history", "detect", "--db", db, NULL };
        double t, best = 1e30;
        char name[64];
        int k = 0;

        add[k++] = ctl;
        add[k++] = "history";
        add[k++] = "add";
        add[k++] = "--db";
        add[k++] = db;
        for (unsigned r = n - 100; r < n; r++) {
            snprintf(files[r % 100], sizeof files[0], "%s/d%u.hrs", dir, r);
            write_run(files[r % 100], DETECT_KEYS, r >= 50 ? 1050 : 1000,
                      1000 + r, 1700000000 + r);
            add[k++] = files[r % 100];
        }
        add[k] = NULL;
        bd_run_cpu(add, 0, NULL);
        for (int i = 0; i < 100; i++)
            unlink(files[i]);
        for (int r = 0; r < 3; r++) {
            if ((t = bd_run_cpu(detect, 0, NULL)) < best)
                best = t;
        }
        /* Two series (inclusive, self) per key. */
        snprintf(name, sizeof name, "history.detect_ms_per_series_n%u", n);
        fprintf(stderr, "%s: %.3f CPU s for %d series\n", name, best,
                2 * DETECT_KEYS);
        /* The baseline: the figure of 100 runs (the ratio: its growth). */
        if (n == 100)
            ms100 = best * 1e3 / (2 * DETECT_KEYS);
        bd_report(name, best * 1e3 / (2 * DETECT_KEYS), "ms", ms100);
    }
    bd_rmdir(dir);
}

int main(int argc, char **argv)
{
    uniform_noise = 0;
    power();
    uniform_noise = 1;
    power();
    uniform_noise = 0;
    if (argc < 2 || strcmp(argv[1], "--power") != 0)
        cost();
    return 0;
}
