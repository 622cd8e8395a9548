/*
 * The daemon's event loop: a libuv loop watching the ingest and control
 * nanomsg sockets through their receive file descriptors (NN_RCVFD with
 * uv_poll), a one-second timer for the state directory's housekeeping, and
 * SIGTERM/SIGINT, which stop it cleanly: the sockets are closed, the
 * request being handled is finished, and the state is written.
 */
#ifndef HOSTRANGE_SERVER_H
#define HOSTRANGE_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/state.h"

struct hrd_server_opts {
    const char *runtime_dir;
    int quiet;
    gid_t gid;                  /* group that may connect, or (gid_t)-1 */
    const char *state_dir;      /* NULL: keep no state on disk */
    uint64_t exact_cap;         /* events per key kept exactly */
    size_t max_memory;          /* memory budget of the samples */
    uint64_t dump_page;         /* values per dump page (0: default) */
    const char *load;           /* a run file to serve, or NULL */
    struct hrd_state_opts state;
};

/* Serves until SIGTERM or SIGINT. Returns 0 after a clean stop, or a
 * negative errno with a one-line reason in err. */
int hrd_server_run(const struct hrd_server_opts *o, char *err, size_t errlen);

#endif
