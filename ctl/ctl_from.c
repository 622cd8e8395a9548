/* hostrangectl dump --from: the report of a run file, no daemon (ctl.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "lib/agg/agg_impl.h"
#include "ctl/ctl_rounds.h"
#include "lib/stat/rounds.h"
#include "lib/agg/observer.h"
#include "lib/run/run.h"
#include "proto/protocol.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct from_ctx {
    struct hrd_writer *w;
    struct hrd_ctl_calibs *cal; /* NULL: no observer fields */
    int flat; /* --by path of a file without paths: one-element paths */
    struct hrd_round_index *rounds; /* NULL: no rounds fields */
    double *medians;                    /* room for a row's round medians */
};

static int put_row(const struct hrd_row *row, void *arg)
{
    struct from_ctx *c = arg;
    struct hrd_row r = *row;

    if (c->flat) {
        if (r.calls == 0)
            return 0; /* recorded values: no calling context */
        r.path = &row->range;
        r.depth = 1;
        r.sum = (uint64_t)llround(r.mean * (double)r.count);
    }
    if (c->cal != NULL)
        hrd_ctl_calibs_apply(c->cal, &r);
    if (c->rounds != NULL) {
        size_t max = c->rounds->end->rounds;
        double *tmp = c->medians + (max > 1 ? max : 1);
        size_t n = hrd_round_medians(c->rounds, r.node_id, r.op,
                                         r.backend, hrp_phase_parse(r.phase),
                                         r.range, hrp_metric_parse(r.metric),
                                         c->medians, max);

        if (n == 0) {
            /* One round: the pooled median is its median. */
            c->medians[0] = r.median;
            n = 1;
        }
        r.rounds = (uint32_t)n;
        r.round_medians = c->medians;
        memcpy(tmp, c->medians, n * sizeof *tmp);
        r.round_spread = hrd_rounds_spread(tmp, n);
    }
    return hrd_writer_row(c->w, &r);
}

/* The clock paths of a run file's clients (HRP_PATH_* bits), which stand
 * for its keys' (a run file does not keep them per key); 0 when a client's
 * is not known. */
static unsigned run_paths(const Hostrange__RunEnd *e)
{
    unsigned paths = 0;

    for (size_t i = 0; i < e->n_clients; i++) {
        unsigned p = hrp_clock_paths_parse(e->clients[i]->clock_path);

        if (p == 0)
            return 0;
        paths |= p;
    }
    return paths;
}

int hrd_ctl_rows_from(FILE *f, const struct hrd_filter *flt,
                      const struct hrd_ctl_report *r)
{
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    Hostrange__RunEnd *e = NULL;
    struct hrd_ctl_calibs cal;
    struct hrd_writer w;
    struct hrd_agg agg;
    struct from_ctx ctx = { &w, NULL, 0, NULL, NULL };
    struct hrd_round_index ridx = { NULL, NULL, 0 };
    unsigned fields = r->fields;
    int rc;

    rc = hrd_ctl_load_run("dump", r->from, &agg, &e);
    if (rc != 0)
        goto out;
    if (r->correct)
        fields |= HRD_FIELDS_OBSERVER | HRD_FIELDS_CORRECTED;
    if (fields & HRD_FIELDS_OBSERVER) {
        rc = hrd_ctl_calibs_init(&cal, e->calibrations, e->n_calibrations,
                                 r->calibration, r->from, r->correct);
        if (rc != 0)
            goto out;
        ctx.cal = &cal;
        cal.run_paths = run_paths(e);
    }
    if (fields & HRD_FIELDS_ROUNDS) {
        size_t max = e->rounds > 1 ? e->rounds : 1;

        rc = hrd_round_index_init(&ridx, e);
        ctx.medians = malloc(2 * max * sizeof *ctx.medians);
        if (rc != 0 || ctx.medians == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        ctx.rounds = &ridx;
    }
    hrd_writer_init(&w, f, r->format, fields);
    ctx.flat = r->by_path && agg.npkeys == 0;
    rc = hrd_agg_rows_page_by(&agg, flt, &cur, 0, r->by_path && !ctx.flat,
                              put_row, &ctx);
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
out:
    hrd_round_index_fini(&ridx);
    free(ctx.medians);
    if (ctx.cal != NULL)
        hrd_ctl_calibs_fini(ctx.cal);
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    hrd_agg_fini(&agg);
    return rc;
}
