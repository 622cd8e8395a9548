/* hostrangectl history detect and check: the change points of the
 * history's series, and a run against the latest segment of each of its
 * series (see ctl_history.h, lib/stat/changepoint.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "ctl/ctl_bisect.h"
#include "ctl/ctl_history.h"
#include "lib/history/history.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/limits.h"
#include "lib/stat/rounds.h"
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

#define STR_(x) #x
#define STR(x) STR_(x)

#define DETECT_OPTS_HELP                                                      \
    "      --db=DB          the history (see hostrangectl history add --help)\n" \
    HRD_CTL_HISTORY_READ_HELP                                                     \
    HRD_CTL_FILTER_HELP                                                       \
    "      --machine=GLOB   only machines matching GLOB (the machine of a\n"   \
    "                       series as history list shows it)\n"               \
    "  -a, --alpha=P        significance level (default " STR(HRD_CP_ALPHA_DEFAULT) ")\n" \
    "  -w, --window=N       the fewest runs a level must last to be one\n"    \
    "                       (default " STR(HRD_CP_WINDOW_DEFAULT) ")\n"

#define GATE_FORMAT_HELP(what)                                                \
    "  -f, --format=FORMAT  text (default), jsonl, junit (JUnit XML: a\n"      \
    "                       testsuite per node, a testcase per " what ",\n"  \
    "                       a failure beyond --fail-above) or markdown (a\n" \
    "                       verdict line and the changed keys, worst first)\n" \
    "      --limit=N        markdown: at most N rows (default 50)\n"

const char hrd_ctl_history_usage_detect[] =
    "Usage: hostrangectl history detect [--db DB] [FILTER]... [--machine GLOB]\n"
    "                                 [--alpha P] [--min-change PCT] [--window N]\n"
    "                                 [--fail-above SPEC] [--format FORMAT]\n"
    "                                 [--limit N]\n"
    "Find the change points of each series: one key on one machine, a point\n"
    "per run (its median), in the runs' order. A change is a level that\n"
    "lasts at least --window runs and differs from the one before it\n"
    "(p < ALPHA); a single outlying run is not one. Each is named by the\n"
    "first run after it (its commit and id), with the medians of the two\n"
    "segments, the change (after / before - 1) and p. In a git working\n"
    "tree that knows the commits of the runs either side of a change,\n"
    "when more than one commit lies between them, a line gives their\n"
    "count and the hostrangectl bisect command line that finds the\n"
    "commit among them (see hostrangectl bisect --help).\n"
    "\n"
    DETECT_OPTS_HELP
    "      --min-change=PCT the smallest change reported, in % (default 0)\n"
    "      --fail-above=SPEC\n"
    "                       exit 1 when the newest run of a series lies in a\n"
    "                       segment slower than the one before by more than\n"
    "                       its limit (diff's syntax: PCT, or GLOB=PCT,...\n"
    "                       per range), and name each on stderr\n"
    GATE_FORMAT_HELP("each series: its newest change")
    "  -h, --help           show this help and exit\n";

const char hrd_ctl_history_usage_check[] =
    "Usage: hostrangectl history check [--db DB] RUN.hrs [FILTER]...\n"
    "                                [--alpha P] [--window N] [--min-history N]\n"
    "                                [--fail-above SPEC] [--format FORMAT]\n"
    "                                [--limit N]\n"
    "Test each key of a run (one not stored, such as a pull request's)\n"
    "against the latest segment of its series on the run's machine: whether\n"
    "its median is slower than that segment's runs (p < ALPHA), with\n"
    "detect's fields (commit: the run's own). A key of 3 rounds or more\n"
    "(record --rounds) is judged by its round medians against the\n"
    "segment's (exact Mann-Whitney, one-sided), when the segment has 3\n"
    "values or more.\n"
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
    "      --min-history=N  refuse to pass a key with fewer than N runs of\n"
    "                       history on the run's machine: it is not judged,\n"
    "                       and the exit status is 6 (unless one is slower\n"
    "                       than allowed: 1)\n"
    GATE_FORMAT_HELP("key; skipped: not judged, with why")
    "  -h, --help           show this help and exit\n"
    "\n"
    "Exit status: 0 none slower than allowed; 1 a key slower than\n"
    "--fail-above allows; 2 a usage error; 3 a history or run file that\n"
    "cannot be read (a missing history included); 5 any other failure; 6\n"
    "a key with fewer runs of history than --min-history.\n";

enum { OPT_DB = 256, OPT_MACHINE, OPT_MIN_CHANGE, OPT_FAIL, OPT_LIMIT,
       OPT_MIN_HISTORY };

/* The gate formats (lib/view/gate.h): the judged keys, kept until the
 * end, with copies of their strings. */
enum { GATE_NONE, GATE_JUNIT, GATE_MARKDOWN };

struct gate_rows {
    struct hrd_gate_row *v;
    char **strs;        /* every string of v, to free */
    size_t n, cap, nstrs;
};

struct opts {
    const char *db;
    struct hrd_filter f;
    const char *machine;
    struct hrd_cp_opts cp;
    struct hrd_limits limits;
    int have_limits;
    int jsonl;
    int gate;           /* GATE_NONE, GATE_JUNIT or GATE_MARKDOWN */
    size_t limit;       /* --limit */
    size_t min_history; /* check's --min-history (0: none) */
};


/* A series being gathered: its key and machine (copied), and per run its
 * median, commit, id, time and round medians (NULL and 0 for a run of one
 * round). */
struct series {
    char *key[6];
    char *machine;
    int64_t keyid;
    double *x;
    double **rounds;
    size_t *nrounds;
    char **commit, **run;
    int64_t *time_ns;
    size_t n, cap;
};

static void series_clear(struct series *s)
{
    for (int i = 0; i < 6; i++) {
        free(s->key[i]);
        s->key[i] = NULL;
    }
    free(s->machine);
    s->machine = NULL;
    for (size_t i = 0; i < s->n; i++) {
        free(s->commit[i]);
        free(s->run[i]);
        free(s->rounds[i]);
    }
    s->n = 0;
}

static void series_fini(struct series *s)
{
    series_clear(s);
    free(s->x);
    free(s->commit);
    free(s->run);
    free(s->time_ns);
    free(s->rounds);
    free(s->nrounds);
}

static int series_same(const struct series *s,
                       const struct hrd_history_point *p)
{
    return s->machine != NULL && s->keyid == p->key &&
           strcmp(s->machine, p->machine) == 0;
}

static int series_start(struct series *s, const struct hrd_history_point *p)
{
    const char *k[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };

    series_clear(s);
    for (int i = 0; i < 6; i++) {
        if ((s->key[i] = strdup(k[i])) == NULL)
            return -ENOMEM;
    }
    s->keyid = p->key;
    return (s->machine = strdup(p->machine)) == NULL ? -ENOMEM : 0;
}

static int series_push(struct series *s, const struct hrd_history_point *p)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *x = realloc(s->x, cap * sizeof *x);
        char **c = realloc(s->commit, cap * sizeof *c);
        char **r = realloc(s->run, cap * sizeof *r);
        int64_t *t = realloc(s->time_ns, cap * sizeof *t);
        double **rd = realloc(s->rounds, cap * sizeof *rd);
        size_t *nr = realloc(s->nrounds, cap * sizeof *nr);

        s->x = x != NULL ? x : s->x;
        s->commit = c != NULL ? c : s->commit;
        s->run = r != NULL ? r : s->run;
        s->time_ns = t != NULL ? t : s->time_ns;
        s->rounds = rd != NULL ? rd : s->rounds;
        s->nrounds = nr != NULL ? nr : s->nrounds;
        if (x == NULL || c == NULL || r == NULL || t == NULL || rd == NULL ||
            nr == NULL)
            return -ENOMEM;
        s->cap = cap;
    }
    s->rounds[s->n] = NULL;
    s->nrounds[s->n] = 0;
    if (p->nrounds > 0) {
        s->rounds[s->n] = malloc(p->nrounds * sizeof **s->rounds);
        if (s->rounds[s->n] == NULL)
            return -ENOMEM;
        memcpy(s->rounds[s->n], p->rounds, p->nrounds * sizeof **s->rounds);
        s->nrounds[s->n] = p->nrounds;
    }
    s->x[s->n] = p->median;
    s->time_ns[s->n] = p->time_ns;
    s->commit[s->n] = strdup(p->commit);
    s->run[s->n] = strdup(p->run);
    s->n++;
    if (s->commit[s->n - 1] == NULL || s->run[s->n - 1] == NULL)
        return -ENOMEM;
    return 0;
}

static char *keep(struct gate_rows *g, const char *s)
{
    char *c = strdup(s != NULL ? s : "");

    if (c != NULL)
        g->strs[g->nstrs++] = c;
    return c;
}

/* Appends the row of key `key` on machine `machine` to g: its key, where
 * (machine, and commit when not NULL), and its verdict with cp's figures
 * (cp NULL: unchanged, or with `reason` not judged). Returns 0 or
 * -ENOMEM. */
static int gate_add(struct gate_rows *g, const struct opts *o,
                    char *const *key, const char *machine, const char *commit,
                    const struct hrd_cp *cp, int fail, const char *reason)
{
    struct hrd_gate_row *r;
    const struct hrd_limit *l;
    char where[4096];

    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        struct hrd_gate_row *v = realloc(g->v, cap * sizeof *v);
        char **strs;

        if (v == NULL)
            return -ENOMEM;
        g->v = v;
        strs = realloc(g->strs, 8 * cap * sizeof *strs);
        if (strs == NULL)
            return -ENOMEM;
        g->strs = strs;
        g->cap = cap;
    }
    r = &g->v[g->n];
    memset(r, 0, sizeof *r);
    if (commit != NULL)
        snprintf(where, sizeof where, "on %s at commit %s", machine,
                 commit[0] != '\0' ? commit : "-");
    else
        snprintf(where, sizeof where, "on %s", machine);
    r->node = keep(g, key[0]);
    r->op = keep(g, key[1]);
    r->backend = keep(g, key[2]);
    r->phase = keep(g, key[3]);
    r->range = keep(g, key[4]);
    r->metric = keep(g, key[5]);
    r->where = keep(g, where);
    r->reason = reason != NULL ? keep(g, reason) : NULL;
    if (r->node == NULL || r->op == NULL || r->backend == NULL ||
        r->phase == NULL || r->range == NULL || r->metric == NULL ||
        r->where == NULL || (reason != NULL && r->reason == NULL))
        return -ENOMEM;
    l = o->have_limits ? hrd_limits_find(&o->limits, key[4]) : NULL;
    r->fail_pct = l != NULL ? l->pct : NAN;
    r->warn_pct = NAN;
    r->before = r->after = r->change = r->p = NAN;
    r->verdict = reason != NULL ? HRD_GATE_ONLY : HRD_GATE_UNCHANGED;
    if (cp != NULL) {
        r->before = cp->before;
        r->after = cp->after;
        r->change = cp->change * 100;
        r->p = cp->p;
        r->verdict = cp->change > 0 ? HRD_GATE_SLOWER : HRD_GATE_FASTER;
        r->fail = fail;
    }
    g->n++;
    return 0;
}

/* Writes g in o's gate format under title. Returns 0 or a negative
 * errno. */
static int gate_write(const struct gate_rows *g, const struct opts *o,
                      const char *title)
{
    struct hrd_gate gate = { title, g->v, g->n, "", o->limit,
                             "not judged" };

    return o->gate == GATE_JUNIT ? hrd_gate_junit(stdout, &gate)
                                 : hrd_gate_markdown(stdout, &gate);
}

static void gate_fini(struct gate_rows *g)
{
    for (size_t i = 0; i < g->nstrs; i++)
        free(g->strs[i]);
    free(g->strs);
    free(g->v);
}

static void number(double v)
{
    char b[40];

    hrd_format_number(b, sizeof b, v);
    fputs(b, stdout);
}

/* Writes key `key` on machine `machine` as terminal text: "NODE OP
 * BACKEND PHASE RANGE METRIC on MACHINE", each escaped. */
static void key_name(FILE *f, char *const *key, const char *machine)
{
    for (int i = 0; i < 6; i++) {
        hrd_text_put(f, key[i]);
        fputc(' ', f);
    }
    fputs("on ", f);
    hrd_text_put(f, machine);
}

/* Writes series s's name as key_name does. */
static void series_name(FILE *f, const struct series *s)
{
    key_name(f, s->key, s->machine);
}

/* Writes one finding: a change point of series s at cp (detect), or run
 * `run` of commit `commit` against it (check). `before` is the commit of
 * the run before a change point (NULL: check): in JSONL its
 * commit_before, in text the bisect command line from it to `commit`
 * when they are commits of the working tree more than one apart. */
static void put_finding(const struct opts *o, const struct series *s,
                        const char *commit, const char *run,
                        const struct hrd_cp *cp, const char *note,
                        const char *before)
{
    static const char *const names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };
    const char *dir = cp->change > 0 ? "slower" : "faster";

    if (o->jsonl) {
        for (int i = 0; i < 6; i++) {
            printf("%s\"%s\":", i ? "," : "{", names[i]);
            hrd_json_string(stdout, s->key[i]);
        }
        printf(",\"machine\":");
        hrd_json_string(stdout, s->machine);
        printf(",\"commit\":");
        hrd_json_string(stdout, commit);
        printf(",\"run\":");
        hrd_json_string(stdout, run);
        printf(",\"before\":");
        number(cp->before);
        printf(",\"after\":");
        number(cp->after);
        printf(",\"change\":");
        number(cp->change);
        printf(",\"p\":");
        number(cp->p);
        printf(",\"direction\":\"%s\"", dir);
        if (before != NULL) {
            printf(",\"commit_before\":");
            hrd_json_string(stdout, before);
        }
        printf("}\n");
        return;
    }
    series_name(stdout, s);
    printf(": %s by %+.1f%% at commit ", dir, cp->change * 100);
    hrd_text_put(stdout, commit[0] != '\0' ? commit : "-");
    fputs(" (run ", stdout);
    hrd_text_put(stdout, run);
    printf("): median %.1f -> %.1f ns, p=%.2g%s\n", cp->before, cp->after,
           cp->p, note);
    if (before != NULL)
        bisect_suggest(stdout, before, commit, s->key[0], s->key[3],
                       s->key[4], s->key[5]);
}

/* Whether a slower change of series s goes beyond its --fail-above
 * limit; names it on stderr when it does. */
static int over_limit(const char *cmd, const struct opts *o,
                      const struct series *s, const struct hrd_cp *cp)
{
    const struct hrd_limit *l;

    if (!o->have_limits || cp->change <= 0)
        return 0;
    l = hrd_limits_find(&o->limits, s->key[4]);
    if (l == NULL || cp->change * 100 <= l->pct)
        return 0;
    fprintf(stderr, "hostrangectl %s: ", cmd);
    series_name(stderr, s);
    fprintf(stderr, ": %+.1f%% slower, above --fail-above %g%%\n",
            cp->change * 100, l->pct);
    return 1;
}

/* The options of detect and check; check's run file is left in argv.
 * Returns -1 with the help shown, 0, or a usage error's status. */
static int parse(const char *cmd, const char *usage, int argc, char **argv,
                 struct opts *o, int detect)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        HRD_CTL_FILTER_LONGOPTS,
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "alpha", required_argument, NULL, 'a' },
        { "window", required_argument, NULL, 'w' },
        { "min-change", required_argument, NULL, OPT_MIN_CHANGE },
        { "fail-above", required_argument, NULL, OPT_FAIL },
        { "format", required_argument, NULL, 'f' },
        { "limit", required_argument, NULL, OPT_LIMIT },
        { "min-history", required_argument, NULL, OPT_MIN_HISTORY },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    char err[512], *end;
    int c;

    while ((c = getopt_long(argc, argv, ":n:a:w:f:h", longopts, NULL)) !=
           -1) {
        if (c == OPT_DB) {
            o->db = hrd_ctl_history_dsn(cmd, optarg);
        } else if (c == OPT_MACHINE) {
            o->machine = optarg;
        } else if (c == 'a' || c == 'w') {
            if (hrd_ctl_history_cp_option(cmd, c, optarg, &o->cp) != 0)
                return HRD_CTL_HISTORY_USAGE;
        } else if (c == OPT_MIN_CHANGE && detect) {
            double pct = strtod(optarg, &end);

            if (*end != '\0' || end == optarg || !(pct >= 0)) {
                fprintf(stderr, "hostrangectl %s: bad --min-change '%s' (a "
                        "percentage, at least 0)\n", cmd, optarg);
                return HRD_CTL_HISTORY_USAGE;
            }
            o->cp.min_change = pct / 100;
        } else if (c == OPT_MIN_HISTORY && !detect) {
            long n = strtol(optarg, &end, 10);

            if (*end != '\0' || end == optarg || n < 1 || n > 1000000) {
                fprintf(stderr, "hostrangectl %s: bad --min-history '%s' "
                        "(a whole number of runs, at least 1)\n", cmd,
                        optarg);
                return HRD_CTL_HISTORY_USAGE;
            }
            o->min_history = (size_t)n;
        } else if (c == OPT_FAIL) {
            if (hrd_limits_parse(&o->limits, optarg, err, sizeof err) != 0) {
                fprintf(stderr, "hostrangectl %s: bad --fail-above '%s': "
                        "%s\n", cmd, optarg, err);
                return HRD_CTL_HISTORY_USAGE;
            }
            o->have_limits = 1;
        } else if (c == 'f') {
            o->jsonl = strcmp(optarg, "jsonl") == 0;
            o->gate = strcmp(optarg, "junit") == 0      ? GATE_JUNIT
                      : strcmp(optarg, "markdown") == 0 ? GATE_MARKDOWN
                                                        : GATE_NONE;
            if (!o->jsonl && o->gate == GATE_NONE &&
                strcmp(optarg, "text") != 0) {
                fprintf(stderr, "hostrangectl %s: bad format '%s' (text, "
                        "jsonl, junit or markdown)\n", cmd, optarg);
                return HRD_CTL_HISTORY_USAGE;
            }
        } else if (c == OPT_LIMIT) {
            long n = strtol(optarg, &end, 10);

            if (*end != '\0' || end == optarg || n < 0) {
                fprintf(stderr, "hostrangectl %s: bad --limit '%s' (a "
                        "whole number, at least 0)\n", cmd, optarg);
                return HRD_CTL_HISTORY_USAGE;
            }
            o->limit = (size_t)n;
        } else if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        } else if (c == OPT_MIN_CHANGE || c == OPT_MIN_HISTORY ||
                   !hrd_ctl_report_option(cmd, c, optarg, &o->f, NULL)) {
            hrd_ctl_die_usage(cmd, c, argv[optind - 1]);
        }
    }
    return 0;
}

/* detect: the series, each analysed when it is whole. */
struct detect {
    const struct opts *o;
    struct series s;
    int slower; /* a series' newest segment beyond its limit */
    int rc;
    struct gate_rows g;
};

static int detect_series(struct detect *d)
{
    struct hrd_cp *cp;
    int n, over, rc = 0;

    if (d->s.n == 0)
        return 0;
    cp = malloc(d->s.n * sizeof *cp);
    if (cp == NULL)
        return -ENOMEM;
    n = hrd_cp_detect(d->s.x, d->s.n, &d->o->cp, cp, d->s.n);
    for (int i = 0; i < n && d->o->gate == GATE_NONE; i++)
        put_finding(d->o, &d->s, d->s.commit[cp[i].at], d->s.run[cp[i].at],
                    &cp[i], "",
                    cp[i].at > 0 ? d->s.commit[cp[i].at - 1] : NULL);
    over = n > 0 && over_limit("history detect", d->o, &d->s, &cp[n - 1]);
    if (over)
        d->slower = 1;
    if (n >= 0 && d->o->gate != GATE_NONE)
        rc = gate_add(&d->g, d->o, d->s.key, d->s.machine,
                      n > 0 ? d->s.commit[cp[n - 1].at] : NULL,
                      n > 0 ? &cp[n - 1] : NULL, over, NULL);
    free(cp);
    return n < 0 ? n : rc != 0 ? rc : ferror(stdout) ? -EIO : 0;
}

static int detect_point(void *ctx, const struct hrd_history_point *p)
{
    struct detect *d = ctx;
    int rc;

    if (!hrd_ctl_history_match(&d->o->f, d->o->machine, p))
        return 0;
    if (!series_same(&d->s, p)) {
        if ((rc = detect_series(d)) != 0 || (rc = series_start(&d->s, p)) != 0)
            return rc;
    }
    return series_push(&d->s, p);
}

static void opts_init(struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->cp.alpha = HRD_CP_ALPHA_DEFAULT;
    o->cp.window = HRD_CP_WINDOW_DEFAULT;
    o->cp.min_change = HRD_CP_MIN_CHANGE_DEFAULT;
    o->limit = HRD_GATE_MARKDOWN_LIMIT;
}

/* The status of a failed query or of the output. */
static int failed(const char *cmd, const char *db, int rc, const char *err)
{
    char name[1024];

    if (rc == -EIO && ferror(stdout)) {
        fprintf(stderr, "hostrangectl %s: cannot write the output\n", cmd);
        return HRD_CTL_HISTORY_FAILED;
    }
    if (rc == -ENOMEM) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRD_CTL_HISTORY_FAILED;
    }
    hrd_history_name(db, name, sizeof name);
    fprintf(stderr, "hostrangectl %s: %s: %s\n", cmd, name, err);
    return HRD_CTL_HISTORY_UNREADABLE;
}

int hrd_ctl_history_detect(int argc, char **argv)
{
    struct opts o;
    struct detect d;
    struct hrd_history *h;
    char err[4096];
    int rc;

    opts_init(&o);
    rc = parse("history detect", hrd_ctl_history_usage_detect, argc, argv, &o,
               1);
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "hostrangectl history detect: unexpected argument "
                "'%s'\n", argv[optind]);
        rc = HRD_CTL_HISTORY_USAGE;
    }
    if (rc != 0) {
        hrd_limits_fini(&o.limits);
        return rc < 0 ? 0 : rc;
    }
    o.db = hrd_ctl_history_db(o.db);
    if ((rc = hrd_ctl_history_open("history detect", o.db,
                                   HRD_HISTORY_READ, &h)) != 0) {
        hrd_limits_fini(&o.limits);
        return rc;
    }
    memset(&d, 0, sizeof d);
    d.o = &o;
    rc = hrd_history_points(h, detect_point, &d, err, sizeof err);
    if (rc == 0)
        rc = detect_series(&d);
    if (rc == 0 && o.gate != GATE_NONE)
        rc = gate_write(&d.g, &o, "hostrangectl history detect");
    gate_fini(&d.g);
    hrd_history_close(h);
    series_fini(&d.s);
    hrd_limits_fini(&o.limits);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -EIO;
    if (rc != 0)
        return failed("history detect", o.db, rc, err);
    return d.slower ? HRD_CTL_HISTORY_SLOWER : 0;
}

/* check: the run's points by key, looked up by each series. */
struct check {
    const struct opts *o;
    struct hrd_ctl_hrun *r;
    const char *exclude; /* the run's id, when it is stored */
    struct series s;
    size_t *order;       /* the run's points, sorted by key */
    unsigned char *seen; /* per run point: its series was found */
    int machine_seen;    /* the history holds runs of the run's machine */
    int slower;
    size_t judged, found, by_rounds;
    size_t unjudged[4];  /* by reason (enum unjudged) */
    char few_reason[96]; /* REASON_FEW's words with --min-history's N */
    struct gate_rows g;
};

/* Why check did not judge a key, worst first. */
enum unjudged { NO_MACHINE, NO_KEY, FEW_RUNS, TOO_SHORT };

static const char *const unjudged_words[4] = {
    "no history of this machine",
    "a key the history lacks on this machine",
    NULL, /* few_reason */
    "too short a history: fewer than 2 runs in the latest segment",
};

/* Says that the run's point p was not judged, and why, in o's format. */
static int not_judged(struct check *c, const struct hrd_history_point *p,
                      enum unjudged why)
{
    static const char *const names[6] = { "node", "operator", "backend",
                                          "phase", "range", "metric" };
    char *key[6] = { (char *)p->node, (char *)p->op, (char *)p->backend,
                     (char *)p->phase, (char *)p->range, (char *)p->metric };
    const char *reason = why == FEW_RUNS ? c->few_reason
                                         : unjudged_words[why];

    c->unjudged[why]++;
    if (c->o->gate != GATE_NONE)
        return gate_add(&c->g, c->o, key, c->r->machine, NULL, NULL, 0,
                        reason);
    if (c->o->jsonl) {
        for (int i = 0; i < 6; i++) {
            printf("%s\"%s\":", i ? "," : "{", names[i]);
            hrd_json_string(stdout, key[i]);
        }
        printf(",\"machine\":");
        hrd_json_string(stdout, c->r->machine);
        printf(",\"run\":");
        hrd_json_string(stdout, c->r->id);
        printf(",\"not_judged\":");
        hrd_json_string(stdout, reason);
        puts("}");
    } else {
        key_name(stdout, key, c->r->machine);
        printf(": not judged (%s)\n", reason);
    }
    return ferror(stdout) ? -EIO : 0;
}

static int key_cmp6(const char *const *a, const struct hrd_history_point *p)
{
    const char *b[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };

    for (int i = 0; i < 6; i++) {
        int c = strcmp(a[i], b[i]);
        if (c != 0)
            return c;
    }
    return 0;
}

static struct hrd_ctl_hrun *sort_run;

static int cmp_points(const void *x, const void *y)
{
    const struct hrd_history_point *a = &sort_run->p[*(const size_t *)x];
    const char *k[6] = { a->node, a->op, a->backend, a->phase, a->range,
                         a->metric };

    return key_cmp6(k, &sort_run->p[*(const size_t *)y]);
}

/* The run's point of series s's key, or NULL. */
static const struct hrd_history_point *find_point(const struct check *c)
{
    size_t lo = 0, hi = c->r->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = key_cmp6((const char *const *)c->s.key,
                           &c->r->p[c->order[mid]]);

        if (cmp == 0)
            return &c->r->p[c->order[mid]];
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/*
 * The run-level test of check (see hostrangectl-history(1)): the run's
 * round medians p->rounds against the values of the segment of s from
 * run `from` on (each run's round medians, or its median when it has one
 * round), by the exact Mann-Whitney test of lib/stat/rounds.h, one-sided
 * (slower): half its two-sided p when the run's rounds lie above, else
 * 1 - half. Returns 1 with *out filled (and the base's number of values
 * in *nbase), 0 when either side has fewer than HRD_ROUNDS_MIN values or
 * a value that is not positive (the run not judged this way), or -ENOMEM.
 */
static int check_rounds(const struct series *s, size_t from,
                        const struct hrd_history_point *p, struct hrd_cp *out,
                        size_t *nbase)
{
    struct hrd_rounds_cmp cmp;
    double *base;
    size_t nb = 0;
    int rc;

    for (size_t i = from; i < s->n; i++)
        nb += s->nrounds[i] > 0 ? s->nrounds[i] : 1;
    if (p->nrounds < HRD_ROUNDS_MIN || nb < HRD_ROUNDS_MIN)
        return 0;
    /* The test's ratios need positive values (a self time may be 0). */
    for (size_t k = 0; k < p->nrounds; k++) {
        if (!(p->rounds[k] > 0))
            return 0;
    }
    for (size_t i = from; i < s->n; i++) {
        if (s->nrounds[i] == 0 && !(s->x[i] > 0))
            return 0;
        for (size_t k = 0; k < s->nrounds[i]; k++) {
            if (!(s->rounds[i][k] > 0))
                return 0;
        }
    }
    if ((base = malloc(nb * sizeof *base)) == NULL)
        return -ENOMEM;
    nb = 0;
    for (size_t i = from; i < s->n; i++) {
        if (s->nrounds[i] == 0)
            base[nb++] = s->x[i];
        for (size_t k = 0; k < s->nrounds[i]; k++)
            base[nb++] = s->rounds[i][k];
    }
    rc = hrd_rounds_compare(base, nb, p->rounds, p->nrounds, &cmp);
    free(base);
    if (rc != 0)
        return rc;
    out->at = 0;
    out->before = cmp.base_median;
    out->after = cmp.new_median;
    out->change = cmp.change / 100;
    out->p = cmp.u > (double)nb * (double)p->nrounds / 2 ? cmp.p / 2
                                                          : 1 - cmp.p / 2;
    *nbase = nb;
    return 1;
}

static int check_series(struct check *c)
{
    const struct hrd_history_point *p;
    struct hrd_cp *cp, res;
    size_t from = 0, nbase = 0;
    char note[96] = "";
    int n, over, by_rounds;

    if (c->s.n == 0 || (p = find_point(c)) == NULL)
        return 0;
    c->seen[p - c->r->p] = 1;
    if (c->s.n < c->o->min_history)
        return not_judged(c, p, FEW_RUNS);
    cp = malloc(c->s.n * sizeof *cp);
    if (cp == NULL)
        return -ENOMEM;
    n = hrd_cp_detect(c->s.x, c->s.n, &c->o->cp, cp, c->s.n);
    if (n > 0)
        from = cp[n - 1].at;
    free(cp);
    if (n < 0)
        return n;
    by_rounds = check_rounds(&c->s, from, p, &res, &nbase);
    if (by_rounds < 0)
        return by_rounds;
    if (by_rounds) {
        c->by_rounds++;
        snprintf(note, sizeof note, " (by rounds: %zu against %zu)",
                 p->nrounds, nbase);
    } else if (hrd_cp_check(c->s.x + from, c->s.n - from, p->median,
                            &res) != 0) {
        return not_judged(c, p, TOO_SHORT);
    }
    c->judged++;
    if (res.p > c->o->cp.alpha || res.change == 0)
        return c->o->gate != GATE_NONE
                   ? gate_add(&c->g, c->o, c->s.key, c->s.machine, NULL,
                              NULL, 0, NULL)
                   : 0;
    c->found++;
    if (c->o->gate == GATE_NONE)
        put_finding(c->o, &c->s, c->r->run.commit, c->r->id, &res, note,
                    NULL);
    over = over_limit("history check", c->o, &c->s, &res);
    if (over)
        c->slower = 1;
    if (c->o->gate != GATE_NONE &&
        (n = gate_add(&c->g, c->o, c->s.key, c->s.machine, NULL, &res, over,
                      NULL)) != 0)
        return n;
    return ferror(stdout) ? -EIO : 0;
}

static int check_point(void *ctx, const struct hrd_history_point *p)
{
    struct check *c = ctx;
    int rc;

    if (strcmp(p->machine, c->r->machine) != 0 ||
        (c->exclude != NULL && strcmp(p->run, c->exclude) == 0))
        return 0;
    c->machine_seen = 1;
    if (!hrd_ctl_history_match(&c->o->f, c->o->machine, p))
        return 0;
    if (!series_same(&c->s, p)) {
        if ((rc = check_series(c)) != 0 || (rc = series_start(&c->s, p)) != 0)
            return rc;
    }
    return series_push(&c->s, p);
}

/* The run's points that check's filter keeps and no series judged or
 * refused: each not judged, for want of history on the run's machine. */
static int check_unseen(struct check *c)
{
    int rc = 0;

    for (size_t k = 0; rc == 0 && k < c->r->n; k++) {
        const struct hrd_history_point *p = &c->r->p[c->order[k]];

        if (c->seen[c->order[k]] ||
            !hrd_ctl_history_match(&c->o->f, c->o->machine, p))
            continue;
        rc = not_judged(c, p, c->machine_seen ? NO_KEY : NO_MACHINE);
    }
    return rc;
}

/* The words of check's summary for the keys not judged: "N not judged
 * (A no history of this machine, B too short a history)". */
static void unjudged_summary(const struct check *c, char *buf, size_t len)
{
    static const char *const short_words[4] = {
        "no history of this machine", "a key the history lacks",
        "fewer runs than --min-history", "too short a history",
    };
    size_t total = 0, at;

    for (int i = 0; i < 4; i++)
        total += c->unjudged[i];
    at = (size_t)snprintf(buf, len, "%zu not judged", total);
    for (int i = 0, first = 1; i < 4 && at < len; i++) {
        if (c->unjudged[i] == 0)
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%zu %s",
                               first ? " (" : ", ", c->unjudged[i],
                               short_words[i]);
        first = 0;
    }
    if (total > 0 && at < len)
        snprintf(buf + at, len - at, ")");
}

int hrd_ctl_history_check(int argc, char **argv)
{
    struct opts o;
    struct check c;
    struct hrd_ctl_hrun r;
    struct hrd_history *h = NULL;
    char err[4096], summary[512];
    size_t refused = 0;
    int rc;

    opts_init(&o);
    rc = parse("history check", hrd_ctl_history_usage_check, argc, argv, &o,
               0);
    if (rc == 0 && optind != argc - 1) {
        fprintf(stderr, "hostrangectl history check: %s (one run file; see "
                "--help)\n", optind >= argc ? "no run file"
                                            : "more than one run file");
        rc = HRD_CTL_HISTORY_USAGE;
    }
    if (rc != 0) {
        hrd_limits_fini(&o.limits);
        return rc < 0 ? 0 : rc;
    }
    o.db = hrd_ctl_history_db(o.db);
    memset(&c, 0, sizeof c);
    rc = hrd_ctl_hrun_load("history check", argv[optind], NULL, 0, NULL,
                           &r);
    if (rc == 0)
        rc = hrd_ctl_history_open("history check", o.db, HRD_HISTORY_READ,
                                  &h);
    if (rc != 0) {
        hrd_ctl_hrun_fini(&r);
        hrd_limits_fini(&o.limits);
        return rc;
    }
    c.o = &o;
    c.r = &r;
    snprintf(c.few_reason, sizeof c.few_reason, "fewer than %zu runs of "
             "history on this machine, --min-history %zu", o.min_history,
             o.min_history);
    c.order = malloc((r.n + 1) * sizeof *c.order);
    c.seen = calloc(r.n + 1, 1);
    rc = c.order == NULL || c.seen == NULL ? -ENOMEM : 0;
    if (rc == 0) {
        for (size_t i = 0; i < r.n; i++) {
            c.order[i] = i;
            r.p[i].machine = r.machine;
        }
        sort_run = &r;
        qsort(c.order, r.n, sizeof *c.order, cmp_points);
        rc = hrd_history_has(h, r.id, err, sizeof err);
        c.exclude = rc == 1 ? r.id : NULL;
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0)
        rc = hrd_history_points(h, check_point, &c, err, sizeof err);
    if (rc == 0)
        rc = check_series(&c);
    hrd_history_close(h);
    if (rc == 0)
        rc = check_unseen(&c);
    /* With --min-history, a key of no series has too few runs too. */
    if (o.min_history > 0)
        refused = c.unjudged[FEW_RUNS] + c.unjudged[NO_KEY] +
                  c.unjudged[NO_MACHINE];
    if (rc == 0 && o.gate != GATE_NONE)
        rc = gate_write(&c.g, &o, "hostrangectl history check");
    gate_fini(&c.g);
    unjudged_summary(&c, summary, sizeof summary);
    if (rc == 0 && !o.jsonl && o.gate == GATE_NONE) {
        printf("checked %zu keys of ", c.judged);
        hrd_text_put(stdout, argv[optind]);
        fputs(" against the history of ", stdout);
        hrd_text_put(stdout, r.machine);
        printf(": %zu differ (p < %g), %s; %zu judged by their rounds\n",
               c.found, o.cp.alpha, summary, c.by_rounds);
    }
    if (rc == 0 && c.judged == 0) {
        fputs("hostrangectl history check: ", stderr);
        hrd_text_put(stderr, argv[optind]);
        fputs(": no key judged against the history of ", stderr);
        hrd_text_put(stderr, r.machine);
        fprintf(stderr, ": %s%s\n", summary,
                o.min_history > 0 ? ""
                                  : "; --min-history N makes this an error");
    }
    if (rc == 0 && refused > 0) {
        fprintf(stderr, "hostrangectl history check: %zu keys have fewer "
                "than %zu runs of history on ", refused, o.min_history);
        hrd_text_put(stderr, r.machine);
        fputs(": not judged (--min-history)\n", stderr);
    }
    series_fini(&c.s);
    free(c.order);
    free(c.seen);
    hrd_ctl_hrun_fini(&r);
    hrd_limits_fini(&o.limits);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -EIO;
    if (rc != 0)
        return failed("history check", o.db, rc, err);
    return c.slower ? HRD_CTL_HISTORY_SLOWER
           : refused > 0 ? HRD_CTL_HISTORY_FEW_RUNS
                         : 0;
}
