"""helpers.ptx.mma: nvcuda::wmma kernels (wmma.load / wmma.mma / wmma.store from NVRTC) against NumPy with the
module's stated rounding: each 16-deep k-step sums exact products and C in float64 and rounds once, to
float32 or to float16 (overflow to inf)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import ptx
from helpers.errors import UnsupportedByTracer
from helpers.ptx.halves import bf16_to_f64, f32_to_bf16

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SRC = r"""
#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
using namespace nvcuda;
// C (M x N) = A (M x K, row-major) * B (K x N, row- or column-major); one warp per 16x16 tile of C
template <typename T, typename BL, typename ACC>
__device__ void tile(const T* a, const T* b, ACC* c, int M, int N, int K, bool bcol) {
    int tm = blockIdx.y, tn = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BL> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, ACC> acc;
    wmma::fill_fragment(acc, ACC(0));
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + tm * 16 * K + k, K);
        wmma::load_matrix_sync(fb, bcol ? b + tn * 16 * K + k : b + k * N + tn * 16, bcol ? K : N);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + tm * 16 * N + tn * 16, acc, N, wmma::mem_row_major);
}
extern "C" __global__ void bf16_row(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int M, int N, int K) {
    tile<__nv_bfloat16, wmma::row_major, float>(a, b, c, M, N, K, false);
}
extern "C" __global__ void f16_col(const __half* a, const __half* b, float* c, int M, int N, int K) {
    tile<__half, wmma::col_major, float>(a, b, c, M, N, K, true);
}
extern "C" __global__ void f16_acc16(const __half* a, const __half* b, __half* c, int M, int N, int K) {
    tile<__half, wmma::row_major, __half>(a, b, c, M, N, K, false);
}
extern "C" __global__ void col_store(const __half* a, const __half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, c, 16, wmma::mem_col_major);  // C starts from c, read column-major
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_col_major);
}
"""


def reference(a, b, out_dtype):
    """C = A B, k-step by k-step: 16 exact products and C summed in float64, rounded once per step."""
    M, K = a.shape
    c = np.zeros((M, b.shape[1]), out_dtype)
    for k in range(0, K, 16):
        c = (a[:, k : k + 16] @ b[k : k + 16] + c.astype(np.float64)).astype(out_dtype)
    return c


def _bf16(rng, shape):
    bits = f32_to_bf16(rng.standard_normal(shape).astype(np.float32))
    return bits, bf16_to_f64(bits)


def test_bf16_tiles_with_float32_accumulation_match_numpy_step_by_step():
    rng = np.random.default_rng(4)
    M, N, K = 32, 64, 256
    (ab, a), (bb, b) = _bf16(rng, (M, K)), _bf16(rng, (K, N))
    c = np.zeros((M, N), np.float32)
    r = ptx.run(SRC, "bf16_row", (2, 2), 64, (ab, bb, c, np.int32(M), np.int32(N), np.int32(K)))
    want = reference(a, b, np.float32)
    assert np.array_equal(c, want)
    assert not np.array_equal(c, (a @ b).astype(np.float32))  # rounding at every k-step shows at K = 256
    assert r.out_of_bounds == [] and r.warp_misuse == []


def test_column_major_b_is_read_down_its_columns():
    rng = np.random.default_rng(5)
    M, N, K = 16, 32, 32
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    ptx.run(SRC, "f16_col", (1, 1), 64, (a, np.ascontiguousarray(b.T), c, np.int32(M), np.int32(N), np.int32(K)))
    assert np.array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


def test_float16_accumulation_rounds_each_step_and_overflows():
    rng = np.random.default_rng(6)
    M, N, K = 16, 16, 64
    a = (rng.standard_normal((M, K)) * 8).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 8).astype(np.float16)
    a[0], b[:, 0] = 100, 100  # row 0 times column 0: 64 * 10^4, past float16's 65504
    c = np.zeros((M, N), np.float16)
    ptx.run(SRC, "f16_acc16", (1, 1), 32, (a, b, c, np.int32(M), np.int32(N), np.int32(K)))
    want = reference(a.astype(np.float64), b.astype(np.float64), np.float16)
    assert np.array_equal(c, want, equal_nan=True) and np.isinf(c[0, 0])
    assert np.isfinite(reference(a.astype(np.float64), b.astype(np.float64), np.float32)[0, 0])


def test_accumulator_loaded_and_stored_column_major_round_trips():
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    c0 = rng.integers(-9, 10, (16, 16)).astype(np.float32)
    c = np.asfortranarray(c0).ravel(order="K").copy()  # c as column-major memory
    ptx.run(SRC, "col_store", 1, 32, (a, b, c))
    got = c.reshape(16, 16).T
    assert np.array_equal(got, a.astype(np.float64) @ b.astype(np.float64) + c0)


def test_a_warp_with_missing_lanes_is_recorded_as_misuse():
    a = np.ones((16, 16), np.float16)
    c = np.zeros(256, np.float32)
    r = ptx.run(SRC, "col_store", 1, 16, (a, a, c))
    assert r.warp_misuse and r.warp_misuse[0]["what"].startswith("wmma.load")


def test_a_shape_it_does_not_model_is_refused_in_one_sentence():
    src = r"""
    #include <mma.h>
    using namespace nvcuda;
    extern "C" __global__ void k(const float* a, float* c) {
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
        wmma::load_matrix_sync(fa, a, 8);
        c[threadIdx.x] = fa.x[0];
    }"""
    with pytest.raises(UnsupportedByTracer, match=r"does not know the PTX instruction `wmma.load.a.*tf32"):
        ptx.run(src, "k", 1, 32, (np.ones(128, np.float32), np.zeros(32, np.float32)))
