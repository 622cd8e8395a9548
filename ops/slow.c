/* The knob for testing gates: ranges slowed on purpose (slow.h). */
#include "config.h"

#include "ops/ops.h"
#include "ops/slow.h"

#include <errno.h>
#include <string.h>
#include <time.h>

unsigned hrops__slow_on;
double hrops__slow_share[HROPS__SLOW_N];
unsigned hrops__slow_work_on;
uint64_t hrops__slow_steps[HROPS__SLOW_N];

/* The steps of work whose time calibrates it, and how many times. */
#define SLOW_CALIBRATE_STEPS (1u << 20)
#define SLOW_CALIBRATE_TRIES 5

static const char *const slow_names[HROPS__SLOW_N] = {
    "binding.body", "backend.submit", "dispatch.call",
};

/* The work's result, kept so that the work is not optimized away. */
static volatile uint64_t slow_sink;

uint64_t hrops__slow_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hrops__slow_spin(unsigned which, uint64_t t0)
{
    uint64_t now = hrops__slow_now();
    uint64_t until = now + (uint64_t)((double)(now - t0) *
                                      hrops__slow_share[which]);

    while (hrops__slow_now() < until)
        ;
}

void hrops__slow_work(uint64_t steps)
{
    uint64_t x = slow_sink;

    /* Each step waits for the last: the time is the latency of a
     * multiply-add, the same on every call. */
    for (uint64_t i = 0; i < steps; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    slow_sink = x;
#if defined(__x86_64__) || defined(__i386__)
    /* The range waits for the chain: without this, the code after it
     * (dispatch.call's search for its implementation) runs beside the
     * chain, out of order, and 20 ns of work added 10 ns to the range. */
    __asm__ __volatile__("lfence" ::: "memory");
#endif
}

/* The nanoseconds of one step of work: the fastest of a few timed runs
 * (a run the scheduler interrupted reads slower, not faster). */
static double slow_step_ns(void)
{
    double best = 0;

    for (int t = 0; t < SLOW_CALIBRATE_TRIES; t++) {
        uint64_t t0 = hrops__slow_now();

        hrops__slow_work(SLOW_CALIBRATE_STEPS);
        double ns = (double)(hrops__slow_now() - t0) / SLOW_CALIBRATE_STEPS;

        if (t == 0 || ns < best)
            best = ns;
    }
    return best;
}

int hrops_slow_ns(const char *range, double ns)
{
    for (unsigned i = 0; i < HROPS__SLOW_N; i++) {
        if (strcmp(range, slow_names[i]) != 0)
            continue;
        if (!(ns >= 0 && ns <= 1e6))
            return -EINVAL;
        if (ns > 0) {
            double step = slow_step_ns();

            hrops__slow_steps[i] =
                step > 0 ? (uint64_t)(ns / step + 0.5) : 0;
            hrops__slow_work_on |= 1u << i;
        } else {
            hrops__slow_work_on &= ~(1u << i);
        }
        return 0;
    }
    return -EINVAL;
}

int hrops_slow(const char *range, double pct)
{
    for (unsigned i = 0; i < HROPS__SLOW_N; i++) {
        if (strcmp(range, slow_names[i]) != 0)
            continue;
        if (!(pct >= 0 && pct <= 10000))
            return -EINVAL;
        hrops__slow_share[i] = pct / 100;
        if (pct > 0)
            hrops__slow_on |= 1u << i;
        else
            hrops__slow_on &= ~(1u << i);
        return 0;
    }
    return -EINVAL;
}
