/* The report for benchmark dashboards: Bencher Metric Format and
 * github-action-benchmark's list (dashboard.h). */
#include "config.h"

#include "lib/view/dashboard.h"
#include "lib/view/escape.h"
#include "lib/view/numfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A number as the report writes it; JSON has no NaN or infinity, and a
 * dashboard reads them as no value: null. */
static void put_number(FILE *f, double v)
{
    char buf[32];

    if (!isfinite(v) || hrv_format_number(buf, sizeof buf, v) < 0)
        fputs("null", f);
    else
        fputs(buf, f);
}

/* Whether rows a and b are one benchmark (all of the key but metric). */
static int same_bench(const struct hra_row *a, const struct hra_row *b)
{
    return strcmp(a->node_id, b->node_id) == 0 && strcmp(a->op, b->op) == 0
           && strcmp(a->backend, b->backend) == 0
           && strcmp(a->phase, b->phase) == 0
           && strcmp(a->range, b->range) == 0;
}

/* The benchmark's name "NODE OPERATOR/BACKEND PHASE RANGE" (and
 * " METRIC" when with_metric), as a JSON string. Returns 0 or -ENOMEM. */
static int put_name(FILE *f, const struct hra_row *r, int with_metric)
{
    size_t n = strlen(r->node_id) + strlen(r->op) + strlen(r->backend) +
               strlen(r->phase) + strlen(r->range) + strlen(r->metric) + 6;
    char *s = malloc(n);

    if (s == NULL)
        return -ENOMEM;
    snprintf(s, n, "%s %s/%s %s %s%s%s", r->node_id, r->op, r->backend,
             r->phase, r->range, with_metric ? " " : "",
             with_metric ? r->metric : "");
    hrv_json_string(f, s);
    free(s);
    return 0;
}

int hrv_bmf_write(FILE *f, const struct hra_row *rows, size_t n)
{
    int first = 1;

    fputc('{', f);
    for (size_t i = 0; i < n; i++) {
        int seen = 0, firstm = 1;

        for (size_t j = 0; j < i && !seen; j++)
            seen = same_bench(&rows[j], &rows[i]);
        if (seen)
            continue;
        fputs(first ? "\n  " : ",\n  ", f);
        first = 0;
        if (put_name(f, &rows[i], 0) != 0)
            return -ENOMEM;
        fputs(": {", f);
        for (size_t j = i; j < n; j++) {
            int dup = 0;

            if (!same_bench(&rows[i], &rows[j]))
                continue;
            for (size_t k = i; k < j && !dup; k++)
                dup = same_bench(&rows[i], &rows[k]) &&
                      strcmp(rows[k].metric, rows[j].metric) == 0;
            if (dup)
                continue;
            fputs(firstm ? "\n    " : ",\n    ", f);
            firstm = 0;
            hrv_json_string(f, rows[j].metric);
            fputs(": {\"value\": ", f);
            put_number(f, rows[j].median);
            fputs(", \"lower_value\": ", f);
            put_number(f, rows[j].min);
            fputs(", \"upper_value\": ", f);
            put_number(f, rows[j].max);
            fputc('}', f);
        }
        fputs("\n  }", f);
    }
    fputs(first ? "}\n" : "\n}\n", f);
    return 0;
}

int hrv_benchmark_action_write(FILE *f, const struct hra_row *rows,
                               size_t n)
{
    char extra[256], a[32], b[32], c[32];

    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        const struct hra_row *r = &rows[i];

        fputs(i == 0 ? "\n  {\"name\": " : ",\n  {\"name\": ", f);
        if (put_name(f, r, 1) != 0)
            return -ENOMEM;
        fputs(", \"unit\": \"ns\", \"value\": ", f);
        put_number(f, r->median);
        if (hrv_format_number(a, sizeof a, r->mean) < 0)
            snprintf(a, sizeof a, "?");
        if (hrv_format_number(b, sizeof b, r->min) < 0)
            snprintf(b, sizeof b, "?");
        if (hrv_format_number(c, sizeof c, r->max) < 0)
            snprintf(c, sizeof c, "?");
        snprintf(extra, sizeof extra, "count %" PRIu64 ", mean %s ns, "
                 "min %s ns, max %s ns", r->count, a, b, c);
        fputs(", \"extra\": ", f);
        hrv_json_string(f, extra);
        fputc('}', f);
    }
    fputs(n == 0 ? "]\n" : "\n]\n", f);
    return 0;
}
