/*
 * hostrangectl history's parts: the subcommands add, list and show and
 * what they share (ctl_history.c), detect (ctl_history_detect.c, its
 * findings ctl_history_look.c), check (ctl_history_check.c), plot
 * (ctl_history_plot.c), add --from (ctl_history_import.c): options, calls
 * into lib/history (fromrun.h, series.h, judge.h, lookread.h, page.h,
 * gate.h) and printing.
 * A series is one key (node, operator, backend, phase, range, metric) on
 * one machine, its points the medians of its runs in their order.
 *
 * Exit statuses, as every subcommand gives them: 0 nothing slower than
 * allowed; 1 slower (detect, check, with --fail-above); 2 a usage error;
 * 3 a database or run file that cannot be read; 5 any other failure; 6
 * (check) a key with fewer runs of history than --min-history, and none
 * slower than allowed.
 */
#ifndef HOSTRANGE_CTL_HISTORY_H
#define HOSTRANGE_CTL_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/ctl_exit.h"
#include "lib/agg/agg.h"
#include "lib/history/fromrun.h"
#include "lib/history/history.h"
#include "lib/history/import.h"
#include "lib/history/series.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/limits.h"

/* The help's words under --db of the subcommands that only read. */
#define HRC_HISTORY_READ_HELP                                          \
    "                       (only read: a missing history is not made;\n" \
    "                       exit 3)\n"

/* The database a subcommand uses: --db, else $HOSTRANGE_HISTORY, else
 * hostrange-history.db here. */
const char *hrc_history_db(const char *opt);

/* Opens the history for subcommand cmd, to read or to write (mode). A
 * history to read that does not exist is said to be made by history
 * add. Returns 0, or the exit status after saying why. */
int hrc_history_open(const char *cmd, const char *db,
                         enum hrh_mode mode, struct hrh_history **h);

/* Reads run file path for subcommand cmd (hrh_fromrun_load, with
 * its round medians and the progress of its read). Returns 0, or the exit
 * status after saying why; hrh_fromrun_fini is due either way. */
int hrc_hrun_load(const char *cmd, const char *path,
                      char *const *extra, size_t nextra, const char *machine,
                      struct hrh_fromrun *r);

/* Reads file path, another tool's results in format fmt holding one run
 * (hrh_fromrun_import), for subcommand cmd (check --from).
 * Returns 0, or the exit status after saying why;
 * hrh_fromrun_fini is due either way. */
int hrc_hrun_import(const char *cmd, enum hrh_import_format fmt,
                        const char *path, const char *machine,
                        struct hrh_fromrun *r);

/* Adds the runs of file path, another tool's results in format fmt
 * (lib/history/import.h), to history h (named db_name in messages), with
 * extra[0..nextra) (--meta KEY=VALUE: commit and time over the file's)
 * and machine (--machine, or NULL). Returns 0, or the exit status after
 * saying why. */
int hrc_history_add_from(struct hrh_history *h, const char *db_name,
                             enum hrh_import_format fmt, const char *path,
                             char *const *extra, size_t nextra,
                             const char *machine);

/* Whether the meta pair key=value is one that history add refuses: a
 * 'time' that hrh_import_time does not read. Says why for command cmd
 * (a usage error: exit 2) when it is. */
int hrc_history_meta_bad(const char *cmd, const char *key,
                         const char *value);

/* The run's time "YYYY-MM-DDTHH:MM:SSZ" (UTC) of time_ns. */
void hrc_history_time(int64_t time_ns, char *buf, size_t len);

/* detect, check and plot's --alpha (c 'a') or --window (c 'w') from arg
 * into *cp. Returns 0, or -EINVAL after saying why on stderr. */
struct hrs_cp_opts;
int hrc_history_cp_option(const char *cmd, int c, const char *arg,
                              struct hrs_cp_opts *cp);

/* The subcommands; argv[0] is the subcommand's name. */
int hrc_history_add(int argc, char **argv);
int hrc_history_list(int argc, char **argv);
int hrc_history_show(int argc, char **argv);
int hrc_history_detect(int argc, char **argv);
int hrc_history_check(int argc, char **argv);
int hrc_history_plot(int argc, char **argv);

extern const char hrc_history_usage_add[];
extern const char hrc_history_usage_list[];
extern const char hrc_history_usage_show[];
extern const char hrc_history_usage_detect[];
extern const char hrc_history_usage_check[];
extern const char hrc_history_usage_plot[];

/* detect's findings (ctl_history_look.c): its options. */
enum { HRC_LOOK_TEXT, HRC_LOOK_JSONL, HRC_LOOK_JUNIT,
       HRC_LOOK_MARKDOWN };

struct hrc_look_opts {
    const struct hra_filter *f;
    const char *machine;             /* a machine pattern, or NULL */
    struct hrs_cp_opts cp;           /* alpha: the false discovery rate */
    const struct hrs_limits *limits; /* --fail-above, or NULL */
    int format;                      /* HRC_LOOK_* */
    size_t limit;                    /* markdown's most rows */
};

/*
 * Looks at every series of history h that o's filters keep, at once
 * (lib/history/look.h), and writes its findings in o's format. Sets
 * *slower when a series of a finding is slower than its --fail-above
 * limit (its newest change), naming each on stderr. Returns 0, a negative
 * errno (err filled for the history's), or -ENOMEM.
 */
int hrc_history_look(const struct hrc_look_opts *o,
                         struct hrh_history *h, int *slower, char *err,
                         size_t errlen);

/*
 * Adds run file `path` to the history db (ctl_history.c), for command
 * cmd, as hostrangectl history add does; says so on note when not NULL.
 * Returns 0 (added, or stored already), or the exit status of history add
 * after saying why.
 */
int hrc_history_add_run(const char *cmd, const char *db,
                            const char *path, FILE *note);

/* The history named by --db (or record's --history) arg, for command
 * cmd (ctl_history.c): a copy, kept until the next call. A password in
 * arg is overwritten in arg itself (the process's command line, which ps
 * shows), with a warning on stderr, the first time, that PGPASSWORD or
 * ~/.pgpass is safer. */
const char *hrc_history_dsn(const char *cmd, char *arg);

#endif
