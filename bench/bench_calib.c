/*
 * hostrange-bench --calibrate: the observer cost of this build of the
 * client on this machine, measured inside an instrumented process through
 * the real client. Empty scopes nested three deep give the daemon the time
 * inside an empty scope (lib/agg/observer.h): calibration.inner, which is
 * empty, inside calibration.mid inside calibration.outer, as real ranges
 * are. calibration.fan, 32 child scopes around about 100 ns of work
 * each, against calibration.flat, the same work without them, gives the
 * cost of a child scope where it has work around it: a wide fan-out of
 * short ranges, where that cost is multiplied most (a fan of fewer and
 * longer children leaves a larger residue against its truth). The cost of
 * one read of the clock the client uses is measured here, as pairs of
 * back-to-back reads as the client's path reads them (hr_clock_pair_ns:
 * plain, waiting or ordered), and recorded as calibration.timer.
 * Everything runs on the clock path of this process (HOSTRANGE_CLOCK),
 * which the daemon learns from its batches: the calibration is of that
 * path.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostrange.h"
#include "bench/bench.h"
#include "proto/protocol.h"

static hr_site s_outer = HR_SITE_INIT(HRP_CALIB_OUTER);
static hr_site s_mid = HR_SITE_INIT(HRP_CALIB_MID);
static hr_site s_inner = HR_SITE_INIT(HRP_CALIB_INNER);
static hr_site s_timer = HR_SITE_INIT(HRP_CALIB_TIMER);
static hr_site s_fan = HR_SITE_INIT(HRP_CALIB_FAN);
static hr_site s_fan_child = HR_SITE_INIT(HRP_CALIB_FAN_CHILD);
static hr_site s_flat = HR_SITE_INIT(HRP_CALIB_FLAT);

/* The fan: FAN_CHILDREN child scopes, each around FAN_STEPS steps of a
 * dependent chain (about 100 ns); flat: the same work, no child. */
#define FAN_CHILDREN 32
#define FAN_STEPS 90u
#define FAN_MIN_CALLS 4000u

static volatile uint64_t fan_sink;

static __attribute__((noinline)) void fan_work(void)
{
    uint64_t x = fan_sink;

    for (unsigned i = 0; i < FAN_STEPS; i++) {
        x = x * 0x9E3779B97F4A7C15ull + i;
        __asm__ volatile("" : "+r"(x));
    }
    fan_sink = x;
}

static void fan(void)
{
    hr_scope p = hr_begin(&s_fan);

    for (int i = 0; i < FAN_CHILDREN; i++) {
        hr_scope c = hr_begin(&s_fan_child);

        fan_work();
        hr_end(c);
    }
    hr_end(p);
}

static void flat(void)
{
    hr_scope p = hr_begin(&s_flat);

    for (int i = 0; i < FAN_CHILDREN; i++)
        fan_work();
    hr_end(p);
}

/* One nesting: outer > mid > inner, with nothing else inside. */
static void nest(void)
{
    hr_scope outer = hr_begin(&s_outer);
    hr_scope mid = hr_begin(&s_mid);
    hr_scope inner = hr_begin(&s_inner);

    hr_end(inner);
    hr_end(mid);
    hr_end(outer);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* The time of `pairs` pairs of back-to-back reads of the clock as this
 * process's ranges read it (hr_clock_pair_ns: plain, waiting or ordered),
 * in ns, into v. */
static void timer_pairs(uint64_t *v, unsigned pairs)
{
    for (unsigned i = 0; i < pairs; i++)
        v[i] = (uint64_t)(hr_clock_pair_ns() + 0.5);
}

int bench_calibrate(unsigned calls, unsigned pairs)
{
    const char *label = getenv("HOSTRANGE_LABEL");
    uint64_t *v;
    int rc;

    if (!hr_compiled() || !hr_enabled()) {
        fprintf(stderr, "hostrange-bench: --calibrate needs collection (it "
                "is off: HOSTRANGE=0, or built without the ranges)\n");
        return -1;
    }
    if (label == NULL)
        label = program_invocation_short_name;
    /* Only the latest calibration of a label is kept. */
    if (bench_daemon_reset_calibration(label) != 0)
        return -1;
    v = malloc(((size_t)pairs + 1) * sizeof *v);
    if (v == NULL) {
        fprintf(stderr, "hostrange-bench: out of memory\n");
        return -1;
    }
    rc = hr_labels_set(HRP_CALIB_NODE, label, hr_clock_name(), HR_PHASE_WARM);
    if (rc == 0)
        rc = hr_window_begin();
    if (rc != 0) {
        fprintf(stderr, "hostrange-bench: cannot open a calibration window: "
                "%s\n", strerror(-rc));
        free(v);
        return -1;
    }
    for (unsigned i = 0; i < calls; i++)
        nest();
    /* Fan and flat in turns, so that both see the same machine; at least
     * FAN_MIN_CALLS of each, whatever --calls (their difference is small
     * against their own spread). */
    for (unsigned i = 0; i < calls / 4 + 1 || i < FAN_MIN_CALLS; i++) {
        fan();
        flat();
    }
    hr_window_end();
    timer_pairs(v, pairs);
    for (unsigned i = 0; i < pairs; i++)
        hr_record(&s_timer, v[i]);
    qsort(v, pairs, sizeof *v, cmp_u64);
    fprintf(stderr, "hostrange-bench: calibrated label %s, clock %s, path "
            "%s: %u nested scopes, %u clock read pairs (median %llu ns); "
            "the figures: hostrangectl stats | grep '^calibration\\.'\n",
            label, hr_clock_name(), hr_clock_path(), calls, pairs,
            (unsigned long long)v[pairs / 2]);
    free(v);
    return 0;
}
