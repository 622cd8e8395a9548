/*
 * A run judged against the history (hostrangectl history check): each
 * key of the run against the latest segment of its series on the run's
 * machine (the segment after its newest change point), by the run's
 * rounds when both sides have enough of them (the exact Mann-Whitney test
 * of lib/stat/rounds.h, one-sided, and the decision rule of decide.h),
 * else by the run's median against the segment's values
 * (hrs_cp_check); then the keys that differ held to detect's rule over all
 * the keys judged (a change of at least HRS_CP_MIN_STEPS clock steps of
 * the machine, Benjamini-Hochberg at q = alpha: look.h) and gathered into
 * findings, keys that share a node or a range being one.
 *
 * Pure logic on what the caller read: functions return 0 (or what they
 * name), or -ENOMEM.
 */
#ifndef HOSTRANGE_HISTORY_JUDGE_H
#define HOSTRANGE_HISTORY_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/history/history.h"
#include "lib/history/series.h"
#include "lib/stat/changepoint.h"
#include "lib/stat/decide.h"
#include "lib/stat/detect.h"
#include "lib/stat/limits.h"

/* What is said of a key judged, beside its p: the change it could have
 * detected, and with rounds the decision rule's verdict. */
struct hrh_judged {
    double detectable;   /* in % (+inf: none) */
    double threshold;    /* the key's: its limit, else the threshold */
    int limited;         /* a limit names it */
    int gated;           /* a limit names it, or there is none */
    int by_rounds;
    size_t rounds[2];    /* by rounds: the segment's values, the run's */
    struct hrs_decide dec;
};

/* A key that differs at alpha, its verdict deferred to the rule. */
struct hrh_pending {
    char *key[6];
    struct hrs_cp res;
    struct hrh_judged j;
    size_t up;      /* union-find: the finding it belongs to */
    int keep;       /* passes the floor and the rule */
};

/* What hrh_judge_point says of a key. */
enum hrh_judge_outcome {
    HRH_JUDGE_FEW = 1, /* fewer runs than min_history */
    HRH_JUDGE_SHORT,   /* fewer than 2 runs in the segment */
    HRH_JUDGE_SAME,    /* judged: not different at alpha */
    HRH_JUDGE_DIFFERS, /* judged: kept for the rule (pend) */
};

struct hrh_judge {
    struct hrs_cp_opts cp;          /* alpha, window */
    size_t min_history;             /* 0: none */
    const struct hrs_limits *limits; /* NULL: none */
    double threshold;               /* in %, for keys of no limit */
    /* The run's points, and their order by key; per point, whether its
     * series was found. */
    const struct hrh_point *p;
    size_t n;
    size_t *order;
    unsigned char *seen;
    size_t judged, by_rounds;
    size_t found;                   /* keys that pass the rule */
    struct hrh_pending *pend;
    size_t npend, cappend;
    /* The machine's values, for its clock step. */
    double *sample;
    size_t nsample;
    /* hrs_detect_shift_sd by the rounds of each side (0: not yet). */
    double shift_sd[HRS_DETECT_MAX_ROUNDS + 1][HRS_DETECT_MAX_ROUNDS + 1];
};

/* Starts jg with alpha and window cp, min_history (0: none), limits (NULL:
 * none) and threshold (in %). Returns 0 or -ENOMEM. */
int hrh_judge_init(struct hrh_judge *jg,
                           const struct hrs_cp_opts *cp, size_t min_history,
                           const struct hrs_limits *limits,
                           double threshold);
void hrh_judge_fini(struct hrh_judge *jg);

/* The run's points p[0..n) (kept by the caller), indexed by key for
 * hrh_judge_find. Returns 0 or -ENOMEM. */
int hrh_judge_run(struct hrh_judge *jg,
                          const struct hrh_point *p, size_t n);

/* The run's point of series s's key, marked seen; NULL when it has
 * none. */
const struct hrh_point *
hrh_judge_find(struct hrh_judge *jg,
                       const struct hrh_series *s);

/*
 * Judges the run's point p against series s (its runs, the run left out):
 * returns an enum hrh_judge_outcome, with *res and *j filled when
 * judged (a key that differs is kept in jg->pend, its key copied), or a
 * negative errno.
 */
int hrh_judge_point(struct hrh_judge *jg,
                            const struct hrh_series *s,
                            const struct hrh_point *p,
                            struct hrs_cp *res, struct hrh_judged *j);

/* The rule over the keys judged: sets each pending key's keep, jg->found,
 * and joins the kept ones into findings. Returns 0 or -ENOMEM. */
int hrh_judge_rule(struct hrh_judge *jg);

/* The finding of kept pending key i: its first key (the finding is
 * listed there, its keys from there on). */
size_t hrh_judge_root(struct hrh_judge *jg, size_t i);

/* The finding whose root is i: its keys, its nodes, and its start (the
 * pending key whose self time moved most, else whose inclusive time moved
 * least). */
void hrh_judge_finding(struct hrh_judge *jg, size_t i,
                               size_t *keys, size_t *nodes, size_t *start);

/* Whether key j is not judged at its limit: a limit names it, the change
 * it showed is not beyond it (over 0), and the smallest change its runs
 * could show is above it. */
int hrh_judged_at_limit(const struct hrh_judged *j,
                                int over);

/* Whether key j, gated and judged by rounds, is undecided by them. */
int hrh_judged_undecided(const struct hrh_judged *j);

/* Why check did not judge a key of the run, worst first. */
enum hrh_unjudged {
    HRH_UNJUDGED_NO_MACHINE, /* the history holds no run of its machine */
    HRH_UNJUDGED_NO_KEY,     /* nor a series of its key on the machine */
    HRH_UNJUDGED_FEW_RUNS,   /* fewer runs than min_history */
    HRH_UNJUDGED_TOO_SHORT,  /* fewer than 2 runs in the latest segment */
    HRH_UNJUDGED_COUNT
};

/* The verdicts of the keys judged by rounds, by enum hrs_decide_verdict. */
#define HRH_CHECK_VERDICTS 4

/*
 * A run checked against the history (hostrangectl history check): its
 * judging, the series it reads (of the run's machine, the run itself left
 * out, kept by the filters), and its counts of the run's keys.
 */
struct hrh_check {
    struct hrh_judge jg;
    const char *machine;         /* the run's */
    const char *exclude;         /* the run's id when the history holds
                                    it, else NULL (set by the caller) */
    const struct hra_filter *f;  /* the filters */
    const char *glob;            /* the machine pattern (NULL: any) */
    int machine_seen;            /* the history holds runs of the machine */
    size_t slower;               /* keys slower beyond their limit */
    size_t unjudged[HRH_UNJUDGED_COUNT];
    size_t verdicts[HRH_CHECK_VERDICTS]; /* judged by rounds, by verdict */
    size_t not_judged_limit;     /* judged, not at their limit */
    size_t findings;             /* counted by hrh_check_next_finding */
};

/* What check says of a key it judged, beside its figures. */
struct hrh_check_said {
    int not_judged; /* not at its limit: the change it could detect is
                       above it (hrh_judged_at_limit) */
    int undecided;  /* gated and judged by rounds, and undecided by them */
    int over;       /* it differs and is slower beyond its limit */
};

/* What hrh_check_series says of a series. */
enum hrh_check_outcome {
    HRH_CHECK_LATER,    /* the run has no point of its key, or the point
                           differs: the rule settles it (hrh_judge_rule) */
    HRH_CHECK_UNJUDGED, /* not judged, why in *why (counted) */
    HRH_CHECK_SAME,     /* judged, not different (settle it:
                           hrh_check_settle) */
};

/*
 * Starts c on the run's points p[0..n) of machine `machine` (each point's
 * machine is set to it; p is kept by the caller), with alpha and window
 * cp, min_history (0: none), limits (NULL: none), threshold (in %), the
 * filters f and machine pattern glob (NULL: any). Returns 0 or -ENOMEM;
 * hrh_check_fini frees c either way.
 */
int hrh_check_init(struct hrh_check *c, const struct hrs_cp_opts *cp,
                   size_t min_history, const struct hrs_limits *limits,
                   double threshold, const struct hra_filter *f,
                   const char *glob, const char *machine,
                   struct hrh_point *p, size_t n);
void hrh_check_fini(struct hrh_check *c);

/* Whether the series check judges hold point p of the history: of the
 * run's machine (noting that the history has runs of it), not of the run
 * itself, kept by the filters. */
int hrh_check_keep(struct hrh_check *c, const struct hrh_point *p);

/*
 * Judges the run's point of series s's key (*p: it, or NULL when the run
 * has none) against s: returns an enum hrh_check_outcome, with *res and
 * *j filled when judged and *why when not, or a negative errno.
 */
int hrh_check_series(struct hrh_check *c, const struct hrh_series *s,
                     const struct hrh_point **p, struct hrs_cp *res,
                     struct hrh_judged *j, enum hrh_unjudged *why);

/* Counts key j, judged and not different (or left out by the rule), and
 * says what check says of it (over: 0). */
void hrh_check_settle(struct hrh_check *c, const struct hrh_judged *j,
                      struct hrh_check_said *said);

/* Counts pending key p that the rule kept (a key of a finding), and says
 * what check says of it: slower beyond its limit (counted in c->slower),
 * and not judged at its limit when its change is not beyond it. */
void hrh_check_pending(struct hrh_check *c, const struct hrh_pending *p,
                       struct hrh_check_said *said);

/* Whether settled key `said` gets a line of its own in text and JSONL
 * (not judged at its limit, or undecided by its rounds). */
int hrh_check_said_line(const struct hrh_check_said *said);

/*
 * The next of the run's points, from *k on in key order, that the filters
 * keep and no series judged or refused (*k moves past it): not judged,
 * why in *why (counted): no history of the machine, or none of its key.
 * NULL when none is left.
 */
const struct hrh_point *hrh_check_unseen(struct hrh_check *c, size_t *k,
                                         enum hrh_unjudged *why);

/* The keys of the run not judged, for any reason. */
size_t hrh_check_unjudged_total(const struct hrh_check *c);

/* The keys refused for want of history under min_history: those of too
 * few runs, and with min_history those of no series too (0 without). */
size_t hrh_check_refused(const struct hrh_check *c);

/* A finding of check: its number (from 1), its first pending key (its
 * root: hrh_judge_root), its keys, its nodes, and the pending key it
 * starts in (hrh_judge_finding). */
struct hrh_check_finding {
    size_t number, root, keys, nodes, start;
};

/* The finding after f (f->number 0: the first), in the order of their
 * first keys, after hrh_judge_rule: returns 1 with f set and counted in
 * c->findings, or 0 when none is left. */
int hrh_check_next_finding(struct hrh_check *c, struct hrh_check_finding *f);

/* Whether pending key i is one of the keys of finding f. */
int hrh_check_in_finding(struct hrh_check *c, const struct hrh_check_finding *f,
                         size_t i);

/* check's verdict, worst first. */
enum hrh_check_verdict {
    HRH_CHECK_PASSED,     /* none slower than allowed, none refused, each
                             judged at its limit */
    HRH_CHECK_SLOWER,     /* a key slower beyond its limit */
    HRH_CHECK_REFUSED,    /* a key with fewer runs than min_history */
    HRH_CHECK_NOT_JUDGED, /* a key not judged at its limit */
};

enum hrh_check_verdict hrh_check_verdict(const struct hrh_check *c);

#endif
