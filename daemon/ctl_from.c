/* hostrangectl dump --from: the report of a run file, no daemon (ctl.h). */
#include "config.h"

#include "daemon/ctl.h"
#include "daemon/observer.h"
#include "daemon/run.h"
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

int hrd_ctl_rows_from(FILE *f, const struct hrd_ctl_filter *flt,
                      const struct hrd_ctl_report *r)
{
    struct hrd_filter hf = { flt->node, flt->op, flt->backend, flt->range,
                             flt->phase };
    struct hrd_cursor cur = { { 0 }, 0, 0 };
    Hostrange__RunEnd *e = NULL;
    struct hrd_ctl_calibs cal;
    struct hrd_runload l;
    struct hrd_writer w;
    struct hrd_agg agg;
    struct from_ctx ctx = { &w, NULL, 0 };
    struct hrd_ctl_read_progress rp = { { 0, 0, 0 }, "dump", r->from };
    unsigned fields = r->fields;
    char err[8400];
    int rc;

    hrd_agg_init(&agg);
    agg.exact_cap = UINT64_MAX;
    agg.max_bytes = SIZE_MAX / 2;
    hrd_runload_init(&l, &agg);
    hrd_ctl_progress_init(&rp.p);
    rc = hrd_run_load(&l, r->from, NULL, &e, hrd_ctl_read_progress, &rp,
                      err, sizeof err);
    hrd_ctl_progress_end(&rp.p);
    if (rc != 0 || hrd_runload_finish(&l) != 0) {
        if (rc == 0)
            snprintf(err, sizeof err, "out of memory");
        fprintf(stderr, "hostrangectl dump: %s\n", err);
        rc = -1;
        goto out;
    }
    if (r->correct)
        fields |= HRD_FIELDS_OBSERVER | HRD_FIELDS_CORRECTED;
    if (fields & HRD_FIELDS_OBSERVER) {
        if (hrd_ctl_calibs_init(&cal, e->calibrations, e->n_calibrations,
                                r->calibration, r->from, r->correct) != 0) {
            fprintf(stderr, "hostrangectl dump: out of memory\n");
            rc = -1;
            goto out;
        }
        ctx.cal = &cal;
        cal.run_paths = run_paths(e);
    }
    hrd_writer_init(&w, f, r->format, fields);
    ctx.flat = r->by_path && agg.npkeys == 0;
    rc = hrd_agg_rows_page_by(&agg, &hf, &cur, 0, r->by_path && !ctx.flat,
                              put_row, &ctx);
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
out:
    if (ctx.cal != NULL)
        hrd_ctl_calibs_fini(ctx.cal);
    if (e != NULL)
        hostrange__run_end__free_unpacked(e, NULL);
    hrd_runload_fini(&l);
    hrd_agg_fini(&agg);
    return rc;
}
