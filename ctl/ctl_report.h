/* The report options, the dump and the calibrations the commands share (ctl_report.c, ctl_dump.c). */
#ifndef HOSTRANGE_CTL_REPORT_H
#define HOSTRANGE_CTL_REPORT_H

#include <stdio.h>

#include "lib/agg/agg.h"
#include "lib/run/run.h"
#include "lib/view/report.h"
#include "proto/hostrange.pb-c.h"

/* The selection of keys shared by dump and reset (strings borrowed). */

/* The help of the filters, shared by dump and reset. */
#define HRC_FILTER_HELP                                                 \
    "  -n, --node=GLOB      only nodes whose id matches the shell pattern\n"  \
    "                       GLOB\n"                                           \
    "      --operator=GLOB  only operators matching GLOB\n"                   \
    "      --backend=GLOB   only backends matching GLOB\n"                    \
    "      --phase=PHASE    only the cold or the warm phase\n"                \
    "      --range=GLOB     only ranges matching GLOB\n"

/* The long options of the filters; 'n' also has a short form. */
#define HRC_FILTER_LONGOPTS                           \
    { "node", required_argument, NULL, 'n' },             \
    { "operator", required_argument, NULL, 'O' },         \
    { "backend", required_argument, NULL, 'B' },          \
    { "phase", required_argument, NULL, 'P' },            \
    { "range", required_argument, NULL, 'R' }

/* The report options shared by dump and record. */
struct hrc_report {
    enum hrv_format format;
    unsigned fields;
    const char *output;      /* NULL or "-": standard output */
    int correct;             /* --correct-observer */
    const char *calibration; /* --calibration=LABEL, or NULL: the most
                                recent calibration */
    const char *from;        /* --from=FILE: a run file, no daemon */
    int by_path;             /* --by path: rows per calling context */
    int view;                /* HRC_VIEW_* (--format folded|tree|
                                pprof) */
    int value;               /* --value: enum hrv_fvalue (flame.h) */
};

/* dump's calling-context views (ctl_paths.c), besides the row formats. */
#define HRC_VIEW_ROWS 0
#define HRC_VIEW_FOLDED 1
#define HRC_VIEW_TREE 2
#define HRC_VIEW_PPROF 3

/* The long options of the report options without a short form. */
#define HRC_OPT_CORRECT 'C'
#define HRC_OPT_CALIBRATION 'K'
#define HRC_OBSERVER_LONGOPTS                                    \
    { "correct-observer", no_argument, NULL, HRC_OPT_CORRECT },  \
    { "calibration", required_argument, NULL, HRC_OPT_CALIBRATION }

/*
 * Parses the filter options (n, O, B, P, R) into f and the report options
 * (f, F, o, and the observer options C and K) into r. Returns 1 when c was
 * one of them, 0 when not; exits with status 2 on a bad value. Either
 * pointer may be NULL to parse only the other kind.
 */
int hrc_report_option(const char *cmd, int c, const char *arg,
                          struct hra_filter *f, struct hrc_report *r);

/* Makes q a paged dump request dq of the keys flt selects (strings
 * borrowed). */
void hrc_dump_request(Hostrange__ControlRequest *q,
                          Hostrange__DumpRequest *dq,
                          const struct hra_filter *flt);

/*
 * Dumps the report, page by page, to r->output (atomically: a temporary
 * file, then a rename; a device or a pipe is written in place) or standard
 * output. With the observer fields or --correct-observer, the first page
 * also brings the daemon's calibrations, and each row gets the one of its
 * clock path (hrc_calibs). Returns 0, or HRC_TOLD after printing a
 * one-line error.
 */
int hrc_dump(const struct hra_filter *f,
                 const struct hrc_report *r);

/*
 * Loads run file `path` into agg (initialised here, whatever the result;
 * the caller finis it) as every reader of run files does: nothing the
 * file holds is dropped (hrr_runload_init_reader), and progress shows on a
 * terminal. Returns 0, or HRC_TOLD after printing why, the message
 * starting "hostrangectl CMD: ".
 */
int hrc_load_run(const char *cmd, const char *path, struct hra_agg *agg);

/* hrc_load_run into r (hrr_whole_fini is due either way), its end
 * in r->end. */
int hrc_read_run(const char *cmd, const char *path,
                     struct hrr_whole *r);

/*
 * The calibrations a report applies (ctl_report.c), copied out of a reply or
 * a file: each row gets the one of its clock path (hra_calib_for, of
 * label `want` when not NULL). What cannot be applied is said once on
 * stderr, naming `where` (the daemon or the file): no calibration at all,
 * none of label `want`, none of a row's path, rows of mixed paths.
 * run_paths stands for the clock paths of rows whose own are not known
 * (the clients of a run file; 0: not known either).
 */
struct hra_calib;
/* A bit of hrc_calibs.warned beside the paths' (HRP_PATHS_ALL): the
 * warning of mixed rows was given. */
#define HRC_WARNED_MIXED 0x100u
struct hrc_calibs {
    struct hra_calib *cal;
    size_t n;
    char **strs;          /* the copied labels and clocks */
    const char *want;
    const char *where;
    int correct;
    unsigned run_paths;
    unsigned warned;      /* paths said to have no calibration, and
                             HRC_WARNED_MIXED */
};

/* Copies m[0..n) (the most recent first) into cs and says on stderr when
 * there is none to apply. Returns 0 or -ENOMEM. */
int hrc_calibs_init(struct hrc_calibs *cs,
                        Hostrange__Calibration *const *m, size_t n,
                        const char *want, const char *where, int correct);
/* Fills the observer fields of row (observer.h) from the calibration of its
 * clock path, correcting it when cs->correct is set. */
void hrc_calibs_apply(struct hrc_calibs *cs, struct hra_row *row);
void hrc_calibs_fini(struct hrc_calibs *cs);

#endif
