/*
 * An instrumented program for the integration tests. For each of --nodes
 * node ids it runs one call in a cold window and --calls calls in a warm
 * window, then records --records end_to_end values. A call is the range
 * `workload.outer` (busy for 15 us) containing `workload.inner` (busy for
 * 5 us), both busy-waits timed by hr_now_ns. It prints the cost of one
 * clock read as `timer_ns=X`, and exits with --exit's code after returning
 * from main (so the exit flush is what delivers its samples).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "hostrange.h"

static hr_site s_outer = HR_SITE_INIT("workload.outer");
static hr_site s_inner = HR_SITE_INIT("workload.inner");
static hr_site s_e2e = HR_SITE_INIT("end_to_end");

static void spin(uint64_t ns)
{
    uint64_t t0 = hr_now_ns();

    while (hr_now_ns() - t0 < ns)
        ;
}

static void call(void)
{
    HR_SCOPE(outer, &s_outer);
    spin(15000);
    {
        HR_SCOPE(inner, &s_inner);
        spin(5000);
    }
}

int main(int argc, char **argv)
{
    int calls = 1000, nodes = 2, records = 10, code = 0, c;
    uint64_t t0, t1;

    while ((c = getopt(argc, argv, "c:n:r:x:")) != -1) {
        switch (c) {
        case 'c':
            calls = atoi(optarg);
            break;
        case 'n':
            nodes = atoi(optarg);
            break;
        case 'r':
            records = atoi(optarg);
            break;
        case 'x':
            code = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: test-workload [-c CALLS] [-n NODES] "
                    "[-r RECORDS] [-x EXIT_CODE]\n");
            return 2;
        }
    }

    t0 = hr_now_ns();
    for (int i = 0; i < 10000; i++)
        hr_now_ns();
    t1 = hr_now_ns();
    printf("timer_ns=%.1f\n", (double)(t1 - t0) / 10001.0);

    for (int n = 0; n < nodes; n++) {
        char node[64];

        snprintf(node, sizeof node, "tests/workload::node[%d]", n);
        if (hr_labels_set(node, "synthetic", "cpu", HR_PHASE_COLD) != 0 ||
            hr_window_begin() != 0) {
            fprintf(stderr, "test-workload: cannot open a cold window\n");
            return 1;
        }
        call();
        hr_window_end();
        hr_labels_set(node, "synthetic", "cpu", HR_PHASE_WARM);
        hr_window_begin();
        for (int i = 0; i < calls; i++)
            call();
        hr_window_end();
        for (int i = 0; i < records; i++)
            hr_record(&s_e2e, 20000 + (uint64_t)i);
    }
    return code;
}
