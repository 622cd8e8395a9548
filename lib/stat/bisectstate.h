/*
 * The lines of hostrangectl bisect's state file read back: one JSON
 * object a line, as bisect writes them (ctl/ctl_bisect_out.c), the ends'
 * line (step 0) first, then a line per measured step. Pure logic on a
 * line's text: the caller reads the file and decides whether the steps
 * are its own.
 */
#ifndef HOSTRANGE_BISECTSTATE_H
#define HOSTRANGE_BISECTSTATE_H

#include <stddef.h>

#include "lib/stat/bisect.h"
#include "lib/stat/decide.h"

/* A full commit hash's room (SHA-1 or SHA-256, and the NUL). */
#define HRS_BISECT_STATE_HASH 65

/* The ends' line: its ends, its key (when have_key), the ends' decision
 * and the seconds it took. */
struct hrs_bisect_state_ends {
    char good[HRS_BISECT_STATE_HASH], bad[HRS_BISECT_STATE_HASH];
    int have_key;
    char node[4096], op[4096], backend[4096], range[4096];
    char phase[16], metric[16];
    double step_ns;             /* NaN when absent */
    struct hrs_decide ends;
    double seconds;
};

/* A step's line. vs_good_ok and vs_bad_ok: which decisions it holds
 * (vs_bad is read only after vs_good); none for a skipped commit. */
struct hrs_bisect_state_step {
    char commit[HRS_BISECT_STATE_HASH];
    double step;
    int verdict;                /* hrs_bisect_parse's: -1 when unknown */
    size_t pairs;
    double seconds;
    int vs_good_ok, vs_bad_ok;
    struct hrs_decide vs_good, vs_bad;
};

/* Reads the ends' line. Returns 0, or -EINVAL when line is not one (no
 * step 0, good, commit or verdict). A key whose fields are not all
 * there: have_key 0. */
int hrs_bisect_state_ends(const char *line, struct hrs_bisect_state_ends *e);

/* Reads a step's line. Returns 0, or -EINVAL when line is not one (no
 * step above 0, commit or verdict). */
int hrs_bisect_state_step(const char *line, struct hrs_bisect_state_step *s);

#endif
