/* hostrangectl ab: two commands in interleaved rounds, compared at the run
 * level (see ctl_cmd.h, ctl_rounds.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_exit.h"
#include "lib/runner/cleanup.h"
#include "ctl/ctl_rounds.h"
#include "lib/stat/decide.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rounds a side when --rounds is not given: the first look. */
#define AB_ROUNDS_DEFAULT HRS_DECIDE_FIRST_DEFAULT

/* The most pairs when --max-rounds is not given (or --rounds, if more). */
#define AB_MAX_ROUNDS_DEFAULT HRS_DECIDE_MAX_DEFAULT

/* The pairs dropped (a round failed twice) at which ab stops. */
#define AB_DROPPED_MAX 2u

/* diff's exit status of a gated key undecided (hostrangectl diff). */
#define AB_DIFF_UNDECIDED 8

/* The separator of the two commands. */
#define AB_SEPARATOR ":::"

static const char usage_ab[] =
    "Usage: hostrangectl ab [--rounds=N] [--max-rounds=M] [--save-a=FILE]\n"
    "                       [--save-b=FILE] [--machine=NAME] [DIFF OPTION]...\n"
    "                       -- COMMAND_A [ARG]... ::: COMMAND_B [ARG]...\n"
    "Compare two commands (two builds of a program) on one machine, at the\n"
    "run level: run them in alternating rounds, A B B A A B B A ..., each\n"
    "round under a private hostranged of its own (as hostrangectl record),\n"
    "so that drift of the machine falls on both alike, a round of A and\n"
    "the next of B a pair; merge each side's rounds into one run file, and\n"
    "compare the two as hostrangectl diff does, on the round medians by\n"
    "the fastest-half test (see hostrangectl diff --help).\n"
    "\n"
    "The comparison is sequential: after N pairs, and then after about\n"
    "sqrt 2 times as many each time up to M, ab looks at the rounds so far\n"
    "and stops once every gated key (those --fail-above names, else all)\n"
    "is decided, as diff --max-rounds decides (see its --help): slower or\n"
    "faster (p below --alpha split over the looks\n"
    "planned, Bonferroni, and the change beyond the key's --fail-above\n"
    "limit, else --threshold), or same (the 95% interval of the change\n"
    "inside +-that threshold); a key still open after M pairs is\n"
    "undecided. A key still open at a look but hopeless (diff's\n"
    "\"decidable\":false: with the noise of its rounds so far, the change\n"
    "detectable at M pairs is above its threshold, and its change so far\n"
    "within that) does not keep ab going: it ends undecided, said so. With\n"
    "M equal to N, N pairs are run and diff judges them at one look. The\n"
    "commands' standard output goes to standard error; the report to\n"
    "standard output.\n"
    "\n"
    "  -n, --rounds=N        pairs before the first look: rounds of each\n"
    "                        command at least (default "
    HRC_STR(AB_ROUNDS_DEFAULT) ")\n"
    "      --max-rounds=M    the most pairs (default "
    HRC_STR(AB_MAX_ROUNDS_DEFAULT) ", or N if more)\n"
    "      --save-a=FILE     keep A's run file (with its rounds) as FILE\n"
    "      --save-b=FILE     keep B's run file as FILE\n"
    "      --machine=NAME    the machine's name, kept in both runs (see\n"
    "                        hostrangectl save --help); default\n"
    "                        $HOSTRANGE_MACHINE\n"
    "  -h, --help            show this help and exit\n"
    "\n"
    "DIFF OPTION: --alpha, --threshold, --fail-above, --min-rounds,\n"
    "--normalize, --strict and --format, as for hostrangectl diff, A the\n"
    "base and B the new.\n"
    "\n"
    "A round that fails (its command exits non-zero, or its daemon or run\n"
    "file fails) is run again once; when it fails again, its pair is\n"
    "dropped, said on stderr, and ab goes on. When a second pair is\n"
    "dropped, or SIGINT, SIGTERM, SIGHUP or SIGPIPE stops ab (the signal\n"
    "sent on to the round's command, as record does), nothing is\n"
    "compared: each side's rounds of completed pairs (and, when a signal\n"
    "stopped it, a completed round of the pair under way) are kept in\n"
    "--save-a and --save-b (said on stderr), the daemon is stopped and the\n"
    "temporary directories removed.\n"
    "\n"
    "Exit status: diff's (0 none slower than allowed, 1 a key slower than\n"
    "--fail-above allows, 2 a usage error, 6 refused by --min-rounds, 7 a\n"
    "key not judged at its --fail-above limit, with M equal to N; 8 a\n"
    "gated key undecided, after M pairs or hopeless); 5 when a second pair is dropped,\n"
    "said on stderr; 128+N when signal N stopped ab.\n";

/* Which side's command round k (from 0) runs: A B B A A B B A ... */
static int ab_side(unsigned k)
{
    return (int)((k & 1) ^ ((k >> 1) & 1));
}

/*
 * Keeps side i's n completed rounds, files[0..n), as run file `save` when
 * one was asked for (--save-a, --save-b), and says so on stderr.
 */
static void keep_side(int i, const char *save, char **files, unsigned n)
{
    char side = i ? 'B' : 'A';

    if (save == NULL)
        return;
    if (n == 0)
        fprintf(stderr, "hostrangectl ab: no round of %c completed: %s not "
                "written\n", side, save);
    else if (hrc_merge_rounds("ab", save, 1, NULL, files, n) == 0)
        fprintf(stderr, "hostrangectl ab: the %u completed round%s of %c "
                "saved in %s\n", n, n == 1 ? "" : "s", side, save);
}

/* round_try's status of a round that a signal cut short. */
#define AB_ROUND_CUT (-1)

/*
 * Runs round k (from 0) of the schedule, of side `side` (its command
 * argv + optind for A, argv + sep + 1 for B), saved as the side's round
 * n + 1 in dir, its file's name in *file (caller frees); a round that
 * fails is run once more. Returns 0 when the round completed, the status
 * of its second failure, or AB_ROUND_CUT when a signal stopped it (*sig
 * set, said on stderr). A signal that came after a completed round sets
 * *sig, and the round counts.
 */
static int round_try(char **argv, int optind_, int sep, int side, unsigned k,
                     const char *dir, unsigned n, char **file, int *sig)
{
    char **cmdv = side == 0 ? argv + optind_ : argv + sep + 1;

    for (int attempt = 0; attempt < 2; attempt++) {
        char *f;
        int st, cut;

        if (asprintf(&f, "%s/%c-%u.hrs", dir, side ? 'b' : 'a', n + 1) < 0) {
            fprintf(stderr, "hostrangectl ab: out of memory\n");
            return 1;
        }
        st = hrc_record_round(cmdv, f, &cut);
        *sig = hrx_cleanup_stopped();
        /* A signal that came after the command ended leaves the round
         * whole. */
        if (!cut && *sig != 0 && st == 128 + *sig && access(f, R_OK) == 0)
            st = 0;
        if (cut) {
            fprintf(stderr, "hostrangectl ab: stopped by %s in round %u "
                    "(%c: %s)\n", hrx_cleanup_signame(*sig), k + 1,
                    side ? 'B' : 'A', cmdv[0]);
            unlink(f);
            free(f);
            return AB_ROUND_CUT;
        }
        if (st == 0) {
            *file = f;
            if (*sig != 0)
                fprintf(stderr, "hostrangectl ab: stopped by %s after round "
                        "%u\n", hrx_cleanup_signame(*sig), k + 1);
            return 0;
        }
        fprintf(stderr, "hostrangectl ab: round %u (%c: %s) failed with "
                "status %d%s\n", k + 1, side ? 'B' : 'A', cmdv[0], st,
                attempt == 0 ? "; running it again" : "");
        unlink(f);
        free(f);
        if (*sig != 0)
            return AB_ROUND_CUT;
        if (attempt == 1)
            return st;
    }
    return 1;
}

/*
 * A look of the sequential comparison: each side's made[] rounds so far
 * merged in dir, and diff run on them as a process of its own, quietly,
 * with the options dargv[1..dargc), the plan and JSON rows. Returns 1
 * when a gated key is undecided and not hopeless (a row with
 * "gated":true and "verdict":"undecided" but not "decidable":false), 0
 * when none is, or -1 when the rounds cannot be merged or diff fails
 * (said on stderr).
 */
static int look(const char *dir, int dargc, char **dargv, char **files[2],
                const unsigned made[2], const struct hrs_decide_plan *plan)
{
    char path[3][PATH_MAX + 16], first[32], max[32], *line = NULL;
    size_t cap = 0;
    FILE *f;
    char **args = calloc((size_t)dargc + 8, sizeof *args);
    int n = 0, st;

    if (args == NULL) {
        fprintf(stderr, "hostrangectl ab: out of memory\n");
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path[i], sizeof path[i], "%s/look-%c.hrs", dir,
                 i ? 'b' : 'a');
        if (hrc_merge_rounds("ab", path[i], 1, NULL, files[i],
                                 made[i]) != 0) {
            free(args);
            return -1;
        }
    }
    snprintf(first, sizeof first, "--first-look=%zu", plan->first);
    snprintf(max, sizeof max, "--max-rounds=%zu", plan->max);
    args[n++] = "hostrangectl";
    args[n++] = "diff";
    for (int i = 1; i < dargc; i++)
        args[n++] = dargv[i];
    args[n++] = first;
    args[n++] = max;
    args[n++] = "--format=jsonl";
    args[n++] = path[0];
    args[n++] = path[1];
    snprintf(path[2], sizeof path[2], "%s/look.jsonl", dir);
    st = hrc_run_self(args, 1, path[2]);
    free(args);
    /* diff's statuses of a comparison made: 0, 1, 6, 7 and 8. */
    if (st != 0 && st != 1 && st != 6 && st != 7 && st != AB_DIFF_UNDECIDED) {
        fprintf(stderr, "hostrangectl ab: the look after %u pairs failed "
                "(diff exited %d)\n", made[0], st);
        st = -1;
    } else if ((f = fopen(path[2], "r")) == NULL) {
        st = -1;
    } else {
        st = 0;
        while (st == 0 && getline(&line, &cap, f) > 0)
            st = strstr(line, "\"verdict\":\"undecided\"") != NULL &&
                 strstr(line, "\"gated\":true") != NULL &&
                 strstr(line, "\"decidable\":false") == NULL;
        free(line);
        fclose(f);
    }
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
    return st;
}

static int run_ab(int argc, char **argv)
{
    enum { OPT_SAVE_A = 256, OPT_SAVE_B, OPT_FAIL, OPT_MIN_ROUNDS,
           OPT_STRICT, OPT_NORMALIZE, OPT_MACHINE, OPT_MAX_ROUNDS,
           OPT_ALPHA = 'a', OPT_THRESHOLD = 'T',
           OPT_FORMAT = 'f' };
    static const struct option longopts[] = {
        { "rounds", required_argument, NULL, 'n' },
        { "max-rounds", required_argument, NULL, OPT_MAX_ROUNDS },
        { "save-a", required_argument, NULL, OPT_SAVE_A },
        { "save-b", required_argument, NULL, OPT_SAVE_B },
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "alpha", required_argument, NULL, OPT_ALPHA },
        { "threshold", required_argument, NULL, OPT_THRESHOLD },
        { "fail-above", required_argument, NULL, OPT_FAIL },
        { "min-rounds", required_argument, NULL, OPT_MIN_ROUNDS },
        { "strict", no_argument, NULL, OPT_STRICT },
        { "normalize", required_argument, NULL, OPT_NORMALIZE },
        { "format", required_argument, NULL, OPT_FORMAT },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *save[2] = { NULL, NULL };
    char **dargv = calloc((size_t)argc + 8, sizeof *dargv);
    char **files[2] = { NULL, NULL }, tmp[2][PATH_MAX + 16] = { "", "" };
    char dir[PATH_MAX];
    unsigned rounds = AB_ROUNDS_DEFAULT, max_rounds = 0, made[2] = { 0, 0 };
    unsigned dropped = 0;
    struct hrs_decide_plan plan = { 0, 0, 0 };
    char *seq[2] = { NULL, NULL };
    int dargc = 1, c, status = 0, sep, sig = 0;

    if (dargv == NULL) {
        fprintf(stderr, "hostrangectl ab: out of memory\n");
        return HRC_EXIT_FAILED;
    }
    dargv[0] = "diff";
    while ((c = getopt_long(argc, argv, "+:n:a:T:f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            rounds = hrc_parse_rounds("ab", "--rounds", optarg);
            break;
        case OPT_MAX_ROUNDS:
            max_rounds = hrc_parse_rounds("ab", "--max-rounds", optarg);
            break;
        case OPT_SAVE_A:
        case OPT_SAVE_B:
            save[c == OPT_SAVE_B] = optarg;
            break;
        case OPT_MACHINE:
            hrc_machine_option("ab", optarg);
            break;
        case OPT_ALPHA:
        case OPT_THRESHOLD:
        case OPT_FAIL:
        case OPT_MIN_ROUNDS:
        case OPT_STRICT:
        case OPT_NORMALIZE:
        case OPT_FORMAT: {
            /* Handed to diff as --NAME=VALUE. */
            const struct option *lo = longopts;
            char *a;

            while (lo->val != c)
                lo++;
            if (asprintf(&a, "--%s%s%s", lo->name, optarg ? "=" : "",
                         optarg ? optarg : "") < 0) {
                fprintf(stderr, "hostrangectl ab: out of memory\n");
                status = 5;
                goto out;
            }
            dargv[dargc++] = a;
            break;
        }
        case 'h':
            fputs(usage_ab, stdout);
            goto out;
        default:
            hrc_die_usage("ab", c, argv[optind - 1]);
        }
    }
    hrc_machine_option("ab", NULL);
    for (sep = optind; sep < argc && strcmp(argv[sep], AB_SEPARATOR) != 0;
         sep++)
        ;
    if (sep == optind || sep >= argc - 1) {
        fprintf(stderr, "hostrangectl ab: give two commands, COMMAND_A "
                "... " AB_SEPARATOR " COMMAND_B ... (see --help)\n");
        status = 2;
        goto out;
    }
    argv[sep] = NULL;
    if (max_rounds == 0)
        max_rounds = rounds > AB_MAX_ROUNDS_DEFAULT ? rounds
                                                    : AB_MAX_ROUNDS_DEFAULT;
    if (max_rounds < rounds) {
        fprintf(stderr, "hostrangectl ab: --max-rounds %u is below --rounds "
                "%u\n", max_rounds, rounds);
        status = 2;
        goto out;
    }
    plan.first = rounds;
    plan.max = max_rounds;
    files[0] = calloc(max_rounds, sizeof *files[0]);
    files[1] = calloc(max_rounds, sizeof *files[1]);
    if (files[0] == NULL || files[1] == NULL) {
        fprintf(stderr, "hostrangectl ab: out of memory\n");
        status = 5;
        goto out;
    }
    if (hrc_tempdir("ab", "ab", "a directory", dir, sizeof dir) != 0) {
        status = 5;
        goto out;
    }
    for (unsigned pair = 0; made[0] < max_rounds && status == 0 && sig == 0;
         pair++) {
        unsigned done = 0;

        /* The pair's two rounds, in the order A B B A ... gives them. */
        for (unsigned h = 0; h < 2 && status == 0 && sig == 0; h++) {
            unsigned k = 2 * pair + h;
            int side = ab_side(k);
            int st = round_try(argv, optind, sep, side, k, dir, made[side],
                               &files[side][made[side]], &sig);

            if (st == 0) {
                made[side]++;
                done++;
            } else if (st == AB_ROUND_CUT) {
                break;
            } else {
                /* Failed twice: the pair is dropped, the round of it that
                 * completed with it. */
                if (done > 0) {
                    int other = !side;

                    unlink(files[other][--made[other]]);
                    free(files[other][made[other]]);
                    done = 0;
                }
                dropped++;
                fprintf(stderr, "hostrangectl ab: pair %u dropped: round %u "
                        "(%c: %s) failed twice%s\n", pair + 1, k + 1,
                        side ? 'B' : 'A', side ? argv[sep + 1] : argv[optind],
                        dropped >= AB_DROPPED_MAX ? "; stopping" : "");
                if (dropped >= AB_DROPPED_MAX)
                    status = 5;
                break;
            }
        }
        if (sig != 0 || status != 0 || done < 2)
            continue;
        /* A look, when the plan makes one at these pairs. */
        if (plan.max > plan.first && made[0] >= plan.first &&
            made[0] < plan.max &&
            hrs_decide_next_look(&plan, made[0] - 1) == made[0]) {
            int st = look(dir, dargc, dargv, files, made, &plan);

            if (st < 0) {
                status = 5;
                break;
            }
            if (st == 0) {
                fprintf(stderr, "hostrangectl ab: every gated key decided "
                        "or hopeless after %u pairs\n", made[0]);
                break;
            }
            fprintf(stderr, "hostrangectl ab: undecided after %u pairs: "
                    "going on to %zu\n", made[0],
                    hrs_decide_next_look(&plan, made[0]));
        }
    }
    if (sig == 0 && status == 0 && (made[0] == 0 || made[1] == 0)) {
        fprintf(stderr, "hostrangectl ab: no pair completed: nothing to "
                "compare\n");
        status = 5;
    }
    if (sig != 0 || status != 0) {
        /* Stopped: the completed rounds are kept where asked. */
        for (int i = 0; i < 2; i++)
            keep_side(i, save[i], files[i], made[i]);
        if (sig != 0)
            status = 128 + sig;
    }
    for (int i = 0; i < 2 && status == 0; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s/%c.hrs", dir, i ? 'b' : 'a');
        if (save[i] == NULL)
            save[i] = tmp[i];
        if (hrc_merge_rounds("ab", save[i], 1, NULL, files[i],
                                 made[i]) != 0)
            status = 5;
    }
    if (status == 0) {
        if (plan.max > plan.first) {
            if (asprintf(&seq[0], "--first-look=%zu", plan.first) < 0 ||
                asprintf(&seq[1], "--max-rounds=%zu", plan.max) < 0) {
                fprintf(stderr, "hostrangectl ab: out of memory\n");
                status = 5;
                goto done;
            }
            dargv[dargc++] = seq[0];
            dargv[dargc++] = seq[1];
        }
        dargv[dargc++] = (char *)save[0];
        dargv[dargc++] = (char *)save[1];
        optind = 0;
        status = hrc_diff(dargc, dargv);
    }
done:
    for (int i = 0; i < 2; i++) {
        for (unsigned k = 0; k < made[i]; k++)
            free(files[i][k]);
    }
    hrx_cleanup_rmdir(dir);
    /* The report may have met a closed pipe (SIGPIPE) meanwhile. */
    if (sig == 0 && (sig = hrx_cleanup_stopped()) != 0)
        status = 128 + sig;
out:
    free(files[0]);
    free(files[1]);
    for (int i = 1; i < dargc; i++) {
        if (dargv[i] != save[0] && dargv[i] != save[1] &&
            dargv[i] != seq[0] && dargv[i] != seq[1])
            free(dargv[i]);
    }
    free(seq[0]);
    free(seq[1]);
    free(dargv);
    return status;
}

const struct hrc_cmd hrc_cmd_ab = {
    "ab",
    "compare two commands in interleaved rounds, at the run level",
    usage_ab,
    run_ab,
};
