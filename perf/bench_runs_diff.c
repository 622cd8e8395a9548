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

#include "perf/bench_daemon_util.h"
#include "lib/run/run.h"
#include "tests/lib/harness_runfile.h"

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
 * hostrangectl save writes it (harness_runfile.h). */
static void write_run(const char *path, int format, uint64_t seed,
                      unsigned slow)
{
    struct harness_runfile f;
    uint64_t rng = seed;
    char node[64], range[32];

    harness_runfile_create(&f, path, format);
    for (size_t k = 0; k < RUNKEYS; k++) {
        size_t node_i = k / (PHASES * RANGES), r = k % RANGES;
        uint64_t median = 300 + 1000 * r + 7 * node_i;
        struct hra_key *key;

        if (k % 10 == 0)
            median += median * slow / 1000;
        snprintf(node, sizeof node, "bench/diff::node[%03zu]", node_i);
        snprintf(range, sizeof range, "layer.%02zu", r);
        key = harness_runfile_key(&f, node,
                                  1 + (uint32_t)(k / RANGES % PHASES), range);
        for (size_t i = 0; i < SAMPLES; i++) {
            uint64_t u = next(&rng), v = median / 2 + (u >> 11) % median;

            if ((u & 0x7f) == 0)
                v *= 10;
            harness_runfile_add(&f, key, v, v / 2 + (u >> 40) % (v / 2 + 1));
        }
        harness_runfile_put(&f, key);
    }
    harness_runfile_commit(&f);
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
    double t0 = cpu_now();
    uint64_t events;
    size_t keys, exact;

    harness_runfile_count(path, &keys, &events, &exact);
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
    measure("runs.diff.unsorted", dir, HRR_FORMAT_NEWEST);
    bd_rmdir(dir);
    return 0;
}
