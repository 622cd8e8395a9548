/* Report formatting: JSONL, CSV and an aligned terminal table; the rows
 * of the dashboards' formats are kept here and written by dashboard.c. */
#include "config.h"

#include "lib/view/report.h"
#include "lib/view/dashboard.h"
#include "lib/view/escape.h"
#include "lib/view/flame.h"
#include "proto/protocol.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Durations in the table are shown in microseconds with three decimals, so
 * a cell holds at most DBL_MAX / 1000 written out in full (some 310 bytes). */
#define CELL_MAX 320

int hrv_format_parse(const char *name, enum hrv_format *out)
{
    if (name == NULL)
        return -EINVAL;
    if (strcmp(name, "jsonl") == 0)
        *out = HRV_FORMAT_JSONL;
    else if (strcmp(name, "csv") == 0)
        *out = HRV_FORMAT_CSV;
    else if (strcmp(name, "table") == 0)
        *out = HRV_FORMAT_TABLE;
    else
        return -EINVAL;
    return 0;
}

int hrv_format_parse_dashboard(const char *name, enum hrv_format *out)
{
    if (name != NULL && strcmp(name, HRV_FORMAT_NAME_BMF) == 0)
        *out = HRV_FORMAT_BMF;
    else if (name != NULL &&
             strcmp(name, HRV_FORMAT_NAME_BENCHMARK_ACTION) == 0)
        *out = HRV_FORMAT_BENCHMARK_ACTION;
    else
        return hrv_format_parse(name, out);
    return 0;
}

/* Writes a number as Python's json.dumps does: NaN and the infinities are
 * not JSON, and Python writes them as NaN, Infinity and -Infinity. */
static void put_json_number(FILE *f, double v)
{
    char buf[32];

    if (isnan(v))
        fputs("NaN", f);
    else if (isinf(v))
        fputs(v < 0 ? "-Infinity" : "Infinity", f);
    else if (hrv_format_number(buf, sizeof(buf), v) >= 0)
        fputs(buf, f);
}

/* The mean number of direct children per call of a row with calls. */
static double children_per_call(const struct hra_row *r)
{
    return (double)r->children / (double)r->calls;
}

/* The mean number of descendants per call (direct children when the
 * descendants are not known). */
static double descendants_per_call(const struct hra_row *r)
{
    return (double)(r->descendants < r->children ? r->children
                                                 : r->descendants) /
           (double)r->calls;
}

static void write_jsonl(FILE *f, const struct hra_row *r, unsigned fields)
{
    fputs("{\"nodeid\":", f);
    hrv_json_string(f, r->node_id);
    fputs(",\"operator\":", f);
    hrv_json_string(f, r->op);
    fputs(",\"backend\":", f);
    hrv_json_string(f, r->backend);
    fputs(",\"phase\":", f);
    hrv_json_string(f, r->phase);
    fputs(",\"range\":", f);
    hrv_json_string(f, r->range);
    if (r->depth > 0) {
        /* dump --by path: the calling context (flame.h). */
        char *path = hrv_path_join(r->path, r->depth);
        fputs(",\"path\":", f);
        hrv_json_string(f, path != NULL ? path : "");
        free(path);
    }
    fputs(",\"metric\":", f);
    hrv_json_string(f, r->metric);
    fprintf(f, ",\"count\":%" PRIu64 ",\"unit\":\"ns\",\"mean\":", r->count);
    put_json_number(f, r->mean);
    fputs(",\"median\":", f);
    put_json_number(f, r->median);
    if (fields & HRV_FIELDS_EXTENDED) {
        fputs(",\"min\":", f);
        put_json_number(f, r->min);
        fputs(",\"max\":", f);
        put_json_number(f, r->max);
        fputs(",\"p90\":", f);
        put_json_number(f, r->p90);
        fputs(",\"p99\":", f);
        put_json_number(f, r->p99);
        fputs(",\"stddev\":", f);
        put_json_number(f, r->stddev);
        fputs(r->exact ? ",\"exact\":true" : ",\"exact\":false", f);
        fprintf(f, ",\"lost\":%" PRIu64, r->lost);
    }
    if (fields & HRV_FIELDS_OBSERVER) {
        fputs(",\"children\":", f);
        if (r->calls > 0)
            put_json_number(f, children_per_call(r));
        else
            fputs("null", f);
        fputs(",\"descendants\":", f);
        if (r->calls > 0)
            put_json_number(f, descendants_per_call(r));
        else
            fputs("null", f);
        if (r->observer_known) {
            fputs(",\"observer_ns\":", f);
            put_json_number(f, r->observer_ns);
            fputs(",\"observer_share\":", f);
            put_json_number(f, r->observer_share);
            fputs(r->unstable ? ",\"unstable\":true" : ",\"unstable\":false",
                  f);
            fputs(r->resolution_limited ? ",\"resolution_limited\":true"
                                        : ",\"resolution_limited\":false",
                  f);
        } else {
            fputs(",\"observer_ns\":null,\"observer_share\":null,"
                  "\"unstable\":null,\"resolution_limited\":null", f);
        }
        fputs(",\"clock_path\":", f);
        hrv_json_string(f, hrp_clock_path_name(r->clock_paths));
    }
    if (fields & HRV_FIELDS_CORRECTED)
        fputs(r->corrected ? ",\"corrected\":true" : ",\"corrected\":false",
              f);
    if (fields & HRV_FIELDS_ROUNDS) {
        fprintf(f, ",\"rounds\":%" PRIu32 ",\"round_medians\":[",
                r->rounds);
        for (uint32_t i = 0; i < r->rounds && r->round_medians != NULL;
             i++) {
            if (i > 0)
                putc(',', f);
            put_json_number(f, r->round_medians[i]);
        }
        fputs("],\"round_spread\":", f);
        put_json_number(f, r->round_spread);
    }
    fputs("}\n", f);
}

static void put_csv_number(FILE *f, double v)
{
    char buf[32];

    putc(',', f);
    if (hrv_format_number(buf, sizeof(buf), v) >= 0)
        fputs(buf, f);
}

static void write_csv_header(FILE *f, unsigned fields)
{
    fputs("nodeid,operator,backend,phase,range,metric,count,unit,mean,median",
          f);
    if (fields & HRV_FIELDS_EXTENDED)
        fputs(",min,max,p90,p99,stddev,exact,lost", f);
    if (fields & HRV_FIELDS_OBSERVER)
        fputs(",children,descendants,observer_ns,observer_share,unstable,"
              "resolution_limited,clock_path", f);
    if (fields & HRV_FIELDS_CORRECTED)
        fputs(",corrected", f);
    if (fields & HRV_FIELDS_ROUNDS)
        fputs(",rounds,round_medians,round_spread", f);
    putc('\n', f);
}

static void write_csv(FILE *f, const struct hra_row *r, unsigned fields)
{
    const char *const text[] = {r->node_id, r->op, r->backend, r->phase,
                                r->range, r->metric};
    size_t i;

    for (i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
        if (i > 0)
            putc(',', f);
        hrv_csv_field(f, text[i]);
    }
    fprintf(f, ",%" PRIu64 ",ns", r->count);
    put_csv_number(f, r->mean);
    put_csv_number(f, r->median);
    if (fields & HRV_FIELDS_EXTENDED) {
        put_csv_number(f, r->min);
        put_csv_number(f, r->max);
        put_csv_number(f, r->p90);
        put_csv_number(f, r->p99);
        put_csv_number(f, r->stddev);
        fputs(r->exact ? ",true" : ",false", f);
        fprintf(f, ",%" PRIu64, r->lost);
    }
    /* Unknown values are empty fields. */
    if (fields & HRV_FIELDS_OBSERVER) {
        if (r->calls > 0) {
            put_csv_number(f, children_per_call(r));
            put_csv_number(f, descendants_per_call(r));
        } else {
            fputs(",,", f);
        }
        if (r->observer_known) {
            put_csv_number(f, r->observer_ns);
            put_csv_number(f, r->observer_share);
            fputs(r->unstable ? ",true" : ",false", f);
            fputs(r->resolution_limited ? ",true" : ",false", f);
        } else {
            fputs(",,,,", f);
        }
        putc(',', f);
        fputs(hrp_clock_path_name(r->clock_paths), f);
    }
    if (fields & HRV_FIELDS_CORRECTED)
        fputs(r->corrected ? ",true" : ",false", f);
    if (fields & HRV_FIELDS_ROUNDS) {
        /* The round medians joined by ';', one field. */
        fprintf(f, ",%" PRIu32 ",", r->rounds);
        for (uint32_t k = 0; k < r->rounds && r->round_medians != NULL;
             k++) {
            char buf[32];

            hrv_format_number(buf, sizeof buf, r->round_medians[k]);
            fprintf(f, "%s%s", k > 0 ? ";" : "", buf);
        }
        put_csv_number(f, r->round_spread);
    }
    putc('\n', f);
}

/*
 * Keeps a copy of row at the end of w->rows. The six strings are copied
 * into one allocation that starts at the copy's node_id, so freeing
 * node_id frees them all: escaped as terminal text for a table, as they
 * are for the dashboards' formats (written as JSON later), whose range is
 * a calling context's path (dump --by path) joined. Returns 0 or -ENOMEM.
 */
static int keep_row(struct hrv_writer *w, const struct hra_row *row)
{
    const char *text[6];
    const char **dst[6];
    size_t size[6], total = 0, i;
    struct hra_row *r;
    char *block, *joined = NULL;
    int table = w->format == HRV_FORMAT_TABLE;

    if (hru_grow(&w->rows, &w->cap, w->nrows + 1, sizeof *w->rows, 16) != 0)
        return -ENOMEM;
    r = &w->rows[w->nrows];
    *r = *row;
    r->round_medians = NULL; /* a table shows rounds and spread only */
    text[0] = row->node_id;
    text[1] = row->op;
    text[2] = row->backend;
    text[3] = row->phase;
    text[4] = row->range;
    text[5] = row->metric;
    if (!table && row->depth > 0) {
        if ((joined = hrv_path_join(row->path, row->depth)) == NULL)
            return -ENOMEM;
        text[4] = joined;
    }
    if (!table) {
        r->path = NULL;
        r->depth = 0;
    }
    dst[0] = &r->node_id;
    dst[1] = &r->op;
    dst[2] = &r->backend;
    dst[3] = &r->phase;
    dst[4] = &r->range;
    dst[5] = &r->metric;
    /* A table is terminal text: its names are kept escaped. */
    for (i = 0; i < 6; i++) {
        size[i] = (table ? hrv_text_escape(NULL, 0, text[i])
                         : strlen(text[i])) + 1;
        total += size[i];
    }
    block = malloc(total);
    if (block == NULL) {
        free(joined);
        return -ENOMEM;
    }
    for (i = 0; i < 6; i++) {
        if (table)
            hrv_text_escape(block, size[i], text[i]);
        else
            memcpy(block, text[i], size[i]);
        *dst[i] = block;
        block += size[i];
    }
    free(joined);
    w->nrows++;
    return 0;
}

/* Frees the rows a table writer keeps. For a table, nrows counts the rows
 * kept, so it returns to 0 with them. */
static void free_rows(struct hrv_writer *w)
{
    size_t i;

    if (w->rows != NULL) {
        for (i = 0; i < w->nrows; i++)
            free((void *)w->rows[i].node_id);
        free(w->rows);
        w->nrows = 0;
    }
    w->rows = NULL;
    w->cap = 0;
}

/* Table columns, in order; those from COL_MIN to COL_LOST appear only when
 * extended, the observer ones with HRV_FIELDS_OBSERVER, and corrected with
 * HRV_FIELDS_CORRECTED. */
enum { COL_RANGE, COL_METRIC, COL_COUNT, COL_MEAN, COL_MEDIAN, COL_MIN,
       COL_MAX, COL_P90, COL_P99, COL_STDDEV, COL_EXACT, COL_LOST,
       COL_CHILDREN, COL_DESCENDANTS, COL_OBSERVER, COL_SHARE, COL_UNSTABLE,
       COL_RESOLUTION, COL_CLOCK_PATH, COL_CORRECTED, COL_ROUNDS,
       COL_SPREAD, NCOLS };

static const char *const col_name[NCOLS] = {
    "range", "metric", "count", "mean_us", "median_us", "min_us", "max_us",
    "p90_us", "p99_us", "stddev_us", "exact", "lost", "children",
    "descendants", "observer_us", "share", "unstable", "res_limited",
    "clock_path", "corrected", "rounds", "spread",
};

/* The columns a table of these fields shows, in order; returns how many. */
static int table_columns(unsigned fields, int *cols)
{
    int n = 0;

    for (int c = 0; c < NCOLS; c++) {
        if ((c >= COL_MIN && c <= COL_LOST &&
             !(fields & HRV_FIELDS_EXTENDED)) ||
            (c >= COL_CHILDREN && c <= COL_CLOCK_PATH &&
             !(fields & HRV_FIELDS_OBSERVER)) ||
            (c == COL_CORRECTED && !(fields & HRV_FIELDS_CORRECTED)) ||
            (c >= COL_ROUNDS && !(fields & HRV_FIELDS_ROUNDS)))
            continue;
        cols[n++] = c;
    }
    return n;
}

static int left_aligned(int col)
{
    return col == COL_RANGE || col == COL_METRIC || col == COL_EXACT ||
           col == COL_UNSTABLE || col == COL_RESOLUTION ||
           col == COL_CLOCK_PATH || col == COL_CORRECTED;
}

/* Returns the text of one table cell, formatted into buf where needed. */
static const char *cell(const struct hra_row *r, int col, char *buf)
{
    double ns;

    switch (col) {
    case COL_RANGE:
        return r->range;
    case COL_METRIC:
        return r->metric;
    case COL_COUNT:
        snprintf(buf, CELL_MAX, "%" PRIu64, r->count);
        return buf;
    case COL_EXACT:
        return r->exact ? "yes" : "no";
    case COL_LOST:
        snprintf(buf, CELL_MAX, "%" PRIu64, r->lost);
        return buf;
    case COL_CHILDREN:
        if (r->calls == 0)
            return "-";
        snprintf(buf, CELL_MAX, "%.2f", children_per_call(r));
        return buf;
    case COL_DESCENDANTS:
        if (r->calls == 0)
            return "-";
        snprintf(buf, CELL_MAX, "%.2f", descendants_per_call(r));
        return buf;
    case COL_RESOLUTION:
        return !r->observer_known         ? "-"
               : r->resolution_limited ? "yes"
                                       : "no";
    case COL_OBSERVER:
        if (!r->observer_known)
            return "-";
        ns = r->observer_ns;
        break;
    case COL_SHARE:
        if (!r->observer_known)
            return "-";
        snprintf(buf, CELL_MAX, "%.1f%%", 100.0 * r->observer_share);
        return buf;
    case COL_UNSTABLE:
        return !r->observer_known ? "-" : r->unstable ? "yes" : "no";
    case COL_CLOCK_PATH:
        return hrp_clock_path_name(r->clock_paths);
    case COL_CORRECTED:
        return r->corrected ? "yes" : "no";
    case COL_ROUNDS:
        snprintf(buf, CELL_MAX, "%" PRIu32, r->rounds);
        return buf;
    case COL_SPREAD:
        snprintf(buf, CELL_MAX, "%.1f%%", r->round_spread);
        return buf;
    case COL_MEAN:
        ns = r->mean;
        break;
    case COL_MEDIAN:
        ns = r->median;
        break;
    case COL_MIN:
        ns = r->min;
        break;
    case COL_MAX:
        ns = r->max;
        break;
    case COL_P90:
        ns = r->p90;
        break;
    case COL_P99:
        ns = r->p99;
        break;
    default:
        ns = r->stddev;
        break;
    }
    snprintf(buf, CELL_MAX, "%.3f", ns / 1000.0);
    return buf;
}

/* The width of s on a terminal, counting one column per UTF-8 character. */
static size_t width(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++) {
        if (((unsigned char)*s & 0xc0) != 0x80)
            n++;
    }
    return n;
}

static void pad(FILE *f, size_t n)
{
    while (n-- > 0)
        putc(' ', f);
}

/* Writes one indented table line. Text columns are left-aligned, numbers
 * right-aligned; the last column is not padded on the right. */
static void put_table_line(FILE *f, const char *const *text,
                           const size_t *widths, const int *cols, int ncols)
{
    int c;

    fputs("  ", f);
    for (c = 0; c < ncols; c++) {
        size_t fill = widths[c] - width(text[c]);
        int left = left_aligned(cols[c]);

        if (c > 0)
            fputs("  ", f);
        if (!left)
            pad(f, fill);
        fputs(text[c], f);
        if (left && c < ncols - 1)
            pad(f, fill);
    }
    putc('\n', f);
}

static int same_group(const struct hra_row *a, const struct hra_row *b)
{
    return strcmp(a->node_id, b->node_id) == 0 && strcmp(a->op, b->op) == 0
           && strcmp(a->backend, b->backend) == 0
           && strcmp(a->phase, b->phase) == 0;
}

/*
 * Writes the kept rows as a table: a heading per run of rows with the same
 * node, operator, backend and phase, then the column names and the rows,
 * with column widths taken over every row; a blank line between groups.
 */
static void write_table(struct hrv_writer *w)
{
    char bufs[NCOLS][CELL_MAX];
    const char *text[NCOLS], *names[NCOLS];
    size_t widths[NCOLS];
    int cols[NCOLS];
    int ncols = table_columns(w->fields, cols);
    const struct hra_row *r;
    size_t i, n;
    int c;

    for (c = 0; c < ncols; c++) {
        names[c] = col_name[cols[c]];
        widths[c] = width(names[c]);
    }
    for (i = 0; i < w->nrows; i++) {
        for (c = 0; c < ncols; c++) {
            n = width(cell(&w->rows[i], cols[c], bufs[c]));
            if (n > widths[c])
                widths[c] = n;
        }
    }
    for (i = 0; i < w->nrows; i++) {
        r = &w->rows[i];
        if (i == 0 || !same_group(r, &w->rows[i - 1])) {
            if (i > 0)
                putc('\n', w->out);
            fprintf(w->out, "%s  %s/%s  %s\n", r->node_id, r->op, r->backend,
                    r->phase);
            put_table_line(w->out, names, widths, cols, ncols);
        }
        for (c = 0; c < ncols; c++)
            text[c] = cell(r, cols[c], bufs[c]);
        put_table_line(w->out, text, widths, cols, ncols);
    }
}

void hrv_writer_init(struct hrv_writer *w, FILE *out, enum hrv_format format,
                     unsigned fields)
{
    w->out = out;
    w->format = format;
    w->fields = fields;
    w->nrows = 0;
    w->rows = NULL;
    w->cap = 0;
}

int hrv_writer_row(struct hrv_writer *w, const struct hra_row *row)
{
    switch (w->format) {
    case HRV_FORMAT_JSONL:
        write_jsonl(w->out, row, w->fields);
        break;
    case HRV_FORMAT_CSV:
        if (w->nrows == 0)
            write_csv_header(w->out, w->fields);
        write_csv(w->out, row, w->fields);
        break;
    case HRV_FORMAT_TABLE:
    case HRV_FORMAT_BMF:
    case HRV_FORMAT_BENCHMARK_ACTION:
        return keep_row(w, row);
    default:
        return -EINVAL;
    }
    w->nrows++;
    return ferror(w->out) ? -EIO : 0;
}

int hrv_writer_finish(struct hrv_writer *w)
{
    int rc = 0;

    if (w->format == HRV_FORMAT_CSV && w->nrows == 0)
        write_csv_header(w->out, w->fields);
    if (w->format == HRV_FORMAT_TABLE && w->rows != NULL)
        write_table(w);
    if (w->format == HRV_FORMAT_BMF)
        rc = hrv_bmf_write(w->out, w->rows, w->nrows);
    if (w->format == HRV_FORMAT_BENCHMARK_ACTION)
        rc = hrv_benchmark_action_write(w->out, w->rows, w->nrows);
    free_rows(w);
    if (rc != 0)
        return rc;
    if (fflush(w->out) != 0 || ferror(w->out))
        return -EIO;
    return 0;
}

void hrv_writer_fini(struct hrv_writer *w)
{
    if (w == NULL)
        return;
    free_rows(w);
}

void hrv_table_lost(FILE *f, const char *node_id, uint64_t lost)
{
    fprintf(f, "lost: %llu events of node ", (unsigned long long)lost);
    hrv_text_put(f, node_id);
    fputc('\n', f);
}
