/*
 * The search of hostrangectl bisect: which commit to measure next, and
 * what a measured commit is. Pure logic, no I/O.
 *
 * The commits are a line v[0..n): v[0] the good end, v[n-1] the bad end,
 * the others in order between them. A measured commit is compared with
 * both ends, by rounds paired with each (decide.h), at a threshold of
 * a part of the change between the ends (hostrangectl bisect: a third);
 * it is
 *   like good  when it is the same as the good end (its interval against
 *              the good end inside +-threshold) and not the same as the
 *              bad end;
 *   like bad   the other way round;
 *   middle     when it differs from both, slower than the good end and
 *              faster than the bad one (for a change that makes the bad
 *              end slower; the mirror for one that makes it faster): the
 *              change came in two steps;
 *   unclear    when no look of its rounds decides it;
 *   skipped    when it cannot be measured (its build or its command
 *              failed).
 *
 * The search assumes the key's level moves once (or twice, through a
 * middle level) along the line. The first search finds the first commit
 * that is not like good (like bad or middle): the commit right after the
 * last like good one, every commit between them skipped or unclear. When
 * a middle commit was seen, a second search finds the first commit like
 * bad after the middle level, middle commits counting as good.
 */
#ifndef HOSTRANGE_BISECT_H
#define HOSTRANGE_BISECT_H

#include <stddef.h>

#include "lib/stat/decide.h"

enum hrs_bisect_verdict {
    HRS_BISECT_UNTESTED = 0,
    HRS_BISECT_GOOD,
    HRS_BISECT_BAD,
    HRS_BISECT_MIDDLE,
    HRS_BISECT_UNCLEAR,
    HRS_BISECT_SKIPPED,
};

/* The verdict's words: "untested", "like good", "like bad", "middle",
 * "unclear", "skipped". */
const char *hrs_bisect_name(enum hrs_bisect_verdict v);

/* The verdict whose words are s (as hrs_bisect_name gives them); -1 when
 * none. */
int hrs_bisect_parse(const char *s);

/*
 * A commit's verdict from its decisions against the good end (vs_good:
 * the ends' rounds as base, the commit's as new) and against the bad end
 * (vs_bad), where the bad end is `dir` (HRS_DECIDE_SLOWER or
 * HRS_DECIDE_FASTER) than the good end. HRS_BISECT_UNCLEAR when the
 * decisions so far say none of like good, like bad and middle.
 */
enum hrs_bisect_verdict hrs_bisect_classify(const struct hrs_decide *vs_good,
                                            const struct hrs_decide *vs_bad,
                                            enum hrs_decide_verdict dir);

/*
 * Where a search stands. `second` picks the search: 0 the first (the
 * first commit not like good), 1 the second (the first like bad after a
 * middle level). Sets *lo to the last commit that counts as good before
 * *hi, the first that counts as bad (n - 1 at worst), and returns the
 * commit to measure next: the untested one between them closest to their
 * middle (the lower of two), or n when none is left, the search done
 * (*hi is then the first bad commit, and the commits between *lo and *hi
 * are all skipped or unclear: any of them may be it).
 */
size_t hrs_bisect_next(const enum hrs_bisect_verdict *v, size_t n,
                       int second, size_t *lo, size_t *hi);

/* Whether a middle commit is among v[0..n). */
int hrs_bisect_has_middle(const enum hrs_bisect_verdict *v, size_t n);

#endif
