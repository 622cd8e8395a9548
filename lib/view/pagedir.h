/*
 * The history page as a directory (hostrangectl history plot), for a
 * history of any size: DIR/index.html, which holds the findings of a look
 * (lib/history/look.h) and an index of every chart, and DIR/data/, a file
 * per chunk of charts that the page loads as a script when one of its
 * charts comes into view or is found by the filter. What the page needs
 * for its first screen is the index and the chunks of the findings'
 * charts; it grows with the number of charts only by the index (a node's
 * name once, each chart as two numbers).
 *
 * Charts are numbered in the order they are written, chunk by chunk; a
 * chunk is a run of consecutive charts (HRV_PAGE_CHUNK_NAME), written as
 * a call hrChunk(N, [chart, ...]) of the page's script, each chart the
 * array of its lines (page_impl.h). The runs are numbered in the history's
 * order (time, then as added), the same for every line: a line's points
 * are given in run order, and a chart's lines share one axis of runs.
 *
 * A line of a chunk has no segments of its own: the page draws the steps
 * of the change points the look found (the findings' changes), so that
 * the page marks what history detect reports and nothing else.
 *
 * Names are written with hrv_html_name (as content, in <bdi>) or
 * hrv_html_escape (attributes), and with hrv_json_string_html in the data.
 * Pure formatting: each writer writes to the FILE * it is given.
 */
#ifndef HOSTRANGE_PAGEDIR_H
#define HOSTRANGE_PAGEDIR_H

#include "lib/view/page.h"

#include <stddef.h>
#include <stdio.h>

/* Chunk N's file, under the page's directory. */
#define HRV_PAGE_CHUNK_DIR "data"
#define HRV_PAGE_CHUNK_NAME HRV_PAGE_CHUNK_DIR "/%06zu.js"
/* A chunk ends at the end of a node once it holds this many series. */
#define HRV_PAGE_CHUNK_SERIES 256
/* The most findings the first screen lists, and the most charts of each
 * (a finding's other charts are among the rest, and the filter finds
 * them). */
#define HRV_PAGE_FINDINGS_SHOWN 100
#define HRV_PAGE_FINDING_CHARTS 12

/* A line of a chart: machine `machine`'s points at runs run[0..n). */
struct hrv_page_line {
    size_t machine;
    const size_t *run;
    const struct hrv_page_point *points;
    size_t n;
};

/* Chunk `chunk`'s file: begun, its charts each written by
 * hrv_page_chunk_chart (i: the chart's place in the chunk, from 0), and
 * ended. end returns 0 or -EIO. */
void hrv_page_chunk_begin(FILE *f, size_t chunk);
void hrv_page_chunk_chart(FILE *f, size_t i, const struct hrv_page_line *l,
                          size_t n);
int hrv_page_chunk_end(FILE *f);

/* A change point of a finding: on chart `chart`, machine `machine`'s line
 * changes at run `run` from `before` to `after` (ns), by `change` %. */
struct hrv_page_change {
    size_t chart, machine, run;
    double before, after, change;
};

/* A finding: at run `run` on machine `machine`, `nseries` change points
 * over `nodes` nodes, its strongest p; `change` is the % of the change it
 * starts in, on charts[0]; its charts, each once. */
struct hrv_page_finding {
    size_t machine, run, nodes, nseries;
    double p, change;
    const size_t *charts;
    size_t ncharts;
};

/* The index: everything but the chunks. Chart i is node charts[2i] and
 * kind charts[2i+1]; a kind is a phase, range, operator, backend and
 * metric. Chunk j holds charts chunks[j] to chunks[j+1]-1 (nchunks + 1
 * entries). Strings are borrowed. */
struct hrv_page_dir {
    const char *title;
    const char *rule;       /* the look's rule, in words */
    size_t nseries;         /* series tested */
    const struct hrv_page_run *runs;
    size_t nruns;
    const char *const *machines;
    size_t nmachines;
    const char *const *nodes;
    size_t nnodes;
    const char *const (*kinds)[5];
    size_t nkinds;
    const size_t *charts;
    size_t ncharts;
    const size_t *chunks;
    size_t nchunks;
    const struct hrv_page_finding *findings;
    size_t nfindings;
    const struct hrv_page_change *changes;
    size_t nchanges;
};

/* Writes d as DIR/index.html. Returns 0 or -EIO. */
int hrv_page_dir_write(FILE *f, const struct hrv_page_dir *d);

#endif
