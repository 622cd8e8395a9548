/* hostrangectl dump: the report options and the paged dump (see ctl.h). */
#include "config.h"

#include "ctl/ctl.h"
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

/* Parses a comma-separated list of reference, all and observer into
 * *fields. Returns 0, or -EINVAL on any other name. */
static int parse_fields(const char *v, unsigned *fields)
{
    unsigned f = 0;

    for (;;) {
        size_t n = strcspn(v, ",");

        if (n == 9 && strncmp(v, "reference", n) == 0)
            ;
        else if (n == 3 && strncmp(v, "all", n) == 0)
            f |= HRD_FIELDS_EXTENDED;
        else if (n == 8 && strncmp(v, "observer", n) == 0)
            f |= HRD_FIELDS_OBSERVER;
        else
            return -EINVAL;
        if (v[n] == '\0')
            break;
        v += n + 1;
    }
    *fields = f;
    return 0;
}

int hrd_ctl_report_option(const char *cmd, int c, const char *arg,
                          struct hrd_filter *f, struct hrd_ctl_report *r)
{
    if (r != NULL) {
        switch (c) {
        case 'f':
            r->view = HRD_CTL_VIEW_ROWS;
            if (strcmp(arg, "folded") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRD_CTL_VIEW_FOLDED;
                return 1;
            }
            if (strcmp(arg, "tree") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRD_CTL_VIEW_TREE;
                return 1;
            }
            if (strcmp(arg, "pprof") == 0 && strcmp(cmd, "dump") == 0) {
                r->view = HRD_CTL_VIEW_PPROF;
                return 1;
            }
            if (hrd_format_parse(arg, &r->format) != 0) {
                fprintf(stderr, "hostrangectl %s: bad format '%s' (jsonl, "
                        "csv or table%s)\n", cmd, arg,
                        strcmp(cmd, "dump") == 0 ? ", folded, tree or pprof" : "");
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
        case HRD_CTL_OPT_CORRECT:
            r->correct = 1;
            return 1;
        case HRD_CTL_OPT_CALIBRATION:
            r->calibration = arg;
            return 1;
        default:
            break;
        }
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

/* The calibration a dump applies, copied out of the reply. */
struct chosen {
    int found;
    struct hrd_calib cal;
    char label[HRP_MAX_STRING + 1];
    char clock[HRP_MAX_STRING + 1];
};

/* Picks the calibration labelled `want` (NULL: the first, the most
 * recent) from the reply; prints one line on stderr when there is none. */
static void choose_calibration(const Hostrange__DumpReply *d,
                               const char *want, int correct,
                               struct chosen *ch)
{
    ch->found = 0;
    for (size_t i = 0; i < d->n_calibrations; i++) {
        const Hostrange__Calibration *c = d->calibrations[i];

        if (want != NULL && strcmp(c->label, want) != 0)
            continue;
        snprintf(ch->label, sizeof ch->label, "%s", c->label);
        snprintf(ch->clock, sizeof ch->clock, "%s", c->clock);
        hrd_calib_from_message(&ch->cal, c);
        ch->cal.label = ch->label;
        ch->cal.clock = ch->clock;
        ch->found = 1;
        return;
    }
    if (want != NULL)
        fprintf(stderr, "hostrangectl: warning: hostranged at %s holds no "
                "calibration of label '%s': the observer fields are null%s\n",
                hrd_ctl_dir, want, correct ? " and nothing is corrected" : "");
    else
        fprintf(stderr, "hostrangectl: warning: hostranged at %s holds no "
                "calibration (run hostrange-bench --calibrate): the observer "
                "fields are null%s\n", hrd_ctl_dir,
                correct ? " and nothing is corrected" : "");
}

/* Writes the rows of one page through the writer, with the observer fields
 * from ch when not NULL. Returns 0 or -errno. */
static int write_rows(struct hrd_writer *w, const Hostrange__DumpReply *d,
                      const struct chosen *ch, int correct)
{
    int rc = 0;

    for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
        struct hrd_row row;

        /* A phase this version does not know is written as "?". */
        (void)hrd_row_from_message(&row, d->rows[i]);
        if (ch != NULL)
            hrd_observer_apply(&row, ch->found ? &ch->cal : NULL, correct);
        rc = hrd_writer_row(w, &row);
    }
    return rc;
}

/* What each page of a dump does: its rows written through w. */
struct dump_pages {
    struct hrd_writer *w;
    struct chosen *ch;
    Hostrange__DumpRequest *dq;
    const struct hrd_ctl_report *r;
};

static int dump_page(const Hostrange__DumpReply *d, void *ctx)
{
    struct dump_pages *dp = ctx;

    if (dp->dq->calibrations) {
        /* The first page brings the calibrations. */
        choose_calibration(d, dp->r->calibration, dp->r->correct, dp->ch);
        dp->dq->calibrations = 0;
    }
    return write_rows(dp->w, d, dp->ch, dp->r->correct);
}

/*
 * Asks for every page and writes it to f. Returns 0, HRD_CTL_TOLD after
 * printing the daemon's failure, or a negative errno of writing.
 */
static int fetch_all(FILE *f, const struct hrd_filter *flt,
                     const struct hrd_ctl_report *r)
{
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__DumpRequest dq = HOSTRANGE__DUMP_REQUEST__INIT;
    struct hrd_writer w;
    struct chosen *ch = NULL;
    struct dump_pages dp = { &w, NULL, &dq, r };
    unsigned fields = r->fields;
    int rc;

    if (r->view != HRD_CTL_VIEW_ROWS)
        return hrd_ctl_paths_view(f, flt, r);
    if (r->from != NULL)
        return hrd_ctl_rows_from(f, flt, r);
    hrd_ctl_dump_request(&q, &dq, flt);
    dq.by_path = r->by_path != 0;
    if (r->correct)
        fields |= HRD_FIELDS_OBSERVER | HRD_FIELDS_CORRECTED;
    if (fields & HRD_FIELDS_OBSERVER) {
        ch = calloc(1, sizeof *ch);
        if (ch == NULL)
            return -ENOMEM;
        dq.calibrations = 1;
    }
    dp.ch = ch;
    hrd_writer_init(&w, f, r->format, fields);
    rc = hrd_ctl_dump_pages("dump", &q, &dq, dump_page, &dp);
    if (rc == 0)
        rc = hrd_writer_finish(&w);
    hrd_writer_fini(&w);
    free(ch);
    return rc;
}

/* Tells why writing `what` failed when rc is a negative errno (not when
 * it is HRD_CTL_TOLD, told already). Returns HRD_CTL_TOLD. */
static int write_error(const char *what, int rc)
{
    if (rc < 0)
        fprintf(stderr, "hostrangectl: cannot write %s: %s\n", what,
                strerror(-rc));
    return HRD_CTL_TOLD;
}

void hrd_ctl_dump_request(Hostrange__ControlRequest *q,
                          Hostrange__DumpRequest *dq,
                          const struct hrd_filter *flt)
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

int hrd_ctl_dump(const struct hrd_filter *flt,
                 const struct hrd_ctl_report *r)
{
    const char *output = r->output;
    struct hrd_atomic file;
    struct stat st;
    FILE *f;
    int rc;

    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;
    if (output == NULL) {
        rc = fetch_all(stdout, flt, r);
        if (rc == 0 && fflush(stdout) != 0)
            rc = -errno;
        return rc == 0 ? 0 : write_error("the report", rc);
    }
    if (stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device or a pipe (/dev/null, /dev/stdout): written in place. */
        f = fopen(output, "w");
        if (f == NULL)
            return write_error(output, -errno);
        rc = fetch_all(f, flt, r);
        if (fclose(f) != 0 && rc == 0)
            rc = -errno;
        return rc == 0 ? 0 : write_error(output, rc);
    }
    rc = hrd_atomic_open(&file, output, 1);
    if (rc != 0)
        return write_error(output, rc);
    rc = fetch_all(file.f, flt, r);
    if (rc == 0)
        rc = hrd_atomic_commit(&file);
    else
        hrd_atomic_abort(&file);
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
    "                       100 columns wide)\n"
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
    "                       (observer_ns / median), unstable (share of 10%\n"
    "                       or more) and resolution_limited (a median under\n"
    "                       20 steps of the clock). They are null on rows of\n"
    "                       recorded values, and on every row, with a\n"
    "                       warning, when there is no calibration.\n"
    "      --correct-observer\n"
    "                       subtract the calibrated cost from mean, median,\n"
    "                       min, max, p90 and p99 (observer_ns + the time\n"
    "                       inside an empty scope, never below 0); adds the\n"
    "                       observer fields and \"corrected\" (true on each\n"
    "                       row corrected)\n"
    "      --calibration=LABEL\n"
    "                       use the calibration of process label LABEL\n"
    "                       (default: the most recent one)\n"
    HRD_CTL_FILTER_HELP
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
        HRD_CTL_FILTER_LONGOPTS,
        HRD_CTL_OBSERVER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct hrd_ctl_report rep = { HRD_FORMAT_JSONL, 0, NULL, 0, NULL, NULL,
                                  0, 0, 0 };
    struct hrd_filter f = { NULL, NULL, NULL, NULL, 0 };
    int c;

    while ((c = getopt_long(argc, argv, ":f:n:o:h", longopts, NULL)) != -1) {
        if (hrd_ctl_report_option("dump", c, optarg, &f, &rep))
            continue;
        if (c == 'I') {
            rep.from = optarg;
            continue;
        }
        if (c == 'Y') {
            if (strcmp(optarg, "path") != 0 && strcmp(optarg, "range") != 0) {
                fprintf(stderr, "hostrangectl dump: bad --by '%s' (range or "
                        "path)\n", optarg);
                return 2;
            }
            rep.by_path = strcmp(optarg, "path") == 0;
            continue;
        }
        if (c == 'V') {
            enum hrd_fvalue v;
            if (hrd_fvalue_parse(optarg, &v) != 0) {
                fprintf(stderr, "hostrangectl dump: bad --value '%s' (total, "
                        "median or count)\n", optarg);
                return 2;
            }
            rep.value = (int)v;
            continue;
        }
        if (c == 'h') {
            fputs(usage_dump, stdout);
            return 0;
        }
        hrd_ctl_die_usage("dump", c, argv[optind - 1]);
    }
    hrd_ctl_no_arguments("dump", argc, argv);
    if (rep.view == HRD_CTL_VIEW_PPROF && isatty(1) &&
        (rep.output == NULL || strcmp(rep.output, "-") == 0)) {
        fprintf(stderr, "hostrangectl dump: a pprof profile is binary: "
                "write it to a file (-o FILE.pb.gz)\n");
        return 2;
    }
    return hrd_ctl_dump(&f, &rep) == 0 ? 0 : 1;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_dump = {
    "dump",
    "print the report: one row per key (node, operator, backend,\n"
    "           phase, range, metric) with count, mean and median",
    usage_dump,
    run_dump,
};
