/*
 * A report row: the figures of one key and metric, as the aggregation
 * produces them (agg.h, rows.c) and the report writes them (report.h).
 * Strings are borrowed from the aggregation or from a reply, and live as
 * long as it. The extended and observer fields are filled always and
 * written only when asked for.
 */
#ifndef HOSTRANGE_ROWS_H
#define HOSTRANGE_ROWS_H

#include <stdint.h>

#include "lib/agg/keyfields.h"

struct hra_row {
    const char *node_id;
    const char *op;
    const char *backend;
    const char *phase;  /* "cold" or "warm" */
    const char *range;
    const char *metric; /* "inclusive" or "self" */
    uint64_t count;
    double mean;
    double median;
    /* Extended fields, written only with HRV_FIELDS_EXTENDED. */
    double min;
    double max;
    double p10; /* not written by the report: history keeps it */
    double p90;
    double p99;
    double stddev;
    int exact;
    uint64_t lost;
    /* The key's calls (range events; 0 for a row of recorded values) and
     * its counters that rows carry (keyfields.h): children (the sum of the
     * calls' numbers of direct children), descendants (the same of
     * children, theirs, and so on; 0 when not known: data from before it
     * was kept), ... */
    uint64_t calls;
    HRA_KEY_ROW_COUNTER_FIELDS
    /* The HRP_PATH_* bits of the clock paths of the clients that fed the
     * key (0: not known); a row is corrected only by a calibration of its
     * one path (observer.h). */
    unsigned clock_paths;
    /* The calibration's smallest clock step, in ns (0: unknown), and
     * whether the row's median is under HRA_RESOLUTION_STEPS of them. */
    int resolution_limited;
    /* Observer fields (HRV_FIELDS_OBSERVER), set by hra_observer_apply. */
    int observer_known;     /* 0: observer_ns, share and unstable are null */
    double observer_ns;
    double observer_share;
    int unstable;
    int corrected;          /* HRV_FIELDS_CORRECTED */
    /* A row of a calling context (dump --by path): its ranges, outermost
     * first, `range` last (depth 0: a row per range name); and the exact
     * sum of its values in ns (saturated), set on those rows only. */
    const char *const *path;
    uint32_t depth;
    uint64_t sum;
    /* Rounds (report.h, HRV_FIELDS_ROUNDS): how many, the median in each
     * (NULL in a row a table keeps), and their spread in %. */
    uint32_t rounds;
    const double *round_medians;
    double round_spread;
};

struct Hostrange__Row;

/*
 * Fills row from a report row of the wire (a daemon's DumpReply); row
 * borrows m's strings. Returns 0, or -EINVAL when the phase is not one
 * this version knows (row->phase is then "?").
 */
int hra_row_from_message(struct hra_row *row, const struct Hostrange__Row *m);

#endif
