"""The example suite: hostrange.ops.gemm, checked against a reference and,
under --host-range-profile, profiled through the host_range fixture."""

import pytest

import hostrange.ops as ops
from hr_arrays import (DEVICES, gemm_reference, host, lib_params, on_device,
                       to_host, tolist)

# (id, shape of a as stored, shape of b as stored, trans_a, trans_b).
CASES = [
    ("48x64-64x6", (48, 64), (64, 6), False, False),
    ("4x48x64-4x64x6", (4, 48, 64), (4, 64, 6), False, False),
    ("ta-5x3-5x4", (5, 3), (5, 4), True, False),
    ("tb-3x4-5x4", (3, 4), (5, 4), False, True),
]

# Results within this fraction of the largest reference value: float32 and
# float64 products of the values used here are exact; float16 is not.
TOLERANCE = {"float32": 0.0, "float64": 0.0, "float16": 2e-3}


def c_shape(a_shape, b_shape, trans_a, trans_b):
    m = a_shape[-1] if trans_a else a_shape[-2]
    n = b_shape[-2] if trans_b else b_shape[-1]
    return a_shape[:-2] + (m, n)


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (0.5, 0.5)],
                         ids=["a1-b0", "a0.5-b0.5"])
@pytest.mark.parametrize("lib,dtype",
                         lib_params(["float32", "float64", "float16"]))
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("device", DEVICES)
def test_gemm(host_range, device, case, lib, dtype, alpha, beta):
    _, a_shape, b_shape, trans_a, trans_b = case
    if dtype == ("float16" if device == "cpu" else "float64"):
        pytest.skip("gemm %s is not implemented on %s" % (dtype, device))
    a = host(a_shape, dtype, 1, lib)
    b = host(b_shape, dtype, 2, lib)
    shape = c_shape(a_shape, b_shape, trans_a, trans_b)
    c = host(shape, dtype, 3, lib)
    ref = gemm_reference(tolist(a), a_shape, tolist(b), b_shape, tolist(c),
                         shape, alpha, beta, trans_a, trans_b)
    d_c = on_device(c, device)

    r = host_range(ops.gemm, on_device(a, device), on_device(b, device), d_c,
                   alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b,
                   device=device)

    assert r is d_c
    got = tolist(to_host(d_c, c))
    bound = TOLERANCE[dtype] * max(abs(v) for v in ref)
    assert len(got) == len(ref)
    assert all(abs(x - y) <= bound for x, y in zip(got, ref))
