"""Arrays for the example suite: host buffers (memoryview over array.array,
or NumPy arrays), filled with multiples of 1/4 in [-1.5, 1.5] so that every
sum and product the tests make is exact in float32, their reference results
computed in Python floats, and the parameters the tests share."""

import array
import itertools
import os

import pytest

import hostrange.ops as ops

try:
    import numpy
except ImportError:
    numpy = None

FORMATS = {"float32": "f", "float64": "d", "float16": "e"}

# Without a CUDA device the cuda cases skip, saying why; with
# HROPS_REQUIRE_CUDA=1 (a GPU machine's check) they run, and fail.
REQUIRE_CUDA = os.environ.get("HROPS_REQUIRE_CUDA") == "1"

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(
        ops.device_count() == 0 and not REQUIRE_CUDA,
        reason="no CUDA device: %s" % ops.cuda_error())),
]


def lib_params(dtypes):
    """(lib, dtype) parameters: memoryview for the formats it can cast to
    (not float16), NumPy for all, skipped when NumPy is not installed."""
    out = []
    for dtype in dtypes:
        if dtype != "float16":
            out.append(pytest.param("memoryview", dtype,
                                    id="memoryview-" + dtype))
        out.append(pytest.param("numpy", dtype, id="numpy-" + dtype,
                                marks=pytest.mark.skipif(
                                    numpy is None,
                                    reason="NumPy is not installed")))
    return out


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def values(n, seed):
    return [((i * 7 + seed * 5) % 13 - 6) / 4 for i in range(n)]


def host(shape, dtype, seed, lib):
    """A host array of `shape` filled from `seed`."""
    vals = values(numel(shape), seed)
    if lib == "numpy":
        return numpy.array(vals, dtype=dtype).reshape(shape)
    fmt = FORMATS[dtype]
    return memoryview(array.array(fmt, vals)).cast("B").cast(fmt, list(shape))


def tolist(x):
    """The elements of a host array, row-major, as a flat list."""
    if numpy is not None and isinstance(x, numpy.ndarray):
        return [float(v) for v in x.reshape(-1).tolist()] if x.ndim else [float(x)]
    v = memoryview(x).tolist()
    if not isinstance(v, list):
        return [v]
    while v and isinstance(v[0], list):
        v = list(itertools.chain.from_iterable(v))
    return v


def strided_rows(x, step):
    """Every `step`-th row of x (a view: not contiguous)."""
    return x[::step]


def get(x, shape, index):
    """Element `index` of the row-major flat list x of `shape`."""
    flat = 0
    for i, d in zip(index, shape):
        flat = flat * d + i
    return x[flat]


def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def add_reference(a, a_shape, b, b_shape, out_shape):
    """a + b broadcast to out_shape, a flat list."""
    out = []
    n = len(out_shape)
    for idx in itertools.product(*[range(d) for d in out_shape]):
        ia = tuple(i if d > 1 else 0
                   for i, d in zip(idx[n - len(a_shape):], a_shape))
        ib = tuple(i if d > 1 else 0
                   for i, d in zip(idx[n - len(b_shape):], b_shape))
        out.append(get(a, a_shape, ia) + get(b, b_shape, ib))
    return out


def gemm_reference(a, a_shape, b, b_shape, c, c_shape, alpha, beta,
                   trans_a, trans_b):
    """alpha * op(a) @ op(b) + beta * c, batched over a first dimension when
    the shapes have three, a flat list."""
    batch = c_shape[0] if len(c_shape) == 3 else 1
    m, n = c_shape[-2:]
    k = a_shape[-2] if trans_a else a_shape[-1]
    out = []
    for p in range(batch):
        pre = (p,) if len(c_shape) == 3 else ()
        for i in range(m):
            for j in range(n):
                s = 0.0
                for l in range(k):
                    x = get(a, a_shape, pre + ((l, i) if trans_a else (i, l)))
                    y = get(b, b_shape, pre + ((j, l) if trans_b else (l, j)))
                    s += x * y
                out.append(alpha * s + beta * get(c, c_shape, pre + (i, j)))
    return out


def on_device(x, device):
    """x as the operators take it on `device`."""
    return x if device == "cpu" else ops.DeviceArray(x, device)


def to_host(x, host_out):
    """The result in host memory: host_out, filled from x when x lives on a
    device."""
    if isinstance(x, ops.DeviceArray):
        x.copy_to_host(host_out)
    return host_out
