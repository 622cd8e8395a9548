/* plot --diff's computation: each path key of a run compared with the
 * same path of a base run (see rundiff.h). */
#include "config.h"

#include "lib/run/rundiff.h"
#include "lib/agg/agg_impl.h"
#include "lib/stat/hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A key's inclusive population as a weighted sample (signif.h), bucketed
 * like a histogram when `bucketed`. The arrays are allocated. */
struct wpop {
    double *v;
    uint64_t *w;
    size_t n;
    uint64_t total;
    int hist;
};

static int wpop_of(struct hra_agg *a, const struct hra_key *k,
                   struct wpop *p)
{
    memset(p, 0, sizeof *p);
    if (k->exact) {
        size_t all = k->pairs + k->records, ni, ns;
        uint64_t *incl = malloc((all + 1) * sizeof *incl);
        uint64_t *self = malloc((k->pairs + 1) * sizeof *self);
        uint64_t *tmp = malloc((all + 1) * sizeof *tmp);

        p->v = malloc((all + 1) * sizeof *p->v);
        p->w = malloc((all + 1) * sizeof *p->w);
        if (incl == NULL || self == NULL || tmp == NULL || p->v == NULL ||
            p->w == NULL) {
            free(incl);
            free(self);
            free(tmp);
            return -ENOMEM;
        }
        hra_key_values(k, incl, &ni, self, &ns);
        hrs_sort_u64(incl, ni, tmp);
        p->n = hrs_signif_collapse(incl, ni, p->v, p->w);
        p->total = ni;
        free(incl);
        free(self);
        free(tmp);
        (void)a;
        return 0;
    }
    p->hist = 1;
    p->v = malloc((k->incl->nb + 1) * sizeof *p->v);
    p->w = malloc((k->incl->nb + 1) * sizeof *p->w);
    if (p->v == NULL || p->w == NULL)
        return -ENOMEM;
    for (uint32_t b = hrs_hist_next(k->incl, 0, &p->w[0]);
         b < HRS_HIST_BUCKETS; b = hrs_hist_next(k->incl, b + 1, &p->w[p->n])) {
        p->v[p->n++] = hrs_hist_value(b);
    }
    p->total = k->incl->n;
    return 0;
}

/* Puts an exact population's values into histogram buckets. */
static void wpop_bucket(struct wpop *p)
{
    if (p->hist)
        return;
    p->n = hrs_hist_bucket_weighted(p->v, p->w, p->n);
    p->hist = 1;
}

static void wpop_free(struct wpop *p)
{
    free(p->v);
    free(p->w);
}

int hrr_rundiff_paths(struct hra_agg *base, struct hra_agg *new,
                      hrr_rundiff_path_want_fn want,
                      hrr_rundiff_path_put_fn put, void *ctx)
{
    const char *names[HRA_MAX_DEPTH_LIMIT];

    for (uint32_t i = 0; i < new->nkeys; i++) {
        const struct hra_key *k = new->keys[i];

        for (const struct hra_key *pp = k->paths; pp != NULL; pp = pp->pnext) {
            struct hra_key tmp;
            const struct hra_key *p = hra_path_view(k, pp, &tmp);
            uint32_t depth = hra_path_names(new, p->path, names);
            const char *node = hra_str_get(new, p->node);
            const char *op = hra_str_get(new, p->op);
            const char *be = hra_str_get(new, p->backend);
            void *n = want(ctx, node, op, be, p->phase, names, depth);
            uint32_t bn, bo, bb, br, id = 0;
            struct hra_key *bk, *bp;
            struct wpop x, y;
            struct hrs_signif s;
            int rc;

            if (n == NULL || p->pairs == 0)
                continue;
            /* The same key in the base (created empty when it has none:
             * the base aggregation is this comparison's own). */
            bn = hra_str(base, node);
            bo = hra_str(base, op);
            bb = hra_str(base, be);
            br = hra_str(base, hra_str_get(new, p->range));
            if (bn == 0 || bo == 0 || bb == 0 || br == 0)
                return -ENOMEM;
            bk = hra_agg_key(base, bn, bo, bb, p->phase, br);
            for (uint32_t j = 0; j < depth && id != HRA_PATH_TOO_DEEP; j++) {
                uint32_t r = hra_str(base, names[j]);
                if (r == 0)
                    return -ENOMEM;
                id = hra_path(base, id, r);
                if (id == 0)
                    return -ENOMEM;
            }
            if (bk == NULL || id == HRA_PATH_TOO_DEEP)
                continue;
            bp = hra_path_key(base, bk, id);
            if (bp == NULL)
                return -ENOMEM;
            if (bp->pairs == 0)
                continue; /* not in the base: grey */
            memset(&y, 0, sizeof y);
            if (wpop_of(base, bp, &x) != 0 || wpop_of(new, p, &y) != 0) {
                wpop_free(&x);
                wpop_free(&y);
                return -ENOMEM;
            }
            if (x.hist || y.hist) {
                wpop_bucket(&x);
                wpop_bucket(&y);
            }
            rc = hrs_signif_compare(
                &(struct hrs_wsample){ x.v, x.w, x.n, x.total },
                &(struct hrs_wsample){ y.v, y.w, y.n, y.total }, &s);
            if (rc == 0)
                put(ctx, n, &s, hrs_signif_median(&(struct hrs_wsample){
                                    x.v, x.w, x.n, x.total }));
            wpop_free(&x);
            wpop_free(&y);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
