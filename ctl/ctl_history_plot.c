/* hostrangectl history plot: the history as a page in a directory. Its
 * options, the history opened and the directory made, the page written by
 * lib/history (page.h), and what it says. */
#include "config.h"

#include "ctl/ctl_exit.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_report.h"
#include "ctl/ctl_history.h"
#include "lib/history/history.h"
#include "lib/history/page.h"
#include "lib/stat/changepoint.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>


const char hrc_history_usage_plot[] =
    "Usage: hostrangectl history plot [--db DB] -o DIR [FILTER]...\n"
    "                               [--machine GLOB] [--alpha P] [--window N]\n"
    "Write the history as a page, DIR/index.html, that opens in a browser\n"
    "with nothing else (no network, no external script or font), and its\n"
    "charts' data in DIR/data/, a file per chunk of charts that the page\n"
    "loads when one of them comes into view or the filter finds it. A\n"
    "chart per node, phase and range: its median run by run labelled with\n"
    "the short commit (the band is p10 to p90), a line per machine with a\n"
    "legend, the runs in the history's order. The page opens on the\n"
    "findings that history detect reports (the same look, the same rule),\n"
    "each with its charts, the layer its change starts in first, its\n"
    "change points marked as steps; then every other chart, node by node.\n"
    "Hovering a point shows its commit, time, host, kernel, median,\n"
    "p10-p90 and count; where a line's kernel changes, a dashed mark says\n"
    "from what to what. The filter box finds any chart by name.\n"
    "\n"
    "      --db=DB          the history (see hostrangectl history add --help)\n"
    HRC_HISTORY_READ_HELP
    "  -o, --output=DIR     the directory to write in: DIR/index.html and\n"
    "                       DIR/data/NNNNNN.js (made when missing; an\n"
    "                       earlier page there is replaced: its index.html\n"
    "                       removed first and written last, other files\n"
    "                       left as they are)\n"
    HRC_FILTER_HELP
    "      --machine=GLOB   only machines matching GLOB\n"
    "  -a, --alpha=P        detect's false discovery rate\n"
    "  -w, --window=N       detect's fewest runs a level must last\n"
    "  -h, --help           show this help and exit\n";

enum { OPT_DB = 256, OPT_MACHINE };

int hrc_history_plot(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "db", required_argument, NULL, OPT_DB },
        { "output", required_argument, NULL, 'o' },
        HRC_FILTER_LONGOPTS,
        { "machine", required_argument, NULL, OPT_MACHINE },
        { "alpha", required_argument, NULL, 'a' },
        { "window", required_argument, NULL, 'w' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *cmd = "history plot", *db = NULL, *out = NULL;
    struct hrs_cp_opts cp = { .alpha = HRS_CP_ALPHA_DEFAULT,
                              .window = HRS_CP_WINDOW_DEFAULT,
                              .min_change = HRS_CP_MIN_CHANGE_DEFAULT };
    struct hra_filter f;
    const char *machine = NULL;
    struct hrh_page_opts o;
    struct hrh_page_result res;
    struct hrh_history *h;
    char err[4096], name[1024], title[1100], path[4096];
    struct stat st;
    int c, rc;

    memset(&f, 0, sizeof f);
    while ((c = getopt_long(argc, argv, ":o:n:a:w:h", longopts, NULL)) !=
           -1) {
        if (c == OPT_DB) {
            db = hrc_history_dsn(cmd, optarg);
        } else if (c == 'o') {
            out = optarg;
        } else if (c == OPT_MACHINE) {
            machine = optarg;
        } else if (c == 'a' || c == 'w') {
            if (hrc_history_cp_option(cmd, c, optarg, &cp) != 0)
                return HRC_EXIT_USAGE;
        } else if (c == 'h') {
            fputs(hrc_history_usage_plot, stdout);
            return 0;
        } else if (!hrc_report_option(cmd, c, optarg, &f, NULL)) {
            hrc_die_usage(cmd, c, argv[optind - 1]);
        }
    }
    if (out == NULL || out[0] == '\0' || optind < argc) {
        fprintf(stderr, "hostrangectl %s: %s (see --help)\n", cmd,
                out == NULL || out[0] == '\0'
                    ? "give the directory to write in, -o DIR"
                    : "unexpected argument");
        return HRC_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "%s/index.html", out);
    /* The history first: a missing one makes no directory either. */
    db = hrc_history_db(db);
    if ((rc = hrc_history_open(cmd, db, HRH_READ, &h)) != 0)
        return rc;
    if (mkdir(out, 0777) != 0 &&
        (errno != EEXIST || stat(out, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "hostrangectl %s: cannot make %s: %s\n", cmd, out,
                strerror(errno == EEXIST ? ENOTDIR : errno));
        hrh_close(h);
        return HRC_EXIT_FAILED;
    }
    hrh_name(db, name, sizeof name);
    snprintf(title, sizeof title, "hostrange history: %s", name);
    o = (struct hrh_page_opts){ &f, machine, out, &cp, title };
    rc = hrh_page_write(h, &o, &res, err, sizeof err);
    hrh_close(h);
    if (rc == -ENOMEM) {
        fprintf(stderr, "hostrangectl %s: out of memory\n", cmd);
        return HRC_EXIT_FAILED;
    }
    /* A page that cannot be written is said of its file alone; the
     * history's name goes with what the history did. */
    if (rc != 0 && res.write_failed) {
        fprintf(stderr, "hostrangectl %s: %s\n", cmd, err);
        return HRC_EXIT_FAILED;
    }
    if (rc != 0) {
        fprintf(stderr, "hostrangectl %s: %s: %s\n", cmd, name, err);
        return HRC_EXIT_UNREADABLE;
    }
    printf("wrote %s: %zu series, %zu %s\n", path, res.nseries, res.nfindings,
           res.nfindings == 1 ? "finding" : "findings");
    return 0;
}
