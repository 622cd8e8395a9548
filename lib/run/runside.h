/*
 * A run file read for a comparison (hostrangectl diff and bisect compare
 * what it reads): each key becomes one population per metric (inclusive, and self
 * when the key has range events), its values collected into distinct
 * values, ascending, with their counts (a histogram's: its buckets'
 * values), ready for lib/stat/signif.c. Keys of run format 1 that
 * hrr_runscan_key vouches for are read in place, their delta-coded
 * arrays decoded straight from the record; any other key is unpacked.
 */
#ifndef HOSTRANGE_RUNSIDE_H
#define HOSTRANGE_RUNSIDE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/agg/keyfields.h"
#include "lib/run/run.h"
#include "lib/stat/signif.h"
#include "proto/hostrange.pb-c.h"

/* One population of one key of one file. */
struct hrr_diff_pop {
    char *node, *op, *backend, *range;
    uint32_t phase, metric;
    uint32_t node_rank, range_rank, order;
    int scopes;
    int hist;
    double *v;
    uint64_t *w;
    size_t n;
    uint64_t total;
    double median;
    double step;     /* smallest gap between distinct values (exact) */
    uint64_t calls;
    HRA_KEY_ROW_COUNTER_FIELDS /* lib/agg/keyfields.h */
    size_t id;       /* its place in the order read */
    int matched;
    /* A base population compared with new's population `partner` (an
     * id): the test's result. */
    size_t partner;
    struct hrs_signif s;
};

/* One file of a diff, read a key at a time. */
struct hrr_diff_side {
    const char *path;
    struct hrr_diff_pop *p;
    size_t n, cap;
    const Hostrange__Calibration *cal;
    Hostrange__RunHeader *header;
    Hostrange__RunEnd *end;
    struct hrr_reader r;
    int open, ended;
    uint32_t order;
    /* Scratch for a key's coded events: its values and the sort's. */
    uint64_t *incl, *self, *tmp;
    size_t vcap;
};

/* Opens a side's run file (s zeroed by the caller). Returns 0, -ENOMEM
 * (err left alone), or -EIO with why the file cannot be read in err. */
int hrr_runside_open(struct hrr_diff_side *s, const char *path, char *err,
                     size_t errlen);

/* Reads the next key of a side into populations (one or two, appended to
 * s->p), or, at the end of the file, its end (s->ended set). Returns 0,
 * -ENOMEM (err left alone), or -EIO with why the file cannot be read in
 * err. */
int hrr_runside_next(struct hrr_diff_side *s, char *err, size_t errlen);

/* Frees a side's populations, scratch and reader. */
void hrr_runside_free(struct hrr_diff_side *s);

/* The clock step of the machine the side's run was measured on, in ns,
 * as its fingerprint gives it; 0 when its header has none. */
double hrr_runside_clock_step(const struct hrr_diff_side *s);

#endif
