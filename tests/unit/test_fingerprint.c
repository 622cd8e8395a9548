/*
 * Machine fingerprints (lib/run/fingerprint.c): this machine probed (host
 * name, CPUs online, kernel, version as the system gives them); the clock
 * of a run from its clients (distinct orders sorted, the largest step) and
 * its path from HOSTRANGE_CLOCK and the processor as a client's start
 * chooses it (waiting reads on AMD's); two fingerprints
 * compared field by field, steps within a factor of 4 the same; the line diff
 * prints; and the fingerprint a merge keeps.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/run/fingerprint.h"
#include "proto/protocol.h"

static void test_probe(void **state)
{
    struct hrr_fingerprint fp;
    struct utsname u;
    char host[256], kernel[600];

    (void)state;
    unsetenv("HOSTRANGE_CLOCK");
    hrr_fingerprint_probe(&fp);
    assert_int_equal(gethostname(host, sizeof host), 0);
    assert_string_equal(fp.m.host, host);
    assert_int_equal(uname(&u), 0);
    snprintf(kernel, sizeof kernel, "%s %s", u.sysname, u.release);
    assert_string_equal(fp.m.kernel, kernel);
    assert_int_equal(fp.m.cores, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    assert_true(fp.m.cpu_model[0] != '\0');
    assert_string_equal(fp.m.version, PACKAGE_VERSION);
    /* No client has said anything of the clock: the path a client would
     * take here (waiting reads of the TSC on AMD's processors). */
    assert_string_equal(fp.m.clock_path, hrp_clock_path_default(NULL));
    assert_string_equal(fp.m.clock_order, "");
    assert_true(fp.m.clock_step_ns == 0);
}

static void test_clients(void **state)
{
    Hostrange__ClientStats c[4];
    Hostrange__ClientStats *cs[4] = { &c[0], &c[1], &c[2], &c[3] };
    static const char *const orders[4] = { "vdso", "rdtsc;lfence..lfence;rdtsc",
                                           "", "vdso" };
    static const double steps[4] = { 10, 10.4, 0, 9.9 };
    struct hrr_fingerprint fp;

    (void)state;
    for (int i = 0; i < 4; i++) {
        hostrange__client_stats__init(&c[i]);
        c[i].clock_order = (char *)orders[i];
        c[i].clock_step_ns = steps[i];
    }
    hrr_fingerprint_probe(&fp);
    setenv("HOSTRANGE_CLOCK", HRP_CLOCK_PATH_ORDERED, 1);
    hrr_fingerprint_clients(&fp, cs, 4);
    unsetenv("HOSTRANGE_CLOCK");
    assert_string_equal(fp.m.clock_order, "rdtsc;lfence..lfence;rdtsc, vdso");
    assert_true(fp.m.clock_step_ns == 10.4);
    assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_ORDERED);
    hrr_fingerprint_clients(&fp, cs, 4);
    assert_string_equal(fp.m.clock_path, hrp_clock_path_default(NULL));
    /* The fast path's reads, named or the processor's: plain is fast;
     * waiting is its own path where the TSC is the clock. */
    {
        int invariant, rdtscp, amd;

        hrp_cpu_facts(&invariant, &rdtscp, &amd);
        assert_string_equal(hrp_clock_path_default(NULL),
                            invariant && amd ? HRP_CLOCK_PATH_WAITING
                                             : HRP_CLOCK_PATH_FAST);
        setenv("HOSTRANGE_CLOCK", "fast,plain", 1);
        hrr_fingerprint_clients(&fp, cs, 4);
        assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_FAST);
        setenv("HOSTRANGE_CLOCK", "tsc,waiting", 1);
        hrr_fingerprint_clients(&fp, cs, 4);
#if defined(__x86_64__) || defined(__i386__)
        assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_WAITING);
#endif
        setenv("HOSTRANGE_CLOCK", "monotonic,waiting", 1);
        hrr_fingerprint_clients(&fp, cs, 4);
        assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_FAST);
        unsetenv("HOSTRANGE_CLOCK");
    }
    /* A clock named beside the path. */
    setenv("HOSTRANGE_CLOCK", "tsc,ordered", 1);
    hrr_fingerprint_clients(&fp, cs, 4);
    unsetenv("HOSTRANGE_CLOCK");
    assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_ORDERED);
    /* The clients' own paths come first: one ordered, one fast, mixed. */
    setenv("HOSTRANGE_CLOCK", HRP_CLOCK_PATH_ORDERED, 1);
    c[1].clock_path = HRP_CLOCK_PATH_FAST;
    hrr_fingerprint_clients(&fp, cs, 4);
    assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_FAST);
    c[3].clock_path = HRP_CLOCK_PATH_ORDERED;
    hrr_fingerprint_clients(&fp, cs, 4);
    unsetenv("HOSTRANGE_CLOCK");
    assert_string_equal(fp.m.clock_path, HRP_CLOCK_PATH_MIXED);
}

/* A fingerprint of made-up values. */
static void made_up(Hostrange__RunFingerprint *f)
{
    hostrange__run_fingerprint__init(f);
    f->host = "ci-1";
    f->cpu_model = "AMD EPYC";
    f->cores = 2;
    f->clock_path = "fast";
    f->clock_order = "rdtsc";
    f->clock_step_ns = 10;
    f->kernel = "Linux 6.1.0";
    f->version = "0.1.0";
}

static void test_diff(void **state)
{
    Hostrange__RunFingerprint a, b;
    char why[512];

    (void)state;
    made_up(&a);
    made_up(&b);
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 0);
    assert_string_equal(why, "");
    /* A step within a factor of 4 is the same step (one machine's clock
     * measured 5 ns and 10 ns in two runs); beyond, or unknown, it is
     * not. */
    b.clock_step_ns = 5.00747;
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 0);
    b.clock_step_ns = 40;
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 0);
    b.clock_step_ns = 40.5;
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 1);
    assert_string_equal(why, "clock_step_ns 10 vs 40.5");
    b.clock_step_ns = 2.4;
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 1);
    b.clock_step_ns = 0;
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 1);
    b.clock_step_ns = 10;
    /* Host, kernel and version change under a machine (a CI runner's host
     * name every job): never compared. */
    b.host = "ci-2";
    b.kernel = "Linux 6.2.0";
    b.version = "0.2.0";
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 0);
    assert_string_equal(why, "");
    b.cores = 4;
    b.clock_path = "ordered";
    b.cpu_model = "Intel Xeon";
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 3);
    assert_string_equal(why, "cpu_model 'AMD EPYC' vs 'Intel Xeon'; "
                        "clock_path 'fast' vs 'ordered'; cores 2 vs 4");
    /* Truncated, still counted. */
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, 10), 3);
    assert_int_equal(strlen(why), 9);
    /* A named machine is its name: CPU and cores are not compared, the
     * clock still is. */
    b.clock_path = "fast";
    a.machine = "ci-pool";
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 1);
    assert_string_equal(why, "machine 'ci-pool' vs ''");
    b.machine = "ci-pool";
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 0);
    b.machine = "ci-big";
    assert_int_equal(hrr_fingerprint_diff(&a, &b, why, sizeof why), 1);
    assert_string_equal(why, "machine 'ci-pool' vs 'ci-big'");
}

static void test_machine(void **state)
{
    Hostrange__RunFingerprint a;
    struct hrr_fingerprint fp;
    char m[512];

    (void)state;
    made_up(&a);
    hrr_fingerprint_machine(&a, m, sizeof m);
    assert_string_equal(m, "AMD EPYC, 2 cores; clock fast");
    a.machine = "ci-pool";
    hrr_fingerprint_machine(&a, m, sizeof m);
    assert_string_equal(m, "ci-pool");
    /* The probe takes the name from the environment, when it fits. */
    setenv(HRR_MACHINE_ENV, "lab-7", 1);
    hrr_fingerprint_probe(&fp);
    assert_string_equal(fp.m.machine, "lab-7");
    memset(m, 'x', 256);
    m[256] = '\0';
    setenv(HRR_MACHINE_ENV, m, 1);
    hrr_fingerprint_probe(&fp);
    assert_string_equal(fp.m.machine, "");
    unsetenv(HRR_MACHINE_ENV);
    hrr_fingerprint_probe(&fp);
    assert_string_equal(fp.m.machine, "");
}

static void test_format_and_common(void **state)
{
    Hostrange__RunFingerprint a, b;
    Hostrange__RunHeader h[3];
    Hostrange__RunHeader *hs[3] = { &h[0], &h[1], &h[2] };
    char line[512];

    (void)state;
    made_up(&a);
    made_up(&b);
    hrr_fingerprint_format(&a, line, sizeof line);
    assert_string_equal(line, "ci-1: AMD EPYC, 2 cores, Linux 6.1.0; clock "
                        "fast (rdtsc, step 10 ns); hostrange 0.1.0");
    a.clock_order = "";
    a.clock_step_ns = 0;
    hrr_fingerprint_format(&a, line, sizeof line);
    assert_string_equal(line, "ci-1: AMD EPYC, 2 cores, Linux 6.1.0; clock "
                        "fast; hostrange 0.1.0");
    a.machine = "ci-pool";
    hrr_fingerprint_format(&a, line, sizeof line);
    assert_string_equal(line, "ci-1: AMD EPYC, 2 cores, Linux 6.1.0; clock "
                        "fast; hostrange 0.1.0; machine ci-pool");
    made_up(&a);
    for (int i = 0; i < 3; i++)
        hostrange__run_header__init(&h[i]);
    h[0].fingerprint = &a;
    h[1].fingerprint = &b;
    h[2].fingerprint = &a;
    assert_ptr_equal(hrr_fingerprint_common(hs, 3), &a);
    b.kernel = "Linux 6.2.0";
    assert_ptr_equal(hrr_fingerprint_common(hs, 3), &a);
    b.cpu_model = "Intel Xeon";
    assert_null(hrr_fingerprint_common(hs, 3));
    b.cpu_model = a.cpu_model;
    h[1].fingerprint = NULL;
    assert_null(hrr_fingerprint_common(hs, 3));
    assert_null(hrr_fingerprint_common(hs, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_clients),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_machine),
        cmocka_unit_test(test_format_and_common),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
