/*
 * The program of tests/cmake: in one warm window under node `cmake/demo`,
 * -c rounds (default 5) of consumer.call (HOSTRANGE_FUNC_SCOPE names it
 * after run_call) holding consumer.step; then flushes and prints
 * `samples=S delivered=D`. Exits 1 when not every sample was delivered.
 */
#include <cstdio>
#include <cstdlib>

#include <hostrange.hpp>

static volatile unsigned sink;

static void run_call()
{
    HOSTRANGE_FUNC_SCOPE();
    for (unsigned i = 0; i < 1000; i++)
        sink = sink + i;
    HOSTRANGE_SCOPE("consumer.step");
    for (unsigned i = 0; i < 1000; i++)
        sink = sink + i;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    hr_counters c;

    if (hr_labels_set("cmake/demo", "consumer", "cpu", HR_PHASE_WARM) != 0 ||
        hr_window_begin() != 0)
        return 1;
    for (int i = 0; i < rounds; i++)
        run_call();
    hr_window_end();
    hr_flush(10000);
    hr_counters_get(&c);
    std::printf("samples=%llu delivered=%llu\n",
                (unsigned long long)c.samples,
                (unsigned long long)c.delivered);
    return c.samples == 2u * (unsigned)rounds && c.delivered == c.samples
               ? 0
               : 1;
}
