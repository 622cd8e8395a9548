/* hostrangectl diff: two run files compared key by key (see ctl_cmd.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_exit.h"
#include "ctl/ctl_diffside.h"
#include "ctl/ctl_rounds.h"
#include "lib/stat/hist.h"
#include "lib/stat/limits.h"
#include "lib/stat/decide.h"
#include "lib/stat/detect.h"
#include "lib/stat/rounds.h"
#include "lib/agg/observer.h"
#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/rundiff.h"
#include "lib/run/runheader.h"
#include "lib/stat/signif.h"
#include "lib/view/escape.h"
#include "lib/view/gate.h"
#include "lib/view/report.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_diff[] =
    "Usage: hostrangectl diff [--alpha=P] [--threshold=PCT]\n"
    "                         [--fail-above=LIMITS] [--warn-above=LIMITS]\n"
    "                         [--min-rounds=N] [--strict] [--format=FORMAT]\n"
    "                         [--limit=N] BASE NEW\n"
    "Compare two run files (hostrangectl save, merge) key by key: node,\n"
    "operator, backend, phase, range and metric. Each row shows both\n"
    "medians, the change (the Hodges-Lehmann shift, the median of all\n"
    "differences NEW - BASE, as a percentage of the base median), that shift\n"
    "in ns with its distribution-free 95% interval, and the two-sided\n"
    "Mann-Whitney U p-value: exact for fewer than 50 samples a side without\n"
    "ties, else the normal approximation with tie correction. When either\n"
    "side of a key is a histogram, both sides are put in its buckets and the\n"
    "values of a bucket count as ties at its value (resolution 0.1%).\n"
    "\n"
    "With " HRC_STR(HRS_ROUNDS_MIN) " or more rounds a side for a key (record --rounds, ab, merge of\n"
    "runs of the same keys), the key is tested at the run level instead,\n"
    "by the fastest-half test, built for rounds that land on a fast or a\n"
    "slow mode: the change is the ratio of the geometric means of the\n"
    "fastest half of each side's round medians, the p-value the two-sided\n"
    "permutation test of that ratio (every split of the pooled round\n"
    "medians up to " HRC_STR(HRS_ROUNDS_EXACT_SPLITS) " splits, else " HRC_STR(HRS_ROUNDS_FAST_DRAWS) " fixed random ones), the\n"
    "interval the Hodges-Lehmann 95% interval of the log ratios of all the\n"
    "round medians, in %; the medians shown are the medians of the round\n"
    "medians. With fewer, the row and the\n"
    "header say `rounds 1/1: run-to-run noise not measured`: the samples\n"
    "of one run share its whole-run shift, which the test cannot see.\n"
    "\n"
    "A change is flagged (slower or faster) when p < ALPHA and |change| >=\n"
    "the threshold, and never when it moved by less than\n"
    HRC_STR(HRS_ROUNDS_MIN_STEPS) " clock steps of the key (the runs' clock step, else the\n"
    "smallest gap between its values): the fastest halves' or, when that is\n"
    "larger, the medians' difference; a change short of that by\n"
    HRC_STR(HRS_ROUNDS_STEP_SLACK) " of a step counts as " HRC_STR(HRS_ROUNDS_MIN_STEPS) ", so two whole steps are flagged.\n"
    "A row tested at the run level states its detectable change (JSON\n"
    "\"detectable\", in %; null or `none` when its rounds are too few for\n"
    "p < ALPHA): the smallest change that the spread of its round medians\n"
    "(the pooled standard deviation of their logarithms) and its numbers of\n"
    "rounds would let the test flag with power " HRC_STR(HRS_DETECT_POWER) " at ALPHA, and\n"
    "never less than the smallest change that moves by " HRC_STR(HRS_ROUNDS_MIN_STEPS) " clock steps\n"
    "(by the rule above). A key whose detectable change\n"
    "is above its --fail-above limit is `" HRV_GATE_NOT_JUDGED "` (JSON\n"
    "\"judged\":\"" HRV_GATE_NOT_JUDGED "\"): the comparison could not have\n"
    "seen it break the limit, so it has not passed. Rows are marked `unstable` when, by\n"
    "the file's calibration, the observer cost is "
    HRC_STR(HRA_OBSERVER_UNSTABLE_PCT) "% or more of a median (on the fast\n"
    "clock path: the observer cost and the uncertainty of its plain reads,\n"
    HRC_STR(HRA_OBSERVER_UNSTABLE_FAST_PCT) "% or more), and `quantized` "
    "when a median is within " HRC_STR(HRA_QUANTIZED_STEPS) " steps\n"
    "of the clock (the smallest gap between the key's distinct values).\n"
    "Keys in one file only are listed.\n"
    "The table and markdown end with the machine of each run (its\n"
    "fingerprint: host, CPU model, cores, kernel, clock path and step,\n"
    "hostrange version) and its --meta notes; when the two machines differ,\n"
    "a warning on stderr says how.\n"
    "\n"
    "  -a, --alpha=P          significance level (default "
    HRC_STR(HRS_SIGNIF_ALPHA) ")\n"
    "  -T, --threshold=PCT    smallest change flagged, in % (default 5)\n"
    "      --fail-above=LIMITS\n"
    "                         exit 1 when a key is slower (p < ALPHA) by more\n"
    "                         than its limit, and name each such key on\n"
    "                         stderr (it is flagged whatever the threshold):\n"
    "                         PCT for every range, or a comma-separated list\n"
    "                         of GLOB=PCT, the first whose shell pattern\n"
    "                         matches the range name applying (a range that\n"
    "                         none matches has no limit), a plain PCT\n"
    "                         standing for *=PCT: 'backend.*=3,*=10'\n"
    "      --warn-above=LIMITS\n"
    "                         name each key slower (p < ALPHA) by more than\n"
    "                         its warning level (LIMITS as --fail-above) on\n"
    "                         stderr, and in the junit and markdown reports,\n"
    "                         without changing the exit status\n"
    "      --min-rounds=N     refuse to judge a key with fewer than N rounds\n"
    "                         a side: such keys are not flagged, and diff\n"
    "                         exits 6\n"
    "      --normalize=RANGE  test each key at the run level on its round\n"
    "                         medians divided by the same round's median of\n"
    "                         RANGE (metric inclusive) of the same node,\n"
    "                         operator, backend and phase: a control that\n"
    "                         each round times for itself (hostrange-bench\n"
    "                         --spin-control reports control.spin and\n"
    "                         control.stream), so that a round the machine\n"
    "                         made slower as a whole cancels out; the first\n"
    "                         line says how many keys were normalized, their\n"
    "                         rows say `normalized` (JSON\n"
    "                         \"normalized\":RANGE); RANGE's own inclusive\n"
    "                         row is tested unnormalized\n"
    "      --max-rounds=M     decide each key as a sequential comparison of\n"
    "                         up to M pairs of rounds (ab --max-rounds; the\n"
    "                         k-th rounds of base and new a pair): looks\n"
    "                         after N pairs (--first-look), then about\n"
    "                         sqrt 2 times as many each, and at M; at each,\n"
    "                         a key is slower or faster when p < ALPHA / L\n"
    "                         (L the looks planned: a Bonferroni split) and\n"
    "                         its change is beyond its threshold (its\n"
    "                         --fail-above limit, else --threshold), same\n"
    "                         when the 95% interval lies inside +-threshold,\n"
    "                         else undecided; the first look that decides\n"
    "                         stands. Rows say the verdict and its pairs\n"
    "                         (JSON \"verdict\", \"pairs\", the interval\n"
    "                         \"verdict_lo_pct\", \"verdict_hi_pct\"); the\n"
    "                         gated keys are those --fail-above names, else\n"
    "                         all. With fewer than M pairs, an undecided key\n"
    "                         is hopeless when the change detectable at M\n"
    "                         pairs with its noise so far is above its\n"
    "                         threshold and its change so far within that\n"
    "                         (JSON \"decidable\":false and\n"
    "                         \"detectable_at_max\"; text: hopeless): more\n"
    "                         pairs would likely leave it undecided\n"
    "      --first-look=N     the pairs of the first look (default "
    HRC_STR(HRS_DECIDE_FIRST_DEFAULT) ")\n"
    "      --strict           refuse to compare runs of different machines\n"
    "                         (or of an unknown one): exit 4\n"
    "  -f, --format=FORMAT    table (default; coloured on a terminal), jsonl,\n"
    "                         junit (JUnit XML: a testsuite per node, a\n"
    "                         testcase per key, a failure per key slower\n"
    "                         than allowed, skipped for a key of one run)\n"
    "                         or markdown (a verdict line and a table of\n"
    "                         the changed keys, worst first: for a CI step\n"
    "                         summary or a pull-request comment)\n"
    "  -n, --limit=N          markdown: at most N rows (default 50)\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "On a terminal, progress is shown on stderr.\n"
    "Exit status: 0 when no key is slower than allowed; 1 when one is\n"
    "(--fail-above); 2 on a usage error; 3 when a run file cannot be read\n"
    "(missing, unreadable, not a run file, damaged, truncated, of a newer\n"
    "layout, or too large for memory); 4 when --strict refuses runs of\n"
    "different machines; 5 when the comparison fails otherwise (out of\n"
    "memory, or the output cannot be written); 6 when --min-rounds refuses\n"
    "a key (and none is slower than allowed); 7 when a key is not judged\n"
    "at its --fail-above limit (and none is slower than allowed nor\n"
    "refused); with --max-rounds, 8 when a gated key is undecided (and\n"
    "none is slower than allowed nor refused) instead of 7.\n";

/* The row and header text of a comparison without run-to-run noise. */
#define NOISE_UNMEASURED "run-to-run noise not measured"

/* The words of a key whose detectable change is above its --fail-above
 * limit. */
#define NOT_JUDGED HRV_GATE_NOT_JUDGED

enum fmt { FMT_TABLE, FMT_JSONL, FMT_MARKDOWN, FMT_JUNIT };


static void num(FILE *f, double v)
{
    char buf[32];

    if (!isfinite(v)) {
        fputs("null", f);
        return;
    }
    hrv_format_number(buf, sizeof buf, v);
    fputs(buf, f);
}

static void write_jsonl(FILE *f, const struct hrr_rundiff_row *r,
                        const char *normalized_by)
{
    const struct hrr_diff_pop *k = r->b ? r->b : r->n;

    fputs("{\"nodeid\":", f);
    hrv_json_string(f, k->node);
    fputs(",\"operator\":", f);
    hrv_json_string(f, k->op);
    fputs(",\"backend\":", f);
    hrv_json_string(f, k->backend);
    fprintf(f, ",\"phase\":\"%s\",\"range\":", hrp_phase_name(k->phase));
    hrv_json_string(f, k->range);
    fprintf(f, ",\"metric\":\"%s\"", hrp_metric_name(k->metric));
    if (r->b == NULL || r->n == NULL) {
        fprintf(f, ",\"only\":\"%s\",\"count\":%llu,\"median\":",
                r->b ? "base" : "new", (unsigned long long)k->total);
        num(f, k->median);
        fputs("}\n", f);
        return;
    }
    fprintf(f, ",\"base_count\":%llu,\"new_count\":%llu,\"base_median\":",
            (unsigned long long)r->b->total, (unsigned long long)r->n->total);
    num(f, r->run_level ? r->rc.base_median : r->b->median);
    fputs(",\"new_median\":", f);
    num(f, r->run_level ? r->rc.new_median : r->n->median);
    fputs(",\"change_pct\":", f);
    num(f, r->change);
    if (r->run_level) {
        /* The medians of the round medians, and the interval of their
         * ratio as ns of the base's. */
        fputs(",\"shift_ns\":", f);
        num(f, r->rc.new_median - r->rc.base_median);
        fputs(",\"shift_lo_ns\":", f);
        num(f, r->rc.base_median * r->rc.lo / 100);
        fputs(",\"shift_hi_ns\":", f);
        num(f, r->rc.base_median * r->rc.hi / 100);
        fputs(",\"p\":", f);
        num(f, r->fast.p);
    } else {
        fputs(",\"shift_ns\":", f);
        num(f, r->s.shift);
        fputs(",\"shift_lo_ns\":", f);
        num(f, r->s.lo);
        fputs(",\"shift_hi_ns\":", f);
        num(f, r->s.hi);
        fputs(",\"p\":", f);
        num(f, r->s.p);
    }
    fprintf(f, ",\"test\":\"%s\",\"rounds\":[%zu,%zu],\"flag\":",
            r->run_level ? (r->fast.exact ? "rounds-fast-half"
                                          : "rounds-fast-half-sampled")
                         : (r->s.exact ? "exact" : "normal"),
            r->rounds[0], r->rounds[1]);
    if (r->flag)
        fprintf(f, "\"%s\"", r->flag);
    else
        fputs("null", f);
    fprintf(f, ",\"unstable\":%s,\"quantized\":%s",
            r->unstable ? "true" : "false", r->quantized ? "true" : "false");
    if (r->run_level) {
        /* +inf (no change detectable at this alpha) as null. */
        fputs(",\"detectable\":", f);
        num(f, r->detectable);
    }
    if (r->not_judged)
        fputs(",\"judged\":\"" NOT_JUDGED "\"", f);
    if (r->decided) {
        fprintf(f, ",\"verdict\":\"%s\",\"pairs\":%zu,\"verdict_change_pct\":",
                hrs_decide_name(r->dec.verdict), r->dec.pairs);
        num(f, r->dec.change);
        fputs(",\"verdict_p\":", f);
        num(f, r->dec.p);
        fputs(",\"verdict_lo_pct\":", f);
        num(f, r->dec.lo);
        fputs(",\"verdict_hi_pct\":", f);
        num(f, r->dec.hi);
        fprintf(f, ",\"gated\":%s", r->gated ? "true" : "false");
        if (r->hopeless) {
            fputs(",\"decidable\":false,\"detectable_at_max\":", f);
            num(f, r->at_max);
        }
    }
    if (r->refused)
        fputs(",\"refused\":\"min-rounds\"", f);
    if (r->normalized) {
        fputs(",\"normalized\":", f);
        hrv_json_string(f, normalized_by);
    }
    if (!r->run_level)
        fputs(",\"noise\":\"" NOISE_UNMEASURED "\"", f);
    fputs("}\n", f);
}

/* The most bytes of a key's text: four names, each escaped. */
#define KEY_TEXT_MAX (4 * HRV_TEXT_ESCAPE_MAX * HRP_MAX_STRING + 64)

/* Writes k's name as terminal text into buf (KEY_TEXT_MAX bytes): "NODE
 * OP/BACKEND PHASE RANGE METRIC", each name escaped (escape.h). */
static void key_text(char *buf, const struct hrr_diff_pop *k)
{
    const char *part[6] = { k->node, k->op, k->backend,
                            hrp_phase_name(k->phase), k->range,
                            hrp_metric_name(k->metric) };
    static const char sep[6] = { ' ', '/', ' ', ' ', ' ', '\0' };
    size_t at = 0;

    for (int i = 0; i < 6; i++) {
        at += hrv_text_escape(buf + at, KEY_TEXT_MAX - at, part[i]);
        buf[at++] = sep[i];
    }
}

/* The widest key column of a table. */
#define KEY_WIDTH_MAX 160

/* A row of the table; width: of its key column. (JUnit and Markdown are
 * written by lib/view/gate.c.) */
static void write_text(FILE *f, const struct hrr_rundiff_row *r, int colour, int width)
{
    const struct hrr_diff_pop *k = r->b ? r->b : r->n;
    char key[KEY_TEXT_MAX], marks[256] = "";
    const char *on = "", *off = "";

    key_text(key, k);
    if (r->unstable)
        strcat(marks, " unstable");
    if (r->quantized)
        strcat(marks, " quantized");
    if (r->refused)
        strcat(marks, " not judged (--min-rounds)");
    if (r->not_judged)
        strcat(marks, " " NOT_JUDGED);
    if (r->normalized)
        strcat(marks, " normalized");
    if (r->decided) {
        size_t len = strlen(marks);

        snprintf(marks + len, sizeof marks - len, " %s after %zu pairs",
                 hrs_decide_name(r->dec.verdict), r->dec.pairs);
        len = strlen(marks);
        /* The interval reached, when not the row's own (of all its
         * rounds). */
        if (r->dec.verdict == HRS_DECIDE_UNDECIDED && r->dec.pairs > 0 &&
            (r->dec.pairs < r->rounds[0] || r->dec.pairs < r->rounds[1]))
            snprintf(marks + len, sizeof marks - len, " [%+.1f%%, %+.1f%%]",
                     r->dec.lo, r->dec.hi);
        len = strlen(marks);
        if (r->hopeless && isfinite(r->at_max))
            snprintf(marks + len, sizeof marks - len, " (hopeless: "
                     "detectable %.1f%% at %zu pairs)", r->at_max,
                     r->max_pairs);
        else if (r->hopeless)
            snprintf(marks + len, sizeof marks - len, " (hopeless: "
                     "detectable none at %zu pairs)", r->max_pairs);
    }
    if (r->b != NULL && r->n != NULL) {
        size_t len = strlen(marks);

        snprintf(marks + len, sizeof marks - len, " rounds %zu/%zu%s",
                 r->rounds[0], r->rounds[1],
                 r->run_level ? "" : ": " NOISE_UNMEASURED);
    }
    if (r->b == NULL || r->n == NULL) {
        fprintf(f, "%-*s only in %s (median %.3f us)\n", width, key,
                r->b ? "base" : "new", k->median / 1000);
        return;
    }
    if (colour && r->flag) {
        on = strcmp(r->flag, "slower") == 0 ? "\033[31m" : "\033[32m";
        off = "\033[0m";
    }
    if (r->run_level) {
        char det[32];

        /* The interval of the ratio, in %, and the detectable change. */
        if (isfinite(r->detectable))
            snprintf(det, sizeof det, "%.1f%%", r->detectable);
        else
            snprintf(det, sizeof det, "none");
        fprintf(f, "%s%-*s %10.3f %10.3f %+8.2f%% [%+.1f%%, %+.1f%%] "
                "detectable %s p=%.3g%s%s%s%s\n", on, width, key,
                r->rc.base_median / 1000, r->rc.new_median / 1000,
                r->change, r->rc.lo, r->rc.hi, det, r->fast.p,
                r->flag ? " " : "", r->flag ? r->flag : "", marks, off);
        return;
    }
    fprintf(f, "%s%-*s %10.3f %10.3f %+8.2f%% %+10.1f [%+.1f, %+.1f] "
            "p=%.3g%s%s%s%s\n", on, width, key, r->b->median / 1000,
            r->n->median / 1000, r->change, r->s.shift, r->s.lo, r->s.hi,
            r->s.p, r->flag ? " " : "", r->flag ? r->flag : "", marks, off);
}

/* Option `what`'s value v, a number from min to max, into *out. Returns
 * 0, or HRC_TOLD after printing why not. */
static int parse_double(const char *what, const char *v, double min,
                        double max, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d >= min && d <= max)) {
        fprintf(stderr, "hostrangectl diff: bad %s '%s' (a number from %g "
                "to %g)\n", what, v, min, max);
        return HRC_TOLD;
    }
    *out = d;
    return 0;
}

/* What diff was asked to do. */
struct diff_opts {
    struct hrr_rundiff_opts d;  /* what judging the rows is asked */
    size_t limit;               /* --limit: markdown rows */
    enum fmt fmt;
    int strict;
    int help;                   /* --help: printed, nothing more to do */
    const char *base, *new;
};

/* Parses diff's arguments into o. Returns 0; HRC_TOLD after printing
 * a usage error; or -ENOMEM. */
static int parse_options(int argc, char **argv, struct diff_opts *o)
{
    enum { OPT_FAIL = 256, OPT_STRICT, OPT_MIN_ROUNDS, OPT_WARN,
           OPT_NORMALIZE, OPT_MAX_ROUNDS, OPT_FIRST_LOOK };
    static const struct option longopts[] = {
        { "alpha", required_argument, NULL, 'a' },
        { "threshold", required_argument, NULL, 'T' },
        { "fail-above", required_argument, NULL, OPT_FAIL },
        { "warn-above", required_argument, NULL, OPT_WARN },
        { "limit", required_argument, NULL, 'n' },
        { "strict", no_argument, NULL, OPT_STRICT },
        { "min-rounds", required_argument, NULL, OPT_MIN_ROUNDS },
        { "normalize", required_argument, NULL, OPT_NORMALIZE },
        { "max-rounds", required_argument, NULL, OPT_MAX_ROUNDS },
        { "first-look", required_argument, NULL, OPT_FIRST_LOOK },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const char *const formats[] = { "table", "jsonl", "markdown",
                                           "junit" };
    int c, rc = 0;

    while ((c = getopt_long(argc, argv, ":a:T:f:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            rc = parse_double("--alpha", optarg, 0, 1, &o->d.alpha);
            break;
        case 'T':
            rc = parse_double("--threshold", optarg, 0, 1e9, &o->d.threshold);
            break;
        case OPT_FAIL:
        case OPT_WARN: {
            char err[256];

            rc = hrs_limits_parse(c == OPT_FAIL ? &o->d.limits : &o->d.warn,
                                  optarg, err, sizeof err);
            if (rc == -ENOMEM)
                return rc;
            if (rc != 0) {
                fprintf(stderr, "hostrangectl diff: bad --%s-above '%s': "
                        "%s\n", c == OPT_FAIL ? "fail" : "warn", optarg, err);
                return HRC_TOLD;
            }
            break;
        }
        case 'n': {
            double n;

            rc = parse_double("--limit", optarg, 0, 1e9, &n);
            if (rc == 0 && n != floor(n)) {
                fprintf(stderr, "hostrangectl diff: bad --limit '%s' (a "
                        "whole number)\n", optarg);
                rc = HRC_TOLD;
            }
            o->limit = (size_t)n;
            break;
        }
        case OPT_STRICT:
            o->strict = 1;
            break;
        case OPT_MIN_ROUNDS:
            o->d.min_rounds = hrc_parse_rounds("diff", "--min-rounds", optarg);
            break;
        case OPT_MAX_ROUNDS:
            o->d.plan.max = hrc_parse_rounds("diff", "--max-rounds", optarg);
            break;
        case OPT_FIRST_LOOK:
            o->d.plan.first = hrc_parse_rounds("diff", "--first-look", optarg);
            break;
        case OPT_NORMALIZE:
            if (optarg[0] == '\0') {
                fprintf(stderr, "hostrangectl diff: bad --normalize '' (a "
                        "range name)\n");
                return HRC_TOLD;
            }
            o->d.normalize = optarg;
            break;
        case 'f': {
            size_t i;

            for (i = 0; i < 4 && strcmp(optarg, formats[i]) != 0; i++)
                ;
            if (i == 4) {
                fprintf(stderr, "hostrangectl diff: bad format '%s' (table, "
                        "jsonl, markdown or junit)\n", optarg);
                return HRC_TOLD;
            }
            o->fmt = (enum fmt)i;
            break;
        }
        case 'h':
            fputs(usage_diff, stdout);
            o->help = 1;
            return 0;
        default:
            hrc_die_usage("diff", c, argv[optind - 1]);
        }
        if (rc != 0)
            return rc;
    }
    if (o->d.plan.max > 0 && o->d.plan.first > o->d.plan.max) {
        fprintf(stderr, "hostrangectl diff: --first-look %zu is above "
                "--max-rounds %zu\n", o->d.plan.first, o->d.plan.max);
        return HRC_TOLD;
    }
    o->d.plan.alpha = o->d.alpha;
    if (argc - optind != 2) {
        fprintf(stderr, "hostrangectl diff: give two run files, BASE and "
                "NEW (see --help)\n");
        return HRC_TOLD;
    }
    o->base = argv[optind];
    o->new = argv[optind + 1];
    return 0;
}

/* diff's progress (hrr_rundiff_progress_fn): how much of both files is
 * read and compared. */
static void show_progress(void *ctx, uint64_t done, uint64_t size, int last)
{
    struct hrc_progress *p = ctx;
    unsigned long long total = size >> 20;

    if (last)
        hrc_progress_show(p, 0, 1, "diff: %llu of %llu MiB read and "
                              "compared", total, total);
    else
        hrc_progress_show(p, done, 0, "diff: %llu of %llu MiB read and "
                              "compared", (unsigned long long)(done >> 20),
                              total);
}

/*
 * Reads both run files a key at a time, comparing as it goes
 * (hrr_rundiff_read), its progress shown. Returns 0; HRC_TOLD after
 * printing why a file cannot be read; or -ENOMEM.
 */
static int read_sides(struct hrr_diff_side *base, struct hrr_diff_side *new)
{
    struct hrc_progress progress;
    char err[8400];
    int rc;

    hrc_progress_init(&progress);
    rc = hrr_rundiff_read(base, new, show_progress, &progress, err,
                          sizeof err);
    if (rc == -EIO)
        fprintf(stderr, "hostrangectl diff: %s\n", err);
    hrc_progress_end(&progress);
    return rc == -EIO ? HRC_TOLD : rc;
}

/* The key column of a table: as wide as its widest key, from 3 to
 * KEY_WIDTH_MAX characters (a wider key pushes its own row on). */
static int key_width(const struct hrr_rundiff_row *rows, size_t nrows)
{
    int width = 3;

    for (size_t i = 0; i < nrows; i++) {
        char key[KEY_TEXT_MAX];
        int len;

        key_text(key, rows[i].b ? rows[i].b : rows[i].n);
        len = (int)strlen(key);
        if (len > width)
            width = len < KEY_WIDTH_MAX ? len : KEY_WIDTH_MAX;
    }
    return width;
}

/* The machine and notes of each run, after a table or markdown. */
static void write_machines(FILE *f, const struct diff_opts *o,
                           const struct hrr_diff_side *base,
                           const struct hrr_diff_side *new)
{
    const struct hrr_diff_side *sides[2] = { base, new };
    char line[4096];

    /* Each run's file name, host and metadata are names: escaped by
     * the format's rule. */
    for (int i = 0; i < 2; i++) {
        hrr_describe(sides[i]->header, line, sizeof line);
        if (o->fmt == FMT_MARKDOWN) {
            fprintf(f, "%s- %s ", i == 0 ? "\n" : "",
                    i == 0 ? "base" : "new");
            hrv_md_escape(f, sides[i]->path);
            fputs(": ", f);
            hrv_md_escape(f, line);
        } else {
            fprintf(f, "%s ", i == 0 ? "base" : "new");
            hrv_text_put(f, sides[i]->path);
            fputs(": ", f);
            hrv_text_put(f, line);
        }
        fputc('\n', f);
    }
}

/* The report as a gate's result (lib/view/gate.h): JUnit or Markdown.
 * Returns 0, -ENOMEM or -EIO. */
static int write_gate(FILE *f, const struct hrr_rundiff_row *rows, size_t nrows,
                      const struct diff_opts *o,
                      const struct hrr_diff_side *base,
                      const struct hrr_diff_side *new)
{
    struct hrv_gate_row *g = calloc(nrows + 1, sizeof *g);
    char why[2048];
    struct hrv_gate gate = { "hostrangectl diff", g, nrows,
                             hrr_machines_differ(base->header, new->header, why,
                                             sizeof why),
                             o->limit, NULL };
    int rc;

    if (g == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < nrows; i++) {
        const struct hrr_rundiff_row *r = &rows[i];
        const struct hrr_diff_pop *k = r->b ? r->b : r->n;
        const struct hrs_limit *l = hrs_limits_find(&o->d.limits, k->range);
        const struct hrs_limit *w = hrs_limits_find(&o->d.warn, k->range);

        g[i] = (struct hrv_gate_row){
            k->node, k->op, k->backend, hrp_phase_name(k->phase), k->range,
            hrp_metric_name(k->metric), r->b ? r->b->median : NAN,
            r->n ? r->n->median : NAN, NAN, NAN, l ? l->pct : NAN,
            w ? w->pct : NAN, HRV_GATE_UNCHANGED, r->over, r->warn, NULL,
            NULL, r->run_level && !isnan(r->detectable) ? r->detectable : 0,
            r->not_judged, r->decided ? r->dec.pairs : 0, r->undecided,
        };
        if (r->b == NULL || r->n == NULL) {
            g[i].verdict = HRV_GATE_ONLY;
            g[i].reason = r->b ? "only in the base run" : "only in the new run";
            continue;
        }
        g[i].change = r->change;
        g[i].p = r->run_level ? r->fast.p : r->s.p;
        if (r->flag != NULL)
            g[i].verdict = strcmp(r->flag, "slower") == 0 ? HRV_GATE_SLOWER
                                                           : HRV_GATE_FASTER;
    }
    rc = o->fmt == FMT_JUNIT ? hrv_gate_junit(f, &gate)
                             : hrv_gate_markdown(f, &gate);
    free(g);
    return rc;
}

/* The first line of a table or markdown: the rounds of the runs, and
 * which test the rows had. */
static void write_rounds_line(FILE *f, const struct hrr_rundiff_row *rows, size_t nrows,
                              const struct diff_opts *o,
                              const struct hrr_diff_side *base,
                              const struct hrr_diff_side *new)
{
    size_t run = 0, sample = 0, normalized = 0;
    unsigned rb = hrr_rounds(base->end);
    unsigned rn = hrr_rounds(new->end);

    for (size_t i = 0; i < nrows; i++) {
        if (rows[i].b != NULL && rows[i].n != NULL)
            *(rows[i].run_level ? &run : &sample) += 1;
        normalized += rows[i].normalized;
    }
    fprintf(f, "%srounds %u/%u", o->fmt == FMT_MARKDOWN ? "**" : "", rb, rn);
    if (sample == 0 && run > 0)
        fprintf(f, ": p and interval from the round medians (fastest-half "
                "test, %g%% interval of the ratio)", 95.0);
    else if (run == 0)
        fprintf(f, ": " NOISE_UNMEASURED " (p treats the samples of a run "
                "as independent; record --rounds or ab measure it)");
    else
        fprintf(f, ": %zu keys from the round medians; %zu with fewer than "
                "%d rounds a side: " NOISE_UNMEASURED, run, sample,
                HRS_ROUNDS_MIN);
    if (o->d.plan.max > 0) {
        size_t at[HRS_DECIDE_LOOKS_MAX], k = hrs_decide_looks(&o->d.plan, at);

        fprintf(f, "; sequential: looks at");
        for (size_t i = 0; i < k; i++)
            fprintf(f, "%s%zu", i ? ", " : " ", at[i]);
        fprintf(f, " pairs, each at p < %.3g (alpha %g over %zu looks)",
                hrs_decide_look_alpha(&o->d.plan), o->d.alpha, k);
    }
    if (o->d.normalize != NULL && normalized > 0)
        fprintf(f, "; %zu keys normalized by %s (each round's median "
                "divided by that round's %s median of the same node, "
                "scaled to the base's)", normalized, o->d.normalize,
                o->d.normalize);
    else if (o->d.normalize != NULL)
        fprintf(f, "; --normalize %s: not in %d rounds a side of both "
                "runs, nothing normalized", o->d.normalize, HRS_ROUNDS_MIN);
    fprintf(f, "%s\n", o->fmt == FMT_MARKDOWN ? "**\n" : "");
}

/* Writes the report of the rows to f in o's format, and flushes f.
 * Returns 0, or a negative errno of writing. */
static int write_report(FILE *f, const struct hrr_rundiff_row *rows, size_t nrows,
                         size_t flagged, const struct diff_opts *o,
                         const struct hrr_diff_side *base,
                         const struct hrr_diff_side *new)
{
    int colour = o->fmt == FMT_TABLE && isatty(fileno(f));
    int width = o->fmt == FMT_TABLE ? key_width(rows, nrows) : 3;

    if (o->fmt == FMT_JUNIT || o->fmt == FMT_MARKDOWN) {
        int rc = write_gate(f, rows, nrows, o, base, new);

        if (rc == 0 && o->fmt == FMT_MARKDOWN) {
            fputc('\n', f);
            write_rounds_line(f, rows, nrows, o, base, new);
            write_machines(f, o, base, new);
        }
        if (rc == 0 && (fflush(f) != 0 || ferror(f)))
            rc = errno != 0 ? -errno : -EIO;
        return rc;
    }
    if (o->fmt != FMT_JSONL)
        write_rounds_line(f, rows, nrows, o, base, new);
    if (o->fmt == FMT_TABLE)
        fprintf(f, "%-*s %10s %10s %9s %10s\n", width, "key", "base us",
                "new us", "change", "shift ns [95% CI]");
    for (size_t i = 0; i < nrows; i++) {
        if (o->fmt == FMT_JSONL)
            write_jsonl(f, &rows[i], o->d.normalize);
        else
            write_text(f, &rows[i], colour, width);
    }
    if (o->fmt != FMT_JSONL) {
        fprintf(f, "%zu keys compared, %zu flagged (p < %g, |change| >= "
                "%g%%)\n", nrows, flagged, o->d.alpha, o->d.threshold);
        write_machines(f, o, base, new);
    }
    if (fflush(f) != 0 || ferror(f))
        return errno != 0 ? -errno : -EIO;
    return 0;
}

/* Names each key slower than its --fail-above limit on stderr, and each
 * beyond its --warn-above level with a warning. Returns how many are
 * slower than their --fail-above limit. */
static size_t check_limits(const struct hrr_rundiff_row *rows, size_t nrows,
                           const struct diff_opts *o)
{
    size_t over = 0;

    for (size_t i = 0; i < nrows; i++) {
        const struct hrs_limit *l;
        char key[KEY_TEXT_MAX];

        if (rows[i].warn) {
            l = hrs_limits_find(&o->d.warn, rows[i].b->range);
            key_text(key, rows[i].b);
            fprintf(stderr, "hostrangectl diff: warning: %s is %.2f%% "
                    "slower, above --warn-above %g%%\n", key,
                    rows[i].change, l->pct);
        }
        if (!rows[i].over)
            continue;
        l = hrs_limits_find(&o->d.limits, rows[i].b->range);
        key_text(key, rows[i].b);
        if (strcmp(l->glob, "*") == 0)
            fprintf(stderr, "hostrangectl diff: %s is %.2f%% slower, above "
                    "--fail-above %g%%\n", key, rows[i].change, l->pct);
        else
            fprintf(stderr, "hostrangectl diff: %s is %.2f%% slower, above "
                    "--fail-above %g%% (for ", key, rows[i].change, l->pct);
        if (strcmp(l->glob, "*") != 0) {
            hrv_text_put(stderr, l->glob);
            fputs(")\n", stderr);
        }
        over++;
    }
    return over;
}

/* Says on stderr how many keys --min-rounds refused. Returns how many. */
static size_t check_rounds(const struct hrr_rundiff_row *rows, size_t nrows,
                           const struct diff_opts *o)
{
    size_t refused = 0;

    for (size_t i = 0; i < nrows; i++)
        refused += rows[i].refused;
    if (refused > 0)
        fprintf(stderr, "hostrangectl diff: %zu keys have fewer than %u "
                "rounds a side: not judged (--min-rounds)\n", refused,
                o->d.min_rounds);
    return refused;
}

/* Says on stderr how many keys were not judged at their --fail-above
 * limit, and the worst of them. Returns how many. */
static size_t check_judged(const struct hrr_rundiff_row *rows, size_t nrows)
{
    size_t n = 0;
    const struct hrr_rundiff_row *worst = NULL;

    for (size_t i = 0; i < nrows; i++) {
        if (!rows[i].not_judged)
            continue;
        n++;
        if (worst == NULL || !(rows[i].detectable <= worst->detectable))
            worst = &rows[i];
    }
    if (n > 0) {
        char key[KEY_TEXT_MAX];

        key_text(key, worst->b);
        fprintf(stderr, "hostrangectl diff: %zu keys " NOT_JUDGED ": the "
                "smallest change their rounds could show is above their "
                "--fail-above limit (the most: %s, ", n, key);
        if (isfinite(worst->detectable))
            fprintf(stderr, "%.1f%%)\n", worst->detectable);
        else
            fputs("none at this --alpha)\n", stderr);
    }
    return n;
}

/* --max-rounds: says on stderr how many gated keys are undecided, and
 * after how many pairs. Returns how many. */
static size_t check_undecided(const struct hrr_rundiff_row *rows, size_t nrows,
                              const struct diff_opts *o)
{
    size_t n = 0, pairs = 0;

    for (size_t i = 0; i < nrows; i++) {
        if (!rows[i].undecided)
            continue;
        n++;
        if (rows[i].dec.pairs > pairs)
            pairs = rows[i].dec.pairs;
    }
    if (n > 0)
        fprintf(stderr, "hostrangectl diff: %zu gated keys undecided after "
                "%zu pairs (--max-rounds %zu)\n", n, pairs, o->d.plan.max);
    return n;
}

/* Says why diff failed, rc being a negative errno not yet told. Returns
 * HRC_EXIT_FAILED. */
static int failed(int rc)
{
    if (rc == -ENOMEM)
        fprintf(stderr, "hostrangectl diff: out of memory\n");
    else
        fprintf(stderr, "hostrangectl diff: %s\n", strerror(-rc));
    return HRC_EXIT_FAILED;
}

/* Each step returns 0, HRC_TOLD or a negative errno still to be told;
 * here alone they become diff's exit status (but for an unknown option or
 * a missing value, hrc_die_usage's 2). */
int hrc_diff(int argc, char **argv)
{
    struct diff_opts o = { .d = { .alpha = HRS_SIGNIF_ALPHA, .threshold = 5,
                                  .plan = { HRS_DECIDE_FIRST_DEFAULT, 0,
                                            0 } },
                           .fmt = FMT_TABLE,
                           .limit = HRV_GATE_MARKDOWN_LIMIT };
    struct hrr_diff_side base = { 0 }, new = { 0 };
    struct hrr_rundiff_row *rows = NULL;
    size_t nrows = 0, flagged = 0;
    int status, rc = parse_options(argc, argv, &o);

    if (rc != 0 || o.help) {
        if (rc == 0)
            status = HRC_EXIT_OK;
        else
            status = rc == HRC_TOLD ? HRC_EXIT_USAGE : failed(rc);
        goto out;
    }
    rc = hrc_diff_side_open("diff", &base, o.base);
    if (rc == 0)
        rc = hrc_diff_side_open("diff", &new, o.new);
    if (rc != 0) {
        status = rc == HRC_TOLD ? HRC_EXIT_UNREADABLE : failed(rc);
        goto out;
    }
    status = HRC_EXIT_MACHINES;
    if (hrc_diff_machines(o.base, &base, o.new, &new,
                              o.strict) != 0)
        goto out;
    rc = read_sides(&base, &new);
    if (rc != 0) {
        status = rc == HRC_TOLD ? HRC_EXIT_UNREADABLE : failed(rc);
        goto out;
    }
    rc = hrr_rundiff_rows(&base, &new, &o.d, &rows, &nrows, &flagged);
    if (rc != 0) {
        status = failed(rc);
        goto out;
    }
    rc = write_report(stdout, rows, nrows, flagged, &o, &base, &new);
    if (rc != 0) {
        fprintf(stderr, "hostrangectl diff: cannot write the report: %s\n",
                strerror(-rc));
        status = HRC_EXIT_FAILED;
        goto out;
    }
    status = check_limits(rows, nrows, &o) > 0 ? HRC_EXIT_SLOWER : HRC_EXIT_OK;
    if (status == HRC_EXIT_OK && check_rounds(rows, nrows, &o) > 0)
        status = HRC_EXIT_FEW_ROUNDS;
    if (check_judged(rows, nrows) > 0 && status == HRC_EXIT_OK)
        status = HRC_EXIT_NOT_JUDGED;
    if (check_undecided(rows, nrows, &o) > 0 && status == HRC_EXIT_OK)
        status = HRC_EXIT_UNDECIDED;
out:
    free(rows);
    hrs_limits_fini(&o.d.limits);
    hrs_limits_fini(&o.d.warn);
    hrc_diff_side_free(&base);
    hrc_diff_side_free(&new);
    return status;
}

const struct hrc_cmd hrc_cmd_diff = {
    "diff",
    "compare two run files key by key, with significance",
    usage_diff,
    hrc_diff,
};
