"""The example suite: hostrange.ops.add, checked against a reference and, under
--host-range-profile, profiled through the host_range fixture."""

import pytest

import hostrange.ops as ops
from hr_arrays import (DEVICES, add_reference, broadcast_shape, host,
                       lib_params, on_device, strided_rows, to_host, tolist)

# (id, shape of a, shape of b, row step of a: a is every step-th row of an
# array of a's shape, so not contiguous, when not 1).
CASES = [
    ("13x4", (13, 4), (13, 4), 1),
    ("13x4-1x4", (13, 4), (1, 4), 1),
    ("3x1x5-4x1", (3, 1, 5), (4, 1), 1),
    ("scalar-7", (), (7,), 1),
    ("rows2-12x4-6x4", (12, 4), (6, 4), 2),
]


@pytest.mark.parametrize("lib,dtype",
                         lib_params(["float32", "float64", "float16"]))
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("device", DEVICES)
def test_add(host_range, device, case, lib, dtype):
    _, a_shape, b_shape, step = case
    if step != 1 and device != "cpu":
        pytest.skip("a DeviceArray is made from a contiguous array")
    a = host(a_shape, dtype, 1, lib)
    if step != 1:
        a = strided_rows(a, step)
        a_shape = (a_shape[0] // step,) + a_shape[1:]
    b = host(b_shape, dtype, 2, lib)
    out_shape = broadcast_shape(a_shape, b_shape)
    out = host(out_shape, dtype, 3, lib)
    d_out = on_device(out, device)

    r = host_range(ops.add, on_device(a, device), on_device(b, device), d_out,
                   device=device)

    assert r is d_out
    got = tolist(to_host(d_out, out))
    assert got == add_reference(tolist(a), a_shape, tolist(b), b_shape,
                                out_shape)
