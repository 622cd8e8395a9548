// A Google Benchmark program for tests/service/test_history_gbench.sh:
// its work per iteration is the argument times $HOSTRANGE_TEST_WORK, so
// that the test makes a known step between two "commits".
#include <benchmark/benchmark.h>

#include <cstdlib>

static void BM_Work(benchmark::State &state)
{
    const char *f = std::getenv("HOSTRANGE_TEST_WORK");
    long n = state.range(0) * (f != nullptr ? std::atol(f) : 1);

    for (auto _ : state) {
        long s = 0;

        for (long i = 0; i < n; i++)
            benchmark::DoNotOptimize(s += i);
    }
}
BENCHMARK(BM_Work)->Arg(20000);

BENCHMARK_MAIN();
