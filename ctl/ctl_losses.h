/* What a session lost (ctl_losses.c). */
#ifndef HOSTRANGE_CTL_LOSSES_H
#define HOSTRANGE_CTL_LOSSES_H

#include <stdio.h>

#include "proto/hostrange.pb-c.h"

/*
 * What the session of stats s lost, said to out (ctl_losses.c): one line
 * `hostrange: ...` when clients lost events, the daemon refused batches,
 * or scopes of refused names, windows of refused labels or contexts kept
 * under (contexts full) were counted; then one line per client that ended
 * without its final counters (one that still runs may yet send them: not
 * named). Nothing when all is well. Returns 1 when
 * anything was lost or refused (full contexts alone lose no row: 0), else
 * 0. hrc_losses asks the daemon first: 1, 0, or -1 after printing why
 * it could not.
 */
int hrc_losses_say(const Hostrange__StatsReply *s, FILE *out);
int hrc_losses(FILE *out);

#endif
