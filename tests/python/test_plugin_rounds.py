"""Checks of the pytest plugin's --host-range-rounds N: a suite of spin
tests run as separate pytest processes with a real private daemon; the
rounds interleaved across the tests (the calls' order logged), the saved
run keeping every key's N round medians beside the pooled report, the
comparison of two such runs tested at the run level (the fastest-half
test of the round medians) and failing the session on a slowdown, a replay
that fails, and the option's usage errors."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from hr_daemon import LIMIT_S, PROFILING, program, parse_rows

needs_profiling = pytest.mark.skipif(
    not PROFILING, reason="built with --disable-host-range-profiling")

BLOCKS = 8
TESTS = 3
ROUNDS = 5

SPIN = textwrap.dedent("""
    import os
    import pytest
    import hostrange

    SPIN_NS = int(os.environ["HRPY_SPIN_NS"])
    LOG = os.environ["HRPY_CALL_LOG"]
    FAIL_AFTER = int(os.environ.get("HRPY_FAIL_AFTER", "0"))
    calls = {}

    @hostrange.scope("spin.body")
    def spin(case):
        calls[case] = calls.get(case, 0) + 1
        if FAIL_AFTER and calls[case] > FAIL_AFTER:
            raise ValueError("call %d of case %d" % (calls[case], case))
        with open(LOG, "a") as f:
            f.write("%d\\n" % case)
        t0 = hostrange.now_ns()
        while hostrange.now_ns() - t0 < SPIN_NS:
            pass

    @pytest.mark.parametrize("case", range(3))
    def test_spin(host_range, case):
        host_range(spin, case)
    """)


@pytest.fixture
def env(tmp_path):
    """The environment of a pytest run: no daemon answers at its runtime
    directory, temporary files go to a directory of its own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    e = dict(os.environ)
    e["HOSTRANGE_RUNTIME_DIR"] = str(tmp_path / "no-daemon")
    e["TMPDIR"] = str(tmp)
    e["HRPY_CALL_LOG"] = str(tmp_path / "calls.log")
    e.pop("PYTEST_ADDOPTS", None)
    (tmp_path / "test_spin.py").write_text(SPIN)
    return e


def run(env, tmp_path, spin_ns, *args):
    """pytest on test_spin.py, each call spinning spin_ns, 1 call a block,
    BLOCKS blocks; returns the CompletedProcess."""
    e = dict(env)
    e["HRPY_SPIN_NS"] = str(spin_ns)
    argv = [os.environ.get("HR_PYTHON", sys.executable), "-m", "pytest",
            "-p", "no:cacheprovider", "-q", "-rp", "--host-range-calls", "1",
            "--host-range-blocks", str(BLOCKS)] + list(args) + ["test_spin.py"]
    return subprocess.run(argv, cwd=str(tmp_path), env=e,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=LIMIT_S)


def dump_rounds(path):
    r = subprocess.run([program("HOSTRANGECTL"), "dump", "--from", str(path),
                        "--fields", "rounds"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=LIMIT_S)
    assert r.returncode == 0, r.stderr
    return parse_rows(r.stdout)


def leftovers(env):
    return [n for n in os.listdir(env["TMPDIR"]) if n.startswith("hostrange-")]


@needs_profiling
def test_rounds_interleaved_saved_and_compared(env, tmp_path):
    save, report = tmp_path / "base.hrs", tmp_path / "report.jsonl"
    r = run(env, tmp_path, 20000, "--host-range-rounds", str(ROUNDS),
            "--host-range-save", str(save), "--host-range-profile",
            str(report))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "%d passed" % TESTS in r.stdout
    assert ("hostrange: %d rounds of %d tests: merged %d files into %s"
            % (ROUNDS, TESTS, ROUNDS, save)) in r.stdout, r.stdout
    # The calls' order: each test's round 1 when it passed (its check call,
    # cold, its sizing block, end_to_end, warm), then round 2 of every
    # test, then round 3, ...: the rounds of a test are apart, never back
    # to back.
    with open(env["HRPY_CALL_LOG"]) as f:
        order = [int(x) for x in f.read().split()]
    bursts = [c for i, c in enumerate(order) if i == 0 or order[i - 1] != c]
    assert bursts == list(range(TESTS)) * ROUNDS, bursts
    # Each round of a test: cold (1) + one untimed block (1) + end_to_end
    # and warm (BLOCKS each); round 1 has the check call too.
    per_case = [order.count(c) for c in range(TESTS)]
    assert per_case == [ROUNDS * (2 + 2 * BLOCKS) + 1] * TESTS, per_case
    # The report pools the rounds: ROUNDS x BLOCKS warm samples, ROUNDS
    # cold.
    rows = parse_rows(report.read_text())
    assert len({x["nodeid"] for x in rows}) == TESTS
    for x in rows:
        want = ROUNDS if x["phase"] == "cold" else ROUNDS * BLOCKS
        assert x["count"] == want, x
    # The run file keeps ROUNDS round medians for every key, and its pooled
    # rows are the report's.
    saved = dump_rounds(save)
    assert [{k: v for k, v in x.items() if not k.startswith("round")}
            for x in saved] == rows
    for x in saved:
        assert x["rounds"] == ROUNDS and len(x["round_medians"]) == ROUNDS, x
        if x["range"] == "spin.body":
            assert min(x["round_medians"]) >= 20000, x
    assert leftovers(env) == []

    # Five times as slow (far beyond what a loaded machine adds to a
    # 20 us spin), 5 rounds: every round of new is beyond every round of
    # base, so only that split and its mirror are as far from 0 among the
    # C(10, 5) splits of the exact fastest-half test: p = 2 / 252 = 0.0079,
    # and the session fails (--host-range-compare-fail).
    r = run(env, tmp_path, 100000, "--host-range-rounds", str(ROUNDS),
            "--host-range-compare", str(save), "--host-range-compare-fail",
            "50")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    head = [i for i, x in enumerate(lines) if "hostrange: this run against" in x]
    assert len(head) == 1, r.stdout
    table = lines[head[0] + 1:]
    assert table[0].startswith("rounds 5/5: p and interval from the round "
                               "medians (fastest-half test"), table[0]
    flagged = [x for x in table if re.search(r" warm spin.body inclusive .* "
                                             r"p=0.00794 slower rounds 5/5$",
                                             x)]
    assert len(flagged) == TESTS, "\n".join(table)
    assert "above --host-range-compare-fail 50%" in r.stdout
    assert "run-to-run noise not measured" not in r.stdout
    assert leftovers(env) == []


@needs_profiling
def test_rounds_a_replay_that_fails(env, tmp_path):
    # The call works in round 1 (the check call, cold, a sizing block,
    # end_to_end and warm: 3 + 2 x BLOCKS calls) and fails at round 2's
    # first.
    e = dict(env)
    e["HRPY_FAIL_AFTER"] = str(3 + 2 * BLOCKS)
    r = run(e, tmp_path, 1000, "--host-range-rounds", "2",
            "--host-range-save", str(tmp_path / "run.hrs"))
    assert r.returncode == pytest.ExitCode.INTERNAL_ERROR, \
        r.stdout + r.stderr
    assert ("hostrange: round 2 of test_spin.py::test_spin[0] failed: "
            "ValueError: call %d of case 0" % (4 + 2 * BLOCKS)) in r.stdout
    assert not (tmp_path / "run.hrs").exists()
    assert leftovers(env) == []


@needs_profiling
def test_rounds_long_tmpdir(env, tmp_path):
    # A temporary directory too long for a daemon's sockets beside it (its
    # DIR/control over a Unix socket address): the private daemon serves
    # from /tmp, and the session works, leaving nothing in either.
    e = dict(env)
    tmp = tmp_path / ("t" * max(1, 100 - len(str(tmp_path))))
    tmp.mkdir()
    e["TMPDIR"] = str(tmp)
    assert len(str(tmp)) >= 100
    before = set(os.listdir("/tmp"))
    save = tmp_path / "run.hrs"
    r = run(e, tmp_path, 1000, "--host-range-rounds", "2",
            "--host-range-save", str(save))
    assert r.returncode == 0, r.stdout + r.stderr
    assert save.exists()
    assert os.listdir(str(tmp)) == []
    assert [n for n in set(os.listdir("/tmp")) - before
            if n.startswith("hostrange-pytest-")] == []


@needs_profiling
def test_rounds_sequential(env, tmp_path):
    # The base: --host-range-max-rounds 7 without a comparison makes 7
    # rounds, so that a later session has 7 pairs to look at.
    save = tmp_path / "base.hrs"
    r = run(env, tmp_path, 20000, "--host-range-rounds", "3",
            "--host-range-max-rounds", "7", "--host-range-save", str(save))
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("hostrange: 7 rounds of %d tests: merged 7 files into %s"
            % (TESTS, save)) in r.stdout, r.stdout
    assert "sequential rounds" not in r.stdout
    for x in dump_rounds(save):
        assert x["rounds"] == 7, x

    # Five times as slow, every key gated at 50%: looks after 3, 4, 6 and
    # 7 rounds (the schedule of diff --max-rounds 7 --first-look 3), each
    # at p < 0.01 / 4. Every round beyond every round of base gives p =
    # 2 / C(2n, n): 0.1, 0.029, then 2 / 924 = 0.0022 at 6 pairs, below
    # 0.0025: slower after 6 pairs. The session stops there unless another
    # gated key (a cold or an end-to-end one, which a loaded machine may
    # leave open) is still undecided; then it stops at 7, the most.
    r = run(env, tmp_path, 100000, "--host-range-rounds", "3",
            "--host-range-max-rounds", "7", "--host-range-compare",
            str(save), "--host-range-compare-fail", "50")
    assert r.returncode == 1, r.stdout + r.stderr
    m = re.search(r"hostrange: (\d+) rounds of %d tests" % TESTS, r.stdout)
    assert m is not None and m.group(1) in ("6", "7"), r.stdout
    if m.group(1) == "6":
        assert ("hostrange: sequential rounds: looked after 3, 4, 6 rounds: "
                "every gated key decided or hopeless") in r.stdout, r.stdout
    else:
        assert ("hostrange: sequential rounds: looked after 3, 4, 6 rounds; "
                "7 rounds, the most") in r.stdout, r.stdout
    slower = [x for x in r.stdout.splitlines()
              if re.search(r" warm spin.body inclusive .*slower after 6 "
                           r"pairs", x)]
    assert len(slower) == TESTS, r.stdout
    assert "above --host-range-compare-fail 50%" in r.stdout
    assert leftovers(env) == []

    # The same spin: no key slower, the session passes, whatever the
    # verdict of each key (same, or undecided and said).
    r = run(env, tmp_path, 20000, "--host-range-rounds", "3",
            "--host-range-max-rounds", "7", "--host-range-compare",
            str(save), "--host-range-compare-fail", "50")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "hostrange: sequential rounds: looked after 3" in r.stdout, \
        r.stdout
    assert not re.search(r" (slower|faster) after \d+ pairs", r.stdout), \
        r.stdout
    assert leftovers(env) == []


def test_rounds_usage_errors(env, tmp_path):
    r = run(env, tmp_path, 1000, "--host-range-rounds", "0",
            "--host-range-profile", str(tmp_path / "r.jsonl"))
    assert r.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--host-range-rounds must be 1 or more" in r.stderr, r.stderr
    r = run(env, tmp_path, 1000, "--host-range-rounds", "3")
    assert r.returncode == pytest.ExitCode.USAGE_ERROR
    assert ("--host-range-rounds needs --host-range-profile, -save, "
            "-compare or -history") in r.stderr, r.stderr
    r = run(env, tmp_path, 1000, "--host-range-max-rounds", "5",
            "--host-range-profile", str(tmp_path / "r.jsonl"))
    assert r.returncode == pytest.ExitCode.USAGE_ERROR
    assert ("--host-range-max-rounds needs --host-range-rounds N of 2 or "
            "more") in r.stderr, r.stderr
    r = run(env, tmp_path, 1000, "--host-range-rounds", "5",
            "--host-range-max-rounds", "3",
            "--host-range-profile", str(tmp_path / "r.jsonl"))
    assert r.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--host-range-max-rounds 3 is below --host-range-rounds 5" in \
        r.stderr, r.stderr
    for opts, said in ((("--host-range-rounds", "1001"),
                        "--host-range-rounds 1001 is over 1000"),
                       (("--host-range-rounds", "5", "--host-range-max-rounds",
                         "1001"), "--host-range-max-rounds 1001 is over 1000")):
        r = run(env, tmp_path, 1000, *(opts + ("--host-range-profile",
                                               str(tmp_path / "r.jsonl"))))
        assert r.returncode == pytest.ExitCode.USAGE_ERROR
        assert said in r.stderr, r.stderr
    has_xdist = subprocess.run([os.environ.get("HR_PYTHON", sys.executable),
                                "-c", "import xdist"],
                               stderr=subprocess.DEVNULL).returncode == 0
    if has_xdist and PROFILING:
        r = run(env, tmp_path, 1000, "--host-range-rounds", "3", "-n", "2",
                "--host-range-profile", str(tmp_path / "r.jsonl"))
        assert r.returncode == pytest.ExitCode.USAGE_ERROR
        assert "--host-range-rounds does not work with pytest-xdist" in \
            r.stderr, r.stderr
