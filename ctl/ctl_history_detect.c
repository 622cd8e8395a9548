/* hostrangectl history detect: the change points of the history's
 * series, gathered into findings (ctl_history_look.c), or each series
 * alone (--series) (see ctl_history_judge.h, lib/stat/changepoint.h). */
#include "config.h"

#include "ctl/ctl_bisect.h"
#include "ctl/ctl_history_judge.h"
#include "lib/view/escape.h"
#include "lib/history/history.h"
#include "lib/history/look.h"
#include "lib/view/gate.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hrc_history_usage_detect[] =
    "Usage: hostrangectl history detect [--db DB] [FILTER]... [--machine GLOB]\n"
    "                                 [--alpha P] [--min-change PCT] [--window N]\n"
    "                                 [--series] [--fail-above SPEC]\n"
    "                                 [--format FORMAT] [--limit N]\n"
    "Find the change points of the history's series (a series: one key on one\n"
    "machine, a point per run, its median, in the runs' order) and gather\n"
    "them into findings. A change is a level that lasts at least --window\n"
    "runs and differs from the one before it; a single outlying run is not\n"
    "one. All series are judged at once: a change must move its series by\n"
    "at least " STR(HRS_CP_MIN_STEPS) " clock steps of its machine (the step taken from the\n"
    "machine's values), and the series reported changed must hold the\n"
    "Benjamini-Hochberg false discovery rate at q = ALPHA over all the\n"
    "series judged; a series of one sample a run (a cold row) also passes a\n"
    "tail check. Change points at one run (or the next) on one machine that\n"
    "share a node or a range are one finding, named by its machine, commit\n"
    "and run, its nodes, and the layer it starts in (the self time that\n"
    "moved most; else the inclusive time that moved least), its series\n"
    "listed under it. Every report states this rule in its header.\n"
    "\n"
    DETECT_OPTS_HELP
    "      --min-change=PCT the smallest change reported, in % (default 0)\n"
    "      --series         each series judged alone at ALPHA, as its own\n"
    "                       line (no clock floor, no rule over all series)\n"
    "      --fail-above=SPEC\n"
    "                       exit 1 when the newest run of a series lies in a\n"
    "                       segment slower than the one before by more than\n"
    "                       its limit (diff's syntax: PCT, or GLOB=PCT,...\n"
    "                       per range), and name each on stderr; a finding\n"
    "                       with such a series fails\n"
    "  -f, --format=FORMAT  text (default), jsonl (a line of the rule, then\n"
    "                       one per finding, its series in it), junit (a\n"
    "                       testcase per finding, its series listed; with\n"
    "                       --series a testsuite per node, a testcase per\n"
    "                       series) or markdown (the rule and a table of the\n"
    "                       findings, worst first)\n"
    "      --limit=N        markdown: at most N rows (default 50)\n"
    "  -h, --help           show this help and exit\n";


/* detect: the series, each analysed when it is whole. */
struct detect {
    const struct hrc_judge_opts *o;
    int slower; /* a series' newest segment beyond its limit */
    int rc;
    struct hrh_gate g;
};

static int detect_series(void *ctx, const struct hrh_series *s)
{
    struct detect *d = ctx;
    struct hrs_cp *cp;
    int n, over, rc = 0;

    cp = malloc(s->n * sizeof *cp);
    if (cp == NULL)
        return -ENOMEM;
    n = hrs_cp_detect(s->x, s->n, &d->o->cp, cp, s->n);
    for (int i = 0; i < n && d->o->gate == HRC_GATE_NONE; i++) {
        /* The commit of the run before the change: JSONL's
         * commit_before, and in text the bisect command line between the
         * two when more than one commit lies there. */
        const char *before = cp[i].at > 0 ? s->commit[cp[i].at - 1] : NULL;
        char *extra = NULL;
        size_t len = 0;

        if (before != NULL && d->o->jsonl) {
            FILE *m = open_memstream(&extra, &len);

            if (m == NULL) {
                free(cp);
                return -ENOMEM;
            }
            fputs(",\"commit_before\":", m);
            hrv_json_string(m, before);
            if (fclose(m) != 0) {
                free(extra);
                free(cp);
                return -ENOMEM;
            }
        }
        hrc_put_finding(d->o, s, s->commit[cp[i].at],
                            s->run[cp[i].at], &cp[i], "", extra);
        free(extra);
        if (before != NULL && !d->o->jsonl)
            bisect_suggest(stdout, before, s->commit[cp[i].at],
                           s->key[0], s->key[3], s->key[4],
                           s->key[5]);
    }
    over = n > 0 &&
           hrc_over_limit("history detect", d->o, s, &cp[n - 1]);
    if (over)
        d->slower = 1;
    if (n >= 0 && d->o->gate != HRC_GATE_NONE)
        rc = hrh_gate_add(&d->g, HRC_JUDGE_LIMITS(d->o), s->key,
                                  s->machine,
                                  n > 0 ? s->commit[cp[n - 1].at] : NULL,
                                  n > 0 ? &cp[n - 1] : NULL, over, NULL);
    free(cp);
    return n < 0 ? n : rc != 0 ? rc : ferror(stdout) ? -EIO : 0;
}

/* Whether detect's filters keep point p. */
static int detect_keep(void *ctx, const struct hrh_point *p)
{
    struct detect *d = ctx;

    return hrh_match(&d->o->f, d->o->machine, p);
}

int hrc_history_detect(int argc, char **argv)
{
    struct hrc_judge_opts o;
    struct detect d;
    struct hrh_history *h;
    char err[4096];
    int rc;

    hrc_judge_opts_init(&o);
    rc = hrc_judge_parse("history detect", hrc_history_usage_detect,
                             argc, argv, &o, 1);
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "hostrangectl history detect: unexpected argument "
                "'%s'\n", argv[optind]);
        rc = HRC_EXIT_USAGE;
    }
    if (rc != 0) {
        hrs_limits_fini(&o.limits);
        return rc < 0 ? 0 : rc;
    }
    o.db = hrc_history_db(o.db);
    if ((rc = hrc_history_open("history detect", o.db,
                                   HRH_READ, &h)) != 0) {
        hrs_limits_fini(&o.limits);
        return rc;
    }
    memset(&d, 0, sizeof d);
    d.o = &o;
    if (!o.series) {
        struct hrc_look_opts lo = {
            &o.f, o.machine, o.cp, o.have_limits ? &o.limits : NULL,
            o.jsonl                    ? HRC_LOOK_JSONL
            : o.gate == HRC_GATE_JUNIT     ? HRC_LOOK_JUNIT
            : o.gate == HRC_GATE_MARKDOWN  ? HRC_LOOK_MARKDOWN
                                       : HRC_LOOK_TEXT,
            o.limit };

        rc = hrc_history_look(&lo, h, &d.slower, err, sizeof err);
    } else {
        rc = hrh_series_each(h, detect_keep, detect_series, &d, err,
                                     sizeof err);
        if (rc == 0 && o.gate != HRC_GATE_NONE)
            rc = hrc_gate_write(&d.g, &o, "hostrangectl history detect");
    }
    hrh_gate_fini(&d.g);
    hrh_close(h);
    hrs_limits_fini(&o.limits);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -EIO;
    if (rc != 0)
        return hrc_judge_failed("history detect", o.db, rc, err);
    return d.slower ? HRC_EXIT_SLOWER : 0;
}
