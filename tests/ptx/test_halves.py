"""helpers.ptx.halves: .bf16 and .f16 arithmetic and conversions against exact rounding worked out with
fractions (round to nearest, ties to even, at 8 or 11 significant bits, with each format's range)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from helpers import ptx
from helpers.ptx.halves import bf16_to_f64, f32_to_bf16, f64_to_bf16

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _round(x: Fraction, bits: int, emin: int, emax: int) -> float:
    """x rounded to nearest even with `bits` significant bits, exponents down to emin (subnormals below),
    overflowing to infinity past the largest finite value (as IEEE 754 rounds)."""
    if x == 0:
        return 0.0
    sign, x = (-1 if x < 0 else 1), abs(x)
    e = max(math.floor(math.log2(x)), emin)
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    e = max(e, emin)
    step = Fraction(2) ** (e - bits + 1)
    q, r = divmod(x, step)
    if r * 2 > step or (r * 2 == step and q % 2 == 1):
        q += 1
    y = q * step
    top = (2 - Fraction(2) ** (1 - bits)) * Fraction(2) ** emax
    return sign * (math.inf if y > top else float(y))


def ref_bf16(x) -> float:
    return _round(Fraction(float(x)), 8, -126, 127)


def ref_f16(x) -> float:
    return _round(Fraction(float(x)), 11, -14, 15)


def _bf16_values(rng, n):
    return bf16_to_f64(f32_to_bf16(rng.standard_normal(n).astype(np.float32) * 4))


def test_float32_to_bf16_rounds_to_nearest_even_and_overflows_to_inf():
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [
            rng.standard_normal(3000).astype(np.float32) * np.float32(10.0) ** rng.integers(-30, 30, 3000),
            np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.4028234663852886e38, 2.0**-130 * 1.5], np.float32),
        ]
    )
    got = bf16_to_f64(f32_to_bf16(x))
    want = np.array([ref_bf16(v) for v in x])
    assert np.array_equal(got, want)
    assert got[-4] == 1.0 and got[-3] == 1 + 4 * 2.0**-8  # ties to even, both ways
    assert np.isinf(got[-2])  # float32's largest is past the largest bf16 (3.3895e38) by more than half a step
    assert f32_to_bf16(np.float32(np.nan)) == 0x7FFF


def test_float64_to_bf16_rounds_once():
    """1 + 2^-8 + 2^-40 is just above a tie: rounding to float32 first (1 + 2^-8) would make it a tie
    and round down; one rounding goes up."""
    x = np.array([1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-8 - 2.0**-40])
    assert list(bf16_to_f64(f64_to_bf16(x))) == [1 + 2.0**-7, 1.0]
    assert bf16_to_f64(f32_to_bf16(x.astype(np.float32)))[0] == 1.0  # the double rounding it avoids


KERNELS = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>
extern "C" __global__ void bf(const float* x, const float* y, const float* z, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 a = __float2bfloat16(x[i]), b = __float2bfloat16(y[i]), c = __float2bfloat16(z[i]);
    out[4 * i] = __bfloat162float(a);
    out[4 * i + 1] = __bfloat162float(__hmul(a, b));
    out[4 * i + 2] = __bfloat162float(__hadd(a, c));
    out[4 * i + 3] = __bfloat162float(__hfma(a, b, c));
}
extern "C" __global__ void h(const __half* x, const __half* y, const __half* z, __half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[2 * i] = __hfma(x[i], y[i], z[i]);
    __half2 p = __hfma2(__halves2half2(x[i], y[i]), __halves2half2(y[i], x[i]), __halves2half2(z[i], z[i]));
    out[2 * i + 1] = __hsub(__low2half(p), __high2half(p));
}
"""


def test_bf16_kernel_rounds_each_operation_once():
    rng = np.random.default_rng(2)
    n = 200
    x, y, z = (rng.standard_normal(n).astype(np.float32) * 3 for _ in range(3))
    out = np.zeros(4 * n, np.float32)
    ptx.run(KERNELS, "bf", 2, 128, (x, y, z, out, np.int32(n)))
    a, b, c = (np.array([ref_bf16(v) for v in w]) for w in (x, y, z))
    want = np.stack(
        [
            a,
            [_round(Fraction(p) * Fraction(q), 8, -126, 127) for p, q in zip(a, b)],
            [_round(Fraction(p) + Fraction(r), 8, -126, 127) for p, r in zip(a, c)],
            [_round(Fraction(p) * Fraction(q) + Fraction(r), 8, -126, 127) for p, q, r in zip(a, b, c)],
        ],
        axis=1,
    ).reshape(-1)
    assert np.array_equal(out.astype(np.float64), want)


def test_f16_fma_is_one_rounding_and_overflows_past_65504():
    rng = np.random.default_rng(3)
    n = 300
    x, y, z = (rng.standard_normal(n).astype(np.float16) * np.float16(20) for _ in range(3))
    x[0], y[0], z[0] = 300, 300, 0  # 90000: past float16's largest, 65504
    out = np.zeros(2 * n, np.float16)
    ptx.run(KERNELS, "h", 3, 128, (x, y, z, out, np.int32(n)))
    fx, fy, fz = ([Fraction(float(v)) for v in w] for w in (x, y, z))
    fma = [_round(p * q + r, 11, -14, 15) for p, q, r in zip(fx, fy, fz)]
    assert np.array_equal(out[0::2].astype(np.float64), np.array(fma))
    assert np.isinf(out[0])
    # __hfma2 on (x, y) * (y, x) + (z, z): both halves the same fma; their difference is 0 (inf - inf: NaN)
    assert np.array_equal(out[1::2][1:], np.zeros(n - 1, np.float16)) and np.isnan(out[1])
    double = (x * y).astype(np.float16) + z  # a float16 product, then a float16 sum: two roundings
    assert not np.array_equal(out[0::2][1:], double[1:])  # the fused rounding is what differs
