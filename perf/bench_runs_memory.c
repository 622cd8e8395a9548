/*
 * runs.merge.memory: the peak memory of `hostrangectl merge
 * --max-memory=SIZE` of 100 run files of 1 million range events each, as
 * the kernel counts it (its resident pages, ru_maxrss). Each file holds 8
 * keys that every file has (125,000 events each: joined, or loaded and,
 * past the budget, made histograms) and 2 keys of its own (copied). The
 * figures are for SIZE 64M and 1G, into run format 1 (the default) and 2
 * (--unsorted); the files are of format 1.
 *
 * Baseline: SIZE plus the peak of a merge of one small file (the program
 * itself), measured in the same run; the ratio is at most 1 when the
 * merge keeps to its budget. The CPU seconds and the size of the output
 * go to stderr.
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"
#include "tests/lib/harness_runfile.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILES 100
#define SHARED 8
#define OWN 2
#define SHARED_EVENTS 120000u
#define OWN_EVENTS 20000u /* 8 x 120,000 + 2 x 20,000 = 1,000,000 */

/* Writes file i (run format 1), or with `small` a file of one key of 10
 * events. */
static void write_input(const char *path, unsigned i, int small)
{
    struct harness_runfile f;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (i + 1);
    char node[64], range[32];

    harness_runfile_create(&f, path, 1);
    for (unsigned k = 0; k < (small ? 1u : SHARED + OWN); k++) {
        struct hra_key *key;
        unsigned events = small ? 10 : k < SHARED ? SHARED_EVENTS
                                                  : OWN_EVENTS;

        if (k < SHARED)
            snprintf(node, sizeof node, "bench/memory::shared[%u]", k / 4);
        else
            snprintf(node, sizeof node, "bench/memory::own[%03u]", i);
        snprintf(range, sizeof range, "layer.%u", k % 4);
        key = harness_runfile_key(&f, node, HRP_PHASE_WARM, range);
        harness_runfile_add_random(&f, key, events, 300, 3000 + 2000 * k,
                                   &rng);
        harness_runfile_put(&f, key);
    }
    harness_runfile_commit(&f);
}

/* Runs argv (its output to /dev/null); returns its peak resident memory
 * in MiB and its CPU seconds in *cpu. */
static double peak_of(char *const argv[], double *cpu)
{
    struct rusage ru;
    int status;
    pid_t pid;

    /* A child's peak counts the pages it shares with this process until
     * it runs the program: give back what this process freed first. */
    malloc_trim(0);
    pid = fork();

    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bd_die("%s %s failed", argv[0], argv[1]);
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    return (double)ru.ru_maxrss / 1024;
}

int main(void)
{
    static const struct {
        const char *size;
        double mib;
    } budgets[] = { { "64M", 64 }, { "1G", 1024 } };
    char dir[300], (*paths)[400] = calloc(FILES + 1, sizeof *paths);
    char out[400], mem[64], name[64];
    char *argv[FILES + 8];
    double program, cpu;
    struct stat st;

    if (paths == NULL)
        bd_die("out of memory");
    bd_tempdir(dir, sizeof dir, "runs-memory");
    for (unsigned i = 0; i < FILES; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/in%03u.hrs", dir, i);
        write_input(paths[i], i, 0);
    }
    snprintf(paths[FILES], sizeof paths[FILES], "%s/small.hrs", dir);
    write_input(paths[FILES], 0, 1);
    snprintf(out, sizeof out, "%s/out.hrs", dir);
    argv[0] = (char *)bd_hostrangectl();
    argv[1] = "merge";
    argv[2] = "-o";
    argv[3] = out;
    argv[4] = paths[FILES];
    argv[5] = NULL;
    program = peak_of(argv, &cpu);
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        for (int unsorted = 0; unsorted < 2; unsorted++) {
            size_t n = 4;
            double peak;

            snprintf(mem, sizeof mem, "--max-memory=%s", budgets[b].size);
            argv[n++] = mem;
            if (unsorted)
                argv[n++] = "--unsorted";
            for (unsigned i = 0; i < FILES; i++)
                argv[n++] = paths[i];
            argv[n] = NULL;
            peak = peak_of(argv, &cpu);
            if (stat(out, &st) != 0)
                bd_die("no output");
            fprintf(stderr, "runs.merge.memory %s%s: peak %.1f MiB (the "
                    "program alone %.1f MiB), %.2f CPU s, %.1f MB "
                    "written\n", mem, unsorted ? " --unsorted" : "", peak,
                    program, cpu, (double)st.st_size / 1e6);
            snprintf(name, sizeof name, "runs.merge.memory.%s%s",
                     budgets[b].size, unsorted ? ".unsorted" : "");
            bd_report(name, peak, "MiB", budgets[b].mib + program);
        }
    }
    bd_rmdir(dir);
    free(paths);
    return 0;
}
