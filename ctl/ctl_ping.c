/* hostrangectl ping: whether the daemon answers (see ctl_cmd.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_options.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <getopt.h>
#include <stdio.h>

static const char usage_ping[] =
    "Usage: hostrangectl ping [--wait=MS]\n"
    "Check that the daemon answers; print its pid.\n"
    "\n"
    "  -w, --wait=MS  keep trying for up to MS milliseconds while no daemon\n"
    "                 answers (for scripts that have just started one)\n"
    "  -h, --help     show this help and exit\n";

static int run_ping(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "wait", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, wait_ms = 0;

    while ((c = getopt_long(argc, argv, ":w:h", longopts, NULL)) != -1) {
        if (c == 'w') {
            wait_ms = (int)hrc_parse_ms("ping", "wait", optarg);
        } else if (c == 'h') {
            fputs(usage_ping, stdout);
            return 0;
        } else {
            hrc_die_usage("ping", c, argv[optind - 1]);
        }
    }
    hrc_no_arguments("ping", argc, argv);
    return hrc_ping_wait(wait_ms, 0);
}

const struct hrc_cmd hrc_cmd_ping = {
    "ping",
    "check that the daemon answers",
    usage_ping,
    run_ping,
};
