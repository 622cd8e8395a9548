/*
 * Faults on the client's side, with a real hostranged and the instrumented
 * tests/helpers/recorder:
 *
 * - a client SIGKILLed in the middle of sending: the daemon is unaffected,
 *   and what it holds of the client is whole batches, in order, each once:
 *   the values 1..K with K at least the last count the client saw
 *   acknowledged;
 * - no daemon at all: the program never waits for room, its exit does not
 *   wait, and every sample is counted as dropped;
 * - the daemon killed for good while a client sends: delivered + lost +
 *   spooled = samples;
 * - clients that keep the daemon busy: it still answers control requests
 *   and stops cleanly on SIGTERM while they send;
 * - the daemon frozen (SIGSTOP) and resumed: what the client lost is
 *   counted exactly, on both sides.
 */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

static const struct flat *find_row(const struct flat *rows, int n,
                                   const char *node, const char *range)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"), node) == 0 &&
            strcmp(flat_get(&rows[i], "range"), range) == 0 &&
            strcmp(flat_get(&rows[i], "metric"), "inclusive") == 0)
            return &rows[i];
    }
    return NULL;
}

static void test_client_killed_mid_send(void **state)
{
    const char *node = "tests/fault::killed";
    char *argv[] = { (char *)harness_recorder(), "-N", (char *)node, "-e",
                     "100000", "-p", "2000", NULL };
    struct harness_daemon d = { { 0 }, 0 };
    static struct flat rows[64];
    char out[400], *text, *st, *rep, pidkey[64];
    unsigned long long acked_values, acked, events, seen = 0, k, before_pid;
    const struct flat *row;
    int status, n, ci;
    pid_t pid;

    (void)state;
    harness_daemon_start(&d);
    st = harness_stats(d.dir);
    before_pid = harness_stat(st, "daemon.pid");
    free(st);
    snprintf(out, sizeof out, "%s.recorder", d.dir);
    pid = harness_spawn(argv, d.dir, NULL, out);

    /* Two flushes acknowledged, then a batch beyond the last one arrives:
     * the client is sending, between two flushes, when it is killed. */
    free(harness_wait_lines(out, "acked ", 2, 120));
    for (int i = 0; seen == 0; i++) {
        text = harness_read_file(out);
        acked_values = harness_last_field(text, "acked ", "values");
        free(text);
        st = harness_stats(d.dir);
        ci = harness_stat_client(st, (long)pid);
        snprintf(pidkey, sizeof pidkey, "client.%d.events", ci);
        events = ci != 0 ? harness_stat(st, pidkey) : 0;
        free(st);
        if (events > acked_values)
            seen = events;
        else if (i == 12000)
            fail_msg("the client sent nothing after its flushes");
        else
            usleep(5000);
    }
    assert_int_equal(kill(pid, SIGKILL), 0);
    status = harness_wait(pid, 60);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    text = harness_read_file(out);
    acked_values = harness_last_field(text, "acked ", "values");
    acked = harness_last_field(text, "acked ", "delivered");
    free(text);

    /* The daemon is unaffected. */
    st = harness_stats(d.dir);
    assert_int_equal(harness_stat(st, "daemon.pid"), before_pid);
    assert_int_equal(harness_stat_rejected(st), 0);
    ci = harness_stat_client(st, (long)pid);
    assert_true(ci != 0);
    snprintf(pidkey, sizeof pidkey, "client.%d.events", ci);
    events = harness_stat(st, pidkey);
    snprintf(pidkey, sizeof pidkey, "client.%d.gaps", ci);
    assert_int_equal(harness_stat(st, pidkey), 0);
    snprintf(pidkey, sizeof pidkey, "client.%d.rejected", ci);
    assert_int_equal(harness_stat(st, pidkey), 0);
    free(st);

    rep = harness_dump(d.dir, "all");
    n = flat_parse_rows(rep, rows, 64);
    row = find_row(rows, n, node, "fault.value");
    assert_non_null(row);
    k = strtoull(flat_get(row, "count"), NULL, 10);
    /* Everything acknowledged is there, and what the daemon had taken
     * beyond it before the kill. */
    if (k < acked_values || k < acked || k < seen)
        fail_msg("the report holds %llu values; the client saw %llu values "
                 "(%llu samples) acknowledged; the daemon had %llu before "
                 "the kill", k, acked_values, acked, seen);
    /* Whole batches, in order, each once: exactly the values 1..k. */
    assert_true(strtod(flat_get(row, "min"), NULL) == 1.0);
    assert_true(strtod(flat_get(row, "max"), NULL) == (double)k);
    assert_true(strtod(flat_get(row, "mean"), NULL) == (double)(k + 1) / 2);
    assert_true(strtod(flat_get(row, "median"), NULL) == (double)(k + 1) / 2);
    /* The report holds exactly what the daemon counted for the client. */
    assert_int_equal(flat_node_count(rows, n, node), events);
    free(rep);
    printf("# killed after %llu acknowledged values; the daemon had %llu "
           "then; %llu values (%llu events) in the report\n", acked_values,
           seen, k, events);

    /* A new client is served as before. */
    {
        char *w[] = { (char *)harness_program("HOSTRANGE_TEST_WORKLOAD"),
                      "-N", "tests/fault::after-kill", "-n", "1", "-c",
                      "500", "-r", "0", "-p", NULL };
        struct harness_run r;
        struct harness_counters c;

        harness_run(w, d.dir, 300, &r);
        assert_true(harness_exited(r.status, 0));
        assert_int_equal(harness_counters(r.out, "flush=0", &c), 0);
        assert_int_equal(c.lost, 0);
        assert_int_equal(c.delivered, c.samples);
        harness_run_free(&r);
    }
    rep = harness_dump(d.dir, NULL);
    n = flat_parse_rows(rep, rows, 64);
    row = find_row(rows, n, "tests/fault::after-kill::node[0]",
                   "workload.inner");
    assert_non_null(row);
    assert_string_equal(flat_get(row, "phase"), "cold");
    for (int i = 0; i < n; i++) {
        if (strcmp(flat_get(&rows[i], "nodeid"),
                   "tests/fault::after-kill::node[0]") == 0 &&
            strcmp(flat_get(&rows[i], "phase"), "warm") == 0 &&
            strncmp(flat_get(&rows[i], "range"), "workload.", 9) == 0)
            assert_string_equal(flat_get(&rows[i], "count"), "500");
    }
    free(rep);
    unlink(out);
    harness_daemon_stop(&d);
}

/* Runs the recorder with no daemon on dir; fills its final counters and
 * returns its output (caller frees). */
static char *run_alone(const char *dir, const char *collect,
                       struct harness_counters *c)
{
    char *argv[] = { (char *)harness_recorder(), "-N", "tests/fault::alone",
                     "-R", "-n", "100000", "-p", "2000", NULL };
    struct harness_run r;
    char *text;

    setenv("HOSTRANGE", collect, 1);
    /* A wait at exit for a daemon would last ten minutes: the hang guard
     * of harness_run (120 s) would end the program and fail the test. */
    setenv("HOSTRANGE_FLUSH_TIMEOUT_MS", "600000", 1);
    setenv("HOSTRANGE_BUFFER_MB", "1", 1);
    harness_run(argv, dir, 120, &r);
    unsetenv("HOSTRANGE");
    unsetenv("HOSTRANGE_FLUSH_TIMEOUT_MS");
    unsetenv("HOSTRANGE_BUFFER_MB");
    if (!harness_exited(r.status, 0))
        fail_msg("recorder failed: %s", r.err);
    assert_int_equal(harness_counters(r.out, "final", c), 0);
    text = r.out;
    r.out = NULL;
    harness_run_free(&r);
    return text;
}

static void test_no_daemon(void **state)
{
    char dir[256], *alone, *off;
    struct harness_counters c, base;
    double t_alone, t_off;

    (void)state;
    harness_mkdtemp(dir, sizeof dir, "nodaemon");
    alone = run_alone(dir, "1", &c);
    /* 100000 calls of two ranges (and the library's own samples, when
     * the shipper was slow to drain the ring): every one dropped and
     * counted, nothing delivered, no batch sent. */
    assert_true(c.samples >= 200000);
    assert_int_equal(c.delivered, 0);
    assert_int_equal(c.lost, c.samples);
    assert_int_equal(harness_last_field(alone, "final", "batches"), 0);

    off = run_alone(dir, "0", &base);
    assert_int_equal(base.samples, 0);
    assert_int_equal(base.lost, 0);
    /* The run time against the same program collecting nothing (a ratio,
     * printed; the machines are shared). */
    t_alone = (double)(harness_last_field(alone, "final", "run_ns") +
                       harness_last_field(alone, "final", "exit_wait_ns"));
    t_off = (double)(harness_last_field(off, "final", "run_ns") +
                     harness_last_field(off, "final", "exit_wait_ns"));
    printf("{\"bench\":\"fault.no_daemon.run\",\"value\":%.0f,\"unit\":\"ns\","
           "\"baseline\":%.0f,\"ratio\":%.3f}\n", t_alone, t_off,
           t_alone / t_off);
    printf("# no daemon: %llu samples, all %llu counted lost\n", c.samples,
           c.lost);
    printf("{\"bench\":\"fault.no_daemon.exit_wait\",\"value\":%llu,"
           "\"unit\":\"ns\",\"baseline\":%llu}\n",
           harness_last_field(alone, "final", "exit_wait_ns"),
           harness_last_field(off, "final", "exit_wait_ns"));
    free(alone);
    free(off);
    harness_rm_rf(dir);
}

static void test_daemon_vanishes(void **state)
{
    char *argv[] = { (char *)harness_recorder(), "-N", "tests/fault::vanish",
                     "-n", "400000", "-p", "1000", "-e", "20000", "-f",
                     "200", NULL };
    struct harness_daemon d = { { 0 }, 0 };
    struct harness_counters c;
    char out[400], *text;
    unsigned long long acked;
    pid_t pid;

    (void)state;
    harness_daemon_start(&d);
    snprintf(out, sizeof out, "%s.recorder", d.dir);
    setenv("HOSTRANGE_FLUSH_TIMEOUT_MS", "1000", 1);
    setenv("HOSTRANGE_BUFFER_MB", "1", 1);
    pid = harness_spawn(argv, d.dir, NULL, out);
    unsetenv("HOSTRANGE_FLUSH_TIMEOUT_MS");
    unsetenv("HOSTRANGE_BUFFER_MB");
    free(harness_wait_lines(out, "acked ", 2, 120));
    assert_true(WIFSIGNALED(harness_daemon_signal(&d, SIGKILL)));
    assert_true(harness_exited(harness_wait(pid, 300), 0));
    text = harness_read_file(out);
    acked = harness_last_field(text, "acked ", "delivered");
    assert_int_equal(harness_counters(text, "final", &c), 0);
    /* 400000 values; what did not fit in the buffer is counted lost, and
     * what it held at exit is left in the spool. */
    assert_true(c.samples >= 400000);
    assert_true(c.delivered >= acked);
    assert_true(c.lost > 0);
    assert_true(c.spooled > 0);
    assert_int_equal(c.delivered + c.lost + c.spooled, c.samples);
    free(text);
    unlink(out);
    harness_daemon_stop(&d);
}

#define LOADERS 8

/*
 * Clients that keep the daemon's ingest socket full, and go on until they
 * are told to stop: control requests are still answered, and SIGTERM still
 * stops the daemon cleanly, while they send (so a daemon that served only
 * the ingest socket would fail here). Then the clients count what the
 * stopped daemon no longer takes as lost, or leave it in the spool.
 * Under valgrind two clients keep the daemon's socket as full as eight
 * do otherwise (the daemon runs many times slower there), through the
 * same paths, at a quarter of the processor time.
 */
static void test_control_under_load(void **state)
{
    struct harness_daemon d = { { 0 }, 0 };
    char out[LOADERS][300], node[LOADERS][64], stop[300], *text;
    struct harness_run r;
    pid_t pid[LOADERS];
    int status, loaders = harness_valgrind() ? 2 : LOADERS;

    (void)state;
    harness_daemon_start(&d);
    snprintf(stop, sizeof stop, "%s.stop", d.dir);
    for (int k = 0; k < loaders; k++) {
        char *argv[] = { (char *)harness_recorder(), "-R", "-N", node[k],
                         "-S", stop, "-s", "600", NULL };
        snprintf(node[k], sizeof node[k], "tests/fault::load%d", k);
        snprintf(out[k], sizeof out[k], "%s.load%d", d.dir, k);
        pid[k] = harness_spawn(argv, d.dir, NULL, out[k]);
    }
    for (int k = 0; k < loaders; k++)
        harness_wait_events(d.dir, pid[k]);
    /* Once a second for five seconds, a ping and a dump, each answered
     * while every client is still sending. */
    for (int i = 0; i < 5; i++) {
        sleep(1);
        harness_ctl(d.dir, &r, "-t", "120000", "ping", (char *)NULL);
        assert_true(harness_exited(r.status, 0));
        harness_run_free(&r);
        harness_ctl(d.dir, &r, "-t", "120000", "dump", (char *)NULL);
        assert_true(harness_exited(r.status, 0));
        assert_non_null(strstr(r.out, "\"range\":\"fault.inner\""));
        harness_run_free(&r);
        for (int k = 0; k < loaders; k++) {
            if (waitpid(pid[k], NULL, WNOHANG) != 0)
                fail_msg("client %d ended before the daemon answered", k);
        }
    }
    status = harness_daemon_signal(&d, SIGTERM);
    assert_true(harness_exited(status, 0));
    for (int k = 0; k < loaders; k++)
        assert_int_equal(waitpid(pid[k], NULL, WNOHANG), 0);
    harness_write_file(stop, "", 0);

    for (int k = 0; k < loaders; k++) {
        struct harness_counters c;

        assert_true(harness_exited(harness_wait(pid[k], 300), 0));
        text = harness_read_file(out[k]);
        assert_int_equal(harness_counters(text, "final", &c), 0);
        assert_true(c.delivered > 0);
        assert_true(c.lost + c.spooled > 0);
        assert_int_equal(c.delivered + c.lost + c.spooled, c.samples);
        free(text);
        unlink(out[k]);
    }
    unlink(stop);
    harness_daemon_stop(&d);
}

/*
 * The daemon frozen (SIGSTOP) for three seconds while a client sends as
 * fast as it can, then resumed: the client drops and counts what does not
 * fit, and the daemon holds exactly what the client saw delivered and
 * knows exactly what it lost.
 */
static void test_daemon_frozen(void **state)
{
    const char *node = "tests/fault::frozen";
    char *argv[] = { (char *)harness_recorder(), "-R", "-N", (char *)node,
                     "-s", "6", NULL };
    struct harness_daemon d = { { 0 }, 0 };
    struct harness_counters c;
    static struct flat rows[64];
    char out[300], key[64], *text, *st, *rep;
    int n, ci;
    pid_t pid;

    (void)state;
    harness_daemon_start(&d);
    snprintf(out, sizeof out, "%s.frozen", d.dir);
    setenv("HOSTRANGE_BUFFER_MB", "4", 1);
    pid = harness_spawn(argv, d.dir, NULL, out);
    unsetenv("HOSTRANGE_BUFFER_MB");
    harness_wait_events(d.dir, pid);
    assert_int_equal(kill(d.pid, SIGSTOP), 0);
    sleep(3);
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    assert_true(harness_exited(harness_wait(pid, 300), 0));

    text = harness_read_file(out);
    assert_int_equal(harness_counters(text, "final", &c), 0);
    free(text);
    assert_true(c.delivered > 0);
    assert_true(c.lost > 0);
    assert_int_equal(c.delivered + c.lost, c.samples);
    st = harness_stats(d.dir);
    ci = harness_stat_client(st, (long)pid);
    assert_true(ci != 0);
    snprintf(key, sizeof key, "client.%d.events", ci);
    assert_int_equal(harness_stat(st, key), c.delivered);
    snprintf(key, sizeof key, "client.%d.lost_events", ci);
    assert_int_equal(harness_stat(st, key), c.lost);
    assert_int_equal(harness_stat_rejected(st), 0);
    free(st);
    rep = harness_dump(d.dir, "all");
    n = flat_parse_rows(rep, rows, 64);
    assert_int_equal(flat_node_count(rows, n, node), c.delivered);
    assert_int_equal(strtoull(flat_get(find_row(rows, n, node, "fault.outer"),
                                       "lost"), NULL, 10), c.lost);
    free(rep);
    printf("# frozen for 3 s: %llu samples, %llu delivered, %llu lost and "
           "counted\n", c.samples, c.delivered, c.lost);
    unlink(out);
    harness_daemon_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_killed_mid_send),
        cmocka_unit_test(test_no_daemon),
        cmocka_unit_test(test_daemon_vanishes),
        cmocka_unit_test(test_control_under_load),
        cmocka_unit_test(test_daemon_frozen),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
