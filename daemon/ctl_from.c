/* hostrangectl dump --from: the report of a run file, no daemon (ctl.h). */
#include "config.h"

#include "daemon/ctl.h"
#include "daemon/observer.h"
#include "daemon/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct from_ctx {
    struct hrd_writer *w;
    const struct hrd_calib *cal;
    int observer;
    int correct;
};

static int put_row(const struct hrd_row *row, void *arg)
{
    struct from_ctx *c = arg;
    struct hrd_row r = *row;

    if (c->observer)
        hrd_observer_apply(&r, c->cal, c->correct);
    return hrd_writer_row(c->w, &r);
}

int hrd_ctl_rows_from(FILE *f, const struct hrd_ctl_filter *flt,
                      const struct hrd_ctl_report *r)
{
    struct hrd_filter hf = { flt->node, flt->op, flt->backend, flt->range,
                             flt->phase };
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    Hostrange__RunEnd *e = NULL;
    struct hrd_calib cal;
    struct hrd_runload l;
    struct hrd_writer w;
    struct hrd_agg agg;
    struct from_ctx ctx = { &w, NULL, 0, r->correct };
    unsigned fields = r->fields;
    char err[8400];
    int rc;

    hrd_agg_init(&agg);
    agg.exact_cap = UINT64_MAX;
    agg.max_bytes = SIZE_MAX / 2;
    hrd_runload_init(&l, &agg);
    if (hrd_run_load(&l, r->from, NULL, &e, NULL, NULL, err,
                     sizeof err) != 0 ||
        hrd_runload_finish(&l) != 0) {
        fprintf(stderr, "hostrangectl dump: %s\n", err);
        rc = -1;
        goto out;
    }
    if (r->correct)
        fields |= HRD_FIELDS_OBSERVER | HRD_FIELDS_CORRECTED;
    if (fields & HRD_FIELDS_OBSERVER) {
        ctx.observer = 1;
        for (size_t i = 0; i < e->n_calibrations; i++) {
            const Hostrange__Calibration *c = e->calibrations[i];

            if (r->calibration != NULL && strcmp(c->label, r->calibration))
                continue;
            hrd_calib_from_message(&cal, c);
            ctx.cal = &cal;
            break;
        }
        if (ctx.cal == NULL && r->calibration != NULL)
            fprintf(stderr, "hostrangectl: warning: %s holds no calibration "
                    "of label '%s': the observer fields are null%s\n",
                    r->from, r->calibration,
                    r->correct ? " and nothing is corrected" : "");
        else if (ctx.cal == NULL)
            fprintf(stderr, "hostrangectl: warning: %s holds no calibration "
                    "(run hostrange-bench --calibrate before saving): the "
                    "observer fields are null%s\n", r->from,
                    r->correct ? " and nothing is corrected" : "");
    }
    hrd_writer_init(&w, f, r->format, fields);
    rc = hrd_agg_rows_page(&agg, &hf, &cur, 0, put_row, &ctx);
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
out:
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    hrd_runload_fini(&l);
    hrd_agg_fini(&agg);
    return rc;
}
