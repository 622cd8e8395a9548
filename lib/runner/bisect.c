/* The measuring of hostrangectl bisect: the ends, the steps, the search
 * (see bisect.h). */
#include "config.h"

#include "lib/runner/bisect.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A step's threshold: the change between the ends divided by this. A
 * third, so that a middle level halfway between the ends is beyond the
 * threshold from both. */
#define STEP_DIVISOR 3

/* The room of a line said through ops.say. */
#define SAY_MAX 512

/* Says a line through b->ops.say. */
static void say(const struct hrx_bisect *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const struct hrx_bisect *b, const char *fmt, ...)
{
    char msg[SAY_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->ops.say(b->ops.ctx, msg);
}

double hrx_bisect_seconds_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) +
           (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Makes room for `pairs` round medians a side. Returns 0 or -1 (said). */
static int rounds_room(struct hrx_bisect *b, size_t pairs)
{
    if (pairs <= b->rcap)
        return 0;
    for (int i = 0; i < 3; i++) {
        double *nv = realloc(b->rv[i], pairs * sizeof *nv);

        if (nv == NULL) {
            say(b, "out of memory");
            return -1;
        }
        b->rv[i] = nv;
    }
    b->rcap = pairs;
    return 0;
}

/*
 * A round of commit c into *v; a round of an end that fails is run once
 * more. Returns 0; 1 when c (not an end) failed; -1 when bisect must stop
 * (an end failed twice, the key cannot be chosen, a signal: *sig set).
 */
static int one_round(struct hrx_bisect *b, struct hrx_bisect_commit *c,
                     int end, double *v, int *sig)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc = b->ops.round(b->ops.ctx, c, v, sig);

        if (rc <= 0)
            return rc;
        if (!end)
            return 1;
        if (attempt == 0)
            say(b, "running the round of the %s end again",
                c == &b->c[0] ? "good" : "bad");
    }
    say(b, "a round of the %s end failed twice; stopping",
        c == &b->c[0] ? "good" : "bad");
    return -1;
}

int hrx_bisect_ends(struct hrx_bisect *b, int *sig)
{
    struct hrx_bisect_commit *g = &b->c[0], *bad = &b->c[b->n - 1];
    struct timespec t0;
    size_t pairs = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 2; i++) {
        struct hrx_bisect_commit *c = i ? bad : g;
        int rc = b->ops.prepare(b->ops.ctx, c);

        if (rc != 0) {
            if (rc > 0)
                say(b, "the %s end %.12s does not build: nothing to "
                    "compare it with", i ? "bad" : "good", c->hash);
            return -1;
        }
    }
    if (rounds_room(b, b->ends_plan.max) != 0)
        return -1;
    memset(&b->ends, 0, sizeof b->ends);
    b->ends.verdict = HRS_DECIDE_UNDECIDED;
    while (pairs < b->ends_plan.max) {
        for (int h = 0; h < 2; h++) {
            int side = (int)((pairs & 1) ^ (size_t)h);
            struct hrx_bisect_commit *c = side ? bad : g;

            if (one_round(b, c, 1, &b->rv[side ? 2 : 0][pairs], sig) != 0)
                return -1;
        }
        pairs++;
        if (hrs_decide_next_look(&b->ends_plan, pairs - 1) != pairs)
            continue;
        if (hrs_decide_key(b->rv[0], b->rv[2], pairs, b->threshold,
                           b->ops.clock_step(b->ops.ctx), &b->ends_plan,
                           &b->ends) != 0) {
            say(b, "out of memory");
            return -1;
        }
        if (b->ends.verdict != HRS_DECIDE_UNDECIDED)
            break;
    }
    b->ends_seconds = hrx_bisect_seconds_since(&t0);
    b->have_ends = 1;
    return 0;
}

/*
 * Step: measures commit c (not an end) in rounds of three with the ends
 * and sets its verdict. Returns 0, or -1 when bisect must stop (said).
 */
static int step_measure(struct hrx_bisect *b, struct hrx_bisect_commit *c,
                        int *sig)
{
    struct hrx_bisect_commit *ends[2] = { &b->c[0], &b->c[b->n - 1] };
    struct hrs_decide_plan plan = b->plan;
    double threshold = fabs(b->ends.change) / STEP_DIVISOR;
    struct timespec t0;
    size_t pairs = 0;
    int retried = 0, rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* The ends are built by their own measure, or here on the first step
     * of a bisect that goes on from a state of earlier steps. */
    for (int i = 0; i < 2; i++) {
        if ((rc = b->ops.prepare(b->ops.ctx, ends[i])) != 0) {
            if (rc > 0)
                say(b, "the %s end %.12s does not build",
                    i ? "bad" : "good", ends[i]->hash);
            return -1;
        }
    }
    c->step = ++b->steps;
    rc = b->ops.prepare(b->ops.ctx, c);
    if (rc < 0)
        return -1;
    if (rc > 0) {
        c->verdict = HRS_BISECT_SKIPPED;
        c->seconds = hrx_bisect_seconds_since(&t0);
        return 0;
    }
    if (rounds_room(b, 2 * plan.max) != 0)
        return -1;
    c->verdict = HRS_BISECT_UNCLEAR;
    while (pairs < plan.max) {
        /* good, commit, bad; then bad, commit, good. */
        for (int k = 0; k < 3; k++) {
            int side = pairs & 1 ? 2 - k : k;
            struct hrx_bisect_commit *x = side == 1 ? c : ends[side / 2];

            rc = one_round(b, x, side != 1, &b->rv[side][pairs], sig);
            if (rc < 0)
                return -1;
            if (rc > 0) {
                c->verdict = HRS_BISECT_SKIPPED;
                free(c->why);
                c->why = strdup("its command failed");
                c->pairs = pairs;
                c->seconds = hrx_bisect_seconds_since(&t0);
                return 0;
            }
        }
        pairs++;
        if (hrs_decide_next_look(&plan, pairs - 1) != pairs)
            continue;
        if (hrs_decide_key(b->rv[0], b->rv[1], pairs, threshold,
                           b->ops.clock_step(b->ops.ctx), &plan,
                           &c->vs_good) != 0 ||
            hrs_decide_key(b->rv[2], b->rv[1], pairs, threshold,
                           b->ops.clock_step(b->ops.ctx), &plan,
                           &c->vs_bad) != 0) {
            say(b, "out of memory");
            return -1;
        }
        c->verdict = hrs_bisect_classify(&c->vs_good, &c->vs_bad, b->dir);
        if (c->verdict != HRS_BISECT_UNCLEAR)
            break;
        if (pairs == plan.max && !retried) {
            retried = 1;
            plan.max *= 2;
            say(b, "step %d: %.12s unclear after %zu pairs: going on to %zu",
                c->step, c->hash, pairs, plan.max);
        }
    }
    c->pairs = pairs;
    c->seconds = hrx_bisect_seconds_since(&t0);
    return 0;
}

int hrx_bisect_search(struct hrx_bisect *b, struct hrx_bisect_answer *a,
                      int *sig)
{
    int second = 0;

    memset(a, 0, sizeof *a);
    for (;;) {
        size_t lo, hi, i = hrs_bisect_next(b->v, b->n, second, &lo, &hi);
        struct hrx_bisect_commit *c;

        if (i == b->n) {
            if (!second && hrs_bisect_has_middle(b->v, b->n)) {
                second = 1;
                continue;
            }
            break;
        }
        c = &b->c[i];
        if (step_measure(b, c, sig) != 0)
            return -1;
        b->v[i] = c->verdict;
        b->ops.step(b->ops.ctx, c);
    }
    hrs_bisect_next(b->v, b->n, 0, &a->lo, &a->hi);
    a->two = hrs_bisect_has_middle(b->v, b->n);
    if (a->two)
        hrs_bisect_next(b->v, b->n, 1, &a->lo2, &a->hi2);
    for (size_t i = 1; i + 1 < b->n; i++) {
        a->skipped += b->v[i] == HRS_BISECT_SKIPPED;
        a->unclear += b->v[i] == HRS_BISECT_UNCLEAR;
    }
    return 0;
}

void hrx_bisect_fini(struct hrx_bisect *b)
{
    for (size_t i = 0; b->c != NULL && i < b->n; i++) {
        free(b->c[i].dir);
        free(b->c[i].why);
    }
    free(b->c);
    free(b->v);
    for (int i = 0; i < 3; i++)
        free(b->rv[i]);
    memset(b, 0, sizeof *b);
}
