/*
 * The clock (client/clock.c): the TSC's calibration against
 * CLOCK_MONOTONIC, and HOSTRANGE_CLOCK: the clock and the clock path.
 * Also the client's other settings that are numbers
 * (HOSTRANGE_FLUSH_TIMEOUT_MS, HOSTRANGE_BUFFER_MB, HOSTRANGE_SPOOL_MB),
 * read by hrp_env_number.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "client/client.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"

static void test_override(void **state)
{
    (void)state;
    setenv("HOSTRANGE_CLOCK", "monotonic", 1);
    hr__clock_init();
    assert_int_equal(hr__g_tsc, 0);
    assert_string_equal(hr_clock_name(), "monotonic");
    /* Monotonic ticks are nanoseconds already. */
    assert_int_equal(hr__clock_ticks_to_ns(123456789), 123456789);
    unsetenv("HOSTRANGE_CLOCK");
}

/* 1 when /proc/cpuinfo names AMD's or Hygon's processors. */
static int cpu_is_amd(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[4096];
    int amd = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "vendor_id", 9) == 0) {
            amd = strstr(line, "AuthenticAMD") != NULL ||
                  strstr(line, "HygonGenuine") != NULL;
            break;
        }
    fclose(f);
    return amd;
}

/* HOSTRANGE_CLOCK's words, in any order: the clock and the path. */
static void test_paths(void **state)
{
    int tsc;

    (void)state;
    unsetenv("HOSTRANGE_CLOCK");
    hr__clock_init();
    tsc = hr__g_tsc;
    assert_int_equal(hr__g_ordered, 0);
    assert_string_equal(hr_clock_path(), "fast");
    /* The fast path's reads: waiting on AMD's processors, plain
     * elsewhere, as /proc/cpuinfo says here. */
    if (!tsc)
        assert_string_equal(hr__clock_order(), "vdso");
    else if (cpu_is_amd())
        assert_true(strcmp(hr__clock_order(), "rdtscp") == 0 ||
                    strcmp(hr__clock_order(), "lfence;rdtsc") == 0);
    else
        assert_string_equal(hr__clock_order(), "rdtsc");
    if (tsc) {
        /* plain and waiting override the processor's default, on the
         * fast path only; the fast path's reads then advance like the
         * clock. */
        setenv("HOSTRANGE_CLOCK", "waiting", 1);
        hr__clock_init();
        assert_true(strcmp(hr__clock_order(), "rdtscp") == 0 ||
                    strcmp(hr__clock_order(), "lfence;rdtsc") == 0);
        assert_true(hr__g_fast == HR__READ_RDTSCP ||
                    hr__g_fast == HR__READ_LFENCE);
        {
            uint64_t a = hr__fast_read(), b = hr__fast_read();

            assert_true(b >= a);
        }
        setenv("HOSTRANGE_CLOCK", "fast,waiting,plain", 1);
        hr__clock_init();
        assert_string_equal(hr__clock_order(), "rdtsc");
        assert_int_equal(hr__g_fast, HR__READ_PLAIN);
        setenv("HOSTRANGE_CLOCK", "waiting,ordered", 1);
        hr__clock_init();
        assert_int_equal(hr__g_fast, 0);
        assert_string_equal(hr__clock_order(), "rdtsc;lfence..lfence;rdtsc");
        setenv("HOSTRANGE_CLOCK", "waiting,monotonic", 1);
        hr__clock_init();
        assert_int_equal(hr__g_fast, 0);
        assert_string_equal(hr__clock_order(), "vdso");
    }
    setenv("HOSTRANGE_CLOCK", "ordered", 1);
    hr__clock_init();
    assert_int_equal(hr__g_ordered, 1);
    assert_int_equal(hr__g_tsc, tsc);
    assert_string_equal(hr_clock_path(), "ordered");
    assert_string_equal(hr__clock_order(),
                        tsc ? "rdtsc;lfence..lfence;rdtsc" : "vdso");
    setenv("HOSTRANGE_CLOCK", "monotonic,ordered", 1);
    hr__clock_init();
    assert_int_equal(hr__g_ordered, 1);
    assert_int_equal(hr__g_tsc, 0);
    assert_string_equal(hr__clock_order(), "vdso");
    /* Words it does not know are ignored; the last of a pair wins. */
    setenv("HOSTRANGE_CLOCK", "ordered, fast,bogus", 1);
    hr__clock_init();
    assert_int_equal(hr__g_ordered, 0);
    assert_int_equal(hr__g_tsc, tsc);
    setenv("HOSTRANGE_CLOCK", "fast,monotonic", 1);
    hr__clock_init();
    assert_int_equal(hr__g_ordered, 0);
    assert_int_equal(hr__g_tsc, 0);
    assert_string_equal(hr_clock_name(), "monotonic");
    unsetenv("HOSTRANGE_CLOCK");
    hr__clock_init();
}

static void test_tsc_matches_monotonic(void **state)
{
    uint64_t m0, m1, t0, t1, tsc_ns, mono_ns;
    double err;

    (void)state;
    unsetenv("HOSTRANGE_CLOCK");
    hr__clock_init();
    if (!hr__g_tsc)
        skip(); /* no invariant TSC here: nothing to calibrate */
    assert_string_equal(hr_clock_name(), "tsc");
    /* A busy-wait of 50 ms, measured by both clocks. */
    m0 = hrp_mono_ns();
    t0 = hr__clock_now();
    while (hrp_mono_ns() - m0 < 50000000u)
        ;
    t1 = hr__clock_now();
    m1 = hrp_mono_ns();
    tsc_ns = hr__clock_ticks_to_ns(t1 - t0);
    mono_ns = m1 - m0;
    err = ((double)tsc_ns - (double)mono_ns) / (double)mono_ns;
    if (err < 0)
        err = -err;
    /* The calibration (over 20 ms) is good to a few parts in 10^5; the two
     * pairs of reads differ by well under a microsecond. */
    if (err > 0.001)
        fail_msg("TSC says %llu ns, CLOCK_MONOTONIC %llu ns",
                 (unsigned long long)tsc_ns, (unsigned long long)mono_ns);
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

#define PAIRS 2000
#define BATCHES 9

enum pair_kind { PAIR_API, PAIR_PLAIN, PAIR_PATH };

/* The least, over BATCHES batches, of the mean ns of PAIRS back-to-back
 * pairs of reads: hr_clock_pair_ns, plain rdtsc, or the reads of the path
 * in use written out here (hr__fast_read, or the ordered path's). */
static double pair_mean(enum pair_kind kind)
{
    double ns_per_tick = (double)hr__clock_mult() / 4294967296.0;
    double least = 1e30;

    for (int b = 0; b < BATCHES; b++) {
        double sum = 0;

        for (int i = 0; i < PAIRS; i++) {
            uint64_t t0, t1;

            if (kind == PAIR_API) {
                sum += hr_clock_pair_ns();
                continue;
            }
            if (kind == PAIR_PLAIN) {
                t0 = __rdtsc();
                t1 = __rdtsc();
            } else if (hr__g_fast) {
                t0 = hr__fast_read();
                t1 = hr__fast_read();
            } else {
                t0 = hr__clock_start(1);
                t1 = hr__clock_end(1);
            }
            sum += (double)(t1 - t0) * ns_per_tick;
        }
        if (sum / PAIRS < least)
            least = sum / PAIRS;
    }
    return least;
}

/* hr_clock_pair_ns under HOSTRANGE_CLOCK=`env`: its pairs cost what the
 * path's own reads cost, not what plain reads do, where this processor
 * tells the two apart by 2 ns or more. Returns 1 when it could tell. */
static int pair_follows(const char *env)
{
    double api, plain, path;

    setenv("HOSTRANGE_CLOCK", env, 1);
    hr__clock_init();
    plain = pair_mean(PAIR_PLAIN);
    path = pair_mean(PAIR_PATH);
    api = pair_mean(PAIR_API);
    print_message("%s: hr_clock_pair_ns %.1f ns, the path's reads %.1f, "
                  "plain reads %.1f\n", env, api, path, plain);
    assert_true(api >= 0 && api < 10000);
    if (path - plain < 2.0)
        return 0;
    assert_true((api > path ? api - path : path - api) <
                (api > plain ? api - plain : plain - api));
    return 1;
}
#endif

/* hostrange-bench --calibrate's calibration.timer: hr_clock_pair_ns reads
 * the clock as the path in use does (waiting reads on the fast path where
 * they are chosen, fenced ones on the ordered path). */
static void test_pair_ns(void **state)
{
    (void)state;
#if defined(__x86_64__) || defined(__i386__)
    int told;

    unsetenv("HOSTRANGE_CLOCK");
    hr__clock_init();
    if (!hr__g_tsc)
        skip(); /* no invariant TSC: no plain or waiting reads */
    (void)hr__clock_mult();
    setenv("HOSTRANGE_CLOCK", "fast,plain", 1);
    hr__clock_init();
    assert_int_equal(hr__g_fast, HR__READ_PLAIN);
    {
        double api = pair_mean(PAIR_API), plain = pair_mean(PAIR_PLAIN);

        print_message("plain: hr_clock_pair_ns %.1f ns, plain reads %.1f\n",
                      api, plain);
        assert_true(api >= 0 && api < plain + 10.0);
    }
    told = pair_follows("waiting");
    told += pair_follows("ordered");
    unsetenv("HOSTRANGE_CLOCK");
    hr__clock_init();
    if (told == 0)
        skip(); /* waiting and fenced reads cost what plain ones do */
#else
    skip();
#endif
}

/* The clock's step is the divisor most blocks of reads agree on: one
 * block that saw two reads a tick apart is outvoted; where half or more
 * of them saw it, the finer step wins; blocks that saw nothing count for
 * nothing. */
static void test_step_vote(void **state)
{
    static const uint64_t one_odd[8] = { 26, 26, 1, 26, 26, 26, 26, 26 };
    static const uint64_t half[8] = { 26, 1, 26, 1, 26, 1, 26, 1 };
    static const uint64_t most_odd[8] = { 1, 1, 1, 1, 1, 26, 26, 1 };
    static const uint64_t coarse[8] = { 52, 26, 26, 26, 78, 26, 26, 26 };
    static const uint64_t some_empty[8] = { 0, 0, 0, 0, 0, 0, 13, 13 };
    static const uint64_t none[8] = { 0 };
    double step;

    (void)state;
    assert_int_equal(hr__clock_step_vote(one_odd, 8), 26);
    assert_int_equal(hr__clock_step_vote(half, 8), 1);
    assert_int_equal(hr__clock_step_vote(most_odd, 8), 1);
    assert_int_equal(hr__clock_step_vote(coarse, 8), 26);
    assert_int_equal(hr__clock_step_vote(some_empty, 8), 13);
    assert_int_equal(hr__clock_step_vote(none, 8), 0);
    /* This machine's clock has a step, and a positive one. */
    hr__clock_init();
    step = hr__clock_step();
    assert_true(step > 0 && step < 1e6);
}

/* A number of the environment is a whole number in its range, else the
 * default: never what its leading digits make. */
static void test_env_numbers(void **state)
{
    (void)state;
    assert_int_equal(hrp_env_number(NULL, 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("0", 0, 100, 7), 0);
    assert_int_equal(hrp_env_number("100", 0, 100, 7), 100);
    assert_int_equal(hrp_env_number("-3", -5, 100, 7), -3);
    assert_int_equal(hrp_env_number("101", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("-1", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("2s", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("64M", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("off", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("1.5", 0, 100, 7), 7);
    assert_int_equal(hrp_env_number("99999999999999999999999", 0, 100, 7),
                     7);
    assert_int_equal(hrp_env_number("-", 0, 100, 7), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_override),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_tsc_matches_monotonic),
        cmocka_unit_test(test_pair_ns),
        cmocka_unit_test(test_step_vote),
        cmocka_unit_test(test_env_numbers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
