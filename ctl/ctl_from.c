/* hostrangectl dump --from: the report of a run file, no daemon (ctl_paths.h). */
#include "config.h"

#include "ctl/ctl_paths.h"
#include "ctl/ctl_report.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/runheader.h"
#include "lib/run/runrounds.h"

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
    if (c->rounds != NULL)
        hrd_round_row(c->rounds, &r, c->medians);
    return hrd_writer_row(c->w, &r);
}

int hrd_ctl_rows_from(FILE *f, const struct hrd_filter *flt,
                      const struct hrd_ctl_report *r)
{
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    struct hrd_agg agg;
    struct hrd_run_whole run = { &agg, NULL };
    struct hrd_ctl_calibs cal;
    struct hrd_writer w;
    struct from_ctx ctx = { &w, NULL, 0, NULL, NULL };
    struct hrd_round_index ridx = { NULL, NULL, 0 };
    unsigned fields = r->fields;
    int rc;

    rc = hrd_ctl_read_run("dump", r->from, &run);
    if (rc != 0)
        goto out;
    if (r->correct)
        fields |= HRD_FIELDS_OBSERVER | HRD_FIELDS_CORRECTED;
    if (fields & HRD_FIELDS_OBSERVER) {
        size_t ncal;
        Hostrange__Calibration *const *cals = hrd_run_calibrations(run.end,
                                                                   &ncal);

        rc = hrd_ctl_calibs_init(&cal, cals, ncal, r->calibration, r->from,
                                 r->correct);
        if (rc != 0)
            goto out;
        ctx.cal = &cal;
        cal.run_paths = hrd_run_clock_paths(run.end);
    }
    if (fields & HRD_FIELDS_ROUNDS) {
        rc = hrd_round_index_init(&ridx, run.end);
        ctx.medians = rc != 0 ? NULL
                              : malloc(hrd_round_row_room(&ridx) *
                                       sizeof *ctx.medians);
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
    hrd_run_whole_fini(&run);
    return rc;
}
