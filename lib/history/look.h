/*
 * One look at a history (detect): every series of it, judged together, and
 * the change points that belong together gathered into findings. Pure
 * logic, no I/O: the caller feeds the series and writes the findings.
 *
 * The series are fed one at a time (hrh_look_add), each with its
 * key, machine, values (run medians), their sample counts and the place
 * of each value's run among its machine's runs. A series whose points are
 * medians of few samples (a cold row) is judged with the tail check. A
 * series is kept only when lib/stat's change points find a change in it
 * at the look's alpha without the clock floor (a candidate); the others
 * count as tested. hrh_look_finish then:
 *
 * - takes each machine's clock step from its values (hrs_cp_clock_step,
 *   over the first HRH_LOOK_STEP_SAMPLE values of the machine);
 * - judges each candidate again with that step (no change of fewer than
 *   HRS_CP_MIN_STEPS steps; the rounding's noise in its test): its p is its
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
#include <stdint.h>

#include "lib/stat/changepoint.h"

/* How many values of each machine its clock step is taken from. */
#define HRH_LOOK_STEP_SAMPLE 65536
/* A series whose points are medians of fewer samples than this (the
 * median of their counts; a cold row: one sample a run) is judged with
 * the tail check of lib/stat/changepoint.h. */
#define HRH_LOOK_FEW_SAMPLES 3

/* A look; its fields are private (look_impl.h). */
struct hrh_look;

/* A change point of a finding, as the look describes it. The strings and
 * values are the look's, valid until it is freed. */
struct hrh_change {
    const char *const *key; /* node, operator, backend, phase, range,
                               metric */
    const char *machine;
    struct hrs_cp cp;       /* cp.at indexes x */
    const double *x;        /* the series' values */
    const size_t *xpos;     /* the place of each value's run */
    size_t n;
    size_t pos;             /* the place of the change's run */
    int newest;             /* the newest change of its series: the
                               series' newest run lies after it */
};

/* A finding, as the look describes it. */
struct hrh_finding {
    const char *machine;
    size_t pos;      /* its run's place among its machine's runs */
    size_t nchanges; /* its change points (hrh_look_change) */
    size_t start;    /* the one it starts in, an index below nchanges */
    size_t nodes;    /* how many nodes it holds */
    double p;        /* the smallest p of its changes */
};

/* A new look with options o (alpha is the false discovery rate; step and
 * tail are ignored: each machine's step is estimated, each series' tail
 * check decided by its counts). Returns NULL when out of memory; the
 * caller frees it with hrh_look_free (NULL accepted). */
struct hrh_look *hrh_look_new(const struct hrs_cp_opts *o);
void hrh_look_free(struct hrh_look *l);

/*
 * Feeds one series: key[0..6), its machine's name, its values x[0..n),
 * the sample count of each (count NULL: many) and the places pos[0..n)
 * of their runs among the machine's runs (copied when kept). Returns 0 or
 * -ENOMEM.
 */
int hrh_look_add(struct hrh_look *l, const char *const *key,
                         const char *machine, const double *x,
                         const uint64_t *count, const size_t *pos, size_t n);

/* Judges the series fed and gathers the findings (see above). Returns 0
 * or -ENOMEM. */
int hrh_look_finish(struct hrh_look *l);

/* How many series were tested (those of at least 2 x window points). */
size_t hrh_look_tested(const struct hrh_look *l);

/* The rule's level after finish: a series passes when its p is at most
 * it (-1: none passes). */
double hrh_look_level(const struct hrh_look *l);

/* The clock step finish took for machine `machine`, ns (0: none, or a
 * machine not fed). */
double hrh_look_step(const struct hrh_look *l,
                             const char *machine);

/* The rule of a look over nseries series at rate q, in words, into buf
 * (as --help, the man page and every report's header state it). */
void hrh_look_rule(char *buf, size_t len, double q, size_t nseries);

/* How many findings finish gathered; finding i (below that), in the order
 * of their first change. */
size_t hrh_look_nfindings(const struct hrh_look *l);
void hrh_look_finding(const struct hrh_look *l, size_t i,
                              struct hrh_finding *out);

/* Change j (below the finding's nchanges) of finding i, in series
 * order. */
void hrh_look_change(const struct hrh_look *l, size_t i,
                             size_t j, struct hrh_change *out);

#endif
