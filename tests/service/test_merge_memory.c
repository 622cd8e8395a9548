/*
 * hostrangectl merge of many run files, as a process: its peak memory
 * (the kernel's count of its resident pages) stays within --max-memory
 * and a few MiB above that of a merge of one small file, for inputs of run format 1 and
 * 2 and outputs of either, whether the keys it joins fit or must become
 * histograms; the result holds every event of every input; and on a
 * terminal it shows its progress.
 */
#include "config.h"

#include "daemon/agg.h"
#include "daemon/run.h"
#include "proto/protocol.h"
#include "tests/lib/harness.h"

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

/* Built with AddressSanitizer (gcc or clang), the programs' memory is
 * mostly the sanitizer's (its shadow and the quarantine of freed blocks):
 * the merges run and are checked, their peaks are not. */
#if defined(__SANITIZE_ADDRESS__)
#define BUILT_WITH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILT_WITH_ASAN 1
#endif
#endif
#ifndef BUILT_WITH_ASAN
#define BUILT_WITH_ASAN 0
#endif

#define FILES 24
#define SHARED 6      /* keys in every file */
#define OWN 2         /* keys in one file only */
#define EVENTS 20000  /* per key and file */
/* What --max-memory does not count: the allocator's and the inputs'
 * buffers, a few MiB at most (hostrangectl --help). */
#define SLACK (4u << 20)

static char dir[256];

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return *rng;
}

/* Writes input `i` in run format `format`: SHARED keys every input has and
 * OWN of its own, EVENTS range events each (of 0.5 to 20 us; self times
 * below). */
static void write_input(const char *path, int format, unsigned i)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd e = HOSTRANGE__RUN_END__INIT;
    struct hrd_run_writer w;
    struct hrd_agg a;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (i + 1);
    char err[8400], node[64], range[32];

    hrd_agg_init(&a);
    a.exact_cap = UINT64_MAX;
    h.format = (uint32_t)format;
    h.host = "test";
    h.version = PACKAGE_VERSION;
    assert_int_equal(hrd_run_create(&w, path, &h, err, sizeof err), 0);
    for (unsigned k = 0; k < SHARED + OWN; k++) {
        Hostrange__RunKey m;
        uint32_t ids[4];
        struct hrd_key *key;

        if (k < SHARED)
            snprintf(node, sizeof node, "merge::shared[%u]", k / 2);
        else
            snprintf(node, sizeof node, "merge::own[%u.%u]", i, k);
        snprintf(range, sizeof range, "range.%u", k % 2);
        ids[0] = hrd_agg_str(&a, node);
        ids[1] = hrd_agg_str(&a, "op");
        ids[2] = hrd_agg_str(&a, "cpu");
        ids[3] = hrd_agg_str(&a, range);
        hrd_agg_rank_node(&a, ids[0]);
        hrd_agg_rank_range(&a, ids[3]);
        key = hrd_agg_key(&a, ids[0], ids[1], ids[2], HRP_PHASE_WARM, ids[3]);
        assert_non_null(key);
        for (unsigned n = 0; n < EVENTS; n++) {
            uint64_t u = next(&rng), v = 500 + (u >> 11) % 20000;

            assert_int_equal(hrd_agg_add(&a, key, v, v / 2 + (u >> 40) %
                                                         (v / 2 + 1)), 0);
        }
        assert_int_equal(hrd_runkey_from(&a, key, format, &m), 0);
        assert_int_equal(hrd_run_put_key(&w, &m, err, sizeof err), 0);
        hrd_runkey_clear(&m);
        hrd_agg_key_remove(&a, key);
    }
    assert_int_equal(hrd_run_commit(&w, &e, err, sizeof err), 0);
    hrd_run_abort(&w);
    hrd_agg_fini(&a);
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

/* The events (range events and records) of every key of a run file, and
 * how many of its keys are exact. */
static void count_events(const char *path, uint64_t *events, size_t *keys,
                         size_t *exact)
{
    struct hrd_run_reader r;
    Hostrange__RunHeader *h = NULL;
    char err[8400];

    *events = 0;
    *keys = *exact = 0;
    if (hrd_run_open(&r, path, &h, err, sizeof err) != 0)
        fail_msg("%s", err);
    hostrange__run_header__free_unpacked(h, NULL);
    for (;;) {
        Hostrange__RunKey *k = NULL;
        Hostrange__RunEnd *e = NULL;
        int rc = hrd_run_next(&r, &k, &e, err, sizeof err);

        if (rc < 0)
            fail_msg("%s", err);
        if (rc == 2) {
            hostrange__run_end__free_unpacked(e, NULL);
            break;
        }
        *events += k->pairs + k->records;
        (*keys)++;
        *exact += k->inclusive_hist == NULL;
        hostrange__run_key__free_unpacked(k, NULL);
    }
    hrd_run_close(&r);
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
            if (!BUILT_WITH_ASAN && peak > base + limit + SLACK)
                fail_msg("%s%s: peak %llu bytes, above %llu + %llu + %u",
                         mem, unsorted ? " --unsorted" : "",
                         (unsigned long long)peak,
                         (unsigned long long)base,
                         (unsigned long long)limit, SLACK);
            /* Every event of every input, in SHARED + FILES * OWN keys;
             * under the smallest budget some became histograms, under
             * the largest none did. */
            count_events(out, &events, &keys, &exact);
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
    merge_within(HRD_RUN_FORMAT);
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
