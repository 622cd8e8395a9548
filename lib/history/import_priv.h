/*
 * What the readers of other tools' results (import.c: CSV; import_json.c:
 * Google Benchmark and pytest-benchmark) share: an import owns every
 * string and array its runs point into (the `owned` list), and a run is
 * finished, once its points are in, by giving it its id, machine, commit,
 * time and meta, the options' over the file's.
 */
#ifndef HOSTRANGE_HISTORY_IMPORT_PRIV_H
#define HOSTRANGE_HISTORY_IMPORT_PRIV_H

#include "lib/history/import.h"

/* The statistics of one key of a run. */
struct hrh__import_stats {
    uint64_t count;
    double mean, median, p10, p90;
};

/* The statistics of v[0..n) (n > 0; v is not changed): quantiles by
 * linear interpolation between the nearest ranks, as lib/stat/summary.h
 * computes them. Returns 0 or -ENOMEM. */
int hrh__import_stats_of(const double *v, size_t n,
                         struct hrh__import_stats *s);

/* Keeps p, to be freed with im. Returns p, or NULL (p freed) when out of
 * memory. */
void *hrh__import_keep(struct hrh_import *im, void *p);

/* A copy of s[0..len) kept by im, NUL-terminated, or NULL. */
char *hrh__import_strndup(struct hrh_import *im, const char *s, size_t len);
char *hrh__import_strdup(struct hrh_import *im, const char *s);

/* A new empty run at the end of im's runs (a pointer that the next call
 * moves), or NULL. */
struct hrh_import_run *hrh__import_run_new(struct hrh_import *im);

/* Adds to run r the point of key (node, op, range, metric) (copied),
 * phase warm, backend "-", with statistics s and, when nrounds > 1, the
 * rounds[0..nrounds) (copied). Returns 0 or -ENOMEM. */
int hrh__import_point(struct hrh_import *im, struct hrh_import_run *r,
                      const char *node, const char *op, const char *range,
                      const char *metric, const struct hrh__import_stats *s,
                      const double *rounds, size_t nrounds);

/* Whether s[0..len), the `what` ("its name", "its group") of `where`
 * ("benchmark 3", "line 5") in file, may stand in a key as the daemon
 * takes a key's names (hrp_name_ok): 1 to HRP_MAX_STRING bytes, none of
 * them NUL; a label (an operator) may also be empty. Returns 0, or
 * -EINVAL with why in err: a name that would be cut, or refused by a
 * later stage, is refused where it enters. */
int hrh__import_name_check(const char *file, const char *where,
                           const char *what, const char *s, size_t len,
                           int label, char *err, size_t errlen);

/* What a file says of a run (NULL: nothing). */
struct hrh__import_said {
    const char *machine, *commit, *time, *host, *kernel;
};

/* Finishes run r of file `file`: its id from idbytes[0..idlen), and its
 * machine, commit, time, host, kernel and meta from o over `said`.
 * Returns 0, -EINVAL with a reason in err (no machine, no time, or one
 * that is not a time), or -ENOMEM. */
int hrh__import_run_finish(struct hrh_import *im, struct hrh_import_run *r,
                           const char *file, const void *idbytes,
                           size_t idlen, const struct hrh_import_opts *o,
                           const struct hrh__import_said *said, char *err,
                           size_t errlen);

/* The readers of the JSON formats (import_json.c). */
int hrh__import_gbench(struct hrh_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrh_import_opts *o, char *err,
                       size_t errlen);
int hrh__import_pytest(struct hrh_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrh_import_opts *o, char *err,
                       size_t errlen);

#endif
