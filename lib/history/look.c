/* One look at a history: its series judged together, its change points
 * gathered into findings (see look.h). */
#include "config.h"

#include "lib/history/look_impl.h"
#include "lib/stat/fdr.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NODE = 0, RANGE = 4, METRIC = 5 };

struct hrh_look *hrh_look_new(const struct hrs_cp_opts *o)
{
    struct hrh_look *l = calloc(1, sizeof *l);

    if (l == NULL)
        return NULL;
    l->o = *o;
    l->o.step = 0;
    l->o.tail = 0;
    l->level = -1;
    return l;
}

static void series_free(struct look_series *s)
{
    for (int i = 0; i < 6; i++)
        free(s->key[i]);
    free(s->x);
    free(s->pos);
}

void hrh_look_free(struct hrh_look *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->nmachines; i++) {
        free(l->machine[i]);
        free(l->sample[i]);
    }
    free(l->machine);
    free(l->sample);
    free(l->nsample);
    free(l->step);
    for (size_t i = 0; i < l->ns; i++)
        series_free(&l->s[i]);
    free(l->s);
    free(l->changes);
    free(l->findings);
    free(l);
}

/* The index of machine `name`, added when new; (size_t)-1 when out of
 * memory. */
static size_t machine_of(struct hrh_look *l, const char *name)
{
    size_t i = l->nmachines;

    while (i-- > 0) {
        if (strcmp(l->machine[i], name) == 0)
            return i;
    }
    i = l->nmachines;
    if (i == l->capmachines) {
        size_t cap = hru_grow_room(l->capmachines, i + 1, sizeof *l->step, 8);

        if (cap == 0 ||
            hru_resize(&l->machine, cap, sizeof *l->machine) != 0 ||
            hru_resize(&l->sample, cap, sizeof *l->sample) != 0 ||
            hru_resize(&l->nsample, cap, sizeof *l->nsample) != 0 ||
            hru_resize(&l->step, cap, sizeof *l->step) != 0)
            return (size_t)-1;
        l->capmachines = cap;
    }
    l->sample[i] = malloc(HRH_LOOK_STEP_SAMPLE * sizeof **l->sample);
    l->machine[i] = strdup(name);
    if (l->sample[i] == NULL || l->machine[i] == NULL) {
        free(l->sample[i]);
        free(l->machine[i]);
        return (size_t)-1;
    }
    l->nsample[i] = 0;
    l->step[i] = 0;
    l->nmachines++;
    return i;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Whether the points of counts count[0..n) are medians of few samples
 * (the median count below HRH_LOOK_FEW_SAMPLES). Returns 1, 0, or
 * -ENOMEM. */
static int few_samples(const uint64_t *count, size_t n)
{
    uint64_t *c;
    int few;

    if (count == NULL || n == 0)
        return 0;
    if ((c = malloc(n * sizeof *c)) == NULL)
        return -ENOMEM;
    memcpy(c, count, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_u64);
    few = c[(n - 1) / 2] < HRH_LOOK_FEW_SAMPLES;
    free(c);
    return few;
}

int hrh_look_add(struct hrh_look *l, const char *const *key,
                         const char *machine, const double *x,
                         const uint64_t *count, const size_t *pos, size_t n)
{
    size_t w = l->o.window > 0 ? l->o.window : 1, m = machine_of(l, machine);
    struct hrs_cp_opts o = l->o;
    struct look_series *s;
    struct hrs_cp *cp;
    int k, tail;

    if (m == (size_t)-1)
        return -ENOMEM;
    for (size_t i = 0; i < n && l->nsample[m] < HRH_LOOK_STEP_SAMPLE;
         i++)
        l->sample[m][l->nsample[m]++] = x[i];
    if (n < 2 * w)
        return 0;
    l->tested++;
    if ((tail = few_samples(count, n)) < 0)
        return tail;
    o.tail = tail;
    if ((cp = malloc(n * sizeof *cp)) == NULL)
        return -ENOMEM;
    k = hrs_cp_detect(x, n, &o, cp, n);
    free(cp);
    if (k <= 0)
        return k;
    if (hru_grow(&l->s, &l->caps, l->ns + 1, sizeof *l->s, 64) != 0)
        return -ENOMEM;
    s = &l->s[l->ns];
    memset(s, 0, sizeof *s);
    s->machine = m;
    s->tail = tail;
    s->n = n;
    s->p = 1;
    s->x = malloc(n * sizeof *s->x);
    s->pos = malloc(n * sizeof *s->pos);
    for (int i = 0; i < 6; i++)
        s->key[i] = strdup(key[i]);
    if (s->x == NULL || s->pos == NULL || s->key[0] == NULL ||
        s->key[1] == NULL || s->key[2] == NULL || s->key[3] == NULL ||
        s->key[4] == NULL || s->key[5] == NULL) {
        series_free(s);
        return -ENOMEM;
    }
    if (n > 0) {
        memcpy(s->x, x, n * sizeof *x);
        memcpy(s->pos, pos, n * sizeof *pos);
    }
    l->ns++;
    return 0;
}

/* Union-find over the changes. */
static size_t root(size_t *up, size_t i)
{
    while (up[i] != i) {
        up[i] = up[up[i]];
        i = up[i];
    }
    return i;
}

static void join(size_t *up, size_t a, size_t b)
{
    a = root(up, a);
    b = root(up, b);
    if (a != b)
        up[a > b ? a : b] = a < b ? a : b;
}

/* The look being sorted, and the key field the changes are sorted by
 * (qsort has no context). */
static const struct hrh_look *sort_look;
static int sort_field;

static int cmp_by_field(const void *a, const void *b)
{
    const struct look_change *x = &sort_look->changes[*(const size_t *)a];
    const struct look_change *y = &sort_look->changes[*(const size_t *)b];
    const struct look_series *sx = &sort_look->s[x->series];
    const struct look_series *sy = &sort_look->s[y->series];
    int c;

    if (sx->machine != sy->machine)
        return sx->machine < sy->machine ? -1 : 1;
    if ((c = strcmp(sx->key[sort_field], sy->key[sort_field])) != 0)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Joins the changes that share key field `field` on one machine at runs
 * at most one apart. order is scratch of nchanges. */
static void link_by(const struct hrh_look *l, int field,
                    size_t *order, size_t *up)
{
    for (size_t i = 0; i < l->nchanges; i++)
        order[i] = i;
    sort_look = l;
    sort_field = field;
    if (l->nchanges > 1)
        qsort(order, l->nchanges, sizeof *order, cmp_by_field);
    for (size_t i = 1; i < l->nchanges; i++) {
        const struct look_change *a = &l->changes[order[i - 1]];
        const struct look_change *b = &l->changes[order[i]];
        const struct look_series *sa = &l->s[a->series];
        const struct look_series *sb = &l->s[b->series];

        if (sa->machine == sb->machine &&
            strcmp(sa->key[field], sb->key[field]) == 0 &&
            b->pos - a->pos <= 1)
            join(up, order[i - 1], order[i]);
    }
}

static int cmp_change(const void *a, const void *b)
{
    const struct look_change *x = a, *y = b;

    if (x->finding != y->finding)
        return x->finding < y->finding ? -1 : 1;
    return x->series < y->series ? -1 : x->series > y->series;
}

/* How far the change's median moved, in ns. */
static double moved(const struct look_change *c)
{
    return fabs(c->cp.after - c->cp.before);
}

/* Fills finding f from its changes (sorted by series). */
static void describe(struct hrh_look *l, struct look_finding *f)
{
    const struct look_change *c = &l->changes[f->first];
    size_t best = 0, bestn = 0, self = (size_t)-1, incl = (size_t)-1;

    f->machine = l->s[c->series].machine;
    f->p = 1;
    f->nodes = 0;
    for (size_t i = 0; i < f->n; i++) {
        const struct look_change *a = &c[i];
        const struct look_series *s = &l->s[a->series];
        size_t same = 0, j;

        f->p = fmin(f->p, a->cp.p);
        for (size_t k = 0; k < f->n; k++)
            same += c[k].pos == a->pos;
        if (same > bestn || (same == bestn && a->pos < best)) {
            best = a->pos;
            bestn = same;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(l->s[c[j].series].key[NODE], s->key[NODE]) == 0)
                break;
        }
        f->nodes += j == i;
        if (strcmp(s->key[METRIC], "self") == 0) {
            if (self == (size_t)-1 || moved(a) > moved(&c[self]))
                self = i;
        } else if (incl == (size_t)-1 || moved(a) < moved(&c[incl])) {
            incl = i;
        }
    }
    f->pos = best;
    f->start = f->first + (self != (size_t)-1 ? self : incl);
}

/* Gathers the changes into findings. Returns 0 or -ENOMEM. */
static int gather(struct hrh_look *l)
{
    size_t *up, *order, *id, nf = 0;
    int rc = -ENOMEM;

    up = malloc((l->nchanges + 1) * sizeof *up);
    order = malloc((l->nchanges + 1) * sizeof *order);
    id = malloc((l->nchanges + 1) * sizeof *id);
    if (up == NULL || order == NULL || id == NULL)
        goto out;
    for (size_t i = 0; i < l->nchanges; i++)
        up[i] = i;
    link_by(l, NODE, order, up);
    link_by(l, RANGE, order, up);
    /* Findings numbered in the order of their first change. */
    for (size_t i = 0; i < l->nchanges; i++) {
        size_t r = root(up, i);

        if (r == i)
            id[i] = nf++;
        l->changes[i].finding = id[r];
    }
    if (l->nchanges > 1)
        qsort(l->changes, l->nchanges, sizeof *l->changes, cmp_change);
    l->findings = calloc(nf + 1, sizeof *l->findings);
    if (l->findings == NULL)
        goto out;
    l->nfindings = nf;
    for (size_t i = 0; i < l->nchanges; i++) {
        struct look_finding *f = &l->findings[l->changes[i].finding];

        if (f->n == 0)
            f->first = i;
        f->n++;
    }
    for (size_t i = 0; i < nf; i++)
        describe(l, &l->findings[i]);
    rc = 0;
out:
    free(up);
    free(order);
    free(id);
    return rc;
}

/* The change points of series s at o into *cp (n of them). Returns their
 * number or -ENOMEM. */
static int changes_of(const struct look_series *s,
                      const struct hrs_cp_opts *o, struct hrs_cp *cp)
{
    return hrs_cp_detect(s->x, s->n, o, cp, s->n);
}

int hrh_look_finish(struct hrh_look *l)
{
    struct hrs_cp *cp = NULL;
    double *ps = NULL;
    size_t np = 0, maxn = 0;
    int rc = -ENOMEM;

    for (size_t m = 0; m < l->nmachines; m++)
        l->step[m] = hrs_cp_clock_step(l->sample[m], l->nsample[m]);
    for (size_t i = 0; i < l->ns; i++)
        maxn = l->s[i].n > maxn ? l->s[i].n : maxn;
    cp = malloc((maxn + 1) * sizeof *cp);
    ps = malloc((l->ns + 1) * sizeof *ps);
    if (cp == NULL || ps == NULL)
        goto out;
    /* Each candidate again, with its machine's clock step. */
    for (size_t i = 0; i < l->ns; i++) {
        struct look_series *s = &l->s[i];
        struct hrs_cp_opts o = l->o;
        int k;

        o.step = l->step[s->machine];
        o.tail = s->tail;
        if ((k = changes_of(s, &o, cp)) < 0) {
            rc = k;
            goto out;
        }
        for (int j = 0; j < k; j++)
            s->p = fmin(s->p, cp[j].p);
        if (k > 0)
            ps[np++] = s->p;
    }
    l->level = hrs_fdr_level(ps, np, l->tested, l->o.alpha);
    /* The series that pass, at the rule's level. */
    for (size_t i = 0; i < l->ns && l->level >= 0; i++) {
        struct look_series *s = &l->s[i];
        struct hrs_cp_opts o = l->o;
        int k;

        if (s->p > l->level)
            continue;
        o.step = l->step[s->machine];
        o.tail = s->tail;
        o.alpha = l->level;
        k = changes_of(s, &o, cp);
        if (k == 0) {
            /* Placed again, its first split's p may sit just above the
             * level: its own p is then the level of its series. */
            o.alpha = s->p;
            k = changes_of(s, &o, cp);
        }
        if (k < 0) {
            rc = k;
            goto out;
        }
        if (hru_grow(&l->changes, &l->capchanges,
                     l->nchanges + (size_t)k + 1, sizeof *l->changes,
                     64) != 0)
            goto out;
        for (int j = 0; j < k; j++) {
            struct look_change *v = &l->changes[l->nchanges++];

            v->series = i;
            v->cp = cp[j];
            v->pos = s->pos[cp[j].at];
            v->finding = 0;
            v->newest = j == k - 1;
        }
    }
    rc = gather(l);
out:
    free(cp);
    free(ps);
    return rc;
}

void hrh_look_rule(char *buf, size_t len, double q, size_t nseries)
{
    snprintf(buf, len, "a change moves its series by at least %d clock "
             "steps of its machine; Benjamini-Hochberg false discovery "
             "rate q=%g over %zu series", HRS_CP_MIN_STEPS, q, nseries);
}

size_t hrh_look_tested(const struct hrh_look *l)
{
    return l->tested;
}

double hrh_look_level(const struct hrh_look *l)
{
    return l->level;
}

double hrh_look_step(const struct hrh_look *l,
                             const char *machine)
{
    for (size_t i = 0; i < l->nmachines; i++) {
        if (strcmp(l->machine[i], machine) == 0)
            return l->step != NULL ? l->step[i] : 0;
    }
    return 0;
}

size_t hrh_look_nfindings(const struct hrh_look *l)
{
    return l->nfindings;
}

void hrh_look_finding(const struct hrh_look *l, size_t i,
                              struct hrh_finding *out)
{
    const struct look_finding *f = &l->findings[i];

    out->machine = l->machine[f->machine];
    out->pos = f->pos;
    out->nchanges = f->n;
    out->start = f->start - f->first;
    out->nodes = f->nodes;
    out->p = f->p;
}

void hrh_look_change(const struct hrh_look *l, size_t i,
                             size_t j, struct hrh_change *out)
{
    const struct look_change *c = &l->changes[l->findings[i].first + j];
    const struct look_series *s = &l->s[c->series];

    out->key = (const char *const *)s->key;
    out->machine = l->machine[s->machine];
    out->cp = c->cp;
    out->x = s->x;
    out->xpos = s->pos;
    out->n = s->n;
    out->pos = c->pos;
    out->newest = c->newest;
}
