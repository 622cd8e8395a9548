/*
 * A stand-in for a hostranged of another protocol version, for the tests of
 * the pytest plugin: it serves the control socket of the runtime directory
 * given as its argument and answers every request with a ControlReply that
 * carries protocol version HRP_VERSION + 1 and a ping body, until SIGTERM.
 * It prints "ready" once the socket is bound.
 *
 * Usage: other_version_daemon DIR
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>

#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

int main(int argc, char **argv)
{
    Hostrange__ControlReply reply = HOSTRANGE__CONTROL_REPLY__INIT;
    Hostrange__PingReply ping = HOSTRANGE__PING_REPLY__INIT;
    struct sigaction sa = { .sa_handler = on_term };
    char url[4200];
    uint8_t buf[64];
    size_t len;
    int sock, timeout_ms = 100;

    if (argc != 2) {
        fprintf(stderr, "usage: other_version_daemon DIR\n");
        return 2;
    }
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (hrp_endpoint(url, sizeof url, argv[1], HRP_CONTROL_NAME) != 0)
        return 1;
    sock = nn_socket(AF_SP, NN_REP);
    if (sock < 0 || nn_bind(sock, url) < 0) {
        fprintf(stderr, "other_version_daemon: cannot bind %s: %s\n", url,
                nn_strerror(nn_errno()));
        return 1;
    }
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                  sizeof timeout_ms);
    ping.daemon_pid = (uint32_t)getpid();
    reply.version = HRP_VERSION + 1;
    reply.body_case = HOSTRANGE__CONTROL_REPLY__BODY_PING;
    reply.ping = &ping;
    len = hostrange__control_reply__pack(&reply, buf);
    printf("ready\n");
    fflush(stdout);
    while (!g_stop) {
        void *msg = NULL;

        if (nn_recv(sock, &msg, NN_MSG, 0) < 0)
            continue;
        nn_freemsg(msg);
        nn_send(sock, buf, len, 0);
    }
    nn_close(sock);
    return 0;
}
