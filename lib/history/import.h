/*
 * Other tools' results turned into runs of the history (hostrangectl
 * history add --from), so that detect, check, the page and bisect work
 * on them as on any key:
 *
 * - Google Benchmark's JSON (--benchmark_format=json or --benchmark_out):
 *   one run per file; each benchmark (its run_name) two keys, metrics
 *   real_time and cpu_time; with --benchmark_repetitions each repetition
 *   is a round; a file of aggregates only gives its median aggregate.
 *   Time: the context's date; commit: the context's "commit" (made by
 *   --benchmark_context=commit=SHA); machine: its CPUs and clock
 *   ("N cpus, M MHz"); host: its host_name. Benchmarks that reported an
 *   error are left out.
 * - pytest-benchmark's JSON (--benchmark-json, or a saved run): one run
 *   per file; each benchmark (its fullname) one key, metric time, with its
 *   stats' rounds, mean and median, and p10 and p90 from its data points
 *   where saved (--benchmark-save-data), else its first and third
 *   quartiles. Time: its datetime; commit: its commit_info's id (none
 *   where it says "unversioned"); machine: the CPU's brand and count
 *   (machine_info.cpu), else machine_info's processor or machine; host:
 *   machine_info's node, kernel: its release.
 * - CSV: lines "commit,time,machine,name,value[,unit]" (quotes as RFC
 *   4180; a first line naming the columns is skipped), a run per
 *   (commit, time, machine) in the file's order, a key per name; a name
 *   given more than once in a run is a round per line. Unit: ns
 *   (default), us, ms or s.
 *
 * Every key is node the format's name (gbench, pytest-benchmark, csv),
 * operator the program (Google Benchmark's executable), pytest-benchmark's
 * group, or "-", backend "-", phase warm, range the benchmark's name;
 * every value is in ns. A run's id is made from the bytes it came from (hrr_runid_of_bytes:
 * the file, or the CSV's lines of the run), so a file added twice, or a
 * CSV that grew, stores each run once. The options' machine, commit and
 * time win over the file's.
 *
 * Pure logic, no I/O: the caller reads the file.
 */
#ifndef HOSTRANGE_HISTORY_IMPORT_H
#define HOSTRANGE_HISTORY_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/history/history.h"

enum hrh_import_format {
    HRH_IMPORT_GBENCH,
    HRH_IMPORT_PYTEST_BENCHMARK,
    HRH_IMPORT_CSV,
};

/* The formats' names, as --from takes them ("google-benchmark" is also
 * taken for gbench), and the node of their keys. */
#define HRH_IMPORT_NAME_GBENCH "gbench"
#define HRH_IMPORT_NAME_GBENCH_LONG "google-benchmark"
#define HRH_IMPORT_NAME_PYTEST "pytest-benchmark"
#define HRH_IMPORT_NAME_CSV "csv"
/* The metrics of the imported keys. */
#define HRH_IMPORT_METRIC_REAL "real_time"
#define HRH_IMPORT_METRIC_CPU "cpu_time"
#define HRH_IMPORT_METRIC_TIME "time"
/* The operator and backend of keys that have none. */
#define HRH_IMPORT_NONE "-"

/* What the command line says over the file (NULL: the file's). */
struct hrh_import_opts {
    const char *machine;
    const char *commit;
    const char *time; /* as hrh_import_time reads it */
    const char *const *meta_key; /* noted with each run */
    const char *const *meta_value;
    size_t nmeta;
    /* A run without a time is read with time 0 (history check: the run
     * is judged, never stored, and its time is not used). */
    int time_optional;
};

/* The runs read from one file, owning every string and point of them. */
struct hrh_import_run {
    struct hrh_run run;
    struct hrh_point *p;
    size_t n, cap;
    char id[64];
};

struct hrh_import {
    struct hrh_import_run *runs;
    size_t nruns;
    size_t skipped; /* benchmarks left out (errors) */
    /* Private: what the runs point into; the rooms of the arrays. */
    void **owned;
    size_t nowned, owned_cap, runs_cap;
};

/* The format named `name`: 0 with *f, or -EINVAL. */
int hrh_import_format_parse(const char *name, enum hrh_import_format *f);

/*
 * A time: Unix seconds (a fraction allowed), or an ISO 8601 date and time
 * "YYYY-MM-DDTHH:MM:SS" (a space for the T, a fraction of seconds
 * allowed) in UTC, or followed by Z or an offset +HH:MM / -HH:MM; a date
 * that exists (no February 30; :60 only for 23:59:60 UTC, a leap
 * second) and whose nanoseconds fit an int64_t (1677-09-21 to
 * 2262-04-11). Returns 0 with *ns (since the epoch), or -EINVAL.
 */
int hrh_import_time(const char *s, int64_t *ns);

/* What hrh_import_time reads, for the messages that refuse a time. */
#define HRH_IMPORT_TIME_FORMS \
    "Unix seconds, or YYYY-MM-DDTHH:MM:SS[Z|+HH:MM]: a real date up to " \
    "2262-04-11"

/*
 * Reads text[0..len), the content of file `file`, in format f. Returns 0
 * with *out (free with hrh_import_free), or -EINVAL with a one-line
 * reason in err (a line and column where there is one), or -ENOMEM.
 */
int hrh_import_read(enum hrh_import_format f, const char *file,
                    const char *text, size_t len,
                    const struct hrh_import_opts *o, struct hrh_import **out,
                    char *err, size_t errlen);

/* Frees im; NULL is allowed. */
void hrh_import_free(struct hrh_import *im);

#endif
