/*
 * What hostrangectl history detect (ctl_history_detect.c) and check
 * (ctl_history_check.c) share (ctl_history_judge.c): their options, the
 * rows of the gate formats (kept by lib/history/gate.h) written, and the
 * lines that say a change (a series: lib/history/series.h).
 */
#ifndef HOSTRANGE_CTL_HISTORY_JUDGE_H
#define HOSTRANGE_CTL_HISTORY_JUDGE_H

#include "ctl/ctl_report.h"
#include "ctl/ctl_history.h"
#include "lib/history/gate.h"
#include "lib/history/import.h"
#include "lib/history/series.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/limits.h"
#include "lib/view/gate.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* check's --threshold when not given, in % (diff's). */
#define HRC_CHECK_THRESHOLD_DEFAULT 5
/* The largest --threshold (%) and --min-history (runs) check takes; its
 * messages name them. */
#define HRC_CHECK_THRESHOLD_MAX 1000000
#define HRC_CHECK_MIN_HISTORY_MAX 1000000

#define STR_(x) #x
#define STR(x) STR_(x)

#define DETECT_OPTS_HELP                                                      \
    "      --db=DB          the history (see hostrangectl history add --help)\n" \
    HRC_HISTORY_READ_HELP                                                 \
    HRC_FILTER_HELP                                                       \
    "      --machine=GLOB   only machines matching GLOB (the machine of a\n"   \
    "                       series as history list shows it)\n"               \
    "  -a, --alpha=P        significance level (default " STR(HRS_CP_ALPHA_DEFAULT) ")\n" \
    "  -w, --window=N       the fewest runs a level must last to be one\n"    \
    "                       (default " STR(HRS_CP_WINDOW_DEFAULT) ")\n"

#define GATE_FORMAT_HELP(what)                                                \
    "  -f, --format=FORMAT  text (default), jsonl, junit (JUnit XML: a\n"      \
    "                       testsuite per node, a testcase per " what ",\n"  \
    "                       a failure beyond --fail-above) or markdown (a\n" \
    "                       verdict line and the changed keys, worst first)\n" \
    "      --limit=N        markdown: at most N rows (default 50)\n"

/* The gate formats (lib/view/gate.h): the judged keys, kept until the
 * end in a struct hrh_gate (lib/history/gate.h). */
enum { HRC_GATE_NONE, HRC_GATE_JUNIT, HRC_GATE_MARKDOWN };

struct hrc_judge_opts {
    const char *db;
    struct hra_filter f;
    const char *machine;
    struct hrs_cp_opts cp;
    struct hrs_limits limits;
    int have_limits;
    int jsonl;
    int gate;           /* HRC_GATE_NONE, _JUNIT or _MARKDOWN */
    size_t limit;       /* --limit */
    size_t min_history; /* check's --min-history (0: none) */
    double threshold;   /* check's --threshold, in % */
    int series;         /* detect --series: each series alone */
    int from;           /* check --from: the run is another tool's */
    enum hrh_import_format fmt;
};

/* o's --fail-above limits, or NULL when none were given. */
#define HRC_JUDGE_LIMITS(o) ((o)->have_limits ? &(o)->limits : NULL)

/* Writes g in o's gate format under title. Returns 0 or a negative
 * errno. */
int hrc_gate_write(const struct hrh_gate *g,
                       const struct hrc_judge_opts *o, const char *title);

/* Writes v to stdout as the reports write numbers (numfmt.h). */
void hrc_judge_number(double v);

/* Writes key `key` on machine `machine` as terminal text: "NODE OP
 * BACKEND PHASE RANGE METRIC on MACHINE", each escaped. */
void hrc_key_name(FILE *f, char *const *key, const char *machine);

/* Writes series s's name as key_name does. */
void hrc_series_name(FILE *f, const struct hrh_series *s);

/* Writes one finding: a change point of series s at cp (detect), or run
 * `run` of commit `commit` against it (check); note ends its text line,
 * json_extra (NULL: none) holds fields that end its JSON object. */
void hrc_put_finding(const struct hrc_judge_opts *o,
                         const struct hrh_series *s,
                         const char *commit, const char *run,
                         const struct hrs_cp *cp,
                         const char *note, const char *json_extra);

/* Writes to stdout the line of a change cp of key `key` on machine
 * `machine`, at commit `commit` ("" for none) and run `run`, with `note`
 * after it: "KEY on MACHINE: slower by +10.0% at commit C (run R): median
 * 1005.0 -> 1105.5 ns, p=1.5e-19NOTE". Every name escaped. */
void hrc_change_line(char *const *key, const char *machine,
                         const struct hrs_cp *cp, const char *commit,
                         const char *run, const char *note);

/* Whether a slower change of series s goes beyond its --fail-above
 * limit; names it on stderr when it does. */
int hrc_over_limit(const char *cmd, const struct hrc_judge_opts *o,
                       const struct hrh_series *s,
                       const struct hrs_cp *cp);

/* The options of detect and check; check's run file is left in argv.
 * Returns -1 with the help shown, 0, or a usage error's status. */
int hrc_judge_parse(const char *cmd, const char *usage, int argc,
                        char **argv, struct hrc_judge_opts *o, int detect);

/* o with every default (alpha, window, min-change, the Markdown limit). */
void hrc_judge_opts_init(struct hrc_judge_opts *o);

/* The status of a failed query or of the output. */
int hrc_judge_failed(const char *cmd, const char *db, int rc,
                         const char *err);

#endif
