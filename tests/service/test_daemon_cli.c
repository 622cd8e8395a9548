/*
 * hostrangectl and hostranged on the command line, with a real daemon:
 * every format on a fixed input, filters, -o, paged dumps, filtered reset,
 * stats, --help of each command, usage errors (one line, status 2) and an
 * unreachable daemon (one line naming the directory, status 1).
 */
#include "config.h"

#include <dirent.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "tests/lib/harness_batch.h"
#include "tests/lib/harness_send.h"
#include "tests/lib/harness.h"

static int setup(void **state)
{
    struct harness_daemon *d = calloc(1, sizeof *d);

    harness_mkdtemp(d->dir, sizeof d->dir, "cli");
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    harness_daemon_stop(*state);
    free(*state);
    return 0;
}

/* Sends x to the daemon of dir; fails unless it is accepted. */
static void send_batch(const char *dir, struct db_batch *x)
{
    assert_int_equal(harness_send_batch(dir, x, NULL, 0),
                     HOSTRANGE__ACK__STATUS__OK);
}

/* Node t/fixed, warm: binding.body inclusive 1000..4000 with self 500,
 * 500, 1000, 1000; dispatch.call 100 and 300 (no children); an end_to_end
 * record of 7000; 3 events lost. */
static void send_fixed(const char *dir)
{
    static const uint64_t in[4] = { 1000, 2000, 3000, 4000 };
    static const uint64_t se[4] = { 500, 500, 1000, 1000 };
    struct db_batch x;

    db_init(&x, 5, 1);
    x.l[0].node_id = x.l[1].node_id = "t/fixed";
    for (int i = 0; i < 4; i++) {
        db_sample(&x, 1, 0, in[i], se[i]);
        if (i < 2)
            db_sample(&x, 1, 1, 100 + 200 * (uint64_t)i,
                      100 + 200 * (uint64_t)i);
    }
    db_record(&x, 1, 7000);
    db_lost(&x, 1, 3);
    send_batch(dir, &x);
    db_fini(&x);
}

/* Runs hostrangectl with args; checks the exit status; returns stdout
 * (caller frees). */
static char *ctl(const char *dir, int status, const char *const *args)
{
    char *argv[32];
    struct harness_run r;
    int n = 0;

    argv[n++] = (char *)harness_program("HOSTRANGECTL");
    if (dir != NULL) {
        argv[n++] = "--runtime-dir";
        argv[n++] = (char *)dir;
    }
    for (int i = 0; args[i] != NULL; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    harness_run(argv, NULL, 60, &r);
    if (!harness_exited(r.status, status))
        fail_msg("%s %s: status %d, stderr: %s", argv[n - 2] ? argv[n - 2] : "",
                 argv[n - 1], r.status, r.err);
    free(r.err);
    return r.out;
}

#define CTL(dir, status, ...) \
    ctl(dir, status, (const char *const[]){ __VA_ARGS__, NULL })

static int lines(const char *s)
{
    int n = 0;

    for (; *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

static void test_formats(void **state)
{
    struct harness_daemon *d = *state;
    char *out;

    harness_daemon_start_args(d, NULL);
    send_fixed(d->dir);
    out = CTL(d->dir, 0, "dump");
    assert_string_equal(out,
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"binding.body\",\"metric\":"
        "\"inclusive\",\"count\":4,\"unit\":\"ns\",\"mean\":2500.0,"
        "\"median\":2500.0}\n"
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"binding.body\",\"metric\":\"self\","
        "\"count\":4,\"unit\":\"ns\",\"mean\":750.0,\"median\":750.0}\n"
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":2,\"unit\":\"ns\",\"mean\":200.0,"
        "\"median\":200.0}\n"
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":\"self\","
        "\"count\":2,\"unit\":\"ns\",\"mean\":200.0,\"median\":200.0}\n"
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"end_to_end\",\"metric\":"
        "\"inclusive\",\"count\":1,\"unit\":\"ns\",\"mean\":7000.0,"
        "\"median\":7000.0}\n");
    free(out);

    /* numpy: percentile([1000, 2000, 3000, 4000], 90) = 3700, 99 = 3970;
     * std = sqrt(1250000) = 1118.033988749895. */
    out = CTL(d->dir, 0, "dump", "--fields", "all", "--range", "binding.body",
              "--format", "jsonl");
    assert_string_equal(out,
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"binding.body\",\"metric\":"
        "\"inclusive\",\"count\":4,\"unit\":\"ns\",\"mean\":2500.0,"
        "\"median\":2500.0,\"min\":1000.0,\"max\":4000.0,\"p90\":3700.0,"
        "\"p99\":3970.0,\"stddev\":1118.033988749895,\"exact\":true,"
        "\"lost\":3}\n"
        "{\"nodeid\":\"t/fixed\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"binding.body\",\"metric\":\"self\","
        "\"count\":4,\"unit\":\"ns\",\"mean\":750.0,\"median\":750.0,"
        "\"min\":500.0,\"max\":1000.0,\"p90\":1000.0,\"p99\":1000.0,"
        "\"stddev\":250.0,\"exact\":true,\"lost\":3}\n");
    free(out);

    out = CTL(d->dir, 0, "dump", "--format", "csv", "--fields", "all");
    assert_string_equal(out,
        "nodeid,operator,backend,phase,range,metric,count,unit,mean,median,"
        "min,max,p90,p99,stddev,exact,lost\n"
        "t/fixed,add,cpu,warm,binding.body,inclusive,4,ns,2500.0,2500.0,"
        "1000.0,4000.0,3700.0,3970.0,1118.033988749895,true,3\n"
        "t/fixed,add,cpu,warm,binding.body,self,4,ns,750.0,750.0,500.0,"
        "1000.0,1000.0,1000.0,250.0,true,3\n"
        "t/fixed,add,cpu,warm,dispatch.call,inclusive,2,ns,200.0,200.0,"
        "100.0,300.0,280.0,298.0,100.0,true,3\n"
        "t/fixed,add,cpu,warm,dispatch.call,self,2,ns,200.0,200.0,100.0,"
        "300.0,280.0,298.0,100.0,true,3\n"
        "t/fixed,add,cpu,warm,end_to_end,inclusive,1,ns,7000.0,7000.0,"
        "7000.0,7000.0,7000.0,7000.0,0.0,true,3\n");
    free(out);

    out = CTL(d->dir, 0, "dump", "--format", "table");
    assert_string_equal(out,
        "t/fixed  add/cpu  warm\n"
        "  range          metric     count  mean_us  median_us\n"
        "  binding.body   inclusive      4    2.500      2.500\n"
        "  binding.body   self           4    0.750      0.750\n"
        "  dispatch.call  inclusive      2    0.200      0.200\n"
        "  dispatch.call  self           2    0.200      0.200\n"
        "  end_to_end     inclusive      1    7.000      7.000\n"
        /* The table closes with what was lost, by node id. */
        "lost: 3 events of node t/fixed\n");
    free(out);

    out = CTL(d->dir, 0, "dump", "--format", "table", "--fields", "all",
              "--range", "dispatch.call");
    assert_string_equal(out,
        "t/fixed  add/cpu  warm\n"
        "  range          metric     count  mean_us  median_us  min_us  "
        "max_us  p90_us  p99_us  stddev_us  exact  lost\n"
        "  dispatch.call  inclusive      2    0.200      0.200   0.100   "
        "0.300   0.280   0.298      0.100  yes       3\n"
        "  dispatch.call  self           2    0.200      0.200   0.100   "
        "0.300   0.280   0.298      0.100  yes       3\n"
        "lost: 3 events of node t/fixed\n");
    free(out);
}

/* Two nodes x two operators x two backends x two phases x two ranges. */
static void send_grid(const char *dir)
{
    static char *nodes[2] = { "t/a[1]", "t/b[2]" };
    static char *ops[2] = { "add", "gemm" };
    static char *backends[2] = { "cpu", "cuda" };
    uint64_t seq = 0;

    for (int n = 0; n < 2; n++)
        for (int o = 0; o < 2; o++)
            for (int b = 0; b < 2; b++) {
                struct db_batch x;

                db_init(&x, 9, ++seq);
                for (int p = 0; p < 2; p++) {
                    x.l[p].node_id = nodes[n];
                    x.l[p].operator_ = ops[o];
                    x.l[p].backend = backends[b];
                    db_sample(&x, (uint32_t)p, 0, 900, 400);
                    db_sample(&x, (uint32_t)p, 1, 400, 400);
                }
                send_batch(dir, &x);
                db_fini(&x);
            }
}

static void test_filters_and_reset(void **state)
{
    struct harness_daemon *d = *state;
    char *out;

    harness_daemon_start_args(d, NULL);
    send_grid(d->dir);
    out = CTL(d->dir, 0, "dump");
    assert_int_equal(lines(out), 64);
    free(out);
    out = CTL(d->dir, 0, "dump", "--node", "t/b*");
    assert_int_equal(lines(out), 32);
    assert_null(strstr(out, "t/a[1]"));
    free(out);
    out = CTL(d->dir, 0, "dump", "--operator", "gemm");
    assert_int_equal(lines(out), 32);
    assert_null(strstr(out, "\"add\""));
    free(out);
    out = CTL(d->dir, 0, "dump", "--backend", "cuda", "--phase", "cold");
    assert_int_equal(lines(out), 16);
    assert_null(strstr(out, "\"warm\""));
    free(out);
    out = CTL(d->dir, 0, "dump", "--range", "dispatch.*", "--node",
              "t/a\\[1\\]", "--operator", "add", "--backend", "cpu",
              "--phase", "warm");
    assert_string_equal(out,
        "{\"nodeid\":\"t/a[1]\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":"
        "\"inclusive\",\"count\":1,\"unit\":\"ns\",\"mean\":400.0,"
        "\"median\":400.0}\n"
        "{\"nodeid\":\"t/a[1]\",\"operator\":\"add\",\"backend\":\"cpu\","
        "\"phase\":\"warm\",\"range\":\"dispatch.call\",\"metric\":\"self\","
        "\"count\":1,\"unit\":\"ns\",\"mean\":400.0,\"median\":400.0}\n");
    free(out);
    out = CTL(d->dir, 0, "dump", "--node", "nothing*");
    assert_string_equal(out, "");
    free(out);

    out = CTL(d->dir, 0, "reset", "--operator", "gemm", "--phase", "warm");
    assert_string_equal(out, "dropped 8 keys\n");
    free(out);
    out = CTL(d->dir, 0, "dump", "--operator", "gemm");
    assert_int_equal(lines(out), 16);
    assert_null(strstr(out, "\"warm\""));
    free(out);
    /* An empty pattern is refused, never read as every key: a reset with
     * --node "$UNSET" dropped them all. */
    out = CTL(d->dir, 2, "reset", "--node", "");
    assert_string_equal(out, "");
    free(out);
    out = CTL(d->dir, 2, "dump", "--operator", "");
    assert_string_equal(out, "");
    free(out);
    out = CTL(d->dir, 0, "dump");
    assert_int_equal(lines(out), 48);
    free(out);
    out = CTL(d->dir, 0, "reset");
    assert_string_equal(out, "dropped 24 keys\n");
    free(out);
    out = CTL(d->dir, 0, "dump");
    assert_string_equal(out, "");
    free(out);
}

/* -o writes the same as standard output, atomically: no temporary file is
 * left, and a report replaces the old one whole. */
static void test_output_file(void **state)
{
    struct harness_daemon *d = *state;
    char file[400], *out, *stdout_text, buf[8192];
    struct dirent *e;
    FILE *f;
    DIR *dir;
    size_t n;
    int entries = 0;

    harness_daemon_start_args(d, NULL);
    send_fixed(d->dir);
    snprintf(file, sizeof file, "%s/out/report.csv", d->dir);
    snprintf(buf, sizeof buf, "%s/out", d->dir);
    assert_int_equal(mkdir(buf, 0700), 0);
    f = fopen(file, "w");
    fputs("old contents\n", f);
    fclose(f);
    out = CTL(d->dir, 0, "dump", "--format", "csv", "-o", file);
    assert_string_equal(out, "");
    free(out);
    stdout_text = CTL(d->dir, 0, "dump", "--format", "csv");
    f = fopen(file, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_string_equal(buf, stdout_text);
    free(stdout_text);
    snprintf(buf, sizeof buf, "%s/out", d->dir);
    dir = opendir(buf);
    while ((e = readdir(dir)) != NULL)
        entries += e->d_name[0] != '.';
    closedir(dir);
    assert_int_equal(entries, 1);
    /* A directory that does not exist: one line, status 1. */
    snprintf(file, sizeof file, "%s/missing/report.csv", d->dir);
    out = CTL(d->dir, 1, "dump", "-o", file);
    free(out);
}

/* With pages of a few values, a dump takes many pages and gives the same
 * rows in the same order as one page. */
static void test_paged(void **state)
{
    struct harness_daemon *d = *state;
    const char *args[] = { "--dump-page", "100", NULL };
    char node[32], *paged, *whole;
    struct harness_daemon big = { .pid = 0 };

    harness_daemon_start_args(d, args);
    for (int n = 0; n < 40; n++) {
        struct db_batch x;

        db_init(&x, 17, (uint64_t)n + 1);
        snprintf(node, sizeof node, "paged[%02d]", n);
        x.l[0].node_id = x.l[1].node_id = node;
        for (uint64_t i = 0; i < 30; i++)
            db_sample(&x, (uint32_t)(i % 2), (uint32_t)(i % 3 % 2),
                      100 + i * (uint64_t)n, 50);
        send_batch(d->dir, &x);
        db_fini(&x);
    }
    paged = CTL(d->dir, 0, "dump", "--fields", "all");
    assert_int_equal(lines(paged), 40 * 4 * 2);
    /* The same data in a daemon with the default page size. */
    snprintf(big.dir, sizeof big.dir, "%s/big", d->dir);
    assert_int_equal(mkdir(big.dir, 0700), 0);
    harness_daemon_start_args(&big, NULL);
    for (int n = 0; n < 40; n++) {
        struct db_batch x;

        db_init(&x, 17, (uint64_t)n + 1);
        snprintf(node, sizeof node, "paged[%02d]", n);
        x.l[0].node_id = x.l[1].node_id = node;
        for (uint64_t i = 0; i < 30; i++)
            db_sample(&x, (uint32_t)(i % 2), (uint32_t)(i % 3 % 2),
                      100 + i * (uint64_t)n, 50);
        send_batch(big.dir, &x);
        db_fini(&x);
    }
    whole = CTL(big.dir, 0, "dump", "--fields", "all");
    assert_string_equal(paged, whole);
    harness_daemon_signal(&big, SIGTERM);
    free(paged);
    free(whole);
}

static void test_stats(void **state)
{
    struct harness_daemon *d = *state;
    const char *args[] = { "--exact-cap", "3", "--max-memory", "64M", NULL };
    char *out;

    harness_daemon_start_args(d, args);
    send_fixed(d->dir);
    out = CTL(d->dir, 0, "stats");
    assert_non_null(strstr(out, "daemon.keys 3\n"));
    assert_non_null(strstr(out, "daemon.events 13\n"));
    assert_non_null(strstr(out, "daemon.memory_limit_bytes 67108864\n"));
    assert_non_null(strstr(out, "daemon.exact_cap 3\n"));
    /* binding.body has 4 events: over the cap of 3. */
    assert_non_null(strstr(out, "daemon.histogram_keys 1\n"));
    assert_non_null(strstr(out, "daemon.keys_capped 1\n"));
    assert_non_null(strstr(out, "daemon.clock tsc\n"));
    assert_non_null(strstr(out, "daemon.clients 1\n"));
    assert_non_null(strstr(out, "rejected.memory_budget 0\n"));
    assert_non_null(strstr(out, "client.1.pid 5\n"));
    assert_non_null(strstr(out, "client.1.events 7\n"));
    assert_non_null(strstr(out, "client.1.rejected 0\n"));
    assert_null(strstr(out, "state."));
    assert_non_null(strstr(out, "daemon.rss_bytes "));
    assert_null(strstr(out, "daemon.rss_bytes 0\n"));
    free(out);
    out = CTL(d->dir, 0, "dump", "--fields", "all", "--range", "binding.body",
              "--format", "csv");
    /* Mean, min and max stay exact; the quantiles are estimates. */
    assert_non_null(strstr(out, "binding.body,inclusive,4,ns,2500.0,"));
    assert_non_null(strstr(out, ",1000.0,4000.0,"));
    assert_non_null(strstr(out, ",false,3\n"));
    free(out);
}

/* Each command's --help: status 0, and what it says is there. */
static void test_help(void **state)
{
    static const char *const cmds[][3] = {
        { "dump", "--operator", "--fields" },
        { "stats", "rejected.", "client.N." },
        { "reset", "--phase", "--range" },
        { "ping", "--wait", "pid" },
        { "record", "--output", "HOSTRANGE_RUNTIME_DIR" },
    };
    char *argv[] = { (char *)harness_program("HOSTRANGED"), "--help", NULL };
    struct harness_run r;
    char *out;

    (void)state;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        out = CTL(NULL, 0, cmds[i][0], "--help");
        assert_true(strncmp(out, "Usage: hostrangectl ", 20) == 0);
        assert_non_null(strstr(out, cmds[i][0]));
        assert_non_null(strstr(out, cmds[i][1]));
        assert_non_null(strstr(out, cmds[i][2]));
        free(out);
    }
    out = CTL(NULL, 0, "--help");
    assert_non_null(strstr(out, "record"));
    free(out);
    harness_run(argv, NULL, 30, &r);
    assert_true(harness_exited(r.status, 0));
    assert_non_null(strstr(r.out, "--state-dir"));
    assert_non_null(strstr(r.out, "--exact-cap"));
    assert_non_null(strstr(r.out, "--max-memory"));
    assert_non_null(strstr(r.out, "--group"));
    assert_non_null(strstr(r.out, "4 MiB"));
    harness_run_free(&r);
}

/* Runs argv; expects status 2 and one line on stderr containing want. */
static void usage_error(char *const argv[], const char *want)
{
    struct harness_run r;

    harness_run(argv, NULL, 30, &r);
    if (!harness_exited(r.status, 2) || strstr(r.err, want) == NULL ||
        strchr(r.err, '\n') == NULL || strchr(r.err, '\n')[1] != '\0')
        fail_msg("%s %s: status %d, stderr '%s' (wanted '%s')", argv[1],
                 argv[2] ? argv[2] : "", r.status, r.err, want);
    assert_string_equal(r.out, "");
    harness_run_free(&r);
}

#define USAGE(want, ...) \
    usage_error((char *const[]){ __VA_ARGS__, NULL }, want)

static void test_usage_errors(void **state)
{
    char *c = (char *)harness_program("HOSTRANGECTL");
    char *d = (char *)harness_program("HOSTRANGED");

    (void)state;
    USAGE("unknown option '--bogus'", c, "dump", "--bogus");
    USAGE("bad phase 'hot'", c, "dump", "--phase", "hot");
    USAGE("bad phase 'hot'", c, "reset", "--phase", "hot");
    USAGE("bad --node '' (a shell pattern; an empty one would select every "
          "key: leave the option out)", c, "reset", "--node", "");
    USAGE("bad --range ''", c, "dump", "--range", "");
    USAGE("bad --backend ''", c, "plot", "--backend", "", "-o", "p.svg");
    USAGE("bad format 'xml'", c, "dump", "--format", "xml");
    USAGE("bad fields 'some'", c, "record", "--fields", "some", "--", "true");
    USAGE("missing value for option '--node'", c, "dump", "--node");
    USAGE("bad timeout 'abc'", c, "-t", "abc", "ping");
    USAGE("bad wait '-1'", c, "ping", "--wait", "-1");
    USAGE("unexpected argument 'extra'", c, "stats", "extra");
    USAGE("unknown option '--format'", c, "reset", "--format", "csv");
    USAGE("unknown option '-v'", c, "dump", "-vx");
    USAGE("unknown option '-q'", c, "-q", "dump");
    /* A global option after the command: where it goes. */
    USAGE("'-r' is an option of hostrangectl itself: give it before the "
          "command (hostrangectl -r DIR save ...)", c, "save", "-o", "f",
          "-r", "dir");
    USAGE("'--timeout=5' is an option of hostrangectl itself",
          c, "dump", "--timeout=5");
    USAGE("'-t' is an option of hostrangectl itself", c, "ping", "-t5");
    USAGE("unknown command 'frobnicate'", c, "frobnicate");
    USAGE("no command", c);
    USAGE("no command to run", c, "record");
    USAGE("bad value '0' for --exact-cap", d, "--exact-cap", "0");
    USAGE("bad value '10' for --max-memory", d, "--max-memory", "10");
    USAGE("bad value '1X' for --max-memory", d, "--max-memory", "1X");
    USAGE("bad value '-5' for --fsync-interval", d, "--fsync-interval", "-5");
    USAGE("no such group", d, "--group", "no-such-group-hostrange");
    USAGE("bad value '' for --state-dir (a directory", d, "--state-dir", "");
    USAGE("bad value '' for --load (a run file", d, "--load", "");
    USAGE("unknown option '--bogus'", d, "--bogus");
    USAGE("unknown option '-x'", d, "-qx");
    if (getenv("top_builddir") != NULL) {
        char b[4096];

        snprintf(b, sizeof b, "%s/bench/hostrange-bench",
                 getenv("top_builddir"));
        USAGE("unknown option '-q'", b, "-qx");
        USAGE("unknown option '--bogus'", b, "--bogus");
    }
    USAGE("unexpected argument 'x'", d, "x");
}

/* No daemon: one line that names the runtime directory, status 1. */
static void test_unreachable(void **state)
{
    static const char *const cmds[] = { "dump", "stats", "reset", "ping" };
    char *argv[6];
    struct harness_run r;

    (void)state;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        argv[0] = (char *)harness_program("HOSTRANGECTL");
        argv[1] = "-r";
        argv[2] = "/nonexistent/hostrange-cli";
        argv[3] = (char *)cmds[i];
        argv[4] = NULL;
        harness_run(argv, NULL, 30, &r);
        assert_true(harness_exited(r.status, 1));
        assert_non_null(strstr(r.err, "/nonexistent/hostrange-cli"));
        assert_non_null(strchr(r.err, '\n'));
        assert_true(strchr(r.err, '\n')[1] == '\0');
        assert_string_equal(r.out, "");
        harness_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filters_and_reset, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_output_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_unreachable),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
