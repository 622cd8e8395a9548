"""A pytest-benchmark suite for tests/service/test_history_pytest_benchmark.sh:
its work is $HOSTRANGE_TEST_WORK times a loop, so that the test makes a
known step between two "commits"."""
import os


def work():
    s = 0
    for i in range(5000 * int(os.environ.get("HOSTRANGE_TEST_WORK", "1"))):
        s += i
    return s


def test_work(benchmark):
    assert benchmark(work) > 0
