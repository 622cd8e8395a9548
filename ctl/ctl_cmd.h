/*
 * hostrangectl's parts, and what a command is (this header). Each file
 * includes the header of each helper it uses: ctl_cmd.h (commands, their
 * table, HRC_TOLD), ctl_exit.h (exit statuses), ctl_options.h,
 * ctl_conn.h, ctl_report.h, ctl_paths.h, ctl_fingerprint.h, ctl_save.h,
 * ctl_losses.h, ctl_history.h, each of the file of its name. The global
 * options and the command table (hostrangectl.c); the option and progress
 * helpers (ctl_options.c); the request/reply exchange with hostranged
 * (ctl_conn.c); the report helpers the commands share: report and filter
 * options, calibrations, the dump request, loading a run file
 * (ctl_report.c). One file per command: dump (ctl_dump.c; dump --from is
 * ctl_from.c, and its calling-context views, which plot draws too,
 * ctl_paths.c), stats (ctl_stats.c), reset (ctl_reset.c), ping
 * (ctl_ping.c), record (ctl_record.c), plot (ctl_plot.c), and the run file
 * commands save, merge and diff (ctl_save.c, ctl_merge.c, ctl_diff.c;
 * ctl_diffside.c says why diff or bisect cannot read a run,
 * ctl_fingerprint.c the machine fingerprints save writes and diff
 * compares). The run files themselves are lib/run's: these files parse
 * options, call it and print what it returns (reading a run's keys for a
 * comparison, runside.h; diff's pairing and judging, rundiff.h; a merge,
 * runmerge.h; rounds, runrounds.h; a save's pages, runsave.h; --meta,
 * runmeta.h; what a header says, runheader.h), and no file here names a
 * run's records (tests/source/test_layers.sh). history (ctl_history*.c,
 * its table ctl_history_cmd.c; ctl_history.h) is options, calls into
 * lib/history (a run read for the history, the series, check's judging,
 * detect's look, plot's page, the gate rows and the --fail-above
 * verdict) and printing; bisect (ctl_bisect*.c; ctl_bisect.h) is
 * options, the worktrees, builds and rounds that lib/runner/bisect.c's
 * measuring calls back, and printing, its state file's lines read back by
 * lib/stat/bisectstate.c. The processes of record, record --rounds, ab
 * and bisect are lib/runner's: a private daemon, the command under it,
 * this program again, git and builds started through spawn.h, the rounds
 * of record --rounds (rounds.h), and the processes and directories they
 * make registered in cleanup.h, which stops and removes them on every
 * way out, signals included; ctl_rounds.c gives it this program's path.
 *
 * Calls point one way: hostrangectl.c -> the command files (record also
 * calls dump's and save's) -> ctl_paths.c, ctl_from.c -> the helpers
 * (ctl_report.c, ctl_conn.c, ctl_options.c), which call no command. No
 * file calls a file that calls it back (tests/source/test_layers.sh).
 *
 * A command is a struct hrc_cmd: its name, the summary the main --help
 * lists, its own --help text, and the function that runs it. Adding a
 * command is one file and one entry in the table of hostrangectl.c.
 *
 * Usage errors print one line and exit with status 2; a daemon that cannot
 * be reached or fails gives one line naming the runtime directory and
 * status 1.
 */
#ifndef HOSTRANGE_CTL_CMD_H
#define HOSTRANGE_CTL_CMD_H

#include <stddef.h>

/*
 * A command or a subcommand (history's): run gets its arguments (argv[0]
 * is its name, getopt restarted) and returns the exit status (ctl_exit.h).
 * summary may span lines, each continuation indented by 11 spaces to the
 * column of the first; usage is its --help.
 */
struct hrc_cmd {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
};

/* The entry of table (n entries) named name, or NULL. */
const struct hrc_cmd *hrc_cmd_find(const struct hrc_cmd *const *table,
                                           size_t n, const char *name);

extern const struct hrc_cmd hrc_cmd_dump;
extern const struct hrc_cmd hrc_cmd_stats;
extern const struct hrc_cmd hrc_cmd_reset;
extern const struct hrc_cmd hrc_cmd_ping;
extern const struct hrc_cmd hrc_cmd_record;
extern const struct hrc_cmd hrc_cmd_save;
extern const struct hrc_cmd hrc_cmd_merge;
extern const struct hrc_cmd hrc_cmd_diff;
extern const struct hrc_cmd hrc_cmd_plot;
extern const struct hrc_cmd hrc_cmd_ab;
extern const struct hrc_cmd hrc_cmd_bisect;
extern const struct hrc_cmd hrc_cmd_history;

/*
 * What the functions of hostrangectl return: 0 on success; a negative
 * errno that the caller has still to report (writing a file, memory); or
 * HRC_TOLD when the failure was already told to the user on stderr.
 * Each command turns these into its exit status.
 */
#define HRC_TOLD 1

/* A number defined in code, as text for --help: HRC_STR(HRD_X) is "10"
 * when HRD_X is 10. */
#define HRC_STR_(x) #x
#define HRC_STR(x) HRC_STR_(x)

/* The run file commands (ctl_save.c, ctl_merge.c, ctl_diff.c); argv[0] is
 * the command. Return the exit status. */
int hrc_save(int argc, char **argv);
int hrc_merge(int argc, char **argv);
int hrc_diff(int argc, char **argv);

#endif
