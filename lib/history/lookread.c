/* Every series of a history read into one look (see lookread.h). */
#include "config.h"

#include "lib/history/lookread.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int add_run(void *ctx, const struct hrh_runinfo *r)
{
    struct hrh_lookread *c = ctx;
    size_t pos = 0;

    if (hru_grow(&c->runs, &c->caprun, c->nruns + 1, sizeof *c->runs, 64) != 0)
        return -ENOMEM;
    for (size_t i = 0; i < c->nruns; i++)
        pos += strcmp(c->runs[i].machine, r->machine) == 0;
    c->runs[c->nruns].id = strdup(r->id);
    c->runs[c->nruns].commit = strdup(r->commit);
    c->runs[c->nruns].machine = strdup(r->machine);
    c->runs[c->nruns].pos = pos;
    c->nruns++;
    if (c->runs[c->nruns - 1].id == NULL ||
        c->runs[c->nruns - 1].commit == NULL ||
        c->runs[c->nruns - 1].machine == NULL)
        return -ENOMEM;
    return 0;
}

static int cmp_run_id(const void *a, const void *b)
{
    const struct hrh_lookrun *x = a, *y = b;

    return strcmp(x->id, y->id);
}

static const struct hrh_lookrun *
find_run(const struct hrh_lookread *c, const char *id)
{
    struct hrh_lookrun k = { (char *)id, NULL, NULL, 0 };

    return bsearch(&k, c->runs, c->nruns, sizeof k, cmp_run_id);
}

const struct hrh_lookrun *
hrh_lookread_run_at(const struct hrh_lookread *c,
                            const char *machine, size_t pos)
{
    for (size_t i = 0; i < c->nruns; i++) {
        if (c->runs[i].pos == pos && strcmp(c->runs[i].machine, machine) == 0)
            return &c->runs[i];
    }
    return NULL;
}

static void series_clear(struct hrh_lookread *c)
{
    for (int i = 0; i < 6; i++) {
        free(c->k[i]);
        c->k[i] = NULL;
    }
    free(c->machine);
    c->machine = NULL;
    c->n = 0;
}

static int flush_series(struct hrh_lookread *c)
{
    if (c->n == 0)
        return 0;
    c->series++;
    return hrh_look_add(c->l, (const char *const *)c->k, c->machine,
                                c->x, c->count, c->pos, c->n);
}

static int look_point(void *ctx, const struct hrh_point *p)
{
    struct hrh_lookread *c = ctx;
    const struct hrh_lookrun *r;
    int rc;

    if (c->keep != NULL && !c->keep(c->ctx, p))
        return 0;
    if (c->machine == NULL || c->key != p->key ||
        strcmp(c->machine, p->machine) != 0) {
        const char *k[6] = { p->node, p->op, p->backend, p->phase,
                             p->range, p->metric };

        if ((rc = flush_series(c)) != 0)
            return rc;
        series_clear(c);
        c->key = p->key;
        if ((c->machine = strdup(p->machine)) == NULL)
            return -ENOMEM;
        for (int i = 0; i < 6; i++) {
            if ((c->k[i] = strdup(k[i])) == NULL)
                return -ENOMEM;
        }
    }
    if (c->n == c->cap) {
        size_t cap = hru_grow_room(c->cap, c->n + 1, sizeof *c->x, 64);

        if (cap == 0 || hru_resize(&c->x, cap, sizeof *c->x) != 0 ||
            hru_resize(&c->count, cap, sizeof *c->count) != 0 ||
            hru_resize(&c->pos, cap, sizeof *c->pos) != 0)
            return -ENOMEM;
        c->cap = cap;
    }
    r = find_run(c, p->run);
    c->x[c->n] = p->median;
    c->count[c->n] = p->count;
    c->pos[c->n] = r != NULL ? r->pos : c->n;
    c->n++;
    return 0;
}

int hrh_lookread(struct hrh_lookread *r,
                         struct hrh_look *l, struct hrh_history *h,
                         int (*keep)(void *ctx,
                                     const struct hrh_point *p),
                         void *ctx, char *err, size_t errlen)
{
    int rc;

    memset(r, 0, sizeof *r);
    r->l = l;
    r->keep = keep;
    r->ctx = ctx;
    rc = hrh_runs(h, add_run, r, err, errlen);
    if (rc == 0) {
        /* Sorted by id for the points' look-ups; run_at scans. */
        if (r->nruns > 1)
            qsort(r->runs, r->nruns, sizeof *r->runs, cmp_run_id);
        rc = hrh_points(h, look_point, r, err, errlen);
    }
    if (rc == 0)
        rc = flush_series(r);
    if (rc == 0)
        rc = hrh_look_finish(l);
    return rc;
}

void hrh_lookread_fini(struct hrh_lookread *r)
{
    series_clear(r);
    for (size_t i = 0; i < r->nruns; i++) {
        free(r->runs[i].id);
        free(r->runs[i].commit);
        free(r->runs[i].machine);
    }
    free(r->runs);
    free(r->x);
    free(r->count);
    free(r->pos);
    memset(r, 0, sizeof *r);
}
