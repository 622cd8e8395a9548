/*
 * What history detect and check judge, as the rows of lib/view's gate
 * formats (gate.h: JUnit, Markdown), kept until the end with copies of
 * their strings, and the row of a change of a look; and the --fail-above
 * limit a slower change goes beyond.
 */
#ifndef HOSTRANGE_HISTORY_GATE_H
#define HOSTRANGE_HISTORY_GATE_H

#include <stddef.h>

#include "lib/history/judge.h"
#include "lib/history/look.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/limits.h"
#include "lib/view/gate.h"

struct hrh_gate {
    struct hrv_gate_row *v;
    char **strs;        /* every string of v, to free */
    size_t n, cap, nstrs;
};

/* Appends the row of key `key` on machine `machine` to g: its key, where
 * (machine, and commit when not NULL), its --fail-above limit among
 * limits (NULL: none given), and its verdict with cp's figures (cp NULL:
 * unchanged, or with `reason` not judged; fail: beyond its limit).
 * Returns 0 or -ENOMEM. */
int hrh_gate_add(struct hrh_gate *g,
                         const struct hrs_limits *limits, char *const *key,
                         const char *machine, const char *commit,
                         const struct hrs_cp *cp, int fail,
                         const char *reason);

void hrh_gate_fini(struct hrh_gate *g);

/*
 * Appends the row of a key history check judged (j, said) with cp's
 * figures, as hrh_gate_add does: slower or faster when it differs (fail:
 * said->over), else unchanged with its figures; with the change it could
 * detect, and whether it is not judged at its limit or undecided by its
 * rounds. Returns 0 or -ENOMEM.
 */
int hrh_gate_add_judged(struct hrh_gate *g, const struct hrs_limits *limits,
                        char *const *key, const char *machine,
                        const struct hrs_cp *cp, int differs,
                        const struct hrh_judged *j,
                        const struct hrh_check_said *said);

/* Sets g to the row of change ch of a look (detect's findings; the row's
 * strings borrowed from ch), its --fail-above limit among limits (NULL:
 * none given), fail when it goes beyond it. */
void hrh_gate_change(struct hrv_gate_row *g,
                             const struct hrs_limits *limits,
                             const struct hrh_change *ch, int fail);

/* The limit among limits (NULL: none given) that change cp of a key of
 * range `range` goes beyond, slower by more than its percentage; NULL
 * when none. */
const struct hrs_limit *hrh_over_limit(const struct hrs_limits *limits,
                                               const char *range,
                                               const struct hrs_cp *cp);

#endif
