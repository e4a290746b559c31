"""helpers.ptx.numba_run: a Numba kernel run from the PTX Numba's compiler makes gives the numbers,
the verdicts and the words the tracer gives, with the learner's lines and parameter names."""

import numpy as np
import pytest
from numba import cuda

from helpers.errors import LearnerError, UnsupportedByTracer
from helpers.ptx import numba_run
from helpers.tracer import trace


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def racy_sum(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0] += x[i]


@cuda.jit
def unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i] * 2


@cuda.jit
def rows_2d(m, out):
    r, c = cuda.grid(2)
    if r < m.shape[0] and c < m.shape[1]:
        out[r, c] = m[r, c] + r


@cuda.jit
def not_numba(x, out):
    i = cuda.grid(1)
    out[i] = undefined_name[i]  # noqa: F821 - a kernel Numba's compiler refuses


RNG = np.random.default_rng(2)


@pytest.fixture(autouse=True, scope="module")
def numba_compiler():
    try:
        numba_run.compile(saxpy, (np.float32(1), *[np.zeros(4, np.float32)] * 3))
    except UnsupportedByTracer as e:  # no nvidia-nvvm wheel (macOS): the course says so and falls back
        pytest.skip(f"Numba's compiler cannot run here: {e}")


def _both(kernel, grid, block, *args, outputs=()):
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return (trace(kernel, grid, block, *a1, outputs=outputs), a1), (
        numba_run.trace(kernel, grid, block, *a2, outputs=outputs),
        a2,
    )


def test_saxpy_gives_the_tracers_numbers_and_metrics():
    n = 300
    x, y = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    (t1, a1), (t2, a2) = _both(saxpy, 3, 128, np.float32(2), x, y, np.zeros(n, np.float32), outputs=(3,))
    np.testing.assert_array_equal(a2[3], np.float32(2) * x + y)
    assert t1.verdicts == t2.verdicts == []
    assert [a.name for a in t2.arrays if a.space == "global"] == ["x", "y", "out"]
    assert t2.metrics.coalescing == pytest.approx(t1.metrics.coalescing)


def test_a_race_and_an_out_of_bounds_access_read_as_the_tracer_says_them():
    x = RNG.random(100, dtype=np.float32)
    (t1, _), (t2, _) = _both(racy_sum, 2, 64, x, np.zeros(1, np.float32))
    assert [v.kind for v in t2.verdicts] == [v.kind for v in t1.verdicts] == ["race"]
    assert str(t2.verdicts[0]).startswith("Race on out[0]:") and "`out[0] += x[i]`" in str(t2.verdicts[0])
    (t1, _), (t2, _) = _both(unguarded, 2, 64, x, np.zeros(100, np.float32))
    assert [str(v) for v in t2.verdicts] == [str(v) for v in t1.verdicts]
    assert "read x[100]" in str(t2.verdicts[0])


def test_two_dimensional_and_non_contiguous_arrays():
    m = RNG.random((20, 30), dtype=np.float32)[:, ::2]  # strided: the interpreter works on a copy
    out = np.zeros((20, 15), np.float32)
    numba_run.trace(rows_2d, (3, 2), (8, 8), m, out, outputs=(1,))
    np.testing.assert_array_equal(out, m + np.arange(20, dtype=np.float32)[:, None])


def test_python_scalars_are_numbas_int64_and_float64():
    flat, origin = numba_run.flatten((3, 2.5, True, np.zeros((2, 3), np.float32)))
    assert [type(v) for v in flat[:3]] == [np.int64, np.float64, np.uint8]
    assert origin == {7: 3} and [int(v) for v in flat[8:]] == [2, 3, 12, 4]


def test_a_kernel_numba_refuses_is_the_learners_error_in_one_sentence():
    with pytest.raises(LearnerError, match="Numba's CUDA compiler refused the kernel"):
        numba_run.trace(not_numba, 1, 32, np.zeros(32, np.float32), np.zeros(32, np.float32))


def test_optimised_and_fastmath_requests_get_the_code_a_gpu_launch_runs():
    from helpers.compile_check import describe

    args = (np.float32(2), *[np.zeros(4, np.float32)] * 3)
    request = describe.request(saxpy, args)
    plain = numba_run.compile_described(request)
    optimised = numba_run.compile_described(request, optimise=True)
    assert len(optimised.splitlines()) < len(plain.splitlines()) / 2  # the server's NUMBA_OPT=0 is for refusals only
    assert "fma.rn.f32" in optimised and ".approx" not in optimised

    @cuda.jit
    def divide(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] / np.float32(3)

    fast = numba_run.compile_described(describe.request(divide, args[1:3]), optimise=True, fastmath=True)
    assert "div.approx" in fast or "div.full" in fast
