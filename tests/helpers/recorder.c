/*
 * An instrumented program for the fault and soak tests. It records the
 * values 1, 2, 3, ... (nanoseconds, as hr_record values of the site
 * `fault.value`), or with -R makes calls of two nested ranges
 * (`fault.outer` containing `fault.inner`) in warm windows, under the node
 * id of -N.
 *
 * Options: -n COUNT stops after COUNT values or calls (0: no limit); -s
 * SECONDS stops after that long; -S FILE stops once FILE exists; -e EVERY flushes after every EVERY values
 * (waiting up to -f MS milliseconds, default 30000, for the
 * acknowledgements) and prints `flushing values=V` before the flush and
 * the counters after it as `acked samples=S delivered=D lost=L ...
 * values=V flush=RC` (RC: what hr_flush returned); -p NS busy-waits NS
 * nanoseconds
 * per value; -R makes range calls instead of records.
 *
 * After the library's own exit handling (its flush at exit), it prints the
 * final counters as `final samples=S delivered=D lost=L batches=B
 * spooled=P` (P: samples left in the spool for the next daemon), with
 * `exit_wait_ns=W` (the time from the return from main to then: what the
 * library's exit made the program wait) and `run_ns=R` (the time of the
 * main loop). With HOSTRANGE=0 nothing is collected: the baseline.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "hostrange.h"
#include "proto/monotonic.h"

static hr_site s_value = HR_SITE_INIT("fault.value");
static hr_site s_outer = HR_SITE_INIT("fault.outer");
static hr_site s_inner = HR_SITE_INIT("fault.inner");

static uint64_t g_exit_start_ns, g_run_ns;

static void print_counters(const char *tag)
{
    hr_counters k;

    hr_counters_get(&k);
    printf("%s samples=%llu delivered=%llu lost=%llu batches=%llu "
           "spooled=%llu", tag, (unsigned long long)k.samples,
           (unsigned long long)k.delivered, (unsigned long long)k.lost,
           (unsigned long long)k.batches_sent,
           (unsigned long long)k.spooled);
}

/* Registered before the library's exit handler, so run after it. */
static void at_exit_last(void)
{
    print_counters("final");
    printf(" exit_wait_ns=%llu run_ns=%llu\n",
           (unsigned long long)(hrp_mono_ns() - g_exit_start_ns),
           (unsigned long long)g_run_ns);
    fflush(stdout);
}

/* Registered after the library's exit handler, so run before it. */
static void at_exit_first(void)
{
    g_exit_start_ns = hrp_mono_ns();
}

static void spin(uint64_t ns)
{
    uint64_t t0;

    if (ns == 0)
        return;
    t0 = hrp_mono_ns();
    while (hrp_mono_ns() - t0 < ns)
        ;
}

static void call(uint64_t pace_ns)
{
    HR_SCOPE(outer, &s_outer);
    spin(pace_ns / 2);
    {
        HR_SCOPE(inner, &s_inner);
        spin(pace_ns - pace_ns / 2);
    }
}

int main(int argc, char **argv)
{
    const char *node = "tests/fault::recorder", *stop_file = NULL;
    unsigned long long count = 0, every = 0, pace = 0, seconds = 0;
    int flush_ms = 30000;
    int ranges = 0, c;
    uint64_t t0, deadline;

    atexit(at_exit_last);
    while ((c = getopt(argc, argv, "N:n:s:S:e:f:p:R")) != -1) {
        switch (c) {
        case 'N':
            node = optarg;
            break;
        case 'n':
            count = strtoull(optarg, NULL, 10);
            break;
        case 's':
            seconds = strtoull(optarg, NULL, 10);
            break;
        case 'S':
            stop_file = optarg;
            break;
        case 'e':
            every = strtoull(optarg, NULL, 10);
            break;
        case 'f':
            flush_ms = atoi(optarg);
            break;
        case 'p':
            pace = strtoull(optarg, NULL, 10);
            break;
        case 'R':
            ranges = 1;
            break;
        default:
            fprintf(stderr, "usage: recorder [-N NODE] [-n COUNT] "
                    "[-s SECONDS] [-S FILE] [-e EVERY] [-f MS] [-p NS] "
                    "[-R]\n");
            return 2;
        }
    }
    /* The library registers its exit handler on its first use. */
    if (hr_labels_set(node, "fault", "cpu", HR_PHASE_WARM) != 0) {
        fprintf(stderr, "recorder: cannot set the labels\n");
        return 1;
    }
    atexit(at_exit_first);

    t0 = hrp_mono_ns();
    deadline = seconds != 0 ? t0 + seconds * 1000000000u : 0;
    if (ranges)
        hr_window_begin();
    for (unsigned long long i = 1; count == 0 || i <= count; i++) {
        if (ranges) {
            call(pace);
        } else {
            hr_record(&s_value, i);
            spin(pace);
        }
        if (every != 0 && i % every == 0) {
            int rc;

            if (ranges)
                hr_window_end();
            printf("flushing values=%llu\n", i);
            fflush(stdout);
            rc = hr_flush(flush_ms);
            print_counters("acked");
            printf(" values=%llu flush=%d\n", i, rc);
            fflush(stdout);
            if (ranges)
                hr_window_begin();
        }
        if (deadline != 0 && (i & 1023) == 0 && hrp_mono_ns() >= deadline)
            break;
        if (stop_file != NULL && (i & 16383) == 0 &&
            access(stop_file, F_OK) == 0)
            break;
    }
    if (ranges)
        hr_window_end();
    g_run_ns = hrp_mono_ns() - t0;
    return 0;
}
