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
struct hrd__import_stats {
    uint64_t count;
    double mean, median, p10, p90;
};

/* The statistics of v[0..n) (n > 0; v is not changed): quantiles by
 * linear interpolation between the nearest ranks, as lib/stat/summary.h
 * computes them. Returns 0 or -ENOMEM. */
int hrd__import_stats_of(const double *v, size_t n,
                         struct hrd__import_stats *s);

/* Keeps p, to be freed with im. Returns p, or NULL (p freed) when out of
 * memory. */
void *hrd__import_keep(struct hrd_import *im, void *p);

/* A copy of s[0..len) kept by im, NUL-terminated, or NULL. */
char *hrd__import_strndup(struct hrd_import *im, const char *s, size_t len);
char *hrd__import_strdup(struct hrd_import *im, const char *s);

/* A new empty run at the end of im's runs (a pointer that the next call
 * moves), or NULL. */
struct hrd_import_run *hrd__import_run_new(struct hrd_import *im);

/* Adds to run r the point of key (node, op, range, metric) (copied),
 * phase warm, backend "-", with statistics s and, when nrounds > 1, the
 * rounds[0..nrounds) (copied). Returns 0 or -ENOMEM. */
int hrd__import_point(struct hrd_import *im, struct hrd_import_run *r,
                      const char *node, const char *op, const char *range,
                      const char *metric, const struct hrd__import_stats *s,
                      const double *rounds, size_t nrounds);

/* What a file says of a run (NULL: nothing). */
struct hrd__import_said {
    const char *machine, *commit, *time, *host, *kernel;
};

/* Finishes run r of file `file`: its id from idbytes[0..idlen), and its
 * machine, commit, time, host, kernel and meta from o over `said`.
 * Returns 0, -EINVAL with a reason in err (no machine, no time, or one
 * that is not a time), or -ENOMEM. */
int hrd__import_run_finish(struct hrd_import *im, struct hrd_import_run *r,
                           const char *file, const void *idbytes,
                           size_t idlen, const struct hrd_import_opts *o,
                           const struct hrd__import_said *said, char *err,
                           size_t errlen);

/* The readers of the JSON formats (import_json.c). */
int hrd__import_gbench(struct hrd_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrd_import_opts *o, char *err,
                       size_t errlen);
int hrd__import_pytest(struct hrd_import *im, const char *file,
                       const char *text, size_t len,
                       const struct hrd_import_opts *o, char *err,
                       size_t errlen);

#endif
