/*
 * The measuring of hostrangectl bisect: the ends compared in paired
 * rounds until the bad end is decided against the good one, then the
 * steps, each a commit measured in rounds of three with the ends (good,
 * commit, bad; then bad, commit, good) until it is like one end, in the
 * middle, or unclear, chosen by lib/stat/bisect.h's search, and the
 * answer: the commits where the level changes.
 *
 * A bisect keeps one struct hrx_bisect_commit per commit of the line, the
 * good end first and the bad end last, and v[i], commit i's verdict (the
 * ends GOOD and BAD from the start). What builds a commit, runs a round
 * and says what happens is the caller's, through struct hrx_bisect_ops:
 * this file starts no process itself and prints nothing.
 */
#ifndef HOSTRANGE_RUNNER_BISECT_H
#define HOSTRANGE_RUNNER_BISECT_H

#include <stddef.h>
#include <time.h>

#include "lib/stat/bisect.h"
#include "lib/stat/decide.h"

/* A full commit hash's room (SHA-1 or SHA-256, and the NUL). */
#define HRX_BISECT_HASH_MAX 65

/* A commit's build: not yet tried, built, or failed. */
enum hrx_bisect_build {
    HRX_BISECT_BUILD_NONE = 0,
    HRX_BISECT_BUILD_OK,
    HRX_BISECT_BUILD_FAILED,
};

struct hrx_bisect_commit {
    char hash[HRX_BISECT_HASH_MAX];
    char *dir;                  /* its worktree; NULL until made */
    enum hrx_bisect_build build;
    enum hrs_bisect_verdict verdict;
    int step;                   /* the step that measured it (0: none) */
    size_t pairs;               /* of that step */
    double seconds;             /* of that step, the build included */
    struct hrs_decide vs_good, vs_bad;
    char *why;                  /* why it was skipped (owned) */
};

/* What the caller does for the measuring; ctx is passed to each. */
struct hrx_bisect_ops {
    /* Makes commit c's worktree and builds it. Returns 0 when it is
     * built, 1 when its build failed (c->why set), -1 when bisect must
     * stop (said). */
    int (*prepare)(void *ctx, struct hrx_bisect_commit *c);
    /* One round of commit c: the key's median into *v. Returns 0; 1 when
     * the round failed (said); -1 when bisect must stop (said; *sig set
     * when a signal stopped it). */
    int (*round)(void *ctx, struct hrx_bisect_commit *c, double *v,
                 int *sig);
    /* The clock step of the rounds' runs, in ns, once the first round
     * has been read (0 before). */
    double (*clock_step)(void *ctx);
    /* A step is measured (c->verdict set, and v[] too). */
    void (*step)(void *ctx, struct hrx_bisect_commit *c);
    /* A line of what happens, without the command's name or a newline. */
    void (*say)(void *ctx, const char *msg);
    void *ctx;
};

/* What one bisect holds. */
struct hrx_bisect {
    struct hrx_bisect_commit *c;
    size_t n;
    enum hrs_bisect_verdict *v;
    struct hrs_decide_plan plan, ends_plan;
    double threshold;           /* the smallest change the ends may show */
    enum hrs_decide_verdict dir;
    struct hrs_decide ends;     /* the bad end against the good end */
    double ends_seconds;
    int have_ends;
    int steps;
    double *rv[3];              /* round medians: good, commit, bad */
    size_t rcap;
    struct hrx_bisect_ops ops;
};

/* What the searches found. */
struct hrx_bisect_answer {
    size_t lo, hi;      /* the first search: last like good, first not */
    size_t lo2, hi2;    /* the second (two steps): last middle, first bad */
    int two;
    int skipped, unclear;
};

/* The seconds since t0 (CLOCK_MONOTONIC). */
double hrx_bisect_seconds_since(const struct timespec *t0);

/*
 * The ends: both built, then paired rounds (good, bad, bad, good, ...)
 * until the bad end is decided against the good one (b->ends, have_ends
 * set). Returns 0, or -1 (said; *sig set when a signal stopped it).
 */
int hrx_bisect_ends(struct hrx_bisect *b, int *sig);

/*
 * The search, the ends measured and b->dir set: steps until both
 * searches are done, each step told through ops.step, then the answer
 * into *a. Returns 0, or -1 (said; *sig set when a signal stopped it).
 */
int hrx_bisect_search(struct hrx_bisect *b, struct hrx_bisect_answer *a,
                      int *sig);

/* Frees what b holds (its commits, their worktrees' names and reasons,
 * the verdicts, the round medians); b itself is the caller's. */
void hrx_bisect_fini(struct hrx_bisect *b);

#endif
