/*
 * The inputs of hostrangectl merge: run files read into one aggregation,
 * and the merged run written from it, without decoding what needs no
 * change.
 *
 * Three passes. Scanning (hrr_runmerge_scan, per input in order) reads
 * every record's framing; each key is made in the aggregation (so keys
 * keep the order of their first appearance over the inputs) and noted
 * with where it lies. A key is known by its first bytes when they name it
 * in the layout of a simple key (runscan.h): its names and ranks are
 * interned and noted, and the rest of it is left for later. Any other
 * record is read whole (its checksum checked) and unpacked, or scanned
 * whole. Loading (hrr_runmerge_load) then adds every key that is neither
 * copied nor joined (below) to the aggregation from its records, as hrr_load does (checking them,
 * enforcing the memory budget), and ranks names. Writing
 * (hrr_runmerge_write) writes the keys in order: a key found once is read
 * whole (it must be the very record scanned: same length and checksum),
 * its checksum and values checked as a load checks them, and written as
 * its bytes with its new ranks, or, when it is not simple after all,
 * loaded and saved as the others; any other key is saved from the
 * aggregation. For run format 1, a key found in several inputs, simple in
 * each, is joined instead (runjoin.h): its records read whole when it is
 * written, checked, and their sorted arrays merged into one key, unless
 * its records together pass a quarter of the memory budget. Copied and
 * joined keys are never held in the aggregation: only the keys loaded
 * are, under its memory budget. Every record is checked before anything
 * of it is written.
 */
#ifndef HOSTRANGE_RUNMERGE_H
#define HOSTRANGE_RUNMERGE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/run/run.h"
#include "lib/run/runid.h"
#include "lib/run/runmeta.h"

struct hrr_runmerge_in;
struct hrr_runmerge_rec;
struct hrr_runmerge_key;

struct hrr_runmerge {
    struct hra_agg *a;
    struct hrr_runload l;
    int format;                  /* of the output */
    size_t nin;
    struct hrr_runmerge_in *in;  /* the inputs, open */
    struct hrr_runmerge_rec *rec; /* key records, in input order */
    size_t nrec, caprec;
    struct hrr_runmerge_key *keys; /* by key serial */
    uint32_t capkeys;
    uint64_t size;               /* of the inputs scanned */
    int whole;                   /* read every record whole when scanning
                                    (set before scanning) */
    uint32_t reading;            /* the input read last + 1 (0: none) */
};

/* What hrr_runmerge_write returns when a key known by its first bytes
 * names itself differently further on (a field given twice, the last one
 * counting): merge again from the start with `whole` set. */
#define HRR_RUNMERGE_AGAIN 2

/* For an output of run format `format` from nin inputs into aggregation
 * a. Returns 0 or -ENOMEM. */
int hrr_runmerge_init(struct hrr_runmerge *m, struct hra_agg *a, int format,
                      size_t nin);
void hrr_runmerge_fini(struct hrr_runmerge *m);

/*
 * Scans input i (i-th call, in order) at path: returns 0 with its header
 * and end in *h and *e (kept by m, valid until fini), or a negative errno
 * (as run.h's) with a one-line reason starting with the path in err.
 */
int hrr_runmerge_scan(struct hrr_runmerge *m, size_t i, const char *path,
                      Hostrange__RunHeader **h, Hostrange__RunEnd **e,
                      hrr_progress_fn progress, void *ctx, char *err,
                      size_t errlen);

/* Loads the keys to merge and ranks names. Returns 0, HRR_RUNMERGE_AGAIN
 * (as hrr_runmerge_write), or a negative errno with a one-line reason in
 * err. */
int hrr_runmerge_load(struct hrr_runmerge *m, char *err, size_t errlen);

/* Writes every key, in order, calling progress (when not NULL) now and
 * then with the bytes written and the inputs' size. Returns 0,
 * HRR_RUNMERGE_AGAIN, or a negative errno with a one-line reason in err. */
int hrr_runmerge_write(struct hrr_runmerge *m, struct hrr_writer *w,
                       hrr_progress_fn progress, void *ctx, char *err,
                       size_t errlen);

/*
 * A merge of run files as hostrangectl merge does it (runmergefiles.c):
 * the inputs' ids checked, then the union written, its provenance, clients,
 * clocks, calibrations, lost counts and rounds (runrounds.h) built from
 * the inputs'.
 */

/* Where a merge is, for its progress. */
enum hrr_runmerge_stage {
    HRR_RUNMERGE_SCAN_START,  /* before the first input is scanned */
    HRR_RUNMERGE_SCAN,        /* scanning input `file` */
    HRR_RUNMERGE_SCAN_END,    /* every input scanned */
    HRR_RUNMERGE_WRITE,       /* writing the output */
};

/* What a merge is asked to do; the fields from ids on are the merge's. */
struct hrr_runmerge_opts {
    const char *output;
    char **in;
    size_t nin;
    uint64_t max_memory;
    unsigned format;
    struct hrr_meta meta;
    int allow_duplicates;
    /* Told (when not NULL) of input `file` holding run `id`, which input
     * `other` holds already, merged anyway (allow_duplicates). */
    void (*duplicate)(void *ctx, const char *file, const char *id,
                      const char *other);
    /* Told (when not NULL) how far the merge is: done of size bytes of
     * input `file` (HRR_RUNMERGE_SCAN) or of the output (_WRITE). */
    void (*progress)(void *ctx, enum hrr_runmerge_stage stage, size_t file,
                     uint64_t done, uint64_t size);
    void *ctx;
    /* The runs' identity (hrr_runmerge_ids): each input's id and header,
     * the ids of the runs the output holds (each once) and the input each
     * came from, and the output's id. */
    char (*ids)[HRR_RUNID_LEN + 1];
    Hostrange__RunHeader **headers;
    char **parts;
    size_t *owner;
    size_t nparts;
    char id[HRR_RUNID_LEN + 1];
};

/* What a merge made: its keys, whether some were kept as histograms for
 * max_memory, its rounds; rounds_unread when an input could not be read
 * again for its rounds (-EIO, why in err). */
struct hrr_runmerge_result {
    uint32_t nkeys;
    int compacted;
    uint32_t rounds;
    int rounds_unread;
};

/*
 * Reads each input's id and parts (runid.h) into o, and the output's id.
 * An input holding a run an input before it holds already is refused:
 * returns -EEXIST with the reason in err (both files named), unless
 * o->allow_duplicates, when o->duplicate is told and the run is kept
 * once. An input that cannot be read is left for the merge to report.
 * Returns 0, -EEXIST or -ENOMEM; hrr_runmerge_opts_fini is due either way.
 */
int hrr_runmerge_ids(struct hrr_runmerge_opts *o, char *err, size_t errlen);

/*
 * Merges o's inputs (their ids read) into o->output once, reading every
 * record whole when the inputs are scanned with `whole`. Returns 0, *res
 * filled; -EAGAIN when a key read by its first bytes turned out to name
 * itself differently further on, so that the merge is to be done again
 * with `whole` set (nothing written); or another negative errno, nothing
 * written, with the reason in err (left alone for -ENOMEM).
 */
int hrr_runmerge_once(const struct hrr_runmerge_opts *o, int whole,
                      struct hrr_runmerge_result *res, char *err,
                      size_t errlen);

/* Frees what hrr_runmerge_ids kept in o (not its meta). */
void hrr_runmerge_opts_fini(struct hrr_runmerge_opts *o);

#endif
