"""helpers.tracer.constant: how many addresses each warp-wide read of constant memory touched (a GPU's
constant cache serves one at a time): one for a table every lane reads in step, many for a lookup by data."""

import numba
import numpy as np
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.tracer import trace

COEFFS = np.array([0.5, -1.0, 0.25, 2.0, -3.0], dtype=np.float32)
LUT = np.arange(64, dtype=np.float32)


@cuda.jit
def polynomial(x, out):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < x.size:
        acc = numba.float32(0.0)
        for k in range(c.size):
            acc = acc * x[i] + c[k]
        out[i] = acc


@cuda.jit
def lookup(idx, out):
    c = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[idx[i]]


@cuda.jit
def no_table(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_lanes_reading_in_step_need_one_pass_per_read():
    x = np.linspace(-1, 1, 100, dtype=np.float32)
    out = np.zeros_like(x)
    r = trace(polynomial, 4, 32, x, out, outputs=("out",)).const_reads()
    assert np.allclose(out, np.polyval(COEFFS, x), atol=1e-5)
    assert (r.warp_reads, r.passes, r.serialised, r.worst) == (4 * 5, 4 * 5, 0, 1)  # 4 warps x 5 coefficients
    assert "0 serialised (worst: 1 address in one read)" in str(r)


def test_a_lookup_by_data_needs_a_pass_per_distinct_address():
    idx = np.tile(np.arange(32, dtype=np.int32) % 8, 2)  # each warp: 8 distinct elements, 4 lanes on each
    idx[32:] += 32  # the second warp: 8 other elements
    out = np.zeros(64, np.float32)
    r = trace(lookup, 1, 64, idx, out, outputs=("out",)).const_reads()
    assert out.tolist() == LUT[idx].tolist()
    assert (r.warp_reads, r.passes, r.serialised, r.worst) == (2, 16, 2, 8)


def test_a_kernel_without_tables_says_so():
    x = np.ones(8, np.float32)
    assert str(trace(no_table, 1, 8, x, np.zeros_like(x)).const_reads()) == "constant memory: no reads"
