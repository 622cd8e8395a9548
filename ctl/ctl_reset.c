/* hostrangectl reset: drop samples (see ctl_cmd.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_conn.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_report.h"
#include "proto/hostrange.pb-c.h"
#include "proto/protocol.h"

#include <getopt.h>
#include <stdio.h>

static const char usage_reset[] =
    "Usage: hostrangectl reset [FILTER]...\n"
    "Drop the samples of every key, or of the keys the filters select (all\n"
    "filters must match). Client counters stay. With a state directory the\n"
    "reset is journaled, so a restart does not bring the samples back.\n"
    "\n"
    HRC_FILTER_HELP
    "  -h, --help           show this help and exit\n";

static int run_reset(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        HRC_FILTER_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    Hostrange__ControlRequest q = HOSTRANGE__CONTROL_REQUEST__INIT;
    Hostrange__ResetRequest rq = HOSTRANGE__RESET_REQUEST__INIT;
    struct hra_filter f = { NULL, NULL, NULL, NULL, 0 };
    Hostrange__ControlReply *rep;
    int c;

    while ((c = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        if (hrc_report_option("reset", c, optarg, &f, NULL))
            continue;
        if (c == 'h') {
            fputs(usage_reset, stdout);
            return 0;
        }
        hrc_die_usage("reset", c, argv[optind - 1]);
    }
    hrc_no_arguments("reset", argc, argv);
    rq.node_glob = (char *)(f.node ? f.node : "");
    rq.operator_glob = (char *)(f.op ? f.op : "");
    rq.backend_glob = (char *)(f.backend ? f.backend : "");
    rq.range_glob = (char *)(f.range ? f.range : "");
    rq.phase = f.phase;
    q.body_case = HOSTRANGE__CONTROL_REQUEST__BODY_RESET;
    q.reset = &rq;
    if (hrc_ask(&q, &rep, 0) != 0)
        return 1;
    printf("dropped %llu keys\n",
           (unsigned long long)(rep->reset ? rep->reset->keys : 0));
    hostrange__control_reply__free_unpacked(rep, NULL);
    return 0;
}

const struct hrc_cmd hrc_cmd_reset = {
    "reset",
    "drop the samples of every key, or of the keys selected",
    usage_reset,
    run_reset,
};
