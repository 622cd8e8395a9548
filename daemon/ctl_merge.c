/* hostrangectl merge: the exact union of run files (see ctl.h, run.h). */
#include "config.h"

#include "daemon/ctl.h"
#include "daemon/run.h"
#include "daemon/runmerge.h"
#include "proto/protocol.h"

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
    "                          [--meta KEY=VALUE]... IN...\n"
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
    "                         as they are), but up to 2.5x larger and two\n"
    "                         fifths slower to diff; default: sorted\n"
    "  -m, --meta=KEY=VALUE   note KEY=VALUE in OUT; may be given many times\n"
    "  -h, --help             show this help and exit\n"
    "\n"
    "On a terminal, progress is shown on stderr. Every input is held open at\n"
    "once: merge lifts its limit on open files as far as it may.\n";

/* The merge's progress: reading input `file` of `files`, or writing
 * `output`. The runs of the merge report at most every 4 MiB, and each
 * report is drawn. */
struct progress {
    struct hrd_ctl_progress p;
    size_t file, files;
    const char *output;
};

static void show_progress(void *ctx, uint64_t done, uint64_t size)
{
    struct progress *p = ctx;

    if (p->output != NULL)
        hrd_ctl_progress_show(&p->p, done, 1, "merge: writing %s, %llu MiB "
                              "(inputs: %llu MiB)", p->output,
                              (unsigned long long)(done >> 20),
                              (unsigned long long)(size >> 20));
    else
        hrd_ctl_progress_show(&p->p, done, 1, "merge: file %zu of %zu, %llu "
                              "of %llu MiB", p->file + 1, p->files,
                              (unsigned long long)(done >> 20),
                              (unsigned long long)(size >> 20));
}

static uint64_t parse_size(const char *v)
{
    unsigned long long n;
    char *end;
    int shift = 0;

    errno = 0;
    n = strtoull(v, &end, 10);
    if (end != v && end[0] != '\0' && end[1] == '\0') {
        switch (end[0]) {
        case 'K': case 'k': shift = 10; end++; break;
        case 'M': case 'm': shift = 20; end++; break;
        case 'G': case 'g': shift = 30; end++; break;
        default: break;
        }
    }
    if (errno != 0 || end == v || *end != '\0' || v[0] < '0' || v[0] > '9' ||
        n > (UINT64_MAX >> 1 >> shift) || (n << shift) < (1u << 20)) {
        fprintf(stderr, "hostrangectl merge: bad --max-memory '%s' (a size "
                "of at least 1M)\n", v);
        exit(2);
    }
    return (uint64_t)n << shift;
}

/* Copies s (borrowed strings) to the end of the sources. */
static int add_source(Hostrange__RunSource ***src, size_t *n,
                      Hostrange__RunSource *s)
{
    Hostrange__RunSource **ns = realloc(*src, (*n + 1) * sizeof *ns);

    if (ns == NULL)
        return -1;
    *src = ns;
    ns[(*n)++] = s;
    return 0;
}

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

/* What merge was asked to do. */
struct merge_opts {
    const char *output;
    char **in;
    size_t nin;
    uint64_t max_memory;
    unsigned format;
    Hostrange__RunMeta **meta;
    size_t nmeta;
};

/*
 * Merges once; with `whole`, every record is read whole when the inputs
 * are scanned. Returns 0 (merged), 1 (refused, said on stderr) or 2 (a key
 * read by its first bytes turned out to name itself differently further
 * on: merge again with whole set; nothing was written).
 */
static int merge_once(const struct merge_opts *o, int whole)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    Hostrange__RunEnd end = HOSTRANGE__RUN_END__INIT;
    Hostrange__RunHeader **hs = NULL;
    Hostrange__RunEnd **es = NULL;
    Hostrange__RunSource *own = NULL, **src = NULL;
    Hostrange__RunNodeLost *lm = NULL;
    struct hrd_agg agg;
    struct hrd_runmerge rm;
    struct hrd_run_writer w;
    struct progress pr = { { 0, 0, 0 }, 0, 0, NULL };
    const char *output = o->output;
    uint64_t *cal_time = NULL;
    size_t nsrc = 0, nin = o->nin, ncl = 0, ncal = 0, nclk = 0;
    char host[256], err[8400];
    int rc = 1, wrc;

    hrd_agg_init(&agg);
    agg.exact_cap = UINT64_MAX;
    /* Half the budget for the samples held, the other half for the room
     * to write the largest of them and to join keys (runmerge.c). */
    agg.max_bytes = (size_t)(o->max_memory / 2);
    if (hrd_runmerge_init(&rm, &agg, (int)o->format, nin) != 0)
        goto nomem;
    rm.whole = whole;
    hs = calloc(nin, sizeof *hs);
    es = calloc(nin, sizeof *es);
    own = calloc(nin, sizeof *own);
    if (hs == NULL || es == NULL || own == NULL)
        goto nomem;
    hrd_ctl_progress_init(&pr.p);
    pr.files = nin;
    for (size_t i = 0; i < nin; i++) {
        const char *path = o->in[i];
        pr.file = i;
        if (hrd_runmerge_scan(&rm, i, path, &hs[i], &es[i], show_progress,
                              &pr, err, sizeof err) != 0) {
            struct rlimit rl;

            hrd_ctl_progress_end(&pr.p);
            if (strstr(err, strerror(EMFILE)) != NULL &&
                getrlimit(RLIMIT_NOFILE, &rl) == 0)
                fprintf(stderr, "hostrangectl merge: %s (a merge holds its "
                        "%zu inputs open at once; this process may open "
                        "%llu files: raise the limit, ulimit -n, or merge "
                        "in stages); %s not written\n", err, nin,
                        (unsigned long long)rl.rlim_cur, output);
            else
                fprintf(stderr, "hostrangectl merge: %s; %s not written\n",
                        err, output);
            goto out;
        }
        if (hs[i]->n_sources > 0) {
            for (size_t j = 0; j < hs[i]->n_sources; j++)
                if (add_source(&src, &nsrc, hs[i]->sources[j]) != 0)
                    goto nomem;
        } else {
            hostrange__run_source__init(&own[i]);
            own[i].host = hs[i]->host;
            own[i].time_ns = hs[i]->time_ns;
            own[i].version = hs[i]->version;
            own[i].meta = hs[i]->meta;
            own[i].n_meta = hs[i]->n_meta;
            own[i].file = (char *)path;
            own[i].fingerprint = hs[i]->fingerprint;
            if (add_source(&src, &nsrc, &own[i]) != 0)
                goto nomem;
        }
        ncl += es[i]->n_clients;
        ncal += es[i]->n_calibrations;
        nclk += es[i]->n_clocks;
    }
    hrd_ctl_progress_end(&pr.p);
    wrc = hrd_runmerge_load(&rm, err, sizeof err);
    if (wrc == HRD_RUNMERGE_AGAIN) {
        rc = 2;
        goto out;
    }
    if (wrc != 0) {
        fprintf(stderr, "hostrangectl merge: %s; %s not written\n", err,
                output);
        goto out;
    }
    /* The end: every client; per label the calibration of the input saved
     * last; each clock once; the lost counts now in the aggregation. */
    end.clients = calloc(ncl + 1, sizeof *end.clients);
    end.calibrations = calloc(ncal + 1, sizeof *end.calibrations);
    end.clocks = calloc(nclk + 1, sizeof *end.clocks);
    lm = calloc(agg.str.n + 1, sizeof *lm);
    cal_time = calloc(ncal + 1, sizeof *cal_time);
    end.lost = calloc(agg.str.n + 1, sizeof *end.lost);
    if (end.clients == NULL || end.calibrations == NULL ||
        end.clocks == NULL || lm == NULL || end.lost == NULL ||
        cal_time == NULL)
        goto nomem;
    for (size_t i = 0; i < nin; i++) {
        for (size_t j = 0; j < es[i]->n_clients; j++)
            end.clients[end.n_clients++] = es[i]->clients[j];
        for (size_t j = 0; j < es[i]->n_clocks; j++) {
            size_t k;
            for (k = 0; k < end.n_clocks &&
                        strcmp(end.clocks[k], es[i]->clocks[j]) != 0; k++)
                ;
            if (k == end.n_clocks)
                end.clocks[end.n_clocks++] = es[i]->clocks[j];
        }
        for (size_t j = 0; j < es[i]->n_calibrations; j++) {
            Hostrange__Calibration *cal = es[i]->calibrations[j];
            size_t k;

            for (k = 0; k < end.n_calibrations &&
                        strcmp(end.calibrations[k]->label, cal->label) != 0;
                 k++)
                ;
            if (k == end.n_calibrations) {
                cal_time[k] = hs[i]->time_ns;
                end.calibrations[end.n_calibrations++] = cal;
            } else if (hs[i]->time_ns >= cal_time[k]) {
                cal_time[k] = hs[i]->time_ns; /* later inputs win ties */
                end.calibrations[k] = cal;
            }
        }
    }
    for (uint32_t id = 1; id <= agg.str.n; id++) {
        if (agg.str.lost[id - 1] == 0)
            continue;
        hostrange__run_node_lost__init(&lm[end.n_lost]);
        lm[end.n_lost].node_id = agg.str.s[id - 1];
        lm[end.n_lost].lost = agg.str.lost[id - 1];
        end.lost[end.n_lost] = &lm[end.n_lost];
        end.n_lost++;
    }
    hrd_ctl_run_provenance(&h, o->format, host, sizeof host, o->meta,
                           o->nmeta);
    h.sources = src;
    h.n_sources = nsrc;
    h.fingerprint = hrd_fingerprint_common(hs, nin);
    pr.output = output;
    if (hrd_run_create(&w, output, &h, err, sizeof err) != 0)
        goto write_failed;
    wrc = hrd_runmerge_write(&rm, &w, show_progress, &pr, err, sizeof err);
    if (wrc == HRD_RUNMERGE_AGAIN) {
        hrd_run_abort(&w);
        rc = 2;
        goto out;
    }
    if (wrc != 0 || hrd_run_commit(&w, &end, err, sizeof err) != 0)
        goto write_failed;
    hrd_ctl_progress_end(&pr.p);
    printf("merged %zu files into %s: %u keys%s\n", nin, output, agg.nkeys,
           agg.compacted ? " (some kept as histograms for --max-memory)"
                         : "");
    rc = 0;
    goto out;
write_failed:
    hrd_run_abort(&w);
    hrd_ctl_progress_end(&pr.p);
    fprintf(stderr, "hostrangectl merge: %s; %s not written\n", err, output);
    goto out;
nomem:
    fprintf(stderr, "hostrangectl merge: out of memory; %s not written\n",
            output);
out:
    free(hs);
    free(es);
    free(own);
    free(src);
    free(end.clients);
    free(end.calibrations);
    free(end.clocks);
    free(end.lost);
    free(lm);
    free(cal_time);
    hrd_runmerge_fini(&rm);
    hrd_agg_fini(&agg);
    return rc;
}

int hrd_ctl_merge(int argc, char **argv)
{
    enum { OPT_MEM = 256, OPT_UNSORTED };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "max-memory", required_argument, NULL, OPT_MEM },
        { "unsorted", no_argument, NULL, OPT_UNSORTED },
        { "meta", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct merge_opts o = { NULL, NULL, 0, (uint64_t)1 << 30, 1, NULL, 0 };
    int c, rc;

    while ((c = getopt_long(argc, argv, ":o:m:h", longopts, NULL)) != -1) {
        if (c == 'o')
            o.output = optarg;
        else if (c == 'm')
            hrd_ctl_meta_add("merge", optarg, &o.meta, &o.nmeta);
        else if (c == OPT_MEM)
            o.max_memory = parse_size(optarg);
        else if (c == OPT_UNSORTED)
            o.format = HRD_RUN_FORMAT;
        else if (c == 'h') {
            fputs(usage_merge, stdout);
            return 0;
        } else
            hrd_ctl_die_usage("merge", c, argv[optind - 1]);
    }
    if (o.output == NULL || o.output[0] == '\0') {
        fprintf(stderr, "hostrangectl merge: no output file (-o OUT; see "
                "--help)\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "hostrangectl merge: no input files (see --help)\n");
        return 2;
    }
    o.in = argv + optind;
    o.nin = (size_t)(argc - optind);
    /* Unlike the other commands (see main), a merge is held to its budget:
     * blocks above a sixteenth of it (a key's events as they grow, a
     * key's values to write) are mappings of their own, given back when
     * freed, and so is the top of the heap past that much, so that what
     * was freed is not kept. Smaller blocks (a key read and decoded, over
     * and over) are reused from the heap rather than mapped and faulted
     * in anew each time. */
    mallopt(M_MMAP_THRESHOLD, (int)merge_block(o.max_memory));
    mallopt(M_TRIM_THRESHOLD, (int)merge_block(o.max_memory));
    raise_open_files(o.nin);
    rc = merge_once(&o, 0);
    if (rc == 2)
        rc = merge_once(&o, 1);
    hrd_ctl_meta_free(o.meta, o.nmeta);
    return rc;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_merge = {
    "merge",
    "join run files (CI shards, many hosts) into one",
    usage_merge,
    hrd_ctl_merge,
};
