/* The search of hostrangectl bisect (see bisect.h). */
#include "config.h"

#include "lib/stat/bisect.h"

#include <string.h>

static const char *const names[] = {
    [HRS_BISECT_UNTESTED] = "untested",
    [HRS_BISECT_GOOD] = "like good",
    [HRS_BISECT_BAD] = "like bad",
    [HRS_BISECT_MIDDLE] = "middle",
    [HRS_BISECT_UNCLEAR] = "unclear",
    [HRS_BISECT_SKIPPED] = "skipped",
};

const char *hrs_bisect_name(enum hrs_bisect_verdict v)
{
    if ((size_t)v >= sizeof names / sizeof names[0])
        return "untested";
    return names[v];
}

int hrs_bisect_parse(const char *s)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    }
    return -1;
}

enum hrs_bisect_verdict hrs_bisect_classify(const struct hrs_decide *vs_good,
                                            const struct hrs_decide *vs_bad,
                                            enum hrs_decide_verdict dir)
{
    enum hrs_decide_verdict g = vs_good->verdict, b = vs_bad->verdict;
    enum hrs_decide_verdict back = dir == HRS_DECIDE_SLOWER
                                       ? HRS_DECIDE_FASTER
                                       : HRS_DECIDE_SLOWER;

    if (g == HRS_DECIDE_SAME && b != HRS_DECIDE_SAME)
        return HRS_BISECT_GOOD;
    if (b == HRS_DECIDE_SAME && g != HRS_DECIDE_SAME)
        return HRS_BISECT_BAD;
    if (g == dir && b == back)
        return HRS_BISECT_MIDDLE;
    return HRS_BISECT_UNCLEAR;
}

/* Whether commit verdict v counts as bad, or as good, in a search. */
static int counts_bad(enum hrs_bisect_verdict v, int second)
{
    return v == HRS_BISECT_BAD || (v == HRS_BISECT_MIDDLE && !second);
}

static int counts_good(enum hrs_bisect_verdict v, int second)
{
    return v == HRS_BISECT_GOOD || (v == HRS_BISECT_MIDDLE && second);
}

size_t hrs_bisect_next(const enum hrs_bisect_verdict *v, size_t n,
                       int second, size_t *lo, size_t *hi)
{
    size_t h = n - 1, l = 0, best = n;
    double mid, gap = 0;

    for (size_t i = 1; i < n; i++) {
        if (counts_bad(v[i], second)) {
            h = i;
            break;
        }
    }
    for (size_t i = h; i-- > 0;) {
        if (counts_good(v[i], second) || i == 0) {
            l = i;
            break;
        }
    }
    *lo = l;
    *hi = h;
    mid = ((double)l + (double)h) / 2;
    for (size_t i = l + 1; i < h; i++) {
        double d = (double)i > mid ? (double)i - mid : mid - (double)i;

        if (v[i] == HRS_BISECT_UNTESTED && (best == n || d < gap)) {
            best = i;
            gap = d;
        }
    }
    return best;
}

int hrs_bisect_has_middle(const enum hrs_bisect_verdict *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == HRS_BISECT_MIDDLE)
            return 1;
    }
    return 0;
}
