/* diff --fail-above's limits per range name (see limits.h). */
#include "config.h"

#include "lib/stat/limits.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a percentage from s[0..n). Returns 0, or -1 when it is not one. */
static int parse_pct(const char *s, size_t n, double *pct)
{
    char buf[64], *end;
    double d;

    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    d = strtod(buf, &end);
    if (errno != 0 || end == buf || *end != '\0' || !(d >= 0) ||
        d > HRS_LIMIT_MAX_PCT)
        return -1;
    *pct = d;
    return 0;
}

int hrs_limits_parse(struct hrs_limits *l, const char *spec, char *err,
                     size_t errlen)
{
    size_t first = l->n, items = 1;
    const char *item = spec;
    struct hrs_limit *nv;

    for (const char *p = spec; *p; p++)
        items += *p == ',';
    nv = realloc(l->v, (l->n + items) * sizeof *nv);
    if (nv == NULL)
        return -ENOMEM;
    l->v = nv;
    for (;;) {
        size_t n = strcspn(item, ",");
        const char *eq = NULL;
        struct hrs_limit *x = &l->v[l->n];

        /* The last '=' of the entry: a pattern may hold one, a number not. */
        for (size_t i = 0; i < n; i++) {
            if (item[i] == '=')
                eq = item + i;
        }
        if (eq == item || parse_pct(eq ? eq + 1 : item,
                                    eq ? (size_t)(item + n - eq - 1) : n,
                                    &x->pct) != 0) {
            snprintf(err, errlen, "bad limit '%.*s' (PCT, or GLOB=PCT with "
                     "PCT a number from 0 to %g)", (int)n, item,
                     HRS_LIMIT_MAX_PCT);
            goto bad;
        }
        x->glob = eq ? strndup(item, (size_t)(eq - item)) : strdup("*");
        if (x->glob == NULL) {
            while (l->n > first)
                free(l->v[--l->n].glob);
            return -ENOMEM;
        }
        l->n++;
        if (item[n] == '\0')
            return 0;
        item += n + 1;
    }
bad:
    while (l->n > first)
        free(l->v[--l->n].glob);
    return -EINVAL;
}

const struct hrs_limit *hrs_limits_find(const struct hrs_limits *l,
                                        const char *range)
{
    for (size_t i = 0; i < l->n; i++) {
        if (fnmatch(l->v[i].glob, range, 0) == 0)
            return &l->v[i];
    }
    return NULL;
}

void hrs_limits_fini(struct hrs_limits *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].glob);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}
