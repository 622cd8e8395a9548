/*
 * The client library's rules, checked in-process through its counters:
 * windows, labels, out-of-order and foreign-thread ends, ranges left open,
 * depth, records and HOSTRANGE=0. No daemon is needed: the runtime
 * directory is an empty private one, so nothing is delivered.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
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

#include "hostrange.h"
#include "tests/lib/harness.h"

static hr_site s_a = HR_SITE_INIT("test.a");
static hr_site s_b = HR_SITE_INIT("test.b");
static hr_site s_rec = HR_SITE_INIT("end_to_end");

static hr_counters before;

static int snap(void **state)
{
    (void)state;
    hr_counters_get(&before);
    return 0;
}

static hr_counters delta(void)
{
    hr_counters now, d;

    hr_counters_get(&now);
    d.samples = now.samples - before.samples;
    d.out_of_order = now.out_of_order - before.out_of_order;
    d.open_at_window_end = now.open_at_window_end - before.open_at_window_end;
    d.foreign_thread = now.foreign_thread - before.foreign_thread;
    d.label_in_window = now.label_in_window - before.label_in_window;
    d.too_deep = now.too_deep - before.too_deep;
    d.lost = now.lost - before.lost;
    return d;
}

static void open_window(void)
{
    assert_int_equal(hr_labels_set("tests/client", "op", "cpu",
                                   HR_PHASE_WARM), 0);
    assert_int_equal(hr_window_begin(), 0);
}

static void test_samples_only_in_window(void **state)
{
    (void)state;
    for (int i = 0; i < 10; i++) {
        HR_SCOPE(sc, &s_a);
    }
    assert_int_equal(delta().samples, 0);
    open_window();
    for (int i = 0; i < 10; i++) {
        HR_SCOPE(sc, &s_a);
        HR_SCOPE(inner, &s_b);
    }
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(delta().samples, 20);
    assert_int_equal(delta().out_of_order, 0);
}

static void test_window_rules(void **state)
{
    (void)state;
    open_window();
    assert_int_equal(hr_window_begin(), -EBUSY);
    /* Changing labels inside a window is refused and counted. */
    assert_int_equal(hr_labels_set("other", "op", "cpu", HR_PHASE_COLD),
                     -EBUSY);
    assert_int_equal(delta().label_in_window, 1);
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(hr_window_end(), -EINVAL);
    assert_int_equal(hr_labels_set("x", "op", "cpu", 7), -EINVAL);
    assert_int_equal(hr_labels_set(NULL, "op", "cpu", 1), -EINVAL);
}

static void test_out_of_order(void **state)
{
    hr_scope a, b;

    (void)state;
    open_window();
    a = hr_begin(&s_a);
    b = hr_begin(&s_b);
    hr_end(a); /* b is still open: discarded, counted once */
    hr_end(b); /* its frame is gone: nothing more */
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(delta().out_of_order, 1);
    assert_int_equal(delta().samples, 1);
}

static void test_open_at_window_end(void **state)
{
    hr_scope a;

    (void)state;
    open_window();
    a = hr_begin(&s_a);
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(delta().open_at_window_end, 1);
    hr_end(a);
    /* Counted once, and no sample. */
    assert_int_equal(delta().open_at_window_end, 1);
    assert_int_equal(delta().samples, 0);
}

static void *end_elsewhere(void *arg)
{
    hr_end(*(hr_scope *)arg);
    return NULL;
}

static void test_foreign_thread(void **state)
{
    pthread_t th;
    hr_scope a, b;

    (void)state;
    open_window();
    a = hr_begin(&s_a);
    assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &a), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(delta().foreign_thread, 1);
    /* The main thread's stack still holds a; a child of it still works. */
    b = hr_begin(&s_b);
    hr_end(b);
    hr_end(a);
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(delta().samples, 2);
}

static void *collect(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        HR_SCOPE(sc, &s_a);
    }
    return NULL;
}

static void test_threads(void **state)
{
    pthread_t th[3];

    (void)state;
    open_window();
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, collect, NULL), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(hr_window_end(), 0);
    /* The exited threads' samples are counted (and kept for delivery). */
    assert_int_equal(delta().samples, 3000);
}

/* Page faults of the calling thread so far. */
static long thread_faults(void)
{
    struct rusage ru;

    assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
    return ru.ru_minflt + ru.ru_majflt;
}

/* The first scope of a new thread makes its ring; its first 2,048 scopes
 * make it ready (hostrange.c: ring_slow); then FIRST_PASS scopes, most of
 * the rest of a ring's first pass, and the faults they took. */
#define FIRST_PASS 60000
#define FIRST_READY 2048
static void *first_pass(void *arg)
{
    long f0;

    for (int i = 0; i < FIRST_READY; i++) {
        HR_SCOPE(sc, &s_a);
    }
    f0 = thread_faults();
    for (int i = 0; i < FIRST_PASS; i++) {
        HR_SCOPE(sc, &s_a);
    }
    *(long *)arg = thread_faults() - f0;
    return NULL;
}

/* A thread's ring is ready before its first pass reaches its pages: the
 * 60,000 samples fill about 470 of them, and a fault there would be timed
 * inside the ranges open around it. (The faults of making it ready are
 * the thread's too, taken at once and left out of its ranges.) */
static void test_ring_pages_ready(void **state)
{
    long faults = -1;

    (void)state;
    /* With AddressSanitizer, the thread's first writes to the shadow of
     * the ring's pages take faults of their own (a page for every eight). */
    if (HARNESS_BUILT_WITH_ASAN)
        skip();
    open_window();
    {
        pthread_t th;

        assert_int_equal(pthread_create(&th, NULL, first_pass, &faults), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    assert_int_equal(hr_window_end(), 0);
    assert_int_equal(delta().samples, FIRST_READY + FIRST_PASS);
    if (faults > 16)
        fail_msg("%ld page faults during the first pass of a thread's ring "
                 "(%d samples, %zu pages)", faults, FIRST_PASS,
                 (size_t)FIRST_PASS * 32 / 4096);
}

static void test_too_deep(void **state)
{
    hr_scope sc[200];

    (void)state;
    open_window();
    for (int i = 0; i < 200; i++)
        sc[i] = hr_begin(&s_a);
    for (int i = 199; i >= 0; i--)
        hr_end(sc[i]);
    assert_int_equal(hr_window_end(), 0);
    /* 128 frames fit; the other 72 are counted and take no sample. */
    assert_int_equal(delta().too_deep, 72);
    assert_int_equal(delta().samples, 128);
}

static void test_record(void **state)
{
    (void)state;
    assert_int_equal(hr_labels_set("tests/client", "op", "cpu",
                                   HR_PHASE_WARM), 0);
    assert_int_equal(hr_record(&s_rec, 12345), 0);
    assert_int_equal(hr_record(&s_rec, 12346), 0);
    assert_int_equal(delta().samples, 2);
}

static void test_sites_interned_once(void **state)
{
    static hr_site twin = HR_SITE_INIT("test.a");

    (void)state;
    open_window();
    {
        HR_SCOPE(x, &twin);
    }
    {
        HR_SCOPE(y, &s_a);
    }
    assert_int_equal(hr_window_end(), 0);
    /* Two sites with one name share one id. */
    assert_int_not_equal(twin.id, 0);
    assert_int_equal(twin.id, s_a.id);
}

/* HOSTRANGE=0 is read once per process: checked in a fresh child. */
static void test_runtime_off(void **state)
{
    pid_t pid;
    int status;

    (void)state;
    pid = fork();
    if (pid == 0) {
        char *argv[] = { "test_client", "--off", NULL };
        setenv("HOSTRANGE", "0", 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int run_off(void)
{
    hr_counters c;

    if (hr_enabled() != 0)
        return 1;
    if (hr_labels_set("n", "op", "cpu", HR_PHASE_WARM) != 0)
        return 2;
    if (hr_window_begin() != -ECANCELED)
        return 3;
    {
        HR_SCOPE(sc, &s_a);
    }
    hr_counters_get(&c);
    return c.samples == 0 ? 0 : 4;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_samples_only_in_window, snap),
        cmocka_unit_test_setup(test_window_rules, snap),
        cmocka_unit_test_setup(test_out_of_order, snap),
        cmocka_unit_test_setup(test_open_at_window_end, snap),
        cmocka_unit_test_setup(test_foreign_thread, snap),
        cmocka_unit_test_setup(test_threads, snap),
        cmocka_unit_test_setup(test_ring_pages_ready, snap),
        cmocka_unit_test_setup(test_too_deep, snap),
        cmocka_unit_test_setup(test_record, snap),
        cmocka_unit_test_setup(test_sites_interned_once, snap),
        cmocka_unit_test(test_runtime_off),
    };
    char dir[256];
    int rc;

    if (argc > 1 && strcmp(argv[1], "--off") == 0)
        return run_off();
    harness_mkdtemp(dir, sizeof dir, "client");
    setenv("HOSTRANGE_RUNTIME_DIR", dir, 1);
    setenv("HOSTRANGE_FLUSH_TIMEOUT_MS", "0", 1);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
