/* hostrangectl ab: two commands in interleaved rounds, compared at the run
 * level (see ctl.h, ctl_rounds.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "ctl/ctl_cleanup.h"
#include "ctl/ctl_rounds.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rounds a side when --rounds is not given. */
#define AB_ROUNDS_DEFAULT 5u

/* The separator of the two commands. */
#define AB_SEPARATOR ":::"

static const char usage_ab[] =
    "Usage: hostrangectl ab [--rounds=N] [--save-a=FILE] [--save-b=FILE]\n"
    "                       [--machine=NAME] [DIFF OPTION]... -- COMMAND_A [ARG]... :::\n"
    "                       COMMAND_B [ARG]...\n"
    "Compare two commands (two builds of a program) on one machine, at the\n"
    "run level: run them in alternating rounds, A B B A A B B A ..., N\n"
    "rounds each, each round under a private hostranged of its own (as\n"
    "hostrangectl record), so that drift of the machine falls on both\n"
    "alike; merge each side's rounds into one run file, and compare the two\n"
    "as hostrangectl diff does: with 3 or more rounds a side, on the round\n"
    "medians (exact Mann-Whitney; see hostrangectl diff --help). The\n"
    "commands' standard output goes to standard error; the report to\n"
    "standard output.\n"
    "\n"
    "  -n, --rounds=N        rounds of each command (default 5; 5 or more\n"
    "                        are needed to flag at --alpha 0.01)\n"
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
    "When a round fails, or SIGINT, SIGTERM, SIGHUP or SIGPIPE stops ab (the\n"
    "signal sent on to the round's command, as record does), nothing is\n"
    "compared: each side's completed rounds are kept in --save-a and\n"
    "--save-b (said on stderr; the round that failed or was cut short is\n"
    "not one of them), the daemon is stopped and the temporary directories\n"
    "removed.\n"
    "\n"
    "Exit status: diff's (0 none slower than allowed, 1 a key slower than\n"
    "--fail-above allows, 2 a usage error, 6 refused by --min-rounds, 7 a\n"
    "key not judged at its --fail-above limit); 5\n"
    "when a round fails (its command exits non-zero, or its daemon or run\n"
    "file fails), said on stderr; 128+N when signal N stopped ab.\n";

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
    else if (hrd_ctl_merge_rounds("ab", save, 1, NULL, 0, files, n) == 0)
        fprintf(stderr, "hostrangectl ab: the %u completed round%s of %c "
                "saved in %s\n", n, n == 1 ? "" : "s", side, save);
}

static int run_ab(int argc, char **argv)
{
    enum { OPT_SAVE_A = 256, OPT_SAVE_B, OPT_FAIL, OPT_MIN_ROUNDS,
           OPT_STRICT, OPT_NORMALIZE, OPT_MACHINE, OPT_ALPHA = 'a', OPT_THRESHOLD = 'T',
           OPT_FORMAT = 'f' };
    static const struct option longopts[] = {
        { "rounds", required_argument, NULL, 'n' },
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
    char **dargv = calloc((size_t)argc + 4, sizeof *dargv);
    char **files[2] = { NULL, NULL }, tmp[2][PATH_MAX + 16] = { "", "" };
    char dir[PATH_MAX];
    unsigned rounds = AB_ROUNDS_DEFAULT, made[2] = { 0, 0 };
    int dargc = 1, c, status = 0, sep, sig = 0;

    if (dargv == NULL) {
        fprintf(stderr, "hostrangectl ab: out of memory\n");
        return 5;
    }
    dargv[0] = "diff";
    while ((c = getopt_long(argc, argv, "+:n:a:T:f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            rounds = hrd_ctl_parse_rounds("ab", "--rounds", optarg);
            break;
        case OPT_SAVE_A:
        case OPT_SAVE_B:
            save[c == OPT_SAVE_B] = optarg;
            break;
        case OPT_MACHINE:
            hrd_ctl_machine_option("ab", optarg);
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
            hrd_ctl_die_usage("ab", c, argv[optind - 1]);
        }
    }
    hrd_ctl_machine_option("ab", NULL);
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
    files[0] = calloc(rounds, sizeof *files[0]);
    files[1] = calloc(rounds, sizeof *files[1]);
    if (files[0] == NULL || files[1] == NULL) {
        fprintf(stderr, "hostrangectl ab: out of memory\n");
        status = 5;
        goto out;
    }
    if (hrd_ctl_cleanup_tempdir("ab", "ab", "a directory", dir,
                                sizeof dir) != 0) {
        status = 5;
        goto out;
    }
    for (unsigned k = 0; k < 2 * rounds; k++) {
        int side = ab_side(k);
        char **cmdv = side == 0 ? argv + optind : argv + sep + 1;
        char *f;
        int st, cut;

        if (asprintf(&f, "%s/%c-%u.hrs", dir, side ? 'b' : 'a',
                     made[side] + 1) < 0) {
            fprintf(stderr, "hostrangectl ab: out of memory\n");
            status = 5;
            break;
        }
        st = hrd_ctl_record_round(cmdv, f, &cut);
        sig = hrd_ctl_cleanup_stopped();
        /* A signal that came after the command ended leaves the round
         * whole. */
        if (!cut && sig != 0 && st == 128 + sig && access(f, R_OK) == 0)
            st = 0;
        if (cut || st != 0) {
            /* Not a completed round: left out of the side's runs. */
            if (cut) {
                fprintf(stderr, "hostrangectl ab: stopped by %s in round "
                        "%u (%c: %s)\n", hrd_ctl_cleanup_signame(sig),
                        k + 1, side ? 'B' : 'A', cmdv[0]);
            } else {
                fprintf(stderr, "hostrangectl ab: round %u (%c: %s) failed "
                        "with status %d\n", k + 1, side ? 'B' : 'A',
                        cmdv[0], st);
                status = 5;
            }
            unlink(f);
            free(f);
            break;
        }
        files[side][made[side]++] = f;
        if (sig != 0) {
            fprintf(stderr, "hostrangectl ab: stopped by %s after round "
                    "%u\n", hrd_ctl_cleanup_signame(sig), k + 1);
            break;
        }
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
        if (hrd_ctl_merge_rounds("ab", save[i], 1, NULL, 0, files[i],
                                 made[i]) != 0)
            status = 5;
    }
    if (status == 0) {
        dargv[dargc++] = (char *)save[0];
        dargv[dargc++] = (char *)save[1];
        optind = 0;
        status = hrd_ctl_diff(dargc, dargv);
    }
    for (int i = 0; i < 2; i++) {
        for (unsigned k = 0; k < made[i]; k++)
            free(files[i][k]);
    }
    hrd_ctl_cleanup_rmdir(dir);
    /* The report may have met a closed pipe (SIGPIPE) meanwhile. */
    if (sig == 0 && (sig = hrd_ctl_cleanup_stopped()) != 0)
        status = 128 + sig;
out:
    free(files[0]);
    free(files[1]);
    for (int i = 1; i < dargc; i++) {
        if (dargv[i] != save[0] && dargv[i] != save[1])
            free(dargv[i]);
    }
    free(dargv);
    return status;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_ab = {
    "ab",
    "compare two commands in interleaved rounds, at the run level",
    usage_ab,
    run_ab,
};
