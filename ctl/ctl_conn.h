/* The exchange with hostranged (ctl_conn.c). */
#ifndef HOSTRANGE_CTL_CONN_H
#define HOSTRANGE_CTL_CONN_H

#include <stddef.h>

#include "proto/hostrange.pb-c.h"

/* The runtime directory in use and the answer timeout. */
extern char hrc_dir[4096];
extern int hrc_timeout_ms;

/*
 * Sends a control request and waits for its reply. On success returns 0
 * and the decoded reply in *out (caller frees with
 * hostrange__control_reply__free_unpacked). On failure returns a negative
 * errno (-ENOENT: no daemon there; -EACCES: not this user's; -ETIMEDOUT:
 * no answer in time; -EPROTO: a reply that cannot be read; -EREMOTEIO:
 * the daemon's error) with a one-line reason in err.
 */
int hrc_request(const Hostrange__ControlRequest *q,
                    Hostrange__ControlReply **out, int timeout_ms, char *err,
                    size_t errlen);
/* The same in two steps, for a reader of the reply's bytes: the reply as
 * received (*msg, *msglen; free with nn_freemsg), and the checks of a
 * decoded reply (NULL: it did not decode; a wrong version or an error
 * frees it). Both return 0, or a negative errno with a reason in err. */
int hrc_request_msg(const Hostrange__ControlRequest *q, void **msg,
                        size_t *msglen, int timeout_ms, char *err,
                        size_t errlen);
/*
 * Asks the daemon for every page of the dump request q (whose body is dq,
 * paged) and calls page() on each reply. Returns 0; page()'s non-zero
 * value; or HRC_TOLD after printing why the daemon gave no report
 * (cmd names the command).
 */
int hrc_dump_pages(const char *cmd, Hostrange__ControlRequest *q,
                       Hostrange__DumpRequest *dq,
                       int (*page)(const Hostrange__DumpReply *d, void *ctx),
                       void *ctx);

int hrc_reply_check(Hostrange__ControlReply **out, char *err,
                        size_t errlen);

/* Sends a control request (its version set here); prints the failure
 * unless quiet. Returns 0 with the reply in *rep (caller frees with
 * hostrange__control_reply__free_unpacked), or 1. */
int hrc_ask(Hostrange__ControlRequest *q, Hostrange__ControlReply **rep,
                int quiet);

/* Closes the control socket, if open. */
void hrc_close(void);

/* Pings until the daemon answers or wait_ms pass. Returns 0 or 1. */
int hrc_ping_wait(int wait_ms, int quiet);

#endif
