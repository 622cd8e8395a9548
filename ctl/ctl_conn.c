/*
 * hostrangectl's connection to hostranged (see ctl_conn.h): the one control
 * socket of the process, a request and its reply, and the reasons a
 * daemon cannot be reached, told apart (absent, not ours to open, not
 * answering, another protocol version).
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "proto/hostrange.pb-c.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char hrc_dir[4096];
int hrc_timeout_ms = 5000;

/* The one control socket of this process, opened on first use. */
static int g_sock = -1;

static int open_socket(int timeout_ms, char *err, size_t errlen)
{
    char url[4200];
    int max = -1;

    hrp_endpoint(url, sizeof url, hrc_dir, HRP_CONTROL_NAME);
    g_sock = nn_socket(AF_SP, NN_REQ);
    if (g_sock < 0) {
        int e = nn_errno();

        snprintf(err, errlen, "cannot open a socket: %s", nn_strerror(e));
        return -e;
    }
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max);
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    nn_setsockopt(g_sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    if (nn_connect(g_sock, url) < 0) {
        int e = nn_errno();

        snprintf(err, errlen, "cannot reach hostranged at %s: %s",
                 hrc_dir, nn_strerror(e));
        nn_close(g_sock);
        g_sock = -1;
        return -e;
    }
    return 0;
}

void hrc_close(void)
{
    if (g_sock >= 0)
        nn_close(g_sock);
    g_sock = -1;
}

int hrc_request_msg(const Hostrange__ControlRequest *q, void **msg,
                        size_t *msglen, int timeout_ms, char *err,
                        size_t errlen)
{
    char path[4200];
    struct stat st;
    uint8_t *buf;
    size_t len;
    int n;

    snprintf(path, sizeof path, "%s/%s", hrc_dir, HRP_CONTROL_NAME);
    /* A socket that exists but is not this user's to open is not an
     * absent daemon: say so, and name the ways out. */
    if ((stat(path, &st) != 0 && errno == EACCES) ||
        (access(path, R_OK | W_OK) != 0 && errno == EACCES)) {
        snprintf(err, errlen, "hostranged at %s does not let this user "
                 "connect (%s: %s): ask for the daemon to be started with "
                 "--group and a group of yours, or run your own daemon in "
                 "your runtime directory (hostrangectl -r DIR, or "
                 "HOSTRANGE_RUNTIME_DIR)", hrc_dir, path,
                 strerror(EACCES));
        return -EACCES;
    }
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "no hostranged serves %s (%s does not exist)",
                 hrc_dir, path);
        return -ENOENT;
    }
    if (g_sock < 0 && (n = open_socket(timeout_ms, err, errlen)) != 0)
        return n;
    len = hostrange__control_request__get_packed_size(q);
    buf = malloc(len ? len : 1);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    hostrange__control_request__pack(q, buf);
    *msg = NULL;
    if (nn_send(g_sock, buf, len, 0) < 0 ||
        (n = nn_recv(g_sock, msg, NN_MSG, 0)) < 0) {
        int e = nn_errno();
        snprintf(err, errlen, "cannot reach hostranged at %s: %s",
                 hrc_dir,
                 e == ETIMEDOUT ? "no answer in time" : nn_strerror(e));
        /* A REQ socket that timed out may get the late answer: start
         * afresh next time. */
        hrc_close();
        free(buf);
        return -e;
    }
    free(buf);
    *msglen = (size_t)n;
    return 0;
}

int hrc_request(const Hostrange__ControlRequest *q,
                    Hostrange__ControlReply **out, int timeout_ms, char *err,
                    size_t errlen)
{
    void *msg;
    size_t n;
    int rc = hrc_request_msg(q, &msg, &n, timeout_ms, err, errlen);

    if (rc != 0)
        return rc;
    *out = hostrange__control_reply__unpack(NULL, n, msg);
    nn_freemsg(msg);
    return hrc_reply_check(out, err, errlen);
}

int hrc_reply_check(Hostrange__ControlReply **out, char *err,
                        size_t errlen)
{
    if (*out == NULL) {
        snprintf(err, errlen, "hostranged at %s sent a reply that cannot be "
                 "decoded", hrc_dir);
        return -EPROTO;
    }
    if ((*out)->version != HRP_VERSION) {
        snprintf(err, errlen, "hostranged at %s speaks protocol version %u, "
                 "this hostrangectl speaks %u", hrc_dir, (*out)->version,
                 HRP_VERSION);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -EPROTO;
    }
    if ((*out)->error[0] != '\0') {
        snprintf(err, errlen, "hostranged at %s: %s", hrc_dir,
                 (*out)->error);
        hostrange__control_reply__free_unpacked(*out, NULL);
        return -EREMOTEIO;
    }
    return 0;
}

int hrc_ask(Hostrange__ControlRequest *q, Hostrange__ControlReply **rep,
                int quiet)
{
    char err[8400];

    q->version = HRP_VERSION;
    if (hrc_request(q, rep, hrc_timeout_ms, err, sizeof err) != 0) {
        if (!quiet)
            fprintf(stderr, "hostrangectl: %s\n", err);
        return 1;
    }
    return 0;
}

int hrc_ping_wait(int wait_ms, int quiet)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__PingRequest pq = HOSTRANGE__PING_REQUEST__INIT;
    Hostrange__ControlReply *rep;
    uint64_t deadline = hrp_mono_ms() + (uint64_t)wait_ms;

    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_PING;
    q.ping = &pq;
    for (;;) {
        int last = hrp_mono_ms() >= deadline;
        if (hrc_ask(&q, &rep, quiet || !last) == 0) {
            if (!quiet)
                printf("hostranged pid %u serves %s\n",
                       rep->ping ? rep->ping->daemon_pid : 0, hrc_dir);
            hostrange__control_reply__free_unpacked(rep, NULL);
            return 0;
        }
        if (last)
            return 1;
        usleep(20000);
    }
}

int hrc_dump_pages(const char *cmd, Hostrange__ControlRequest *q,
                       Hostrange__DumpRequest *dq,
                       int (*page)(const Hostrange__DumpReply *d, void *ctx),
                       void *ctx)
{
    uint8_t cursor[64];
    char err[8400];

    for (;;) {
        Hostrange__ControlReply *rep;
        const Hostrange__DumpReply *d;
        int more, rc;

        if (hrc_request(q, &rep, hrc_timeout_ms, err,
                            sizeof err) != 0) {
            fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
            return HRC_TOLD;
        }
        d = rep->body_case == HOSTRANGE__CONTROL_REPLY__BODY_DUMP ? rep->dump
                                                                 : NULL;
        if (d == NULL || d->next_cursor.len > sizeof cursor) {
            fprintf(stderr, "hostrangectl %s: hostranged at %s sent no "
                    "report%s%s\n", cmd, hrc_dir,
                    rep->error[0] ? ": " : "", rep->error);
            hostrange__control_reply__free_unpacked(rep, NULL);
            return HRC_TOLD;
        }
        rc = page(d, ctx);
        more = d->next_cursor.len > 0;
        if (more) {
            memcpy(cursor, d->next_cursor.data, d->next_cursor.len);
            dq->cursor.data = cursor;
            dq->cursor.len = d->next_cursor.len;
        }
        hostrange__control_reply__free_unpacked(rep, NULL);
        if (rc != 0 || !more)
            return rc;
    }
}
