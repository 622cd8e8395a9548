/*
 * A daemon restarted or away while its clients finish, with real
 * hostranged processes on a state directory and the instrumented
 * tests/helpers/recorder as the clients. In every case each client's events
 * are in the report exactly: its node's count plus the `lost` the report
 * shows for it equals the samples it made.
 *
 * - the daemon frozen while the clients begin their last flush, then
 *   SIGKILLed, its socket refusing connections and then missing, and
 *   started again: the flushes wait through it all and deliver everything;
 * - the daemon down longer than the clients' exit timeout: they leave
 *   their batches in the spool, which the next daemon takes (and keeps
 *   across a SIGKILL);
 * - damaged spool files (a record's bytes changed, a file cut short), a
 *   file that is no spool file, a link, and (as root) a file of a user who
 *   may not connect: set aside and counted, the losses in the report;
 * - a spool over its limit (HOSTRANGE_SPOOL_MB): what did not fit is
 *   counted lost, in the client and in the report;
 * - settings that are not numbers (HOSTRANGE_SPOOL_MB "a lot"): the
 *   defaults, so that nothing is lost to a typo;
 * - two restarts while the clients send;
 * - a process that never reached a daemon, with the socket of a dead one
 *   left behind: its flush and its exit do not wait.
 *
 * The counts are modest: CI runs these tests with the daemon under
 * valgrind.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
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

#include "proto/spool.h"
#include "tests/lib/harness_rows.h"
#include "tests/lib/harness.h"

#define CLIENTS 4

/* A daemon on a runtime and a state directory, and its clients. */
struct run {
    struct harness_daemon d;
    char state[256];
    char log[300];
    int n;
    char out[CLIENTS][320];
    char node[CLIENTS][64];
    pid_t pid[CLIENTS];
    struct harness_counters c[CLIENTS];
};

static struct flat rows[64];

/* Starts the daemon on r's directories (its log to r->log when set). */
static void daemon_up(struct run *r)
{
    const char *extra[] = { "--state-dir", r->state, NULL };
    struct harness_daemon_opts o = { extra, NULL, 0 };

    o.log_path = r->log[0] != '\0' ? r->log : NULL;
    harness_daemon_start_opts(&r->d, &o);
}

static void run_init(struct run *r, const char *tag)
{
    memset(r, 0, sizeof *r);
    harness_mkdtemp(r->d.dir, sizeof r->d.dir, tag);
    harness_mkdtemp(r->state, sizeof r->state, "state");
    daemon_up(r);
}

static void run_fini(struct run *r)
{
    for (int k = 0; k < r->n; k++)
        unlink(r->out[k]);
    if (r->log[0] != '\0')
        unlink(r->log);
    harness_daemon_stop(&r->d);
    harness_rm_rf(r->state);
}

/*
 * Starts n recorders making calls of two nested ranges (two events a
 * call), one every pace_ns at most, under node ids of their own: with
 * stop_file NULL, `calls` calls and then a flush that waits up to
 * flush_ms; otherwise calls until stop_file exists. Their environment gets
 * env (NAME, VALUE pairs, NULL-terminated).
 */
static void clients_start(struct run *r, int n, const char *calls,
                          const char *flush_ms, const char *stop_file,
                          const char *pace_ns, const char *const *env)
{
    r->n = n;
    for (int i = 0; env != NULL && env[i] != NULL; i += 2)
        setenv(env[i], env[i + 1], 1);
    for (int k = 0; k < n; k++) {
        char *flush[] = { (char *)harness_recorder(), "-R", "-N", r->node[k],
                          "-n", (char *)calls, "-e", (char *)calls, "-f",
                          (char *)flush_ms, "-p", (char *)pace_ns, NULL };
        char *paced[] = { (char *)harness_recorder(), "-R", "-N", r->node[k],
                          "-S", (char *)stop_file, "-p", (char *)pace_ns,
                          NULL };

        snprintf(r->node[k], sizeof r->node[k], "tests/spool::client%d", k);
        snprintf(r->out[k], sizeof r->out[k], "%s.out%d", r->d.dir, k);
        r->pid[k] = harness_spawn(stop_file == NULL ? flush : paced,
                                  r->d.dir, NULL, r->out[k]);
    }
    for (int i = 0; env != NULL && env[i] != NULL; i += 2)
        unsetenv(env[i]);
}

/* Waits for the clients; reads their final counters. */
static void clients_wait(struct run *r)
{
    for (int k = 0; k < r->n; k++) {
        char *text;

        assert_true(harness_exited(harness_wait(r->pid[k], 300), 0));
        text = harness_read_file(r->out[k]);
        if (harness_counters(text, "final", &r->c[k]) != 0)
            fail_msg("client %d printed no counters: %s", k, text);
        free(text);
    }
}

/* What hr_flush returned at the end of client k (0 or -errno). */
static long flush_result(const struct run *r, int k)
{
    char *text = harness_read_file(r->out[k]);
    long rc = (long)harness_last_field(text, "acked ", "flush");

    free(text);
    return rc;
}

/* Freezes the daemon until every client has begun its last flush, then
 * kills it: each client then holds batches no daemon has acknowledged. */
static void kill_in_final_flush(struct run *r)
{
    assert_int_equal(kill(r->d.pid, SIGSTOP), 0);
    for (int k = 0; k < r->n; k++)
        free(harness_wait_lines(r->out[k], "flushing ", 1, 300));
    assert_true(WIFSIGNALED(harness_daemon_signal(&r->d, SIGKILL)));
}

/* Every client's events are in the report: its count plus its lost equal
 * its samples. Returns the lost events of all clients in the report. */
static unsigned long long check_report(const struct run *r)
{
    char *rep = harness_dump(r->d.dir, "all");
    int n = flat_parse_rows(rep, rows, 64);
    unsigned long long all_lost = 0;

    for (int k = 0; k < r->n; k++) {
        unsigned long long count = flat_node_count(rows, n, r->node[k]),
                           lost = flat_node_lost(rows, n, r->node[k]);

        if (count + lost != r->c[k].samples)
            fail_msg("client %d: %llu samples; the report counts %llu and "
                     "%llu lost", k, r->c[k].samples, count, lost);
        all_lost += lost;
    }
    free(rep);
    return all_lost;
}

/* A stats counter of the daemon on dir. */
static unsigned long long stat_of(const char *dir, const char *key)
{
    char *st = harness_stats(dir);
    unsigned long long v = harness_stat(st, key);

    free(st);
    return v;
}

/* Waits (a hang guard) until the daemon has taken n spool files. */
static void wait_spool_taken(const struct run *r, unsigned long long n)
{
    for (int i = 0; stat_of(r->d.dir, "spool.files") < n; i++) {
        if (i == 12000)
            fail_msg("the daemon took fewer than %llu spool files", n);
        usleep(10000);
    }
    assert_int_equal(stat_of(r->d.dir, "spool.waiting"), 0);
}

/* The number of files in the spool folder whose names end with suffix. */
static int spool_files(const struct run *r, const char *suffix)
{
    char path[400];
    struct dirent *e;
    int n = 0;
    DIR *d;

    snprintf(path, sizeof path, "%s/%s", r->d.dir, HRP_SPOOL_NAME);
    d = opendir(path);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        n += len > sl && strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

/* The path of client k's spool file (written to buf). */
static const char *spool_path(const struct run *r, int k, char *buf,
                              size_t len)
{
    char path[400];
    struct dirent *e;
    char want[32];
    DIR *d;

    snprintf(path, sizeof path, "%s/%s", r->d.dir, HRP_SPOOL_NAME);
    snprintf(want, sizeof want, "%ld-", (long)r->pid[k]);
    d = opendir(path);
    assert_non_null(d);
    buf[0] = '\0';
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, want, strlen(want)) == 0)
            snprintf(buf, len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (buf[0] == '\0')
        fail_msg("client %d left no spool file", k);
    return buf;
}

/*
 * Runs CLIENTS clients whose daemon dies while they flush and stays down
 * past their exit timeout: each leaves its batches in the spool. Checks
 * their counters and the files. The clients are paced so that the daemon
 * is frozen before any of them is done.
 */
static void leave_spool(struct run *r, const char *tag)
{
    const char *env[] = { "HOSTRANGE_FLUSH_TIMEOUT_MS", "300", NULL };
    char dir[400];
    struct stat st;

    run_init(r, tag);
    clients_start(r, CLIENTS, "50000", "300", NULL, "20000", env);
    for (int k = 0; k < CLIENTS; k++)
        harness_wait_events(r->d.dir, r->pid[k]);
    kill_in_final_flush(r);
    clients_wait(r);
    for (int k = 0; k < CLIENTS; k++) {
        char path[600];

        assert_true(flush_result(r, k) != 0);
        assert_true(r->c[k].spooled > 0);
        assert_int_equal(r->c[k].lost, 0);
        assert_int_equal(r->c[k].delivered + r->c[k].spooled,
                         r->c[k].samples);
        assert_int_equal(stat(spool_path(r, k, path, sizeof path), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
    }
    assert_int_equal(spool_files(r, HRP_SPOOL_SUFFIX), CLIENTS);
    snprintf(dir, sizeof dir, "%s/%s", r->d.dir, HRP_SPOOL_NAME);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, HRP_SPOOL_DIR_MODE);
}

static void test_killed_in_final_flush(void **state)
{
    const char *env[] = { "HOSTRANGE_FLUSH_TIMEOUT_MS", "120000", NULL };
    char sock[400];
    struct run r;

    (void)state;
    run_init(&r, "finalflush");
    clients_start(&r, CLIENTS, "50000", "120000", NULL, "20000", env);
    for (int k = 0; k < CLIENTS; k++)
        harness_wait_events(r.d.dir, r.pid[k]);
    kill_in_final_flush(&r);
    /* Every client is still in its flush: none could end it. */
    for (int k = 0; k < CLIENTS; k++) {
        char *text = harness_read_file(r.out[k]);

        assert_null(strstr(text, "acked "));
        free(text);
    }
    /* For a while its socket refuses connections, then it is missing (as
     * when a daemon stops or starts): the flushes wait through both. */
    usleep(300000);
    snprintf(sock, sizeof sock, "%s/%s", r.d.dir, HRP_INGEST_NAME);
    assert_int_equal(unlink(sock), 0);
    usleep(300000);
    daemon_up(&r);
    clients_wait(&r);
    for (int k = 0; k < CLIENTS; k++) {
        assert_int_equal(flush_result(&r, k), 0);
        assert_int_equal(r.c[k].samples, 100000);
        assert_int_equal(r.c[k].delivered, r.c[k].samples);
        assert_int_equal(r.c[k].lost, 0);
        assert_int_equal(r.c[k].spooled, 0);
    }
    assert_int_equal(check_report(&r), 0);
    assert_int_equal(spool_files(&r, HRP_SPOOL_SUFFIX), 0);
    run_fini(&r);
}

static void test_down_past_exit_timeout(void **state)
{
    unsigned long long spooled = 0;
    struct run r;
    char *st;

    (void)state;
    leave_spool(&r, "spool");
    for (int k = 0; k < CLIENTS; k++)
        spooled += r.c[k].spooled;
    daemon_up(&r);
    wait_spool_taken(&r, CLIENTS);
    st = harness_stats(r.d.dir);
    assert_int_equal(harness_stat(st, "spool.rejected"), 0);
    assert_int_equal(harness_stat(st, "spool.rejected_files"), 0);
    assert_int_equal(harness_stat(st, "spool.lost_events"), 0);
    /* Each file's batches, and each file's last batch. */
    assert_int_equal(harness_stat(st, "spool.ingested") +
                         harness_stat(st, "spool.duplicates") + CLIENTS,
                     harness_stat(st, "spool.batches") + CLIENTS);
    assert_true(harness_stat(st, "spool.ingested") > 0);
    assert_int_equal(harness_stat_rejected(st), 0);
    free(st);
    assert_int_equal(spool_files(&r, HRP_SPOOL_SUFFIX), 0);
    assert_int_equal(check_report(&r), 0);
    printf("# %llu events left in the spool by %d clients, all in the "
           "report\n", spooled, CLIENTS);
    /* Journaled: a SIGKILL and a restart keep them. */
    assert_true(WIFSIGNALED(harness_daemon_signal(&r.d, SIGKILL)));
    daemon_up(&r);
    assert_int_equal(check_report(&r), 0);
    run_fini(&r);
}

/* Reads a whole binary file into *buf (caller frees); returns its size. */
static size_t read_bytes(const char *path, uint8_t **buf)
{
    struct stat st;
    FILE *f = fopen(path, "rb");

    assert_non_null(f);
    assert_int_equal(fstat(fileno(f), &st), 0);
    *buf = malloc((size_t)st.st_size + 1);
    assert_non_null(*buf);
    assert_int_equal(fread(*buf, 1, (size_t)st.st_size, f), st.st_size);
    fclose(f);
    return (size_t)st.st_size;
}

/*
 * The offset of the largest batch record of a spool file (its length in
 * *len): one that carries events. A process's last batch may hold its
 * final counters alone, no event, and damaging it would lose none.
 */
static size_t largest_batch(const uint8_t *b, size_t size, uint32_t *len)
{
    size_t off = HRP_SPOOL_MAGIC_LEN, best = 0;
    uint32_t n;
    uint8_t type;

    *len = 0;
    while (off + HRP_SPOOL_REC_HEADER <= size) {
        uint64_t check;

        hrp_spool_rec_parse(b + off, &type, &n, &check);
        if (type == HRP_SPOOL_REC_BATCH && n > *len) {
            best = off;
            *len = n;
        }
        off += HRP_SPOOL_REC_HEADER + n;
    }
    assert_int_equal(off, size);
    assert_true(*len > 0);
    return best;
}

static void test_damaged_spool(void **state)
{
    char path[600], other[600];
    unsigned long long files = CLIENTS + 2, lost;
    uint8_t *b;
    uint32_t len;
    size_t size, off;
    struct run r;
    char *st, *log;

    (void)state;
    leave_spool(&r, "damaged");
    /* Client 0's largest batch gets a byte changed, client 1's file is cut
     * in the middle of its largest batch. */
    size = read_bytes(spool_path(&r, 0, path, sizeof path), &b);
    off = largest_batch(b, size, &len);
    b[off + HRP_SPOOL_REC_HEADER + len / 2] ^= 0x40;
    harness_write_file(path, b, size);
    free(b);
    size = read_bytes(spool_path(&r, 1, path, sizeof path), &b);
    off = largest_batch(b, size, &len);
    harness_write_file(path, b, off + HRP_SPOOL_REC_HEADER + len / 2);
    free(b);
    /* No spool file at all, and a link. */
    snprintf(other, sizeof other, "%s/%s/4242-00000000000000aa%s", r.d.dir,
             HRP_SPOOL_NAME, HRP_SPOOL_SUFFIX);
    harness_write_file(other, "not a spool file\n", 17);
    snprintf(other, sizeof other, "%s/%s/4243-00000000000000ab%s", r.d.dir,
             HRP_SPOOL_NAME, HRP_SPOOL_SUFFIX);
    assert_int_equal(symlink(path, other), 0);
    /* A file of a user who may not connect (only root can make one). */
    if (geteuid() == 0) {
        snprintf(other, sizeof other, "%s/%s/4244-00000000000000ac%s",
                 r.d.dir, HRP_SPOOL_NAME, HRP_SPOOL_SUFFIX);
        harness_write_file(other, HRP_SPOOL_MAGIC, HRP_SPOOL_MAGIC_LEN);
        assert_int_equal(chown(other, 65534, 65534), 0);
        files++;
    }

    snprintf(r.log, sizeof r.log, "%s.log", r.d.dir);
    daemon_up(&r);
    wait_spool_taken(&r, files);
    st = harness_stats(r.d.dir);
    assert_int_equal(harness_stat(st, "spool.rejected_files"), files - 2);
    assert_int_equal(harness_stat(st, "spool.rejected"), 2);
    lost = harness_stat(st, "spool.lost_events");
    free(st);
    assert_int_equal(spool_files(&r, HRP_SPOOL_SUFFIX), 0);
    assert_int_equal(spool_files(&r, HRP_SPOOL_ASIDE_SUFFIX), files - 2);
    /* The damaged batches are lost, under their clients' node ids; the
     * report holds everything else. */
    assert_true(lost > 0);
    assert_int_equal(check_report(&r), lost);
    {
        char *rep = harness_dump(r.d.dir, "all");
        int n = flat_parse_rows(rep, rows, 64);

        assert_true(flat_node_lost(rows, n, r.node[0]) > 0);
        assert_true(flat_node_lost(rows, n, r.node[1]) > 0);
        assert_int_equal(flat_node_lost(rows, n, r.node[2]), 0);
        assert_int_equal(flat_node_lost(rows, n, r.node[3]), 0);
        free(rep);
    }
    log = harness_read_file(r.log);
    assert_non_null(strstr(log, "not a spool file"));
    assert_non_null(strstr(log, "a symbolic link"));
    assert_non_null(strstr(log, ": damaged"));
    if (geteuid() == 0)
        assert_non_null(strstr(log, "owned by a user who may not connect"));
    free(log);
    printf("# 2 damaged spool files: %llu events lost and counted\n", lost);
    run_fini(&r);
}

/* One client (calls, with env) that ends beside a daemon silent from the
 * start, which acknowledges nothing and is then killed (SIGKILL): what
 * the client made is spooled or lost, in r->c[0]. */
static void exit_to_silent_daemon(struct run *r, const char *name,
                                  const char *calls, const char *const *env)
{
    run_init(r, name);
    assert_int_equal(kill(r->d.pid, SIGSTOP), 0);
    clients_start(r, 1, calls, "300", NULL, "0", env);
    clients_wait(r);
    assert_true(WIFSIGNALED(harness_daemon_signal(&r->d, SIGKILL)));
}

static void test_spool_over_limit(void **state)
{
    const char *env[] = { "HOSTRANGE_FLUSH_TIMEOUT_MS", "300",
                          "HOSTRANGE_SPOOL_MB", "1", NULL };
    char path[600];
    struct stat st;
    struct run r;

    (void)state;
    /* The client's three megabytes of batches meet a spool of one. */
    exit_to_silent_daemon(&r, "limit", "500000", env);
    assert_true(flush_result(&r, 0) != 0);
    assert_int_equal(r.c[0].delivered, 0);
    assert_true(r.c[0].spooled > 0);
    assert_true(r.c[0].lost > 0);
    assert_int_equal(r.c[0].lost + r.c[0].spooled, r.c[0].samples);
    assert_int_equal(stat(spool_path(&r, 0, path, sizeof path), &st), 0);
    assert_true(st.st_size <= (1 << 20) + (64 << 10));

    daemon_up(&r);
    wait_spool_taken(&r, 1);
    assert_int_equal(stat_of(r.d.dir, "spool.lost_events"), 0);
    /* What did not fit is in the report's lost. */
    assert_int_equal(check_report(&r), r.c[0].lost);
    printf("# a spool of 1 MiB: %llu events spooled, %llu lost and "
           "counted\n", r.c[0].spooled, r.c[0].lost);
    run_fini(&r);
}

/*
 * Settings that are not numbers take their defaults: HOSTRANGE_SPOOL_MB
 * "a lot" is the default spool (64 MiB), not 0 (no spool), and
 * HOSTRANGE_FLUSH_TIMEOUT_MS "300ms" waits, not 0 ms: with a silent daemon,
 * everything the client made is spooled at exit and nothing lost.
 */
static void test_settings_not_numbers(void **state)
{
    const char *env[] = { "HOSTRANGE_FLUSH_TIMEOUT_MS", "300ms",
                          "HOSTRANGE_SPOOL_MB", "a lot", NULL };
    struct run r;

    (void)state;
    exit_to_silent_daemon(&r, "notnum", "20000", env);
    assert_int_equal(r.c[0].delivered, 0);
    assert_int_equal(r.c[0].lost, 0);
    assert_int_equal(r.c[0].spooled, r.c[0].samples);
    assert_true(r.c[0].samples > 0);

    daemon_up(&r);
    wait_spool_taken(&r, 1);
    assert_int_equal(check_report(&r), 0);
    run_fini(&r);
}

/* Waits (a hang guard) until the daemon has taken more than `than` events
 * from every client. */
static void wait_more(const struct run *r, const unsigned long long *than)
{
    for (int k = 0; k < r->n; k++) {
        for (int i = 0; harness_client_events(r->d.dir, r->pid[k]) <= than[k];
             i++) {
            if (i == 12000)
                fail_msg("no new events from client %d", k);
            usleep(10000);
        }
    }
}

static void test_two_restarts(void **state)
{
    const char *env[] = { "HOSTRANGE_FLUSH_TIMEOUT_MS", "120000", NULL };
    unsigned long long seen[CLIENTS] = { 0 };
    char stop[300];
    struct run r;

    (void)state;
    run_init(&r, "twice");
    snprintf(stop, sizeof stop, "%s.stop", r.d.dir);
    /* Two clients: they spin between calls, and the daemon (under valgrind
     * in CI) needs a core too. */
    clients_start(&r, 2, NULL, NULL, stop, "400000", env);
    wait_more(&r, seen);
    for (int restart = 0; restart < 2; restart++) {
        for (int k = 0; k < r.n; k++)
            seen[k] = harness_client_events(r.d.dir, r.pid[k]);
        assert_true(WIFSIGNALED(harness_daemon_signal(&r.d, SIGKILL)));
        usleep(300000);
        daemon_up(&r);
        wait_more(&r, seen);
    }
    harness_write_file(stop, "", 0);
    clients_wait(&r);
    for (int k = 0; k < r.n; k++) {
        assert_int_equal(r.c[k].delivered, r.c[k].samples);
        assert_int_equal(r.c[k].lost, 0);
        assert_int_equal(r.c[k].spooled, 0);
    }
    assert_int_equal(check_report(&r), 0);
    unlink(stop);
    run_fini(&r);
}

static void test_never_reached(void **state)
{
    char *argv[] = { (char *)harness_recorder(), "-R", "-N",
                     "tests/spool::late", "-n", "1000", "-e", "1000", "-f",
                     "600000", NULL };
    struct harness_run h;
    struct run r;

    (void)state;
    run_init(&r, "never");
    /* The daemon dies and leaves its socket: nothing listens on it. */
    assert_true(WIFSIGNALED(harness_daemon_signal(&r.d, SIGKILL)));
    /* A wait for a daemon would last ten minutes: the hang guard of
     * harness_run (120 s) would end the program and fail the test. */
    setenv("HOSTRANGE_FLUSH_TIMEOUT_MS", "600000", 1);
    harness_run(argv, r.d.dir, 120, &h);
    unsetenv("HOSTRANGE_FLUSH_TIMEOUT_MS");
    assert_true(harness_exited(h.status, 0));
    assert_int_equal(harness_last_field(h.out, "acked ", "flush"),
                     (unsigned long long)-ENOTCONN);
    r.n = 1;
    snprintf(r.node[0], sizeof r.node[0], "tests/spool::late");
    assert_int_equal(harness_counters(h.out, "final", &r.c[0]), 0);
    harness_run_free(&h);
    /* What it made waits in the spool for the next daemon. */
    assert_int_equal(r.c[0].samples, 2000);
    assert_int_equal(r.c[0].delivered, 0);
    assert_int_equal(r.c[0].spooled, r.c[0].samples);
    daemon_up(&r);
    wait_spool_taken(&r, 1);
    assert_int_equal(check_report(&r), 0);
    run_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_in_final_flush),
        cmocka_unit_test(test_down_past_exit_timeout),
        cmocka_unit_test(test_damaged_spool),
        cmocka_unit_test(test_spool_over_limit),
        cmocka_unit_test(test_settings_not_numbers),
        cmocka_unit_test(test_two_restarts),
        cmocka_unit_test(test_never_reached),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
