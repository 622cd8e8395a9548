/* hostrangectl dump --from: the report of a run file, no daemon (ctl_paths.h). */
#include "config.h"

#include "ctl/ctl_paths.h"
#include "ctl/ctl_report.h"
#include "lib/agg/agg_impl.h"
#include "lib/run/runheader.h"
#include "lib/run/runrounds.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct from_ctx {
    struct hrv_writer *w;
    struct hrc_calibs *cal; /* NULL: no observer fields */
    int flat; /* --by path of a file without paths: one-element paths */
    struct hrr_round_index *rounds; /* NULL: no rounds fields */
    double *medians;                    /* room for a row's round medians */
};

static int put_row(const struct hra_row *row, void *arg)
{
    struct from_ctx *c = arg;
    struct hra_row r = *row;

    if (c->flat) {
        if (r.calls == 0)
            return 0; /* recorded values: no calling context */
        r.path = &row->range;
        r.depth = 1;
        r.sum = (uint64_t)llround(r.mean * (double)r.count);
    }
    if (c->cal != NULL)
        hrc_calibs_apply(c->cal, &r);
    if (c->rounds != NULL)
        hrr_round_row(c->rounds, &r, c->medians);
    return hrv_writer_row(c->w, &r);
}

int hrc_rows_from(FILE *f, const struct hra_filter *flt,
                      const struct hrc_report *r)
{
    struct hra_cursor cur = { { 0 }, 0, 0 };
    struct hra_agg agg;
    struct hrr_whole run = { &agg, NULL };
    struct hrc_calibs cal;
    struct hrv_writer w;
    struct from_ctx ctx = { &w, NULL, 0, NULL, NULL };
    struct hrr_round_index ridx = { NULL, NULL, 0 };
    unsigned fields = r->fields;
    int rc;

    rc = hrc_read_run("dump", r->from, &run);
    if (rc != 0)
        goto out;
    if (r->correct)
        fields |= HRV_FIELDS_OBSERVER | HRV_FIELDS_CORRECTED;
    if (fields & HRV_FIELDS_OBSERVER) {
        size_t ncal;
        Hostrange__Calibration *const *cals = hrr_calibrations(run.end,
                                                                   &ncal);

        rc = hrc_calibs_init(&cal, cals, ncal, r->calibration, r->from,
                                 r->correct);
        if (rc != 0)
            goto out;
        ctx.cal = &cal;
        cal.run_paths = hrr_clock_paths(run.end);
    }
    if (fields & HRV_FIELDS_ROUNDS) {
        rc = hrr_round_index_init(&ridx, run.end);
        ctx.medians = rc != 0 ? NULL
                              : malloc(hrr_round_row_room(&ridx) *
                                       sizeof *ctx.medians);
        if (rc != 0 || ctx.medians == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        ctx.rounds = &ridx;
    }
    hrv_writer_init(&w, f, r->format, fields);
    ctx.flat = r->by_path && agg.npkeys == 0;
    rc = hra_rows_page_by(&agg, flt, &cur, 0, r->by_path && !ctx.flat,
                              put_row, &ctx);
    if (rc == 0)
        rc = hrv_writer_finish(&w);
    hrv_writer_fini(&w);
    /* The table closes with what the run lost, by node id (nodes without
     * rows too), as a daemon's dump does. */
    for (uint32_t id = 1; rc == 0 && r->format == HRV_FORMAT_TABLE &&
                          id <= agg.str.n; id++) {
        if (agg.str.lost[id - 1] != 0 &&
            (flt->node == NULL || flt->node[0] == '\0' ||
             fnmatch(flt->node, agg.str.s[id - 1], 0) == 0))
            hrv_table_lost(f, agg.str.s[id - 1], agg.str.lost[id - 1]);
    }
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = -EIO;
out:
    hrr_round_index_fini(&ridx);
    free(ctx.medians);
    if (ctx.cal != NULL)
        hrc_calibs_fini(ctx.cal);
    hrr_whole_fini(&run);
    return rc;
}
