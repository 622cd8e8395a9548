/* hostranged: the hostrange daemon. Options and main. */
#include "config.h"

#include "daemon/server.h"
#include "lib/util/options.h"
#include "proto/protocol.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: hostranged [OPTION]...\n"
    "Collect range samples from instrumented processes and serve reports.\n"
    "\n"
    "Runs in the foreground until SIGTERM or SIGINT, which stop it cleanly\n"
    "(the state is written; exit status 0). Clients send batches to the\n"
    "socket `ingest` and hostrangectl talks to `control`, both in the\n"
    "runtime directory, which is created with mode 0700 (0750 with --group)\n"
    "when missing and refused when owned by another user, writable by group\n"
    "or others, or already served by another hostranged. A batch is at most\n"
    "4 MiB (larger ones are rejected and counted); every field is checked.\n"
    "What processes left in the directory's `spool` folder while no daemon\n"
    "answered is taken at start and whenever the folder changes, with the\n"
    "same checks; the folder is made mode 1700 (3730 and the group with\n"
    "--group), and a damaged or foreign file is renamed NAME.rejected.\n"
    "\n"
    "Options:\n"
    "  -r, --runtime-dir=DIR      serve DIR (default: $HOSTRANGE_RUNTIME_DIR,\n"
    "                             else $XDG_RUNTIME_DIR/hostrange, else\n"
    "                             /run/hostrange for root and\n"
    "                             /tmp/hostrange-UID for others)\n"
    "  -g, --group=GROUP          let the members of GROUP connect: the\n"
    "                             directory gets GROUP and mode 0750, the\n"
    "                             sockets mode 0660\n"
    "  -s, --state-dir=DIR        keep state in DIR (created 0700): every\n"
    "                             batch is journaled before it is\n"
    "                             acknowledged, and compacted into a snapshot\n"
    "                             now and then and at a stop; it is loaded at\n"
    "                             start. Without it, state lives in memory.\n"
    "                             When DIR cannot be written, batches are\n"
    "                             answered `retry` (clients keep them) and\n"
    "                             the daemon serves what it holds.\n"
    "      --fsync-interval=MS    sync the journal every MS milliseconds\n"
    "                             (default 1000; 0: before every\n"
    "                             acknowledgement). A written batch survives\n"
    "                             the daemon being killed either way; this\n"
    "                             bounds what a crash of the machine loses.\n"
    "      --snapshot-interval=S  compact the journal at least every S\n"
    "                             seconds (default 300)\n"
    "      --journal-max=SIZE     compact when the journal exceeds SIZE\n"
    "                             (default 256M)\n"
    "      --exact-cap=N          keep up to N events per key exactly\n"
    "                             (default 1000000); beyond, a key moves to a\n"
    "                             log-linear histogram (quantiles within\n"
    "                             0.1%; count, mean, min, max stay exact)\n"
    "      --max-memory=SIZE      memory budget of the samples (default 1G);\n"
    "                             when reached, the largest keys move to\n"
    "                             histograms first, and when nothing is left\n"
    "                             to move, batches are rejected and counted\n"
    "      --dump-page=N          answer dumps in pages of about N values\n"
    "                             (default 2097152), so that a large dump\n"
    "                             holds up arriving batches only briefly\n"
    "  -l, --load=FILE            start with the run file FILE (hostrangectl\n"
    "                             save, merge) loaded, to serve a saved run;\n"
    "                             new samples add to it. Not with\n"
    "                             --state-dir\n"
    "  -q, --quiet                log nothing but fatal errors\n"
    "  -h, --help                 show this help and exit\n"
    "  -V, --version              show the version and exit\n"
    "\n"
    "SIZE is bytes, or a number followed by K, M or G (powers of 1024).\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 on a runtime error, 2 on a usage\n"
    "error.\n";

/* The exit statuses --help gives. */
enum exit_status {
    STATUS_STOPPED = 0,      /* a clean stop, or --help, --version */
    STATUS_RUNTIME_ERROR = 1,
    STATUS_USAGE_ERROR = 2,
};

/* Says that v is no value for --opt (`what` says what is). Returns
 * -EINVAL. */
static int bad_value(const char *opt, const char *v, const char *what)
{
    fprintf(stderr, "hostranged: bad value '%s' for --%s (%s; see --help)\n",
            v, opt, what);
    return -EINVAL;
}

/* A whole number in [min, max], with an optional K/M/G suffix when
 * `suffix`, into *n. Returns 0, or -EINVAL after saying why. */
static int parse_num(const char *opt, const char *v, int suffix, uint64_t min,
                     uint64_t max, const char *what, uint64_t *n)
{
    if (hru_parse_size(v, suffix, min, max, n) != 0)
        return bad_value(opt, v, what);
    return 0;
}

/* The long options without a short form. */
enum { OPT_FSYNC = 256, OPT_SNAP, OPT_JMAX, OPT_CAP, OPT_MEM, OPT_PAGE };

/* Sets option c of the server's, with its value v (NULL for --quiet), in
 * o. Returns 0; -EINVAL after saying why v will not do; or -ENOENT when c
 * is none of them (getopt_long's '?' or ':'). */
static int set_option(struct hrd_server_opts *o, int c, const char *v)
{
    struct group *gr;
    uint64_t n;

    switch (c) {
    case 'r':
        o->runtime_dir = v;
        return 0;
    case 'g':
        if ((gr = getgrnam(v)) == NULL)
            return bad_value("group", v, "no such group");
        o->gid = gr->gr_gid;
        return 0;
    case 's':
        if (v[0] == '\0')
            return bad_value("state-dir", v, "a directory");
        o->state_dir = v;
        return 0;
    case 'l':
        if (v[0] == '\0')
            return bad_value("load", v, "a run file");
        o->load = v;
        return 0;
    case 'q':
        o->quiet = 1;
        return 0;
    case OPT_FSYNC:
        if (parse_num("fsync-interval", v, 0, 0, 3600000,
                      "milliseconds, 0 to 3600000", &n) != 0)
            return -EINVAL;
        o->state.fsync_interval_ms = n;
        return 0;
    case OPT_SNAP:
        if (parse_num("snapshot-interval", v, 0, 1, 604800,
                      "seconds, 1 to 604800", &n) != 0)
            return -EINVAL;
        o->state.snapshot_interval_ms = 1000 * n;
        return 0;
    case OPT_JMAX:
        if (parse_num("journal-max", v, 1, 4096, (uint64_t)1 << 40,
                      "a size of at least 4K", &n) != 0)
            return -EINVAL;
        o->state.journal_max_bytes = n;
        return 0;
    case OPT_CAP:
        if (parse_num("exact-cap", v, 0, 1, (uint64_t)1 << 40,
                      "events, at least 1", &n) != 0)
            return -EINVAL;
        o->exact_cap = n;
        return 0;
    case OPT_MEM:
        if (parse_num("max-memory", v, 1, 1u << 20, SIZE_MAX / 2,
                      "a size of at least 1M", &n) != 0)
            return -EINVAL;
        o->max_memory = (size_t)n;
        return 0;
    case OPT_PAGE:
        if (parse_num("dump-page", v, 0, 1, (uint64_t)1 << 40,
                      "values, at least 1", &n) != 0)
            return -EINVAL;
        o->dump_page = n;
        return 0;
    default:
        return -ENOENT;
    }
}

/* What the command line asks for: to serve (with o filled), nothing more
 * (--help or --version was shown), or nothing at all (a usage error was
 * said on stderr). */
enum request { REQUEST_SERVE, REQUEST_SHOWN, REQUEST_USAGE_ERROR };

static enum request parse_options(int argc, char **argv,
                                  struct hrd_server_opts *o)
{
    static const struct option longopts[] = {
        { "runtime-dir", required_argument, NULL, 'r' },
        { "group", required_argument, NULL, 'g' },
        { "state-dir", required_argument, NULL, 's' },
        { "fsync-interval", required_argument, NULL, OPT_FSYNC },
        { "snapshot-interval", required_argument, NULL, OPT_SNAP },
        { "journal-max", required_argument, NULL, OPT_JMAX },
        { "exact-cap", required_argument, NULL, OPT_CAP },
        { "max-memory", required_argument, NULL, OPT_MEM },
        { "dump-page", required_argument, NULL, OPT_PAGE },
        { "load", required_argument, NULL, 'l' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    char buf[3];
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":r:g:s:l:qhV", longopts, NULL)) !=
           -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return REQUEST_SHOWN;
        }
        if (c == 'V') {
            puts("hostranged " PACKAGE_VERSION);
            return REQUEST_SHOWN;
        }
        rc = set_option(o, c, optarg);
        if (rc == -ENOENT)
            fprintf(stderr, "hostranged: %s '%s' (see --help)\n",
                    c == ':' ? "missing value for option" : "unknown option",
                    hru_getopt_culprit(c, optopt, argv[optind - 1], buf));
        if (rc != 0)
            return REQUEST_USAGE_ERROR;
    }
    if (optind < argc) {
        fprintf(stderr, "hostranged: unexpected argument '%s' (see --help)\n",
                argv[optind]);
        return REQUEST_USAGE_ERROR;
    }
    if (o->load != NULL && o->state_dir != NULL) {
        fprintf(stderr, "hostranged: --load and --state-dir cannot be used "
                "together (see --help)\n");
        return REQUEST_USAGE_ERROR;
    }
    return REQUEST_SERVE;
}

int main(int argc, char **argv)
{
    struct hrd_server_opts o = {
        .gid = (gid_t)-1,
        .state = { 1000, 300000, 256u << 20 },
    };
    char err[4400];

    /* Replies of a few megabytes (a page of a save or a dump) are built,
     * sent and freed one after another. By default the C library maps
     * each of them afresh and unmaps it at its free, so that every page is
     * new memory to fault in and clear. From the heap they reuse the same
     * pages; a few megabytes more stay resident. (The keys' own large
     * buffers are mappings of their own, agg.c, and unaffected.) */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    switch (parse_options(argc, argv, &o)) {
    case REQUEST_SHOWN:
        return STATUS_STOPPED;
    case REQUEST_USAGE_ERROR:
        return STATUS_USAGE_ERROR;
    case REQUEST_SERVE:
        break;
    }
    if (hrd_server_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "hostranged: %s\n", err);
        return STATUS_RUNTIME_ERROR;
    }
    return STATUS_STOPPED;
}
