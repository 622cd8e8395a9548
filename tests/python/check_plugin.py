"""Checks of the pytest plugin: the example suite (test_add.py, test_gemm.py)
run under --host-range-profile serially and with pytest-xdist (-n 2), with a
private daemon and with one that is already running; the reports read back
and compared key by key, with the reference's rows for every node and exact
counts; the plugin's errors. Each run is a separate pytest process."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from hr_daemon import (LIMIT_S, PROFILING, ctl, daemon,  # noqa: F401
                       key, read_rows)

SRCDIR = os.environ.get("HRPY_SRCDIR", os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
SUITE = os.path.join(SRCDIR, "tests", "python")
CALLS, BLOCKS = 4, 3

needs_profiling = pytest.mark.skipif(
    not PROFILING, reason="built with --disable-host-range-profiling")


def has_xdist():
    r = subprocess.run([os.environ.get("HR_PYTHON", sys.executable), "-c",
                        "import xdist"], stderr=subprocess.DEVNULL)
    return r.returncode == 0


@pytest.fixture
def env(tmp_path):
    """The environment of a pytest run: no daemon answers at its runtime
    directory, and temporary files go to a directory of its own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    e = dict(os.environ)
    e["HOSTRANGE_RUNTIME_DIR"] = str(tmp_path / "no-daemon")
    e["TMPDIR"] = str(tmp)
    e.pop("PYTEST_ADDOPTS", None)
    return e


def pytest_run(env, cwd, *args, suite=True, path=None):
    """Runs pytest on the example suite (when `suite`) with `args`; returns
    the CompletedProcess."""
    argv = [os.environ.get("HR_PYTHON", sys.executable), "-m", "pytest",
            "-p", "no:cacheprovider", "-q", "-rp"]
    if path is not None:
        argv += ["--host-range-profile", str(path)]
    argv += list(args)
    if suite:
        argv += ["--rootdir", SUITE, os.path.join(SUITE, "test_add.py"),
                 os.path.join(SUITE, "test_gemm.py")]
    # From the suite's directory, -rp prints node ids as the report has them.
    return subprocess.run(argv, cwd=SUITE if suite else str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=LIMIT_S)


def passed(r):
    """The node ids pytest reported as passed (-rp)."""
    return [line[len("PASSED "):] for line in r.stdout.splitlines()
            if line.startswith("PASSED ")]


def reference(op):
    """The (phase, range, metric) rows of the reference's report of `op`."""
    rows = read_rows(os.path.join(SRCDIR, "tests", "data",
                                  "reference-%s.jsonl" % op))
    return [(r["phase"], r["range"], r["metric"]) for r in rows]


def expected_count(phase, rng):
    if rng == "end_to_end":
        return BLOCKS
    n = 1 if phase == "cold" else CALLS * BLOCKS
    return 3 * n if rng == "binding.tensor_conversion" else n


def check_report(rows, nodes):
    """Every node of `nodes` has exactly the reference's rows of its
    operator, in its order, with the counts of CALLS x BLOCKS; no other
    node has a row."""
    by_node = {}
    for r in rows:
        by_node.setdefault(r["nodeid"], []).append(r)
    assert sorted(by_node) == sorted(nodes)
    for node, rs in by_node.items():
        op = node.split("::")[0][len("test_"):-len(".py")]
        assert [(r["phase"], r["range"], r["metric"]) for r in rs] == \
            reference(op), node
        for r in rs:
            assert list(r)[:10] == ["nodeid", "operator", "backend", "phase",
                                    "range", "metric", "count", "unit",
                                    "mean", "median"]
            assert (r["operator"], r["backend"], r["unit"]) == (op, "cpu",
                                                                "ns")
            assert r["count"] == expected_count(r["phase"], r["range"]), r
            assert r["mean"] >= 0 and r["median"] >= 0


def private_dirs(env):
    """The runtime directories of private daemons left in the run's TMPDIR."""
    return [n for n in os.listdir(env["TMPDIR"])
            if n.startswith("hostrange-pytest-")]


def counts(rows):
    return {key(r): r["count"] for r in rows}


@needs_profiling
def test_serial_and_parallel_reports(env, tmp_path):
    serial = tmp_path / "serial.jsonl"
    r = pytest_run(env, tmp_path, "--host-range-calls", str(CALLS),
                   "--host-range-blocks", str(BLOCKS), path=serial)
    assert r.returncode == 0, r.stdout + r.stderr
    nodes = passed(r)
    assert len(nodes) >= 20
    assert {n.split("::")[0] for n in nodes} == {"test_add.py",
                                                 "test_gemm.py"}
    rows = read_rows(serial)
    check_report(rows, nodes)
    assert len(rows) == 39 * len(nodes)
    assert ("hostrange: %d report rows of %d nodes written to %s"
            % (len(rows), len(nodes), serial)) in r.stdout
    # The private daemon is gone, and so is its runtime directory.
    assert private_dirs(env) == []

    if not has_xdist():
        pytest.skip("pytest-xdist is not installed")
    parallel = tmp_path / "parallel.jsonl"
    r = pytest_run(env, tmp_path, "-n", "2", "--host-range-calls",
                   str(CALLS), "--host-range-blocks", str(BLOCKS),
                   path=parallel)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(passed(r)) == sorted(nodes)
    prows = read_rows(parallel)
    check_report(prows, nodes)
    # The same rows: the same keys, each with the same count.
    assert counts(prows) == counts(rows)
    assert private_dirs(env) == []


@needs_profiling
def test_workers_share_a_running_daemon(env, tmp_path, daemon):
    if not has_xdist():
        pytest.skip("pytest-xdist is not installed")
    env["HOSTRANGE_RUNTIME_DIR"] = daemon.dir
    out = tmp_path / "report.jsonl"
    r = pytest_run(env, tmp_path, "-n", "2", "-k", "13x4", "--host-range-calls",
                   str(CALLS), "--host-range-blocks", str(BLOCKS), path=out)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_rows(out)
    check_report(rows, passed(r))
    # The report is that daemon's, which the plugin leaves running.
    assert rows == daemon.rows()
    stats = ctl(daemon.dir, "stats")
    assert stats.returncode == 0
    pids = set(re.findall(r"^client\.\d+\.pid (\d+)$", stats.stdout, re.M))
    assert len(pids) == 2, stats.stdout
    assert "client.1.lost_events 0\n" in stats.stdout
    assert "client.2.lost_events 0\n" in stats.stdout


def test_without_the_option(env, tmp_path):
    r = pytest_run(env, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(passed(r)) >= 20
    assert "hostrange:" not in r.stdout
    assert private_dirs(env) == []


DEMO = textwrap.dedent("""
    import array
    import pytest
    import hostrange.ops as ops

    def args():
        return (array.array("f", [1, 2]), array.array("f", [3, 4]),
                array.array("f", [0, 0]))

    def test_pass(host_range):
        a, b, out = args()
        assert host_range(ops.add, a, b, out) is out
        assert list(out) == [4, 6]

    def test_fail(host_range):
        host_range(ops.add, *args())
        assert False

    def test_twice(host_range):
        host_range(ops.add, *args())
        host_range(ops.add, *args())

    @pytest.mark.host_range(operator="sum", backend="host",
                            clear_cache=lambda: None)
    def test_marker(host_range):
        host_range(ops.add, *args())

    def test_breaks_when_profiled(host_range):
        calls = []

        def once():
            calls.append(1)
            if len(calls) > 1:
                raise ValueError("called again")
        host_range(once)

    @pytest.fixture(params=["cpu"])
    def device(request):
        return request.param

    def test_device_fixture(host_range, device):
        host_range(ops.add, *args(), device=device)

    def test_not_profiled():
        a, b, out = args()
        ops.add(a, b, out)
    """)


@needs_profiling
def test_which_tests_are_profiled(env, tmp_path):
    (tmp_path / "test_demo.py").write_text(DEMO)
    out = tmp_path / "report.jsonl"
    r = pytest_run(env, tmp_path, "--host-range-calls", "2",
                   "--host-range-blocks", "2", "test_demo.py", suite=False,
                   path=out)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "a test profiles one callable" in r.stdout
    assert "ValueError: called again" in r.stdout
    assert sorted(passed(r)) == [
        "test_demo.py::test_device_fixture[cpu]", "test_demo.py::test_marker",
        "test_demo.py::test_not_profiled", "test_demo.py::test_pass"]
    rows = read_rows(out)
    labels = {(x["nodeid"], x["operator"], x["backend"]) for x in rows}
    assert labels == {
        ("test_demo.py::test_pass", "demo", "cpu"),
        ("test_demo.py::test_marker", "sum", "host"),
        ("test_demo.py::test_device_fixture[cpu]", "demo", "cpu"),
    }
    # The marker's clear_cache (which clears nothing) replaced the plugin's:
    # its cold call found the operator the correctness call had made.
    constructs = {x["nodeid"] for x in rows if x["range"] == "cache.construct"}
    assert constructs == {"test_demo.py::test_pass",
                          "test_demo.py::test_device_fixture[cpu]"}


@needs_profiling
def test_automatic_block_sizes(env, tmp_path):
    out = tmp_path / "report.jsonl"
    r = pytest_run(env, tmp_path, "--host-range-max-calls", "20", "-k",
                   "test_add and cpu-13x4-memoryview-float32", path=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(passed(r)) == 1
    rows = {(x["phase"], x["range"], x["metric"]): x["count"]
            for x in read_rows(out)}
    blocks = rows[("warm", "end_to_end", "inclusive")]
    warm = rows[("warm", "binding.body", "inclusive")]
    # Blocks of the same size, at most 20 calls in all.
    assert 1 <= blocks <= warm <= 20 and warm % blocks == 0
    assert rows[("warm", "binding.tensor_conversion", "self")] == 3 * warm
    assert rows[("cold", "binding.body", "inclusive")] == 1


def usage_error(r, *fragments):
    """pytest stopped before the tests with a usage error naming each of
    `fragments`."""
    assert r.returncode == 4, r.stdout + r.stderr
    for f in fragments:
        assert f in r.stderr, r.stderr
    assert "passed" not in r.stdout


def test_error_module_without_profiling(env, tmp_path):
    env["PYTHONPATH"] = (os.environ.get("HRPY_OFF_PATH")
                         or os.environ["HRPY_PATH"])
    r = pytest_run(env, tmp_path, path=tmp_path / "report.jsonl")
    usage_error(r, "--host-range-profile: the hostrange module was built "
                "without profiling", "--disable-host-range-profiling")
    assert not (tmp_path / "report.jsonl").exists()


@needs_profiling
def test_error_unwritable_path(env, tmp_path):
    regular = tmp_path / "file"
    regular.write_text("")
    r = pytest_run(env, tmp_path, path=regular / "report.jsonl")
    usage_error(r, "cannot write %s" % (regular / "report.jsonl"),
                "Not a directory")
    r = pytest_run(env, tmp_path, path=tmp_path / "none" / "report.jsonl")
    usage_error(r, "cannot write", "No such file or directory")
    r = pytest_run(env, tmp_path, path=tmp_path)
    usage_error(r, "%s is a directory" % tmp_path)
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        r = pytest_run(env, tmp_path, path=locked / "report.jsonl")
        usage_error(r, "cannot write", "Permission denied")
    assert private_dirs(env) == []


@needs_profiling
def test_error_daemon_of_another_protocol_version(env, tmp_path):
    rundir = tmp_path / "rundir"
    rundir.mkdir(mode=0o700)
    fake = subprocess.Popen([os.environ["HRPY_OTHER_VERSION"], str(rundir)],
                            stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert fake.stdout.readline() == "ready\n"
        env["HOSTRANGE_RUNTIME_DIR"] = str(rundir)
        r = pytest_run(env, tmp_path, path=tmp_path / "report.jsonl")
    finally:
        fake.terminate()
        fake.wait(LIMIT_S)
    usage_error(r, "hostranged at %s speaks protocol version" % rundir,
                "HOSTRANGE_RUNTIME_DIR")
    m = re.search(r"speaks protocol version (\d+), this hostrangectl speaks "
                  r"(\d+)", r.stderr)
    assert m is not None and m.group(1) != m.group(2)
    # No private daemon was started instead.
    assert private_dirs(env) == []


def test_error_bad_options(env, tmp_path):
    r = pytest_run(env, tmp_path, "--host-range-calls", "0",
                   path=tmp_path / "report.jsonl")
    usage_error(r, "--host-range-calls must be positive")
