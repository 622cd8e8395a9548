"""hostrange's pytest plugin: cold and warm host-range reports of a test suite.

Installed with the module `hostrange` (the entry point ``hostrange`` of the
group ``pytest11``), so pytest loads it by itself. It does nothing until asked:

    pytest --host-range-profile report.jsonl [-n N]

Tests opt in with the ``host_range`` fixture, a callable that takes the
operator call to profile and makes it once, the correctness call::

    def test_add(host_range, device):
        host_range(hostrange.ops.add, a, b, out, device=device)
        assert ...                       # check the result

When the test body has passed, and before its fixtures are torn down, the
plugin profiles the call, as hostrange-bench does (a failure of the profile
fails the test): cold (the operator cache cleared, one call in a window of its own),
``end_to_end`` (timed blocks of calls with collection inactive, each block one
sample: its time divided by its calls, recorded under the warm labels), then
warm (as many calls again, in blocks of the same size, inside one window).
The labels are the test's node id, the operator (the test module's name
without ``test_``), the backend (from the test's ``device`` parameter: ``cpu``,
or ``nvidia`` for ``cuda`` and ``cuda:N``) and the phase; the marker
``@pytest.mark.host_range(operator=..., backend=..., device=...)`` overrides
them, and its ``clear_cache=`` and ``sync=`` replace the callables that clear
the operator cache (``hostrange.ops.clear_cache``) and wait for the device.

The samples go to the hostranged that answers at $HOSTRANGE_RUNTIME_DIR (or
its default); when none answers, the plugin starts a private one on a fresh
temporary runtime directory for the session (in /tmp when the temporary
directory is too long a path for its sockets) and stops it at the end.
hostranged is $HOSTRANGED, else the one beside hostrangectl, else the one on
PATH; hostrangectl is $HOSTRANGECTL, else the one installed with this module,
else the one on PATH. With pytest-xdist the controller finds or starts the
daemon and the workers inherit HOSTRANGE_RUNTIME_DIR, so every worker reports
into the same daemon. At the end of the session the daemon's report is written
to PATH (``hostrangectl dump -o PATH``).

Runs can be kept and compared (each option also turns profiling on, with or
without a report)::

    pytest --host-range-save base.hrs                     # on the base commit
    pytest --host-range-compare base.hrs --host-range-compare-fail 10

``--host-range-save FILE`` saves what the daemon holds at the end of the
session as a run file (``hostrangectl save -o FILE``), as ``hostrangectl
record --save`` does: atomically, with the machine's fingerprint, and also
when tests failed; ``--host-range-meta KEY=VALUE`` (any number of times)
notes KEY=VALUE in it (``save --meta``); ``--host-range-machine NAME``
names the machine the run is measured on (``save --machine``, default
``$HOSTRANGE_MACHINE``), so that a history keys its series by the name
rather than by the CPU of whichever CI runner ran it.
``--host-range-compare BASE`` saves the run (to FILE, or to a temporary file)
and prints its comparison with the run file BASE in the terminal summary
(``hostrangectl diff BASE NEW``: medians, change, shift with its interval,
p-value, flag, and each run's machine); ``--host-range-compare-fail LIMITS``
fails the session (exit status 1) when a key is slower (p < 0.01) by more
than its limit: ``PCT`` for every range, or ``GLOB=PCT,...`` per range name
as ``diff --fail-above`` takes them (``'backend.*=3,*=10'``). When the two
runs' machine fingerprints differ, the summary says so;
``--host-range-compare-strict`` then refuses to compare (exit status 3, as
for a BASE that cannot be read: the summary says which). With pytest-xdist
only the controller saves and compares, after every worker has finished.

``--host-range-history DB`` adds the session's run to the history DB
(``hostrangectl history add``: a SQLite file, or a PostgreSQL database),
once per session, xdist included, with the notes of ``--host-range-meta``;
its commit is ``git rev-parse HEAD`` when the tests run in a git work tree
and no ``commit`` note is given. Before adding it, the terminal summary shows
what ``hostrangectl history check`` finds for the session's keys against
their history on this machine.

``--host-range-rounds N`` measures each test in N rounds, so that
``--host-range-compare`` tests at the run level (``hostrangectl diff`` on
the round medians) instead of treating the samples of one session as
independent. Round 1 is each test's profile as above, made when the test
passes; rounds 2 to N replay every profiled test's call at the end of the
session, round by round in the order the tests ran (test 1, test 2, ...,
then test 1 again), so that the rounds of a test are apart, with the other
tests between them, not back to back. Each replay profiles cold,
``end_to_end`` and warm again, with the block size and count of round 1.
The session then uses a private daemon of its own: after each round the
plugin saves its samples and drops them (``hostrangectl save``, ``reset``),
and at the end merges the N saves as rounds (``hostrangectl merge``) into
the session's run: the report (``--host-range-profile``, the pooled
samples), ``--host-range-save`` (a run file that keeps each key's
per-round count and median), ``--host-range-compare`` and
``--host-range-history`` all use that run. The replays run after the
test's fixtures are torn down: the call and its arguments are kept alive,
so it must not depend on what a fixture's teardown closes. With
pytest-xdist it is refused (the calls live in the workers).

``--host-range-max-rounds M`` makes the rounds sequential, as
``hostrangectl ab --max-rounds`` does: N (``--host-range-rounds``) is the
first look, and with ``--host-range-compare BASE`` the plugin merges the
rounds so far and compares them with BASE (``hostrangectl diff
--first-look N --max-rounds M``, the k-th rounds of BASE and of this
session a pair); while a gated key (those ``--host-range-compare-fail``
names, else all) is neither decided (slower, faster or same) nor
hopeless, it replays the tests for more rounds, up to the next look
(about sqrt 2 times as many, M at most). It stops early when BASE has no
more rounds than the session (more rounds here would make no more
pairs): a BASE for sequential comparisons is best saved with M rounds,
which ``--host-range-max-rounds M`` without ``--host-range-compare``
makes. The summary says after how many rounds it looked, and why it
stopped; the comparison's table gives each key's verdict and the pairs
that decided it. A gated key still undecided is said in the summary but
does not fail the session (only a key slower than allowed does).

``--host-range-junit FILE`` also writes the comparison to FILE as JUnit XML
(``hostrangectl diff --format junit``), for a CI system's test report: one
testsuite per test (node id), one testcase per key, a failure per key slower
than --host-range-compare-fail allows, skipped for a key of one run only.
"""

import functools
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import types
import warnings

import pytest

_STATE = pytest.StashKey()
_HOST_RANGE = pytest.StashKey()
# What host_range refuses as a call's result: objects that do their work
# later, when iterated or awaited.
_LAZY = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
# The keywords of the marker host_range (pytest_configure says them).
_MARKER_KEYS = ("operator", "backend", "device", "clear_cache", "sync")

_BLOCK_STEPS = (1, 2, 5)
_MIN_BLOCK_NS = 50000
_FLUSH_TIMEOUT_MS = 30000
_PING_TIMEOUT_MS = 2000
# hostrangectl diff's exit statuses (hostrangectl(1)) that are no error: no
# key slower than allowed, and one slower (--fail-above). The others (a run
# file that cannot be read, --strict refusing runs of different machines,
# a failure) end the session with an internal error that says which.
# A node id over the daemon's limit (hostrange.MAX_NAME bytes) is labelled
# with its first bytes, _CUT_MARK and the first _HASH_HEX hex digits of the
# SHA-256 of the whole id: unique, and the same from session to session.
_CUT_MARK = "\u2026"
_HASH_HEX = 16
_DIFF_OK = 0
_DIFF_SLOWER = 1
# ... and, with --host-range-max-rounds, a gated key undecided.
_DIFF_UNDECIDED = 8
_START_WAIT_MS = 10000
# The longest runtime directory whose sockets a daemon can bind
# (hrp_runtime_dir_max): DIR/control within a Unix socket address.
_RUNTIME_DIR_MAX = 107 - len("/control")
# The most rounds a side hostrangectl takes (HRC_ROUNDS_MAX).
_ROUNDS_MAX = 1000
# The limits of hostrangectl diff --fail-above (lib/stat/limits.c): a
# percentage is at most HRS_LIMIT_MAX_PCT, its text shorter than
# _LIMIT_TEXT_MAX bytes.
_LIMIT_MAX_PCT = 1e9
_LIMIT_TEXT_MAX = 64
_PCT_RE = re.compile(r"[ \t\n\v\f\r]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)"
                     r"([eE][+-]?[0-9]+)?\Z")


def pytest_addoption(parser):
    group = parser.getgroup("hostrange", "host-side range profiling (hostrange)")
    group.addoption(
        "--host-range-profile", metavar="PATH", default=None,
        help="profile the tests that use the host_range fixture and write "
             "the report (JSON lines) to PATH")
    group.addoption(
        "--host-range-calls", metavar="N", type=int, default=None,
        help="calls per timed block (default: the first of 1, 2, 5, 10, ... "
             "whose block takes 50 us or more)")
    group.addoption(
        "--host-range-blocks", metavar="N", type=int, default=None,
        help="timed blocks per test (default: as many as "
             "--host-range-target-ms and --host-range-max-calls allow)")
    group.addoption(
        "--host-range-target-ms", metavar="MS", type=float, default=200.0,
        help="time to spend on the end_to_end blocks of a test (default 200)")
    group.addoption(
        "--host-range-max-calls", metavar="N", type=int, default=10000,
        help="the most calls per block, and in all the blocks together "
             "unless --host-range-blocks is given (default 10000)")
    group.addoption(
        "--host-range-save", metavar="FILE", default=None,
        help="profile as --host-range-profile does and, at the end of the "
             "session, save the daemon's run to the run file FILE "
             "(hostrangectl save; for hostrangectl merge, diff, or "
             "--host-range-compare)")
    group.addoption(
        "--host-range-compare", metavar="BASE", default=None,
        help="profile as --host-range-profile does and print, in the "
             "terminal summary, the comparison of this session's run with "
             "the run file BASE (hostrangectl diff BASE NEW: a change is "
             "flagged when p < 0.01 and |change| >= 5%%)")
    group.addoption(
        "--host-range-meta", metavar="KEY=VALUE", action="append",
        default=None,
        help="with --host-range-save or --host-range-history: note "
             "KEY=VALUE in the run (hostrangectl save --meta); may be "
             "given many times")
    group.addoption(
        "--host-range-history", metavar="DB", default=None,
        help="profile as --host-range-profile does and, at the end of the "
             "session, add the run to the history DB (hostrangectl history "
             "add; its commit from git rev-parse HEAD unless "
             "--host-range-meta commit=... is given), and show what "
             "hostrangectl history check finds for it")
    group.addoption(
        "--host-range-compare-fail", metavar="LIMITS", default=None,
        help="with --host-range-compare: fail the session (exit status 1) "
             "when a key is slower (p < 0.01) by more than its limit: PCT "
             "for every range, or GLOB=PCT,... per range name, the first "
             "pattern that matches applying, e.g. 'backend.*=3,*=10' "
             "(hostrangectl diff --fail-above)")
    group.addoption(
        "--host-range-junit", metavar="FILE", default=None,
        help="with --host-range-compare: also write the comparison to FILE "
             "as JUnit XML (hostrangectl diff --format junit): a testcase "
             "per key, a failure per key slower than "
             "--host-range-compare-fail allows")
    group.addoption(
        "--host-range-rounds", metavar="N", type=int, default=1,
        help="measure each profiled test in N rounds (default 1, at most "
             "1000): round 1 "
             "when the test passes, rounds 2 to N by replaying every "
             "test's call at the end of the session, interleaved (all the "
             "tests, then all again); the run keeps each round, so that "
             "--host-range-compare tests at the run level (hostrangectl "
             "diff on the round medians); uses a private daemon; not with "
             "pytest-xdist")
    group.addoption(
        "--host-range-max-rounds", metavar="M", type=int, default=None,
        help="sequential rounds: with --host-range-compare, look after "
             "--host-range-rounds N rounds, then after about sqrt 2 times "
             "as many each time up to M (at most 1000), and stop once "
             "every gated key "
             "(those --host-range-compare-fail names, else all) is "
             "decided slower, faster or same, or hopeless, by hostrangectl "
             "diff --first-look N --max-rounds M (a key still open after "
             "M is undecided, said in the summary); without it, run M "
             "rounds, a base for such comparisons")
    group.addoption(
        "--host-range-compare-strict", action="store_true", default=False,
        help="with --host-range-compare: refuse to compare runs whose "
             "machines differ (the machine's name, else its CPU model and "
             "cores, and the clock path and step); by default the summary "
             "warns")
    group.addoption(
        "--host-range-machine", metavar="NAME", default=None,
        help="the name of the machine the run is measured on, kept in "
             "the run (hostrangectl save --machine; default "
             "$HOSTRANGE_MACHINE): the history keys its series by it, "
             "whatever the host name (a CI runner's changes every job)")


def _check_machine(name):
    """Refuses a machine name hostrangectl would refuse: 1 to 255 bytes
    of UTF-8, no control character."""
    raw = name.encode("utf-8", "surrogateescape")
    if not 1 <= len(raw) <= 255:
        raise pytest.UsageError(
            "--host-range-machine: a machine's name is 1 to 255 bytes, "
            "not %d" % len(raw))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise pytest.UsageError(
            "--host-range-machine: a machine's name is UTF-8") from None
    if any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in name):
        raise pytest.UsageError(
            "--host-range-machine: a machine's name holds no control "
            "character")


def _usage(message, option="--host-range-profile"):
    return pytest.UsageError(option + ": " + message)


def _is_worker(config):
    return hasattr(config, "workerinput")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "host_range(operator=None, backend=None, device=None, "
        "clear_cache=None, sync=None): the labels and helpers of the "
        "profile of this test (see the host_range fixture)")
    path = config.getoption("host_range_profile")
    save = config.getoption("host_range_save")
    base = config.getoption("host_range_compare")
    fail = config.getoption("host_range_compare_fail")
    strict = config.getoption("host_range_compare_strict")
    meta = config.getoption("host_range_meta") or []
    history = config.getoption("host_range_history")
    machine = config.getoption("host_range_machine")
    if machine is not None:
        _check_machine(machine)
        # Every hostrangectl the session starts (save, merge, history
        # add) keeps the name in the runs it makes.
        os.environ["HOSTRANGE_MACHINE"] = machine
    if fail is not None and base is None:
        raise pytest.UsageError(
            "--host-range-compare-fail needs --host-range-compare BASE")
    junit = config.getoption("host_range_junit")
    if junit is not None and base is None:
        raise pytest.UsageError(
            "--host-range-junit needs --host-range-compare BASE")
    if strict and base is None:
        raise pytest.UsageError(
            "--host-range-compare-strict needs --host-range-compare BASE")
    if fail is not None:
        _check_limits(fail)
    if meta and save is None and history is None:
        raise pytest.UsageError(
            "--host-range-meta needs --host-range-save or "
            "--host-range-history")
    for m in meta:
        if m.partition("=")[0] == "" or "=" not in m:
            raise pytest.UsageError(
                "--host-range-meta: bad %r (KEY=VALUE)" % m)
    # The option named in the errors of the module and the daemon.
    option = ("--host-range-profile" if path is not None else
              "--host-range-save" if save is not None else
              "--host-range-history" if history is not None else
              "--host-range-compare")
    rounds = config.getoption("host_range_rounds")
    if rounds is None or rounds < 1:
        raise pytest.UsageError("--host-range-rounds must be 1 or more")
    max_rounds = config.getoption("host_range_max_rounds")
    # The most rounds hostrangectl takes (record --rounds, ab, diff
    # --max-rounds): said here, before any round runs, not at the first
    # look.
    for name, value in (("rounds", rounds), ("max-rounds", max_rounds)):
        if value is not None and value > _ROUNDS_MAX:
            raise pytest.UsageError(
                "--host-range-%s %d is over %d, the most rounds hostrangectl "
                "compares" % (name, value, _ROUNDS_MAX))
    if max_rounds is not None:
        if rounds < 2:
            raise pytest.UsageError(
                "--host-range-max-rounds needs --host-range-rounds N of 2 "
                "or more (the first look)")
        if max_rounds < rounds:
            raise pytest.UsageError(
                "--host-range-max-rounds %d is below --host-range-rounds %d"
                % (max_rounds, rounds))
    if path is None and save is None and base is None and history is None:
        if rounds > 1:
            raise pytest.UsageError(
                "--host-range-rounds needs --host-range-profile, -save, "
                "-compare or -history")
        return
    if rounds > 1 and (_is_worker(config) or
                       getattr(config.option, "numprocesses", None)):
        raise pytest.UsageError(
            "--host-range-rounds does not work with pytest-xdist (-n): "
            "the calls it replays live in the workers")
    for name in ("calls", "blocks", "max_calls", "target_ms"):
        value = config.getoption("host_range_" + name)
        # nan and inf too: a number of calls is made of them.
        if value is not None and not 0 < value < float("inf"):
            raise pytest.UsageError(
                "--host-range-%s must be positive and finite, not %s"
                % (name.replace("_", "-"), value))
    try:
        import hostrange
    except ImportError as e:
        raise _usage("cannot import the module hostrange: %s" % e, option)
    if not hostrange.compiled():
        raise _usage(
            "the hostrange module was built without profiling (configure "
            "--disable-host-range-profiling), so it cannot collect anything; "
            "rebuild it with profiling, or run without %s" % option, option)
    if not hostrange.enabled():
        raise _usage("collection is turned off (HOSTRANGE=0)", option)
    state = _Session(config, path, save, base, fail, option)
    state.strict = strict
    state.meta = meta
    state.history = history
    state.junit = None if junit is None else os.path.abspath(junit)
    state.rounds = rounds
    state.max_rounds = max_rounds
    config.stash[_STATE] = state
    config.add_cleanup(state.stop)
    if not _is_worker(config):
        if path is not None:
            _check_output(state.path, "--host-range-profile")
        if save is not None:
            _check_output(state.save, "--host-range-save")
        if base is not None:
            _check_base(state.base)
        if junit is not None:
            _check_output(state.junit, "--host-range-junit")
        if history is not None:
            _check_history(history)
        _check_distinct([
            ("--host-range-profile", state.path),
            ("--host-range-save", state.save),
            ("--host-range-junit", state.junit),
            ("--host-range-history", None if history is None or
             _is_pg(history) else os.path.abspath(history)),
            ("--host-range-compare", state.base)])
        state.connect()


def _pct(text):
    """A percentage of --host-range-compare-fail as hostrangectl diff reads
    one (strtod, lib/stat/limits.c): a decimal number, blanks before it
    only; None when it is not one. Python's float() takes more (inf, nan,
    1_000, blanks after) that diff refuses."""
    if len(text) >= _LIMIT_TEXT_MAX or not _PCT_RE.match(text):
        return None
    value = float(text)
    mantissa = text.lower().partition("e")[0]
    if 0 < abs(value) < sys.float_info.min or (
            value == 0 and mantissa.strip(" \t\n\v\f\r+-0.")):
        return None  # strtod's underflow (ERANGE)
    return value


def _check_limits(spec):
    """Fails now on a --host-range-compare-fail that hostrangectl diff
    --fail-above would refuse: PCT, or GLOB=PCT,... with PCT from 0 to
    _LIMIT_MAX_PCT."""
    for item in spec.split(","):
        glob, eq, pct = item.rpartition("=")
        value = _pct(pct)
        if value is not None and value < 0:
            raise pytest.UsageError(
                "--host-range-compare-fail must be 0 or more (a percentage)")
        if value is None or value > _LIMIT_MAX_PCT or (eq and not glob):
            raise pytest.UsageError(
                "--host-range-compare-fail: bad limit %r (PCT, or GLOB=PCT, "
                "comma-separated, such as 'backend.*=3,*=10', with PCT a "
                "number from 0 to %g)" % (item, _LIMIT_MAX_PCT))


def _check_output(path, option):
    """Fails now, not after the tests, when path cannot be written."""
    parent = os.path.dirname(path)
    if os.path.isdir(path):
        raise _usage("%s is a directory" % path, option)
    if os.path.exists(path) and not os.path.isfile(path):
        if not os.access(path, os.W_OK):
            raise _usage("cannot write %s" % path, option)
        return
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".hostrange-")
    except OSError as e:
        raise _usage("cannot write %s: %s (%s)" % (path, e.strerror, parent),
                     option)
    os.close(fd)
    os.unlink(probe)


def _same_file(a, b):
    return a == b or (os.path.exists(a) and os.path.exists(b) and
                      os.path.samefile(a, b))


# What each option's file gets, for the message of _check_distinct.
_WRITES = {"--host-range-profile": "report", "--host-range-save": "run",
           "--host-range-junit": "JUnit XML",
           "--host-range-history": "history"}


def _check_distinct(files):
    """Fails now when two options (option, absolute path or None) name the
    same file: the session writes each, one over the other (the report,
    the run, the JUnit XML, the history) or over the run file BASE, which
    comes last."""
    files = [(o, p) for o, p in files if p is not None]
    for i, (o1, p1) in enumerate(files):
        for o2, p2 in files[i + 1:]:
            if not _same_file(p1, p2):
                continue
            if o2 == "--host-range-compare":
                why = "the %s would replace the base" % _WRITES[o1]
            else:
                why = "the %s would replace the %s" % (_WRITES[o2],
                                                       _WRITES[o1])
            raise pytest.UsageError("%s and %s name the same file (%s): %s"
                                    % (o1, o2, p1, why))


def _is_pg(db):
    """True when db names a PostgreSQL database rather than a SQLite file,
    as hostrangectl history tells them (lib/history/dsn.c): a postgresql://
    or postgres:// URL, or key=value pairs."""
    if db.startswith(("postgresql://", "postgres://")):
        return True
    key, eq, _ = db.partition("=")
    return bool(eq and key) and all(c.isascii() and (c.isalpha() or c in "_ ")
                                    for c in key)


def _check_history(db):
    """Fails now, not after the tests, on a history DB that is no SQLite
    file hostrangectl history add could write (a PostgreSQL database is
    only reached at the end). An empty name is no name to hostrangectl,
    which would add the run to its default history ($HOSTRANGE_HISTORY,
    else hostrange-history.db in the current directory), one never
    named."""
    if db == "":
        raise _usage("a SQLite file or a PostgreSQL connection string, not "
                     "empty", "--host-range-history")
    if not _is_pg(db):
        _check_output(os.path.abspath(db), "--host-range-history")


def _check_base(path):
    """Fails now, not after the tests, when the run file BASE cannot be
    read (hostrangectl diff checks what it holds)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise _usage("cannot read %s: %s" % (path, e.strerror),
                     "--host-range-compare")


class _Session:
    """The daemon and the report of one profiled session (the controller's:
    an xdist worker only has the options)."""

    def __init__(self, config, path, save, base, fail, option):
        self.config = config
        self.path = None if path is None else os.path.abspath(path)
        self.save = None if save is None else os.path.abspath(save)
        self.base = None if base is None else os.path.abspath(base)
        self.fail = fail
        self.option = option
        self.calls = config.getoption("host_range_calls")
        self.blocks = config.getoption("host_range_blocks")
        self.target_ms = config.getoption("host_range_target_ms")
        self.max_calls = config.getoption("host_range_max_calls")
        self.ctl = None
        self.dir = None
        self.daemon = None
        self.saved_env = None
        self.strict = False
        self.junit = None
        self.meta = []
        self.history = None
        self.summary = []
        self.compared = []
        self.warned_long = False
        self.checked = []
        self.rounds = 1
        self.max_rounds = None
        self.replay = []

    def _find_ctl(self):
        import hostrange
        env = os.environ.get("HOSTRANGECTL")
        if env:
            return env
        installed = os.path.join(getattr(hostrange, "_bindir", ""),
                                 "hostrangectl")
        if os.access(installed, os.X_OK):
            return installed
        found = shutil.which("hostrangectl")
        if found is None:
            raise _usage("hostrangectl not found (set HOSTRANGECTL or PATH)", self.option)
        return found

    def _find_daemon(self):
        env = os.environ.get("HOSTRANGED")
        if env:
            return env
        beside = os.path.join(os.path.dirname(self.ctl), "hostranged")
        if os.access(beside, os.X_OK):
            return beside
        found = shutil.which("hostranged")
        if found is None:
            raise _usage("hostranged not found (set HOSTRANGED or PATH)", self.option)
        return found

    def _ctl(self, *args):
        return subprocess.run([self.ctl] + list(args), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)

    def connect(self):
        """Uses the daemon that answers, or starts a private one; either way
        HOSTRANGE_RUNTIME_DIR names it for this process and its children."""
        self.ctl = self._find_ctl()
        self.saved_env = os.environ.get("HOSTRANGE_RUNTIME_DIR")
        if self.rounds > 1:
            # Rounds reset the daemon: never one that others use.
            self._start_private()
            return
        r = self._ctl("--timeout", str(_PING_TIMEOUT_MS), "ping")
        if r.returncode == 0:
            m = re.search(r" serves (.+)$", r.stdout.strip())
            if m is None:
                raise _usage("unexpected answer of hostrangectl ping: %r"
                             % r.stdout, self.option)
            self.dir = m.group(1)
            os.environ["HOSTRANGE_RUNTIME_DIR"] = self.dir
            return
        error = r.stderr.strip().replace("hostrangectl: ", "", 1)
        if "protocol version" in error:
            raise _usage(
                "%s; stop that daemon, or point HOSTRANGE_RUNTIME_DIR at "
                "another runtime directory (a private daemon is started when "
                "none answers)" % error, self.option)
        self._start_private()

    def _start_private(self):
        daemon = self._find_daemon()
        # The daemon's sockets (DIR/control) must fit a Unix socket address
        # (107 bytes): under a long temporary directory, /tmp.
        parent = tempfile.gettempdir()
        if len(os.fsencode(parent)) + len("/hostrange-pytest-XXXXXXXX") > \
                _RUNTIME_DIR_MAX:
            parent = "/tmp"
        self.dir = tempfile.mkdtemp(prefix="hostrange-pytest-", dir=parent)
        try:
            self.daemon = subprocess.Popen(
                [daemon, "--quiet", "--runtime-dir", self.dir],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                preexec_fn=_die_with_parent)
        except OSError as e:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            raise _usage("cannot run %s: %s" % (daemon, e.strerror),
                         self.option)
        r = self._ctl("--runtime-dir", self.dir, "ping", "--wait",
                      str(_START_WAIT_MS))
        if r.returncode != 0:
            self.stop()
            raise _usage("hostranged (%s) did not start on a private runtime "
                         "directory: %s" % (daemon, r.stderr.strip()),
                         self.option)
        os.environ["HOSTRANGE_RUNTIME_DIR"] = self.dir

    def finish(self):
        """The end of the session: with rounds, replays them; writes the
        report, saves the run, compares it with BASE. Returns None, or the
        exit status the session gets (with the reason in the summary)."""
        import hostrange
        try:
            hostrange.flush(timeout_ms=_FLUSH_TIMEOUT_MS)
        except (TimeoutError, ConnectionError) as e:
            return self._error(
                "the samples of this process were not delivered: %s" % e)
        tmp = None
        try:
            run = None
            if self.rounds > 1:
                tmp = tempfile.mkdtemp(prefix="hostrange-rounds-")
                run, error = self._rounds(tmp)
                if error is not None:
                    return self._error(error)
            self._say_losses()
            if self.path is not None:
                error = self._write_report(run)
                if error is not None:
                    return self._error(error)
            if (self.save is None and self.base is None and
                    self.history is None):
                return None
            if run is None:
                if self.save is None:
                    tmp = tempfile.mkdtemp(prefix="hostrange-compare-")
                run = self.save or os.path.join(tmp, "new.hrs")
                args = ["--runtime-dir", self.dir, "save", "-o", run]
                if self.save is not None or self.history is not None:
                    for m in self._meta():
                        args += ["--meta", m]
                r = self._ctl(*args)
                if r.returncode != 0:
                    return self._error("cannot save the run: %s"
                                       % _ctl_error(r.stderr))
                if self.save is not None:
                    self.summary.append("hostrange: " + r.stdout.strip())
            status = None
            if self.base is not None:
                status = self._compare(run)
            if self.history is not None:
                error = self._add_to_history(run)
                if error is not None:
                    return error
            return status
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)

    def _rounds(self, tmp):
        """--host-range-rounds N: saves round 1 (what the tests made) and
        drops it from the daemon, then replays every profiled test's call
        once per round, the tests in the order they ran, saving and
        dropping each round; merges the saves as rounds into the run
        (--host-range-save FILE, or one in tmp). With
        --host-range-max-rounds M, N is the first look: while a look
        (_look) finds a gated key open, rounds are added up to the next
        look, M at most; without --host-range-compare, M rounds are made.
        Returns (the run's path, None), or (None, what failed)."""
        import hostrange
        saves, looked, why = [], [], ""
        target = self.rounds
        while True:
            for k in range(len(saves) + 1, target + 1):
                if k > 1:
                    for h in self.replay:
                        try:
                            h._profile(self, replay=True)
                        except Exception as e:  # the test's call
                            return None, ("round %d of %s failed: %s: %s"
                                          % (k, h._request.node.nodeid,
                                             type(e).__name__, e))
                    try:
                        hostrange.flush(timeout_ms=_FLUSH_TIMEOUT_MS)
                    except (TimeoutError, ConnectionError) as e:
                        return None, ("the samples of round %d were not "
                                      "delivered: %s" % (k, e))
                f = os.path.join(tmp, "round-%d.hrs" % k)
                r = self._ctl("--runtime-dir", self.dir, "save", "-o", f)
                if r.returncode != 0:
                    return None, ("cannot save round %d: %s"
                                  % (k, _ctl_error(r.stderr)))
                saves.append(f)
                r = self._ctl("--runtime-dir", self.dir, "reset")
                if r.returncode != 0:
                    return None, ("cannot reset the daemon after round %d: "
                                  "%s" % (k, _ctl_error(r.stderr)))
            if self.max_rounds is None or target >= self.max_rounds:
                break
            if self.base is None:
                target = self.max_rounds
                continue
            look = os.path.join(tmp, "look.hrs")
            r = self._ctl(*(["merge", "-o", look, "--"] + saves))
            if r.returncode != 0:
                return None, ("cannot merge the rounds of the look after "
                              "%d: %s" % (target, _ctl_error(r.stderr)))
            looked.append(target)
            open_, why = self._look(look, target)
            if open_ is None:
                return None, why
            if not open_:
                break
            target = _next_look(target, self.max_rounds)
        if looked and not why:
            why = ("; %d rounds, the most (--host-range-max-rounds)"
                   % len(saves))
        run = self.save or os.path.join(tmp, "run.hrs")
        args = ["merge", "-o", run]
        if self.save is not None or self.history is not None:
            for m in self._meta():
                args += ["--meta", m]
        r = self._ctl(*(args + ["--"] + saves))
        if r.returncode != 0:
            return None, "cannot merge the rounds: %s" % _ctl_error(r.stderr)
        self.summary.append("hostrange: %d rounds of %d tests%s"
                            % (len(saves), len(self.replay),
                               ": " + r.stdout.strip()
                               if self.save is not None else ""))
        if looked:
            self.summary.append(
                "hostrange: sequential rounds: looked after %s rounds%s"
                % (", ".join(str(x) for x in looked), why))
        return run, None

    def _diff_args(self):
        """hostrangectl diff's options of the comparison with BASE."""
        args = ["diff"]
        if self.fail is not None:
            args += ["--fail-above", self.fail]
        if self.strict:
            args += ["--strict"]
        if self.max_rounds is not None:
            args += ["--first-look", str(self.rounds),
                     "--max-rounds", str(self.max_rounds)]
        return args

    def _look(self, run, made):
        """A look of the sequential rounds: diff BASE run (its JSON rows)
        after `made` rounds. Returns (True, "") when a gated key is
        undecided and not hopeless and BASE has rounds for the next look,
        (False, why it stops), or (None, what failed)."""
        r = self._ctl(*(self._diff_args() + ["--format", "jsonl", self.base,
                                             run]))
        if r.returncode not in (_DIFF_OK, _DIFF_SLOWER, _DIFF_UNDECIDED):
            return None, ("cannot compare the rounds after %d: %s"
                          % (made, _ctl_error(r.stderr)))
        open_, base_rounds = 0, 0
        for line in r.stdout.splitlines():
            row = json.loads(line)
            rounds = row.get("rounds") or [0, 0]
            base_rounds = max(base_rounds, rounds[0])
            open_ += (row.get("gated") is True and
                      row.get("verdict") == "undecided" and
                      row.get("decidable") is not False)
        if open_ == 0:
            return False, ": every gated key decided or hopeless"
        if base_rounds <= made:
            # Pairs are the k-th rounds of each side: more rounds here
            # make no more pairs.
            return False, ("; %d gated keys open, but %s has %d rounds"
                           % (open_, self.base, base_rounds))
        return True, ""

    def _say_losses(self):
        """What the session lost or refused, in hostrangectl's words
        (stats --losses), on stderr and in the summary."""
        r = self._ctl("--runtime-dir", self.dir, "stats", "--losses")
        for line in r.stdout.splitlines():
            sys.stderr.write(line + "\n")
            self.summary.append(line)
        sys.stderr.flush()

    def _meta(self):
        """The run's notes: --host-range-meta, and with
        --host-range-history the commit of the git work tree when no
        commit is noted."""
        meta = list(self.meta)
        if self.history is None or any(m.startswith("commit=")
                                        for m in meta):
            return meta
        try:
            r = subprocess.run(["git", "rev-parse", "HEAD"],
                               stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True,
                               cwd=str(self.config.rootpath), timeout=30)
        except (OSError, subprocess.SubprocessError):
            return meta
        if r.returncode == 0 and r.stdout.strip():
            meta.append("commit=" + r.stdout.strip())
        return meta

    def _add_to_history(self, run):
        """hostrangectl history add, then check, of the run (add makes the
        history of the first session, which check, only reading, never
        does; check leaves out the run itself): what check finds goes to
        the summary. Returns None, or INTERNAL_ERROR when the run cannot
        be added or the history read."""
        r = self._ctl("history", "add", "--db", self.history, run)
        if r.returncode != 0:
            return self._error("cannot add the run to the history: %s"
                               % _ctl_error(r.stderr))
        self.summary.append("hostrange: history: " + r.stdout.strip())
        r = self._ctl("history", "check", "--db", self.history, run)
        if r.returncode not in (0, 1):
            return self._error("cannot check the run against the history: "
                               "%s" % _ctl_error(r.stderr))
        self.checked = r.stdout.splitlines()
        return None

    def _error(self, message):
        self.summary.append("hostrange: " + message)
        return pytest.ExitCode.INTERNAL_ERROR

    def _write_report(self, run=None):
        """Writes the daemon's report (or the run file run's) to PATH.
        Returns None, or what failed."""
        if run is not None:
            r = self._ctl("dump", "--from", run, "-o", self.path)
        else:
            r = self._ctl("--runtime-dir", self.dir, "dump", "-o", self.path)
        if r.returncode != 0:
            return "cannot write the report: %s" % r.stderr.strip()
        rows, nodes = 0, set()
        if os.path.isfile(self.path):
            with open(self.path) as f:
                for line in f:
                    rows += 1
                    nodes.add(json.loads(line)["nodeid"])
        self.summary.append("hostrange: %d report rows of %d nodes written "
                            "to %s" % (rows, len(nodes), self.path))
        return None

    def _compare(self, run):
        """hostrangectl diff BASE run: its table goes to the summary, and so
        do its warnings (machines that differ) and, with
        --host-range-max-rounds, the gated keys left undecided. Returns None,
        TESTS_FAILED when a key is slower than --host-range-compare-fail
        allows, or INTERNAL_ERROR when BASE (or the run) cannot be read or
        --host-range-compare-strict refuses runs of different machines."""
        args = self._diff_args()
        r = self._ctl(*(args + [self.base, run]))
        said = [_ctl_error(line).replace("--fail-above",
                                         "--host-range-compare-fail")
                                .replace("--strict",
                                         "--host-range-compare-strict")
                for line in r.stderr.splitlines() if line.strip()]
        if r.returncode not in (_DIFF_OK, _DIFF_SLOWER, _DIFF_UNDECIDED):
            return self._error("cannot compare: %s" % "; ".join(said))
        self.compared = r.stdout.splitlines()
        if self.junit is not None:
            error = self._write_junit(args, run)
            if error is not None:
                return self._error(error)
        for line in said:
            if line.startswith("warning: "):
                self.summary.append("hostrange: " + line)
        if r.returncode == _DIFF_OK:
            return None
        for line in said:
            if not line.startswith("warning: "):
                self.summary.append("hostrange: %s (against %s)"
                                    % (line, self.base))
        if r.returncode == _DIFF_UNDECIDED:
            # Undecided is not slower: said, and the session's status left
            # as the tests made it.
            return None
        return pytest.ExitCode.TESTS_FAILED

    def _write_junit(self, args, run):
        """The comparison of run with BASE (diff with args) as JUnit XML to
        --host-range-junit FILE, written whole or not at all. Returns None,
        or what failed."""
        r = self._ctl(*(args + ["--format", "junit", self.base, run]))
        if r.returncode not in (_DIFF_OK, _DIFF_SLOWER, _DIFF_UNDECIDED):
            return "cannot write %s: %s" % (self.junit,
                                            _ctl_error(r.stderr))
        tmp = self.junit + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(r.stdout)
            os.replace(tmp, self.junit)
        except OSError as e:
            return "cannot write %s: %s" % (self.junit, e.strerror)
        self.summary.append("hostrange: the comparison written to %s (JUnit)"
                            % self.junit)
        return None

    def stop(self):
        """Stops the private daemon, removes its directory, restores the
        environment. Safe to call more than once."""
        if self.daemon is not None:
            self.daemon.terminate()
            try:
                self.daemon.wait(10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
            self.daemon = None
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.ctl is not None and self.dir is not None:
            if self.saved_env is None:
                os.environ.pop("HOSTRANGE_RUNTIME_DIR", None)
            else:
                os.environ["HOSTRANGE_RUNTIME_DIR"] = self.saved_env
            self.dir = None


def _bytes_of(text):
    """The bytes a str stands for: its UTF-8, with the bytes of a file
    name that are not UTF-8 (which Python holds as lone surrogates) as
    they were."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def label_text(text):
    """A name as hostrange.set_labels takes it: text itself when it is
    UTF-8, else each byte that is not written \\xNN (as hostrangectl's
    text shows such a byte), so that a test in a file whose name is not
    UTF-8 is collected under a name of its own."""
    return _bytes_of(text).decode("utf-8", "backslashreplace")


def node_label(nodeid, limit):
    """The node id a test's rows are labelled with: its own (label_text)
    when it fits in `limit` bytes of UTF-8, else its first bytes (cut at a
    character), _CUT_MARK and a hash of the whole id, `limit` bytes at
    most."""
    text = label_text(nodeid)
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    tail = _CUT_MARK + hashlib.sha256(_bytes_of(nodeid)).hexdigest()[:_HASH_HEX]
    keep = limit - len(tail.encode("utf-8"))
    return raw[:keep].decode("utf-8", errors="ignore") + tail


def _next_look(made, most):
    """The rounds of the look after one at `made`, as hostrangectl diff
    --max-rounds plans them (lib/stat/decide.h): about sqrt 2 times as
    many, one more at least, `most` at most."""
    nxt = int(math.floor(made * math.sqrt(2) + 0.5))
    return min(max(nxt, made + 1), most)


def _ctl_error(stderr):
    """hostrangectl's error line without its "hostrangectl CMD: " prefix."""
    return re.sub(r"^hostrangectl( \w+)?: ", "", stderr.strip())


def _die_with_parent():
    """In the private daemon, before exec: a SIGTERM when pytest dies."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Profiles the call a test handed to host_range once the test body has
    passed, before any fixture is torn down; a failure of the profile fails
    the test."""
    outcome = yield
    h = item.stash.get(_HOST_RANGE, None)
    state = item.config.stash.get(_STATE, None)
    if (h is None or state is None or h._call is None
            or outcome.excinfo is not None):
        return
    h._profile(state)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    state = session.config.stash.get(_STATE, None)
    if state is None or _is_worker(session.config) or state.dir is None:
        return
    status = state.finish()
    if status == pytest.ExitCode.INTERNAL_ERROR or (
            status is not None and session.exitstatus == pytest.ExitCode.OK):
        session.exitstatus = status


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    if state.compared:
        terminalreporter.write_sep("-", "hostrange: this run against %s"
                                   % state.base)
        for line in state.compared:
            # The flag follows the p-value of a row: slower, faster.
            m = re.search(r" p=\S+ (slower|faster)\b", line)
            if m is None:
                terminalreporter.write_line(line)
            elif m.group(1) == "slower":
                terminalreporter.write_line(line, red=True)
            else:
                terminalreporter.write_line(line, green=True)
    if state.checked:
        terminalreporter.write_sep("-", "hostrange: this run against its "
                                   "history (%s)" % state.history)
        for line in state.checked:
            terminalreporter.write_line(line, red=": slower by " in line,
                                        green=": faster by " in line)
    for line in state.summary:
        terminalreporter.write_line(line)


def _operator_of(item):
    name = item.module.__name__.rpartition(".")[2]
    if name.startswith("test_"):
        return name[len("test_"):]
    if name.endswith("_test"):
        return name[:-len("_test")]
    return name


def _device_of(item):
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "device" in callspec.params:
        return callspec.params["device"]
    return item.funcargs.get("device")


def _backend_of(device):
    if not isinstance(device, str) or device == "cpu":
        return "cpu"
    if device == "cuda" or device.startswith("cuda:"):
        return "nvidia"
    return device


class HostRange:
    """What the host_range fixture hands a test: call it with the callable to
    profile and its arguments; it makes the correctness call and returns its
    result. One callable per test, whose call does the work: one that
    returns a generator or a coroutine is refused."""

    def __init__(self, request):
        self._request = request
        self._call = None
        self._calls = self._blocks = None
        # (node, operator, backend, clear_cache, device), found in the
        # first round: a replay runs after the test's teardown.
        self._labels = None

    @property
    def profiling(self):
        """True when this session profiles (--host-range-profile, -save or
        -compare)."""
        return self._request.config.stash.get(_STATE, None) is not None

    def __call__(self, fn, /, *args, **kwargs):
        # fn positional-only: the call's own keywords may be named fn or
        # self.
        if self._call is not None:
            raise RuntimeError("host_range: a test profiles one callable")
        if not callable(fn):
            raise TypeError("host_range: the first argument is the callable "
                            "to profile, not %s" % type(fn).__name__)
        self._check_marker()
        self._call = functools.partial(fn, *args, **kwargs)
        result = self._call()
        if isinstance(result, _LAZY):
            # Its work would run when it is iterated or awaited, never in
            # the calls profiled: they would measure its creation only.
            self._call = None
            if isinstance(result, (types.GeneratorType, types.CoroutineType)):
                result.close()
            raise TypeError(
                "host_range: %s returned %s, whose work runs when it is "
                "iterated or awaited, not in the call profiled; hand "
                "host_range a callable that does the work (for a generator, "
                "one that consumes it)"
                % (getattr(fn, "__name__", "the callable"),
                   type(result).__name__))
        self._sync()
        return result

    def _check_marker(self):
        """Refuses a host_range marker the profile would misread: a
        positional argument or a keyword it does not know (a misspelt
        one was ignored), labels that are not str, helpers that are not
        callable."""
        m = self._request.node.get_closest_marker("host_range")
        if m is None:
            return
        where = "@pytest.mark.host_range: "
        if m.args:
            raise TypeError(where + "takes keywords only (%s), not %r"
                            % (", ".join(_MARKER_KEYS), m.args[0]))
        unknown = sorted(set(m.kwargs) - set(_MARKER_KEYS))
        if unknown:
            raise TypeError(where + "unknown keyword %s (%s)"
                            % (", ".join(unknown), ", ".join(_MARKER_KEYS)))
        for key in ("operator", "backend"):
            value = m.kwargs.get(key)
            if value is not None and not isinstance(value, str):
                raise TypeError(where + "%s is a str, not %s"
                                % (key, type(value).__name__))
        for key in ("clear_cache", "sync"):
            value = m.kwargs.get(key)
            if value is not None and not callable(value):
                raise TypeError(where + "%s is a callable, not %s"
                                % (key, type(value).__name__))

    def _marker(self, key, default):
        m = self._request.node.get_closest_marker("host_range")
        if m is not None and m.kwargs.get(key) is not None:
            return m.kwargs[key]
        return default

    def _device(self):
        if self._labels is not None:
            return self._labels[4]
        return self._marker("device", _device_of(self._request.node))

    def _sync(self):
        sync = self._marker("sync", None)
        if sync is not None:
            sync()
            return
        device = self._device()
        if isinstance(device, str) and device.startswith("cuda"):
            import hostrange.ops
            hostrange.ops.sync(device)

    def _block(self, calls):
        """Times `calls` calls, the device synchronized before and after."""
        import hostrange
        call = self._call
        self._sync()
        t0 = hostrange.now_ns()
        for _ in range(calls):
            call()
        ns = hostrange.now_ns() - t0
        self._sync()
        return ns

    def _find_labels(self, state):
        """The labels of the test's rows, its cache clearer and its device:
        (node, operator, backend, clear_cache, device)."""
        import hostrange
        import hostrange.ops
        item = self._request.node
        node = node_label(item.nodeid, hostrange.MAX_NAME)
        if node != label_text(item.nodeid) and not state.warned_long:
            state.warned_long = True
            warnings.warn(pytest.PytestWarning(
                "hostrange: the node id of %s is over %d bytes: its rows "
                "are labelled %s (its first bytes and a hash of the whole "
                "id, the same in every session)"
                % (item.name, hostrange.MAX_NAME, node[-(_HASH_HEX + 8):])))
        operator = self._marker("operator", label_text(_operator_of(item)))
        device = self._device()
        backend = self._marker("backend", _backend_of(device))
        clear_cache = self._marker("clear_cache", hostrange.ops.clear_cache)
        return node, operator, backend, clear_cache, device

    def _profile(self, state, replay=False):
        """Profiles the call: cold, end_to_end, warm. A replay (a round
        after the first, after the test's teardown) uses the first round's
        labels, block size and count."""
        import hostrange
        if not replay:
            self._labels = self._find_labels(state)
        node, operator, backend, clear_cache, _ = self._labels
        call = self._call

        # Cold: the first call after the cache was cleared.
        clear_cache()
        self._sync()
        hostrange.set_labels(node, operator, backend, "cold")
        hostrange.window_begin()
        try:
            call()
        finally:
            hostrange.window_end()
        self._sync()

        # The size of a block, and the number of blocks.
        calls = state.calls
        if replay:
            # One block untimed, as the first round's sizing warmed it.
            calls, blocks = self._calls, self._blocks
            self._block(calls)
        elif calls is None:
            scale = 1
            while calls is None:
                for step in _BLOCK_STEPS:
                    n = step * scale
                    ns = self._block(n)
                    if ns >= _MIN_BLOCK_NS or n >= state.max_calls:
                        calls = min(n, state.max_calls)
                        break
                scale *= 10
        else:
            ns = self._block(calls)
        if not replay:
            blocks = state.blocks
            if blocks is None:
                # A float until bounded: a huge (finite) target_ms
                # makes it infinite, which int() refuses.
                by_time = state.target_ms * 1e6 / (ns + 1)
                blocks = max(1, int(min(by_time, state.max_calls // calls)))
            self._calls, self._blocks = calls, blocks

        # end_to_end: collection inactive, recorded under the warm labels.
        hostrange.set_labels(node, operator, backend, "warm")
        for _ in range(blocks):
            hostrange.record("end_to_end", self._block(calls) // calls)

        # Warm: the same calls inside one window.
        hostrange.window_begin()
        try:
            for _ in range(blocks):
                for _ in range(calls):
                    call()
                self._sync()
        finally:
            hostrange.window_end()
        try:
            hostrange.flush(timeout_ms=_FLUSH_TIMEOUT_MS)
        except (TimeoutError, ConnectionError) as e:
            raise RuntimeError("host_range: the samples of %s were not "
                               "delivered: %s" % (node, e))
        if not replay and state.rounds > 1:
            state.replay.append(self)


@pytest.fixture
def host_range(request):
    """A callable that makes the correctness call of the operator call given
    to it (host_range(fn, *args, **kwargs) returns fn's result) and, when the
    session profiles (--host-range-profile, -save, -compare) and the test
    body passes, profiles that call: cold, end_to_end and warm, under the
    test's node id."""
    h = HostRange(request)
    request.node.stash[_HOST_RANGE] = h
    return h
