/* hostrangectl bisect: from a change between two commits to the first
 * commit that made a key slower (or faster), by building commits and
 * comparing each with both ends in paired rounds (see ctl_bisect.h,
 * lib/stat/bisect.h, lib/stat/decide.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_exit.h"
#include "ctl/ctl_history.h"
#include "ctl/ctl_bisect.h"
#include "lib/runner/spawn.h"
#include "ctl/ctl_rounds.h"
#include "lib/stat/signif.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "proto/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The pairs of a step's first look, and the most before it is retried. */
#define BISECT_ROUNDS_DEFAULT HRS_DECIDE_FIRST_DEFAULT
#define BISECT_MAX_ROUNDS_DEFAULT 10

/* The most pairs of the ends' comparison. */
#define BISECT_ENDS_MAX HRS_DECIDE_MAX_DEFAULT

/* The smallest change between the ends that bisect follows, in %. */
#define BISECT_THRESHOLD_DEFAULT 2

static const char usage_bisect[] =
    "Usage: hostrangectl bisect --good=COMMIT --bad=COMMIT --range=NAME\n"
    "                           [--node=GLOB] [--phase=warm|cold]\n"
    "                           [--metric=inclusive|self] [--build=CMD]\n"
    "                           [OPTION]... -- COMMAND [ARG]...\n"
    "       hostrangectl bisect --from-detect='RANGE METRIC' [--db=DB]\n"
    "                           [--node=GLOB] [OPTION]... -- COMMAND [ARG]...\n"
    "Find the first commit between a good and a bad commit that changed a\n"
    "key (a range of a node, phase and metric), in the git working tree of\n"
    "the current directory: each commit measured is checked out in a\n"
    "worktree of its own under a temporary directory, built there by CMD\n"
    "(sh -c) once, and COMMAND run there in rounds, each under a private\n"
    "hostranged as hostrangectl record does, with $" BISECT_COMMIT_ENV "\n"
    "set to the commit for both.\n"
    "\n"
    "First the two ends are compared in paired rounds (good, bad, bad,\n"
    "good, ...) as hostrangectl ab does, until the key is decided slower\n"
    "or faster by more than --threshold (else nothing is searched). Each\n"
    "step then runs a commit between the ends in rounds of three, good,\n"
    "commit, bad, then bad, commit, good, ..., and compares its rounds with\n"
    "each end's by the sequential rule of ab (the fastest-half test,\n"
    "looks after N pairs and then about sqrt 2 times as many, up to M), at\n"
    "a threshold of a third of the change between the ends (so that a\n"
    "level halfway between them is told from both). The commit is\n"
    "  like good  the same as the good end (its 95% interval against it\n"
    "             inside +-the threshold), not the same as the bad end;\n"
    "  like bad   the other way round;\n"
    "  middle     slower than one end and faster than the other: the\n"
    "             change came in two steps, and both are searched;\n"
    "  unclear    none of these after M pairs, and then after 2M: it is\n"
    "             passed over, as a commit whose build fails is (skipped).\n"
    "The next commit is the one in the middle of the commits left. The\n"
    "commits are those of git rev-list --ancestry-path GOOD..BAD, taken as\n"
    "a line.\n"
    "\n"
    "  -g, --good=COMMIT      a commit without the change\n"
    "  -b, --bad=COMMIT       a later commit with it\n"
    "  -R, --range=NAME       the key's range name\n"
    "  -n, --node=GLOB        the key's node id (a shell pattern); needed\n"
    "                         when the range is in several nodes\n"
    "      --phase=PHASE      warm (default) or cold\n"
    "      --metric=METRIC    inclusive (default) or self\n"
    "  -B, --build=CMD        the build command, run by sh -c in each\n"
    "                         commit's worktree (default: none)\n"
    "      --rounds=N         pairs of a step's first look (default "
    HRC_STR(BISECT_ROUNDS_DEFAULT) ")\n"
    "      --max-rounds=M     a step's most pairs before it is retried\n"
    "                         once up to 2M (default "
    HRC_STR(BISECT_MAX_ROUNDS_DEFAULT) "; the ends: "
    HRC_STR(BISECT_ENDS_MAX) ", or\n"
    "                         M if more)\n"
    "  -a, --alpha=ALPHA      the error rate of a comparison, split over\n"
    "                         its looks (default " HRC_STR(HRS_SIGNIF_ALPHA) ")\n"
    "  -T, --threshold=PCT    the smallest change between the ends that is\n"
    "                         searched for (default "
    HRC_STR(BISECT_THRESHOLD_DEFAULT) ")\n"
    "      --from-detect='RANGE METRIC'\n"
    "                         take the ends and the key from the newest\n"
    "                         change point of RANGE and METRIC (inclusive\n"
    "                         or self) that hostrangectl history detect\n"
    "                         finds: the commits of the runs either side\n"
    "                         of it (--good and --bad, when given, win)\n"
    "      --db=DB            the history of --from-detect (see\n"
    "                         hostrangectl history add --help)\n"
    "  -s, --state=FILE       keep the steps in FILE (JSON lines, as\n"
    "                         --format jsonl writes them) and, when FILE\n"
    "                         holds steps of the same ends and key, go on\n"
    "                         from them\n"
    "  -f, --format=FORMAT    text (default), jsonl or markdown\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "A commit whose build or command fails is skipped, and said. The\n"
    "answer is the first commit that is not like good, its subject, the\n"
    "key's change from the good end to it with its 95% interval, every\n"
    "step and the time taken; when the commits just before it were\n"
    "skipped or unclear, those are named too, as possible first bad\n"
    "commits. A change in two steps names the first commit of each.\n"
    "jsonl writes one line per step as it ends (step 0: the ends), then a\n"
    "line with first_bad (the full hash), the key, change, lo, hi, steps\n"
    "and seconds. SIGINT, SIGTERM, SIGHUP or SIGPIPE stops bisect: the\n"
    "round's command is stopped, the worktrees and the temporary\n"
    "directory removed; --state keeps the steps done.\n"
    "\n"
    "Exit status: 0 a first bad commit named; 3 named among skipped or\n"
    "unclear commits; 4 the ends do not differ by more than --threshold;\n"
    "2 a usage error; 5 another failure (not a git working tree, an end\n"
    "that does not build, a round of an end that fails twice); 128+N when\n"
    "signal N stopped bisect.\n";


static int parse_double(const char *what, const char *v, double lo,
                        double hi, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d > lo) || d > hi) {
        fprintf(stderr, "hostrangectl bisect: bad %s '%s' (a number above "
                "%g, at most %g)\n", what, v, lo, hi);
        exit(2);
    }
    *out = d;
    return 0;
}

/* --- Steps -------------------------------------------------------------- */

/* --- The measuring's callbacks (lib/runner/bisect.h) --------------------- */

static int on_prepare(void *ctx, struct hrx_bisect_commit *c)
{
    struct bisect *b = ctx;

    return bisect_prepare(&b->run, c);
}

static int on_round(void *ctx, struct hrx_bisect_commit *c, double *v,
                    int *sig)
{
    struct bisect *b = ctx;

    return bisect_round(&b->run, c, v, sig);
}

static double on_clock_step(void *ctx)
{
    const struct bisect *b = ctx;

    return b->run.step_ns;
}

static void on_say(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "hostrangectl bisect: %s\n", msg);
}

/* Says a step on stderr (text and markdown: the progress). */
static void step_say(const struct bisect *b, const struct hrx_bisect_commit *c)
{
    fprintf(stderr, "hostrangectl bisect: step %d: %.12s %s", c->step,
            c->hash, hrs_bisect_name(c->verdict));
    if (c->verdict == HRS_BISECT_SKIPPED) {
        fprintf(stderr, ": %s\n", c->why ? c->why : "");
        return;
    }
    fprintf(stderr, " after %zu pairs (%.1f s): ", c->pairs, c->seconds);
    bisect_text_change(stderr, &c->vs_good);
    fputs(" against good, ", stderr);
    bisect_text_change(stderr, &c->vs_bad);
    fputs(" against bad\n", stderr);
    (void)b;
}

/* A step measured: its worktree dropped, the step said, written (JSONL)
 * and kept in the state file. */
static void on_step(void *ctx, struct hrx_bisect_commit *c)
{
    struct bisect *b = ctx;

    /* Once measured, no step measures it again, and a project's build
     * takes room. Its build state is kept. */
    if (hrx_bisect_worktree_drop(c) != 0)
        fprintf(stderr, "hostrangectl bisect: cannot remove the worktree of "
                "%.12s (it goes at the end)\n", c->hash);
    step_say(b, c);
    if (b->format == FORMAT_JSONL) {
        bisect_put_step(stdout, c);
        fflush(stdout);
    }
    bisect_state_put(b, bisect_step_line, c);
}

/* --- The command -------------------------------------------------------- */

/* The full hash of a commit name, into out. Returns 0 or -1 (said). */
static int resolve(const char *what, const char *name, char *out)
{
    char *spec, *hash = NULL;
    char *args[] = { "git", "rev-parse", "--verify", "--quiet", NULL, NULL };
    int st;

    if (asprintf(&spec, "%s^{commit}", name) < 0)
        return -1;
    args[4] = spec;
    st = hrx_git(args, &hash, 1);
    free(spec);
    if (st != 0 || hash == NULL || strlen(hash) < 41 ||
        strlen(hash) > HRX_BISECT_HASH_MAX) {
        fputs("hostrangectl bisect: ", stderr);
        fprintf(stderr, "%s ", what);
        hrv_text_put(stderr, name);
        fputs(" is not a commit of this repository\n", stderr);
        free(hash);
        return -1;
    }
    hash[strcspn(hash, "\n")] = '\0';
    snprintf(out, HRX_BISECT_HASH_MAX, "%s", hash);
    free(hash);
    return 0;
}

static void bisect_free(struct bisect *b)
{
    hrx_bisect_fini(&b->m);
    free(b->run.key.node);
    free(b->run.key.op);
    free(b->run.key.backend);
    free(b->run.key.range);
    if (b->state != NULL)
        fclose(b->state);
    if (b->run.cwd >= 0)
        close(b->run.cwd);
}

static int run_bisect(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "good", required_argument, NULL, 'g' },
        { "bad", required_argument, NULL, 'b' },
        { "range", required_argument, NULL, 'R' },
        { "node", required_argument, NULL, 'n' },
        { "phase", required_argument, NULL, 'P' },
        { "metric", required_argument, NULL, 'M' },
        { "build", required_argument, NULL, 'B' },
        { "rounds", required_argument, NULL, 'r' },
        { "max-rounds", required_argument, NULL, 'm' },
        { "alpha", required_argument, NULL, 'a' },
        { "threshold", required_argument, NULL, 'T' },
        { "state", required_argument, NULL, 's' },
        { "from-detect", required_argument, NULL, 'D' },
        { "db", required_argument, NULL, 'd' },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *good = NULL, *bad = NULL, *state = NULL, *from = NULL;
    const char *db = NULL;
    struct bisect_from *fd = NULL;
    char hash[2][HRX_BISECT_HASH_MAX], dir[PATH_MAX], real[PATH_MAX];
    char why[2 * HRX_BISECT_HASH_MAX + 64];
    unsigned rounds = BISECT_ROUNDS_DEFAULT,
             max_rounds = BISECT_MAX_ROUNDS_DEFAULT;
    double alpha = HRS_SIGNIF_ALPHA;
    struct bisect b;
    struct hrx_bisect_answer a;
    int c, rc, status = 0, sig = 0, loaded = 0;
    char *out = NULL;
    char *inside[] = { "git", "rev-parse", "--is-inside-work-tree", NULL };

    memset(&b, 0, sizeof b);
    memset(&a, 0, sizeof a);
    b.run.cwd = -1;
    b.m.ops.prepare = on_prepare;
    b.m.ops.round = on_round;
    b.m.ops.clock_step = on_clock_step;
    b.m.ops.step = on_step;
    b.m.ops.say = on_say;
    b.m.ops.ctx = &b;
    b.run.phase = HRP_PHASE_WARM;
    b.run.metric = HRP_METRIC_INCLUSIVE;
    b.m.threshold = BISECT_THRESHOLD_DEFAULT;
    b.format = FORMAT_TEXT;
    while ((c = getopt_long(argc, argv, "+:g:b:R:n:B:a:T:s:f:h", longopts,
                            NULL)) != -1) {
        switch (c) {
        case 'g':
            good = optarg;
            break;
        case 'b':
            bad = optarg;
            break;
        case 'R':
        case 'n':
            /* A key's names are 1 to HRP_MAX_STRING bytes: no other
             * matches any run's key, found only after an end is built
             * and measured. */
            if (!hrp_name_ok(optarg, strlen(optarg))) {
                fprintf(stderr, "hostrangectl bisect: bad --%s '%.64s%s' "
                        "(%s of 1 to %u bytes)\n", c == 'R' ? "range" : "node",
                        optarg, strlen(optarg) > 64 ? "..." : "",
                        c == 'R' ? "a range's name" : "a pattern",
                        HRP_MAX_STRING);
                return HRC_EXIT_USAGE;
            }
            if (c == 'R')
                b.run.range = optarg;
            else
                b.run.node_glob = optarg;
            break;
        case 'P':
            if ((b.run.phase = hrp_phase_parse(optarg)) == 0) {
                fprintf(stderr, "hostrangectl bisect: bad --phase '%s' "
                        "(warm or cold)\n", optarg);
                return HRC_EXIT_USAGE;
            }
            break;
        case 'M':
            if (strcmp(optarg, "inclusive") != 0 &&
                strcmp(optarg, "self") != 0) {
                fprintf(stderr, "hostrangectl bisect: bad --metric '%s' "
                        "(inclusive or self)\n", optarg);
                return HRC_EXIT_USAGE;
            }
            b.run.metric = hrp_metric_parse(optarg);
            break;
        case 'B':
            b.run.build = optarg;
            break;
        case 'r':
            rounds = hrc_parse_rounds("bisect", "--rounds", optarg);
            break;
        case 'm':
            max_rounds = hrc_parse_rounds("bisect", "--max-rounds",
                                              optarg);
            break;
        case 'a':
            parse_double("--alpha", optarg, 0, 1, &alpha);
            break;
        case 'T':
            parse_double("--threshold", optarg, 0, 1e9, &b.m.threshold);
            break;
        case 's':
            state = optarg;
            break;
        case 'D':
            from = optarg;
            break;
        case 'd':
            db = hrc_history_dsn("bisect", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "text") == 0) {
                b.format = FORMAT_TEXT;
            } else if (strcmp(optarg, "jsonl") == 0) {
                b.format = FORMAT_JSONL;
            } else if (strcmp(optarg, "markdown") == 0) {
                b.format = FORMAT_MARKDOWN;
            } else {
                fprintf(stderr, "hostrangectl bisect: bad --format '%s' "
                        "(text, jsonl or markdown)\n", optarg);
                return HRC_EXIT_USAGE;
            }
            break;
        case 'h':
            fputs(usage_bisect, stdout);
            return 0;
        default:
            hrc_die_usage("bisect", c, argv[optind - 1]);
        }
    }
    if ((from == NULL && (good == NULL || bad == NULL)) ||
        (from == NULL) == (b.run.range == NULL)) {
        fprintf(stderr, "hostrangectl bisect: give --good, --bad and "
                "--range, or --from-detect (see --help)\n");
        return HRC_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl bisect: give the command to measure "
                "after -- (see --help)\n");
        return HRC_EXIT_USAGE;
    }
    if (max_rounds < rounds) {
        fprintf(stderr, "hostrangectl bisect: --max-rounds %u is below "
                "--rounds %u\n", max_rounds, rounds);
        return HRC_EXIT_USAGE;
    }
    b.run.cmdv = argv + optind;
    b.run.build = b.run.build != NULL ? b.run.build : "true";
    b.m.plan.first = rounds;
    b.m.plan.max = max_rounds;
    b.m.plan.alpha = alpha;
    b.m.ends_plan.first = rounds;
    b.m.ends_plan.max = max_rounds > BISECT_ENDS_MAX ? max_rounds
                                                   : BISECT_ENDS_MAX;
    b.m.ends_plan.alpha = alpha;
    if (hrx_cleanup_init() != 0) {
        fprintf(stderr, "hostrangectl bisect: cannot set up signals\n");
        return HRC_EXIT_FAILED;
    }
    clock_gettime(CLOCK_MONOTONIC, &b.t0);
    if ((rc = hrx_git(inside, &out, 1)) < 0)
        fprintf(stderr, "hostrangectl bisect: cannot run git: %s\n",
                strerror(-rc));
    if (rc != 0 || out == NULL || strncmp(out, "true", 4) != 0) {
        fprintf(stderr, "hostrangectl bisect: not in a git working tree "
                "(or git cannot be run)\n");
        free(out);
        return HRC_EXIT_FAILED;
    }
    free(out);
    if (hrc_tempdir("bisect", "bisect", "a directory", dir, sizeof dir) != 0)
        return HRC_EXIT_FAILED;
    if (realpath(dir, real) == NULL)
        snprintf(real, sizeof real, "%s", dir);
    b.run.dir = real;
    if (from != NULL) {
        if ((fd = malloc(sizeof *fd)) == NULL) {
            fprintf(stderr, "hostrangectl bisect: out of memory\n");
            status = HRC_EXIT_FAILED;
            goto stop;
        }
        if ((status = bisect_from_detect(from, db, b.run.node_glob, real,
                                         fd)) != 0)
            goto stop;
        good = good != NULL ? good : fd->good;
        bad = bad != NULL ? bad : fd->bad;
        b.run.range = fd->range;
        b.run.metric = hrp_metric_parse(fd->metric);
        b.run.phase = hrp_phase_parse(fd->phase);
        b.run.node_glob = fd->node;
        fputs("hostrangectl bisect: from the change point of ", stderr);
        hrv_text_put(stderr, fd->range);
        fprintf(stderr, " %s (", fd->metric);
        hrv_text_put(stderr, fd->node);
        fprintf(stderr, ", %s) on ", fd->phase);
        hrv_text_put(stderr, fd->machine);
        fputs(": ", stderr);
        hrv_text_put(stderr, fd->good);
        fputs(" to ", stderr);
        hrv_text_put(stderr, fd->bad);
        fputc('\n', stderr);
    }
    if (resolve("--good", good, hash[0]) != 0 ||
        resolve("--bad", bad, hash[1]) != 0) {
        status = HRC_EXIT_FAILED;
        goto stop;
    }
    if (strcmp(hash[0], hash[1]) == 0) {
        fprintf(stderr, "hostrangectl bisect: the good and the bad end are "
                "the same commit\n");
        status = 2;
        goto stop;
    }
    if (hrx_bisect_line(hash[0], hash[1], &b.m.c, &b.m.n, why,
                        sizeof why) != 0) {
        fprintf(stderr, "hostrangectl bisect: %s\n", why);
        status = HRC_EXIT_FAILED;
        goto stop;
    }
    if ((b.m.v = calloc(b.m.n, sizeof *b.m.v)) == NULL) {
        fprintf(stderr, "hostrangectl bisect: out of memory\n");
        status = HRC_EXIT_FAILED;
        goto stop;
    }
    b.m.v[0] = HRS_BISECT_GOOD;
    b.m.v[b.m.n - 1] = HRS_BISECT_BAD;
    if ((b.run.cwd = open(".", O_RDONLY | O_DIRECTORY)) < 0) {
        fprintf(stderr, "hostrangectl bisect: cannot open the working "
                "directory: %s\n", strerror(errno));
        status = HRC_EXIT_FAILED;
        goto stop;
    }
    if (state != NULL) {
        if ((loaded = bisect_state_load(&b, state)) < 0) {
            status = 2;
            goto stop;
        }
        if ((b.state = fopen(state, "a")) == NULL) {
            fprintf(stderr, "hostrangectl bisect: cannot write %s: %s\n",
                    state, strerror(errno));
            status = HRC_EXIT_FAILED;
            goto stop;
        }
    }
    fprintf(stderr, "hostrangectl bisect: %zu commits after the good end "
            "%.12s up to the bad end %.12s\n", b.m.n - 1, hash[0], hash[1]);
    if (b.m.have_ends) {
        fprintf(stderr, "hostrangectl bisect: going on from %s: the ends "
                "and %d step%s\n", state, loaded, loaded == 1 ? "" : "s");
    } else {
        if (hrx_bisect_ends(&b.m, &sig) != 0) {
            sig = sig ? sig : hrx_cleanup_stopped();
            status = sig ? 128 + sig : HRC_EXIT_FAILED;
            goto stop;
        }
        if (b.format == FORMAT_JSONL) {
            bisect_put_ends(stdout, &b);
            fflush(stdout);
        }
        if (b.m.ends.verdict == HRS_DECIDE_SLOWER ||
            b.m.ends.verdict == HRS_DECIDE_FASTER)
            bisect_state_put(&b, bisect_ends_line, &b);
    }
    fprintf(stderr, "hostrangectl bisect: the bad end is %s after %zu pairs: ",
            hrs_decide_name(b.m.ends.verdict), b.m.ends.pairs);
    bisect_text_change(stderr, &b.m.ends);
    fputc('\n', stderr);
    if (b.m.ends.verdict != HRS_DECIDE_SLOWER &&
        b.m.ends.verdict != HRS_DECIDE_FASTER) {
        bisect_no_change(stdout, &b, hrx_bisect_seconds_since(&b.t0) + b.earlier);
        status = HRC_EXIT_NO_CHANGE;
        goto stop;
    }
    b.m.dir = b.m.ends.verdict;
    if (hrx_bisect_search(&b.m, &a, &sig) != 0) {
        sig = sig ? sig : hrx_cleanup_stopped();
        status = sig ? 128 + sig : HRC_EXIT_FAILED;
        goto stop;
    }
    bisect_answer(stdout, &b, &a, hrx_bisect_seconds_since(&b.t0) + b.earlier);
    status = a.hi == a.lo + 1 ? 0 : HRC_EXIT_CANDIDATES;
stop:
    if (sig != 0)
        fprintf(stderr, "hostrangectl bisect: stopped by %s%s%s%s\n",
                hrx_cleanup_signame(sig),
                state != NULL ? "; the steps done are kept in " : "",
                state != NULL ? state : "", "");
    hrx_bisect_worktrees_remove(real);
    bisect_free(&b);
    free(fd);
    if (status == 0 && (sig = hrx_cleanup_stopped()) != 0)
        status = 128 + sig;
    return status;
}

const struct hrc_cmd hrc_cmd_bisect = {
    "bisect",
    "find the commit that changed a key, building and comparing commits",
    usage_bisect,
    run_bisect,
};
