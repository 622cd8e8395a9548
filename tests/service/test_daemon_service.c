/*
 * hostranged as a service, with a real daemon on private directories:
 * state across a SIGKILL and a clean stop, record with four reporting
 * children, rejections over the socket, refusals of a runtime directory,
 * the connecting group, an unwritable state directory, a second daemon
 * on the same state directory, every client field of stats across
 * restarts, and keys with an empty operator or backend
 * through restarts and run files.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "proto/spool.h"
#include "tests/lib/harness_batch.h"
#include "tests/lib/harness_send.h"
#include "tests/lib/harness.h"

static int setup(void **state)
{
    struct harness_daemon *d = calloc(1, sizeof *d);

    harness_mkdtemp(d->dir, sizeof d->dir, "svc");
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    harness_daemon_stop(*state);
    free(*state);
    return 0;
}

/* Batch seq of client pid, with samples of both nodes and a record. */
static int send_batch(const char *dir, uint32_t pid, uint64_t seq)
{
    struct db_batch x;
    int status;

    db_init(&x, pid, seq);
    for (uint32_t i = 0; i < 20; i++)
        db_sample(&x, i % 4, i % 2, 1000 * seq + i, 500 * seq);
    db_record(&x, 1, 30000 + seq);
    status = harness_send_batch(dir, &x, NULL, 0);
    db_fini(&x);
    return status;
}

/* The report with every field (caller frees). */
static char *dump(const char *dir)
{
    struct harness_run r;

    harness_ctl(dir, &r, "dump", "--fields", "all", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    free(r.err);
    return r.out;
}

static char *stats(const char *dir)
{
    struct harness_run r;

    harness_ctl(dir, &r, "stats", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    free(r.err);
    return r.out;
}

static int exists(const char *dir, const char *name)
{
    char p[512];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

/* A directory next to the runtime one, for state. */
static void state_dir(const struct harness_daemon *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s.state", d->dir);
}

static void rm_rf(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Acknowledged batches survive SIGKILL; a resend after the restart is a
 * duplicate; the report is the same. */
static void test_restart_after_sigkill(void **state)
{
    struct harness_daemon *d = *state;
    char sdir[300], *before, *after, *st;
    const char *args[] = { "--state-dir", sdir, NULL };

    state_dir(d, sdir, sizeof sdir);
    harness_daemon_start_args(d, args);
    for (uint64_t seq = 1; seq <= 3; seq++)
        assert_int_equal(send_batch(d->dir, 11, seq),
                         HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_batch(d->dir, 12, 1), HOSTRANGE__ACK__STATUS__OK);
    before = dump(d->dir);
    assert_non_null(strstr(before, "\"count\":"));
    assert_true(WIFSIGNALED(harness_daemon_signal(d, SIGKILL)));

    harness_daemon_start_args(d, args);
    after = dump(d->dir);
    assert_string_equal(before, after);
    assert_int_equal(send_batch(d->dir, 11, 3),
                     HOSTRANGE__ACK__STATUS__DUPLICATE);
    assert_int_equal(send_batch(d->dir, 11, 4), HOSTRANGE__ACK__STATUS__OK);
    st = stats(d->dir);
    assert_non_null(strstr(st, "state.status ok\n"));
    assert_non_null(strstr(st, "state.replayed_records 4\n"));
    assert_non_null(strstr(st, "daemon.clients 2\n"));
    assert_non_null(strstr(st, "client.1.duplicates 1\n"));
    assert_non_null(strstr(st, "client.1.batches 4\n"));
    free(st);
    free(before);
    free(after);
    rm_rf(sdir);
}

/* SIGTERM: exit 0 with a snapshot written and the journals gone; the next
 * start has everything. */
static void test_clean_stop(void **state)
{
    struct harness_daemon *d = *state;
    char sdir[300], *before, *after;
    const char *args[] = { "--state-dir", sdir, NULL };
    struct harness_run r;
    int status;

    state_dir(d, sdir, sizeof sdir);
    harness_daemon_start_args(d, args);
    assert_int_equal(send_batch(d->dir, 21, 1), HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_batch(d->dir, 21, 2), HOSTRANGE__ACK__STATUS__OK);
    harness_ctl(d->dir, &r, "reset", "--node", "n2", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    /* n2 has (cold, binding.body) and (warm, dispatch.call). */
    assert_string_equal(r.out, "dropped 2 keys\n");
    harness_run_free(&r);
    before = dump(d->dir);
    assert_null(strstr(before, "\"nodeid\":\"n2\""));
    status = harness_daemon_signal(d, SIGTERM);
    assert_true(harness_exited(status, 0));
    assert_true(exists(sdir, "snapshot"));
    assert_false(exists(sdir, "journal.1"));
    assert_false(exists(d->dir, HRP_INGEST_NAME));

    harness_daemon_start_args(d, args);
    after = dump(d->dir);
    assert_string_equal(before, after);
    free(before);
    free(after);
    assert_true(harness_exited(harness_daemon_signal(d, SIGINT), 0));
    rm_rf(sdir);
}

/* Batch seq of client pid whose header sets every field that stats
 * prints per client: clock order, step and path, marks, the errors, the
 * contexts kept full, the names cut; final says whether it carries its
 * final counters. */
static int send_said(const char *dir, uint32_t pid, uint64_t seq,
                     const char *path, const char *order, double step,
                     int final)
{
    struct db_batch x;
    int status;

    db_init(&x, pid, seq);
    for (uint32_t i = 0; i < 8; i++)
        db_sample(&x, i % 4, i % 2, 1500 + 10 * i + seq, 600 + i);
    db_lost(&x, 1, 2 * seq);
    x.b.clock_path = (char *)path;
    x.b.clock_order = (char *)order;
    x.b.clock_step_ns = step;
    x.b.marks = 5 * seq + pid;
    x.b.lost_events = 2 * seq;
    x.b.errors_out_of_order = seq;
    x.b.errors_open_at_window_end = seq + 1;
    x.b.errors_foreign_thread = seq + 2;
    x.b.errors_label_in_window = seq + 3;
    x.b.errors_too_deep = seq + 4;
    x.b.errors_bad_name = seq + 5;
    x.b.errors_bad_label = seq + 6;
    x.b.contexts_full = seq + 7;
    x.b.names_cut = seq + 8;
    x.b.final_counters = final;
    status = harness_send_batch(dir, &x, NULL, 0);
    db_fini(&x);
    return status;
}

/* Batch seq of client pid with 4 samples, one of them invalid (its self
 * time above its inclusive time): refused. */
static int send_refused(const char *dir, uint32_t pid, uint64_t seq)
{
    struct db_batch x;
    int status;

    db_init(&x, pid, seq);
    for (uint32_t i = 0; i < 4; i++)
        db_sample(&x, i % 4, 0, 1000, i == 3 ? 2000 : 500);
    status = harness_send_batch(dir, &x, NULL, 0);
    db_fini(&x);
    return status;
}

/* The `client.` lines of the daemon's stats (caller frees). */
static char *client_lines(const char *dir)
{
    char *st = stats(dir), *out = calloc(1, strlen(st) + 1), *o = out;

    assert_non_null(out);
    for (const char *p = st; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);

        if (strncmp(p, "client.", 7) == 0) {
            memcpy(o, p, n);
            o += n;
        }
        p += n;
    }
    free(st);
    return out;
}

/* Restarts the daemon of d after signal sig and checks that stats prints
 * the client lines `want` again. */
static void restart_same(struct harness_daemon *d, const char *const *args,
                         int sig, const char *want, const char *when)
{
    char *got;
    int status = harness_daemon_signal(d, sig);

    if (sig == SIGKILL)
        assert_true(WIFSIGNALED(status));
    else
        assert_true(harness_exited(status, 0));
    harness_daemon_start_args(d, args);
    got = client_lines(d->dir);
    if (strcmp(want, got) != 0) {
        size_t i = 0, line;

        while (want[i] == got[i])
            i++;
        while (i > 0 && want[i - 1] != '\n')
            i--;
        line = strcspn(want + i, "\n");
        fail_msg("%s: the client line %.*s reads after it %.*s", when,
                 (int)line, want + i, (int)strcspn(got + i, "\n"), got + i);
    }
    free(got);
}

/* Every field that stats prints per client (the clock's order, step and
 * path, marks, errors, contexts full, names cut, unfinished, its nodes,
 * the events of its refused batches) is the same after a clean stop, which writes a snapshot, and after
 * SIGKILL, with the state read from a snapshot and with the batches
 * replayed from the journal and then read from the snapshot written at
 * the start. */
static void test_clients_across_restarts(void **state)
{
    struct harness_daemon *d = *state;
    char sdir[300], *before, *st;
    const char *args[] = { "--state-dir", sdir, NULL };

    state_dir(d, sdir, sizeof sdir);
    harness_daemon_start_args(d, args);
    assert_int_equal(send_said(d->dir, 41, 1, "fast", "rdtsc", 0.37, 0),
                     HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_said(d->dir, 41, 2, "fast", "rdtsc", 0.37, 1),
                     HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_said(d->dir, 42, 1, "ordered", "lfence", 1.25, 0),
                     HOSTRANGE__ACK__STATUS__OK);
    /* A batch refused (self above inclusive time): its events are
     * counted lost once, also when it comes again after a restart. */
    assert_int_equal(send_refused(d->dir, 41, 3),
                     HOSTRANGE__ACK__STATUS__REJECTED);
    before = client_lines(d->dir);
    /* What the batches said is there to lose. */
    assert_non_null(strstr(before, "client.1.clock_path fast\n"));
    assert_non_null(strstr(before, "client.1.clock_order rdtsc\n"));
    assert_non_null(strstr(before, "client.1.clock_step_ns 0.37\n"));
    assert_non_null(strstr(before, "client.1.marks 51\n"));
    assert_non_null(strstr(before, "client.1.errors.bad_name 7\n"));
    assert_non_null(strstr(before, "client.1.errors.bad_label 8\n"));
    assert_non_null(strstr(before, "client.1.contexts_full 9\n"));
    assert_non_null(strstr(before, "client.1.names_cut 10\n"));
    assert_non_null(strstr(before, "client.1.unfinished 0\n"));
    assert_non_null(strstr(before, "client.1.node n1\n"));
    assert_non_null(strstr(before, "client.1.refused_events 4\n"));
    assert_non_null(strstr(before, "client.2.clock_path ordered\n"));
    assert_non_null(strstr(before, "client.2.unfinished 1\n"));

    restart_same(d, args, SIGTERM, before, "a clean stop");
    restart_same(d, args, SIGKILL, before, "SIGKILL after a snapshot");
    free(before);

    /* Batches after the snapshot: replayed from the journal. */
    assert_int_equal(send_said(d->dir, 43, 1, "fast", "rdtscp", 0.5, 0),
                     HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_said(d->dir, 42, 2, "ordered", "lfence", 1.5, 1),
                     HOSTRANGE__ACK__STATUS__OK);
    before = client_lines(d->dir);
    assert_non_null(strstr(before, "client.3.clock_path waiting\n"));
    assert_non_null(strstr(before, "client.2.clock_step_ns 1.5\n"));
    assert_non_null(strstr(before, "client.2.unfinished 0\n"));
    restart_same(d, args, SIGKILL, before, "SIGKILL, the journal replayed");
    restart_same(d, args, SIGKILL, before,
                 "SIGKILL after the snapshot of a replay");
    restart_same(d, args, SIGTERM, before, "a clean stop after a replay");
    free(before);
    assert_int_equal(send_refused(d->dir, 41, 3),
                     HOSTRANGE__ACK__STATUS__REJECTED);
    st = stats(d->dir);
    assert_int_equal(harness_stat(st, "client.1.refused_events"), 4);
    free(st);
    assert_true(harness_exited(harness_daemon_signal(d, SIGTERM), 0));
    rm_rf(sdir);
}

/* record: a command that starts four children that all report. */
static void test_record_four_children(void **state)
{
    struct harness_daemon *d = *state;
    char out[300], script[1024];
    char *argv[] = { (char *)harness_program("HOSTRANGECTL"), "record", "-o",
                     out, "--format", "csv", "--", "/bin/sh", "-c", script,
                     NULL };
    struct harness_run r;
    char line[4096];
    FILE *f;
    int rows = 0, seen = 0;

    snprintf(out, sizeof out, "%s/report.csv", d->dir);
    snprintf(script, sizeof script,
             "for i in 1 2 3 4; do '%s' -c 25 -r 3 & done; wait; exit 5",
             harness_program("HOSTRANGE_TEST_WORKLOAD"));
    harness_run(argv, NULL, 120, &r);
    assert_true(harness_exited(r.status, 5));
    harness_run_free(&r);
    f = fopen(out, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "nodeid,operator,backend,phase,range,metric,"
                              "count,unit,mean,median\n");
    while (fgets(line, sizeof line, f) != NULL) {
        /* Four processes: 4 x 25 warm calls, 4 cold ones, 4 x 3 records
         * (20000, 20001, 20002 from each). */
        static const char *const want[] = {
            "tests/workload::node[1],synthetic,cpu,warm,workload.inner,self,"
            "100,ns,",
            "tests/workload::node[0],synthetic,cpu,cold,workload.outer,"
            "inclusive,4,ns,",
            "tests/workload::node[1],synthetic,cpu,warm,end_to_end,inclusive,"
            "12,ns,20001.0,20001.0\n",
        };
        rows++;
        for (int i = 0; i < 3; i++)
            seen += strncmp(line, want[i], strlen(want[i])) == 0;
    }
    fclose(f);
    assert_int_equal(rows, 18);
    assert_int_equal(seen, 3);
}

/* Every rejection reason over the socket, counted; the daemon serves on. */
static void test_rejections(void **state)
{
    struct harness_daemon *d = *state;
    struct db_batch x;
    uint8_t *buf, junk[64];
    size_t len;
    uint64_t seq;
    char *st, *big;
    static const struct {
        const char *name;
        int kind;
    } cases[] = {
        { "version", 0 }, { "sequence", 1 }, { "array_length", 2 },
        { "index", 3 }, { "phase", 4 }, { "string", 5 }, { "value", 6 },
    };

    harness_daemon_start_args(d, NULL);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        db_init(&x, 31, 9);
        db_sample(&x, 1, 0, 900, 400);
        db_sample(&x, 1, 1, 300, 300);
        switch (cases[c].kind) {
        case 0: x.b.version = HRP_VERSION + 1; break;
        case 1: x.b.seq = 0; break;
        case 2: x.events_delta = 1; break;
        case 3: x.range[1] = 7; break;
        case 4: x.l[1].phase = 0; break;
        case 5: x.b.ranges[0] = ""; break;
        default: x.self[0] = 901; break;
        }
        buf = db_pack(&x, &len);
        assert_int_equal(harness_send_bytes(d->dir, buf, len, &seq, NULL, 0),
                         HOSTRANGE__ACK__STATUS__REJECTED);
        assert_int_equal(seq, x.b.seq);
        free(buf);
        db_fini(&x);
    }
    memset(junk, 0xff, sizeof junk);
    assert_int_equal(harness_send_bytes(d->dir, junk, sizeof junk, NULL,
                                        NULL, 0),
                     HOSTRANGE__ACK__STATUS__REJECTED);
    big = calloc(1, HRP_MAX_INGEST_BYTES + 1);
    assert_int_equal(harness_send_bytes(d->dir, big, HRP_MAX_INGEST_BYTES + 1,
                                        NULL, NULL, 0),
                     HOSTRANGE__ACK__STATUS__REJECTED);
    free(big);

    st = stats(d->dir);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char want[64];
        snprintf(want, sizeof want, "rejected.%s 1\n", cases[c].name);
        if (strstr(st, want) == NULL)
            fail_msg("no '%s' in:\n%s", want, st);
    }
    assert_non_null(strstr(st, "rejected.malformed 1\n"));
    assert_non_null(strstr(st, "rejected.oversize 1\n"));
    assert_non_null(strstr(st, "daemon.keys 0\n"));
    free(st);
    /* Still serving. */
    assert_int_equal(send_batch(d->dir, 32, 1), HOSTRANGE__ACK__STATUS__OK);
}

/* Runs hostranged on d->dir with args; expects exit 1 and `want` in its
 * one-line error. */
static void expect_refusal(struct harness_daemon *d, const char *extra,
                           const char *extra_value, const char *want)
{
    char *argv[] = { (char *)harness_program("HOSTRANGED"), "--runtime-dir",
                     d->dir, (char *)extra, (char *)extra_value, NULL };
    struct harness_run r;

    harness_run(argv, NULL, 30, &r);
    assert_true(harness_exited(r.status, 1));
    if (strstr(r.err, want) == NULL)
        fail_msg("no '%s' in: %s", want, r.err);
    assert_non_null(strchr(r.err, '\n'));
    assert_true(strchr(r.err, '\n')[1] == '\0');
    harness_run_free(&r);
}

static void test_runtime_dir_refusals(void **state)
{
    struct harness_daemon *d = *state;

    assert_int_equal(chmod(d->dir, 0770), 0);
    expect_refusal(d, NULL, NULL, "must not be group- or world-writable");
    assert_int_equal(chmod(d->dir, 0702), 0);
    expect_refusal(d, NULL, NULL, "has mode 0702");
    assert_int_equal(chmod(d->dir, 0700), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(d->dir, 65534, (gid_t)-1), 0);
        expect_refusal(d, NULL, NULL, "is owned by uid 65534");
        assert_int_equal(chown(d->dir, 0, (gid_t)-1), 0);
    }
    /* Nothing was left behind by the refusals. */
    assert_false(exists(d->dir, HRP_INGEST_NAME));
    assert_false(exists(d->dir, HRP_LOCK_NAME));
}

/* --group: the directory 0750, the sockets 0660 and the spool folder
 * 3730, all of the group. */
static void test_group(void **state)
{
    struct harness_daemon *d = *state;
    struct group *g = getgrgid(getegid());
    const char *args[] = { "--group", NULL, NULL };
    char p[512];
    struct stat st;

    if (g == NULL)
        skip();
    args[1] = g->gr_name;
    harness_daemon_start_args(d, args);
    assert_int_equal(stat(d->dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0750);
    assert_int_equal(st.st_gid, getegid());
    snprintf(p, sizeof p, "%s/%s", d->dir, HRP_INGEST_NAME);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    assert_int_equal(st.st_gid, getegid());
    snprintf(p, sizeof p, "%s/%s", d->dir, HRP_CONTROL_NAME);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660);
    /* The spool: the group may add files, not list or remove others'. */
    snprintf(p, sizeof p, "%s/%s", d->dir, HRP_SPOOL_NAME);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, HRP_SPOOL_DIR_MODE_GROUP);
    assert_int_equal(st.st_gid, getegid());
    assert_int_equal(send_batch(d->dir, 41, 1), HOSTRANGE__ACK__STATUS__OK);
}

/* A state directory that cannot be made: the daemon serves, says so, and
 * answers batches RETRY (the client keeps them). */
static void test_unwritable_state(void **state)
{
    struct harness_daemon *d = *state;
    char file[300], sdir[400], *st, *out;
    const char *args[] = { "--state-dir", sdir, NULL };
    FILE *f;

    snprintf(file, sizeof file, "%s/not-a-dir", d->dir);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(sdir, sizeof sdir, "%s/state", file);
    harness_daemon_start_args(d, args);
    assert_int_equal(send_batch(d->dir, 51, 1), HOSTRANGE__ACK__STATUS__RETRY);
    st = stats(d->dir);
    assert_non_null(strstr(st, "state.status degraded\n"));
    assert_non_null(strstr(st, "state.last_error cannot create the state "
                               "directory"));
    assert_non_null(strstr(st, "daemon.retries 1\n"));
    free(st);
    out = dump(d->dir);
    assert_string_equal(out, "");
    free(out);
}

/* Two daemons (two runtime directories) on one state directory: the
 * second is refused. */
static void test_state_dir_taken(void **state)
{
    struct harness_daemon *d = *state;
    char sdir[300], other[300];
    const char *args[] = { "--state-dir", sdir, NULL };
    char *argv[] = { (char *)harness_program("HOSTRANGED"), "--runtime-dir",
                     other, "--state-dir", sdir, NULL };
    struct harness_run r;

    state_dir(d, sdir, sizeof sdir);
    harness_daemon_start_args(d, args);
    snprintf(other, sizeof other, "%s/other", d->dir);
    harness_run(argv, NULL, 30, &r);
    assert_true(harness_exited(r.status, 1));
    assert_non_null(strstr(r.err, "another hostranged uses the state "
                                  "directory"));
    harness_run_free(&r);
    rm_rf(sdir);
}

/* Batch seq of client pid whose label sets 0 and 1 (n1) have an empty
 * operator and set 2 (n2, cold) an empty backend, as hr_labels_set takes
 * them, with a lost count under set 0. */
static int send_unnamed(const char *dir, uint32_t pid, uint64_t seq)
{
    struct db_batch x;
    int status;

    db_init(&x, pid, seq);
    x.l[0].operator_ = x.l[1].operator_ = "";
    x.l[2].backend = "";
    for (uint32_t i = 0; i < 24; i++)
        db_sample(&x, i % 4, i % 3, 2000 + 10 * i + seq, 700 + i);
    db_record(&x, 0, 40000 + seq);
    db_lost(&x, 0, 3);
    status = harness_send_batch(dir, &x, NULL, 0);
    db_fini(&x);
    return status;
}

/* The files of dir set aside as damaged. */
static int damaged_files(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(dp);
    while ((e = readdir(dp)) != NULL)
        n += strstr(e->d_name, ".damaged-") != NULL;
    closedir(dp);
    return n;
}

/* The report of run file path (caller frees). */
static char *dump_from(const char *dir, const char *path)
{
    struct harness_run r;

    harness_ctl(dir, &r, "dump", "--from", path, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("dump --from %s: %s", path, r.err);
    free(r.err);
    return r.out;
}

/* Keys of an empty operator or backend (hr_labels_set takes both) are
 * kept whole by the snapshot of a clean stop, by the journal replayed
 * after SIGKILL and the snapshot written then, by save, and by merge. */
static void test_unnamed_labels(void **state)
{
    struct harness_daemon *d = *state;
    char sdir[300], run[400], merged[400], db[400], *before, *after, *st;
    char *plain;
    char *file;
    const char *args[] = { "--state-dir", sdir, NULL };
    struct harness_run r;

    state_dir(d, sdir, sizeof sdir);
    snprintf(run, sizeof run, "%s.hrs", sdir);
    snprintf(merged, sizeof merged, "%s-merged.hrs", sdir);
    harness_daemon_start_args(d, args);
    assert_int_equal(send_unnamed(d->dir, 31, 1), HOSTRANGE__ACK__STATUS__OK);
    assert_int_equal(send_unnamed(d->dir, 31, 2), HOSTRANGE__ACK__STATUS__OK);
    before = dump(d->dir);
    assert_non_null(strstr(before, "\"nodeid\":\"n1\",\"operator\":\"\""));
    assert_non_null(strstr(before, "\"backend\":\"\""));
    if (strstr(before, "\"lost\":3") == NULL)
        fail_msg("no lost count of 3: %s", before);

    /* SIGKILL: the journal is replayed and a snapshot written at once;
     * that snapshot is read at the next start. */
    assert_true(WIFSIGNALED(harness_daemon_signal(d, SIGKILL)));
    harness_daemon_start_args(d, args);
    after = dump(d->dir);
    assert_string_equal(before, after);
    free(after);
    assert_true(harness_exited(harness_daemon_signal(d, SIGTERM), 0));
    assert_int_equal(damaged_files(sdir), 0);
    harness_daemon_start_args(d, args);
    after = dump(d->dir);
    assert_string_equal(before, after);
    free(after);
    st = stats(d->dir);
    assert_non_null(strstr(st, "state.status ok\n"));
    free(st);

    /* A batch after the restarts is told from those before. */
    assert_int_equal(send_unnamed(d->dir, 31, 2),
                     HOSTRANGE__ACK__STATUS__DUPLICATE);

    /* save, and merge, give files that read back as the daemon's report. */
    plain = NULL;
    harness_ctl(d->dir, &r, "dump", (char *)NULL);
    assert_true(harness_exited(r.status, 0));
    plain = r.out;
    free(r.err);
    harness_ctl(d->dir, &r, "save", "-o", run, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("save: %s", r.err);
    harness_run_free(&r);
    file = dump_from(d->dir, run);
    assert_string_equal(plain, file);
    free(file);
    harness_ctl(d->dir, &r, "merge", "-o", merged, run, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("merge: %s", r.err);
    harness_run_free(&r);
    file = dump_from(d->dir, merged);
    assert_string_equal(plain, file);
    free(file);
    /* The history takes the keys with their empty names. */
    snprintf(db, sizeof db, "%s.db", sdir);
    harness_ctl(d->dir, &r, "history", "add", "--db", db, run, (char *)NULL);
    if (!harness_exited(r.status, 0))
        fail_msg("history add: %s", r.err);
    harness_run_free(&r);
    harness_ctl(d->dir, &r, "history", "show", "--db", db, "--format",
                "jsonl", (char *)NULL);
    if (!harness_exited(r.status, 0) ||
        strstr(r.out, "\"operator\":\"\"") == NULL ||
        strstr(r.out, "\"backend\":\"\"") == NULL)
        fail_msg("history show: %s%s", r.out, r.err);
    harness_run_free(&r);
    unlink(db);
    free(plain);
    free(before);
    unlink(run);
    unlink(merged);
    rm_rf(sdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_restart_after_sigkill, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_clean_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clients_across_restarts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_record_four_children, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rejections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runtime_dir_refusals, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_state_dir_taken, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unnamed_labels, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
