/*
 * daemon.ingest: range events per second that hostranged decodes,
 * validates, journals (with a state directory) and aggregates, fed by 4
 * processes that replay pre-encoded batches of 16384 events (the client's
 * batch size), each waiting for the acknowledgement of one batch before
 * sending the next, as the client does.
 *
 * Baseline: the same 4 processes sending the same bytes over nanomsg to a
 * receiver that answers each with a fixed acknowledgement and does nothing
 * else. Each figure is the best of 3 alternating rounds (a fresh daemon
 * each round). Goal: ratio >= 0.5.
 *
 * Usage: bench_daemon_ingest [BATCHES_PER_SENDER] (default 48).
 */
#include "config.h"

#include "perf/bench_daemon_util.h"
#include "proto/protocol.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define SENDERS 4
#define EVENTS_PER_BATCH 16384u
#define ROUNDS 3

struct encoded {
    uint8_t *buf;
    size_t len;
};

static struct encoded *batches[SENDERS];
static int nbatches;
/* Whether acknowledgements carry the batch's number (the daemon's do, the
 * do-nothing receiver's do not). */
static int check_seq;
static uint64_t total_events;

static void encode_all(void)
{
    uint64_t rng = 0x1234567887654321ull;

    for (int s = 0; s < SENDERS; s++) {
        batches[s] = calloc((size_t)nbatches, sizeof *batches[s]);
        for (int i = 0; i < nbatches; i++) {
            struct db_batch x;

            db_init(&x, 1000 + (uint32_t)s, (uint64_t)i + 1);
            bd_workload(&x, EVENTS_PER_BATCH, (uint32_t)(i % 2), &rng);
            total_events += db_events(&x);
            batches[s][i].buf = db_pack(&x, &batches[s][i].len);
            db_fini(&x);
        }
    }
}

/* One sender: connects, waits for the go byte, sends every batch and
 * waits for each answer; exits 0 when each was acknowledged OK. */
static void sender(int s, const char *url, int go)
{
    int sock = nn_socket(AF_SP, NN_REQ), max = -1;
    char c;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    if (sock < 0 || nn_connect(sock, url) < 0)
        _exit(2);
    if (read(go, &c, 1) != 1)
        _exit(2);
    for (int i = 0; i < nbatches; i++) {
        void *msg = NULL;
        Hostrange__Ack *ack;
        int n;

        if (nn_send(sock, batches[s][i].buf, batches[s][i].len, 0) < 0 ||
            (n = nn_recv(sock, &msg, NN_MSG, 0)) < 0)
            _exit(3);
        ack = hostrange__ack__unpack(NULL, (size_t)n, msg);
        if (ack == NULL || ack->status != HOSTRANGE__ACK__STATUS__OK ||
            (check_seq && ack->seq != (uint64_t)i + 1))
            _exit(4);
        hostrange__ack__free_unpacked(ack, NULL);
        nn_freemsg(msg);
    }
    nn_close(sock);
    _exit(0);
}

/* Runs the senders against url; returns the seconds from go to done. */
static double run_senders(const char *url)
{
    pid_t pids[SENDERS];
    int go[2], status;
    double t0, t1;
    char bytes[SENDERS];

    if (pipe(go) != 0)
        bd_die("pipe: %s", strerror(errno));
    for (int s = 0; s < SENDERS; s++) {
        pids[s] = fork();
        if (pids[s] == 0) {
            close(go[1]);
            sender(s, url, go[0]);
        }
    }
    close(go[0]);
    usleep(200000); /* let them connect */
    memset(bytes, 'g', sizeof bytes);
    t0 = bd_now();
    if (write(go[1], bytes, sizeof bytes) != (ssize_t)sizeof bytes)
        bd_die("cannot start the senders");
    for (int s = 0; s < SENDERS; s++) {
        if (waitpid(pids[s], &status, 0) != pids[s] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            bd_die("sender %d failed (status %d)", s, status);
    }
    t1 = bd_now();
    close(go[1]);
    return t1 - t0;
}

/* The do-nothing receiver: answers each message with a fixed ack. */
static pid_t sink_start(const char *url)
{
    pid_t pid = fork();

    if (pid == 0) {
        Hostrange__Ack m = HOSTRANGE__ACK__INIT;
        uint8_t ack[64];
        size_t alen;
        int sock = nn_socket(AF_SP, NN_REP), max = -1;

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        m.version = HRP_VERSION;
        nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
        if (sock < 0 || nn_bind(sock, url) < 0)
            _exit(2);
        alen = hostrange__ack__pack(&m, ack);
        for (;;) {
            void *msg = NULL;
            int n = nn_recv(sock, &msg, NN_MSG, 0);

            if (n < 0)
                _exit(3);
            nn_freemsg(msg);
            if (nn_send(sock, ack, alen, 0) < 0)
                _exit(4);
        }
    }
    if (pid < 0)
        bd_die("fork: %s", strerror(errno));
    usleep(100000);
    return pid;
}

int main(int argc, char **argv)
{
    double best_sink = 1e30, best_daemon = 1e30;
    char sinkdir[256], url[400];

    nbatches = argc > 1 ? atoi(argv[1]) : 48;
    if (nbatches < 1)
        bd_die("usage: bench_daemon_ingest [BATCHES_PER_SENDER]");
    encode_all();
    bd_tempdir(sinkdir, sizeof sinkdir, "sink");
    snprintf(url, sizeof url, "ipc://%s/sink", sinkdir);
    for (int round = 0; round < ROUNDS; round++) {
        struct bd_daemon d;
        Hostrange__ControlReply *rep;
        char durl[400];
        pid_t sink;
        double t;
        int status;

        sink = sink_start(url);
        check_seq = 0;
        t = run_senders(url);
        if (t < best_sink)
            best_sink = t;
        kill(sink, SIGKILL);
        waitpid(sink, &status, 0);

        bd_daemon_start(&d, 1, NULL);
        hrp_endpoint(durl, sizeof durl, d.dir, HRP_INGEST_NAME);
        check_seq = 1;
        t = run_senders(durl);
        if (t < best_daemon)
            best_daemon = t;
        /* Everything arrived: range events count twice (inclusive and
         * self), records once. */
        rep = bd_stats(&d);
        if (rep->stats->n_clients != SENDERS ||
            rep->stats->state == NULL ||
            rep->stats->state->journal_records != (uint64_t)SENDERS * nbatches)
            bd_die("the daemon did not journal every batch");
        hostrange__control_reply__free_unpacked(rep, NULL);
        bd_daemon_stop(&d);
    }
    bd_rmdir(sinkdir);
    bd_report("daemon.ingest", (double)total_events / best_daemon,
              "events/s", (double)total_events / best_sink);
    for (int s = 0; s < SENDERS; s++) {
        for (int i = 0; i < nbatches; i++)
            free(batches[s][i].buf);
        free(batches[s]);
    }
    return 0;
}
