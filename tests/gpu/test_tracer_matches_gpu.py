"""The CPU tracer against a real GPU: the same kernels on the same inputs must give the same
numbers, so what the tracer claims about GPU semantics (negative indices wrap in Numba, math and
division give inf/nan, warp shuffles, xoroshiro states) is checked on the hardware.

Collected by `make test-gpu` (COURSE_MODE=gpu); the CPU suite skips tests/gpu/.
"""

import math

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

import helpers
from helpers.tracer import trace


@pytest.fixture(autouse=True)
def _on_gpu():
    assert helpers.on_gpu(), "run with COURSE_MODE=gpu on an NVIDIA GPU"


def _launch(kernel, grid, block, *arrays):
    """Run on the GPU; the host copies of every array afterwards."""
    dev = [cuda.to_device(a) for a in arrays]
    kernel[grid, block](*dev)
    cuda.synchronize()
    return [d.copy_to_host() for d in dev]


def _traced(kernel, grid, block, *arrays):
    copies = [a.copy() for a in arrays]
    t = trace(kernel, grid, block, *copies)
    return t, copies


@cuda.jit
def diff(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] - x[i - 1]


def test_negative_index_wraps_on_the_gpu_as_traced():
    x = (np.arange(1, 65, dtype=np.float32)) ** 2
    out = np.zeros(64, np.float32)
    gpu = _launch(diff, 2, 32, x, out)[1]
    t, (_, cpu) = _traced(diff, 2, 32, x, out)
    assert [v.kind for v in t.verdicts] == ["negative_index"]
    assert gpu[0] == x[0] - x[-1]  # wrapped, not memory before the array
    np.testing.assert_array_equal(gpu, cpu)


@cuda.jit
def gpu_math(x, out):
    out[0] = math.sqrt(x[2])
    out[1] = math.log(x[1])
    out[2] = x[0] / x[1]
    out[3] = -x[0] / x[1]
    out[4] = x[1] / x[1]
    out[5] = math.acos(x[3])
    out[6] = math.exp(x[4])
    out[7] = 1.0 / 0.0


def test_math_nan_and_inf_match():
    x = np.array([1.0, 0.0, -1.0, 2.0, 1000.0])
    out = np.zeros(8)
    gpu = _launch(gpu_math, 1, 1, x, out)[1]
    _, (_, cpu) = _traced(gpu_math, 1, 1, x, out)
    assert math.isnan(gpu[0]) and gpu[1] == -math.inf and gpu[2] == math.inf
    np.testing.assert_array_equal(gpu, cpu)  # NaN == NaN for assert_array_equal


@cuda.jit
def int_div(a, d, out):
    i = cuda.grid(1)
    out[i, 0] = a[i] // d[i]
    out[i, 1] = a[i] % d[i]


def test_integer_division_by_zero_matches():
    a = np.array([7, -7, 7, 0], np.int64)
    d = np.array([2, 0, 0, 3], np.int64)
    out = np.zeros((4, 2), np.int64)
    gpu = _launch(int_div, 1, 4, a, d, out)[2]
    _, (_, _, cpu) = _traced(int_div, 1, 4, a, d, out)
    np.testing.assert_array_equal(gpu, cpu)


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v
    b = cuda.ballot_sync(0xFFFFFFFF, x[i] > 30)
    if cuda.laneid == 1:
        out[4 + i // 32] = b


def test_warp_shuffle_reduction_matches():
    x = np.random.default_rng(0).integers(0, 64, 128).astype(np.float32)
    out = np.zeros(8, np.float32)
    gpu = _launch(warp_sum, 1, 128, x, out)[1]
    t, (_, cpu) = _traced(warp_sum, 1, 128, x, out)
    assert t.ok, t.summary()
    np.testing.assert_array_equal(gpu, cpu)


@cuda.jit
def uniforms(states, out):
    i = cuda.grid(1)
    if i < out.size:
        for k in range(4):
            out[i, k] = xoroshiro128p_uniform_float32(states, i)


def test_xoroshiro_matches():
    states = create_xoroshiro128p_states(64, seed=42)
    host_states = states.copy_to_host()
    out = np.zeros((64, 4), np.float32)
    d_out = cuda.to_device(out)
    uniforms[2, 32](states, d_out)
    gpu, gpu_states = d_out.copy_to_host(), states.copy_to_host()
    t, (cpu_states, cpu) = _traced(uniforms, 2, 32, host_states, out)
    assert t.ok, t.summary()
    np.testing.assert_array_equal(gpu, cpu)
    np.testing.assert_array_equal(gpu_states, cpu_states)
