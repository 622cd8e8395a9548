/* hostrangectl merge: the exact union of run files (see ctl.h, run.h). */
#include "config.h"

#include "ctl/ctl.h"
#include "lib/agg/agg_impl.h"
#include "ctl/ctl_rounds.h"
#include "lib/util/options.h"
#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/runid.h"
#include "lib/run/runmerge.h"
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
    int allow_duplicates;
    /* The runs' identity (check_ids): each input's id, the ids of the runs
     * the output holds (each once), and the output's id. */
    char (*ids)[HRD_RUNID_LEN + 1];
    char **parts;
    size_t nparts;
    char id[HRD_RUNID_LEN + 1];
};

/*
 * One merge, from the scan of the inputs to the output written: the
 * aggregation the inputs are read into, each input's header and end (kept
 * by rm), and the provenance of the output, one RunSource per run merged
 * (borrowed from the inputs' headers, or made here for an input that has
 * none of its own).
 */
struct merge {
    const struct merge_opts *o;
    struct hrd_agg agg;
    struct hrd_runmerge rm;
    Hostrange__RunHeader **headers;
    Hostrange__RunEnd **ends;
    Hostrange__RunSource *own_sources;  /* [i]: input i as a source */
    Hostrange__RunSource **sources;
    size_t nsources;
    struct progress pr;
};

/* Starts a merge of o's inputs, reading every record whole when `whole`.
 * Returns 0 or -ENOMEM; merge_fini is due either way. */
static int merge_init(struct merge *m, const struct merge_opts *o, int whole)
{
    memset(m, 0, sizeof *m);
    m->o = o;
    hrd_agg_init(&m->agg);
    /* Half the budget for the samples held, the other half for the room
     * to write the largest of them and to join keys (runmerge.c). */
    m->agg.max_bytes = (size_t)(o->max_memory / 2);
    if (hrd_runmerge_init(&m->rm, &m->agg, (int)o->format, o->nin) != 0)
        return -ENOMEM;
    m->rm.whole = whole;
    m->headers = calloc(o->nin, sizeof *m->headers);
    m->ends = calloc(o->nin, sizeof *m->ends);
    m->own_sources = calloc(o->nin, sizeof *m->own_sources);
    if (m->headers == NULL || m->ends == NULL || m->own_sources == NULL)
        return -ENOMEM;
    return 0;
}

static void merge_fini(struct merge *m)
{
    free(m->headers);
    free(m->ends);
    free(m->own_sources);
    free(m->sources);
    hrd_runmerge_fini(&m->rm);
    hrd_agg_fini(&m->agg);
}

/*
 * Scans every input, in order. Returns 0; -EMFILE when an input could not
 * be opened for the limit on open files; or -EIO for any other input that
 * could not be read. err then says why (with the limit, for -EMFILE).
 */
static int scan_inputs(struct merge *m, char *err, size_t errlen)
{
    struct rlimit rl;
    size_t len;

    hrd_ctl_progress_init(&m->pr.p);
    m->pr.files = m->o->nin;
    for (size_t i = 0; i < m->o->nin; i++) {
        m->pr.file = i;
        if (hrd_runmerge_scan(&m->rm, i, m->o->in[i], &m->headers[i],
                              &m->ends[i], show_progress, &m->pr, err,
                              errlen) == 0)
            continue;
        if (strstr(err, strerror(EMFILE)) == NULL)
            return -EIO;
        len = strlen(err);
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
            snprintf(err + len, errlen - len, " (a merge holds its %zu "
                     "inputs open at once; this process may open %llu "
                     "files: raise the limit, ulimit -n, or merge in "
                     "stages)", m->o->nin, (unsigned long long)rl.rlim_cur);
        return -EMFILE;
    }
    hrd_ctl_progress_end(&m->pr.p);
    return 0;
}

/* Appends s (borrowed) to the output's sources. Returns 0 or -ENOMEM. */
static int add_source(struct merge *m, Hostrange__RunSource *s)
{
    Hostrange__RunSource **ns;

    ns = realloc(m->sources, (m->nsources + 1) * sizeof *ns);
    if (ns == NULL)
        return -ENOMEM;
    m->sources = ns;
    ns[m->nsources++] = s;
    return 0;
}

/* The output's provenance: the sources of each input that has them (a
 * merged run), else the input itself as one. Returns 0 or -ENOMEM. */
static int collect_sources(struct merge *m)
{
    Hostrange__RunSource *own = m->own_sources;

    for (size_t i = 0; i < m->o->nin; i++) {
        const Hostrange__RunHeader *h = m->headers[i];

        for (size_t j = 0; j < h->n_sources; j++) {
            if (add_source(m, h->sources[j]) != 0)
                return -ENOMEM;
        }
        if (h->n_sources > 0)
            continue;
        hostrange__run_source__init(&own[i]);
        own[i].host = h->host;
        own[i].time_ns = h->time_ns;
        own[i].version = h->version;
        own[i].meta = h->meta;
        own[i].n_meta = h->n_meta;
        own[i].file = m->o->in[i];
        own[i].fingerprint = h->fingerprint;
        own[i].id = m->o->ids[i];
        if (add_source(m, &own[i]) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Loads the keys to merge. Returns 0; -EAGAIN when the merge is to be
 * done again reading every record whole (hrd_runmerge_load); or -EIO with
 * the reason in err. */
static int load_keys(struct merge *m, char *err, size_t errlen)
{
    int rc = hrd_runmerge_load(&m->rm, err, errlen);

    if (rc == HRD_RUNMERGE_AGAIN)
        return -EAGAIN;
    return rc == 0 ? 0 : -EIO;
}

/*
 * The merged run's end: every client; each clock once; per label the
 * calibration of the input saved last; the lost counts now in the
 * aggregation. The clients, clocks and calibrations are borrowed from the
 * inputs' ends and the node ids from the aggregation; merged_end_fini
 * frees the arrays only.
 */
struct merged_end {
    Hostrange__RunEnd end;
    struct hrd_ctl_rounds rounds;  /* what end.round_keys points to */
    Hostrange__RunNodeLost *lost;  /* what end.lost points to */
    uint64_t *cal_time_ns;         /* [k]: time of end.calibrations[k]'s
                                      input */
};

static void merged_end_fini(struct merged_end *e)
{
    free(e->end.clients);
    free(e->end.calibrations);
    free(e->end.clocks);
    free(e->end.lost);
    free(e->lost);
    free(e->cal_time_ns);
    hrd_ctl_rounds_fini(&e->rounds);
}

static void add_clock(Hostrange__RunEnd *end, char *clock)
{
    for (size_t k = 0; k < end->n_clocks; k++) {
        if (strcmp(end->clocks[k], clock) == 0)
            return;
    }
    end->clocks[end->n_clocks++] = clock;
}

/* Keeps cal, of an input saved at time_ns, unless the calibration of its
 * label kept so far is of an input saved later (later inputs win ties). */
static void add_calibration(struct merged_end *e, Hostrange__Calibration *cal,
                            uint64_t time_ns)
{
    Hostrange__RunEnd *end = &e->end;
    size_t k;

    for (k = 0; k < end->n_calibrations &&
                strcmp(end->calibrations[k]->label, cal->label) != 0;
         k++)
        ;
    if (k == end->n_calibrations) {
        e->cal_time_ns[k] = time_ns;
        end->calibrations[end->n_calibrations++] = cal;
    } else if (time_ns >= e->cal_time_ns[k]) {
        e->cal_time_ns[k] = time_ns;
        end->calibrations[k] = cal;
    }
}

/* Notes the events lost under each node id of aggregation a. */
static void add_lost(struct merged_end *e, const struct hrd_agg *a)
{
    Hostrange__RunEnd *end = &e->end;

    for (uint32_t id = 1; id <= a->str.n; id++) {
        Hostrange__RunNodeLost *l = &e->lost[end->n_lost];

        if (a->str.lost[id - 1] == 0)
            continue;
        hostrange__run_node_lost__init(l);
        l->node_id = a->str.s[id - 1];
        l->lost = a->str.lost[id - 1];
        end->lost[end->n_lost++] = l;
    }
}

/* The merged run's rounds (ctl_rounds.h): each input is a round of the
 * keys it shares with another, and an input's own rounds carry over; the
 * inputs are read again only when they share keys. Returns 0, -ENOMEM,
 * or -EIO after saying why. */
static int merged_rounds(struct merged_end *e, const struct merge *m)
{
    int carried = 0, rc;

    for (size_t i = 0; i < m->o->nin; i++)
        carried |= m->ends[i]->n_round_keys > 0;
    if (!carried && m->rm.nrec <= m->agg.nkeys)
        return 0;
    rc = hrd_ctl_rounds_build(&e->rounds, m->o->in, m->o->nin, m->ends,
                              m->rm.nrec > m->agg.nkeys);
    if (rc == 0)
        hrd_ctl_rounds_put(&e->rounds, &e->end);
    return rc == HRD_CTL_TOLD ? -EIO : rc;
}

/* Builds e from the merge's inputs and aggregation. Returns 0 or -ENOMEM;
 * merged_end_fini is due either way. */
static int merged_end_build(struct merged_end *e, const struct merge *m)
{
    Hostrange__RunEnd *end = &e->end;
    size_t nin = m->o->nin, nclients = 0, ncalibrations = 0, nclocks = 0;
    uint32_t nnodes = m->agg.str.n;

    memset(e, 0, sizeof *e);
    hostrange__run_end__init(end);
    for (size_t i = 0; i < nin; i++) {
        nclients += m->ends[i]->n_clients;
        ncalibrations += m->ends[i]->n_calibrations;
        nclocks += m->ends[i]->n_clocks;
    }
    end->clients = calloc(nclients + 1, sizeof *end->clients);
    end->calibrations = calloc(ncalibrations + 1,
                               sizeof *end->calibrations);
    end->clocks = calloc(nclocks + 1, sizeof *end->clocks);
    end->lost = calloc(nnodes + 1, sizeof *end->lost);
    e->lost = calloc(nnodes + 1, sizeof *e->lost);
    e->cal_time_ns = calloc(ncalibrations + 1, sizeof *e->cal_time_ns);
    if (end->clients == NULL || end->calibrations == NULL ||
        end->clocks == NULL || end->lost == NULL || e->lost == NULL ||
        e->cal_time_ns == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < nin; i++) {
        const Hostrange__RunEnd *in = m->ends[i];

        for (size_t j = 0; j < in->n_clients; j++)
            end->clients[end->n_clients++] = in->clients[j];
        for (size_t j = 0; j < in->n_clocks; j++)
            add_clock(end, in->clocks[j]);
        for (size_t j = 0; j < in->n_calibrations; j++)
            add_calibration(e, in->calibrations[j], m->headers[i]->time_ns);
    }
    add_lost(e, &m->agg);
    return merged_rounds(e, m);
}

/*
 * Writes the output: a header with the merge's provenance, every key, and
 * end, then renames it into place. Returns 0; -EAGAIN when the merge is to
 * be done again reading every record whole (hrd_runmerge_write); or -EIO
 * with the reason in err. Nothing is left of the output unless it returns 0.
 */
static int write_output(struct merge *m, Hostrange__RunEnd *end, char *err,
                        size_t errlen)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    struct hrd_run_writer w;
    char host[256];
    int rc;

    hrd_ctl_run_provenance(&h, m->o->format, host, sizeof host, m->o->meta,
                           m->o->nmeta);
    h.sources = m->sources;
    h.n_sources = m->nsources;
    h.fingerprint = hrd_fingerprint_common(m->headers, m->o->nin);
    h.id = (char *)m->o->id;
    h.part_ids = m->o->parts;
    h.n_part_ids = m->o->nparts;
    m->pr.output = m->o->output;
    if (hrd_run_create(&w, m->o->output, &h, err, errlen) != 0)
        rc = -EIO;
    else if ((rc = hrd_runmerge_write(&m->rm, &w, show_progress, &m->pr, err,
                                      errlen)) != 0)
        rc = rc == HRD_RUNMERGE_AGAIN ? -EAGAIN : -EIO;
    else if (hrd_run_commit(&w, end, err, errlen) != 0)
        rc = -EIO;
    if (rc != 0)
        hrd_run_abort(&w);
    return rc;
}

/*
 * Merges o's inputs into o->output once, reading every record whole when
 * the inputs are scanned with `whole`, and says so on stdout. Returns 0;
 * -EAGAIN when a key read by its first bytes turned out to name itself
 * differently further on, so that the merge is to be done again with
 * `whole` set (nothing was written, nothing said); or another negative
 * errno, nothing written, with the reason in err (left alone for -ENOMEM).
 */
static int merge_once(const struct merge_opts *o, int whole, char *err,
                      size_t errlen)
{
    struct merge m;
    struct merged_end e;
    int rc;

    memset(&e, 0, sizeof e);
    rc = merge_init(&m, o, whole);
    if (rc == 0)
        rc = scan_inputs(&m, err, errlen);
    if (rc == 0)
        rc = collect_sources(&m);
    if (rc == 0)
        rc = load_keys(&m, err, errlen);
    if (rc == 0) {
        rc = merged_end_build(&e, &m);
        if (rc == -EIO)
            snprintf(err, errlen, "an input could not be read again for "
                     "its rounds");
    }
    if (rc == 0)
        rc = write_output(&m, &e.end, err, errlen);
    if (rc == 0) {
        hrd_ctl_progress_end(&m.pr.p);
        printf("merged %zu files into %s: %u keys%s", o->nin, o->output,
               m.agg.nkeys, m.agg.compacted ? " (some kept as histograms "
                                              "for --max-memory)"
                                            : "");
        if (e.end.rounds > 1)
            printf(", %u rounds", e.end.rounds);
        putchar('\n');
    } else if (rc != -EAGAIN) {
        hrd_ctl_progress_end(&m.pr.p);
    }
    merged_end_fini(&e);
    merge_fini(&m);
    return rc;
}

/* The index of id among o's parts, or o->nparts. */
static size_t find_part(const struct merge_opts *o, const char *id)
{
    size_t k;

    for (k = 0; k < o->nparts && strcmp(o->parts[k], id) != 0; k++)
        ;
    return k;
}

/*
 * Reads each input's id and parts (runid.h) into o, and the output's id.
 * An input holding a run an input before it holds already is refused:
 * returns -EEXIST with the reason in err (both files named), unless
 * o->allow_duplicates, when it is said on stderr and the run is kept once.
 * An input that cannot be read is left for the merge to report. Returns 0,
 * -EEXIST or -ENOMEM; o->parts (each part borrowed from o->ids or from a
 * header kept in *headers[i]) is freed by ids_fini.
 */
static int check_ids(struct merge_opts *o, Hostrange__RunHeader **headers,
                     size_t **owner, char *err, size_t errlen)
{
    size_t cap = 0;

    o->ids = calloc(o->nin, sizeof *o->ids);
    *owner = NULL;
    if (o->ids == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < o->nin; i++) {
        struct hrd_run_reader r;
        Hostrange__RunHeader *h;
        char **mine;
        size_t nmine;

        if (hrd_run_open(&r, o->in[i], &h, err, errlen) != 0)
            continue;
        hrd_run_close(&r);
        headers[i] = h;
        if (hrd_runid_of_file(o->in[i], h, o->ids[i], err, errlen) != 0)
            continue;
        mine = h->n_part_ids > 0 ? h->part_ids : NULL;
        nmine = h->n_part_ids > 0 ? h->n_part_ids : 1;
        for (size_t j = 0; j < nmine; j++) {
            char *id = mine != NULL ? mine[j] : o->ids[i];
            size_t k = find_part(o, id);

            if (k < o->nparts) {
                const char *other = o->in[(*owner)[k]];

                if (!o->allow_duplicates) {
                    snprintf(err, errlen, "%s holds run %s, which %s holds "
                             "already (the same run twice would count its "
                             "samples twice; --allow-duplicates merges "
                             "anyway)", o->in[i], id, other);
                    return -EEXIST;
                }
                fprintf(stderr, "hostrangectl merge: %s holds run %s, which "
                        "%s holds already: merged anyway "
                        "(--allow-duplicates), its samples count twice\n",
                        o->in[i], id, other);
                continue;
            }
            if (o->nparts == cap) {
                size_t ncap = cap ? 2 * cap : 16;
                char **np = realloc(o->parts, ncap * sizeof *np);
                size_t *no = realloc(*owner, ncap * sizeof *no);

                if (np != NULL)
                    o->parts = np;
                if (no != NULL)
                    *owner = no;
                if (np == NULL || no == NULL)
                    return -ENOMEM;
                cap = ncap;
            }
            (*owner)[o->nparts] = i;
            o->parts[o->nparts++] = id;
        }
    }
    return 0;
}

/* The output's id: the hash of its parts (taken in a sorted copy, so
 * that part_ids keep the order of the inputs). Returns 0 or -ENOMEM. */
static int merged_id(struct merge_opts *o)
{
    char **sorted = malloc((o->nparts + 1) * sizeof *sorted);

    if (sorted == NULL)
        return -ENOMEM;
    memcpy(sorted, o->parts, o->nparts * sizeof *sorted);
    hrd_runid_of_parts(sorted, o->nparts, o->id);
    free(sorted);
    return 0;
}

/* --max-memory: a size of at least 1M into *n. Returns 0, or -EINVAL
 * after saying why. */
static int parse_max_memory(const char *v, uint64_t *n)
{
    if (hrd_parse_size(v, 1, 1u << 20, UINT64_MAX >> 1, n) == 0)
        return 0;
    fprintf(stderr, "hostrangectl merge: bad --max-memory '%s' (a size of "
            "at least 1M)\n", v);
    return -EINVAL;
}

/* What the command line asks for: a merge (o filled, its meta to be
 * freed by hrd_ctl_meta_free), the help (shown), or nothing, after a usage
 * error was said on stderr. */
enum merge_request { MERGE_RUN, MERGE_HELP_SHOWN, MERGE_USAGE_ERROR };

static enum merge_request parse_options(int argc, char **argv,
                                        struct merge_opts *o)
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
            hrd_ctl_meta_add("merge", optarg, &o->meta, &o->nmeta);
        else if (c == OPT_MEM) {
            if (parse_max_memory(optarg, &o->max_memory) != 0)
                return MERGE_USAGE_ERROR;
        } else if (c == OPT_UNSORTED)
            o->format = HRD_RUN_FORMAT_EVENTS;
        else if (c == OPT_ALLOW_DUPLICATES)
            o->allow_duplicates = 1;
        else if (c == 'h') {
            fputs(usage_merge, stdout);
            return MERGE_HELP_SHOWN;
        } else
            hrd_ctl_die_usage("merge", c, argv[optind - 1]);
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
int hrd_ctl_merge(int argc, char **argv)
{
    struct merge_opts o = { NULL, NULL, 0, (uint64_t)1 << 30, 1, NULL, 0,
                            0, NULL, NULL, 0, "" };
    enum merge_request req = parse_options(argc, argv, &o);
    Hostrange__RunHeader **headers = NULL;
    size_t *owner = NULL;
    char err[8400];
    int rc = 0;

    if (req == MERGE_RUN) {
        headers = calloc(o.nin, sizeof *headers);
        rc = headers == NULL ? -ENOMEM
                             : check_ids(&o, headers, &owner, err, sizeof err);
        if (rc == 0)
            rc = merged_id(&o);
    }
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
    hrd_ctl_meta_free(o.meta, o.nmeta);
    for (size_t i = 0; headers != NULL && i < o.nin; i++) {
        if (headers[i] != NULL)
            hostrange__run_header__free_unpacked(headers[i], NULL);
    }
    free(headers);
    free(owner);
    free(o.parts);
    free(o.ids);
    if (req == MERGE_USAGE_ERROR)
        return 2;
    return rc == 0 ? 0 : rc == -EEXIST ? 3 : 1;
}

const struct hrd_ctl_cmd hrd_ctl_cmd_merge = {
    "merge",
    "join run files (CI shards, many hosts) into one",
    usage_merge,
    hrd_ctl_merge,
};
