/* hostrangectl dump: the paged dump of the daemon's report (see ctl_report.h);
 * dump --from is ctl_from.c, the calling-context views ctl_paths.c. */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_paths.h"
#include "ctl/ctl_report.h"
#include "ctl/ctl_exit.h"
#include "lib/util/atomic.h"
#include "lib/view/flame.h"
#include "lib/agg/observer.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes the rows of one page through the writer, with the observer fields
 * from ch when not NULL. Returns 0 or -errno. */
static int write_rows(struct hrv_writer *w, const Hostrange__DumpReply *d,
                      struct hrc_calibs *ch)
{
    int rc = 0;

    for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
        struct hra_row row;

        /* A phase this version does not know is written as "?". */
        (void)hra_row_from_message(&row, d->rows[i]);
        if (ch != NULL)
            hrc_calibs_apply(ch, &row);
        /* A daemon's run is one round. */
        row.rounds = 1;
        row.round_medians = &row.median;
        rc = hrv_writer_row(w, &row);
    }
    return rc;
}

/* What each page of a dump does: its rows written through w, with the
 * calibrations the first page brings. */
struct dump_pages {
    struct hrv_writer *w;
    struct hrc_calibs calibs, *ch;
    Hostrange__DumpRequest *dq;
    const struct hrc_report *r;
    char where[PATH_MAX + 32]; /* the calibrations' source, which they keep */
    FILE *losses;              /* the table's closing lines, or NULL */
};

static int dump_page(const Hostrange__DumpReply *d, void *ctx)
{
    struct dump_pages *dp = ctx;

    if (dp->dq->calibrations) {
        int rc;

        /* The first page brings the calibrations. */
        snprintf(dp->where, sizeof dp->where, "hostranged at %s",
                 hrc_dir);
        dp->dq->calibrations = 0;
        rc = hrc_calibs_init(&dp->calibs, d->calibrations,
                                 d->n_calibrations, dp->r->calibration,
                                 dp->where, dp->r->correct);
        if (rc != 0)
            return rc;
        dp->ch = &dp->calibs;
    }
    /* The last page: the table closes with what was lost, by node id
     * (nodes without rows too), and what the memory budget refused. */
    if (dp->losses != NULL) {
        for (size_t i = 0; i < d->n_lost; i++)
            hrv_table_lost(dp->losses, d->lost[i]->node_id,
                           d->lost[i]->lost);
        if (d->refused_memory_events != 0)
            fprintf(dp->losses, "memory budget: %llu events refused "
                    "(hostranged --max-memory), counted in lost\n",
                    (unsigned long long)d->refused_memory_events);
    }
    return write_rows(dp->w, d, dp->ch);
}

/*
 * Asks for every page and writes it to f. Returns 0, HRC_TOLD after
 * printing the daemon's failure, or a negative errno of writing.
 */
static int fetch_all(FILE *f, const struct hra_filter *flt,
                     const struct hrc_report *r)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    struct hrv_writer w;
    struct dump_pages dp;
    unsigned fields = r->fields;
    char *losses = NULL;
    size_t losses_len = 0;
    int rc;

    if (r->view != HRC_VIEW_ROWS)
        return hrc_paths_view(f, flt, r);
    if (r->from != NULL)
        return hrc_rows_from(f, flt, r);
    hrc_dump_request(&q, &dq, flt);
    dq.by_path = r->by_path != 0;
    if (r->correct)
        fields |= HRV_FIELDS_OBSERVER | HRV_FIELDS_CORRECTED;
    if (fields & HRV_FIELDS_OBSERVER)
        dq.calibrations = 1;
    memset(&dp, 0, sizeof dp);
    dp.w = &w;
    dp.dq = &dq;
    dp.r = r;
    if (r->format == HRV_FORMAT_TABLE &&
        (dp.losses = open_memstream(&losses, &losses_len)) == NULL)
        return -errno;
    hrv_writer_init(&w, f, r->format, fields);
    rc = hrc_dump_pages("dump", &q, &dq, dump_page, &dp);
    if (rc == 0)
        rc = hrv_writer_finish(&w);
    hrv_writer_fini(&w);
    if (dp.losses != NULL) {
        if (fclose(dp.losses) != 0 && rc == 0)
            rc = -ENOMEM;
        if (rc == 0 && losses_len != 0 &&
            fwrite(losses, 1, losses_len, f) != losses_len)
            rc = -errno;
        free(losses);
    }
    if (dp.ch != NULL)
        hrc_calibs_fini(dp.ch);
    return rc;
}

/* Tells why writing `what` failed when rc is a negative errno (not when
 * it is HRC_TOLD, told already). Returns HRC_TOLD. */
static int write_error(const char *what, int rc)
{
    if (rc < 0)
        fprintf(stderr, "hostrangectl: cannot write %s: %s\n", what,
                strerror(-rc));
    return HRC_TOLD;
}
int hrc_dump(const struct hra_filter *flt,
                 const struct hrc_report *r)
{
    const char *output = r->output;
    struct hru_atomic file;
    int rc;

    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;
    if (output == NULL) {
        rc = fetch_all(stdout, flt, r);
        if (rc == 0 && fflush(stdout) != 0)
            rc = -errno;
        return rc == 0 ? 0 : write_error("the report", rc);
    }
    rc = hru_atomic_open(&file, output, 1);
    if (rc != 0)
        return write_error(output, rc);
    rc = fetch_all(file.f, flt, r);
    if (rc == 0)
        rc = hru_atomic_commit(&file);
    else
        hru_atomic_abort(&file);
    if (rc != 0)
        return write_error(output, rc);
    return 0;
}

static const char usage_dump[] =
    "Usage: hostrangectl dump [--format=FORMAT] [--fields=FIELDS]\n"
    "                         [--correct-observer] [--calibration=LABEL]\n"
    "                         [FILTER]... [-o FILE] [--from=RUN]\n"
    "                         [--by=path] [--value=VALUE]\n"
    "Print the daemon's report, one row per key and metric, in report order\n"
    "(nodes as first seen, cold before warm, ranges as first entered,\n"
    "inclusive before self, recorded values last). The daemon sends it in\n"
    "pages, so a large report does not hold up the samples arriving.\n"
    "\n"
    "  -f, --format=FORMAT  jsonl (default: one JSON object per row, the\n"
    "                       reference schema), csv, or table (aligned,\n"
    "                       durations in microseconds, grouped by node and\n"
    "                       phase); or a calling-context view: folded\n"
    "                       (folded stacks for flamegraph.pl, inferno and\n"
    "                       speedscope: `NODE;PHASE;a;b;c VALUE` per path,\n"
    "                       names escaped as %3B for ;, %20 for a space,\n"
    "                       %25 for %, %XX for control bytes) or tree (per\n"
    "                       node and phase, the calling-context tree with\n"
    "                       calls, inclusive and self medians and each\n"
    "                       range's share of its parent's inclusive median,\n"
    "                       100 columns wide); or for a benchmark\n"
    "                       dashboard: bmf (Bencher Metric Format: per\n"
    "                       key, the median with min and max as lower and\n"
    "                       upper values, in ns) or benchmark-action\n"
    "                       (github-action-benchmark's customSmallerIsBetter\n"
    "                       list: name, unit, value, extra)\n"
    "      --by=KEY         range (default: one row per range name, merged\n"
    "                       over calling contexts) or path (one row per\n"
    "                       calling context; jsonl adds a `path` field\n"
    "                       a;b;c: outermost range first, ; and % in names\n"
    "                       as %3B and %25)\n"
    "      --value=VALUE    the value of folded stacks: total (default: the\n"
    "                       total self time in ns), median (the self median,\n"
    "                       in ns) or count (calls)\n"
    "      --fields=FIELDS  reference (default: the ten reference fields),\n"
    "                       all (adds min, max, p90, p99, stddev in ns;\n"
    "                       exact, false when the daemon keeps the key in a\n"
    "                       histogram and quantiles are within 0.1%; lost,\n"
    "                       the events clients lost under the node),\n"
    "                       observer, or all,observer. observer adds, from\n"
    "                       the daemon's calibration (hostrange-bench\n"
    "                       --calibrate): children (direct child ranges per\n"
    "                       call), descendants (all descendant ranges per\n"
    "                       call), observer_ns (descendants x the cost of\n"
    "                       one child scope to its parent on an inclusive\n"
    "                       row, children x the self time one leaves in its\n"
    "                       parent on a self row), observer_share\n"
    "                       (observer_ns / median), unstable (share of "
    HRC_STR(HRA_OBSERVER_UNSTABLE_PCT) "%\n"
    "                       or more; on the fast clock path, observer_ns and\n"
    "                       the uncertainty of its plain reads "
    HRC_STR(HRA_OBSERVER_UNSTABLE_FAST_PCT) "% or more),\n"
    "                       resolution_limited (a median under "
    HRC_STR(HRA_RESOLUTION_STEPS) " steps of\n"
    "                       the clock) and clock_path (fast, waiting,\n"
    "                       ordered, mixed or unknown: the clock paths of\n"
    "                       the clients that fed the key; waiting is the fast\n"
    "                       path with reads that wait for the work before\n"
    "                       them). A row is measured by a calibration\n"
    "                       of its own clock path: the fields are null on\n"
    "                       rows of recorded values, on rows of mixed paths\n"
    "                       or of a path without a calibration, and on every\n"
    "                       row when there is none, each with a warning.\n"
    "                       rounds (with --from, of a run of several rounds:\n"
    "                       hostrangectl record --rounds, merge) adds\n"
    "                       rounds, round_medians (the row's median in each\n"
    "                       round) and round_spread ((max - min) / median\n"
    "                       of the round medians, in %); the names join by\n"
    "                       commas (all,rounds)\n"
    "      --correct-observer\n"
    "                       subtract the calibrated cost from mean, median,\n"
    "                       min, max, p90 and p99 (observer_ns, and on the\n"
    "                       ordered clock path the time inside an empty\n"
    "                       scope; never below 0); adds the observer fields\n"
    "                       and \"corrected\" (true on each row corrected)\n"
    "      --calibration=LABEL\n"
    "                       use the calibration of process label LABEL, on\n"
    "                       the rows of its clock path (default: for each\n"
    "                       row, the most recent one of the row's path)\n"
    HRC_FILTER_HELP
    "  -o, --output=FILE    write to FILE (atomically: a temporary file then a\n"
    "                       rename; a device or pipe is written in place; -\n"
    "                       is standard output) instead of standard output\n"
    "      --from=RUN       report run file RUN (hostrangectl save, merge)\n"
    "                       instead of asking the daemon; no daemon is\n"
    "                       needed, and the calibrations are the file's\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "On a terminal, reading a run file (--from) shows progress on stderr.\n";

static int run_dump(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "fields", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "from", required_argument, NULL, 'I' },
        { "by", required_argument, NULL, 'Y' },
        { "value", required_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        HRC_FILTER_LONGOPTS,
        HRC_OBSERVER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct hrc_report rep = { HRV_FORMAT_JSONL, 0, NULL, 0, NULL, NULL,
                                  0, 0, 0 };
    struct hra_filter f = { NULL, NULL, NULL, NULL, 0 };
    int c;

    while ((c = getopt_long(argc, argv, ":f:n:o:h", longopts, NULL)) != -1) {
        if (hrc_report_option("dump", c, optarg, &f, &rep))
            continue;
        if (c == 'I') {
            rep.from = optarg;
            continue;
        }
        if (c == 'Y') {
            if (strcmp(optarg, "path") != 0 && strcmp(optarg, "range") != 0) {
                fprintf(stderr, "hostrangectl dump: bad --by '%s' (range or "
                        "path)\n", optarg);
                return HRC_EXIT_USAGE;
            }
            rep.by_path = strcmp(optarg, "path") == 0;
            continue;
        }
        if (c == 'V') {
            enum hrv_fvalue v;
            if (hrv_fvalue_parse(optarg, &v) != 0) {
                fprintf(stderr, "hostrangectl dump: bad --value '%s' (total, "
                        "median or count)\n", optarg);
                return HRC_EXIT_USAGE;
            }
            rep.value = (int)v;
            continue;
        }
        if (c == 'h') {
            fputs(usage_dump, stdout);
            return 0;
        }
        hrc_die_usage("dump", c, argv[optind - 1]);
    }
    hrc_no_arguments("dump", argc, argv);
    if (rep.view == HRC_VIEW_PPROF && isatty(1) &&
        (rep.output == NULL || strcmp(rep.output, "-") == 0)) {
        fprintf(stderr, "hostrangectl dump: a pprof profile is binary: "
                "write it to a file (-o FILE.pb.gz)\n");
        return HRC_EXIT_USAGE;
    }
    return hrc_dump(&f, &rep) == 0 ? 0 : 1;
}

const struct hrc_cmd hrc_cmd_dump = {
    "dump",
    "print the report: one row per key (node, operator, backend,\n"
    "           phase, range, metric) with count, mean and median",
    usage_dump,
    run_dump,
};
