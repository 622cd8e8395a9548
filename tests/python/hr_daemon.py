"""Helpers of the checks of the Python module and its plugin: a real hostranged
on a private temporary runtime directory, programs run with their output
captured, and reports read back. The programs come from the environment that
`make check` sets (HOSTRANGED, HOSTRANGECTL) and
tests/python/test_python_*.sh adds (HR_PYTHON, HRPY_PATH, ...)."""

import json
import os
import shutil
import subprocess
import tempfile

import pytest

# A hang guard for the programs the checks run, not a timing check.
LIMIT_S = 300

PROFILING = os.environ.get("HRPY_PROFILING") == "yes"
KEY_FIELDS = ("nodeid", "operator", "backend", "phase", "range", "metric")


def program(var):
    path = os.environ.get(var)
    if not path:
        pytest.fail("%s is not set (run the checks through make check)" % var)
    return path


def ctl(runtime_dir, *args):
    """Runs hostrangectl -r runtime_dir ARGS; returns the CompletedProcess."""
    return subprocess.run([program("HOSTRANGECTL"), "--runtime-dir",
                           runtime_dir] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=LIMIT_S)


class Daemon:
    """hostranged on a fresh private runtime directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="hostrange-pytest-check-")
        self.proc = subprocess.Popen(
            [program("HOSTRANGED"), "--quiet", "--runtime-dir", self.dir],
            stdin=subprocess.DEVNULL)
        r = ctl(self.dir, "ping", "--wait", "10000")
        if r.returncode != 0:
            self.stop()
            pytest.fail("hostranged did not start: %s" % r.stderr)

    def rows(self):
        r = ctl(self.dir, "dump")
        assert r.returncode == 0, r.stderr
        return parse_rows(r.stdout)

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def daemon():
    d = Daemon()
    yield d
    d.stop()


def parse_rows(text):
    """JSON lines to a list of dicts (in their order)."""
    return [json.loads(line) for line in text.splitlines() if line]


def read_rows(path):
    with open(path) as f:
        return parse_rows(f.read())


def key(row):
    return tuple(row[k] for k in KEY_FIELDS)


def python(code, env=None, check=True):
    """Runs `code` with the interpreter under test; returns the
    CompletedProcess (and fails the check on a non-zero exit when `check`)."""
    full = dict(os.environ)
    full.update(env or {})
    r = subprocess.run([os.environ.get("HR_PYTHON", "python3"), "-c", code],
                       env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=LIMIT_S)
    if check and r.returncode != 0:
        pytest.fail("the program failed (%d):\n%s\n%s"
                    % (r.returncode, r.stdout, r.stderr))
    return r
