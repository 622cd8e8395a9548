/* hostrangectl merge: the exact union of run files (see ctl_cmd.h, run.h). */
#include "config.h"

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_options.h"
#include "ctl/ctl_save.h"
#include "ctl/ctl_exit.h"
#include "lib/util/options.h"
#include "lib/run/run.h"
#include "lib/run/runmerge.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char usage_merge[] =
    "Usage: hostrangectl merge -o OUT [--max-memory=SIZE] [--unsorted]\n"
    "                          [--allow-duplicates] [--meta KEY=VALUE]... IN...\n"
    "Join run files (hostrangectl save), such as those of test shards run on\n"
    "several machines, into one: the exact union of their samples. Keys are\n"
    "matched by node, operator, backend, phase and range; exact samples are\n"
    "joined and histograms added, and a key exact in one file and a\n"
    "histogram in another becomes a histogram. Report order follows the\n"
    "inputs in the order given. One calibration is kept per label (the one\n"
    "of the input saved last); clients, lost counts and each input's\n"
    "provenance are kept. OUT is written atomically (a temporary file, then\n"
    "a rename) or not at all, and may be one of the inputs.\n"
    "\n"
    "Every saved run carries an id, and a merged run the ids of its parts: an\n"
    "input holding a run that an input before it holds already (the same\n"
    "file given twice, a shard downloaded twice, a merge and one of its parts)\n"
    "is refused, naming both files, with exit status 3. A file written before\n"
    "ids were kept is known by the hash of its content.\n"
    "\n"
    "  -o, --output=FILE      the run file to write (required)\n"
    "      --max-memory=SIZE  bound the memory of the merge to SIZE and a few\n"
    "                         MiB (default 1G; K, M, G suffixes): half for the\n"
    "                         samples held, half for the room to sort and\n"
    "                         code the largest of them and to join keys; past\n"
    "                         it, the largest keys held become histograms\n"
    "                         (quantiles within 0.1%; count, mean, min and\n"
    "                         max stay exact), as in the daemon; a key found\n"
    "                         in one input only is copied as it is, never\n"
    "                         held; reading a key of an input also takes\n"
    "                         about ten times its size in the file\n"
    "      --unsorted         write exact samples unsorted, in the order they\n"
    "                         came (run format 2, as save --unsorted): faster\n"
    "                         where inputs share keys (their events are joined\n"
    "                         as they are), but larger and slower to diff;\n"
    "                         default: sorted\n"
    "      --allow-duplicates merge inputs holding the same run anyway (its\n"
    "                         samples then count twice), and say so\n"
    "  -m, --meta=KEY=VALUE   note KEY=VALUE in OUT; may be given many times\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "On a terminal, progress is shown on stderr. Every input is held open at\n"
    "once: merge lifts its limit on open files as far as it may.\n";

/* The merge's progress. */
struct progress {
    struct hrc_progress p;
    size_t file, files;
    const char *output;
};

/* The largest block a merge under max_memory takes from the heap: a
 * sixteenth of it, from 256 KiB to 32 MiB (the C library's most). */
static size_t merge_block(uint64_t max_memory)
{
    uint64_t b = max_memory / 16;

    return (size_t)(b < (256u << 10) ? 256u << 10
                                     : b > (32u << 20) ? 32u << 20 : b);
}

/* A merge holds every input open at once: lifts the soft limit on open
 * files (often 1024) towards the hard one, as far as nin inputs and a
 * few more need. Where it cannot, opening an input says so. */
static void raise_open_files(size_t nin)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)nin + 32;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
                      ? want
                      : rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* The merge's progress (hrr_runmerge_opts.progress): reading input `file`
 * of `files`, or writing `output`. The runs of the merge report at most
 * every 4 MiB, and each report is drawn. */
static void show_progress(void *ctx, enum hrr_runmerge_stage stage,
                          size_t file, uint64_t done, uint64_t size)
{
    struct progress *p = ctx;

    p->file = file;
    if (stage == HRR_RUNMERGE_SCAN_START)
        hrc_progress_init(&p->p);
    else if (stage == HRR_RUNMERGE_SCAN_END)
        hrc_progress_end(&p->p);
    else if (stage == HRR_RUNMERGE_WRITE)
        hrc_progress_show(&p->p, done, 1, "merge: writing %s, %llu MiB "
                              "(inputs: %llu MiB)", p->output,
                              (unsigned long long)(done >> 20),
                              (unsigned long long)(size >> 20));
    else
        hrc_progress_show(&p->p, done, 1, "merge: file %zu of %zu, %llu "
                              "of %llu MiB", p->file + 1, p->files,
                              (unsigned long long)(done >> 20),
                              (unsigned long long)(size >> 20));
}

/* A run that two inputs hold, merged anyway (--allow-duplicates). */
static void say_duplicate(void *ctx, const char *file, const char *id,
                          const char *other)
{
    (void)ctx;
    fprintf(stderr, "hostrangectl merge: %s holds run %s, which %s holds "
            "already: merged anyway (--allow-duplicates), its samples count "
            "twice\n", file, id, other);
}

/*
 * Merges o's inputs into o->output once (hrr_runmerge_once), reading
 * every record whole with `whole`, and says so on stdout. Returns what
 * hrr_runmerge_once returns; when an input could not be read again for
 * its rounds, why is said on stderr and err says what failed.
 */
static int merge_once(struct hrr_runmerge_opts *o, int whole, char *err,
                      size_t errlen)
{
    struct progress pr;
    struct hrr_runmerge_result res;
    int rc;

    memset(&pr, 0, sizeof pr);
    pr.files = o->nin;
    pr.output = o->output;
    o->progress = show_progress;
    o->ctx = &pr;
    rc = hrr_runmerge_once(o, whole, &res, err, errlen);
    if (rc != 0 && res.rounds_unread) {
        fprintf(stderr, "hostrangectl diff: %s\n", err);
        snprintf(err, errlen, "an input could not be read again for its "
                 "rounds");
    }
    if (rc == 0) {
        hrc_progress_end(&pr.p);
        printf("merged %zu files into %s: %u keys%s", o->nin, o->output,
               res.nkeys, res.compacted ? " (some kept as histograms for "
                                          "--max-memory)"
                                        : "");
        if (res.rounds > 1)
            printf(", %u rounds", res.rounds);
        putchar('\n');
    } else if (rc != -EAGAIN) {
        hrc_progress_end(&pr.p);
    }
    return rc;
}

/* --max-memory: a size of at least 1M into *n. Returns 0, or -EINVAL
 * after saying why. */
static int parse_max_memory(const char *v, uint64_t *n)
{
    if (hru_parse_size(v, 1, 1u << 20, UINT64_MAX >> 1, n) == 0)
        return 0;
    fprintf(stderr, "hostrangectl merge: bad --max-memory '%s' (a size of "
            "at least 1M)\n", v);
    return -EINVAL;
}

/* What the command line asks for: a merge (o filled, its meta to be
 * freed by hrr_meta_fini), the help (shown), or nothing, after a usage
 * error was said on stderr. */
enum merge_request { MERGE_RUN, MERGE_HELP_SHOWN, MERGE_USAGE_ERROR };

static enum merge_request parse_options(int argc, char **argv,
                                        struct hrr_runmerge_opts *o)
{
    enum { OPT_MEM = 256, OPT_UNSORTED, OPT_ALLOW_DUPLICATES };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "max-memory", required_argument, NULL, OPT_MEM },
        { "unsorted", no_argument, NULL, OPT_UNSORTED },
        { "allow-duplicates", no_argument, NULL, OPT_ALLOW_DUPLICATES },
        { "meta", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":o:m:h", longopts, NULL)) != -1) {
        if (c == 'o')
            o->output = optarg;
        else if (c == 'm')
            hrc_meta_add("merge", optarg, &o->meta);
        else if (c == OPT_MEM) {
            if (parse_max_memory(optarg, &o->max_memory) != 0)
                return MERGE_USAGE_ERROR;
        } else if (c == OPT_UNSORTED)
            o->format = HRR_FORMAT_EVENTS;
        else if (c == OPT_ALLOW_DUPLICATES)
            o->allow_duplicates = 1;
        else if (c == 'h') {
            fputs(usage_merge, stdout);
            return MERGE_HELP_SHOWN;
        } else
            hrc_die_usage("merge", c, argv[optind - 1]);
    }
    if (o->output == NULL || o->output[0] == '\0') {
        fprintf(stderr, "hostrangectl merge: no output file (-o OUT; see "
                "--help)\n");
        return MERGE_USAGE_ERROR;
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl merge: no input files (see --help)\n");
        return MERGE_USAGE_ERROR;
    }
    o->in = argv + optind;
    o->nin = (size_t)(argc - optind);
    return MERGE_RUN;
}

/* Exit status: 0 merged (or the help shown), 1 not merged (said why on
 * stderr), 2 a usage error, 3 an input holding a run another holds. */
int hrc_merge(int argc, char **argv)
{
    struct hrr_runmerge_opts o;
    enum merge_request req;
    char err[8400];
    int rc = 0;

    memset(&o, 0, sizeof o);
    o.max_memory = (uint64_t)1 << 30;
    o.format = 1;
    o.duplicate = say_duplicate;
    req = parse_options(argc, argv, &o);
    if (req == MERGE_RUN)
        rc = hrr_runmerge_ids(&o, err, sizeof err);
    if (req == MERGE_RUN && rc != 0) {
        fprintf(stderr, "hostrangectl merge: %s; %s not written\n",
                rc == -ENOMEM ? "out of memory" : err, o.output);
    } else if (req == MERGE_RUN) {
        /* Unlike the other commands (see main), a merge is held to its
         * budget: blocks above a sixteenth of it (a key's events as they
         * grow, a key's values to write) are mappings of their own, given
         * back when freed, and so is the top of the heap past that much,
         * so that what was freed is not kept. Smaller blocks (a key read
         * and decoded, over and over) are reused from the heap rather than
         * mapped and faulted in anew each time. */
        mallopt(M_MMAP_THRESHOLD, (int)merge_block(o.max_memory));
        mallopt(M_TRIM_THRESHOLD, (int)merge_block(o.max_memory));
        raise_open_files(o.nin);
        rc = merge_once(&o, 0, err, sizeof err);
        if (rc == -EAGAIN)
            rc = merge_once(&o, 1, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "hostrangectl merge: %s; %s not written\n",
                    rc == -ENOMEM ? "out of memory" : err, o.output);
    }
    hrr_meta_fini(&o.meta);
    hrr_runmerge_opts_fini(&o);
    if (req == MERGE_USAGE_ERROR)
        return HRC_EXIT_USAGE;
    return rc == 0 ? HRC_EXIT_OK
           : rc == -EEXIST ? HRC_EXIT_DUPLICATE : HRC_EXIT_NOT_MERGED;
}

const struct hrc_cmd hrc_cmd_merge = {
    "merge",
    "join run files (CI shards, many hosts) into one",
    usage_merge,
    hrc_merge,
};
