/*
 * The observer cost: what measuring costs, calibrated, and how much of each
 * report row it is. Pure logic, no I/O.
 *
 * A calibration (hostrange-bench --calibrate) is a set of keys under node
 * HRP_CALIB_NODE, operator = the process label that ran it, backend = the
 * clock it used, phase warm: empty scopes nested three deep
 * (calibration.outer, containing calibration.mid, containing
 * calibration.inner) and records of calibration.timer (the cost of one clock
 * read, measured by the program itself). From their robust means (the mean
 * of the values up to HRA_CALIB_CUT x the 90th percentile plus
 * HRA_CALIB_CUT_NS, which resolves a fraction of the clock's step where a
 * median is stuck on whole steps), each with its standard error:
 *
 *   child_ns   = mid inclusive - inner inclusive: the complete cost of one
 *                child scope as its parent sees it;
 *   residue_ns = mid self - inner self: the self time a parent gains per
 *                child (the part of child_ns outside the child's own
 *                inclusive time);
 *   empty_ns   = inner inclusive: the time recorded inside an empty scope;
 *   timer_ns   = calibration.timer;
 *   step_ns    = the smallest gap between two distinct calibration.timer
 *                values (of calibration.inner's when the timer's are all
 *                one): the clock's step as the calibration saw it;
 *   bias_ns    = what a range's pair of reads adds to the work it times:
 *                empty_ns on the ordered path, whose bias is one constant;
 *                on the fast path, whose plain reads overlap the work
 *                around them (hostrange.h), the fan's (observer.c).
 *
 * A figure below 0 (noise) is taken as 0. One calibration is kept per label:
 * the benchmark resets its label's keys before it calibrates, so the keys of
 * the latest calibration are the newest; calibrations are ordered by their
 * newest key, the most recent first.
 *
 * Clock paths. A calibration measures the clock path of the client that ran
 * it (fast, waiting or ordered, proto/protocol.h), and a key knows the
 * paths of the clients that fed it (agg.h). A row is corrected only by a
 * calibration of its own path (hra_calib_for): a calibration taken with
 * plain reads is not applied to rows of waiting ones, nor the other way
 * round; a row of more than one path (mixed) by none: its observer fields
 * are null and its clock_path says mixed. A row whose
 * paths are not known (a state or a file from before paths were named)
 * takes the calibration chosen as before, whatever its path.
 *
 * Applied to a row with c direct children and d descendants per call (the
 * key's sums over its calls), the observer cost in its figures is
 * d x child_ns for an inclusive row (every descendant's scope is inside
 * it) and c x residue_ns for a self row (observer_ns), and its share of
 * the median is observer_ns / median.
 *
 * Ordered path: a share of HRA_OBSERVER_UNSTABLE or more marks the row
 * unstable, and corrected figures are the row's less observer_ns +
 * empty_ns (the bias of its own reads).
 *
 * Fast path (plain or waiting reads): a child's cost to its parent, and
 * the bias of a range's own reads, depend on the work around them
 * (out-of-order execution hides part of a scope, and a plain end read may
 * run ahead of the work it ends): measured here from none to the
 * calibrated residue, and from about -20 to +10 ns for the bias of plain
 * reads, whose mean over those contexts is
 * near 0. Corrected figures are the row's less observer_ns only, and the
 * row is unstable when observer_ns plus the reads' uncertainty (the larger
 * of empty_ns and |bias_ns|, plus one step of the clock: a median of
 * readings of a clock that advances in steps is known to a step) is
 * HRA_OBSERVER_UNSTABLE_FAST of its median or more: a correction is then
 * uncertain by that much. (Without the step, a leaf of 400 ns on a clock
 * of 10 ns steps whose plain reads run 14 ns ahead, 3.5% of it, read 2
 * steps low, beyond 5%, without a flag.)
 *
 * Corrected figures are never below 0. A row whose median is under
 * HRA_RESOLUTION_STEPS clock steps is marked resolution_limited: a step is
 * then 5% of it or more.
 */
#ifndef HOSTRANGE_OBSERVER_H
#define HOSTRANGE_OBSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

/*
 * The rules that --help, the man pages and doc/ state in words, each given
 * once here and quoted there (tests/service/test_rules.sh compares them).
 *
 * A row is unstable when its observer share is HRA_OBSERVER_UNSTABLE_PCT
 * percent of its median or more (the ordered clock path); on the fast
 * path, when its observer cost and the uncertainty of its plain reads are
 * HRA_OBSERVER_UNSTABLE_FAST_PCT percent of it or more.
 */
#define HRA_OBSERVER_UNSTABLE_PCT 10
#define HRA_OBSERVER_UNSTABLE_FAST_PCT 5
#define HRA_OBSERVER_UNSTABLE (HRA_OBSERVER_UNSTABLE_PCT / 100.0)
#define HRA_OBSERVER_UNSTABLE_FAST (HRA_OBSERVER_UNSTABLE_FAST_PCT / 100.0)
/* Rows whose median is under this many steps of the clock, as the
 * calibration measured it, are resolution_limited. */
#define HRA_RESOLUTION_STEPS 20
/* diff marks a row quantized when a median is within this many steps of
 * the clock as a run's data show it (the smallest gap between a key's
 * distinct values): a rule of the data, not of the calibration. */
#define HRA_QUANTIZED_STEPS 2
/* The robust mean's cut: values above CUT x p90 + CUT_NS are dropped. */
#define HRA_CALIB_CUT 4.0
#define HRA_CALIB_CUT_NS 50.0
/* The standard error of a robust mean is also taken from the spread of
 * the means of HRA_CALIB_BLOCKS consecutive blocks of the values (in the
 * order they came; at least HRA_CALIB_BLOCK_MIN values each), when that is
 * the larger: a drift of the machine during a calibration. */
#define HRA_CALIB_BLOCKS 8u
#define HRA_CALIB_BLOCK_MIN 64u

struct hra_calib {
    const char *label;  /* borrowed: the aggregation's or a reply's */
    const char *clock;
    double child_ns;
    double residue_ns;
    double empty_ns;
    double timer_ns;
    uint64_t calls;     /* calibration.inner's */
    uint32_t serial;    /* the newest key's creation order */
    /* Standard errors of child_ns, residue_ns and empty_ns, and the clock
     * step; 0 when unknown (a key kept in a histogram, an older file). */
    double child_err_ns;
    double residue_err_ns;
    double empty_err_ns;
    double step_ns;
    double bias_ns;     /* 0: not known (empty_ns); below 0 where end
                           reads ran ahead of the work */
    /* The HRP_PATH_* bits of its keys' clients: one path; 0 when not known
     * (a file from before paths were named); both: it applies to no row. */
    unsigned clock_paths;
};

/*
 * The robust mean of v[0..n) (in the order the values came; sorted in
 * place), its standard error (the larger of that of independent values
 * and that of block means, above) and the smallest gap between two
 * distinct values kept (0 when all are equal).
 */
void hra_calib_robust(uint64_t *v, size_t n, double *mean, double *err,
                      double *step);

/*
 * The one copy between a calibration and its message (stats replies, run
 * files): every field both ways. to_message: m (initialised here) borrows
 * cal's strings. from_message: cal borrows m's.
 */
void hra_calib_to_message(Hostrange__Calibration *m,
                          const struct hra_calib *cal);
void hra_calib_from_message(struct hra_calib *cal,
                            const Hostrange__Calibration *m);

/* cal's bias_ns, or its empty_ns where the bias was not kept (a file from
 * before it was). */
double hra_calib_bias(const struct hra_calib *cal);


/*
 * Finds every complete calibration in a (mid, inner and timer keys with
 * values) and derives its figures. On success returns 0 with a new array
 * in *out (caller frees; NULL when none) of *n entries, the most recent
 * first; their strings belong to a. Returns -ENOMEM otherwise.
 */
int hra_calib_collect(struct hra_agg *a, struct hra_calib **out, size_t *n);

/*
 * The calibration of cal[0..n) (the most recent first) that applies to a
 * row of clock paths `paths` (HRP_PATH_* bits): the most recent one of
 * that path, or with `label` (not NULL) the one of that label if it is of
 * that path. A row of both paths gets none; one whose paths are not known
 * (0) gets the most recent one (or label's) whatever its path. A
 * calibration of both paths applies to no row. Returns NULL when none
 * applies.
 */
const struct hra_calib *hra_calib_for(const struct hra_calib *cal, size_t n,
                                      const char *label, unsigned paths);

/*
 * Fills the observer fields of row (calls and children must be set) from
 * cal, or marks them unknown when cal is NULL or the row has no calls (a
 * row of recorded values). When correct is set and the fields are known,
 * subtracts the calibrated cost from the row's mean, median, min, max, p90
 * and p99 (never below 0) and sets row->corrected.
 */
void hra_observer_apply(struct hra_row *row, const struct hra_calib *cal,
                        int correct);

#endif
