/* hostrangectl history check: a run against the latest segment of each
 * of its series, its keys held to detect's rule and gathered into
 * findings, every key not judged said with why: its options and printing
 * (see ctl_history_judge.h), its rule in lib/history/judge.h. */
#include "config.h"

#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_history_judge.h"
#include "lib/history/history.h"
#include "lib/history/judge.h"
#include "lib/history/look.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/decide.h"
#include "lib/view/escape.h"
#include "lib/view/gate.h"
#include "lib/view/numfmt.h"
#include "lib/view/report.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hrc_history_usage_check[] =
    "Usage: hostrangectl history check [--db DB] [--from FORMAT] RUN.hrs\n"
    "                                [FILTER]...\n"
    "                                [--alpha P] [--window N] [--min-history N]\n"
    "                                [--fail-above SPEC] [--threshold PCT]\n"
    "                                [--format FORMAT] [--limit N]\n"
    "Test each key of a run (one not stored, such as a pull request's)\n"
    "against the latest segment of its series on the run's machine: whether\n"
    "its median is slower than that segment's runs (p < ALPHA), with\n"
    "detect's fields (commit: the run's own). A key of 3 rounds or more\n"
    "(record --rounds) is judged by its round medians against the\n"
    "segment's (exact Mann-Whitney, one-sided), when the segment has 3\n"
    "values or more, and given the verdict of diff's decision rule at one\n"
    "look (see diff --max-rounds): slower or faster (the fastest-half test\n"
    "at p < ALPHA, the change beyond its threshold and two clock steps),\n"
    "same (the 95% interval of the change inside +-its threshold) or\n"
    "undecided; its threshold is its --fail-above limit, else --threshold.\n"
    "\n"
    "Every key judged states its detectable change: the change its test\n"
    "would flag at ALPHA with 80% power, from the noise of the segment (and\n"
    "of the run's rounds) and their numbers, never less than two clock\n"
    "steps. A key whose detectable change is above its --fail-above limit\n"
    "is not judged at this limit: neither passed nor failed.\n"
    "\n"
    "The keys judged are held to detect's rule: a key differs when its\n"
    "change moves by at least " STR(HRS_CP_MIN_STEPS) " clock steps of the machine and it passes\n"
    "the Benjamini-Hochberg false discovery rate at q = ALPHA over all the\n"
    "keys judged. Those that differ are gathered into findings (keys that\n"
    "share a node or a range), each a line (text, JSONL) before its keys;\n"
    "the last line counts them and states the rule. A key in no finding has\n"
    "a line of its own when it is not judged at its limit, or undecided by\n"
    "its rounds (those --fail-above names, else all); the others are\n"
    "counted in the summary (text: the verdicts of the keys judged by\n"
    "rounds; JSONL's last line: \"verdicts\" and \"not_judged_at_limit\").\n"
    "\n"
    "Every key of the run that is not judged is listed, in every format,\n"
    "with why: no history of this machine (the history holds no run of\n"
    "it), a key the history lacks on this machine, fewer runs than\n"
    "--min-history, or too short a history (fewer than 2 runs in the\n"
    "latest segment). When no key is judged, stderr says so.\n"
    "\n"
    DETECT_OPTS_HELP
    "      --fail-above=SPEC\n"
    "                       exit 1 when a key is significantly slower by more\n"
    "                       than its limit (diff's syntax), and name each on\n"
    "                       stderr\n"
    "      --threshold=PCT  the threshold of a key that --fail-above does\n"
    "                       not name, in % (default "
    STR(HRC_CHECK_THRESHOLD_DEFAULT) ")\n"
    "      --min-history=N  refuse to pass a key with fewer than N runs of\n"
    "                       history on the run's machine: it is not judged,\n"
    "                       and the exit status is 6 (unless one is slower\n"
    "                       than allowed: 1)\n"
    "      --from=FORMAT    RUN.hrs is another tool's results, as history add\n"
    "                       --from reads them (gbench, pytest-benchmark or\n"
    "                       csv: one run, which needs no time); with it,\n"
    "                       --machine NAME names the run's machine\n"
    GATE_FORMAT_HELP("key; skipped: not judged, with why")
    "  -h, --help           show this help and exit\n"
    "\n"
    "Exit status: 0 none slower than allowed; 1 a key slower than\n"
    "--fail-above allows; 2 a usage error; 3 a history or run file that\n"
    "cannot be read (a missing history included); 5 any other failure; 6\n"
    "a key with fewer runs of history than --min-history; 7 a key not\n"
    "judged at its --fail-above limit (and none slower than allowed nor\n"
    "refused).\n";

/* check: the run checked (lib/history/judge.h) and what it writes. */
struct check {
    const struct hrc_judge_opts *o;
    struct hrh_fromrun *r;
    struct hrh_check hc;
    char few_reason[96]; /* FEW_RUNS's words with --min-history's N */
    struct hrh_gate g;
};

/* Why a key was not judged, by enum hrh_unjudged. */
static const char *const unjudged_words[HRH_UNJUDGED_COUNT] = {
    "no history of this machine",
    "a key the history lacks on this machine",
    NULL, /* few_reason */
    "too short a history: fewer than 2 runs in the latest segment",
};

/* The names of a key's six fields, in JSON. */
static const char *const key_names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };

/* Opens a JSON line with key's six fields, the machine and the run. */
static void json_key_start(char *const *key, const char *machine,
                           const char *run)
{
    for (int i = 0; i < 6; i++) {
        printf("%s\"%s\":", i ? "," : "{", key_names[i]);
        hrv_json_string(stdout, key[i]);
    }
    printf(",\"machine\":");
    hrv_json_string(stdout, machine);
    printf(",\"run\":");
    hrv_json_string(stdout, run);
}

/* Says that the run's point p was not judged, and why, in o's format. */
static int not_judged(struct check *c, const struct hrh_point *p,
                      enum hrh_unjudged why)
{
    char *key[6] = { (char *)p->node, (char *)p->op, (char *)p->backend,
                     (char *)p->phase, (char *)p->range, (char *)p->metric };
    const char *reason = why == HRH_UNJUDGED_FEW_RUNS ? c->few_reason
                                                      : unjudged_words[why];

    if (c->o->gate != HRC_GATE_NONE)
        return hrh_gate_add(&c->g, HRC_JUDGE_LIMITS(c->o), key,
                                    c->r->machine, NULL, NULL, 0, reason);
    if (c->o->jsonl) {
        json_key_start(key, c->r->machine, c->r->id);
        printf(",\"not_judged\":");
        hrv_json_string(stdout, reason);
        puts("}");
    } else {
        hrc_key_name(stdout, key, c->r->machine);
        printf(": not judged (%s)\n", reason);
    }
    return ferror(stdout) ? -EIO : 0;
}

/* The words after a key's line: its detectable change, its verdict by
 * rounds, and whether it is not judged at its limit. */
static void judged_words(const struct hrh_judged *j, int not_judged,
                         char *buf, size_t len)
{
    size_t at;

    if (isfinite(j->detectable))
        at = (size_t)snprintf(buf, len, "; detectable %.1f%%",
                              j->detectable);
    else
        at = (size_t)snprintf(buf, len, "; detectable none");
    if (j->by_rounds && at < len)
        at += (size_t)snprintf(buf + at, len - at, "; %s at +-%g%% "
                               "[%+.1f%%, %+.1f%%]",
                               hrs_decide_name(j->dec.verdict), j->threshold,
                               j->dec.lo, j->dec.hi);
    if (not_judged && at < len)
        snprintf(buf + at, len - at, "; " HRV_GATE_NOT_JUDGED);
}

/* The JSON fields of the same. */
static void judged_json(const struct hrh_judged *j, int not_judged,
                        char *buf, size_t len)
{
    char num[3][32];
    size_t at;

    hrv_format_number(num[0], sizeof num[0], j->detectable);
    at = (size_t)snprintf(buf, len, ",\"detectable\":%s",
                          isfinite(j->detectable) ? num[0] : "null");
    if (j->by_rounds && at < len) {
        hrv_format_number(num[1], sizeof num[1], j->dec.lo);
        hrv_format_number(num[2], sizeof num[2], j->dec.hi);
        at += (size_t)snprintf(
            buf + at, len - at, ",\"verdict\":\"%s\",\"threshold_pct\":%g,"
            "\"verdict_lo_pct\":%s,\"verdict_hi_pct\":%s,"
            "\"rounds\":[%zu,%zu]", hrs_decide_name(j->dec.verdict),
            j->threshold, isfinite(j->dec.lo) ? num[1] : "null",
            isfinite(j->dec.hi) ? num[2] : "null", j->rounds[0], j->rounds[1]);
    }
    if (not_judged && at < len)
        snprintf(buf + at, len - at, ",\"judged\":\"" HRV_GATE_NOT_JUDGED
                 "\"");
}

/*
 * A key check judged that is in no finding (res: its figures): counted,
 * a gate row, and in text and JSONL a line when it is not judged at its
 * limit or, gated, undecided by its rounds. Returns 0 or a negative
 * errno.
 */
static int settle(struct check *c, char *const *key, const struct hrs_cp *res,
                  const struct hrh_judged *j)
{
    struct hrh_check_said said;
    char words[256];

    hrh_check_settle(&c->hc, j, &said);
    if (c->o->gate != HRC_GATE_NONE)
        return hrh_gate_add_judged(&c->g, HRC_JUDGE_LIMITS(c->o), key,
                                   c->r->machine, res, 0, j, &said);
    if (!hrh_check_said_line(&said))
        return 0;
    if (c->o->jsonl) {
        json_key_start(key, c->r->machine, c->r->id);
        printf(",\"before\":");
        hrc_judge_number(res->before);
        printf(",\"after\":");
        hrc_judge_number(res->after);
        printf(",\"change\":");
        hrc_judge_number(res->change);
        printf(",\"p\":");
        hrc_judge_number(res->p);
        judged_json(j, said.not_judged, words, sizeof words);
        printf("%s}\n", words);
    } else {
        hrc_key_name(stdout, key, c->r->machine);
        judged_words(j, said.not_judged, words, sizeof words);
        /* Without the leading "; ". */
        printf(": %+.1f%%, median %.1f -> %.1f ns, p=%.2g, %s\n",
               res->change * 100, res->before, res->after, res->p,
               words + 2);
    }
    return ferror(stdout) ? -EIO : 0;
}

static int check_series(void *ctx, const struct hrh_series *s)
{
    struct check *c = ctx;
    const struct hrh_point *p;
    struct hrh_judged j;
    struct hrs_cp res;
    enum hrh_unjudged why;
    int rc = hrh_check_series(&c->hc, s, &p, &res, &j, &why);

    if (rc == HRH_CHECK_UNJUDGED)
        return not_judged(c, p, why);
    if (rc == HRH_CHECK_SAME)
        return settle(c, s->key, &res, &j);
    return rc < 0 ? rc : 0;
}

/* The series check reads (hrh_series_each's keep). */
static int check_keep(void *ctx, const struct hrh_point *p)
{
    struct check *c = ctx;

    return hrh_check_keep(&c->hc, p);
}

/* The words of check's summary for the keys not judged: "N not judged
 * (A no history of this machine, B too short a history)". */
static void unjudged_summary(const struct check *c, char *buf, size_t len)
{
    static const char *const short_words[HRH_UNJUDGED_COUNT] = {
        "no history of this machine", "a key the history lacks",
        "fewer runs than --min-history", "too short a history",
    };
    size_t total = hrh_check_unjudged_total(&c->hc), at;

    at = (size_t)snprintf(buf, len, "%zu not judged", total);
    for (int i = 0, first = 1; i < HRH_UNJUDGED_COUNT && at < len; i++) {
        if (c->hc.unjudged[i] == 0)
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%zu %s",
                               first ? " (" : ", ", c->hc.unjudged[i],
                               short_words[i]);
        first = 0;
    }
    if (total > 0 && at < len)
        snprintf(buf + at, len - at, ")");
}

/* Writes pending key p, kept by the rule, as check's line of text or
 * JSON, or its gate row; names it on stderr when it is slower than its
 * limit allows. */
static int put_pending(struct check *c, const struct hrh_pending *p)
{
    struct hrh_check_said said;
    struct hrh_series s;
    char note[384], extra[256];

    memset(&s, 0, sizeof s);
    memcpy(s.key, p->key, sizeof s.key);
    s.machine = (char *)c->r->machine;
    hrh_check_pending(&c->hc, p, &said);
    if (c->o->gate == HRC_GATE_NONE) {
        if (p->j.by_rounds)
            snprintf(note, sizeof note, " (by rounds: %zu against %zu)",
                     p->j.rounds[1], p->j.rounds[0]);
        else
            note[0] = '\0';
        judged_words(&p->j, said.not_judged, note + strlen(note),
                     sizeof note - strlen(note));
        judged_json(&p->j, said.not_judged, extra, sizeof extra);
        hrc_put_finding(c->o, &s, c->r->run.commit, c->r->id, &p->res,
                            note, extra);
    }
    if (said.over)
        hrc_over_limit("history check", c->o, &s, &p->res);
    if (c->o->gate != HRC_GATE_NONE)
        return hrh_gate_add_judged(&c->g, HRC_JUDGE_LIMITS(c->o), s.key,
                                   s.machine, &p->res, 1, &p->j, &said);
    return ferror(stdout) ? -EIO : 0;
}

/*
 * Applies the rule over all the keys check judged (hrh_judge_rule): the
 * keys left out are settled, and those kept are written in findings (keys
 * that share a node or a range), each finding a line before its keys
 * (text and JSONL). Returns 0 or a negative errno.
 */
static int check_rule(struct check *c)
{
    struct hrh_judge *jg = &c->hc.jg;
    struct hrh_check_finding fd = { 0 };
    int rc = hrh_judge_rule(jg);

    for (size_t i = 0; rc == 0 && i < jg->npend; i++) {
        if (!jg->pend[i].keep)
            rc = settle(c, jg->pend[i].key, &jg->pend[i].res,
                        &jg->pend[i].j);
    }
    /* Each finding (in key order), its start, then its keys. */
    while (rc == 0 && hrh_check_next_finding(&c->hc, &fd)) {
        const struct hrh_pending *st = &jg->pend[fd.start];

        if (c->o->jsonl) {
            printf("{\"finding\":%zu,\"machine\":", fd.number);
            hrv_json_string(stdout, c->r->machine);
            printf(",\"keys\":%zu,\"nodes\":%zu,\"start\":{", fd.keys,
                   fd.nodes);
            for (int k = 0; k < 6; k++) {
                printf("%s\"%s\":", k ? "," : "", key_names[k]);
                hrv_json_string(stdout, st->key[k]);
            }
            printf("}}\n");
        } else if (c->o->gate == HRC_GATE_NONE) {
            printf("finding %zu: %s by %+.1f%%, starts in ", fd.number,
                   st->res.change > 0 ? "slower" : "faster",
                   st->res.change * 100);
            hrc_key_name(stdout, st->key, c->r->machine);
            printf("; %zu %s of %zu %s\n", fd.keys,
                   fd.keys == 1 ? "key" : "keys", fd.nodes,
                   fd.nodes == 1 ? "node" : "nodes");
        }
        for (size_t j = fd.root; j < jg->npend && rc == 0; j++) {
            if (hrh_check_in_finding(&c->hc, &fd, j))
                rc = put_pending(c, &jg->pend[j]);
        }
    }
    return rc;
}

/* The keys of the run that no series judged or refused: each not judged,
 * for want of history on the run's machine. */
static int check_unseen(struct check *c)
{
    const struct hrh_point *p;
    enum hrh_unjudged why;
    size_t k = 0;
    int rc = 0;

    while (rc == 0 && (p = hrh_check_unseen(&c->hc, &k, &why)) != NULL)
        rc = not_judged(c, p, why);
    return rc;
}

int hrc_history_check(int argc, char **argv)
{
    struct hrc_judge_opts o;
    struct check c;
    struct hrh_fromrun r;
    struct hrh_history *h = NULL;
    char err[4096], summary[512];
    enum hrh_check_verdict verdict;
    size_t refused;
    int rc;

    hrc_judge_opts_init(&o);
    rc = hrc_judge_parse("history check", hrc_history_usage_check,
                             argc, argv, &o, 0);
    if (rc == 0 && optind != argc - 1) {
        fprintf(stderr, "hostrangectl history check: %s (one run file; see "
                "--help)\n", optind >= argc ? "no run file"
                                            : "more than one run file");
        rc = HRC_EXIT_USAGE;
    }
    /* With --from, --machine names the run's machine: held to the rules
     * of a machine's name (a usage error), as history add --from. */
    if (rc == 0 && o.from && o.machine != NULL &&
        hrc_machine_bad(o.machine, err, sizeof err) != 0) {
        fprintf(stderr, "hostrangectl history check: bad --machine: %s\n",
                err);
        rc = HRC_EXIT_USAGE;
    }
    if (rc != 0) {
        hrs_limits_fini(&o.limits);
        return rc < 0 ? 0 : rc;
    }
    o.db = hrc_history_db(o.db);
    memset(&c, 0, sizeof c);
    if (o.from)
        rc = hrc_hrun_import("history check", o.fmt, argv[optind],
                                 o.machine, &r);
    else
        rc = hrc_hrun_load("history check", argv[optind], NULL, 0, NULL,
                               &r);
    if (rc == 0)
        rc = hrc_history_open("history check", o.db, HRH_READ,
                                  &h);
    if (rc != 0) {
        hrh_fromrun_fini(&r);
        hrs_limits_fini(&o.limits);
        return rc;
    }
    c.o = &o;
    c.r = &r;
    snprintf(c.few_reason, sizeof c.few_reason, "fewer than %zu runs of "
             "history on this machine, --min-history %zu", o.min_history,
             o.min_history);
    /* With --from, --machine is the run's machine's name, not a pattern
     * ("ci[1]" is itself): the run's machine is matched exactly. */
    rc = hrh_check_init(&c.hc, &o.cp, o.min_history, HRC_JUDGE_LIMITS(&o),
                        o.threshold, &o.f, o.from ? NULL : o.machine,
                        r.machine, r.p, r.n);
    if (rc == 0) {
        rc = hrh_has(h, r.id, err, sizeof err);
        c.hc.exclude = rc == 1 ? r.id : NULL;
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0)
        rc = hrh_series_each(h, check_keep, check_series, &c, err,
                                     sizeof err);
    hrh_close(h);
    if (rc == 0)
        rc = check_rule(&c);
    if (rc == 0)
        rc = check_unseen(&c);
    refused = hrh_check_refused(&c.hc);
    if (rc == 0 && o.gate != HRC_GATE_NONE)
        rc = hrc_gate_write(&c.g, &o, "hostrangectl history check");
    hrh_gate_fini(&c.g);
    unjudged_summary(&c, summary, sizeof summary);
    if (rc == 0 && !o.jsonl && o.gate == HRC_GATE_NONE) {
        printf("checked %zu keys of ", c.hc.jg.judged);
        hrv_text_put(stdout, argv[optind]);
        fputs(" against the history of ", stdout);
        hrv_text_put(stdout, r.machine);
        printf(": %zu differ (p < %g), %s; %zu judged by their rounds",
               c.hc.jg.found, o.cp.alpha, summary, c.hc.jg.by_rounds);
        if (c.hc.jg.by_rounds > 0)
            printf(" (%zu slower, %zu faster, %zu same, %zu undecided)",
                   c.hc.verdicts[HRS_DECIDE_SLOWER],
                   c.hc.verdicts[HRS_DECIDE_FASTER],
                   c.hc.verdicts[HRS_DECIDE_SAME],
                   c.hc.verdicts[HRS_DECIDE_UNDECIDED]);
        if (c.hc.not_judged_limit > 0)
            printf("; %zu " HRV_GATE_NOT_JUDGED " (detectable above "
                   "--fail-above)", c.hc.not_judged_limit);
        putchar('\n');
    }
    if (rc == 0 && o.gate == HRC_GATE_NONE) {
        char rule[256];

        hrh_look_rule(rule, sizeof rule, o.cp.alpha, c.hc.jg.judged);
        if (o.jsonl) {
            printf("{\"rule\":");
            hrv_json_string(stdout, rule);
            printf(",\"judged\":%zu,\"differ\":%zu,\"findings\":%zu,"
                   "\"not_judged\":%zu,\"by_rounds\":%zu,\"verdicts\":{"
                   "\"slower\":%zu,\"faster\":%zu,\"same\":%zu,"
                   "\"undecided\":%zu},\"not_judged_at_limit\":%zu}\n",
                   c.hc.jg.judged, c.hc.jg.found, c.hc.findings,
                   hrh_check_unjudged_total(&c.hc), c.hc.jg.by_rounds,
                   c.hc.verdicts[HRS_DECIDE_SLOWER],
                   c.hc.verdicts[HRS_DECIDE_FASTER],
                   c.hc.verdicts[HRS_DECIDE_SAME],
                   c.hc.verdicts[HRS_DECIDE_UNDECIDED], c.hc.not_judged_limit);
        } else {
            printf("%zu %s (%s)\n", c.hc.findings,
                   c.hc.findings == 1 ? "finding" : "findings", rule);
        }
    }
    if (rc == 0 && c.hc.jg.judged == 0) {
        fputs("hostrangectl history check: ", stderr);
        hrv_text_put(stderr, argv[optind]);
        fputs(": no key judged against the history of ", stderr);
        hrv_text_put(stderr, r.machine);
        fprintf(stderr, ": %s%s\n", summary,
                o.min_history > 0 ? ""
                                  : "; --min-history N makes this an error");
    }
    if (rc == 0 && c.hc.not_judged_limit > 0)
        fprintf(stderr, "hostrangectl history check: %zu keys not judged at "
                "their --fail-above limit (their detectable change above "
                "it)\n", c.hc.not_judged_limit);
    if (rc == 0 && refused > 0) {
        fprintf(stderr, "hostrangectl history check: %zu keys have fewer "
                "than %zu runs of history on ", refused, o.min_history);
        hrv_text_put(stderr, r.machine);
        fputs(": not judged (--min-history)\n", stderr);
    }
    verdict = hrh_check_verdict(&c.hc);
    hrh_check_fini(&c.hc);
    hrh_fromrun_fini(&r);
    hrs_limits_fini(&o.limits);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -EIO;
    if (rc != 0)
        return hrc_judge_failed("history check", o.db, rc, err);
    switch (verdict) {
    case HRH_CHECK_SLOWER:
        return HRC_EXIT_SLOWER;
    case HRH_CHECK_REFUSED:
        return HRC_EXIT_FEW_RUNS;
    case HRH_CHECK_NOT_JUDGED:
        return HRC_EXIT_NOT_JUDGED;
    default:
        return 0;
    }
}
