/* hostrangectl history: the subcommand table, above the files of the
 * subcommands (ctl_history.c: add, list, show; ctl_history_detect.c:
 * detect, check; ctl_history_plot.c: plot), which it calls and which never
 * call it. */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_exit.h"
#include "ctl/ctl_history.h"
#include "lib/history/history.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_history[] =
    "Usage: hostrangectl history add [--db DB] [--meta KEY=VALUE]... RUN.hrs...\n"
    "       hostrangectl history add --from FORMAT [--db DB] FILE...\n"
    "       hostrangectl history list [--db DB]\n"
    "       hostrangectl history show [--db DB] [FILTER]... [--machine GLOB]\n"
    "                                 [--format table|jsonl|csv]\n"
    "       hostrangectl history detect [--db DB] [FILTER]... [--machine GLOB]\n"
    "                                 [--alpha P] [--min-change PCT] [--window N]\n"
    "                                 [--fail-above SPEC] [--format text|jsonl]\n"
    "       hostrangectl history check [--db DB] [--from FORMAT] RUN.hrs\n"
    "                                 [FILTER]...\n"
    "                                 [--alpha P] [--window N]\n"
    "                                 [--fail-above SPEC] [--format text|jsonl]\n"
    "       hostrangectl history plot [--db DB] -o DIR [FILTER]...\n"
    "Remember every run (add) and find which commit made which range slower,\n"
    "on which machine (detect), or whether a run is slower than its history\n"
    "(check, a pull request's gate). See 'hostrangectl history SUBCOMMAND\n"
    "--help' and hostrangectl-history(1).\n"
    "\n"
    "Exit status: 0 when nothing is slower than allowed; 1 when something is\n"
    "(detect, check: --fail-above); 2 on a usage error; 3 when a database or\n"
    "run file cannot be read (list, show, detect, check and plot only read,\n"
    "and never make a history); 5 on any other failure.\n";

/* The subcommands, commands of the same type as hostrangectl.c's. */
static const struct hrc_cmd sub_add = {
    "add", "remember runs (or other tools' results)",
    hrc_history_usage_add, hrc_history_add,
};
static const struct hrc_cmd sub_list = {
    "list", "the runs remembered",
    hrc_history_usage_list, hrc_history_list,
};
static const struct hrc_cmd sub_show = {
    "show", "the points of the series",
    hrc_history_usage_show, hrc_history_show,
};
static const struct hrc_cmd sub_detect = {
    "detect", "which commit made which range slower, on which machine",
    hrc_history_usage_detect, hrc_history_detect,
};
static const struct hrc_cmd sub_check = {
    "check", "whether a run is slower than its history",
    hrc_history_usage_check, hrc_history_check,
};
static const struct hrc_cmd sub_plot = {
    "plot", "the history's page",
    hrc_history_usage_plot, hrc_history_plot,
};
static const struct hrc_cmd *const subs[] = {
    &sub_add, &sub_list, &sub_show, &sub_detect, &sub_check, &sub_plot,
};

static int history(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "hostrangectl history: no subcommand (add, list, "
                "show, detect, check or plot; see --help)\n");
        return HRC_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage_history, stdout);
        return 0;
    }
    const struct hrc_cmd *sub =
        hrc_cmd_find(subs, sizeof subs / sizeof subs[0], argv[1]);
    if (sub != NULL) {
        optind = 0;
        return sub->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "hostrangectl history: unknown subcommand '%s' (add, "
            "list, show, detect, check or plot)\n", argv[1]);
    return HRC_EXIT_USAGE;
}

const struct hrc_cmd hrc_cmd_history = {
    "history",
    "remember every run; find which commit made which range slower",
    usage_history,
    history,
};
