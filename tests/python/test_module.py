"""Checks of the Python module hostrange: the client (scopes as context
managers and decorators, windows, labels, records, flush) and the operators
of hostrange.ops (results, errors, and the binding's own ranges, produced
once per call), against a real hostranged. Programs that change the
process-wide state of the client run in a fresh interpreter each."""

import array
import os
import shutil
import subprocess
import textwrap

import pytest

import hostrange
import hostrange.ops as ops
from hr_daemon import PROFILING, daemon, python  # noqa: F401 (fixture)

try:
    import numpy
except ImportError:
    numpy = None


def f32(values, shape=None):
    m = memoryview(array.array("f", values))
    return m if shape is None else m.cast("B").cast("f", list(shape))


def rows_by_range(rows, node):
    """{(phase, range, metric): row} of one node."""
    return {(r["phase"], r["range"], r["metric"]): r for r in rows
            if r["nodeid"] == node}


def test_compiled_and_enabled():
    assert hostrange.compiled() is PROFILING
    assert ops.profiling_compiled() is PROFILING
    assert hostrange.enabled() is PROFILING
    assert hostrange.clock() in (("tsc", "monotonic") if PROFILING
                                 else ("none",))
    assert hostrange.COLD == 1 and hostrange.WARM == 2


def test_import_forms():
    r = python("import hostrange.ops\n"
               "from hostrange.ops import add, gemm, clear_cache\n"
               "import hostrange\n"
               "print(hostrange.ops is hostrange.ops.add.__self__)\n")
    assert r.stdout == "True\n"


def test_scopes_windows_records(daemon):
    code = textwrap.dedent("""
        import hostrange

        @hostrange.scope("py.outer")
        def outer(n):
            for _ in range(n):
                with hostrange.scope("py.inner"):
                    pass
            return n

        class Thing:
            @hostrange.scope("py.method")
            def method(self, x):
                return (self, x)

        on = hostrange.compiled()
        hostrange.set_labels("py/scope", "demo", "cpu", "warm")
        with hostrange.window() as opened:
            assert opened is on
            for _ in range(3):
                assert outer(2) == 2
        t = Thing()
        assert hostrange.window_begin() is on
        assert t.method(5) == (t, 5)
        hostrange.window_end()
        # Outside a window a scope collects nothing.
        outer(4)
        assert hostrange.record("end_to_end", 100) is on
        assert hostrange.record("end_to_end", 250) is on
        hostrange.set_labels("py/scope", "demo", "cpu", hostrange.COLD)
        with hostrange.window():
            outer(1)
        hostrange.flush(timeout_ms=10000)
        c = hostrange.counters()
        assert c["out_of_order"] == 0 and c["lost"] == 0, c
        assert outer.__name__ == "outer" and outer.__wrapped__(1) == 1
        """)
    python(code, {"HOSTRANGE_RUNTIME_DIR": daemon.dir})
    rows = daemon.rows()
    if not PROFILING:
        assert rows == []
        return
    got = [(r["phase"], r["range"], r["metric"], r["count"]) for r in rows]
    assert got == [
        ("cold", "py.outer", "inclusive", 1),
        ("cold", "py.outer", "self", 1),
        ("cold", "py.inner", "inclusive", 1),
        ("cold", "py.inner", "self", 1),
        ("warm", "py.outer", "inclusive", 3),
        ("warm", "py.outer", "self", 3),
        ("warm", "py.inner", "inclusive", 6),
        ("warm", "py.inner", "self", 6),
        ("warm", "py.method", "inclusive", 1),
        ("warm", "py.method", "self", 1),
        ("warm", "end_to_end", "inclusive", 2),
    ]
    e2e = rows[-1]
    assert (e2e["mean"], e2e["median"]) == (175.0, 175.0)
    assert {(r["nodeid"], r["operator"], r["backend"]) for r in rows} == {
        ("py/scope", "demo", "cpu")}
    by = rows_by_range(rows, "py/scope")
    # outer's self time leaves out its children, never below 0.
    assert 0 <= by[("warm", "py.outer", "self")]["mean"] <= \
        by[("warm", "py.outer", "inclusive")]["mean"]


def test_binding_ranges_once_per_call(daemon):
    """The binding of the module makes one binding.body, three
    binding.tensor_conversion and one binding.device_conversion per call,
    and libhrops none of its own (the call enters it at dispatch.call)."""
    code = textwrap.dedent("""
        import array
        import hostrange, hostrange.ops as ops

        def f32(n, shape):
            return memoryview(array.array("f", range(n))).cast("B").cast(
                "f", list(shape))

        a, b, out = f32(12, (3, 4)), f32(4, (1, 4)), f32(12, (3, 4))
        ops.clear_cache()
        hostrange.set_labels("py/add", "add", "cpu", "cold")
        with hostrange.window():
            ops.add(a, b, out)
        hostrange.set_labels("py/add", "add", "cpu", "warm")
        with hostrange.window():
            for _ in range(5):
                ops.add(a, b, out, device="cpu")
            try:
                ops.add(a, array.array("d", [1, 2, 3, 4]), out)
            except ValueError:
                pass
        x, y, c = f32(6, (2, 3)), f32(6, (2, 3)), f32(4, (2, 2))
        hostrange.set_labels("py/gemm", "gemm", "cpu", "warm")
        with hostrange.window():
            for _ in range(4):
                ops.gemm(x, y, c, trans_b=True)
        hostrange.flush(timeout_ms=10000)
        c = hostrange.counters()
        assert c["out_of_order"] == 0 and c["open_at_window_end"] == 0, c
        """)
    python(code, {"HOSTRANGE_RUNTIME_DIR": daemon.dir})
    rows = daemon.rows()
    if not PROFILING:
        assert rows == []
        return
    add = rows_by_range(rows, "py/add")
    cold = [(r["range"], r["count"]) for r in rows
            if r["nodeid"] == "py/add" and r["phase"] == "cold"
            and r["metric"] == "inclusive"]
    assert cold == [("binding.body", 1), ("binding.tensor_conversion", 3),
                    ("binding.device_conversion", 1), ("dispatch.call", 1),
                    ("operator.call", 1), ("cache.key", 1),
                    ("cache.lookup", 1), ("cache.construct", 1),
                    ("operator.invoke", 1), ("backend.submit", 1)]
    # Five calls and one refused by the checks of the call (mixed dtypes:
    # after the conversions, before dispatch).
    for rng, n in [("binding.body", 6), ("binding.tensor_conversion", 18),
                   ("binding.device_conversion", 6), ("dispatch.call", 5),
                   ("operator.invoke", 5), ("backend.submit", 5)]:
        for metric in ("inclusive", "self"):
            assert add[("warm", rng, metric)]["count"] == n, (rng, metric)
    assert ("warm", "cache.construct", "inclusive") not in add
    gemm = rows_by_range(rows, "py/gemm")
    assert gemm[("warm", "binding.body", "inclusive")]["count"] == 4
    assert gemm[("warm", "binding.tensor_conversion", "self")]["count"] == 12
    assert gemm[("warm", "binding.device_conversion", "self")]["count"] == 4
    assert gemm[("warm", "dispatch.call", "inclusive")]["count"] == 4
    # binding.body holds its conversions and the call below it.
    body = add[("warm", "binding.body", "inclusive")]["mean"]
    assert body >= add[("warm", "dispatch.call", "inclusive")]["mean"]


def test_window_and_label_errors():
    code = textwrap.dedent("""
        import hostrange

        def raises(exc, fn, *args):
            try:
                fn(*args)
            except exc as e:
                return str(e)
            raise AssertionError("%r did not raise %s" % (fn, exc))

        compiled = hostrange.compiled()
        if compiled:
            assert "set_labels" in raises(RuntimeError, hostrange.window_begin)
            assert "set_labels" in raises(RuntimeError, hostrange.record,
                                          "end_to_end", 1)
        assert "phase" in raises(ValueError, hostrange.set_labels, "n", "op",
                                 "cpu", "hot")
        raises(ValueError, hostrange.set_labels, "n", "op", "cpu", 3)
        raises(TypeError, hostrange.set_labels, "n", "op", "cpu")
        raises(TypeError, hostrange.scope, 5)
        raises(ValueError, hostrange.scope, "")
        # Over the daemon's limit: refused where they enter, naming it.
        assert hostrange.MAX_NAME == 4096
        assert "4096" in raises(ValueError, hostrange.scope, "x" * 4097)
        hostrange.scope("x" * 4096)
        for i in range(3):
            labels = ["n", "op", "cpu"]
            labels[i] = "v" * 4097
            msg = raises(ValueError, hostrange.set_labels, *labels, "warm")
            assert "4096" in msg and "MAX_NAME" in msg, msg
            if compiled:
                assert "refused" in raises(RuntimeError,
                                           hostrange.window_begin)
                # record says so too (it raised OSError, "File name too
                # long").
                assert "record: the labels last given to set_labels were " \
                    "refused" in raises(RuntimeError, hostrange.record,
                                        "end_to_end", 1)
        assert "non-empty" in raises(ValueError, hostrange.set_labels, "",
                                     "op", "cpu", "warm")
        if compiled:
            # Three refused windows, counted.
            assert hostrange.counters()["bad_label"] == 3
        raises(TypeError, hostrange.scope("x"), 5)
        # window() takes nothing: an argument is a mistake, not ignored.
        assert "0 arguments" in raises(TypeError, hostrange.window, 1)
        assert "0 keyword" in raises(TypeError,
                                     lambda: hostrange.window(timeout=1))
        for v in (-1, 2**64):
            assert "record: value_ns is from 0 to 2**64 - 1 nanoseconds, " \
                "not %d" % v in raises(OverflowError, hostrange.record,
                                       "end_to_end", v)
        raises(TypeError, hostrange.record, "end_to_end", 1.5)
        raises(TypeError, hostrange.record, 7, 1)
        # flush waits 0 to INT_MAX ms: a negative wait is refused, not
        # taken as 0, and a huge one is named.
        assert "flush: timeout_ms is 0 or more, not -1" in raises(
            ValueError, hostrange.flush, -1)
        assert "flush: timeout_ms is at most 2147483647, not %d" % 2**40 \
            in raises(OverflowError, hostrange.flush, 2**40)
        raises(TypeError, hostrange.flush, 1.5)
        hostrange.set_labels("n", "op", "cpu", "warm")
        assert hostrange.window_begin() is compiled
        if compiled:
            assert "already open" in raises(RuntimeError,
                                            hostrange.window_begin)
            assert "inside a window" in raises(
                RuntimeError, hostrange.set_labels, "m", "op", "cpu", "warm")
        s = hostrange.scope("x")
        with s:
            assert "already open" in raises(RuntimeError, s.__enter__)
        with s:
            pass
        hostrange.window_end()
        if compiled:
            assert "no window" in raises(RuntimeError, hostrange.window_end)
        print("ok")
        """)
    assert python(code).stdout == "ok\n"



def test_scope_refuses_lazy_functions():
    """A generator or coroutine function returns before its body runs:
    decorating one would measure the making of the generator only, so
    scope refuses it, saying why (through a method or a partial too);
    other callables are decorated."""
    code = textwrap.dedent("""
        import functools, hostrange

        def gen():
            yield 1

        async def coro():
            pass

        async def agen():
            yield 1

        class K:
            def m(self):
                yield 1

        for fn, kind in ((gen, "a generator function"),
                         (coro, "a coroutine function"),
                         (agen, "an async generator function"),
                         (K().m, "a generator function"),
                         (functools.partial(gen), "a generator function")):
            try:
                hostrange.scope("lazy")(fn)
            except TypeError as e:
                assert kind + ": its body runs after the call returns" \
                    in str(e), e
            else:
                raise AssertionError("%r was decorated" % fn)
        assert hostrange.scope("x")(len)("abc") == 3
        assert hostrange.scope("x")(lambda: 7)() == 7
        print("ok")
        """)
    assert python(code).stdout == "ok\n"


def test_scoped_functions_pickle():
    """A decorated function or method pickles and copies as a function does,
    by its name (for multiprocessing); one without a name says why not."""
    code = textwrap.dedent("""
        import copy, pickle, hostrange

        @hostrange.scope("pk")
        def f(x):
            return x + 1

        class K:
            @hostrange.scope("pk.m")
            def m(self):
                return 3

        for o in (f, K.m):
            assert pickle.loads(pickle.dumps(o)) is o
            assert copy.copy(o) is o and copy.deepcopy(o) is o
        assert pickle.loads(pickle.dumps(K().m))() == 3

        class Callable:
            def __call__(self):
                pass

        try:
            pickle.dumps(hostrange.scope("pk")(Callable()))
        except TypeError as e:
            assert "no __qualname__" in str(e), e
        else:
            raise AssertionError("pickled")
        print("ok")
        """)
    assert python(code).stdout == "ok\n"

def test_flush_without_daemon(tmp_path):
    code = textwrap.dedent("""
        import hostrange
        hostrange.set_labels("n", "op", "cpu", "warm")
        with hostrange.window():
            with hostrange.scope("x"):
                pass
        try:
            hostrange.flush(timeout_ms=200)
        except ConnectionError as e:
            print("ConnectionError", e)
        else:
            print("delivered")
        """)
    r = python(code, {"HOSTRANGE_RUNTIME_DIR": str(tmp_path / "none"),
                      "HOSTRANGE_FLUSH_TIMEOUT_MS": "0"})
    if PROFILING:
        assert r.stdout.startswith("ConnectionError flush: no hostranged")
    else:
        assert r.stdout == "delivered\n"


def test_collection_off():
    code = textwrap.dedent("""
        import hostrange
        hostrange.set_labels("n", "op", "cpu", "warm")
        print(hostrange.enabled(), hostrange.window_begin(),
              hostrange.record("end_to_end", 5))
        """)
    assert python(code, {"HOSTRANGE": "0"}).stdout == "False False False\n"


def test_module_without_profiling():
    """The module built with the ranges compiled out: no hr_ symbol, calls
    that collect nothing, operators that work."""
    path = os.environ.get("HRPY_OFF_PATH") or os.environ["HRPY_PATH"]
    code = textwrap.dedent("""
        import array, hostrange, hostrange.ops as ops
        a = array.array("f", [1, 2]); out = array.array("f", [0, 0])
        hostrange.set_labels("n", "op", "cpu", "warm")
        with hostrange.window() as opened:
            with hostrange.scope("x"):
                ops.add(a, a, out)
        print(hostrange.compiled(), hostrange.enabled(), opened,
              hostrange.record("end_to_end", 1), hostrange.clock(), list(out))
        print(hostrange.__file__)
        """)
    r = python(code, {"PYTHONPATH": path})
    first, so = r.stdout.splitlines()
    assert first == "False False False False none [2.0, 4.0]"
    if shutil.which("nm") is None:
        pytest.skip("nm not found")
    syms = subprocess.run(["nm", "-D", so], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout
    assert not [s for s in syms.split() if s.startswith("hr_")]
    if PROFILING:
        syms = subprocess.run(["nm", "-D", hostrange.__file__],
                              stdout=subprocess.PIPE, universal_newlines=True,
                              check=True).stdout
        assert "hr_window_begin" in syms.split()


def test_add_results():
    a = f32([1, 2, 3, 4, 5, 6], (2, 3))
    b = f32([10, 20, 30], (1, 3))
    out = f32([0] * 6, (2, 3))
    assert ops.add(a, b, out) is out
    assert out.tolist() == [[11, 22, 33], [14, 25, 36]]
    # Strided a (every other row), broadcast b, float64, keywords.
    a = memoryview(array.array("d", range(12))).cast("B").cast("d", [4, 3])
    out = memoryview(array.array("d", [0] * 6)).cast("B").cast("d", [2, 3])
    b = memoryview(array.array("d", [0.5]))
    ops.add(out=out, b=b, a=a[::2], device="cpu", impl=0)
    assert out.tolist() == [[0.5, 1.5, 2.5], [6.5, 7.5, 8.5]]
    # A 0-d a.
    s = memoryview(array.array("f", [2])).cast("B").cast("f", [])
    out = array.array("f", [0, 0, 0])
    ops.add(s, array.array("f", [1, 2, 3]), out)
    assert out.tolist() == [3, 4, 5]
    # Large enough to run without the interpreter lock.
    n = 40000
    out = array.array("f", bytes(4 * n))
    ops.add(array.array("f", range(n)), array.array("f", [1] * n), out)
    assert out[0] == 1 and out[n - 1] == n


def test_gemm_results():
    a = f32(range(6), (2, 3))
    b = f32(range(12), (3, 4))
    c = f32([1] * 8, (2, 4))
    assert ops.gemm(a, b, c) is c
    assert c.tolist() == [[20, 23, 26, 29], [56, 68, 80, 92]]
    ops.gemm(a, b, c, alpha=0.5, beta=2)
    assert c.tolist() == [[50, 57.5, 65, 72.5], [140, 170, 200, 230]]
    c = f32([0] * 4, (2, 2))
    ops.gemm(a, a, c, trans_b=True)
    assert c.tolist() == [[5, 14], [14, 50]]
    c = f32([0] * 9, (3, 3))
    ops.gemm(a, a, c, trans_a=True)
    assert c.tolist() == [[9, 12, 15], [12, 17, 22], [15, 22, 29]]
    # A batch of two.
    x = f32(range(8), (2, 2, 2))
    c = f32([0] * 8, (2, 2, 2))
    ops.gemm(x, x, c)
    assert c.tolist() == [[[2, 3], [6, 11]], [[46, 55], [66, 79]]]


def test_device_array_on_cpu():
    a = ops.DeviceArray(f32([1, 2, 3, 4], (2, 2)), "cpu")
    out = ops.DeviceArray(f32([0] * 4, (2, 2)), device="cpu")
    assert (a.shape, a.dtype, a.device, a.nbytes) == ((2, 2), "float32",
                                                      "cpu", 16)
    assert "DeviceArray(shape=(2, 2), dtype=float32" in repr(a)
    assert ops.add(a, a, out) is out
    host = f32([0] * 4, (2, 2))
    assert out.copy_to_host(host) is host
    assert host.tolist() == [[2, 4], [6, 8]]
    with pytest.raises(ValueError, match="copy_to_host"):
        out.copy_to_host(array.array("f", [0] * 3))
    with pytest.raises(ValueError, match="device"):
        ops.DeviceArray(f32([1]), "tpu")
    if ops.device_count() == 0:
        with pytest.raises(ValueError, match="not available"):
            ops.DeviceArray(f32([1]), "cuda")
        # Why: the CUDA runtime's error, or no CUDA in the build.
        assert isinstance(ops.cuda_error(), str) and ops.cuda_error() != ""
    else:
        assert ops.cuda_error() is None


def test_operator_errors():
    a = array.array("f", [1, 2, 3])
    out = array.array("f", [0, 0, 0])
    with pytest.raises(TypeError, match="^a: "):
        ops.add(3, a, out)
    with pytest.raises(TypeError, match="^b: unsupported element format 'i'"):
        ops.add(a, array.array("i", [1, 2, 3]), out)
    with pytest.raises(BufferError, match="^out: "):
        ops.add(a, a, memoryview(a).toreadonly())
    with pytest.raises(TypeError, match="missing required argument 'out'"):
        ops.add(a, a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        ops.add(a, a, out, x=1)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        ops.add(a, a, out, a=a)
    with pytest.raises(TypeError, match="at most 9 arguments"):
        ops.gemm(*([a] * 10))
    with pytest.raises(ValueError, match="do not fit together"):
        ops.add(a, array.array("f", [1, 2]), out)
    with pytest.raises(ValueError, match="do not fit together"):
        ops.add(a, array.array("d", [1, 2, 3]), out)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        ops.add(a, a, out, device="tpu")
    with pytest.raises(TypeError, match="device must be a str"):
        ops.add(a, a, out, device=0)
    with pytest.raises(NotImplementedError, match="add: not implemented"):
        ops.add(a, a, out, impl=7)
    with pytest.raises(ValueError, match="impl must be"):
        ops.add(a, a, out, impl=-1)
    if ops.device_count() == 0:
        with pytest.raises(ValueError, match="'cuda:3' is not available"):
            ops.add(a, a, out, device="cuda:3")
        with pytest.raises(ValueError, match="sync: device 'cuda:3' is not "
                           "available"):
            ops.sync("cuda:3")
    # sync names the device it cannot use, as the operators do.
    with pytest.raises(ValueError, match="sync: unknown device 'tpu'"):
        ops.sync("tpu")
    m = f32(range(9), (3, 3))
    with pytest.raises(ValueError, match="do not fit together"):
        ops.gemm(m, f32(range(4), (2, 2)), m)
    with pytest.raises(TypeError):
        ops.gemm(m, m, m, trans_a=BadBool())
    deep = memoryview(array.array("f", [0])).cast("B").cast("f", [1] * 9)
    with pytest.raises(ValueError, match="9 dimensions, at most 8"):
        ops.add(deep, deep, deep)
    # The interpreter holds no buffer after a failed call: a can resize.
    a.append(4.0)
    assert ops.clear_cache() is None
    stats = ops.cache_stats()
    assert set(stats) == {"lookups", "hits", "constructs", "entries"}
    assert stats["entries"] == 0


class BadBool:
    def __bool__(self):
        raise TypeError("no truth value")


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_numpy_arrays():
    a = numpy.arange(12, dtype=numpy.float16).reshape(3, 4)
    b = numpy.ones(4, dtype=numpy.float16)
    out = numpy.zeros((3, 4), dtype=numpy.float16)
    ops.add(a, b, out)
    assert (out == a + 1).all()
    # A transposed (non-contiguous) view, float64.
    x = numpy.arange(6, dtype=numpy.float64).reshape(2, 3)
    c = numpy.zeros((3, 3))
    ops.gemm(x.T, x, c)
    assert (c == x.T @ x).all()
    with pytest.raises(NotImplementedError, match="gemm: not implemented "
                       "for float16 on cpu"):
        ops.gemm(a, a.T.copy(), numpy.zeros((3, 3), numpy.float16))
    # Strides that are not whole elements.
    raw = numpy.zeros(16, dtype=numpy.uint8)
    odd = numpy.ndarray((3,), numpy.float32, raw, 0, (5,))
    with pytest.raises(ValueError, match="not a whole number of elements"):
        ops.add(odd, odd, numpy.zeros(3, numpy.float32))
    # Big-endian data is refused.
    with pytest.raises(TypeError, match="unsupported element format"):
        ops.add(numpy.zeros(3, ">f4"), numpy.zeros(3, ">f4"),
                numpy.zeros(3, ">f4"))
