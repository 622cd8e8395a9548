/*
 * The daemon's event loop: a libuv loop watching the ingest and control
 * nanomsg sockets through their receive file descriptors (NN_RCVFD with
 * uv_poll) and SIGTERM/SIGINT, which stop it cleanly.
 */
#ifndef HOSTRANGE_SERVER_H
#define HOSTRANGE_SERVER_H

#include <stddef.h>

struct hrd_server_opts {
    const char *runtime_dir;
    int quiet;
};

/* Serves until SIGTERM or SIGINT. Returns 0 after a clean stop, or a
 * negative errno with a one-line reason in err. */
int hrd_server_run(const struct hrd_server_opts *o, char *err, size_t errlen);

#endif
