/*
 * A run file turned into a run of the history (hostrangectl history add,
 * history check, record --history): its id, order, commit, machine,
 * host, kernel and meta, and one point per key and metric with its count,
 * mean, median, p10 and p90, from one read of the file (its header, keys
 * and end in one pass; only a file saved before runs had ids is read a
 * second time, for the hash that is its id: lib/run/runid.h). Other
 * tools' results are read here too (a file of one of import.h's formats),
 * into the same runs.
 *
 * Functions return 0, or a negative errno with a one-line reason in err:
 * -EINVAL for a file that is not a run file (or not of its format), or a
 * meta time that is not a time; -ENOMEM; or what reading the file gave.
 */
#ifndef HOSTRANGE_HISTORY_FROMRUN_H
#define HOSTRANGE_HISTORY_FROMRUN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/history/history.h"
#include "lib/history/import.h"
#include "lib/run/run.h"

struct hra_agg;

/* A run read for the history, its points' strings owned here. */
struct hrh_fromrun {
    struct hrh_run run;
    struct hrh_point *p;
    size_t n, cap;
    double *rounds;          /* the points' round medians */
    Hostrange__RunEnd *end;  /* the run's end (its rounds), or NULL */
    struct hra_agg *agg;     /* the run's keys, or NULL */
    char id[64];
    char machine[2048];
    char host[256];
    char kernel[256];
    char *parts;
    char **meta_key, **meta_value;
    size_t nmeta;
    struct hrh_import *import; /* another tool's results */
    /* Set when the file could not be read (err says why), as against a
     * failure after it was read. */
    int unreadable;
};

/*
 * Reads run file path into r: its meta, then extra[0..nextra) (KEY=VALUE,
 * later ones winning), as measured on machine `machine` when not NULL
 * (else the machine its fingerprint names: hrr_fingerprint_machine), its
 * order its meta 'time' (hrh_import_time) else when it was saved, its
 * commit its meta 'commit'. progress (may be NULL) is called as the file
 * is read (hrr_load). The points have no round medians yet:
 * hrh_fromrun_rounds puts them. hrh_fromrun_fini is due
 * either way.
 */
int hrh_fromrun_load(struct hrh_fromrun *r, const char *path,
                             char *const *extra, size_t nextra,
                             const char *machine,
                             hrr_progress_fn progress, void *ctx,
                             char *err, size_t errlen);

/*
 * Puts the round medians of r's points, looked up in the rounds of the
 * run's end (lib/run/runrounds.h), when the run has more than one round.
 * Returns 0 or -ENOMEM.
 */
int hrh_fromrun_rounds(struct hrh_fromrun *r);

/*
 * Sets o's meta from extra[0..nextra) (--meta KEY=VALUE, as the runs of
 * run files take it: a later one of a key wins), and o's commit and time
 * from the keys commit and time (over the file's). The values point into
 * extra. Returns 0 or -ENOMEM; hrh_import_meta_fini is due
 * either way.
 */
int hrh_import_meta(struct hrh_import_opts *o, char *const *extra,
                            size_t nextra);
void hrh_import_meta_fini(struct hrh_import_opts *o);

/*
 * Reads file path, another tool's results in format fmt (import.h), with
 * options o, into *out (free with hrh_import_free). Returns 0, -EFBIG for
 * a file larger than 1 GiB, or an error as above.
 */
int hrh_import_file(enum hrh_import_format fmt, const char *path,
                            const struct hrh_import_opts *o,
                            struct hrh_import **out, char *err,
                            size_t errlen);

/*
 * Reads file path, another tool's results in format fmt holding one run,
 * as measured on machine `machine` when not NULL (else the file's), into
 * r (history check --from). Returns as hrh_import_file, -EINVAL
 * for a file of more runs than one; hrh_fromrun_fini is due
 * either way.
 */
int hrh_fromrun_import(struct hrh_fromrun *r,
                               enum hrh_import_format fmt, const char *path,
                               const char *machine, char *err, size_t errlen);

void hrh_fromrun_fini(struct hrh_fromrun *r);

#endif
