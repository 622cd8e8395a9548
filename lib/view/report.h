/*
 * Report formatting: turns report rows into JSONL (the reference schema),
 * CSV or an aligned terminal table. Pure logic: it writes to a FILE * it is
 * given and does no other I/O.
 *
 * JSONL rows carry exactly ten fields in this order: nodeid, operator,
 * backend, phase, range, metric, count, unit ("ns"), mean, median, with
 * compact separators. Numbers are written as the shortest text that reads
 * back as the same double, in the style of Python's repr (".0" on whole
 * numbers, exponent form outside [1e-4, 1e16)); counts are integers. With
 * HRV_FIELDS_EXTENDED, seven fields follow the ten: min, max, p90, p99,
 * stddev (nanoseconds), exact (true when every statistic was computed from
 * every sample, false when the quantiles come from a histogram) and lost
 * (events the clients reported lost under the row's node id).
 *
 * With HRV_FIELDS_OBSERVER, six fields follow: children (direct child
 * ranges per call), descendants (all descendant ranges per call),
 * observer_ns, observer_share, unstable and resolution_limited
 * (observer.h); each is null when unknown (no calibration, or a row of
 * recorded values, which has no calls). With HRV_FIELDS_CORRECTED, a last field `corrected`
 * says whether the row's figures had the observer cost taken out. Without
 * these flags the output is exactly as before.
 */
#ifndef HOSTRANGE_REPORT_H
#define HOSTRANGE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/view/escape.h"
#include "lib/view/numfmt.h"
#include "lib/agg/rows.h"

enum hrv_format {
    HRV_FORMAT_JSONL,
    HRV_FORMAT_CSV,
    HRV_FORMAT_TABLE,
    /* The dashboards' formats (dashboard.h): the rows are kept and
     * written whole by hrv_writer_finish. */
    HRV_FORMAT_BMF,
    HRV_FORMAT_BENCHMARK_ACTION,
};
#define HRV_FORMAT_NAME_BMF "bmf"
#define HRV_FORMAT_NAME_BENCHMARK_ACTION "benchmark-action"

#define HRV_FIELDS_EXTENDED 0x1u
#define HRV_FIELDS_OBSERVER 0x2u
#define HRV_FIELDS_CORRECTED 0x4u
/* rounds (how many rounds fed the row; 1 for a run of one round),
 * round_medians (the row's median in each of them) and round_spread
 * ((max - min) / median of the round medians, in %); a table shows
 * rounds and spread. */
#define HRV_FIELDS_ROUNDS 0x8u

/* JSON strings (hrv_json_string, hrv_json_string_html) and CSV fields
 * (hrv_csv_field) are written by the rules of lib/view/escape.h. */

/* Parses "jsonl", "csv" or "table". Returns 0 and writes *out, or -EINVAL. */
int hrv_format_parse(const char *name, enum hrv_format *out);

/* hrv_format_parse, and "bmf" and "benchmark-action" (dump's formats). */
int hrv_format_parse_dashboard(const char *name, enum hrv_format *out);

/*
 * A report writer. JSONL and CSV rows are written as they come; the table
 * format keeps copies of its rows until hrv_writer_finish, because column
 * widths depend on every row.
 */
struct hrv_writer {
    FILE *out;
    enum hrv_format format;
    unsigned fields;
    size_t nrows;
    /* Table rows kept until finish (owned by the writer). */
    struct hra_row *rows;
    size_t cap;
};

void hrv_writer_init(struct hrv_writer *w, FILE *out, enum hrv_format format,
                     unsigned fields);

/* Writes (or, for a table, keeps) one row; strings are copied where kept.
 * Returns 0, or -ENOMEM / -EIO. */
int hrv_writer_row(struct hrv_writer *w, const struct hra_row *row);

/* Writes what is kept (a table, a dashboard's format) and frees it.
 * Returns 0, -ENOMEM or -EIO. */
int hrv_writer_finish(struct hrv_writer *w);

/* Frees what the writer keeps without writing it; accepts a finished one. */
void hrv_writer_fini(struct hrv_writer *w);

/* The closing line of a table that says the events lost under node_id
 * ("lost: N events of node NODE", the name in the terminal's escapes),
 * written after the table for every node that lost events, nodes without
 * rows too: by dump of a daemon and of a run file alike. */
void hrv_table_lost(FILE *f, const char *node_id, uint64_t lost);

#endif
