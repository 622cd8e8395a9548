/*
 * The limits of hostrangectl diff --fail-above: how much slower, in %, a
 * key may get before the comparison fails, per range name. A
 * specification is either one number (the limit of every range) or a
 * comma-separated list of GLOB=PCT, where GLOB is a shell pattern
 * (fnmatch) on the range name and a plain PCT stands for *=PCT; the first
 * entry whose pattern matches a range gives its limit, and a range that no
 * pattern matches has none. Pure logic, no I/O.
 */
#ifndef HOSTRANGE_LIMITS_H
#define HOSTRANGE_LIMITS_H

#include <stddef.h>

/* The largest limit, in %. */
#define HRS_LIMIT_MAX_PCT 1e9

struct hrs_limit {
    char *glob;
    double pct;
};

struct hrs_limits {
    struct hrs_limit *v;  /* in the order given */
    size_t n;
};

/*
 * Appends the limits of spec to l (zeroed, or holding earlier ones).
 * Returns 0; -EINVAL with why in err (l unchanged); or -ENOMEM.
 */
int hrs_limits_parse(struct hrs_limits *l, const char *spec, char *err,
                     size_t errlen);

/* The limit of range name `range`, or NULL when it has none. */
const struct hrs_limit *hrs_limits_find(const struct hrs_limits *l,
                                        const char *range);

/* Frees l's limits; l is then empty. */
void hrs_limits_fini(struct hrs_limits *l);

#endif
