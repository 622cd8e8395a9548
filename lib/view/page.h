/*
 * The history page (hostrangectl history plot): what its writer,
 * pagedir.h, is given of a chart's line and of the runs. The page needs
 * no network: no external script, style sheet or font; a small inline
 * script of its own draws the charts, shows a point's figures on hover
 * and filters the charts by name.
 *
 * A point's hover names its run's host and kernel; where a line's kernel
 * changes between two of its runs, a dashed mark says from what to what
 * (a kernel update can move a series without a commit to blame).
 *
 * Size: the runs (commit, time, host and kernel) are written once; each
 * point is its median, p10 and p90 as integers in a unit of the line
 * (four significant digits of its largest value), p10 and p90 as
 * distances from the median, and its count (once for a line whose counts
 * are all equal, as p10 and p90 are). Names are written with
 * hrv_html_escape (escape.h), as content in <bdi> (a name's direction is
 * its own), and with hrv_json_string_html in the data (a name cannot end
 * the script); a long name wraps where it must.
 */
#ifndef HOSTRANGE_PAGE_H
#define HOSTRANGE_PAGE_H

#include <stdint.h>

/* One run's figures of a series. */
struct hrv_page_point {
    double median, p10, p90;  /* ns */
    uint64_t count;           /* samples */
};

/* A run of the history: a commit at a time, on a host and kernel (each
 * may be NULL): shown on hover; a change of kernel is marked. */
struct hrv_page_run {
    int64_t time;        /* seconds since the epoch */
    const char *commit, *host, *kernel;
};

#endif
