/* dump --from's rows (ctl_from.c) and the calling-context views of dump and plot (ctl_paths.c). */
#ifndef HOSTRANGE_CTL_PATHS_H
#define HOSTRANGE_CTL_PATHS_H

#include <stdio.h>

#include "ctl/ctl_report.h"
#include "lib/agg/agg.h"

/*
 * The rows of run file r->from (ctl_from.c), as hrc_dump writes the
 * daemon's, to f. Returns 0; HRC_TOLD after printing why the file
 * cannot be read; or a negative errno of writing.
 */
int hrc_rows_from(FILE *f, const struct hra_filter *flt,
                      const struct hrc_report *r);

/*
 * dump --format folded|tree|pprof (ctl_paths.c): the calling-context tree
 * of the daemon's rows by path, or of run file r->from (whose range rows
 * are taken as one-element paths when it holds no paths), written to f
 * (pprof: a gzipped profile, pprof.h). Returns 0, HRC_TOLD after printing why,
 * or a negative errno of writing.
 */
int hrc_paths_view(FILE *f, const struct hra_filter *flt,
                       const struct hrc_report *r);

/* The calling-context tree t (flame.h) of run file `from`'s rows, or of
 * the daemon's rows by path when from is NULL, for command cmd (dump,
 * plot). Returns 0, or HRC_TOLD after printing why. */
struct hrv_ptree;
int hrc_tree_load(const char *cmd, const struct hra_filter *flt,
                      const char *from, struct hrv_ptree *t);
/* The tree t of an aggregation's path keys; of its range keys as
 * one-element paths when it has none. Returns 0 or -ENOMEM. */
int hrc_tree_from_agg(struct hra_agg *agg, const struct hra_filter *flt,
                          struct hrv_ptree *t);

#endif
