/*
 * diff's and bisect's reading of a run file, said on stderr: the calls of
 * lib/run/runside.h, each failure but -ENOMEM told as "hostrangectl CMD:
 * WHY" (CMD: the command that reads, diff or bisect) and returned as HRC_TOLD (ctl_cmd.h).
 */
#ifndef HOSTRANGE_CTL_DIFFSIDE_H
#define HOSTRANGE_CTL_DIFFSIDE_H

#include "lib/run/runside.h"

/* hrr_runside_open, said. Returns 0, -ENOMEM (not printed: the caller
 * says it), or HRC_TOLD after printing why the file cannot be read. */
int hrc_diff_side_open(const char *cmd, struct hrr_diff_side *s,
                       const char *path);

/* hrr_runside_next, said. Returns 0, -ENOMEM (not printed), or
 * HRC_TOLD after printing why the file cannot be read. */
int hrc_diff_side_next(const char *cmd, struct hrr_diff_side *s);

/*
 * diff's check of the machines of runs BASE (side b, its file bpath) and
 * NEW (n, npath) (ctl_fingerprint.c): when their fingerprints differ, or
 * one has none, says so on stderr, as a warning or, with `strict`, as a
 * refusal. Returns 0, or HRC_TOLD when refused.
 */
int hrc_diff_machines(const char *bpath, const struct hrr_diff_side *b,
                          const char *npath, const struct hrr_diff_side *n,
                          int strict);

/* hrr_runside_free. */
void hrc_diff_side_free(struct hrr_diff_side *s);

#endif
