"""helpers.standins.cupy where a learner's answer can tell it from CuPy: a ReductionKernel combines
the threads' partial results with reduce_expr (not one thread folding every element in order), an
element of a device array is a 0-d device array, and CUDA C may include the CUDA headers the
environment ships. What CuPy does was read on an H200 (CuPy 14.2.0): `a + b * b` as reduce_expr
gave 3.83 instead of 3.52 for 10 elements and inf for 1,000; `x_d[i]`, `x_d[i] + x_d[j]` and
`x_d.sum()` were 0-d `cupy.ndarray`s.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import cuda_c
from helpers.standins import cupy as cp

X = np.random.default_rng(7).uniform(0, 1, 1000).astype(np.float32)


def reduce(map_expr, reduce_expr, identity, x=X):
    k = cp.ReductionKernel("float32 x", "float32 y", map_expr, reduce_expr, "y = a", identity, "r")
    return float(k(cp.asarray(x)))


def test_a_reduce_expr_right_only_in_order_is_wrong_as_on_a_gpu():
    squares = float((X.astype(np.float64) ** 2).sum())
    assert reduce("x * x", "a + b", "0") == pytest.approx(squares, rel=1e-5)  # squaring in map_expr: right
    got = reduce("x", "a + b * b", "0")  # one thread folding in order would get `squares`
    assert not np.isclose(got, squares, rtol=1e-3)
    assert reduce("x", "max(a, b)", "-1") == X.max()


def test_every_thread_starts_from_the_identity_as_in_cupy():
    # an H200 added a wrong identity 1 once per thread: 1, 2, 64 and 128 times for n = 1, 2, 64, 100
    for n, times in ((1, 1), (2, 2), (64, 64), (100, 128)):
        assert cuda_c.reduction_threads(n) == times
        assert reduce("x", "a + b", "1", np.ones(n, np.float32)) == n + times
    assert cuda_c.reduction_threads(10**6) == 512


def test_an_element_is_a_0d_device_array():
    a = cp.arange(5, dtype=np.int32)
    v = a[2]
    assert type(v) is cp.ndarray and v.shape == () and v.dtype == np.int32
    assert type(a[2] + a[3]) is cp.ndarray and type(a.sum()) is cp.ndarray
    assert not isinstance(v, (int, np.integer)) and int(v) == 2 and [10, 11, 12][a[1]] == 11
    v[...] = 9  # a view, as CuPy's
    assert int(a[2]) == 9
    assert type(cp.zeros((2, 3))[1, 2]) is cp.ndarray and cp.zeros((2, 3))[1].shape == (3,)


HALF = r"""
#include <cuda_fp16.h>
extern "C" __global__ void twice(const __half* x, __half* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hadd(x[i], x[i]);
}
"""


def test_a_kernel_including_cuda_fp16_compiles_and_runs():
    x = cp.asarray(np.arange(40, dtype=np.float16))
    y = cp.zeros(40, np.float16)
    cp.RawKernel(HALF, "twice")((1,), (64,), (x, y, np.int32(40)))
    assert np.array_equal(cp.asnumpy(y), 2 * np.arange(40, dtype=np.float16))


def test_a_header_the_environment_lacks_is_named():
    k = cp.RawKernel("#include <no_such_header.h>\n" + HALF, "twice")
    with pytest.raises(cuda_c.CompileError, match=r"includes <no_such_header.h>, a header this environment does not"):
        k((1,), (64,), (cp.zeros(4, np.float16), cp.zeros(4, np.float16), np.int32(4)))
