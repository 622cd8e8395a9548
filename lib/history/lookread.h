/*
 * Every series of a history read into one look (look.h), as history
 * detect reads them: the stored runs and each one's place among its
 * machine's runs, then the points series by series (one key on one
 * machine, a point per run: its median and count at its run's place),
 * those a filter keeps. The runs stay, for the findings' commits and
 * runs.
 *
 * Functions return 0, or a negative errno (-ENOMEM, or the history's
 * with a reason in err).
 */
#ifndef HOSTRANGE_HISTORY_LOOKREAD_H
#define HOSTRANGE_HISTORY_LOOKREAD_H

#include <stddef.h>
#include <stdint.h>

#include "lib/history/history.h"
#include "lib/history/look.h"

/* A stored run: its id, commit, machine and place among its machine's
 * runs. */
struct hrh_lookrun {
    char *id, *commit, *machine;
    size_t pos;
};

struct hrh_lookread {
    struct hrh_lookrun *runs; /* sorted by id once read */
    size_t nruns, caprun;
    size_t series;                    /* series fed to the look */
    /* Private: the series being gathered, and the filter. */
    int (*keep)(void *ctx, const struct hrh_point *p);
    void *ctx;
    struct hrh_look *l;
    int64_t key;
    char *machine;
    char *k[6];
    double *x;
    uint64_t *count;
    size_t *pos;
    size_t n, cap;
};

/*
 * Reads the runs of history h, then every point that keep (NULL: every
 * one) keeps, into look l, series by series, and finishes the look
 * (hrh_look_finish). r is zeroed here; hrh_lookread_fini
 * is due either way.
 */
int hrh_lookread(struct hrh_lookread *r,
                         struct hrh_look *l, struct hrh_history *h,
                         int (*keep)(void *ctx,
                                     const struct hrh_point *p),
                         void *ctx, char *err, size_t errlen);

/* The run at place pos among machine's runs, or NULL. */
const struct hrh_lookrun *
hrh_lookread_run_at(const struct hrh_lookread *r,
                            const char *machine, size_t pos);

void hrh_lookread_fini(struct hrh_lookread *r);

#endif
