/*
 * One look at a history (detect): every series of it, judged together, and
 * the change points that belong together gathered into findings. Pure
 * logic, no I/O: the caller feeds the series and writes the findings.
 *
 * The series are fed one at a time (hrd_history_look_add), each with its
 * key, machine, values (run medians) and the place of each value's run
 * among its machine's runs. A series is kept only when lib/stat's change
 * points find a change in it at the look's alpha without the clock floor
 * (a candidate); the others count as tested. hrd_history_look_finish then:
 *
 * - takes each machine's clock step from its values (hrd_cp_clock_step,
 *   over the first HRD_HISTORY_LOOK_STEP_SAMPLE values of the machine);
 * - judges each candidate again with that step (no change of fewer than
 *   HRD_CP_MIN_STEPS steps; the rounding's noise in its test): its p is its
 *   strongest change's;
 * - holds the false discovery rate over all the series tested at alpha
 *   (Benjamini-Hochberg, lib/stat/fdr.h) and finds the change points of
 *   the series that pass at the level the rule gives (so that a second
 *   change in a changed series needs the same evidence as the first);
 * - gathers the change points into findings: two change points on one
 *   machine whose runs are at most one run apart (a change is placed at
 *   its run or the next) belong together when they share a node (a node's
 *   layers, both metrics, both phases) or a range (one layer across
 *   nodes); a finding is a group that these links join.
 *
 * A finding names its machine, its run (the place most of its change
 * points name; the earliest of a tie), its nodes, and the layer its change
 * starts in: of its change points of metric "self", the one whose median
 * moved the most in ns; without one, the inclusive one that moved the
 * least (the deepest caller). Its other change points moved with it.
 */
#ifndef HOSTRANGE_HISTORY_LOOK_H
#define HOSTRANGE_HISTORY_LOOK_H

#include <stddef.h>

#include "lib/stat/changepoint.h"

/* How many values of each machine its clock step is taken from. */
#define HRD_HISTORY_LOOK_STEP_SAMPLE 65536

/* A series kept by the look (a candidate): its key (node, operator,
 * backend, phase, range, metric), machine (an index into the look's
 * machines), values and their runs' places. */
struct hrd_history_look_series {
    char *key[6];
    size_t machine;
    double *x;
    size_t *pos;
    size_t n;
    double p; /* its strongest change's p (1: none) */
};

/* A change point of a series: cp.at indexes the series' values. */
struct hrd_history_change {
    size_t series;
    struct hrd_cp cp;
    size_t pos;     /* the place of its run among its machine's runs */
    size_t finding; /* the finding it belongs to */
};

/* A finding: changes[first..first + n) of the look, in series order. */
struct hrd_history_finding {
    size_t machine;
    size_t pos;    /* its run's place among its machine's runs */
    size_t first, n;
    size_t start;  /* the change it starts in (an index into changes) */
    size_t nodes;  /* how many nodes it holds */
    double p;      /* the smallest p of its changes */
};

struct hrd_history_look {
    struct hrd_cp_opts o;
    char **machine;              /* machine names, owned */
    double **sample;             /* per machine: up to STEP_SAMPLE values */
    size_t *nsample;
    double *step;                /* per machine: its clock step (finish) */
    size_t nmachines;
    struct hrd_history_look_series *s;
    size_t ns, caps;
    size_t tested;               /* series of at least 2 x window points */
    double level;                /* the rule's level (finish; -1: none) */
    struct hrd_history_change *changes;
    size_t nchanges;
    struct hrd_history_finding *findings;
    size_t nfindings;
};

/* Starts a look with options o (alpha is the false discovery rate; step
 * is ignored: each machine's is estimated). */
void hrd_history_look_init(struct hrd_history_look *l,
                           const struct hrd_cp_opts *o);
void hrd_history_look_fini(struct hrd_history_look *l);

/*
 * Feeds one series: key[0..6), its machine's name, its values x[0..n) and
 * the places pos[0..n) of their runs among the machine's runs (all
 * copied when kept). Returns 0 or -ENOMEM.
 */
int hrd_history_look_add(struct hrd_history_look *l, const char *const *key,
                         const char *machine, const double *x,
                         const size_t *pos, size_t n);

/* Judges the series fed and gathers the findings (see above). Returns 0
 * or -ENOMEM. */
int hrd_history_look_finish(struct hrd_history_look *l);

#endif
