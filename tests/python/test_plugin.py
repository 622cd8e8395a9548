"""Checks of the pytest plugin: the example suite (suite/test_add.py,
suite/test_gemm.py) run under --host-range-profile serially and with
pytest-xdist (-n 2), with a private daemon and with one that is already
running; the reports read back and compared key by key, with the
reference's rows for every node and exact counts; saved runs
(--host-range-save) read back with hostrangectl, merged shards and
comparisons (--host-range-compare, --host-range-compare-fail with one limit
and per range, --host-range-compare-strict) against a run made slower on
purpose or on another clock path; a run saved with its notes when a test
fails; the plugin's errors. Each run is a separate pytest process."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from hr_daemon import (LIMIT_S, PROFILING, ctl, daemon,  # noqa: F401
                       key, parse_rows, program, read_rows)

SRCDIR = os.environ.get("HRPY_SRCDIR", os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
SUITE = os.path.join(SRCDIR, "tests", "python", "suite")
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
    if not any(a.startswith(("--host-range-target-ms", "--host-range-blocks",
                             "--host-range-max-calls")) for a in args):
        # What these tests check does not depend on how long each test's
        # blocks take: 20 ms instead of the default 200 keeps the file's
        # many pytest runs short (test_automatic_block_sizes checks the
        # block sizes themselves).
        argv += ["--host-range-target-ms", "20"]
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


ODD_CALLS = textwrap.dedent("""
    import pytest

    def kw(**kwargs):
        return sorted(kwargs.items())

    def test_keywords_named_like_its_own(host_range):
        assert host_range(kw, fn=1, self=2) == [("fn", 1), ("self", 2)]

    def test_not_callable(host_range):
        with pytest.raises(TypeError, match="host_range: the first "
                           "argument is the callable to profile, not int"):
            host_range(5)

    def gen():
        yield sum(range(10))

    async def coro():
        return 1

    @pytest.mark.parametrize("fn", [gen, coro])
    def test_lazy_result(host_range, fn):
        with pytest.raises(TypeError, match="host_range: %s returned "
                           "(generator|coroutine), whose work runs when "
                           % fn.__name__):
            host_range(fn)

    # A marker the profile would misread (a misspelt keyword was ignored).
    @pytest.mark.parametrize("mark, said", [
        (pytest.mark.host_range(operater="x"), "unknown keyword operater"),
        (pytest.mark.host_range("x"), "takes keywords only"),
        (pytest.mark.host_range(backend=5), "backend is a str, not int"),
        (pytest.mark.host_range(sync="x"), "sync is a callable, not str")])
    def test_bad_marker(request, host_range, mark, said):
        request.node.add_marker(mark)
        with pytest.raises(TypeError, match="@pytest.mark.host_range: "
                           + said):
            host_range(kw)
    """)


@needs_profiling
def test_odd_calls(env, tmp_path):
    """The call's keywords may be named as host_range's own parameters;
    something not callable, or a call that returns a generator or a
    coroutine (which would profile their creation only), is refused with a
    message naming host_range, and no warning is left of the coroutine; so
    is a host_range marker with a keyword it does not know or a value of
    the wrong type."""
    (tmp_path / "test_odd.py").write_text(ODD_CALLS)
    out = tmp_path / "report.jsonl"
    r = pytest_run(env, tmp_path, "--host-range-calls", "1",
                   "--host-range-blocks", "1", "test_odd.py", suite=False,
                   path=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "8 passed" in r.stdout and "warning" not in r.stdout, r.stdout
    assert {x["nodeid"] for x in read_rows(out)} == {
        "test_odd.py::test_keywords_named_like_its_own"}

LONG_IDS = textwrap.dedent("""
    import array
    import pytest
    import hostrange.ops as ops

    @pytest.mark.parametrize("p", ["a" * 5000, "b" * 5000, "short"])
    def test_long(host_range, p):
        out = array.array("f", [0, 0])
        host_range(ops.add, array.array("f", [1, 2]),
                   array.array("f", [3, 4]), out)

    def test_refused_labels():
        import hostrange
        with pytest.raises(ValueError, match="MAX_NAME"):
            hostrange.set_labels("n" * 5000, "op", "cpu", "warm")
        with pytest.raises(RuntimeError, match="refused"):
            hostrange.window_begin()
    """)


@needs_profiling
def test_node_ids_over_the_limit(env, tmp_path):
    """A parametrized id over the daemon's limit is labelled with its first
    bytes and a hash of the whole id: two such tests stay two nodes, the
    label is the same in two sessions, the plugin warns once, and the
    session loses nothing; a window of refused labels is said in one line
    on stderr."""
    import hashlib
    import hostrange
    (tmp_path / "test_long.py").write_text(LONG_IDS)
    nodes = []
    for i in range(2):
        out = tmp_path / ("report%d.jsonl" % i)
        r = pytest_run(env, tmp_path, "--host-range-calls", "2",
                       "--host-range-blocks", "2", "test_long.py",
                       suite=False, path=out)
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.count("the node id of test_long[") == 1, r.stdout
        assert r.stderr == ("hostrange: 1 window of refused labels not "
                            "collected\n"), r.stderr
        nodes.append(sorted({x["nodeid"] for x in read_rows(out)}))
    assert nodes[0] == nodes[1]
    assert len(nodes[0]) == 3
    for p in ("a", "b"):
        whole = "test_long.py::test_long[%s]" % (p * 5000)
        tail = "\u2026" + hashlib.sha256(whole.encode()).hexdigest()[:16]
        label = [n for n in nodes[0] if n.startswith("test_long.py::test_"
                                                      "long[" + p)]
        assert len(label) == 1 and label[0].endswith(tail)
        assert len(label[0].encode()) == hostrange.MAX_NAME
    assert "test_long.py::test_long[short]" in nodes[0]


NOT_UTF8 = textwrap.dedent("""
    import array
    import hostrange.ops as ops

    def test_add(host_range):
        out = array.array("f", [0, 0])
        host_range(ops.add, array.array("f", [1, 2]),
                   array.array("f", [3, 4]), out)
    """)


@needs_profiling
def test_node_ids_not_utf8(env, tmp_path):
    """Tests in files whose names are not UTF-8 (two bytes that are not)
    are collected under node ids and operators of their own, each such
    byte written \\xNN, and pass."""
    for b in (b"\xff", b"\xfe"):
        (tmp_path / os.fsdecode(b"test_" + b + b".py")).write_text(NOT_UTF8)
    out = tmp_path / "report.jsonl"
    # pytest prints the node ids: their bytes escaped, for this reader.
    env = dict(env, PYTHONIOENCODING="utf-8:backslashreplace")
    r = pytest_run(env, tmp_path, "--host-range-calls", "2",
                   "--host-range-blocks", "2", suite=False, path=out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("PASSED ") == 2, r.stdout
    rows = read_rows(out)
    assert {(x["nodeid"], x["operator"]) for x in rows} == {
        ("test_\\xff.py::test_add", "\\xff"),
        ("test_\\xfe.py::test_add", "\\xfe")}


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
    # Not a number, or infinite: refused before any test, not a crash where
    # the calls are counted.
    for bad in ("nan", "inf", "-1"):
        r = pytest_run(env, tmp_path, "--host-range-target-ms", bad,
                       path=tmp_path / "report.jsonl")
        usage_error(r, "--host-range-target-ms must be positive and finite")


@needs_profiling
def test_huge_target_ms(env, tmp_path):
    """A finite but huge --host-range-target-ms: the blocks are bounded by
    --host-range-max-calls, not an OverflowError where the time is turned
    into blocks."""
    (tmp_path / "test_demo.py").write_text(DEMO)
    out = tmp_path / "huge.jsonl"
    r = pytest_run(env, tmp_path, "--host-range-target-ms", "1e303",
                   "--host-range-calls", "2", "--host-range-max-calls", "6",
                   "test_demo.py::test_pass", suite=False, path=out)
    assert r.returncode == 0, r.stdout + r.stderr
    counts = {x["count"] for x in read_rows(out)
              if x["range"] == "end_to_end"}
    assert counts == {3}


def from_run(path):
    """The report of a run file (hostrangectl dump --from, no daemon)."""
    r = subprocess.run([program("HOSTRANGECTL"), "dump", "--from", str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=LIMIT_S)
    assert r.returncode == 0, r.stderr
    return parse_rows(r.stdout)


def key_text(row):
    """A key as hostrangectl diff's table names it."""
    return "%s %s/%s %s %s %s" % (row["nodeid"], row["operator"],
                                  row["backend"], row["phase"], row["range"],
                                  row["metric"])


def compared(r):
    """The table of --host-range-compare in pytest's output: its rows (the
    lines after the header up to the count of keys), and that count line."""
    lines = r.stdout.splitlines()
    heads = [i for i, line in enumerate(lines)
             if line.startswith("-") and "hostrange: this run against" in line]
    assert len(heads) == 1, r.stdout
    table = lines[heads[0] + 1:]
    # diff's first line: runs of one round each, not measured at the run
    # level.
    assert table[0].startswith(
        "rounds 1/1: run-to-run noise not measured"), table[0]
    table = table[1:]
    assert table[0].split()[:3] == ["key", "base", "us"], table[0]
    for end, line in enumerate(table):
        if re.match(r"\d+ keys compared, \d+ flagged", line):
            return table[1:end], line
    pytest.fail("no count of keys compared:\n" + r.stdout)


def compare_dirs(env):
    """Temporary run files the plugin left in the run's TMPDIR."""
    return [n for n in os.listdir(env["TMPDIR"])
            if n.startswith("hostrange-compare-")]


@needs_profiling
def test_save_merge_and_compare(env, tmp_path):
    # Two shards, saved, then merged: the base of a CI job.
    shards = []
    for i, op in enumerate(("test_add", "test_gemm")):
        shard = tmp_path / ("shard%d.hrs" % i)
        report = tmp_path / ("shard%d.jsonl" % i)
        r = pytest_run(env, tmp_path, "-k", op, "--host-range-calls",
                       str(CALLS), "--host-range-blocks", str(BLOCKS),
                       "--host-range-save", str(shard), path=report)
        assert r.returncode == 0, r.stdout + r.stderr
        rows = read_rows(report)
        keys = len({(x["nodeid"], x["operator"], x["backend"], x["phase"],
                     x["range"]) for x in rows})
        assert "hostrange: saved %d keys to %s" % (keys, shard) in r.stdout
        # The saved run holds what the report showed.
        assert from_run(shard) == rows
        shards.append(shard)
    base = tmp_path / "base.hrs"
    m = ctl(str(tmp_path), "merge", "-o", str(base), *map(str, shards))
    assert m.returncode == 0, m.stderr

    # The whole suite, saved only for the comparison: every key is in both.
    r = pytest_run(env, tmp_path, "--host-range-calls", str(CALLS),
                   "--host-range-blocks", str(BLOCKS), "--host-range-compare",
                   str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    nodes = passed(r)
    assert len(nodes) >= 20
    rows, count = compared(r)
    base_rows = from_run(base)
    assert {x["nodeid"] for x in base_rows} == set(nodes)
    assert len(rows) == len(base_rows)
    assert count.startswith("%d keys compared, " % len(base_rows)), count
    assert not [x for x in rows if " only in " in x]
    # In the base's order, each with both medians and a p-value.
    for line, row in zip(rows, base_rows):
        assert line.startswith(key_text(row) + " "), (line, row)
        assert re.search(r" p=[0-9.e+-]+", line), line
    assert "hostrange: this run against %s" % base in r.stdout
    # No report and no run file were asked for; the temporary run is gone.
    assert "report rows" not in r.stdout and "saved" not in r.stdout
    assert compare_dirs(env) == [] and private_dirs(env) == []


SLOW = textwrap.dedent("""
    import os
    import pytest
    import hostrange

    SPIN_NS = int(os.environ["HRPY_SPIN_NS"])

    @hostrange.scope("spin.body")
    def spin():
        t0 = hostrange.now_ns()
        while hostrange.now_ns() - t0 < SPIN_NS:
            pass

    @pytest.mark.parametrize("case", range(4))
    def test_spin(host_range, case):
        host_range(spin)
    """)


def slow_run(env, tmp_path, spin_ns, *args):
    """Runs test_spin.py, each call spinning spin_ns, 1 call x 40 blocks."""
    (tmp_path / "test_spin.py").write_text(SLOW)
    e = dict(env)
    e["HRPY_SPIN_NS"] = str(spin_ns)
    return pytest_run(e, tmp_path, "--host-range-calls", "1",
                      "--host-range-blocks", "40", *args, "test_spin.py",
                      suite=False)


def slower(rows):
    """The keys (node, range, metric) of the rows flagged slower."""
    found = set()
    for line in rows:
        m = re.match(r"(\S+) spin/cpu (cold|warm) (\S+) (inclusive|self) .* "
                     r"p=\S+ (slower|faster)\b", line)
        if m is not None:
            assert m.group(5) == "slower", line
            found.add((m.group(1), m.group(2), m.group(3), m.group(4)))
    return found


SPIN_KEYS = {("test_spin.py::test_spin[%d]" % i, "warm", rng, metric)
             for i in range(4)
             for rng, metric in (("spin.body", "inclusive"),
                                 ("spin.body", "self"),
                                 ("end_to_end", "inclusive"))}


@needs_profiling
def test_compare_fails_on_a_slowdown(env, tmp_path):
    base = tmp_path / "base.hrs"
    r = slow_run(env, tmp_path, 100000, "--host-range-save", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(passed(r)) == 4

    # Three times slower: every warm key is flagged (40 samples a side;
    # a cold key has one, which no test can flag), and the session fails.
    junit = tmp_path / "compare.xml"
    r = slow_run(env, tmp_path, 300000, "--host-range-compare", str(base),
                 "--host-range-compare-fail", "50", "--host-range-junit",
                 str(junit))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "hostrange: the comparison written to %s (JUnit)" % junit \
        in r.stdout, r.stdout
    # The same comparison as JUnit, read by python3-junitparser: a suite
    # per test, a testcase per key, a failure per key over the limit.
    from junitparser import JUnitXml, Failure
    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert sorted(s.name for s in suites) == [
        "test_spin.py::test_spin[%d]" % i for i in range(4)]
    assert xml.tests == 20 and xml.failures == 12 and xml.skipped == 0
    failed = set()
    for s in suites:
        for c in s:
            if any(isinstance(x, Failure) for x in c.result):
                phase, rng, metric, labels = c.name.split(" ")
                assert labels == "(spin/cpu)", c.name
                failed.add((c.classname, phase, rng, metric))
    assert failed == SPIN_KEYS
    assert len(passed(r)) == 4
    rows, count = compared(r)
    # Per node: spin.body cold and warm, inclusive and self; end_to_end.
    assert len(rows) == 20
    assert slower(rows) == SPIN_KEYS
    assert count.startswith("20 keys compared, 12 flagged"), count
    m = re.search(r"^hostrange: (\S+) spin/cpu warm (\S+) (\S+) is "
                  r"([0-9.]+)% slower, above --host-range-compare-fail 50% "
                  r"\(against (.+)\)$", r.stdout, re.M)
    assert m is not None, r.stdout
    assert (m.group(1), "warm", m.group(2), m.group(3)) in SPIN_KEYS
    assert float(m.group(4)) > 100 and m.group(5) == str(base)
    assert compare_dirs(env) == []

    # The same slowdown below the limit: shown, flagged, and no failure.
    r = slow_run(env, tmp_path, 300000, "--host-range-compare", str(base),
                 "--host-range-compare-fail", "1000")
    assert r.returncode == 0, r.stdout + r.stderr
    rows, count = compared(r)
    assert slower(rows) == SPIN_KEYS
    assert "above --host-range-compare-fail" not in r.stdout

    # The keys of a test not run this time are listed as in the base only.
    r = slow_run(env, tmp_path, 300000, "--host-range-compare", str(base),
                 "--host-range-compare-fail", "50", "-k", "not 3")
    assert r.returncode == 1, r.stdout + r.stderr
    rows, count = compared(r)
    assert len([x for x in rows if " only in base " in x]) == 5

    # --host-range-junit alone is a usage error.
    r = slow_run(env, tmp_path, 300000, "--host-range-junit", str(junit))
    assert r.returncode == 4 and "--host-range-junit needs " \
        "--host-range-compare BASE" in r.stderr, r.stdout + r.stderr


@needs_profiling
def test_compare_with_xdist(env, tmp_path):
    if not has_xdist():
        pytest.skip("pytest-xdist is not installed")
    base = tmp_path / "base.hrs"
    r = slow_run(env, tmp_path, 100000, "-n", "2", "--host-range-save",
                 str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    new = tmp_path / "new.hrs"
    r = slow_run(env, tmp_path, 300000, "-n", "2", "--host-range-save",
                 str(new), "--host-range-compare", str(base),
                 "--host-range-compare-fail", "50")
    assert r.returncode == 1, r.stdout + r.stderr
    assert len(passed(r)) == 4
    # The controller saved and compared once, after both workers finished:
    # the runs hold every node, whichever worker ran it.
    assert r.stdout.count("hostrange: saved ") == 1
    # Each key above the limit named once: one comparison.
    assert r.stdout.count("above --host-range-compare-fail 50%") == \
        len(SPIN_KEYS)
    rows, count = compared(r)
    assert slower(rows) == SPIN_KEYS
    for run in (base, new):
        assert {x["nodeid"] for x in from_run(run)} == {
            "test_spin.py::test_spin[%d]" % i for i in range(4)}
    assert private_dirs(env) == [] and compare_dirs(env) == []


@needs_profiling
def test_compare_limits_per_range(env, tmp_path):
    base = tmp_path / "base.hrs"
    r = slow_run(env, tmp_path, 100000, "--host-range-save", str(base))
    assert r.returncode == 0, r.stdout + r.stderr

    # Three times slower, end_to_end allowed 1000%, spin.* 50%: the session
    # fails for the spin.body keys only, each named with its pattern.
    r = slow_run(env, tmp_path, 300000, "--host-range-compare", str(base),
                 "--host-range-compare-fail", "end_to_end=1000,spin.*=50")
    assert r.returncode == 1, r.stdout + r.stderr
    over = re.findall(r"^hostrange: (\S+) spin/cpu warm (\S+) (\S+) is "
                      r"[0-9.]+% slower, above --host-range-compare-fail 50% "
                      r"\(for spin\.\*\) \(against .+\)$", r.stdout, re.M)
    assert {(n, "warm", rng, m) for n, rng, m in over} == {
        k for k in SPIN_KEYS if k[2] == "spin.body"}, r.stdout
    assert "end_to_end inclusive is" not in r.stdout

    # A limit only for ranges that did not get slower: no failure.
    r = slow_run(env, tmp_path, 300000, "--host-range-compare", str(base),
                 "--host-range-compare-fail", "backend.*=3")
    assert r.returncode == 0, r.stdout + r.stderr


@needs_profiling
def test_save_when_tests_fail_with_meta(env, tmp_path):
    (tmp_path / "test_fails.py").write_text(textwrap.dedent("""
        import hostrange

        @hostrange.scope("fails.body")
        def work():
            return 1

        def test_fails(host_range):
            host_range(work)

        def test_broken():
            assert False
        """))
    run = tmp_path / "run.hrs"
    r = pytest_run(env, tmp_path, "--host-range-calls", "1",
                   "--host-range-blocks", "3", "--host-range-save", str(run),
                   "--host-range-meta", "commit=abc123",
                   "--host-range-meta", "branch=main",
                   "--host-range-machine", "ci pool 7", "test_fails.py",
                   suite=False)
    # A test failed: the session says so, and the run is saved all the same.
    assert r.returncode == 1, r.stdout + r.stderr
    assert "hostrange: saved " in r.stdout
    nodes = {x["nodeid"] for x in from_run(run)}
    assert nodes == {"test_fails.py::test_fails"}
    # The notes and the machine, as diff shows them after its table.
    d = ctl(str(tmp_path), "diff", str(run), str(run))
    assert d.returncode == 0, d.stderr
    lines = [x for x in d.stdout.splitlines() if x.startswith("base ")]
    assert len(lines) == 1, d.stdout
    assert lines[0].endswith("; machine ci pool 7; commit=abc123, "
                             "branch=main"), lines[0]
    assert " cores, " in lines[0] and "; hostrange " in lines[0], lines[0]


@needs_profiling
def test_history(env, tmp_path):
    """--host-range-history: each session's run added once (xdist
    included), its commit that of the git work tree, and what history
    check finds in the summary."""
    (tmp_path / "test_hist.py").write_text(textwrap.dedent("""
        import hostrange

        @hostrange.scope("hist.body")
        def work():
            return 1

        def test_one(host_range):
            host_range(work)

        def test_two(host_range):
            host_range(work)
        """))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "test_hist.py"],
                 ["commit", "-q", "-m", "tests"]):
        subprocess.run(git + args, cwd=str(tmp_path), check=True,
                       stdout=subprocess.DEVNULL)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout.strip()
    db = tmp_path / "history.db"
    runs = [[], ["-n", "2"] if has_xdist() else [],
            ["--host-range-meta", "commit=given"]]
    for extra in runs:
        r = pytest_run(env, tmp_path, "--host-range-calls", "1",
                       "--host-range-blocks", "3", "--host-range-history",
                       str(db), "test_hist.py", *extra, suite=False)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "hostrange: history: added " in r.stdout, r.stdout
        assert "hostrange: this run against its history" in r.stdout
        assert re.search(r"checked \d+ keys of .* against the history of ",
                         r.stdout), r.stdout
    lines = ctl(str(tmp_path), "history", "list", "--db",
                str(db)).stdout.splitlines()
    assert len(lines) == 3, lines
    assert [x.split("\t")[2] for x in lines] == [head, head, "given"]
    # The same keys each time (the two tests' rows).
    assert len({x.split("\t")[4] for x in lines}) == 1, lines
    assert int(lines[0].split("\t")[4]) > 0, lines



@needs_profiling
def test_error_history_db(env, tmp_path):
    """A --host-range-history that hostrangectl history add cannot write is
    refused before the tests; an empty one (hostrangectl's default
    history, in the current directory, not one named) too."""
    (tmp_path / "test_demo.py").write_text(DEMO)
    for db, said in (("", "a SQLite file or a PostgreSQL connection "
                      "string, not empty"),
                     (str(tmp_path), "%s is a directory" % tmp_path),
                     (str(tmp_path / "missing" / "h.db"), "cannot write %s"
                      % (tmp_path / "missing" / "h.db"))):
        r = pytest_run(env, tmp_path, "--host-range-history", db,
                       "test_demo.py::test_pass", suite=False)
        usage_error(r, "--host-range-history: " + said)
    assert not (tmp_path / "hostrange-history.db").exists()

@needs_profiling
def test_compare_machines(env, tmp_path):
    base = tmp_path / "base.hrs"
    r = slow_run(env, tmp_path, 100000, "--host-range-save", str(base))
    assert r.returncode == 0, r.stdout + r.stderr

    # The other clock path: a different fingerprint, which the summary
    # names; with --host-range-compare-strict the comparison is refused.
    e = dict(env)
    e["HOSTRANGE_CLOCK"] = "ordered"
    r = slow_run(e, tmp_path, 100000, "--host-range-compare", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^hostrange: warning: the machine fingerprints of .* "
                     r"differ: clock_path '(fast|waiting)' vs 'ordered'(; .*)?$",
                     r.stdout, re.M), r.stdout
    r = slow_run(e, tmp_path, 100000, "--host-range-compare", str(base),
                 "--host-range-compare-strict")
    assert r.returncode == 3, r.stdout + r.stderr
    assert re.search(r"^hostrange: cannot compare: the machine fingerprints "
                     r"of .* differ: clock_path '(fast|waiting)' vs 'ordered'(; .*)?: "
                     r"refused \(--host-range-compare-strict\)$", r.stdout,
                     re.M), \
        r.stdout
    assert "hostrange: this run against" not in r.stdout
    # The same machine: no warning, and --host-range-compare-strict passes.
    r = slow_run(env, tmp_path, 100000, "--host-range-compare", str(base),
                 "--host-range-compare-strict")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fingerprint" not in r.stdout
    assert compare_dirs(env) == [] and private_dirs(env) == []


def test_error_compare_options(env, tmp_path):
    r = pytest_run(env, tmp_path, "--host-range-compare-fail", "5")
    usage_error(r, "--host-range-compare-fail needs --host-range-compare "
                "BASE")
    r = pytest_run(env, tmp_path, "--host-range-compare", "base.hrs",
                   "--host-range-compare-fail", "-1")
    usage_error(r, "--host-range-compare-fail must be 0 or more")
    r = pytest_run(env, tmp_path, "--host-range-compare", "base.hrs",
                   "--host-range-compare-fail", "backend.*=3,=4")
    usage_error(r, "--host-range-compare-fail: bad limit '=4'")
    r = pytest_run(env, tmp_path, "--host-range-compare", "base.hrs",
                   "--host-range-compare-fail", "backend.*")
    usage_error(r, "--host-range-compare-fail: bad limit 'backend.*'")
    # What Python's float() takes but hostrangectl diff --fail-above
    # refuses: refused before the tests, not after them.
    for bad in ("inf", "1e999", "*=nan", "1_0", "2e9", "5 ", "1e-400",
                "\u0665", "1" * 64):
        r = pytest_run(env, tmp_path, "--host-range-compare", "base.hrs",
                       "--host-range-compare-fail", bad)
        usage_error(r, "--host-range-compare-fail: bad limit %r" % bad)
    r = pytest_run(env, tmp_path, "--host-range-compare-strict")
    usage_error(r, "--host-range-compare-strict needs --host-range-compare "
                "BASE")
    r = pytest_run(env, tmp_path, "--host-range-meta", "a=b")
    usage_error(r, "--host-range-meta needs --host-range-save")
    r = pytest_run(env, tmp_path, "--host-range-save", str(tmp_path / "x"),
                   "--host-range-meta", "novalue")
    usage_error(r, "--host-range-meta: bad 'novalue' (KEY=VALUE)")
    r = pytest_run(env, tmp_path, "--host-range-save", str(tmp_path / "x"),
                   "--host-range-blocks", "0")
    usage_error(r, "--host-range-blocks must be positive")
    for bad, why in (("", "1 to 255 bytes, not 0"),
                     ("x" * 256, "1 to 255 bytes, not 256"),
                     ("a\tb", "holds no control character")):
        r = pytest_run(env, tmp_path, "--host-range-save",
                       str(tmp_path / "x"), "--host-range-machine", bad)
        usage_error(r, "--host-range-machine: a machine's name is " + why
                    if "bytes" in why else "--host-range-machine: a "
                    "machine's name " + why)


@needs_profiling
def test_error_unreadable_base_unwritable_run(env, tmp_path):
    missing = tmp_path / "missing.hrs"
    r = pytest_run(env, tmp_path, "--host-range-compare", str(missing))
    usage_error(r, "--host-range-compare: cannot read %s: No such file or "
                "directory" % missing)
    base = tmp_path / "base.hrs"
    base.write_text("")
    r = pytest_run(env, tmp_path, "--host-range-save", str(base),
                   "--host-range-compare", str(base))
    usage_error(r, "--host-range-save and --host-range-compare name the same "
                "file (%s)" % base)
    # Any two of the files the session writes: one would replace the
    # other at the end, silently.
    out = tmp_path / "out"
    for args, said in (
            (["--host-range-profile", out, "--host-range-save", out],
             "--host-range-profile and --host-range-save name the same file "
             "(%s): the run would replace the report" % out),
            (["--host-range-compare", base, "--host-range-profile", out,
              "--host-range-junit", out],
             "--host-range-profile and --host-range-junit name the same "
             "file (%s): the JUnit XML would replace the report" % out),
            (["--host-range-save", out, "--host-range-history", out],
             "--host-range-save and --host-range-history name the same "
             "file (%s): the history would replace the run" % out),
            (["--host-range-profile", base, "--host-range-compare", base],
             "--host-range-profile and --host-range-compare name the same "
             "file (%s): the report would replace the base" % base),
            (["--host-range-compare", base, "--host-range-junit", base],
             "--host-range-junit and --host-range-compare name the same "
             "file (%s): the JUnit XML would replace the base" % base)):
        r = pytest_run(env, tmp_path, *[str(a) for a in args])
        usage_error(r, said)
        assert not out.exists()
    r = pytest_run(env, tmp_path, "--host-range-save",
                   str(tmp_path / "none" / "run.hrs"))
    usage_error(r, "--host-range-save: cannot write", "No such file or "
                "directory")
    r = pytest_run(env, tmp_path, "--host-range-save", str(tmp_path))
    usage_error(r, "--host-range-save: %s is a directory" % tmp_path)
    assert private_dirs(env) == []

    # A file that is not a run, and a truncated run: found when the tests
    # are over; the error names the file and what is wrong with it.
    foreign = tmp_path / "foreign.hrs"
    foreign.write_text("{}\n")
    r = pytest_run(env, tmp_path, "-k", "13x4", "--host-range-compare",
                   str(foreign))
    assert r.returncode == 3, r.stdout + r.stderr
    assert ("hostrange: cannot compare: %s: not a hostrange run file"
            % foreign) in r.stdout
    assert "hostrange: this run against" not in r.stdout
    run = tmp_path / "run.hrs"
    r = pytest_run(env, tmp_path, "-k", "13x4", "--host-range-save",
                   str(run))
    assert r.returncode == 0, r.stdout + r.stderr
    truncated = tmp_path / "truncated.hrs"
    truncated.write_bytes(run.read_bytes()[:-7])
    r = pytest_run(env, tmp_path, "-k", "13x4", "--host-range-compare",
                   str(truncated))
    assert r.returncode == 3, r.stdout + r.stderr
    assert re.search(r"^hostrange: cannot compare: %s: truncated at byte "
                     r"\d+" % re.escape(str(truncated)), r.stdout, re.M), \
        r.stdout
    assert private_dirs(env) == [] and compare_dirs(env) == []


def test_error_save_module_without_profiling(env, tmp_path):
    env["PYTHONPATH"] = (os.environ.get("HRPY_OFF_PATH")
                         or os.environ["HRPY_PATH"])
    r = pytest_run(env, tmp_path, "--host-range-save",
                   str(tmp_path / "run.hrs"))
    usage_error(r, "--host-range-save: the hostrange module was built "
                "without profiling", "run without --host-range-save")
    assert not (tmp_path / "run.hrs").exists()
