/* What the scope benchmarks print (see bench_report.h). */
#include "config.h"

#include "perf/bench_report.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

void bench_print(const char *name, double value, double baseline)
{
    printf("{\"bench\":\"%s\",\"value\":%.2f,\"unit\":\"ns\","
           "\"baseline\":%.2f,\"ratio\":%.3f}\n",
           name, value, baseline, value / baseline);
    fflush(stdout);
}
