/*
 * The cost of the NVTX tool (run by `make bench` under a private daemon,
 * with NVTX_INJECTION64_PATH set to the tool by its wrapper script). Each
 * figure is ns per complete range, timing only loops of 20,000 ranges that
 * fit in the thread's buffer, each shipped (flushed) before the next; the
 * median of 5 repetitions:
 *
 *   nvtx.scope             nvtxRangePushA/nvtxRangePop through the tool;
 *                          baseline: hr_begin/hr_end in the same window
 *   nvtx.scope.registered  nvtxDomainRangePushEx/Pop of a registered
 *                          string in a domain; the same baseline
 *
 * The ranges are collected in the tool's window (the whole run), so both
 * paths pay the same measuring and buffering.
 */
#include "config.h"

#include "perf/bench_report.h"

#include <nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostrange.h"

#define REPS 5
#define LOOP 20000

static hr_site s_hr = HR_SITE_INIT("model.forward");

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The median of the REPS rounds of a figure. */
static double median(double *v)
{
    return bench_median(v, REPS);
}

enum kind { HR, NVTX_ASCII, NVTX_REGISTERED };

static nvtxDomainHandle_t g_domain;
static nvtxEventAttributes_t g_attr;

/* ns per range of `kind` over n ranges. */
static double run(enum kind kind, long n)
{
    double total = 0;
    long done = 0;

    while (done < n) {
        double t0 = now_ns();

        switch (kind) {
        case HR:
            for (long i = 0; i < LOOP; i++) {
                hr_scope sc = hr_begin(&s_hr);
                hr_end(sc);
            }
            break;
        case NVTX_ASCII:
            for (long i = 0; i < LOOP; i++) {
                nvtxRangePushA("model.forward");
                nvtxRangePop();
            }
            break;
        case NVTX_REGISTERED:
            for (long i = 0; i < LOOP; i++) {
                nvtxDomainRangePushEx(g_domain, &g_attr);
                nvtxDomainRangePop(g_domain);
            }
            break;
        }
        total += now_ns() - t0;
        hr_flush(600000);
        done += LOOP;
    }
    return total / (double)done;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double h[REPS], a[REPS], r[REPS], h2[REPS];

    /* The first NVTX call loads the tool, which opens its window. */
    nvtxRangePushA("bench.start");
    nvtxRangePop();
    if (!hr_enabled() || !__atomic_load_n(&hr__active, __ATOMIC_RELAXED)) {
        fprintf(stderr, "bench_nvtx: the NVTX tool is not loaded (set "
                "NVTX_INJECTION64_PATH to libhostrange-nvtx.so)\n");
        return 1;
    }
    g_domain = nvtxDomainCreateA("bench");
    memset(&g_attr, 0, sizeof g_attr);
    g_attr.version = NVTX_VERSION;
    g_attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    g_attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    g_attr.message.registered =
        nvtxDomainRegisterStringA(g_domain, "model.forward");
    /* Warm both paths up, then alternate them. */
    run(HR, LOOP);
    run(NVTX_ASCII, LOOP);
    run(NVTX_REGISTERED, LOOP);
    for (int i = 0; i < REPS; i++) {
        h[i] = run(HR, n);
        a[i] = run(NVTX_ASCII, n);
        r[i] = run(NVTX_REGISTERED, n);
        h2[i] = run(HR, n);
    }
    for (int i = 0; i < REPS; i++)
        h[i] = (h[i] + h2[i]) / 2;
    bench_print("nvtx.scope", median(a), median(h));
    bench_print("nvtx.scope.registered", median(r), median(h));
    return 0;
}
