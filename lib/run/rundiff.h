/*
 * Two run files compared key by key (hostrangectl diff): each side read a
 * key at a time (runside.h), each population paired with its counterpart
 * as soon as both are read and tested (lib/stat/signif.h), then each pair
 * judged as a row of the report under the options: its change, its flag,
 * its limits, the run-level test of its round medians (lib/stat/rounds.h),
 * --normalize and the sequential decision of --max-rounds.
 */
#ifndef HOSTRANGE_RUNDIFF_H
#define HOSTRANGE_RUNDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "lib/run/runrounds.h"
#include "lib/run/runside.h"
#include "lib/stat/decide.h"
#include "lib/stat/limits.h"
#include "lib/stat/rounds.h"
#include "lib/stat/signif.h"

/* What judging the rows is asked to do. */
struct hrr_rundiff_opts {
    double alpha, threshold;
    struct hrs_limits limits;   /* --fail-above */
    struct hrs_limits warn;     /* --warn-above */
    unsigned min_rounds;        /* --min-rounds (0: none) */
    const char *normalize;      /* --normalize: the control range */
    struct hrs_decide_plan plan; /* --max-rounds (max 0: none) */
};

/* One row of the report: a key and metric of either side or both. */
struct hrr_rundiff_row {
    const struct hrr_diff_pop *b, *n; /* either may be NULL: one side only */
    struct hrs_signif s;
    double change;           /* % */
    const char *flag;        /* "slower", "faster" or NULL */
    int over;                /* slower than its --fail-above limit */
    int warn;                /* not over, but beyond --warn-above */
    int unstable, quantized;
    size_t rounds[2];        /* of base and new (1: a run of one round) */
    int run_level;           /* tested on round medians: rc */
    int normalized;          /* its round medians divided by --normalize's */
    int refused;             /* fewer rounds than --min-rounds */
    struct hrs_rounds_cmp rc;
    double detectable;       /* run level: the smallest change flaggable
                                (detect.h), % (NaN: not measured) */
    int not_judged;          /* detectable above its --fail-above limit */
    struct hrs_rounds_fast fast; /* run level: the fastest-half test */
    int decided;             /* --max-rounds: dec holds its verdict */
    struct hrs_decide dec;
    int gated;               /* --max-rounds: a key that must be decided */
    int hopeless;            /* --max-rounds: undecided, and too noisy to
                                be decided by the plan's last look */
    double at_max;           /* its detectable change at that look, in % */
    size_t max_pairs;        /* the pairs of that look */
    int undecided;           /* a gated key undecided */
};

/* Told now and then while both sides are read: bytes read of size, and
 * last set once when all is read. */
typedef void (*hrr_rundiff_progress_fn)(void *ctx, uint64_t done,
                                        uint64_t size, int last);

/*
 * Reads both run files (open) a key at a time, in turn, comparing each
 * population as soon as its counterpart is read. Returns 0, -ENOMEM (err
 * left alone), or -EIO with why a file cannot be read in err.
 */
int hrr_rundiff_read(struct hrr_diff_side *base, struct hrr_diff_side *new,
                     hrr_rundiff_progress_fn progress, void *ctx, char *err,
                     size_t errlen);

/*
 * The rows of the report, in report order: base's keys (compared with
 * their counterpart, and judged under o, *flagged counting the flagged),
 * or base's only), then new's only. Returns 0, with the rows in *rows
 * (caller frees), or -ENOMEM.
 */
int hrr_rundiff_rows(struct hrr_diff_side *base, struct hrr_diff_side *new,
                     const struct hrr_rundiff_opts *o,
                     struct hrr_rundiff_row **rows, size_t *nrows,
                     size_t *flagged);

/*
 * plot --diff: every path key of `new` compared with the same (labels,
 * path) of `base` (signif.h, inclusive times). For each, want is asked
 * whether the caller draws the path (the labels, the path's names
 * names[0..depth)): NULL skips it; else put is given what want returned,
 * the test's result and the base's median. A path the base lacks is left
 * alone (base gains the empty key and path: it is the comparison's own).
 * Returns 0 or -ENOMEM.
 */
typedef void *(*hrr_rundiff_path_want_fn)(void *ctx, const char *node,
                                          const char *op, const char *backend,
                                          uint32_t phase,
                                          const char *const *names,
                                          uint32_t depth);
typedef void (*hrr_rundiff_path_put_fn)(void *ctx, void *at,
                                        const struct hrs_signif *s,
                                        double base_median);
int hrr_rundiff_paths(struct hra_agg *base, struct hra_agg *new,
                      hrr_rundiff_path_want_fn want,
                      hrr_rundiff_path_put_fn put, void *ctx);

#endif
