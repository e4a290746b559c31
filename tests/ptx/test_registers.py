"""Registers that hold one value for every thread are kept as one element (helpers/ptx/decode.py: uniform,
store, pick) until threads write different values: what every thread reads must not change."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from helpers.ptx import run  # noqa: E402

IMMEDIATES = r"""
extern "C" __global__ void k(unsigned* out) {
  unsigned v, lo, hi;
  asm("popc.b32 %0, 1234567;" : "=r"(v));                          // a bit instruction on an immediate
  asm("mov.b64 {%0, %1}, 81985529216486895;" : "=r"(lo), "=r"(hi));  // an immediate split in two
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x & 1) asm volatile("popc.b32 %0, %1;" : "=r"(v) : "r"(threadIdx.x));  // some threads only
  out[i * 3] = v + threadIdx.x;
  out[i * 3 + 1] = lo;
  out[i * 3 + 2] = hi;
}
"""
PARTLY = r"""
extern "C" __global__ void k(const int* x, int* out, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = a;                      // the same for every thread
  if (x[i] > 0) v = a + x[i];     // then different in some
  if (i < n) out[i] = v * 2 + a;  // and read by every thread below n
}
"""


@pytest.mark.parametrize("whole_grid", [True, False])
def test_a_value_from_an_immediate_reaches_every_thread(whole_grid):
    out = np.zeros(3 * 40, np.uint32)
    run(IMMEDIATES, "k", 2, 20, (out,), whole_grid=whole_grid)
    t = np.arange(40) % 20
    v = np.where(t & 1, [bin(int(k)).count("1") for k in t], bin(1234567).count("1"))
    want = np.stack([v + t, np.full(40, 0x89ABCDEF), np.full(40, 0x01234567)], 1)
    np.testing.assert_array_equal(out, want.reshape(-1).astype(np.uint32))


@pytest.mark.parametrize("whole_grid", [True, False])
def test_a_uniform_register_written_by_some_threads_keeps_the_others_value(whole_grid):
    x = np.random.default_rng(0).integers(-3, 4, 300).astype(np.int32)
    out = np.zeros(300, np.int32)
    run(PARTLY, "k", 3, 100, (x, out, np.int32(5), np.int32(290)), whole_grid=whole_grid)
    v = np.where(x > 0, 5 + x, 5)
    np.testing.assert_array_equal(out[:290], v[:290] * 2 + 5)
    assert not out[290:].any()


UNIFORM_FMA = r"""
extern "C" __global__ void k(float a, float b, float c, float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = fmaf(a, b, c);  // every operand the same in every thread
}
"""


@pytest.mark.parametrize("block", [1, 32])
def test_fma_of_values_the_same_in_every_thread(block):
    out = np.zeros(2 * block, np.float32)
    a, b, c = np.float32(1 + 2.0**-12), np.float32(1 + 2.0**-12), np.float32(2.0**-60)
    run(UNIFORM_FMA, "k", 2, block, (a, b, c, out))
    assert (out == np.float32(1 + 2.0**-11 + 2.0**-23)).all()  # rounded once (tests/ptx/test_round_odd.py)
