/*
 * hostrangectl's parts: the request/reply exchange with hostranged and the
 * option helpers (hostrangectl.c), the report commands dump and record's
 * report (ctl_dump.c), and record (ctl_record.c).
 *
 * Usage errors print one line and exit with status 2; a daemon that cannot
 * be reached or fails gives one line naming the runtime directory and
 * status 1.
 */
#ifndef HOSTRANGE_CTL_H
#define HOSTRANGE_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/report.h"
#include "proto/hostrange.pb-c.h"

/* The runtime directory in use and the answer timeout. */
extern char hrd_ctl_dir[4096];
extern int hrd_ctl_timeout_ms;

/*
 * Sends a control request and waits for its reply. On success returns 0
 * and the decoded reply in *out (caller frees with
 * hostrange__control_reply__free_unpacked). On failure returns -1 with a
 * one-line reason in err.
 */
int hrd_ctl_request(const Hostrange__ControlRequest *q,
                    Hostrange__ControlReply **out, int timeout_ms, char *err,
                    size_t errlen);

/* Prints the one-line usage error for option character c ('?' unknown,
 * ':' missing value) and exits with status 2. */
void hrd_ctl_die_usage(const char *cmd, int c, const char *arg);

/* Pings until the daemon answers or wait_ms pass. Returns 0 or 1. */
int hrd_ctl_ping_wait(int wait_ms, int quiet);

/* The selection of keys shared by dump and reset (strings borrowed). */
struct hrd_ctl_filter {
    const char *node, *op, *backend, *range;
    unsigned phase;
};

/* The report options shared by dump and record. */
struct hrd_ctl_report {
    enum hrd_format format;
    unsigned fields;
    const char *output;      /* NULL or "-": standard output */
    int correct;             /* --correct-observer */
    const char *calibration; /* --calibration=LABEL, or NULL: the most
                                recent calibration */
    const char *from;        /* --from=FILE: a run file, no daemon */
};

/* The long options of the report options without a short form. */
#define HRD_CTL_OPT_CORRECT 'C'
#define HRD_CTL_OPT_CALIBRATION 'K'
#define HRD_CTL_OBSERVER_LONGOPTS                                    \
    { "correct-observer", no_argument, NULL, HRD_CTL_OPT_CORRECT },  \
    { "calibration", required_argument, NULL, HRD_CTL_OPT_CALIBRATION }

/*
 * Parses the filter options (n, O, B, P, R) into f and the report options
 * (f, F, o, and the observer options C and K) into r. Returns 1 when c was
 * one of them, 0 when not; exits with status 2 on a bad value. Either
 * pointer may be NULL to parse only the other kind.
 */
int hrd_ctl_report_option(const char *cmd, int c, const char *arg,
                          struct hrd_ctl_filter *f, struct hrd_ctl_report *r);

/*
 * Dumps the report, page by page, to r->output (atomically: a temporary
 * file, then a rename; a device or a pipe is written in place) or standard
 * output. With the observer fields or --correct-observer, the first page
 * also brings the daemon's calibrations, and the chosen one (r->calibration,
 * else the most recent) is applied to every row (observer.h); when there is
 * none, the observer fields are null and one line on stderr says so.
 * Returns 0, or 1 after printing a one-line error.
 */
int hrd_ctl_dump(const struct hrd_ctl_filter *f,
                 const struct hrd_ctl_report *r);

/* The record command (argv[0] is "record"). Returns the exit status. */
int hrd_ctl_record(int argc, char **argv);

/*
 * The rows of run file r->from (ctl_from.c), as hrd_ctl_dump writes the
 * daemon's, to f. Returns 0; -1 after printing why the file cannot be
 * read; or a negative errno of writing.
 */
int hrd_ctl_rows_from(FILE *f, const struct hrd_ctl_filter *flt,
                      const struct hrd_ctl_report *r);

/* The run file commands (ctl_save.c, ctl_merge.c, ctl_diff.c); argv[0] is
 * the command. Return the exit status. */
int hrd_ctl_save(int argc, char **argv);
int hrd_ctl_merge(int argc, char **argv);
int hrd_ctl_diff(int argc, char **argv);

/* --meta KEY=VALUE options (ctl_save.c): appends to *meta (exits with
 * status 2 on a bad one); hrd_ctl_meta_free frees the array. */
int hrd_ctl_meta_add(const char *cmd, const char *arg,
                     Hostrange__RunMeta ***meta, size_t *n);
void hrd_ctl_meta_free(Hostrange__RunMeta **meta, size_t n);
/* Sets a run header's provenance: format, this host (written to host[0..
 * hostlen)), the time now, this version, and the --meta pairs. */
void hrd_ctl_run_provenance(Hostrange__RunHeader *h, char *host,
                            size_t hostlen, Hostrange__RunMeta **meta,
                            size_t nmeta);

#endif
