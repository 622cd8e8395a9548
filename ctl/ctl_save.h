/* A save of what the daemon holds, and --meta (ctl_save.c). */
#ifndef HOSTRANGE_CTL_SAVE_H
#define HOSTRANGE_CTL_SAVE_H

#include <stdio.h>

#include "lib/run/runmeta.h"

/*
 * Saves what the daemon holds as run file `output` (ctl_save.c), for
 * command cmd (save, record --save): run format `format`, the --meta pairs
 * (borrowed), atomically (complete or untouched), with progress on a
 * terminal and, when note is not NULL, the line "saved N keys to FILE"
 * there. Returns 0, or HRC_TOLD after printing why.
 */
int hrc_save_run(const char *cmd, const char *output, unsigned format,
                     const struct hrr_meta *meta, FILE *note);

/* --meta KEY=VALUE options (ctl_save.c): adds the pair to *meta (exits
 * with status 2 on a bad one); hrr_meta_fini frees them. */
int hrc_meta_add(const char *cmd, const char *arg,
                     struct hrr_meta *meta);

#endif
