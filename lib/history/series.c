/* A series gathered from the history's points (see series.h). */
#include "config.h"

#include "lib/history/series.h"
#include "lib/util/grow.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static void series_clear(struct hrh_series *s)
{
    for (int i = 0; i < 6; i++) {
        free(s->key[i]);
        s->key[i] = NULL;
    }
    free(s->machine);
    s->machine = NULL;
    for (size_t i = 0; i < s->n; i++) {
        free(s->commit[i]);
        free(s->run[i]);
        free(s->rounds[i]);
    }
    s->n = 0;
}

void hrh_series_fini(struct hrh_series *s)
{
    series_clear(s);
    free(s->x);
    free(s->commit);
    free(s->run);
    free(s->time_ns);
    free(s->rounds);
    free(s->nrounds);
}

int hrh_series_same(const struct hrh_series *s,
                            const struct hrh_point *p)
{
    return s->machine != NULL && s->keyid == p->key &&
           strcmp(s->machine, p->machine) == 0;
}

int hrh_series_start(struct hrh_series *s,
                             const struct hrh_point *p)
{
    const char *k[6] = { p->node, p->op, p->backend, p->phase, p->range,
                         p->metric };

    series_clear(s);
    for (int i = 0; i < 6; i++) {
        if ((s->key[i] = strdup(k[i])) == NULL)
            return -ENOMEM;
    }
    s->keyid = p->key;
    return (s->machine = strdup(p->machine)) == NULL ? -ENOMEM : 0;
}

int hrh_series_push(struct hrh_series *s,
                            const struct hrh_point *p)
{
    if (s->n == s->cap) {
        size_t cap = hru_grow_room(s->cap, s->n + 1, sizeof *s->time_ns, 64);

        if (cap == 0 || hru_resize(&s->x, cap, sizeof *s->x) != 0 ||
            hru_resize(&s->commit, cap, sizeof *s->commit) != 0 ||
            hru_resize(&s->run, cap, sizeof *s->run) != 0 ||
            hru_resize(&s->time_ns, cap, sizeof *s->time_ns) != 0 ||
            hru_resize(&s->rounds, cap, sizeof *s->rounds) != 0 ||
            hru_resize(&s->nrounds, cap, sizeof *s->nrounds) != 0)
            return -ENOMEM;
        s->cap = cap;
    }
    s->rounds[s->n] = NULL;
    s->nrounds[s->n] = 0;
    if (p->nrounds > 0) {
        s->rounds[s->n] = malloc(p->nrounds * sizeof **s->rounds);
        if (s->rounds[s->n] == NULL)
            return -ENOMEM;
        memcpy(s->rounds[s->n], p->rounds, p->nrounds * sizeof **s->rounds);
        s->nrounds[s->n] = p->nrounds;
    }
    s->x[s->n] = p->median;
    s->time_ns[s->n] = p->time_ns;
    s->commit[s->n] = strdup(p->commit);
    s->run[s->n] = strdup(p->run);
    s->n++;
    if (s->commit[s->n - 1] == NULL || s->run[s->n - 1] == NULL)
        return -ENOMEM;
    return 0;
}

static int glob(const char *pat, const char *s)
{
    return pat == NULL || fnmatch(pat, s != NULL ? s : "", 0) == 0;
}

int hrh_match(const struct hra_filter *f, const char *machine,
                      const struct hrh_point *p)
{
    if (f->phase != 0 && strcmp(hrp_phase_name(f->phase), p->phase) != 0)
        return 0;
    return glob(f->node, p->node) && glob(f->op, p->op) &&
           glob(f->backend, p->backend) && glob(f->range, p->range) &&
           glob(machine, p->machine);
}

/* hrh_series_each's walk over the points. */
struct each {
    struct hrh_series s;
    int (*keep)(void *ctx, const struct hrh_point *p);
    int (*fn)(void *ctx, const struct hrh_series *s);
    void *ctx;
};

static int each_point(void *ctx, const struct hrh_point *p)
{
    struct each *e = ctx;
    int rc;

    if (e->keep != NULL && !e->keep(e->ctx, p))
        return 0;
    if (!hrh_series_same(&e->s, p)) {
        if ((e->s.n > 0 && (rc = e->fn(e->ctx, &e->s)) != 0) ||
            (rc = hrh_series_start(&e->s, p)) != 0)
            return rc;
    }
    return hrh_series_push(&e->s, p);
}

int hrh_series_each(
    struct hrh_history *h,
    int (*keep)(void *ctx, const struct hrh_point *p),
    int (*fn)(void *ctx, const struct hrh_series *s), void *ctx,
    char *err, size_t errlen)
{
    struct each e;
    int rc;

    memset(&e, 0, sizeof e);
    e.keep = keep;
    e.fn = fn;
    e.ctx = ctx;
    rc = hrh_points(h, each_point, &e, err, errlen);
    if (rc == 0 && e.s.n > 0)
        rc = fn(ctx, &e.s);
    hrh_series_fini(&e.s);
    return rc;
}
