/* The knob for testing gates: ranges slowed on purpose (slow.h). */
#include "config.h"

#include "ops/ops.h"
#include "ops/slow.h"

#include <errno.h>
#include <string.h>
#include <time.h>

unsigned hrops__slow_on;
double hrops__slow_share[HROPS__SLOW_N];

static const char *const slow_names[HROPS__SLOW_N] = {
    "binding.body", "backend.submit",
};

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
