"""A shared or local array whose shape is not a compile-time constant is refused by trace() in one
sentence (issue 27, fuzz leftovers): `cuda.shared.array(out.size, ...)` got "No problems found",
though Numba refuses to compile it for a GPU. The shape families of tests/refused/kernels.py are
refused without the compile check, with its sentence; shapes a GPU compiler takes still trace."""

import numba
import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import LearnerError
from helpers.tracer import trace
from refused.kernels import ARGS, CASES

TPB = 32
PAIR = (4, 8)


def _args():
    return [a.copy() if hasattr(a, "copy") else a for a in ARGS]


@cuda.jit
def from_a_parameter(out):
    tile = cuda.shared.array(out.size, numba.float32)
    i = cuda.grid(1)
    tile[i] = i
    out[i] = tile[i]


@cuda.jit
def local_from_a_parameter(out, n):
    m = n
    scratch = cuda.local.array(m, numba.float32)
    scratch[0] = 1
    out[cuda.grid(1)] = scratch[0]


@cuda.jit(device=True)
def staged(v, size):
    tile = cuda.shared.array(size, numba.float32)  # a literal argument: Numba types it as a literal
    tile[cuda.threadIdx.x % size] = v
    return v


@cuda.jit
def constants(out):
    width = 8
    a = cuda.shared.array(TPB, numba.float32)
    b = cuda.shared.array(PAIR, numba.float32)
    c = cuda.shared.array((TPB, width), numba.float32)
    d = cuda.local.array(2 * 16, numba.float32)
    i = cuda.grid(1)
    a[i] = i
    c[i, 0] = a[i]
    d[0] = c[i, 0]
    if i < 4:
        b[i, 0] = d[0]
        out[i] = staged(b[i, 0], 4)


SHAPES = [(f, k) for f, k, _ in CASES if f.startswith("shared shape")]


@pytest.mark.parametrize("family,kernel", SHAPES, ids=[f for f, _ in SHAPES])
def test_the_refused_shapes_are_refused_by_trace(family, kernel):
    with pytest.raises(LearnerError) as e:
        trace(kernel, 2, 32, *_args())
    msg = str(e.value)
    assert msg.startswith("Numba cannot compile this kernel for a GPU: the shape of a shared or local array")
    assert "must be a constant known when the kernel compiles (line " in msg and "\n" not in msg


def test_a_size_from_a_parameter_is_refused_naming_its_line():
    with pytest.raises(LearnerError, match=r"\(line \d+: `tile = cuda.shared.array\(out.size, numba.float32\)`\)"):
        trace(from_a_parameter, 1, 32, np.zeros(32, np.float32))
    with pytest.raises(LearnerError, match=r"scratch = cuda.local.array\(m, numba.float32\)"):
        trace(local_from_a_parameter, 1, 4, np.zeros(4, np.float32), 2)


def test_constant_shapes_still_trace():
    out = np.zeros(32, np.float32)
    t = trace(constants, 1, 32, out)
    assert t.ok, t.summary()
    assert list(out[:4]) == [0, 1, 2, 3]
