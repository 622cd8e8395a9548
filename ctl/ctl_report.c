/*
 * The report helpers that dump, record, reset, plot and dump --from share
 * (ctl_report.h): the report and filter options, the calibrations a report
 * applies, the paged dump request, and the loading of a run file. This
 * file calls no command's file: the commands call it.
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_report.h"
#include "lib/agg/agg_impl.h"
#include "lib/agg/observer.h"
#include "lib/run/run.h"
#include "proto/protocol.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses a comma-separated list of reference, all, observer and rounds into
 * *fields. Returns 0, or -EINVAL on any other name. */
static int parse_fields(const char *v, unsigned *fields)
{
    unsigned f = 0;

    for (;;) {
        size_t n = strcspn(v, ",");

        if (n == 9 && strncmp(v, "reference", n) == 0)
            ;
        else if (n == 3 && strncmp(v, "all", n) == 0)
            f |= HRV_FIELDS_EXTENDED;
        else if (n == 8 && strncmp(v, "observer", n) == 0)
            f |= HRV_FIELDS_OBSERVER;
        else if (n == 6 && strncmp(v, "rounds", n) == 0)
            f |= HRV_FIELDS_ROUNDS;
        else
            return -EINVAL;
        if (v[n] == '\0')
            break;
        v += n + 1;
    }
    *fields = f;
    return 0;
}

int hrc_report_option(const char *cmd, int c, const char *arg,
                          struct hra_filter *f, struct hrc_report *r)
{
    if (r != NULL) {
        switch (c) {
        case 'f':
            r->view = HRC_VIEW_ROWS;
            if (strcmp(arg, "folded") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRC_VIEW_FOLDED;
                return 1;
            }
            if (strcmp(arg, "tree") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRC_VIEW_TREE;
                return 1;
            }
            if (strcmp(arg, "pprof") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRC_VIEW_PPROF;
                return 1;
            }
            if ((strcmp(cmd, "dump") == 0
                     ? hrv_format_parse_dashboard(arg, &r->format)
                     : hrv_format_parse(arg, &r->format)) != 0) {
                fprintf(stderr, "hostrangectl %s: bad format '%s' (jsonl, "
                        "csv or table%s)\n", cmd, arg,
                        strcmp(cmd, "dump") == 0
                            ? ", folded, tree, pprof, " HRV_FORMAT_NAME_BMF
                              " or " HRV_FORMAT_NAME_BENCHMARK_ACTION
                            : "");
                exit(2);
            }
            return 1;
        case 'F':
            if (parse_fields(arg, &r->fields) != 0) {
                fprintf(stderr, "hostrangectl %s: bad fields '%s' (reference, "
                        "all, observer, or a list such as all,observer)\n",
                        cmd, arg);
                exit(2);
            }
            return 1;
        case 'o':
            r->output = arg;
            return 1;
        case HRC_OPT_CORRECT:
            r->correct = 1;
            return 1;
        case HRC_OPT_CALIBRATION:
            r->calibration = arg;
            return 1;
        default:
            break;
        }
    }
    /* An empty pattern reads as no filter on the wire (and in a run
     * file's reader): it would select every key, which reset drops. */
    if (f != NULL && (c == 'n' || c == 'O' || c == 'B' || c == 'R') &&
        arg[0] == '\0') {
        fprintf(stderr, "hostrangectl %s: bad --%s '' (a shell pattern; an "
                "empty one would select every key: leave the option out)\n",
                cmd, c == 'n' ? "node" : c == 'O' ? "operator"
                                 : c == 'B' ? "backend" : "range");
        exit(2);
    }
    if (f != NULL) {
        switch (c) {
        case 'n':
            f->node = arg;
            return 1;
        case 'O':
            f->op = arg;
            return 1;
        case 'B':
            f->backend = arg;
            return 1;
        case 'R':
            f->range = arg;
            return 1;
        case 'P':
            f->phase = hrp_phase_parse(arg);
            if (f->phase == 0) {
                fprintf(stderr, "hostrangectl %s: bad phase '%s' (cold or "
                        "warm)\n", cmd, arg);
                exit(2);
            }
            return 1;
        default:
            break;
        }
    }
    return 0;
}

static void calibs_free_strs(struct hrc_calibs *cs)
{
    for (size_t i = 0; cs->strs != NULL && i < 2 * cs->n; i++)
        free(cs->strs[i]);
    free(cs->strs);
    cs->strs = NULL;
}

int hrc_calibs_init(struct hrc_calibs *cs,
                        Hostrange__Calibration *const *m, size_t n,
                        const char *want, const char *where, int correct)
{
    const char *null = correct ? " and nothing is corrected" : "";
    size_t found = 0;

    memset(cs, 0, sizeof *cs);
    cs->want = want;
    cs->where = where;
    cs->correct = correct;
    cs->cal = calloc(n + 1, sizeof *cs->cal);
    cs->strs = calloc(2 * n + 1, sizeof *cs->strs);
    if (cs->cal == NULL || cs->strs == NULL) {
        hrc_calibs_fini(cs);
        return -ENOMEM;
    }
    cs->n = n;
    for (size_t i = 0; i < n; i++) {
        hra_calib_from_message(&cs->cal[i], m[i]);
        cs->strs[2 * i] = strdup(m[i]->label);
        cs->strs[2 * i + 1] = strdup(m[i]->clock);
        if (cs->strs[2 * i] == NULL || cs->strs[2 * i + 1] == NULL) {
            hrc_calibs_fini(cs);
            return -ENOMEM;
        }
        cs->cal[i].label = cs->strs[2 * i];
        cs->cal[i].clock = cs->strs[2 * i + 1];
        found += want == NULL || strcmp(m[i]->label, want) == 0;
    }
    /* Said once here; a path without a calibration, when its rows come. */
    if (found == 0 && want != NULL)
        fprintf(stderr, "hostrangectl: warning: %s holds no calibration of "
                "label '%s': the observer fields are null%s\n", where, want,
                null);
    else if (found == 0)
        fprintf(stderr, "hostrangectl: warning: %s holds no calibration "
                "(run hostrange-bench --calibrate): the observer fields are "
                "null%s\n", where, null);
    if (found == 0)
        cs->warned = HRP_PATHS_ALL | HRC_WARNED_MIXED;
    return 0;
}

void hrc_calibs_apply(struct hrc_calibs *cs, struct hra_row *row)
{
    const struct hra_calib *c;
    unsigned paths = row->clock_paths != 0 ? row->clock_paths
                                           : cs->run_paths;

    row->clock_paths = paths;
    c = hra_calib_for(cs->cal, cs->n, cs->want, paths);
    if (c == NULL && row->calls > 0 && hrp_clock_paths_mixed(paths) &&
        !(cs->warned & HRC_WARNED_MIXED)) {
        cs->warned |= HRC_WARNED_MIXED;
        fprintf(stderr, "hostrangectl: warning: %s holds keys fed by clients "
                "of more than one clock path (fast, waiting, ordered): their "
                "observer fields are null (clock_path mixed)%s\n", cs->where,
                cs->correct ? " and they are not corrected" : "");
    } else if (c == NULL && row->calls > 0 && !hrp_clock_paths_mixed(paths) &&
               paths != 0 && !(cs->warned & paths)) {
        cs->warned |= paths;
        fprintf(stderr, "hostrangectl: warning: %s holds no calibration of "
                "the %s clock path%s%s%s (hostrange-bench --calibrate with "
                "HOSTRANGE_CLOCK=%s): the observer fields of its rows are "
                "null%s\n", cs->where, hrp_clock_path_name(paths),
                cs->want != NULL ? " of label '" : "",
                cs->want != NULL ? cs->want : "",
                cs->want != NULL ? "'" : "", hrp_clock_path_env(paths),
                cs->correct ? " and they are not corrected" : "");
    }
    hra_observer_apply(row, c, cs->correct);
}

void hrc_calibs_fini(struct hrc_calibs *cs)
{
    calibs_free_strs(cs);
    free(cs->cal);
    cs->cal = NULL;
    cs->n = 0;
}

void hrc_dump_request(Hostrange__ControlRequest *q,
                          Hostrange__DumpRequest *dq,
                          const struct hra_filter *flt)
{
    q->version = HRP_VERSION;
    q->body_case = HOSTRANGE__CONTROL_REQUEST__BODY_DUMP;
    q->dump = dq;
    dq->node_glob = (char *)(flt->node ? flt->node : "");
    dq->operator_glob = (char *)(flt->op ? flt->op : "");
    dq->backend_glob = (char *)(flt->backend ? flt->backend : "");
    dq->range_glob = (char *)(flt->range ? flt->range : "");
    dq->phase = flt->phase;
    dq->paged = 1;
}

/* The progress and message of a run read whole (hrc_load_run,
 * hrc_read_run): rc of hrr_read as ctl's. */
static int read_told(const char *cmd, int rc, const char *err)
{
    if (rc != 0) {
        fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
        rc = HRC_TOLD;
    }
    return rc;
}

int hrc_load_run(const char *cmd, const char *path, struct hra_agg *agg)
{
    struct hrc_read_progress rp = { { 0, 0, 0 }, cmd, path };
    char err[8400];
    int rc;

    hrc_progress_init(&rp.p);
    rc = hrr_read(path, agg, NULL, hrc_read_progress, &rp, err,
                      sizeof err);
    hrc_progress_end(&rp.p);
    return read_told(cmd, rc, err);
}

int hrc_read_run(const char *cmd, const char *path,
                     struct hrr_whole *r)
{
    struct hrc_read_progress rp = { { 0, 0, 0 }, cmd, path };
    char err[8400];
    int rc;

    hrc_progress_init(&rp.p);
    rc = hrr_read_whole(r, path, hrc_read_progress, &rp, err,
                            sizeof err);
    hrc_progress_end(&rp.p);
    return read_told(cmd, rc, err);
}
