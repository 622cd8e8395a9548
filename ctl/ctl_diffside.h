/*
 * diff's and bisect's reading of a run file, said on stderr: the calls of
 * lib/run/runside.h, each failure but -ENOMEM told as "hostrangectl diff:
 * WHY" and returned as HRD_CTL_TOLD (ctl_cmd.h).
 */
#ifndef HOSTRANGE_CTL_DIFFSIDE_H
#define HOSTRANGE_CTL_DIFFSIDE_H

#include "lib/run/runside.h"

/* hrd_runside_open, said. Returns 0, -ENOMEM (not printed: the caller
 * says it), or HRD_CTL_TOLD after printing why the file cannot be read. */
int hrd_diff_side_open(struct hrd_diff_side *s, const char *path);

/* hrd_runside_next, said. Returns 0, -ENOMEM (not printed), or
 * HRD_CTL_TOLD after printing why the file cannot be read. */
int hrd_diff_side_next(struct hrd_diff_side *s);

/*
 * diff's check of the machines of runs BASE (side b, its file bpath) and
 * NEW (n, npath) (ctl_fingerprint.c): when their fingerprints differ, or
 * one has none, says so on stderr, as a warning or, with `strict`, as a
 * refusal. Returns 0, or HRD_CTL_TOLD when refused.
 */
int hrd_ctl_diff_machines(const char *bpath, const struct hrd_diff_side *b,
                          const char *npath, const struct hrd_diff_side *n,
                          int strict);

/* hrd_runside_free. */
void hrd_diff_side_free(struct hrd_diff_side *s);

#endif
