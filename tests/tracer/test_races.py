"""helpers.tracer.races, on the compare-and-swap loop: the CUDA Programming Guide's idiom (a plain
read as the first guess, then atomicCAS until it sticks) is not a race, in Numba or in CUDA C; a
plain read of the result after the thread's last CAS, or a plain read beside another atomic, is."""

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.tracer import trace


@cuda.jit
def cas_max(x, mx):
    i = cuda.grid(1)
    if i < x.size:
        old = mx[0]  # a first guess: the CAS below checks it
        while True:
            assumed = old
            old = cuda.atomic.cas(mx, 0, assumed, max(assumed, x[i]))
            if old == assumed:
                break


@cuda.jit
def cas_max_then_reads_result(x, mx, out):
    i = cuda.grid(1)
    if i < x.size:
        old = mx[0]
        while True:
            assumed = old
            old = cuda.atomic.cas(mx, 0, assumed, max(assumed, x[i]))
            if old == assumed:
                break
        out[i] = mx[0]  # read before every thread's CAS is done: no barrier orders it


@cuda.jit
def read_beside_add(x, total, seen):
    i = cuda.grid(1)
    if i < x.size:
        seen[i] = total[0]
        cuda.atomic.add(total, 0, x[i])


def _races(t):
    return [v for v in t.verdicts if v.kind == "race"]


def test_a_numba_cas_loop_is_not_a_race_and_computes_the_max():
    x = np.random.default_rng(1).integers(0, 1000, 200).astype(np.int32)
    mx = np.zeros(1, np.int32)
    t = trace(cas_max, 2, 128, x, mx)
    assert _races(t) == []
    assert mx[0] == x.max()


def test_reading_the_result_after_the_last_cas_still_races():
    x = np.arange(200, dtype=np.int32)
    t = trace(cas_max_then_reads_result, 2, 128, x, np.zeros(1, np.int32), np.zeros(200, np.int32))
    assert _races(t)


def test_a_plain_read_beside_an_atomic_add_still_races():
    x = np.ones(200, np.int32)
    t = trace(read_beside_add, 2, 128, x, np.zeros(1, np.int32), np.zeros(200, np.int32))
    assert _races(t)


GUIDE = r"""
extern "C" __global__ void max_float(const float* x, float* mx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* addr = (int*)mx;
  int old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, __float_as_int(fmaxf(x[i], __int_as_float(assumed))));
  } while (assumed != old);
}
extern "C" __global__ void max_then_read(const float* x, float* mx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* addr = (int*)mx;
  int old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, __float_as_int(fmaxf(x[i], __int_as_float(assumed))));
  } while (assumed != old);
  out[i] = *mx;
}
"""


def test_the_programming_guides_float_max_cas_loop_in_cuda_c_is_not_a_race():
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    x = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    mx = np.full(1, -np.inf, np.float32)
    t = ptx.trace(GUIDE, "max_float", 3, 128, x, mx, np.int32(300))
    assert _races(t) == []
    assert mx[0] == x.max()


def test_a_cuda_c_read_of_the_result_after_the_cas_loop_still_races():
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    x = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    t = ptx.trace(GUIDE, "max_then_read", 3, 128, x, np.full(1, -np.inf, np.float32), out, np.int32(300))
    assert _races(t)
