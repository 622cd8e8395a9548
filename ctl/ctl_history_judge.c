/* What history detect and check share (see ctl_history_judge.h). */
#include "config.h"

#include "ctl/ctl_history_judge.h"
#include "ctl/ctl_options.h"
#include "lib/history/history.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "lib/view/report.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_DB = 256, OPT_MACHINE, OPT_MIN_CHANGE, OPT_FAIL, OPT_LIMIT,
       OPT_MIN_HISTORY, OPT_SERIES, OPT_FROM, OPT_THRESHOLD };

/* Writes g in o's gate format under title. Returns 0 or a negative
 * errno. */
int hrc_gate_write(const struct hrh_gate *g,
                       const struct hrc_judge_opts *o, const char *title)
{
    struct hrv_gate gate = { title, g->v, g->n, "", o->limit,
                             "not judged" };

    return o->gate == HRC_GATE_JUNIT ? hrv_gate_junit(stdout, &gate)
                                 : hrv_gate_markdown(stdout, &gate);
}

void hrc_judge_number(double v)
{
    char b[40];

    hrv_format_number(b, sizeof b, v);
    fputs(b, stdout);
}

/* Writes key `key` on machine `machine` as terminal text: "NODE OP
 * BACKEND PHASE RANGE METRIC on MACHINE", each escaped. */
void hrc_key_name(FILE *f, char *const *key, const char *machine)
{
    for (int i = 0; i < 6; i++) {
        hrv_text_put(f, key[i]);
        fputc(' ', f);
    }
    fputs("on ", f);
    hrv_text_put(f, machine);
}

/* Writes series s's name as key_name does. */
void hrc_series_name(FILE *f, const struct hrh_series *s)
{
    hrc_key_name(f, s->key, s->machine);
}

/* Writes one finding: a change point of series s at cp (detect), or run
 * `run` of commit `commit` against it (check). */
void hrc_put_finding(const struct hrc_judge_opts *o,
                         const struct hrh_series *s,
                         const char *commit, const char *run,
                         const struct hrs_cp *cp,
                         const char *note, const char *json_extra)
{
    static const char *const names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };
    const char *dir = cp->change > 0 ? "slower" : "faster";

    if (o->jsonl) {
        for (int i = 0; i < 6; i++) {
            printf("%s\"%s\":", i ? "," : "{", names[i]);
            hrv_json_string(stdout, s->key[i]);
        }
        printf(",\"machine\":");
        hrv_json_string(stdout, s->machine);
        printf(",\"commit\":");
        hrv_json_string(stdout, commit);
        printf(",\"run\":");
        hrv_json_string(stdout, run);
        printf(",\"before\":");
        hrc_judge_number(cp->before);
        printf(",\"after\":");
        hrc_judge_number(cp->after);
        printf(",\"change\":");
        hrc_judge_number(cp->change);
        printf(",\"p\":");
        hrc_judge_number(cp->p);
        printf(",\"direction\":\"%s\"%s}\n", dir,
               json_extra != NULL ? json_extra : "");
        return;
    }
    hrc_change_line(s->key, s->machine, cp, commit, run, note);
}

void hrc_change_line(char *const *key, const char *machine,
                         const struct hrs_cp *cp, const char *commit,
                         const char *run, const char *note)
{
    hrc_key_name(stdout, key, machine);
    printf(": %s by %+.1f%% at commit ", cp->change > 0 ? "slower" : "faster",
           cp->change * 100);
    hrv_text_put(stdout, commit[0] != '\0' ? commit : "-");
    fputs(" (run ", stdout);
    hrv_text_put(stdout, run);
    printf("): median %.1f -> %.1f ns, p=%.2g%s\n", cp->before, cp->after,
           cp->p, note);
}

/* Whether a slower change of series s goes beyond its --fail-above
 * limit; names it on stderr when it does. */
int hrc_over_limit(const char *cmd, const struct hrc_judge_opts *o,
                       const struct hrh_series *s,
                       const struct hrs_cp *cp)
{
    const struct hrs_limit *l =
        hrh_over_limit(HRC_JUDGE_LIMITS(o), s->key[4], cp);

    if (l == NULL)
        return 0;
    fprintf(stderr, "hostrangectl %s: ", cmd);
    hrc_series_name(stderr, s);
    fprintf(stderr, ": %+.1f%% slower, above --fail-above %g%%\n",
            cp->change * 100, l->pct);
    return 1;
}

/* The options of detect and check; check's run file is left in argv.
 * Returns -1 with the help shown, 0, or a usage error's status. */
int hrc_judge_parse(const char *cmd, const char *usage, int argc,
                        char **argv, struct hrc_judge_opts *o, int detect)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        HRC_FILTER_LONGOPTS,
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "alpha", required_argument, NULL, 'a' },
        { "window", required_argument, NULL, 'w' },
        { "min-change", required_argument, NULL, OPT_MIN_CHANGE },
        { "fail-above", required_argument, NULL, OPT_FAIL },
        { "format", required_argument, NULL, 'f' },
        { "limit", required_argument, NULL, OPT_LIMIT },
        { "min-history", required_argument, NULL, OPT_MIN_HISTORY },
        { "threshold", required_argument, NULL, OPT_THRESHOLD },
        { "series", no_argument, NULL, OPT_SERIES },
        { "from", required_argument, NULL, OPT_FROM },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char err[512], *end;
    int c;

    while ((c = getopt_long(argc, argv, ":n:a:w:f:h", longopts, NULL)) !=
           -1) {
        if (c == OPT_DB) {
            o->db = hrc_history_dsn(cmd, optarg);
        } else if (c == OPT_MACHINE) {
            o->machine = optarg;
        } else if (c == OPT_SERIES && detect) {
            o->series = 1;
        } else if (c == 'a' || c == 'w') {
            if (hrc_history_cp_option(cmd, c, optarg, &o->cp) != 0)
                return HRC_EXIT_USAGE;
        } else if (c == OPT_MIN_CHANGE && detect) {
            double pct = strtod(optarg, &end);

            if (*end != '\0' || end == optarg || !(pct >= 0)) {
                fprintf(stderr, "hostrangectl %s: bad --min-change '%s' (a "
                        "percentage, at least 0)\n", cmd, optarg);
                return HRC_EXIT_USAGE;
            }
            o->cp.min_change = pct / 100;
        } else if (c == OPT_FROM && !detect) {
            if (hrh_import_format_parse(optarg, &o->fmt) != 0) {
                fprintf(stderr, "hostrangectl %s: bad --from '%s' ("
                        HRH_IMPORT_NAME_GBENCH ", " HRH_IMPORT_NAME_PYTEST
                        " or " HRH_IMPORT_NAME_CSV ")\n", cmd, optarg);
                return HRC_EXIT_USAGE;
            }
            o->from = 1;
        } else if (c == OPT_THRESHOLD && !detect) {
            double pct = strtod(optarg, &end);

            if (*end != '\0' || end == optarg ||
                !(pct > 0 && pct <= HRC_CHECK_THRESHOLD_MAX)) {
                fprintf(stderr, "hostrangectl %s: bad --threshold '%s' (a "
                        "percentage, above 0 and at most %d)\n", cmd, optarg,
                        HRC_CHECK_THRESHOLD_MAX);
                return HRC_EXIT_USAGE;
            }
            o->threshold = pct;
        } else if (c == OPT_MIN_HISTORY && !detect) {
            long n = strtol(optarg, &end, 10);

            if (*end != '\0' || end == optarg || n < 1 ||
                n > HRC_CHECK_MIN_HISTORY_MAX) {
                fprintf(stderr, "hostrangectl %s: bad --min-history '%s' "
                        "(a whole number of runs, 1 to %d)\n", cmd, optarg,
                        HRC_CHECK_MIN_HISTORY_MAX);
                return HRC_EXIT_USAGE;
            }
            o->min_history = (size_t)n;
        } else if (c == OPT_FAIL) {
            if (hrs_limits_parse(&o->limits, optarg, err, sizeof err) != 0) {
                fprintf(stderr, "hostrangectl %s: bad --fail-above '%s': "
                        "%s\n", cmd, optarg, err);
                return HRC_EXIT_USAGE;
            }
            o->have_limits = 1;
        } else if (c == 'f') {
            o->jsonl = strcmp(optarg, "jsonl") == 0;
            o->gate = strcmp(optarg, "junit") == 0      ? HRC_GATE_JUNIT
                      : strcmp(optarg, "markdown") == 0 ? HRC_GATE_MARKDOWN
                                                        : HRC_GATE_NONE;
            if (!o->jsonl && o->gate == HRC_GATE_NONE &&
                strcmp(optarg, "text") != 0) {
                fprintf(stderr, "hostrangectl %s: bad format '%s' (text, "
                        "jsonl, junit or markdown)\n", cmd, optarg);
                return HRC_EXIT_USAGE;
            }
        } else if (c == OPT_LIMIT) {
            long n = strtol(optarg, &end, 10);

            if (*end != '\0' || end == optarg || n < 0) {
                fprintf(stderr, "hostrangectl %s: bad --limit '%s' (a "
                        "whole number, at least 0)\n", cmd, optarg);
                return HRC_EXIT_USAGE;
            }
            o->limit = (size_t)n;
        } else if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        } else if (c == OPT_MIN_CHANGE || c == OPT_MIN_HISTORY ||
                   c == OPT_SERIES || c == OPT_FROM || c == OPT_THRESHOLD ||
                   !hrc_report_option(cmd, c, optarg, &o->f, NULL)) {
            hrc_die_usage(cmd, c, argv[optind - 1]);
        }
    }
    return 0;
}


void hrc_judge_opts_init(struct hrc_judge_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cp.alpha = HRS_CP_ALPHA_DEFAULT;
    o->cp.window = HRS_CP_WINDOW_DEFAULT;
    o->cp.min_change = HRS_CP_MIN_CHANGE_DEFAULT;
    o->limit = HRV_GATE_MARKDOWN_LIMIT;
    o->threshold = HRC_CHECK_THRESHOLD_DEFAULT;
}

/* The status of a failed query or of the output. */
int hrc_judge_failed(const char *cmd, const char *db, int rc,
                         const char *err)
{
    char name[1024];

    if (rc == -EIO && ferror(stdout)) {
        fprintf(stderr, "hostrangectl %s: cannot write the output\n", cmd);
        return HRC_EXIT_FAILED;
    }
    if (rc == -ENOMEM) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRC_EXIT_FAILED;
    }
    hrh_name(db, name, sizeof name);
    fprintf(stderr, "hostrangectl %s: %s: %s\n", cmd, name, err);
    return HRC_EXIT_UNREADABLE;
}
