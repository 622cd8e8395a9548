/*
 * runs.diff: seconds for `hostrangectl diff BASE NEW` (a whole run of the
 * program, JSON lines to /dev/null) of two run files of 10,000 keys with
 * 10,000 samples each on both sides: 5,000 range keys (100 nodes x 2
 * phases x 25 ranges), each an inclusive and a self population. The
 * values are exact and spread over thousands of distinct nanoseconds
 * (medians of 0.3 to 25 us, one sample in 128 ten times slower); NEW
 * draws fresh samples, a tenth of its keys 10% slower. The files are coded
 * as hostrangectl save writes them: by default (runs.diff) and with
 * --unsorted (runs.diff.unsorted, where diff sorts what it reads).
 *
 * Baseline: reading and decoding both files (every record checked and
 * unpacked, as diff reads them) in this process.
 *
 * Both are CPU seconds (user and system): on a shared machine with two
 * cores, wall time measures the neighbours (it goes to stderr). Each
 * figure is the best of 2. Goal: under 5 s.
 */
#include "config.h"

#include "bench/bench_daemon_util.h"
#include "daemon/run.h"
#include "daemon/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NODES 100
#define PHASES 2
#define RANGES 25
#define SAMPLES 10000
#define RUNKEYS (NODES * PHASES * RANGES)

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return *rng;
}

/* Writes a run file of RUNKEYS keys in run format `format`; keys with
 * k % 10 == 0 are `slow` per mille slower. Each key is coded as
 * hostrangectl save writes it (hrd_runkey_from on an aggregation fed the
 * values in order). */
static void write_run(const char *path, int format, uint64_t seed,
                      unsigned slow)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    struct hrd_run_writer w;
    struct hrd_agg a;
    uint64_t rng = seed;
    char err[8400], node[64], range[32];

    hrd_agg_init(&a);
    a.exact_cap = UINT64_MAX;
    h.format = (uint32_t)format;
    h.host = "bench";
    h.version = PACKAGE_VERSION;
    if (hrd_run_create(&w, path, &h, err, sizeof err) != 0)
        bd_die("%s", err);
    for (size_t k = 0; k < RUNKEYS; k++) {
        Hostrange__RunKey m;
        size_t node_i = k / (PHASES * RANGES), r = k % RANGES;
        uint64_t median = 300 + 1000 * r + 7 * node_i;
        uint32_t ids[4];
        struct hrd_key *key;

        if (k % 10 == 0)
            median += median * slow / 1000;
        snprintf(node, sizeof node, "bench/diff::node[%03zu]", node_i);
        snprintf(range, sizeof range, "layer.%02zu", r);
        ids[0] = hrd_agg_str(&a, node);
        ids[1] = hrd_agg_str(&a, "op");
        ids[2] = hrd_agg_str(&a, "cpu");
        ids[3] = hrd_agg_str(&a, range);
        hrd_agg_rank_node(&a, ids[0]);
        hrd_agg_rank_range(&a, ids[3]);
        key = hrd_agg_key(&a, ids[0], ids[1], ids[2],
                          1 + (uint32_t)(k / RANGES % PHASES), ids[3]);
        if (key == NULL)
            bd_die("out of memory");
        for (size_t i = 0; i < SAMPLES; i++) {
            uint64_t u = next(&rng), v = median / 2 + (u >> 11) % median;

            if ((u & 0x7f) == 0)
                v *= 10;
            if (hrd_agg_add(&a, key, v, v / 2 + (u >> 40) % (v / 2 + 1)) != 0)
                bd_die("out of memory");
        }
        if (hrd_runkey_from(&a, key, format, &m) != 0)
            bd_die("out of memory");
        if (hrd_run_put_key(&w, &m, err, sizeof err) != 0)
            bd_die("%s", err);
        hrd_runkey_clear(&m);
        hrd_agg_key_remove(&a, key);
    }
    if (hrd_run_commit(&w, &e, err, sizeof err) != 0)
        bd_die("%s", err);
    hrd_run_abort(&w);
    hrd_agg_fini(&a);
}

/* Runs hostrangectl diff BASE NEW into out; returns its CPU seconds, and
 * its wall seconds in *wall. */
static double diff(const char *base, const char *new, const char *out,
                   double *wall)
{
    const char *ctl = bd_hostrangectl();
    double t0 = bd_now();
    struct rusage ru;
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        if (freopen(out, "w", stdout) == NULL)
            _exit(126);
        execl(ctl, ctl, "diff", "--format", "jsonl", base, new, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bd_die("%s diff failed", ctl);
    *wall = bd_now() - t0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of this process so far. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads and decodes every record of path; returns the CPU seconds. */
static double decode(const char *path)
{
    struct hrd_run_reader r;
    Hostrange__RunHeader *h = NULL;
    char err[8400];
    double t0 = cpu_now();
    size_t keys = 0;

    if (hrd_run_open(&r, path, &h, err, sizeof err) != 0)
        bd_die("%s", err);
    hostrange__run_header__free_unpacked(h, NULL);
    for (;;) {
        Hostrange__RunKey *k = NULL;
        Hostrange__RunEnd *e = NULL;
        int rc = hrd_run_next(&r, &k, &e, err, sizeof err);

        if (rc < 0)
            bd_die("%s", err);
        if (rc == 2) {
            hostrange__run_end__free_unpacked(e, NULL);
            break;
        }
        keys++;
        hostrange__run_key__free_unpacked(k, NULL);
    }
    hrd_run_close(&r);
    if (keys != RUNKEYS)
        bd_die("%s: %zu keys, not %d", path, keys, RUNKEYS);
    return cpu_now() - t0;
}

/* Writes both files in `format`, diffs them twice, checks the output and
 * reports the best figure as `name`. */
static void measure(const char *name, const char *dir, int format)
{
    char base[400], new[400], out[400], line[4096];
    double best_diff = 1e30, best_read = 1e30, wall = 1e30, w;
    size_t rows = 0, slower = 0;
    FILE *f;

    snprintf(base, sizeof base, "%s/base.hrs", dir);
    snprintf(new, sizeof new, "%s/new.hrs", dir);
    snprintf(out, sizeof out, "%s/diff.jsonl", dir);
    write_run(base, format, 0x9e3779b97f4a7c15ull, 0);
    write_run(new, format, 0xd1b54a32d192ed03ull, 100);
    for (int round = 0; round < 2; round++) {
        double t = diff(base, new, out, &w);

        if (t < best_diff)
            best_diff = t;
        if (w < wall)
            wall = w;
        t = decode(base) + decode(new);
        if (t < best_read)
            best_read = t;
    }
    /* Every key compared, with 10,000 samples a side. */
    f = fopen(out, "r");
    if (f == NULL)
        bd_die("no output of diff");
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, "\"base_count\":10000,\"new_count\":10000,") == NULL)
            bd_die("a row without 10000 samples a side: %s", line);
        if (strstr(line, "\"flag\":\"slower\"") != NULL)
            slower++;
        rows++;
    }
    fclose(f);
    if (rows != 2 * RUNKEYS)
        bd_die("%zu rows, not %d", rows, 2 * RUNKEYS);
    fprintf(stderr, "%s: %zu keys, %zu flagged slower; %.3f CPU s (%.3f s), "
            "decoding %.3f CPU s\n", name, rows, slower, best_diff, wall,
            best_read);
    unlink(base);
    unlink(new);
    unlink(out);
    bd_report(name, best_diff, "s", best_read);
}

int main(void)
{
    char dir[300];

    bd_tempdir(dir, sizeof dir, "runs-diff");
    measure("runs.diff", dir, 1);
    measure("runs.diff.unsorted", dir, HRD_RUN_FORMAT);
    bd_rmdir(dir);
    return 0;
}
