/* hostrangectl record: a command under a private daemon (see ctl_cmd.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_fingerprint.h"
#include "ctl/ctl_history.h"
#include "ctl/ctl_losses.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_report.h"
#include "ctl/ctl_save.h"
#include "ctl/ctl_exit.h"
#include "lib/runner/rounds.h"
#include "lib/runner/spawn.h"
#include "ctl/ctl_rounds.h"
#include "lib/run/run.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_record[] =
    "Usage: hostrangectl record [-o FILE] [--format=FORMAT] [--fields=FIELDS]"
    "\n"
    "                           [--correct-observer] [--calibration=LABEL]\n"
    "                           [--nvtx] [--nvtx-window=NAME] [--rounds=N]\n"
    "                           [--strict]\n"
    "                           [--save=FILE.hrs [--unsorted]\n"
    "                           [--meta KEY=VALUE]...] [--history=DB]\n"
    "                           [--machine=NAME]\n"
    "                           -- COMMAND [ARG]...\n"
    "Run COMMAND under a private hostranged and write its report.\n"
    "\n"
    "Starts hostranged on a fresh temporary runtime directory (in $TMPDIR,\n"
    "else /tmp, or in /tmp when $TMPDIR is too long a path for the daemon's\n"
    "sockets), runs COMMAND with HOSTRANGE_RUNTIME_DIR set to it (so every\n"
    "process it starts reports there), waits for it, writes the report (and,\n"
    "with --save, the run file, from the same samples), stops the daemon and\n"
    "removes the directory. Exits with COMMAND's exit status\n"
    "(128+N when killed by signal N). The daemon is $HOSTRANGED when set,\n"
    "else the hostranged beside this program (or in ../daemon, as in the\n"
    "build tree), else the one on PATH. The\n"
    "daemon keeps no state on disk.\n"
    "\n"
    "  -o, --output=FILE    write the report to FILE, atomically (default:\n"
    "                       standard output)\n"
    "  -f, --format=FORMAT  jsonl (default), csv or table\n"
    "      --fields=FIELDS  reference (default), or a comma-separated list\n"
    "                       of all, observer and rounds (see hostrangectl\n"
    "                       dump --help)\n"
    "      --correct-observer\n"
    "      --calibration=LABEL\n"
    "                       as for hostrangectl dump\n"
    "      --nvtx           collect the NVTX ranges of COMMAND, unchanged:\n"
    "                       load libhostrange-nvtx.so through\n"
    "                       NVTX_INJECTION64_PATH (see hostrange(3))\n"
    "      --nvtx-window=NAME\n"
    "                       with --nvtx, collect only within the NVTX\n"
    "                       range NAME (DOMAIN:MESSAGE in a domain), not\n"
    "                       the whole run\n"
    "      --rounds=N       run COMMAND N times (default 1), each a round\n"
    "                       under a private daemon of its own; the report\n"
    "                       pools the rounds' samples, and the run file\n"
    "                       keeps each key's count and median per round\n"
    "                       (--fields rounds shows them; hostrangectl diff\n"
    "                       tests at the run level with 3 or more)\n"
    "      --save=FILE      also save the run as run file FILE (.hrs, as\n"
    "                       hostrangectl save does: atomically, complete or\n"
    "                       untouched), also when COMMAND fails\n"
    "      --unsorted       with --save: run format 2 (see hostrangectl\n"
    "                       save --help)\n"
    "  -m, --meta=KEY=VALUE with --save or --history: note KEY=VALUE in the\n"
    "                       run; may be given many times\n"
    "      --history=DB     also add the run to the history DB (see\n"
    "                       hostrangectl history add --help), also when\n"
    "                       COMMAND fails\n"
    "      --machine=NAME   the machine's name, kept in the run (see\n"
    "                       hostrangectl save --help); default\n"
    "                       $HOSTRANGE_MACHINE\n"
    "      --strict         exit 3 when anything was lost or refused (see\n"
    "                       below) and COMMAND succeeded\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "When the session lost or refused anything (events lost, batches the\n"
    "daemon refused, scopes of range names or windows of labels refused as\n"
    "empty or over 4096 bytes, calling contexts kept under (contexts\n"
    "full)), record says so in one line on stderr, `hostrange: ...`, and\n"
    "names each process that ended without its final counters (killed or\n"
    "crashed) with its node ids: its last events may be missing.\n"
    "\n"
    "On SIGINT, SIGTERM, SIGHUP or SIGPIPE, record sends the signal on to\n"
    "COMMAND (to its process group, its own unless record runs in the\n"
    "foreground of a terminal, which signals COMMAND itself; a second signal\n"
    "kills COMMAND), then keeps what was collected: it writes the report\n"
    "and the run file (--save), the run marked stopped=SIGNAME, and says\n"
    "so on stderr (\"stopped by SIGTERM; the run saved in FILE is\n"
    "partial\"); a partial run is not added to the history (--history).\n"
    "With --rounds, the round cut short is left out and the completed\n"
    "rounds are kept (and added). Either way the daemon is stopped and the\n"
    "temporary directories removed.\n"
    "\n"
    "Exit status: COMMAND's (127 when it is not found, 126 when it cannot\n"
    "be run); 128+N when signal N stopped record; 1 when the daemon cannot\n"
    "be started, or the report or the run file cannot be written, or the\n"
    "run cannot be added to the history; 2 on a usage error; with\n"
    "--strict, 3 when COMMAND succeeded and anything was lost or refused.\n";

/* What record is asked to do. */
struct record_opts {
    struct hrc_report rep;
    int nvtx;
    const char *nvtx_window;
    const char *save;                /* --save FILE, or NULL */
    unsigned format;                 /* of the run file */
    struct hrr_meta meta;        /* --meta */
    unsigned rounds;                 /* --rounds */
    int quiet;                       /* a round: say nothing of the save */
    int out_to_err;                  /* COMMAND's stdout goes to stderr */
    int strict;                      /* --strict */
    const char *history;             /* --history DB, or NULL */
};

/*
 * The --meta pairs of a run and, when sig is not 0, the pair
 * stopped=SIGNAME that marks it partial, into *m (hrr_meta_with).
 * Returns 0 or -ENOMEM.
 */
static int meta_stopped(struct hrr_meta *m, const struct hrr_meta *meta,
                        int sig)
{
    return hrr_meta_with(m, meta, sig != 0 ? HRX_STOPPED_META : NULL,
                             hrx_cleanup_signame(sig));
}

/* Says on stderr what a record stopped by signal sig kept: the run
 * (saved when saved is 0), or the report alone; partial when COMMAND was
 * cut short (cut). */
static void say_stopped(const struct record_opts *o, int sig, int cut,
                        int saved)
{
    const char *name = hrx_cleanup_signame(sig);

    if (o->quiet)
        return;
    if (!cut && o->save != NULL && saved == 0)
        fprintf(stderr, "hostrangectl record: stopped by %s after COMMAND "
                "ended; the run saved in %s is whole\n", name, o->save);
    else if (!cut)
        fprintf(stderr, "hostrangectl record: stopped by %s after COMMAND "
                "ended\n", name);
    else if (o->save != NULL && saved == 0)
        fprintf(stderr, "hostrangectl record: stopped by %s; the run saved "
                "in %s is partial\n", name, o->save);
    else if (o->history == NULL)
        fprintf(stderr, "hostrangectl record: stopped by %s; the report is "
                "partial\n", name);
    if (cut && o->history != NULL)
        fprintf(stderr, "hostrangectl record: stopped by %s; the run, "
                "partial, was not added to the history %s\n", name,
                o->history);
}

/*
 * Runs cmdv under a private daemon, then writes the report and, with
 * --save, the run file, whatever the command's status, and stops the
 * daemon and removes its directory (lib/runner/cleanup.h), whatever stops
 * record. *cut is set when a signal stopped record before COMMAND ended
 * (what was saved is partial). Returns the exit status of record.
 */
static int record(const struct record_opts *o, char **cmdv, int *cut)
{
    static const struct hra_filter all = { NULL, NULL, NULL, NULL, 0 };
    char daemon[PATH_MAX], dir[PATH_MAX], tool[PATH_MAX], run[PATH_MAX + 8];
    char bin[PATH_MAX];
    struct hrr_meta meta;
    struct hrx_spawn cmd;
    const char *save, *bindir, **env;
    pid_t dpid, cpid;
    int status, rc, saved, lost, sig;

    *cut = 0;
    bindir = hrc_bindir(bin, sizeof bin);
    if (o->nvtx && hrx_nvtx_tool_path(bindir, HR_LIBDIR, tool,
                                      sizeof tool) != 0) {
        fprintf(stderr, "hostrangectl record: --nvtx: %s not found (was "
                "hostrange built with the NVTX headers?)\n", tool);
        return 1;
    }
    if (hrc_rundir("record", dir, sizeof dir) != 0)
        return 1;
    snprintf(hrc_dir, sizeof hrc_dir, "%s", dir);
    hrx_daemon_path(getenv("HOSTRANGED"), bindir, daemon, sizeof daemon);
    if ((rc = hrx_daemon_start(daemon, dir, &dpid)) != 0) {
        fprintf(stderr, "hostrangectl record: cannot run %s: %s\n", daemon,
                strerror(-rc));
        dpid = -1;
    }
    if (dpid < 0 || hrc_ping_wait(10000, 1) != 0) {
        fprintf(stderr, "hostrangectl record: hostranged (%s) did not start "
                "on %s\n", daemon, dir);
        hrc_close();
        if (dpid > 0)
            hrx_cleanup_stop(dpid);
        hrx_cleanup_rmdir(dir);
        return 1;
    }
    /* Stopped before COMMAND started: nothing was collected. */
    if ((sig = hrx_cleanup_stopped()) != 0) {
        *cut = 1;
        if (!o->quiet)
            fprintf(stderr, "hostrangectl record: stopped by %s before "
                    "COMMAND started; nothing saved\n",
                    hrx_cleanup_signame(sig));
        hrc_close();
        hrx_cleanup_stop(dpid);
        hrx_cleanup_rmdir(dir);
        return 128 + sig;
    }

    /* The command gets the terminal's signals, and those record gets
     * (lib/runner/cleanup.h); record stays to save and clean up. */
    cmd = hrx_spawn_init(HRX_CHILD_COMMAND, cmdv);
    if (o->out_to_err)
        cmd.fd[1] = STDERR_FILENO;
    env = cmd.env;
    *env++ = HRX_RUNTIME_ENV;
    *env++ = dir;
    if (o->nvtx) {
        *env++ = "NVTX_INJECTION64_PATH";
        *env++ = tool;
        if (o->nvtx_window != NULL) {
            *env++ = "HOSTRANGE_NVTX_WINDOW";
            *env++ = o->nvtx_window;
        }
    }
    status = 0;
    if ((rc = hrx_spawn(&cmd, &cpid)) != 0) {
        /* As a shell says of a command it cannot run: 127 when it is
         * not found, 126 when it is there but cannot be run. */
        fprintf(stderr, "hostrangectl record: cannot run %s: %s\n",
                cmdv[0], strerror(-rc));
        status = (rc == -ENOENT ? 127 : 126) << 8;
    } else if ((rc = hrx_cleanup_wait(cpid, &status)) != 0) {
        fprintf(stderr, "hostrangectl record: cannot wait for %s: %s\n",
                cmdv[0], strerror(-rc));
        status = 1 << 8;
    }
    sig = hrx_cleanup_stopped();
    *cut = sig != 0;
    /* The report and the run file, whatever COMMAND's status or a
     * signal: what was collected is kept, marked partial. */
    rc = hrc_dump(&all, &o->rep);
    /* --history without --save: the run file in the runtime directory. */
    snprintf(run, sizeof run, "%s/run.hrs", dir);
    save = o->save != NULL ? o->save : o->history != NULL ? run : NULL;
    if (meta_stopped(&meta, &o->meta, sig) != 0) {
        fprintf(stderr, "hostrangectl record: out of memory\n");
        saved = 1;
    } else {
        saved = save == NULL ? 0
                             : hrc_save_run("record", save, o->format,
                                                &meta,
                                                o->save != NULL && !o->quiet
                                                    ? stderr
                                                    : NULL);
    }
    hrr_meta_fini(&meta);
    /* A run cut short is not added: a partial point would join a series
     * as if its command had run whole. */
    if (saved == 0 && o->history != NULL && !*cut &&
        hrc_history_add_run("record", o->history, save, stderr) != 0)
        saved = 1;
    /* What was lost or refused, said where the user looks. */
    lost = hrc_losses(stderr);
    /* The next round's daemon is another: no socket to this one stays. */
    hrc_close();
    hrx_cleanup_stop(dpid);
    hrx_cleanup_rmdir(dir);
    /* A signal that came while the report was written (SIGPIPE) stops
     * record too. */
    if ((sig = hrx_cleanup_stopped()) != 0) {
        say_stopped(o, sig, *cut, saved);
        return 128 + sig;
    }
    if (rc != 0 || saved != 0)
        return 1;
    if (o->strict && lost != 0 && hrx_exit_status(status) == 0)
        return HRC_EXIT_LOST;
    return hrx_exit_status(status);
}

int hrc_record_round(char **cmdv, const char *save, int *cut)
{
    struct record_opts o = {
        .rep = { HRV_FORMAT_JSONL, 0, "/dev/null", 0, NULL, NULL, 0, 0, 0 },
        .save = save,
        .format = 1,
        .rounds = 1,
        .quiet = 1,
        .out_to_err = 1,
    };

    return record(&o, cmdv, cut);
}

/*
 * record --rounds: o->rounds rounds of cmdv, each under a daemon of its
 * own and saved to a file of its own, merged as rounds into o->save (or a
 * temporary file), whose report is written then. A signal stops the
 * rounds: the round it cut short is dropped, the completed ones are
 * merged and reported. Returns the exit status of record: 128 + the
 * signal, else the first failing round's, else 0.
 */
/* What a round of record --rounds is given (hrx_rounds_run's ctx). */
struct round_ctx {
    const struct record_opts *o;
    char **cmdv;
};

/* One round of record --rounds: record quietly, saved to `save`. */
static int round_one(void *ctx, const char *save, int *cut)
{
    const struct round_ctx *rc = ctx;
    struct record_opts ro = *rc->o;

    ro.rounds = 1;
    ro.quiet = 1;
    ro.save = save;
    ro.format = 1;
    memset(&ro.meta, 0, sizeof ro.meta);
    ro.rep.output = "/dev/null";
    ro.rep.format = HRV_FORMAT_JSONL;
    ro.rep.fields = 0;
    ro.rep.correct = 0;
    ro.rep.calibration = NULL;
    ro.history = NULL; /* the merged run is added, not each round */
    return record(&ro, rc->cmdv, cut);
}

static int record_rounds(const struct record_opts *o, char **cmdv)
{
    static const struct hra_filter all = { NULL, NULL, NULL, NULL, 0 };
    char dir[PATH_MAX], merged[PATH_MAX + 32];
    struct round_ctx ctx = { o, cmdv };
    struct hrc_report rep = o->rep;
    struct hrx_rounds r;
    const char *out;
    struct hrr_meta meta;
    int status, rc, sig;
    unsigned done, cut_in;

    if (hrc_tempdir("record", "rounds", "a directory", dir, sizeof dir) != 0)
        return 1;
    rc = hrx_rounds_run(o->rounds, dir, round_one, &ctx, &r);
    if (rc == -ENOMEM && r.files == NULL) {
        fprintf(stderr, "hostrangectl record: out of memory\n");
        hrx_cleanup_rmdir(dir);
        return 1;
    }
    rc = rc != 0;
    status = r.status;
    done = r.done;
    cut_in = r.cut_in;
    sig = hrx_cleanup_stopped();
    snprintf(merged, sizeof merged, "%s/merged.hrs", dir);
    out = o->save ? o->save : merged;
    if (rc == 0 && done == 0) {
        fprintf(stderr, "hostrangectl record: stopped by %s in round 1 of "
                "%u; no round completed, nothing saved\n",
                hrx_cleanup_signame(sig), o->rounds);
        rc = 1;
    }
    if (rc == 0) {
        rc = meta_stopped(&meta, &o->meta, sig) != 0
                 ? 1
                 : hrc_merge_rounds("record", out, o->format, &meta,
                                    r.files, done);
        hrr_meta_fini(&meta);
    }
    if (rc == 0) {
        rep.from = out;
        rc = hrc_dump(&all, &rep) == 0 ? 0 : 1;
    }
    if (rc == 0 && o->history != NULL &&
        hrc_history_add_run("record", o->history, out, stderr) != 0)
        rc = 1;
    hrx_rounds_fini(&r);
    hrx_cleanup_rmdir(dir);
    /* The report may have met a closed pipe (SIGPIPE) meanwhile. */
    if (sig == 0)
        sig = hrx_cleanup_stopped();
    if (sig != 0 && done > 0) {
        char where[PATH_MAX + 64] = "the report";

        if (o->save != NULL)
            snprintf(where, sizeof where, "the run saved in %s", o->save);
        if (cut_in != 0)
            fprintf(stderr, "hostrangectl record: stopped by %s in round "
                    "%u of %u; %s keeps the %u completed round%s\n",
                    hrx_cleanup_signame(sig), cut_in, o->rounds, where,
                    done, done == 1 ? "" : "s");
        else
            fprintf(stderr, "hostrangectl record: stopped by %s after "
                    "round %u of %u; %s keeps the %u completed round%s\n",
                    hrx_cleanup_signame(sig), done, o->rounds, where,
                    done, done == 1 ? "" : "s");
    }
    if (sig != 0)
        return 128 + sig;
    return rc != 0 ? 1 : status;
}

/* The usage error of options that go together, or NULL. */
static const char *check_options(const struct record_opts *o)
{
    if (o->nvtx_window != NULL && !o->nvtx)
        return "--nvtx-window needs --nvtx";
    if (o->save == NULL && o->history == NULL && o->meta.n > 0)
        return "--meta needs --save or --history";
    if (o->save == NULL && o->format != 1)
        return "--unsorted needs --save";
    if (o->rounds == 1 && (o->rep.fields & HRV_FIELDS_ROUNDS))
        return "--fields rounds needs --rounds N (N >= 2)";
    return NULL;
}

static int run_record(int argc, char **argv)
{
    enum {
        OPT_SAVE = 256, OPT_UNSORTED, OPT_ROUNDS, OPT_STRICT, OPT_HISTORY,
        OPT_MACHINE
    };
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "fields", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "nvtx", no_argument, NULL, 'N' },
        { "nvtx-window", required_argument, NULL, 'W' },
        { "save", required_argument, NULL, OPT_SAVE },
        { "unsorted", no_argument, NULL, OPT_UNSORTED },
        { "meta", required_argument, NULL, 'm' },
        { "rounds", required_argument, NULL, OPT_ROUNDS },
        { "strict", no_argument, NULL, OPT_STRICT },
        { "history", required_argument, NULL, OPT_HISTORY },
        { "machine", required_argument, NULL, OPT_MACHINE },
        HRC_OBSERVER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    struct record_opts o = {
        .rep = { HRV_FORMAT_JSONL, 0, NULL, 0, NULL, NULL, 0, 0, 0 },
        .format = 1,
        .rounds = 1,
    };
    const char *bad;
    int c, rc, cut;

    /* "+": stop at the first non-option, the command. */
    while ((c = getopt_long(argc, argv, "+:f:o:m:h", longopts, NULL)) != -1) {
        if (hrc_report_option("record", c, optarg, NULL, &o.rep))
            continue;
        switch (c) {
        case 'h':
            fputs(usage_record, stdout);
            hrr_meta_fini(&o.meta);
            return 0;
        case 'N':
            o.nvtx = 1;
            continue;
        case 'W':
        case OPT_SAVE:
            if (optarg[0] == '\0') {
                fprintf(stderr, "hostrangectl record: %s needs %s\n",
                        c == 'W' ? "--nvtx-window" : "--save",
                        c == 'W' ? "a range name" : "a file name");
                hrr_meta_fini(&o.meta);
                return HRC_EXIT_USAGE;
            }
            *(c == 'W' ? &o.nvtx_window : &o.save) = optarg;
            continue;
        case OPT_UNSORTED:
            o.format = HRR_FORMAT_EVENTS;
            continue;
        case OPT_STRICT:
            o.strict = 1;
            continue;
        case 'm':
            hrc_meta_add("record", optarg, &o.meta);
            continue;
        case OPT_ROUNDS:
            o.rounds = hrc_parse_rounds("record", "--rounds", optarg);
            continue;
        case OPT_HISTORY:
            o.history = hrc_history_dsn("record", optarg);
            continue;
        case OPT_MACHINE:
            hrc_machine_option("record", optarg);
            continue;
        default:
            hrc_die_usage("record", c, argv[optind - 1]);
        }
    }
    hrc_machine_option("record", NULL);
    bad = check_options(&o);
    if (bad == NULL && optind >= argc)
        bad = "no command to run (see --help)";
    if (bad != NULL) {
        fprintf(stderr, "hostrangectl record: %s\n", bad);
        hrr_meta_fini(&o.meta);
        return HRC_EXIT_USAGE;
    }
    /* A meta the history refuses is refused before COMMAND runs, not
     * after, when the run would be lost. */
    for (size_t i = 0; o.history != NULL && i < o.meta.n; i++) {
        if (hrc_history_meta_bad("record", hrr_meta_key(&o.meta, i),
                                 hrr_meta_value(&o.meta, i))) {
            hrr_meta_fini(&o.meta);
            return HRC_EXIT_USAGE;
        }
    }
    if ((rc = hrx_cleanup_init()) != 0) {
        fprintf(stderr, "hostrangectl record: cannot catch signals: %s\n",
                strerror(-rc));
        hrr_meta_fini(&o.meta);
        return 1;
    }
    rc = o.rounds > 1 ? record_rounds(&o, argv + optind)
                      : record(&o, argv + optind, &cut);
    hrr_meta_fini(&o.meta);
    return rc;
}

const struct hrc_cmd hrc_cmd_record = {
    "record",
    "run a command under a private daemon and write its report",
    usage_record,
    run_record,
};
