/* Report rows: their order, filters, pages and summaries (see agg.h). */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static void key_pos(const struct hra_agg *a, const struct hra_key *k,
                    uint32_t pos[5])
{
    pos[0] = a->str.rank[k->node - 1];
    pos[1] = k->phase;
    pos[2] = !k->has_scopes;
    pos[3] = a->str.rank[k->range - 1];
    pos[4] = k->serial;
}

static int cmp_pos(const uint32_t x[5], const uint32_t y[5])
{
    for (int i = 0; i < 5; i++) {
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    }
    return 0;
}

static int cmp_keys(const void *pa, const void *pb, void *arg)
{
    const struct hra_agg *a = arg;
    uint32_t x[5], y[5];

    key_pos(a, *(struct hra_key *const *)pa, x);
    key_pos(a, *(struct hra_key *const *)pb, y);
    return cmp_pos(x, y);
}

/* Filter results per string, so each pattern meets each string once:
 * bit 2f is "checked", bit 2f + 1 "matches" for field f. */
static int field_match(const struct hra_agg *a, struct hra_match *m, int field,
                       const char *pattern, uint32_t id)
{
    uint8_t *b;

    if (pattern == NULL || pattern[0] == '\0')
        return 1;
    b = &m->bits[id];
    if (!(*b & (1u << (2 * field)))) {
        *b |= (uint8_t)(1u << (2 * field));
        if (fnmatch(pattern, hra_str_get(a, id), 0) == 0)
            *b |= (uint8_t)(1u << (2 * field + 1));
    }
    return (*b >> (2 * field + 1)) & 1u;
}

int hra_match_key(struct hra_match *m, const struct hra_agg *a,
                  const struct hra_key *k)
{
    const struct hra_filter *f = m->f;

    if (f == NULL)
        return 1;
    if (f->phase != 0 && k->phase != f->phase)
        return 0;
    return field_match(a, m, 0, f->node, k->node) &&
           field_match(a, m, 1, f->op, k->op) &&
           field_match(a, m, 2, f->backend, k->backend) &&
           field_match(a, m, 3, f->range, k->range);
}

int hra_match_init(struct hra_match *m, const struct hra_agg *a,
                   const struct hra_filter *f)
{
    m->f = f;
    m->bits = calloc(a->str.n + 1, 1);
    return m->bits == NULL ? -ENOMEM : 0;
}

void hra_match_fini(struct hra_match *m)
{
    free(m->bits);
    m->bits = NULL;
}

static void row_init(const struct hra_agg *a, const struct hra_key *k,
                     const char *metric, const struct hrs_summary *s,
                     struct hra_row *row)
{
    memset(row, 0, sizeof *row);
    row->node_id = hra_str_get(a, k->node);
    row->op = hra_str_get(a, k->op);
    row->backend = hra_str_get(a, k->backend);
    row->phase = hrp_phase_name(k->phase);
    row->range = hra_str_get(a, k->range);
    row->metric = metric;
    row->count = s->count;
    row->mean = s->mean;
    row->median = s->median;
    row->min = s->min;
    row->max = s->max;
    row->p10 = s->p10;
    row->p90 = s->p90;
    row->p99 = s->p99;
    row->stddev = s->stddev;
    row->exact = s->exact;
    row->lost = a->str.lost[k->node - 1];
    row->calls = k->pairs;
    HRA_KEY_ROW_COUNTERS_COPY(row, k);
    row->clock_paths = k->clock_paths;
}

/* The exact sums of a key's values (inclusive, self), saturated. Right
 * after hra_key_summaries of an exact key, the scratch holds its values
 * (agg.c: inclusive first, then self). */
static void key_sums(const struct hra_agg *a, const struct hra_key *k,
                     uint64_t *si, uint64_t *ss)
{
    unsigned __int128 x = 0, y = 0;

    if (k->exact) {
        size_t all = k->pairs + k->records;
        for (size_t i = 0; i < all; i++)
            x += a->scratch[i];
        for (size_t i = 0; i < k->pairs; i++)
            y += a->scratch[all + i];
    } else {
        x = k->incl->sum;
        y = k->self->sum;
    }
    *si = x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
    *ss = y > UINT64_MAX ? UINT64_MAX : (uint64_t)y;
}

/* Emits the rows of the path keys of k. Returns 0, the callback's value
 * or -ENOMEM. */
static int emit_paths(struct hra_agg *a, const struct hra_key *k,
                      hra_row_fn fn, void *ctx)
{
    const char *names[HRA_MAX_DEPTH_LIMIT];
    struct hrs_summary si, ss;
    struct hra_row row;
    uint64_t sumi, sums;
    uint32_t depth;
    int rc = 0;

    for (const struct hra_key *pp = k->paths; pp != NULL && rc == 0;
         pp = pp->pnext) {
        struct hra_key tmp;
        const struct hra_key *p = hra_path_view(k, pp, &tmp);

        if (hra_key_summaries(a, p, &si, &ss) != 0)
            return -ENOMEM;
        key_sums(a, p, &sumi, &sums);
        depth = hra_path_names(a, p->path, names);
        row_init(a, p, hrp_metric_name(HRP_METRIC_INCLUSIVE), &si, &row);
        row.path = names;
        row.depth = depth;
        row.sum = sumi;
        /* A path key's clients are its range key's. */
        row.clock_paths = k->clock_paths;
        rc = fn(&row, ctx);
        if (rc == 0) {
            row_init(a, p, hrp_metric_name(HRP_METRIC_SELF), &ss, &row);
            row.clock_paths = k->clock_paths;
            row.path = names;
            row.depth = depth;
            row.sum = sums;
            rc = fn(&row, ctx);
        }
    }
    return rc;
}

/* Emits the rows of one key. Returns 0, the callback's value or -ENOMEM. */
static int emit_key(struct hra_agg *a, const struct hra_key *k,
                    hra_row_fn fn, void *ctx)
{
    struct hrs_summary si, ss;
    struct hra_row row;
    int rc;

    if (hra_key_summaries(a, k, &si, &ss) != 0)
        return -ENOMEM;
    row_init(a, k, hrp_metric_name(HRP_METRIC_INCLUSIVE), &si, &row);
    rc = fn(&row, ctx);
    if (rc == 0 && k->has_scopes) {
        row_init(a, k, hrp_metric_name(HRP_METRIC_SELF), &ss, &row);
        rc = fn(&row, ctx);
    }
    return rc;
}

int hra_rows_page(struct hra_agg *a, const struct hra_filter *f,
                      struct hra_cursor *cur, uint64_t budget, hra_row_fn fn,
                      void *ctx)
{
    return hra_rows_page_by(a, f, cur, budget, 0, fn, ctx);
}

int hra_rows_page_by(struct hra_agg *a, const struct hra_filter *f,
                         struct hra_cursor *cur, uint64_t budget,
                         int by_path, hra_row_fn fn, void *ctx)
{
    struct hra_key **order;
    struct hra_match m;
    uint64_t work = 0;
    uint32_t n = 0, i;
    int rc = 0;

    if (cur->done)
        return 0;
    order = malloc((a->nkeys + 1) * sizeof *order);
    if (order == NULL || hra_match_init(&m, a, f) != 0) {
        free(order);
        return -ENOMEM;
    }
    for (i = 0; i < a->nkeys; i++) {
        struct hra_key *k = a->keys[i];
        uint32_t pos[5];

        key_pos(a, k, pos);
        if (cur->started && cmp_pos(pos, cur->pos) <= 0)
            continue;
        if (by_path && k->paths == NULL)
            continue;
        if (hra_match_key(&m, a, k))
            order[n++] = k;
    }
    hra_match_fini(&m);
    qsort_r(order, n, sizeof *order, cmp_keys, a);
    for (i = 0; i < n && rc == 0; i++) {
        if (budget != 0 && i > 0 && work >= budget)
            break;
        rc = by_path ? emit_paths(a, order[i], fn, ctx)
                     : emit_key(a, order[i], fn, ctx);
        /* A key costs its values, and a row's worth of work besides. */
        work += 2 * order[i]->pairs + order[i]->records + 64;
        key_pos(a, order[i], cur->pos);
        cur->started = 1;
    }
    if (rc == 0 && i == n)
        cur->done = 1;
    free(order);
    return rc;
}

int hra_rows(struct hra_agg *a, const char *node_glob, hra_row_fn fn,
                 void *ctx)
{
    struct hra_filter f = { node_glob, NULL, NULL, NULL, 0 };
    struct hra_cursor cur = { { 0 }, 0, 0 };

    return hra_rows_page(a, &f, &cur, 0, fn, ctx);
}

int hra_row_from_message(struct hra_row *row, const struct Hostrange__Row *m)
{
    const char *phase = hrp_phase_name(m->phase);

    *row = (struct hra_row){
        .node_id = m->node_id,
        .op = m->operator_,
        .backend = m->backend,
        .phase = phase != NULL ? phase : "?",
        .range = m->range,
        .metric = hrp_metric_name(m->metric),
        .count = m->count,
        .mean = m->mean,
        .median = m->median,
        .min = m->min,
        .max = m->max,
        .p90 = m->p90,
        .p99 = m->p99,
        .stddev = m->stddev,
        .exact = m->exact,
        .lost = m->lost,
        .calls = m->calls,
        .path = (const char *const *)m->path,
        .depth = (uint32_t)m->n_path,
        .sum = m->sum,
        .clock_paths = hrp_clock_paths_parse(m->clock_path),
    };
    HRA_KEY_ROW_COUNTERS_COPY(row, m);
    return phase != NULL ? 0 : -EINVAL;
}
