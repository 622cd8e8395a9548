/*
 * What the scope benchmarks (bench_client, bench_nvtx) print: the median of
 * their rounds, and one JSON line per figure, its value against the
 * baseline measured in the same run.
 */
#ifndef HOSTRANGE_PERF_BENCH_REPORT_H
#define HOSTRANGE_PERF_BENCH_REPORT_H

#include <stddef.h>

/* The median of v[0..n) (sorted in place; the upper one of two). */
double bench_median(double *v, size_t n);

/* {"bench":NAME,"value":V,"unit":"ns","baseline":B,"ratio":V/B}, flushed. */
void bench_print(const char *name, double value, double baseline);

#endif
