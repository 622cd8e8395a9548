/*
 * hostrangectl merge of many run files, as a process: its peak memory
 * (the kernel's count of its resident pages) stays within --max-memory
 * and a few MiB above that of a merge of one small file, for inputs of
 * run format 1 and 2 and outputs of either, whether the keys it joins fit
 * or must become histograms; the result holds every event of every input;
 * and on a terminal it shows its progress.
 */
#include "config.h"

#include "lib/agg/agg.h"
#include "lib/run/run.h"
#include "proto/protocol.h"
#include "tests/lib/harness.h"
#include "tests/lib/harness_runfile.h"

#include <errno.h>
#include <malloc.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* Built with AddressSanitizer, the programs' memory is mostly the
 * sanitizer's (its shadow and the quarantine of freed blocks): the merges
 * run and are checked, their peaks are not. */
#define FILES 24
#define SHARED 6      /* keys in every file */
#define OWN 2         /* keys in one file only */
#define EVENTS 20000  /* per key and file */
/* What --max-memory does not count: the allocator's and the inputs'
 * buffers, a few MiB at most (hostrangectl --help), and pages the kernel
 * may give in huge pages. */
#define SLACK (6u << 20)

static char dir[256];

/* Writes input `i` in run format `format`: SHARED keys every input has and
 * OWN of its own, EVENTS range events each (of 0.5 to 20 us; self times
 * below). */
static void write_input(const char *path, int format, unsigned i)
{
    struct harness_runfile f;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (i + 1);
    char node[64], range[32];

    harness_runfile_create(&f, path, format);
    for (unsigned k = 0; k < SHARED + OWN; k++) {
        struct hra_key *key;

        if (k < SHARED)
            snprintf(node, sizeof node, "merge::shared[%u]", k / 2);
        else
            snprintf(node, sizeof node, "merge::own[%u.%u]", i, k);
        snprintf(range, sizeof range, "range.%u", k % 2);
        key = harness_runfile_key(&f, node, HRP_PHASE_WARM, range);
        harness_runfile_add_random(&f, key, EVENTS, 500, 20000, &rng);
        harness_runfile_put(&f, key);
    }
    harness_runfile_commit(&f);
}

/* Runs argv (stdout and stderr to /dev/null) and returns its peak resident
 * memory in bytes; fails the test unless it exits 0. */
static uint64_t peak_of(char *const argv[])
{
    struct rusage ru;
    int status;
    pid_t pid;

    /* A child's peak counts the pages it shares with this process until
     * it runs the program: give back what this process freed first. */
    malloc_trim(0);
    pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL ||
            freopen("/dev/null", "w", stderr) == NULL)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    if (!harness_exited(status, 0))
        fail_msg("%s %s failed: status %d", argv[0], argv[1], status);
    return (uint64_t)ru.ru_maxrss << 10;
}

static int setup(void **state)
{
    (void)state;
    harness_mkdtemp(dir, sizeof dir, "merge-memory");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    harness_rm_rf(dir);
    return 0;
}

/* Merges FILES inputs of format `in_format` under several budgets, into
 * both formats. */
static void merge_within(int in_format)
{
    static const char *const budgets[] = { "4M", "16M", "256M" };
    char *ctl = (char *)harness_program("HOSTRANGECTL");
    char paths[FILES][300], out[300], one[300], mem[64];
    char *argv[FILES + 8];
    uint64_t base, peak, events;
    size_t keys, exact;

    for (unsigned i = 0; i < FILES; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/in%u.%d.hrs", dir, i,
                 in_format);
        write_input(paths[i], in_format, i);
    }
    snprintf(out, sizeof out, "%s/out.hrs", dir);
    snprintf(one, sizeof one, "%s/one.hrs", dir);
    /* The program itself: a merge of one small file. */
    write_input(one, 1, 999);
    argv[0] = ctl;
    argv[1] = "merge";
    argv[2] = "-o";
    argv[3] = out;
    argv[4] = one;
    argv[5] = NULL;
    base = peak_of(argv);
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
        for (int unsorted = 0; unsorted < 2; unsorted++) {
            uint64_t limit;
            size_t n = 0;

            argv[n++] = ctl;
            argv[n++] = "merge";
            argv[n++] = "-o";
            argv[n++] = out;
            snprintf(mem, sizeof mem, "--max-memory=%s", budgets[b]);
            argv[n++] = mem;
            if (unsorted)
                argv[n++] = "--unsorted";
            for (unsigned i = 0; i < FILES; i++)
                argv[n++] = paths[i];
            argv[n] = NULL;
            peak = peak_of(argv);
            limit = strtoull(budgets[b], NULL, 10) << 20;
            print_message("inputs of format %d, %s%s: peak %.1f MiB above "
                          "the program's %.1f MiB\n", in_format, mem,
                          unsorted ? " --unsorted" : "",
                          (double)(peak > base ? peak - base : 0) / 1048576,
                          (double)base / 1048576);
            if (!HARNESS_BUILT_WITH_ASAN && peak > base + limit + SLACK)
                fail_msg("%s%s: peak %llu bytes, above %llu + %llu + %u",
                         mem, unsorted ? " --unsorted" : "",
                         (unsigned long long)peak,
                         (unsigned long long)base,
                         (unsigned long long)limit, SLACK);
            /* Every event of every input, in SHARED + FILES * OWN keys;
             * under the smallest budget some became histograms, under
             * the largest none did. */
            harness_runfile_count(out, &keys, &events, &exact);
            assert_int_equal(keys, SHARED + FILES * OWN);
            assert_int_equal(events,
                             (uint64_t)FILES * (SHARED + OWN) * EVENTS);
            if (b == 0)
                assert_true(exact < keys);
            if (b == sizeof budgets / sizeof *budgets - 1)
                assert_int_equal(exact, keys);
        }
    }
}

static void test_format1_inputs(void **state)
{
    (void)state;
    merge_within(1);
}

static void test_format2_inputs(void **state)
{
    (void)state;
    merge_within(HRR_FORMAT_NEWEST);
}

/* On a terminal (stderr), merge shows which file it reads and what it
 * writes. */
static void test_progress_on_terminal(void **state)
{
    char *ctl = (char *)harness_program("HOSTRANGECTL");
    char a[300], b[300], out[300], text[65536];
    size_t len = 0;
    int master, status;
    pid_t pid;

    (void)state;
    snprintf(a, sizeof a, "%s/p1.hrs", dir);
    snprintf(b, sizeof b, "%s/p2.hrs", dir);
    snprintf(out, sizeof out, "%s/pout.hrs", dir);
    write_input(a, 1, 1);
    write_input(b, 1, 2);
    pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(ctl, ctl, "merge", "-o", out, a, b, (char *)NULL);
        _exit(127);
    }
    for (;;) {
        ssize_t n = read(master, text + len, sizeof text - 1 - len);

        if (n > 0) {
            len += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break; /* EIO once the child has gone */
    }
    text[len] = '\0';
    close(master);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(harness_exited(status, 0));
    if (strstr(text, "merge: file 1 of 2") == NULL ||
        strstr(text, "merge: file 2 of 2") == NULL ||
        strstr(text, "merge: writing") == NULL ||
        strstr(text, "merged 2 files into") == NULL)
        fail_msg("no progress shown: '%s'", text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_format1_inputs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_format2_inputs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_progress_on_terminal, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
