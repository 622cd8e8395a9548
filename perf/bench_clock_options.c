/*
 * clock.options: the ways of reading a clock the client could use, each
 * measured for its cost and for its bias against block timing.
 *
 * The work is a dependent chain of integer operations, from about 10 ns to
 * about 3 us. (Longer work reads above the block timing with every option,
 * CLOCK_MONOTONIC included: a difference between the work repeated in a
 * block and the work run once, not a bias of a clock, so the sizes stop at
 * 3 us.) Its true duration is timed in blocks of many repetitions between
 * two reads of CLOCK_MONOTONIC (the clock's own cost is then negligible). Each option then times single repetitions, one pair of reads
 * around each, and its bias at that size is the mean of those readings
 * (trimmed of interruptions) less the truth. An option whose bias is the
 * same at every size can be corrected by a constant, which the calibration
 * measures; one whose bias depends on the work cannot. The mean, not the
 * median, is used so that a clock that advances in coarse steps still gives
 * a figure finer than its step (the work starts at random phases of it).
 *
 * Options: plain rdtsc; lfence before rdtsc (the end read waits for the
 * work); rdtsc, lfence at the start and lfence, rdtsc at the end (both
 * reads fenced on the side of the work); lfence, rdtsc, lfence at both
 * ends (each read fenced on both sides: what a scope does, hostrange.h);
 * rdtscp, lfence; and
 * clock_gettime(CLOCK_MONOTONIC). Per option it prints the cost of one
 * read, the bias at each size and the spread of the bias (largest less
 * smallest) as JSON lines, and the ratio of the spread to one clock step
 * (the step its readings advance by), then the cost of a pair of
 * reads against a pair of plain rdtsc.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

enum opt {
    OPT_PLAIN, OPT_LFENCE, OPT_FENCED, OPT_ORDERED, OPT_RDTSCP, OPT_MONO,
    NOPT
};
static const char *const opt_name[NOPT] = {
    "rdtsc", "lfence_rdtsc", "rdtsc_lfence_both", "lfence_rdtsc_lfence",
    "rdtscp_lfence", "monotonic",
};

static uint64_t mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The start and end reads of each option, inlined into the timed loop. */
static inline __attribute__((always_inline)) uint64_t rd_start(enum opt o)
{
#if HAVE_TSC
    unsigned aux;
    uint64_t t;

    switch (o) {
    case OPT_PLAIN:
        return __rdtsc();
    case OPT_LFENCE:
        _mm_lfence();
        return __rdtsc();
    case OPT_FENCED:
        t = __rdtsc();
        _mm_lfence();
        return t;
    case OPT_ORDERED:
        _mm_lfence();
        t = __rdtsc();
        _mm_lfence();
        return t;
    case OPT_RDTSCP:
        t = __rdtscp(&aux);
        _mm_lfence();
        return t;
    default:
        break;
    }
#endif
    (void)o;
    return mono();
}

static inline __attribute__((always_inline)) uint64_t rd_end(enum opt o)
{
#if HAVE_TSC
    /* The half-fenced options fence before their end read; the others
     * read the end as they read the start. */
    if (o == OPT_LFENCE || o == OPT_FENCED) {
        _mm_lfence();
        return __rdtsc();
    }
#endif
    return rd_start(o);
}

static volatile uint64_t sink;

/* A dependent chain of n steps (a multiply and an add each). */
static inline __attribute__((always_inline)) uint64_t work(uint64_t x,
                                                           unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        x = x * 0x9E3779B97F4A7C15ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

/* ns per tick of the TSC, against CLOCK_MONOTONIC over 50 ms. */
static double tsc_ns_per_tick(void)
{
#if HAVE_TSC
    uint64_t m0 = mono(), t0 = __rdtsc(), m1, t1;

    do {
        m1 = mono();
        t1 = __rdtsc();
    } while (m1 - m0 < 50000000u);
    return (double)(m1 - m0) / (double)(t1 - t0);
#else
    return 1.0;
#endif
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The mean of v[0..n) without the values above 3 x its median plus one
 * step (interruptions), in place (v is sorted). */
static double trimmed_mean(double *v, size_t n, double step)
{
    double lim, s = 0;
    size_t k = 0;

    qsort(v, n, sizeof *v, cmp_d);
    lim = 3 * v[n / 2] + step;
    for (size_t i = 0; i < n; i++) {
        if (v[i] > lim)
            break;
        s += v[i];
        k++;
    }
    return k ? s / (double)k : 0;
}

#define SAMPLES 10000

/* The mean time of one repetition of work(n) read by option o, in ns. */
static double timed(enum opt o, unsigned n, double nspt, double step,
                    double *v)
{
    uint64_t x = 1;

    for (unsigned i = 0; i < SAMPLES; i++) {
        uint64_t a = rd_start(o);
        x = work(x, n);
        uint64_t b = rd_end(o);
        v[i] = (double)(b - a) * (o == OPT_MONO ? 1.0 : nspt);
    }
    sink = x;
    return trimmed_mean(v, SAMPLES, step);
}

/* The true time of one repetition of work(n), by block timing: the
 * shortest of 15 blocks of about 200 us each (another process taking the
 * processor can only make a block longer). */
static double truth(unsigned n)
{
    double best = 1e30;
    uint64_t x = 1;
    unsigned reps = 200000u / (n + 1) + 10;

    for (int r = 0; r < 15; r++) {
        uint64_t t0 = mono();
        for (unsigned i = 0; i < reps; i++)
            x = work(x, n);
        double t = (double)(mono() - t0) / reps;
        if (t < best)
            best = t;
    }
    sink = x;
    return best;
}

/* The step of the clock, in ns: the greatest common divisor of the
 * differences between consecutive reads, some a few instructions apart
 * (the smallest difference is the cost of a read where a read costs more
 * than a step, and an unordered read can even show less than a step). */
static double step_of(enum opt o, double nspt)
{
    uint64_t g = 0, prev = rd_start(o);
    volatile unsigned spin;

    for (int i = 0; i < 200000 && g != 1; i++) {
        uint64_t t;

        for (spin = 0; spin < (unsigned)i % 7u; spin++)
            ;
        t = rd_start(o);
        if (t > prev) {
            uint64_t a = t - prev, b = g;

            while (b != 0) {
                uint64_t r = a % b;
                a = b;
                b = r;
            }
            g = a;
        }
        prev = t;
    }
    return (double)g * (o == OPT_MONO ? 1.0 : nspt);
}

/* The cost of one read: pairs of reads timed in blocks. */
static double cost_of(enum opt o)
{
    double best = 1e30;
    uint64_t acc = 0;

    for (int r = 0; r < 7; r++) {
        uint64_t t0 = mono();
        for (int i = 0; i < 200000; i++) {
            acc += rd_start(o);
            acc += rd_end(o);
        }
        double t = (double)(mono() - t0) / 400000.0;
        if (t < best)
            best = t;
    }
    sink = acc;
    return best;
}

int main(void)
{
    static const unsigned sizes[] = { 10, 30, 100, 300, 1000, 3000 };
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double nspt = tsc_ns_per_tick(), tru[NS], plain_pair = 0;
    double *v = malloc(SAMPLES * sizeof *v);

    if (v == NULL)
        return 1;
    for (int o = HAVE_TSC ? 0 : OPT_MONO; o < NOPT; o++) {
        double step = step_of((enum opt)o, nspt), cost = cost_of((enum opt)o);

        if (o == (HAVE_TSC ? OPT_PLAIN : OPT_MONO))
            plain_pair = 2 * cost;
        double lo = 1e30, hi = -1e30, empty;

        empty = timed((enum opt)o, 0, nspt, step, v);
        printf("{\"bench\":\"clock.options.%s\",\"cost_ns\":%.2f,"
               "\"step_ns\":%.2f,\"empty_ns\":%.2f,\"bias_ns\":[",
               opt_name[o], cost, step, empty);
        for (int s = 0; s < NS; s++) {
            double bs[5], b;

            /* The median of 5 tries, each against a truth timed just
             * before and after it: another process taking the processor
             * for part of one try does not decide the figure. */
            for (int t = 0; t < 5; t++) {
                double t0 = truth(sizes[s]);
                double m = timed((enum opt)o, sizes[s], nspt, step, v);

                double t1 = truth(sizes[s]);

                tru[s] = t0 < t1 ? t0 : t1;
                bs[t] = m - tru[s];
            }
            qsort(bs, 5, sizeof bs[0], cmp_d);
            b = bs[2];
            printf("%s{\"work_ns\":%.1f,\"bias\":%.2f}", s ? "," : "",
                   tru[s], b);
            if (b < lo)
                lo = b;
            if (b > hi)
                hi = b;
        }
        printf("],\"value\":%.2f,\"unit\":\"ns bias spread\","
               "\"baseline\":%.2f,\"ratio\":%.3f}\n", hi - lo, step,
               (hi - lo) / step);
        printf("{\"bench\":\"clock.options.%s.cost\",\"value\":%.2f,"
               "\"unit\":\"ns per pair\",\"baseline\":%.2f,\"ratio\":%.3f}\n",
               opt_name[o], 2 * cost, plain_pair, 2 * cost / plain_pair);
        fflush(stdout);
    }
    free(v);
    return 0;
}
