/*
 * The report in the formats that benchmark dashboards read (dump
 * --format bmf|benchmark-action), one entry per key of the report:
 *
 * - Bencher Metric Format (BMF): one JSON object whose members are the
 *   benchmarks, named "NODE OPERATOR/BACKEND PHASE RANGE" (RANGE: the
 *   calling context's path a;b;c of a row of dump --by path), each an
 *   object of measures named by the metric (inclusive, self), each
 *   {"value": median, "lower_value": min, "upper_value": max} in ns.
 * - github-action-benchmark's customSmallerIsBetter: a JSON array of
 *   {"name": "NODE OPERATOR/BACKEND PHASE RANGE METRIC", "unit": "ns",
 *   "value": median, "extra": "count N, mean M ns, min A ns, max B ns"}.
 *
 * Names are JSON strings by escape.h's rule; numbers as the report's
 * (numfmt.h). Pure logic: writes to the FILE * it is given.
 */
#ifndef HOSTRANGE_VIEW_DASHBOARD_H
#define HOSTRANGE_VIEW_DASHBOARD_H

#include <stddef.h>
#include <stdio.h>

#include "lib/agg/rows.h"

/* Writes rows[0..n) as BMF (rows of one benchmark joined, whatever their
 * order; a benchmark's measure given twice keeps its first row). Returns
 * 0 or -ENOMEM. */
int hrv_bmf_write(FILE *f, const struct hra_row *rows, size_t n);

/* Writes rows[0..n) as github-action-benchmark's customSmallerIsBetter
 * list, in their order. Returns 0 or -ENOMEM. */
int hrv_benchmark_action_write(FILE *f, const struct hra_row *rows,
                               size_t n);

#endif
