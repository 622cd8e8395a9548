/* The batch sender of the tests (see harness_send.h). */
#include "config.h"

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"
#include "tests/lib/harness_send.h"

int harness_send_bytes(const char *dir, const void *buf, size_t len,
                       uint64_t *seq, char *why, size_t whylen)
{
    char url[512];
    int sock = nn_socket(AF_SP, NN_REQ), ms = 20000, n, status;
    void *msg = NULL;
    Hostrange__Ack *ack;

    assert_true(sock >= 0);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms);
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms);
    hrp_endpoint(url, sizeof url, dir, HRP_INGEST_NAME);
    assert_true(nn_connect(sock, url) >= 0);
    assert_true(nn_send(sock, buf, len, 0) >= 0);
    n = nn_recv(sock, &msg, NN_MSG, 0);
    if (n < 0)
        fail_msg("no ack from %s: %s", dir, nn_strerror(nn_errno()));
    ack = hostrange__ack__unpack(NULL, (size_t)n, msg);
    assert_non_null(ack);
    status = ack->status;
    if (seq != NULL)
        *seq = ack->seq;
    if (why != NULL)
        snprintf(why, whylen, "%s", ack->error);
    hostrange__ack__free_unpacked(ack, NULL);
    nn_freemsg(msg);
    nn_close(sock);
    return status;
}

int harness_send_batch(const char *dir, const struct db_batch *x, char *why,
                       size_t whylen)
{
    uint8_t *buf;
    size_t len;
    int status;

    buf = db_pack(x, &len);
    status = harness_send_bytes(dir, buf, len, NULL, why, whylen);
    free(buf);
    return status;
}
