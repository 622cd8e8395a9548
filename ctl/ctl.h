/*
 * hostrangectl's parts. The global options and the command table
 * (hostrangectl.c); the option and progress helpers (ctl_options.c); the
 * request/reply exchange with hostranged (ctl_conn.c); the report helpers
 * the commands share: report and filter options, calibrations, the dump
 * request, loading a run file (ctl_report.c). One file per command: dump (ctl_dump.c; dump --from is
 * ctl_from.c, and its calling-context views, which plot draws too,
 * ctl_paths.c), stats (ctl_stats.c), reset (ctl_reset.c), ping
 * (ctl_ping.c), record (ctl_record.c), plot (ctl_plot.c), and the run file
 * commands save, merge and diff (ctl_save.c, ctl_merge.c, ctl_diff.c;
 * ctl_diffside.c says why diff or bisect cannot read a run,
 * ctl_fingerprint.c the machine fingerprints save writes and diff
 * compares). The run files themselves are lib/run's: these files parse
 * options, call it and print what it returns (reading a run's keys for a
 * comparison, runside.h; diff's pairing and judging, rundiff.h; a merge,
 * runmerge.h; rounds, runrounds.h; a save's pages, runsave.h; --meta,
 * runmeta.h; what a header says, runheader.h), and no file here names a
 * run's records (tests/source/test_layers.sh). history (ctl_history*.c,
 * its table ctl_history_cmd.c; ctl_history.h) is options, calls into
 * lib/history (a run read for the history, the series, check's judging,
 * detect's look, plot's page, the gate rows and the --fail-above
 * verdict) and printing; bisect (ctl_bisect*.c; ctl_bisect.h) is
 * options, the git, build and record processes of its steps, and
 * printing, its search lib/stat/bisect.c, its state file's lines read
 * back by lib/stat/bisectstate.c. record, record
 * --rounds and ab register the processes they start and the directories
 * they make with ctl_cleanup.c (ctl_cleanup.h), which stops and removes
 * them on every way out, signals included.
 *
 * Calls point one way: hostrangectl.c -> the command files (record also
 * calls dump's and save's) -> ctl_paths.c, ctl_from.c -> the helpers
 * (ctl_report.c, ctl_conn.c, ctl_options.c), which call no command. No
 * file calls a file that calls it back (tests/source/test_layers.sh).
 *
 * A command is a struct hrd_ctl_cmd: its name, the summary the main --help
 * lists, its own --help text, and the function that runs it. Adding a
 * command is one file and one entry in the table of hostrangectl.c.
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

#include "lib/agg/agg.h"
#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/runmeta.h"
#include "lib/view/report.h"
#include "proto/hostrange.pb-c.h"

/*
 * A command or a subcommand (history's): run gets its arguments (argv[0]
 * is its name, getopt restarted) and returns the exit status (ctl_exit.h).
 * summary may span lines, each continuation indented by 11 spaces to the
 * column of the first; usage is its --help.
 */
struct hrd_ctl_cmd {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
};

/* The entry of table (n entries) named name, or NULL. */
const struct hrd_ctl_cmd *hrd_ctl_cmd_find(const struct hrd_ctl_cmd *const *table,
                                           size_t n, const char *name);

extern const struct hrd_ctl_cmd hrd_ctl_cmd_dump;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_stats;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_reset;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_ping;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_record;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_save;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_merge;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_diff;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_plot;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_ab;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_bisect;
extern const struct hrd_ctl_cmd hrd_ctl_cmd_history;

/*
 * What the functions of hostrangectl return: 0 on success; a negative
 * errno that the caller has still to report (writing a file, memory); or
 * HRD_CTL_TOLD when the failure was already told to the user on stderr.
 * Each command turns these into its exit status.
 */
#define HRD_CTL_TOLD 1

/* A number defined in code, as text for --help: HRD_STR(HRD_X) is "10"
 * when HRD_X is 10. */
#define HRD_STR_(x) #x
#define HRD_STR(x) HRD_STR_(x)

/* The runtime directory in use and the answer timeout. */
extern char hrd_ctl_dir[4096];
extern int hrd_ctl_timeout_ms;

/*
 * Sends a control request and waits for its reply. On success returns 0
 * and the decoded reply in *out (caller frees with
 * hostrange__control_reply__free_unpacked). On failure returns a negative
 * errno (-ENOENT: no daemon there; -EACCES: not this user's; -ETIMEDOUT:
 * no answer in time; -EPROTO: a reply that cannot be read; -EREMOTEIO:
 * the daemon's error) with a one-line reason in err.
 */
int hrd_ctl_request(const Hostrange__ControlRequest *q,
                    Hostrange__ControlReply **out, int timeout_ms, char *err,
                    size_t errlen);
/* The same in two steps, for a reader of the reply's bytes: the reply as
 * received (*msg, *msglen; free with nn_freemsg), and the checks of a
 * decoded reply (NULL: it did not decode; a wrong version or an error
 * frees it). Both return 0, or a negative errno with a reason in err. */
int hrd_ctl_request_msg(const Hostrange__ControlRequest *q, void **msg,
                        size_t *msglen, int timeout_ms, char *err,
                        size_t errlen);
/*
 * Asks the daemon for every page of the dump request q (whose body is dq,
 * paged) and calls page() on each reply. Returns 0; page()'s non-zero
 * value; or HRD_CTL_TOLD after printing why the daemon gave no report
 * (cmd names the command).
 */
int hrd_ctl_dump_pages(const char *cmd, Hostrange__ControlRequest *q,
                       Hostrange__DumpRequest *dq,
                       int (*page)(const Hostrange__DumpReply *d, void *ctx),
                       void *ctx);

int hrd_ctl_reply_check(Hostrange__ControlReply **out, char *err,
                        size_t errlen);

/* Sends a control request (its version set here); prints the failure
 * unless quiet. Returns 0 with the reply in *rep (caller frees with
 * hostrange__control_reply__free_unpacked), or 1. */
int hrd_ctl_ask(Hostrange__ControlRequest *q, Hostrange__ControlReply **rep,
                int quiet);

/* Closes the control socket, if open. */
void hrd_ctl_close(void);

/* Prints the one-line usage error for option character c ('?' unknown,
 * ':' missing value) and exits with status 2. */
void hrd_ctl_die_usage(const char *cmd, int c, const char *arg);

/* Exits with status 2 when arguments are left after a command's options. */
void hrd_ctl_no_arguments(const char *cmd, int argc, char **argv);

/* Parses the options of a command that has none but --help (which prints
 * help and exits 0). */
void hrd_ctl_no_options(const char *cmd, const char *help, int argc,
                        char **argv);

/*
 * Progress of long work, on stderr when it is a terminal (nothing
 * otherwise): one line, redrawn in place ("\rsave: 12 MiB written ...")
 * when `done` has moved on by 4 MiB since it was last drawn, and always
 * when `last` is set; hrd_ctl_progress_end ends the line once one was
 * drawn, so that what follows starts on a line of its own.
 */
struct hrd_ctl_progress {
    int on;          /* stderr is a terminal */
    int shown;       /* a line is up */
    uint64_t next;   /* the `done` from which to draw again */
};

void hrd_ctl_progress_init(struct hrd_ctl_progress *p);
void hrd_ctl_progress_show(struct hrd_ctl_progress *p, uint64_t done,
                           int last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hrd_ctl_progress_end(struct hrd_ctl_progress *p);

/* The progress of a run file read whole by command cmd (hrd_run_load's
 * hrd_run_progress_fn, with a struct hrd_ctl_read_progress as ctx). */
struct hrd_ctl_read_progress {
    struct hrd_ctl_progress p;
    const char *cmd, *path;
};

void hrd_ctl_read_progress(void *ctx, uint64_t done, uint64_t size);

/* A whole number of milliseconds (0 to INT_MAX) for option `what`; exits
 * with status 2 on anything else. */
long hrd_ctl_parse_ms(const char *cmd, const char *what, const char *v);

/* Makes a private directory $TMPDIR/hostrange-KIND-XXXXXX (/tmp when
 * TMPDIR is unset or empty) and writes its path to dir. Returns 0, or -1
 * after saying on stderr "hostrangectl CMD: cannot create WHAT in ...". */
int hrd_ctl_tempdir(const char *cmd, const char *kind, const char *what,
                    char *dir, size_t len);

/* Pings until the daemon answers or wait_ms pass. Returns 0 or 1. */
int hrd_ctl_ping_wait(int wait_ms, int quiet);

/* The selection of keys shared by dump and reset (strings borrowed). */

/* The help of the filters, shared by dump and reset. */
#define HRD_CTL_FILTER_HELP                                                 \
    "  -n, --node=GLOB      only nodes whose id matches the shell pattern\n"  \
    "                       GLOB\n"                                           \
    "      --operator=GLOB  only operators matching GLOB\n"                   \
    "      --backend=GLOB   only backends matching GLOB\n"                    \
    "      --phase=PHASE    only the cold or the warm phase\n"                \
    "      --range=GLOB     only ranges matching GLOB\n"

/* The long options of the filters; 'n' also has a short form. */
#define HRD_CTL_FILTER_LONGOPTS                           \
    { "node", required_argument, NULL, 'n' },             \
    { "operator", required_argument, NULL, 'O' },         \
    { "backend", required_argument, NULL, 'B' },          \
    { "phase", required_argument, NULL, 'P' },            \
    { "range", required_argument, NULL, 'R' }

/* The report options shared by dump and record. */
struct hrd_ctl_report {
    enum hrd_format format;
    unsigned fields;
    const char *output;      /* NULL or "-": standard output */
    int correct;             /* --correct-observer */
    const char *calibration; /* --calibration=LABEL, or NULL: the most
                                recent calibration */
    const char *from;        /* --from=FILE: a run file, no daemon */
    int by_path;             /* --by path: rows per calling context */
    int view;                /* HRD_CTL_VIEW_* (--format folded|tree|
                                pprof) */
    int value;               /* --value: enum hrd_fvalue (flame.h) */
};

/* dump's calling-context views (ctl_paths.c), besides the row formats. */
#define HRD_CTL_VIEW_ROWS 0
#define HRD_CTL_VIEW_FOLDED 1
#define HRD_CTL_VIEW_TREE 2
#define HRD_CTL_VIEW_PPROF 3

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
                          struct hrd_filter *f, struct hrd_ctl_report *r);

/* Makes q a paged dump request dq of the keys flt selects (strings
 * borrowed). */
void hrd_ctl_dump_request(Hostrange__ControlRequest *q,
                          Hostrange__DumpRequest *dq,
                          const struct hrd_filter *flt);

/*
 * Dumps the report, page by page, to r->output (atomically: a temporary
 * file, then a rename; a device or a pipe is written in place) or standard
 * output. With the observer fields or --correct-observer, the first page
 * also brings the daemon's calibrations, and each row gets the one of its
 * clock path (hrd_ctl_calibs). Returns 0, or HRD_CTL_TOLD after printing a
 * one-line error.
 */
int hrd_ctl_dump(const struct hrd_filter *f,
                 const struct hrd_ctl_report *r);

/*
 * Loads run file `path` into agg (initialised here, whatever the result;
 * the caller finis it) as every reader of run files does: nothing the
 * file holds is dropped (hrd_runload_init_reader), and progress shows on a
 * terminal. Returns 0, or HRD_CTL_TOLD after printing why, the message
 * starting "hostrangectl CMD: ".
 */
int hrd_ctl_load_run(const char *cmd, const char *path, struct hrd_agg *agg);

/* hrd_ctl_load_run into r (hrd_run_whole_fini is due either way), its end
 * in r->end. */
int hrd_ctl_read_run(const char *cmd, const char *path,
                     struct hrd_run_whole *r);

/*
 * The calibrations a report applies (ctl_report.c), copied out of a reply or
 * a file: each row gets the one of its clock path (hrd_calib_for, of
 * label `want` when not NULL). What cannot be applied is said once on
 * stderr, naming `where` (the daemon or the file): no calibration at all,
 * none of label `want`, none of a row's path, rows of mixed paths.
 * run_paths stands for the clock paths of rows whose own are not known
 * (the clients of a run file; 0: not known either).
 */
struct hrd_calib;
/* A bit of hrd_ctl_calibs.warned beside the paths' (HRP_PATHS_ALL): the
 * warning of mixed rows was given. */
#define HRD_CTL_WARNED_MIXED 0x100u
struct hrd_ctl_calibs {
    struct hrd_calib *cal;
    size_t n;
    char **strs;          /* the copied labels and clocks */
    const char *want;
    const char *where;
    int correct;
    unsigned run_paths;
    unsigned warned;      /* paths said to have no calibration, and
                             HRD_CTL_WARNED_MIXED */
};

/* Copies m[0..n) (the most recent first) into cs and says on stderr when
 * there is none to apply. Returns 0 or -ENOMEM. */
int hrd_ctl_calibs_init(struct hrd_ctl_calibs *cs,
                        Hostrange__Calibration *const *m, size_t n,
                        const char *want, const char *where, int correct);
/* Fills the observer fields of row (observer.h) from the calibration of its
 * clock path, correcting it when cs->correct is set. */
void hrd_ctl_calibs_apply(struct hrd_ctl_calibs *cs, struct hrd_row *row);
void hrd_ctl_calibs_fini(struct hrd_ctl_calibs *cs);


/*
 * The rows of run file r->from (ctl_from.c), as hrd_ctl_dump writes the
 * daemon's, to f. Returns 0; HRD_CTL_TOLD after printing why the file
 * cannot be read; or a negative errno of writing.
 */
int hrd_ctl_rows_from(FILE *f, const struct hrd_filter *flt,
                      const struct hrd_ctl_report *r);

/*
 * dump --format folded|tree|pprof (ctl_paths.c): the calling-context tree
 * of the daemon's rows by path, or of run file r->from (whose range rows
 * are taken as one-element paths when it holds no paths), written to f
 * (pprof: a gzipped profile, pprof.h). Returns 0, HRD_CTL_TOLD after printing why,
 * or a negative errno of writing.
 */
int hrd_ctl_paths_view(FILE *f, const struct hrd_filter *flt,
                       const struct hrd_ctl_report *r);

/* The calling-context tree t (flame.h) of run file `from`'s rows, or of
 * the daemon's rows by path when from is NULL, for command cmd (dump,
 * plot). Returns 0, or HRD_CTL_TOLD after printing why. */
struct hrd_ptree;
int hrd_ctl_tree_load(const char *cmd, const struct hrd_filter *flt,
                      const char *from, struct hrd_ptree *t);
/* The tree t of an aggregation's path keys; of its range keys as
 * one-element paths when it has none. Returns 0 or -ENOMEM. */
int hrd_ctl_tree_from_agg(struct hrd_agg *agg, const struct hrd_filter *flt,
                          struct hrd_ptree *t);

/* The run file commands (ctl_save.c, ctl_merge.c, ctl_diff.c); argv[0] is
 * the command. Return the exit status. */
int hrd_ctl_save(int argc, char **argv);
int hrd_ctl_merge(int argc, char **argv);
int hrd_ctl_diff(int argc, char **argv);

/* The machine fingerprint of the daemon's run (ctl_fingerprint.c): this
 * machine, and the clock of the daemon's clients (unknown when it does not
 * answer). */
void hrd_ctl_fingerprint(struct hrd_fingerprint *fp);

/*
 * --machine NAME of command cmd (record, save, ab; NULL when not given):
 * the name of the machine the runs it saves are measured on, passed on in
 * $HOSTRANGE_MACHINE to the saves it makes and to every process it starts
 * (ctl_fingerprint.c). With arg NULL, a name $HOSTRANGE_MACHINE holds
 * already is checked. A name is 1 to HRD_MACHINE_MAX bytes of UTF-8 with
 * no control character: any other exits with status 2, saying why.
 */
void hrd_ctl_machine_option(const char *cmd, const char *arg);

/* Writes why name cannot name a machine to err, or returns 0 when it
 * can. */
int hrd_ctl_machine_bad(const char *name, char *err, size_t len);

/*
 * Saves what the daemon holds as run file `output` (ctl_save.c), for
 * command cmd (save, record --save): run format `format`, the --meta pairs
 * (borrowed), atomically (complete or untouched), with progress on a
 * terminal and, when note is not NULL, the line "saved N keys to FILE"
 * there. Returns 0, or HRD_CTL_TOLD after printing why.
 */
int hrd_ctl_save_run(const char *cmd, const char *output, unsigned format,
                     const struct hrd_run_meta *meta, FILE *note);

/*
 * Adds run file `path` to the history db (ctl_history.c), for command
 * cmd, as hostrangectl history add does; says so on note when not NULL.
 * Returns 0 (added, or stored already), or the exit status of history add
 * after saying why.
 */
int hrd_ctl_history_add_run(const char *cmd, const char *db,
                            const char *path, FILE *note);

/* The history named by --db (or record's --history) arg, for command
 * cmd (ctl_history.c): a copy, kept until the next call. A password in
 * arg is overwritten in arg itself (the process's command line, which ps
 * shows), with a warning on stderr, the first time, that PGPASSWORD or
 * ~/.pgpass is safer. */
const char *hrd_ctl_history_dsn(const char *cmd, char *arg);

/* --meta KEY=VALUE options (ctl_save.c): adds the pair to *meta (exits
 * with status 2 on a bad one); hrd_run_meta_fini frees them. */
int hrd_ctl_meta_add(const char *cmd, const char *arg,
                     struct hrd_run_meta *meta);

/*
 * What the session of stats s lost, said to out (ctl_losses.c): one line
 * `hostrange: ...` when clients lost events, the daemon refused batches,
 * or scopes of refused names, windows of refused labels or contexts kept
 * under (contexts full) were counted; then one line per client that ended
 * without its final counters (one that still runs may yet send them: not
 * named). Nothing when all is well. Returns 1 when
 * anything was lost or refused (full contexts alone lose no row: 0), else
 * 0. hrd_ctl_losses asks the daemon first: 1, 0, or -1 after printing why
 * it could not.
 */
int hrd_ctl_losses_say(const Hostrange__StatsReply *s, FILE *out);
int hrd_ctl_losses(FILE *out);

#endif
