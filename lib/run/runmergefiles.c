/* A merge of run files, from their ids to the output written (see
 * runmerge.h). */
#include "config.h"

#include "lib/agg/agg_impl.h"
#include "lib/run/fingerprint.h"
#include "lib/run/run.h"
#include "lib/run/runid.h"
#include "lib/run/runmerge.h"
#include "lib/run/runrounds.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/*
 * One merge, from the scan of the inputs to the output written: the
 * aggregation the inputs are read into, each input's header and end (kept
 * by rm), and the provenance of the output, one RunSource per run merged
 * (borrowed from the inputs' headers, or made here for an input that has
 * none of its own).
 */
struct merge {
    const struct hrr_runmerge_opts *o;
    struct hra_agg agg;
    struct hrr_runmerge rm;
    Hostrange__RunHeader **headers;
    Hostrange__RunEnd **ends;
    Hostrange__RunSource *own_sources;  /* [i]: input i as a source */
    Hostrange__RunSource **sources;
    size_t nsources, capsources;
    enum hrr_runmerge_stage stage;  /* of the progress told */
    size_t file;                    /* the input scanned */
};

/* Tells o's progress, when asked for, at stage `stage` of the merge. */
static void tell(struct merge *m, enum hrr_runmerge_stage stage,
                 uint64_t done, uint64_t size)
{
    if (m->o->progress != NULL)
        m->o->progress(m->o->ctx, stage, m->file, done, size);
}

/* The progress of a scan or of the write, as runmerge.h's calls give it. */
static void show_progress(void *ctx, uint64_t done, uint64_t size)
{
    struct merge *m = ctx;

    tell(m, m->stage, done, size);
}

/* Starts a merge of o's inputs, reading every record whole when `whole`.
 * Returns 0 or -ENOMEM; merge_fini is due either way. */
static int merge_init(struct merge *m, const struct hrr_runmerge_opts *o,
                      int whole)
{
    memset(m, 0, sizeof *m);
    m->o = o;
    hra_init(&m->agg);
    /* Half the budget for the samples held, the other half for the room
     * to write the largest of them and to join keys (runmerge.c). */
    m->agg.max_bytes = (size_t)(o->max_memory / 2);
    if (hrr_runmerge_init(&m->rm, &m->agg, (int)o->format, o->nin) != 0)
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
    hrr_runmerge_fini(&m->rm);
    hra_fini(&m->agg);
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

    tell(m, HRR_RUNMERGE_SCAN_START, 0, 0);
    m->stage = HRR_RUNMERGE_SCAN;
    for (size_t i = 0; i < m->o->nin; i++) {
        m->file = i;
        if (hrr_runmerge_scan(&m->rm, i, m->o->in[i], &m->headers[i],
                              &m->ends[i], show_progress, m, err,
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
    tell(m, HRR_RUNMERGE_SCAN_END, 0, 0);
    return 0;
}

/* Appends s (borrowed) to the output's sources. Returns 0 or -ENOMEM. */
static int add_source(struct merge *m, Hostrange__RunSource *s)
{
    if (hru_grow(&m->sources, &m->capsources, m->nsources + 1,
                 sizeof *m->sources, 16) != 0)
        return -ENOMEM;
    m->sources[m->nsources++] = s;
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
 * done again reading every record whole (hrr_runmerge_load); or -EIO with
 * the reason in err. */
static int load_keys(struct merge *m, char *err, size_t errlen)
{
    int rc = hrr_runmerge_load(&m->rm, err, errlen);

    if (rc == HRR_RUNMERGE_AGAIN)
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
    struct hrr_runrounds rounds;   /* what end.round_keys points to */
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
    hrr_runrounds_fini(&e->rounds);
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
static void add_lost(struct merged_end *e, const struct hra_agg *a)
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

/* The merged run's rounds (runrounds.h): each input is a round of the
 * keys it shares with another, and an input's own rounds carry over; the
 * inputs are read again only when they share keys. Returns 0, -ENOMEM,
 * or -EIO with why in err. */
static int merged_rounds(struct merged_end *e, const struct merge *m,
                         char *err, size_t errlen)
{
    int carried = 0, rc;

    for (size_t i = 0; i < m->o->nin; i++)
        carried |= m->ends[i]->n_round_keys > 0;
    if (!carried && m->rm.nrec <= m->agg.nkeys)
        return 0;
    rc = hrr_runrounds_build(&e->rounds, m->o->in, m->o->nin, m->ends,
                             m->rm.nrec > m->agg.nkeys, err, errlen);
    if (rc == 0)
        hrr_runrounds_put(&e->rounds, &e->end);
    return rc;
}

/* Builds e from the merge's inputs and aggregation. Returns 0, -ENOMEM,
 * or -EIO with why an input could not be read again in err;
 * merged_end_fini is due either way. */
static int merged_end_build(struct merged_end *e, const struct merge *m,
                            char *err, size_t errlen)
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
    return merged_rounds(e, m, err, errlen);
}

/*
 * Writes the output: a header with the merge's provenance, every key, and
 * end, then renames it into place. Returns 0; -EAGAIN when the merge is to
 * be done again reading every record whole (hrr_runmerge_write); or -EIO
 * with the reason in err. Nothing is left of the output unless it returns 0.
 */
static int write_output(struct merge *m, Hostrange__RunEnd *end, char *err,
                        size_t errlen)
{
    Hostrange__RunHeader h = HOSTRANGE__RUN_HEADER__INIT;
    struct hrr_writer w;
    char host[256];
    int rc;

    hrr_provenance(&h, m->o->format, host, sizeof host,
                       m->o->meta.pairs, m->o->meta.n);
    h.sources = m->sources;
    h.n_sources = m->nsources;
    h.fingerprint = hrr_fingerprint_common(m->headers, m->o->nin);
    h.id = (char *)m->o->id;
    h.part_ids = m->o->parts;
    h.n_part_ids = m->o->nparts;
    m->stage = HRR_RUNMERGE_WRITE;
    if (hrr_create(&w, m->o->output, &h, err, errlen) != 0)
        rc = -EIO;
    else if ((rc = hrr_runmerge_write(&m->rm, &w, show_progress, m, err,
                                      errlen)) != 0)
        rc = rc == HRR_RUNMERGE_AGAIN ? -EAGAIN : -EIO;
    else if (hrr_commit(&w, end, err, errlen) != 0)
        rc = -EIO;
    if (rc != 0)
        hrr_abort(&w);
    return rc;
}

int hrr_runmerge_once(const struct hrr_runmerge_opts *o, int whole,
                     struct hrr_runmerge_result *res, char *err,
                     size_t errlen)
{
    struct merge m;
    struct merged_end e;
    int rc;

    memset(&e, 0, sizeof e);
    memset(res, 0, sizeof *res);
    rc = merge_init(&m, o, whole);
    if (rc == 0)
        rc = scan_inputs(&m, err, errlen);
    if (rc == 0)
        rc = collect_sources(&m);
    if (rc == 0)
        rc = load_keys(&m, err, errlen);
    if (rc == 0) {
        rc = merged_end_build(&e, &m, err, errlen);
        res->rounds_unread = rc == -EIO;
    }
    if (rc == 0)
        rc = write_output(&m, &e.end, err, errlen);
    if (rc == 0) {
        res->nkeys = m.agg.nkeys;
        res->compacted = m.agg.compacted;
        res->rounds = e.end.rounds;
    }
    merged_end_fini(&e);
    merge_fini(&m);
    return rc;
}

/* The index of id among o's parts, or o->nparts. */
static size_t find_part(const struct hrr_runmerge_opts *o, const char *id)
{
    size_t k;

    for (k = 0; k < o->nparts && strcmp(o->parts[k], id) != 0; k++)
        ;
    return k;
}

/*
 * Reads each input's id and parts (runid.h) into o. Returns 0, -EEXIST or
 * -ENOMEM (see hrr_runmerge_ids).
 */
static int check_ids(struct hrr_runmerge_opts *o, char *err, size_t errlen)
{
    Hostrange__RunHeader **headers;
    size_t **owner = &o->owner;
    size_t cap = 0;

    o->headers = calloc(o->nin, sizeof *o->headers);
    o->ids = calloc(o->nin, sizeof *o->ids);
    if (o->headers == NULL || o->ids == NULL)
        return -ENOMEM;
    headers = o->headers;
    for (size_t i = 0; i < o->nin; i++) {
        struct hrr_reader r;
        Hostrange__RunHeader *h;
        char **mine;
        size_t nmine;

        if (hrr_open(&r, o->in[i], &h, err, errlen) != 0)
            continue;
        hrr_close(&r);
        headers[i] = h;
        if (hrr_runid_of_file(o->in[i], h, o->ids[i], err, errlen) != 0)
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
                if (o->duplicate != NULL)
                    o->duplicate(o->ctx, o->in[i], id, other);
                continue;
            }
            if (o->nparts == cap) {
                size_t ncap = hru_grow_room(cap, o->nparts + 1,
                                            sizeof *o->parts, 16);

                if (ncap == 0 ||
                    hru_resize(&o->parts, ncap, sizeof *o->parts) != 0 ||
                    hru_resize(owner, ncap, sizeof **owner) != 0)
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
static int merged_id(struct hrr_runmerge_opts *o)
{
    char **sorted = malloc((o->nparts + 1) * sizeof *sorted);

    if (sorted == NULL)
        return -ENOMEM;
    memcpy(sorted, o->parts, o->nparts * sizeof *sorted);
    hrr_runid_of_parts(sorted, o->nparts, o->id);
    free(sorted);
    return 0;
}

int hrr_runmerge_ids(struct hrr_runmerge_opts *o, char *err, size_t errlen)
{
    int rc = check_ids(o, err, errlen);

    return rc == 0 ? merged_id(o) : rc;
}

void hrr_runmerge_opts_fini(struct hrr_runmerge_opts *o)
{
    for (size_t i = 0; o->headers != NULL && i < o->nin; i++) {
        if (o->headers[i] != NULL)
            hostrange__run_header__free_unpacked(o->headers[i], NULL);
    }
    free(o->headers);
    free(o->owner);
    free(o->parts);
    free(o->ids);
    o->headers = NULL;
    o->owner = NULL;
    o->parts = NULL;
    o->ids = NULL;
}
