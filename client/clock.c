/*
 * The clock: the TSC where it is invariant (the CPU flags constant_tsc and
 * nonstop_tsc), otherwise CLOCK_MONOTONIC, read on one of two paths: fast
 * (plain reads, the default) or ordered (reads and the scope's own work
 * fenced with the program's work). HOSTRANGE_CLOCK, a list of words
 * separated by commas, overrides either: tsc or monotonic, fast or
 * ordered, and how the fast path reads the TSC: waiting (rdtscp, which
 * waits for the work before it; the default on AMD's processors) or plain
 * (rdtsc; the default elsewhere). Ranges are measured in ticks; the
 * shipper converts them to nanoseconds with a ratio calibrated once per process against
 * CLOCK_MONOTONIC over at least HR__CALIBRATE_NS, measured from library
 * start, so that the program itself never waits for the calibration.
 */
#include "config.h"

#include "client/client.h"
#include "proto/monotonic.h"
#include "proto/protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HR__CALIBRATE_NS 20000000u /* 20 ms */

int hr__g_tsc;
int hr__g_ordered;
int hr__g_fenced;
int hr__g_fast;

static uint64_t cal_tsc0, cal_mono0;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;
/* ns = ticks * mult >> 32 */
static uint64_t cal_mult = 1ull << 32;

static uint64_t mono_ns(void)
{
    return hrp_mono_ns();
}

void hr__clock_init(void)
{
    struct hrp_clock_choice c;

    hrp_clock_choose(getenv("HOSTRANGE_CLOCK"), &c);
    hr__g_tsc = c.tsc;
    hr__g_ordered = c.ordered;
#if defined(__x86_64__) || defined(__i386__)
    if (hr__g_tsc) {
        cal_mono0 = mono_ns();
        cal_tsc0 = __rdtsc();
    }
#endif
    hr__g_fenced = hr__g_tsc && hr__g_ordered;
#if defined(__x86_64__) || defined(__i386__)
    /* The fast path's reads wait for the work before them on AMD's
     * processors (where plain ones were measured to run ahead of it), or
     * where HOSTRANGE_CLOCK says waiting; plain elsewhere, or where it
     * says plain (hrp_clock_choose). */
    hr__g_fast = 0;
    if (hr__g_tsc && !hr__g_ordered)
        hr__g_fast = !c.waiting ? HR__READ_PLAIN
                     : c.rdtscp ? HR__READ_RDTSCP
                                : HR__READ_LFENCE;
#endif
}

/* The step of the clock in use, in its own units: the greatest common
 * divisor of the differences between consecutive reads, some of them a
 * few instructions apart, in each of HR__STEP_BLOCKS blocks of reads, and
 * the divisor most blocks agree on (hr__clock_step_vote). The smallest
 * difference would be the cost of a read where that is more than a step
 * (an ordered read of a fine TSC); the divisor is the step the readings
 * advance by. The reads are ordered ones on either path: plain reads of a
 * TSC that advances in steps (AMD's, under KVM) were seen to differ by
 * single ticks. One divisor over all the reads was not enough: a single
 * pair of reads a tick apart made it one tick, and the process's clock
 * step, which its run's machine fingerprint holds, 0.39 ns where the same
 * machine's other processes said 10 ns (seen once, on a busy machine). */
#define HR__STEP_READS 20000
#define HR__STEP_BLOCKS 8
static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t r = a % b;

        a = b;
        b = r;
    }
    return a;
}

uint64_t hr__clock_step_vote(const uint64_t *g, size_t n)
{
    uint64_t best = 0;
    size_t best_n = 0;

    for (size_t i = 0; i < n; i++) {
        size_t k = 0;

        if (g[i] == 0)
            continue;
        for (size_t j = 0; j < n; j++)
            k += g[j] == g[i];
        if (k > best_n || (k == best_n && g[i] < best)) {
            best = g[i];
            best_n = k;
        }
    }
    return best;
}

static uint64_t clock_step_units(void)
{
    uint64_t g[HR__STEP_BLOCKS] = { 0 };
    volatile unsigned spin;

    for (int b = 0; b < HR__STEP_BLOCKS; b++) {
        uint64_t prev = hr__clock_end(hr__g_tsc);

        for (int i = 0; i < HR__STEP_READS / HR__STEP_BLOCKS && g[b] != 1;
             i++) {
            uint64_t t;

            for (spin = 0; spin < (unsigned)i % 7u; spin++)
                ;
            t = hr__clock_end(hr__g_tsc);
            if (t > prev)
                g[b] = gcd_u64(t - prev, g[b]);
            prev = t;
        }
    }
    return hr__clock_step_vote(g, HR__STEP_BLOCKS);
}

static double cal_step_ns;

static void calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint64_t m1, t1;

    if (!hr__g_tsc) {
        cal_step_ns = (double)clock_step_units();
        return;
    }
    while (mono_ns() - cal_mono0 < HR__CALIBRATE_NS) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    t1 = __rdtsc();
    m1 = mono_ns();
    if (t1 > cal_tsc0)
        cal_mult = (uint64_t)(((unsigned __int128)(m1 - cal_mono0) << 32) /
                              (t1 - cal_tsc0));
    cal_step_ns = (double)clock_step_units() * (double)cal_mult /
                  4294967296.0;
#else
    cal_step_ns = (double)clock_step_units();
#endif
}

uint64_t hr__clock_mult(void)
{
    pthread_once(&cal_once, calibrate);
    return cal_mult;
}

double hr__clock_step(void)
{
    pthread_once(&cal_once, calibrate);
    return cal_step_ns;
}

const char *hr__clock_order(void)
{
    if (!hr__g_tsc)
        return "vdso";
    if (hr__g_ordered)
        return "rdtsc;lfence..lfence;rdtsc";
    /* The daemon tells plain reads from waiting ones by these
     * (proto/protocol.h). */
    return hr__g_fast == HR__READ_RDTSCP   ? HRP_CLOCK_ORDER_RDTSCP
           : hr__g_fast == HR__READ_LFENCE ? HRP_CLOCK_ORDER_LFENCE
                                           : HRP_CLOCK_ORDER_PLAIN;
}

const char *hr_clock_path(void)
{
    return hr__g_ordered ? HRP_CLOCK_PATH_ORDERED : HRP_CLOCK_PATH_FAST;
}

uint64_t hr__clock_ticks_to_ns(uint64_t ticks)
{
    return hr__g_tsc ? hr__ticks_ns(ticks, hr__clock_mult()) : ticks;
}

const char *hr_clock_name(void)
{
    return hr__g_tsc ? "tsc" : "monotonic";
}

uint64_t hr_now_ns(void)
{
    return mono_ns();
}

double hr_clock_pair_ns(void)
{
    uint64_t a, b;

    /* The reads of hr__begin and hr__end on each path. */
    if (hr__g_fast) {
        a = hr__fast_read();
        b = hr__fast_read();
    } else if (hr__g_fenced) {
        a = hr__clock_start(1);
        b = hr__clock_end(1);
    } else {
        a = hr__clock_start(0);
        b = hr__clock_end(0);
    }
    if (!hr__g_tsc)
        return (double)(b - a);
    return (double)(b - a) * (double)hr__clock_mult() / 4294967296.0;
}
