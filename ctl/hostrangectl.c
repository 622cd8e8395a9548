/*
 * hostrangectl: the command-line client of hostranged. The global options
 * are parsed here; each command lives in its own file (ctl_*.c) and is
 * one entry of the table below, in the order --help lists them.
 */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_exit.h"
#include "lib/util/options.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct hrc_cmd *const commands[] = {
    &hrc_cmd_dump,
    &hrc_cmd_stats,
    &hrc_cmd_reset,
    &hrc_cmd_ping,
    &hrc_cmd_record,
    &hrc_cmd_save,
    &hrc_cmd_merge,
    &hrc_cmd_diff,
    &hrc_cmd_plot,
    &hrc_cmd_ab,
    &hrc_cmd_bisect,
    &hrc_cmd_history,
};

static const char usage_head[] =
    "Usage: hostrangectl [-r DIR] [-t MS] COMMAND [OPTION]...\n"
    "Talk to hostranged, the hostrange daemon.\n"
    "\n"
    "Commands:\n";

static const char usage_tail[] =
    "\n"
    "Options:\n"
    "  -r, --runtime-dir=DIR  the daemon's runtime directory (default:\n"
    "                         $HOSTRANGE_RUNTIME_DIR, else\n"
    "                         $XDG_RUNTIME_DIR/hostrange, else /run/hostrange\n"
    "                         for root and /tmp/hostrange-UID for others)\n"
    "  -t, --timeout=MS       wait at most MS milliseconds for each answer\n"
    "                         (default 5000)\n"
    "  -h, --help             show this help (COMMAND --help: the command's)\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 on success, 1 when the daemon cannot be reached or fails,\n"
    "2 on a usage error; record exits with the command's status; diff\n"
    "exits 1 when a key is slower than --fail-above allows, 3 when a run\n"
    "file cannot be read, 4 when --strict refuses runs of different\n"
    "machines, 5 on another failure (see hostrangectl diff --help).\n";


/* The main --help: the commands come from the table. */
static void print_usage(void)
{
    fputs(usage_head, stdout);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        printf("  %-8s %s\n", commands[i]->name, commands[i]->summary);
    fputs(usage_tail, stdout);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "runtime-dir", required_argument, NULL, 'r' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const struct hrc_cmd *found;
    const char *dir = NULL, *cmd;
    int c, rc;

    /* diff, merge and dump --from allocate and free a key's values over
     * and over (tens of kilobytes to megabytes each). By default the C
     * library gives the top of the heap back to the system at each free
     * and large blocks are mappings of their own, so every key's arrays
     * were new pages to fault in and clear: two tenths of the CPU time of
     * a diff of two 250 MB runs went there. The process is short-lived, so
     * the heap is kept. */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    while ((c = getopt_long(argc, argv, "+:r:t:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            dir = optarg;
            break;
        case 't':
            hrc_timeout_ms = (int)hrc_parse_ms(NULL, "timeout",
                                                      optarg);
            break;
        case 'h':
            print_usage();
            return 0;
        case 'V':
            puts("hostrangectl " PACKAGE_VERSION);
            return 0;
        default:
            hrc_die_usage(NULL, c, argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl: no command (see --help)\n");
        return HRC_EXIT_USAGE;
    }
    if (hrp_runtime_dir(hrc_dir, sizeof hrc_dir, dir) != 0) {
        fprintf(stderr, "hostrangectl: runtime directory name too long\n");
        return HRC_EXIT_USAGE;
    }
    cmd = argv[optind];
    argc -= optind;
    argv += optind;
    optind = 0; /* restart getopt for the command's own options */
    found = hrc_cmd_find(commands, sizeof commands / sizeof commands[0],
                             cmd);
    if (found != NULL) {
        rc = found->run(argc, argv);
        hrc_close();
        return rc;
    }
    fprintf(stderr, "hostrangectl: unknown command '%s' (see --help)\n", cmd);
    return HRC_EXIT_USAGE;
}
