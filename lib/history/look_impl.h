/*
 * The fields of one look at a history (look.h), private to look.c and the
 * tests that look inside it. The look keeps only its candidates: the
 * series in which a change was found at alpha before the clock floor;
 * every other series fed counts in `tested` and is not kept. Changes are
 * sorted by finding, then series; a finding's changes are
 * changes[first..first + n).
 */
#ifndef HOSTRANGE_HISTORY_LOOK_IMPL_H
#define HOSTRANGE_HISTORY_LOOK_IMPL_H

#include "lib/history/look.h"

/* A kept series: its key, machine (an index into the look's machines),
 * values, their runs' places, and whether the tail check judges it. */
struct look_series {
    char *key[6];
    size_t machine;
    double *x;
    size_t *pos;
    size_t n;
    int tail;
    double p; /* its strongest change's p (1: none) */
};

/* A change point of a series: cp.at indexes the series' values. */
struct look_change {
    size_t series;
    struct hrs_cp cp;
    size_t pos;     /* the place of its run among its machine's runs */
    size_t finding; /* the finding it belongs to */
    int newest;     /* the series' newest change */
};

struct look_finding {
    size_t machine;
    size_t pos;    /* its run's place among its machine's runs */
    size_t first, n;
    size_t start;  /* the change it starts in (an index into changes) */
    size_t nodes;  /* how many nodes it holds */
    double p;      /* the smallest p of its changes */
};

struct hrh_look {
    struct hrs_cp_opts o;
    char **machine;              /* machine names, owned */
    double **sample;             /* per machine: up to STEP_SAMPLE values */
    size_t *nsample;
    double *step;                /* per machine: its clock step (finish) */
    size_t nmachines, capmachines;
    struct look_series *s;
    size_t ns, caps;
    size_t tested;               /* series of at least 2 x window points */
    double level;                /* the rule's level (finish; -1: none) */
    struct look_change *changes;
    size_t nchanges, capchanges;
    struct look_finding *findings;
    size_t nfindings;
};

#endif
