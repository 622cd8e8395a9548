/*
 * Statistics of a population of uint64_t nanosecond values: sorting, and
 * the summary a report row carries. Pure logic, no I/O.
 *
 * Quantiles use linear interpolation between the two nearest ranks (rank
 * q * (n - 1), counted from 0), so the median is the middle value, or the
 * mean of the two middle values when n is even. The standard deviation is
 * the population one (divided by n).
 */
#ifndef HOSTRANGE_SUMMARY_H
#define HOSTRANGE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

struct hrs_hist;

struct hrs_summary {
    uint64_t count;
    double mean;
    double median;
    double min;
    double max;
    double p10;
    double p90;
    double p99;
    double stddev;
    int exact; /* 1 when computed from every value, 0 from a histogram */
};

/*
 * Sorts v[0..n) ascending: a least-significant-digit radix sort on the bits
 * in which the values differ (bits where every value agrees are skipped),
 * in digits of up to 11 bits, so durations below half a millisecond take
 * two passes. tmp must hold n values; it is scratch.
 */
void hrs_sort_u64(uint64_t *v, size_t n, uint64_t *tmp);

/* The summary of n values sorted ascending. */
void hrs_summary_sorted(const uint64_t *v, size_t n, struct hrs_summary *s);

/* The summary of the values in a histogram (exact = 0). */
void hrs_summary_hist(const struct hrs_hist *h, struct hrs_summary *s);

/*
 * Exact statistics of n values, which are sorted in place. The mean is the
 * correctly rounded quotient; the median is the middle value, or the mean of
 * the two middle values when n is even.
 */
void hrs_stats(uint64_t *v, size_t n, double *mean, double *median);

#endif
