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

#endif
