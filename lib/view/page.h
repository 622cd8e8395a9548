/*
 * The history page (hostrangectl history plot): one self-contained HTML
 * file, index.html, that shows each series of a run history over the
 * commits. It needs no network: no external script, style sheet or font;
 * a small inline script of its own draws the charts, shows a point's
 * figures on hover and filters the charts by name.
 *
 * The model is a flat list of series, each one node, phase, range and
 * metric on one machine: its points in time order (a run's commit, time,
 * median, p10, p90 and sample count) and the segments the change-point
 * detection found (each a run of consecutive points and its median; a
 * change point is where a segment after the first begins). Series of the
 * same node, phase, range and metric share one chart, one line per
 * machine, with a legend. Charts are grouped per node and phase, and
 * ordered by how much they changed (the largest relative step between two
 * consecutive segments of any of their lines), most first: the page opens
 * on the most changed series.
 *
 * A point's hover names its run's host and kernel; where a line's kernel
 * changes between two of its runs, a dashed mark says from what to what
 * (a kernel update can move a series without a commit to blame).
 *
 * Size: the runs (commit, time, host and kernel) are written once; each point is its
 * median, p10 and p90 as integers in a unit of the line (four significant
 * digits of its largest value), p10 and p90 as distances from the median,
 * and its count (once for a line whose counts are all equal). Names are
 * written with hrd_html_escape (escape.h), as content in <bdi> (a
 * name's direction is its own), and with hrd_json_string_html in the data
 * (a name cannot end the script); a long name wraps where it must.
 * Pure formatting: the writer writes to the FILE * it is given.
 */
#ifndef HOSTRANGE_PAGE_H
#define HOSTRANGE_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One run's figures of a series. */
struct hrd_page_point {
    const char *commit;  /* the run's commit (the page shows 10 characters) */
    int64_t time;        /* the run's time, seconds since the epoch */
    double median, p10, p90;  /* ns */
    uint64_t count;      /* samples */
    const char *host;    /* the run's host and kernel (may be NULL): shown */
    const char *kernel;  /* on hover; a change of kernel is marked */
};

/* A run of the history: a commit at a time, on a host and kernel. */
struct hrd_page_run {
    int64_t time;        /* seconds since the epoch */
    const char *commit, *host, *kernel;
};

/* A segment: points first..last (inclusive) of a series, and its median. */
struct hrd_page_segment {
    size_t first, last;
    double median;       /* ns */
};

/* One series: a node, phase, range and metric on one machine. Strings and
 * arrays are borrowed. Points are in time order. op and backend (NULL or
 * "" when none) are shown after the range, as "RANGE (OP/BACKEND)". */
struct hrd_page_series {
    const char *node, *phase, *range, *metric, *machine;
    const char *op, *backend;
    const struct hrd_page_point *points;
    size_t npoints;
    const struct hrd_page_segment *segments;  /* in order; may be none */
    size_t nsegments;
};

struct hrd_page {
    const char *title;   /* the page's heading */
    const struct hrd_page_series *series;
    size_t n;
};

/* Writes p as the HTML page. Returns 0, -ENOMEM or -EIO. */
int hrd_page_write(FILE *f, const struct hrd_page *p);

#endif
