/*
 * A series as it is gathered from the history's points (hrh_points
 * gives them by key, then machine, then run order): one key on one
 * machine, a point per run (history detect, check and bisect --history).
 */
#ifndef HOSTRANGE_HISTORY_SERIES_H
#define HOSTRANGE_HISTORY_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/agg.h"
#include "lib/history/history.h"

/* A series being gathered: its key and machine (copied), and per run its
 * median, commit, id, time and round medians (NULL and 0 for a run of one
 * round). */
struct hrh_series {
    char *key[6];
    char *machine;
    int64_t keyid;
    double *x;
    double **rounds;
    size_t *nrounds;
    char **commit, **run;
    int64_t *time_ns;
    size_t n, cap;
};

/* A series' life: started with its first point p (its key and machine
 * copied), each point of its runs pushed in order, tested with
 * hrh_series_same for whether point p continues it; fini frees
 * it. Start and push return 0 or -ENOMEM. */
void hrh_series_fini(struct hrh_series *s);

int hrh_series_same(const struct hrh_series *s,
                            const struct hrh_point *p);

int hrh_series_start(struct hrh_series *s,
                             const struct hrh_point *p);

int hrh_series_push(struct hrh_series *s,
                            const struct hrh_point *p);

/* Whether point p passes filter f (its globs, and its phase when not 0)
 * and machine pattern machine (NULL: any). */
int hrh_match(const struct hra_filter *f, const char *machine,
                      const struct hrh_point *p);

/*
 * Calls fn with each series of history h, whole, in the order of
 * hrh_points (by key, then machine), made of the points keep
 * (NULL: every one) keeps. A non-zero return of fn stops and is
 * returned; else returns 0 or a negative errno (the history's with a
 * reason in err, or -ENOMEM).
 */
int hrh_series_each(
    struct hrh_history *h,
    int (*keep)(void *ctx, const struct hrh_point *p),
    int (*fn)(void *ctx, const struct hrh_series *s), void *ctx,
    char *err, size_t errlen);

#endif
