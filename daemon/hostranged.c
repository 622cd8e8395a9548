/* hostranged: the hostrange daemon. Options and main. */
#include "config.h"

#include "daemon/server.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "Usage: hostranged [OPTION]...\n"
    "Collect range samples from instrumented processes and serve reports.\n"
    "\n"
    "Runs in the foreground until SIGTERM or SIGINT. Clients send batches to\n"
    "the socket `ingest` and hostrangectl talks to `control`, both in the\n"
    "runtime directory, which is created with mode 0700 when missing and\n"
    "refused when owned by another user, writable by group or others, or\n"
    "already served by another hostranged.\n"
    "\n"
    "Options:\n"
    "  -r, --runtime-dir=DIR  serve DIR (default: $HOSTRANGE_RUNTIME_DIR, else\n"
    "                         $XDG_RUNTIME_DIR/hostrange, else /run/hostrange\n"
    "                         for root and /tmp/hostrange-UID for others)\n"
    "  -q, --quiet            log nothing but fatal errors\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 on a runtime error, 2 on a usage\n"
    "error.\n";

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "runtime-dir", required_argument, NULL, 'r' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct hrd_server_opts o = { NULL, 0 };
    char err[4400];
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":r:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            o.runtime_dir = optarg;
            break;
        case 'q':
            o.quiet = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'V':
            puts("hostranged " PACKAGE_VERSION);
            return 0;
        default:
            fprintf(stderr, "hostranged: %s '%s' (see --help)\n",
                    c == ':' ? "missing value for option" : "unknown option",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hostranged: unexpected argument '%s' (see --help)\n",
                argv[optind]);
        return 2;
    }
    if (hrd_server_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "hostranged: %s\n", err);
        return 1;
    }
    return 0;
}
