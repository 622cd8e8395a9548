/* hostrangectl dump --from: the report of a run file, no daemon (ctl.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "lib/agg/observer.h"
#include "lib/run/run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct from_ctx {
    struct hrd_writer *w;
    const struct hrd_calib *cal;
    int observer;
    int correct;
    int flat; /* --by path of a file without paths: one-element paths */
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
    if (c->observer)
        hrd_observer_apply(&r, c->cal, c->correct);
    return hrd_writer_row(c->w, &r);
}

int hrd_ctl_load_run(const char *cmd, const char *path, struct hrd_agg *agg,
                     Hostrange__RunEnd **end)
{
    struct hrd_ctl_read_progress rp = { { 0, 0, 0 }, cmd, path };
    struct hrd_runload l;
    char err[8400];
    int rc;

    hrd_agg_init(agg);
    agg->max_bytes = SIZE_MAX / 2;
    hrd_runload_init_reader(&l, agg);
    hrd_ctl_progress_init(&rp.p);
    rc = hrd_run_load(&l, path, NULL, end, hrd_ctl_read_progress, &rp, err,
                      sizeof err);
    hrd_ctl_progress_end(&rp.p);
    if (rc == 0 && hrd_runload_finish(&l) != 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = -ENOMEM;
        if (end != NULL) {
            hostrange__run_end__free_unpacked(*end, NULL);
            *end = NULL;
        }
    }
    if (rc != 0) {
        fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
        rc = HRD_CTL_TOLD;
    }
    hrd_runload_fini(&l);
    return rc;
}

int hrd_ctl_rows_from(FILE *f, const struct hrd_filter *flt,
                      const struct hrd_ctl_report *r)
{
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    Hostrange__RunEnd *e = NULL;
    struct hrd_calib cal;
    struct hrd_writer w;
    struct hrd_agg agg;
    struct from_ctx ctx = { &w, NULL, 0, r->correct, 0 };
    unsigned fields = r->fields;
    int rc;

    rc = hrd_ctl_load_run("dump", r->from, &agg, &e);
    if (rc != 0)
        goto out;
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
    ctx.flat = r->by_path && agg.npkeys == 0;
    rc = hrd_agg_rows_page_by(&agg, flt, &cur, 0, r->by_path && !ctx.flat,
                              put_row, &ctx);
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
out:
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    hrd_agg_fini(&agg);
    return rc;
}
