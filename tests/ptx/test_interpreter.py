"""The PTX interpreter (helpers.ptx) against NumPy: real CUDA C, compiled by NVRTC, run on the CPU."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from helpers.errors import KernelError, LearnerError, UnsupportedByTracer
from helpers.ptx import ATOMIC, READ, WRITE, run

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void saxpy_nocheck(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = a * x[i] + y[i];
}
"""


def test_saxpy_matches_numpy_and_logs_accesses():
    n = 1000
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    want = (2.5 * x.astype(np.float64) + y).astype(np.float32)  # NVRTC contracts a*x+y into one fma
    r = run(SAXPY, "saxpy", 4, 256, (np.float32(2.5), x, y, np.int32(n)))
    np.testing.assert_array_equal(y, want)
    array, index, kind, gtid = r.table[:4]
    assert r.table.shape == (6, 3 * n)
    assert set(index[array == 0]) == set(range(n))
    assert np.count_nonzero((array == 1) & (kind == WRITE)) == n
    assert np.all(index[kind == WRITE] == gtid[kind == WRITE])
    assert {r.locations[i].line for i in r.table[5]} == {4}
    assert "y[i] = a * x[i]" in r.locations[r.table[5, 0]].source
    assert not r.out_of_bounds


def test_missing_bounds_check_is_out_of_bounds_at_its_line():
    n = 1000
    x, y = np.zeros(n, np.float32), np.zeros(n, np.float32)
    r = run(SAXPY, "saxpy_nocheck", 4, 256, (np.float32(1), x, y, np.int32(n)))
    bad = [e for e in r.out_of_bounds if e[0] == 0]
    assert len(bad) == 24 and bad[0][1] == (1000,) and bad[0][2] == READ and bad[0][3][0] == 1000
    assert {e[5] for e in r.out_of_bounds} == {8}
    assert any(e[2] == WRITE and e[0] == 1 for e in r.out_of_bounds)


def test_python_scalar_is_refused_with_a_sentence():
    x = np.zeros(4, np.float32)
    with pytest.raises(LearnerError, match="np.float32"):
        run(SAXPY, "saxpy", 1, 4, (2.0, x, x.copy(), np.int32(4)))
    y = np.ones(4, np.float32)
    run(SAXPY, "saxpy", 1, 4, (2.0, x + 1, y, 4), python_scalars="cast")
    np.testing.assert_array_equal(y, 3)


BRANCHY = r"""
extern "C" __global__ void leaky(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  if (v > 0.0f) { y[i] = v; } else { y[i] = 0.1f * v; }
}
extern "C" __global__ void clampk(const int* x, int* y, int lo, int hi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = min(max(x[i], lo), hi);
}
"""


def test_branches_leaky_relu_and_clamp():
    x = np.linspace(-3, 3, 77, dtype=np.float32)
    y = np.zeros_like(x)
    run(BRANCHY, "leaky", 3, 32, (x, y, np.int32(77)))
    np.testing.assert_array_equal(y, np.where(x > 0, x, np.float32(0.1) * x))
    xi = np.arange(-50, 50, dtype=np.int32)
    yi = np.zeros_like(xi)
    run(BRANCHY, "clampk", 2, 64, (xi, yi, np.int32(-7), np.int32(9), np.int32(100)))
    np.testing.assert_array_equal(yi, np.clip(xi, -7, 9))


REDUCE = r"""
#define N 128
extern "C" __global__ void block_sum(const float* x, float* out) {
  __shared__ float s[N];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * N + t];
  __syncthreads();
  for (int k = N / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void block_sum_racy(const float* x, float* out) {
  __shared__ float s[N];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * N + t];
  __syncthreads();
  for (int k = N / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_shared_reduction_with_barriers():
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(2, np.float32)
    r = run(REDUCE, "block_sum", 2, 128, (x, out))
    np.testing.assert_array_equal(out, x.reshape(2, 128).sum(1))
    shared = [i for i, a in enumerate(r.arrays) if a.space == "shared"]
    assert len(shared) == 1 and r.arrays[shared[0]].shape == (128,) and r.arrays[shared[0]].var == "s"
    assert r.arrays[shared[0]].line == 4
    assert r.table[4].max() == 8  # 1 + 7 barriers passed
    assert not r.divergent


DYNAMIC = r"""
__device__ int calls;
extern "C" __global__ void dyn_sum(const int* x, int* out) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) { out[blockIdx.x] = s[0]; atomicAdd(&calls, 1); }
}
"""


def test_first_module_level_declaration_is_not_lost():
    """NVRTC puts `.extern .shared s[]` (and __device__ globals) right after `.version/.target/.address_size`,
    which end without ';': the parser once glued them to those directives and dropped them."""
    for src in (DYNAMIC, DYNAMIC.replace("__device__ int calls;\n", "").replace(" atomicAdd(&calls, 1);", "")):
        x = np.arange(128, dtype=np.int32)
        out = np.zeros(2, np.int32)
        run(src, "dyn_sum", 2, 64, (x, out), shared_bytes=64 * 4)
        np.testing.assert_array_equal(out, x.reshape(2, 64).sum(1))


def _same_epoch_conflicts(r, aid):
    a, idx, kind, gtid, epoch, _ = r.table
    m = a == aid
    seen = {}
    for i, k, g, e in zip(idx[m], kind[m], gtid[m], epoch[m]):
        seen.setdefault((g // 128, e, i), set()).add((g, k))
    return [key for key, acc in seen.items() if len({g for g, _ in acc}) > 1 and any(k == WRITE for _, k in acc)]


def test_missing_syncthreads_shows_same_epoch_read_and_write():
    x = np.arange(128, dtype=np.float32)
    out = np.zeros(1, np.float32)
    r = run(REDUCE, "block_sum_racy", 1, 128, (x, out))
    aid = next(i for i, a in enumerate(r.arrays) if a.space == "shared")
    assert _same_epoch_conflicts(r, aid)
    good = run(REDUCE, "block_sum", 1, 128, (x, out))
    assert not _same_epoch_conflicts(good, aid)


def test_log_is_in_tracer_order_thread_by_thread_within_an_interval():
    x = np.arange(128, dtype=np.float32)
    r = run(REDUCE, "block_sum", 1, 128, (x, np.zeros(1, np.float32)))
    g, e = r.table[3], r.table[4]
    for ep in np.unique(e):
        gg = g[e == ep]
        assert np.all(np.diff(gg) >= 0)


DIVERGENT = r"""
extern "C" __global__ void div_bar(float* x) {
  if (threadIdx.x < 16) {
    x[threadIdx.x] += 1.0f;
    __syncthreads();
  }
}
"""


def test_divergent_syncthreads_is_recorded_like_the_tracer():
    x = np.zeros(32, np.float32)
    r = run(DIVERGENT, "div_bar", 1, 32, (x,))
    assert len(r.divergent) == 1
    ev = r.divergent[0]
    assert ev["arrived"] == list(range(16)) and ev["finished"] == list(range(16, 32))
    assert ev["line"] == 5 and ev["block"] == 0 and ev["epoch"] == 0 and ev["elsewhere"] == {}
    assert ev["code"].co_filename == r.locations[0].file


MATRIX = r"""
extern "C" __global__ void scale2d(const float* a, float* b, int rows, int cols) {
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && c < cols) b[r * cols + c] = a[r * cols + c] * 2.0f + r;
}
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
"""


def test_2d_indexing_on_a_non_square_matrix():
    a = np.arange(13 * 37, dtype=np.float32).reshape(13, 37)
    b = np.zeros_like(a)
    r = run(MATRIX, "scale2d", (3, 2), (16, 8), (a, b, np.int32(13), np.int32(37)))
    np.testing.assert_array_equal(b, a * 2 + np.arange(13, dtype=np.float32)[:, None])
    assert r.arrays[0].shape == (13, 37) and not r.out_of_bounds


def test_tiled_matmul():
    n = 32
    rng = np.random.default_rng(1)
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    r = run(MATRIX, "matmul", (2, 2), (16, 16), (A, B, C, np.int32(n)))
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)
    shared = [a for a in r.arrays if a.space == "shared"]
    assert [a.shape for a in shared] == [(16, 16), (16, 16)] and not r.divergent


HIST = r"""
extern "C" __global__ void hist(const int* x, unsigned* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[x[i] % 8], 1u);
}
"""


def test_atomic_histogram():
    x = np.random.default_rng(2).integers(0, 100, 300).astype(np.int32)
    bins = np.zeros(8, np.uint32)
    r = run(HIST, "hist", 3, 128, (x, bins, np.int32(300)))
    np.testing.assert_array_equal(bins, np.bincount(x % 8, minlength=8))
    assert np.count_nonzero(r.table[2] == ATOMIC) == 300


LOOP = r"""
extern "C" __global__ void spin(int* x) {
  int i = 0;
  while (x[0] == 0) { i++; }
  x[1] = i;
}
"""


def test_runaway_loop_is_stopped_by_the_step_budget():
    x = np.zeros(2, np.int32)
    with pytest.raises(KernelError, match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) has run line 4"):
        run(LOOP, "spin", 1, 1, (x,), max_steps=5000)


UNKNOWN = r"""
extern "C" __global__ void uses_nanosleep_and_tex(float* x, unsigned long long t) {
  float v;
  asm volatile("tex.1d.v4.f32.s32 {%0, %0, %0, %0}, [%1, {%2}];" : "=f"(v) : "l"(t), "r"(1));
  x[0] = v;
}
"""


def test_unknown_instruction_is_refused_with_a_sentence():
    x = np.zeros(1, np.float32)
    with pytest.raises(UnsupportedByTracer, match=r"PTX instruction `tex.1d.v4.f32.s32` \(from line 4"):
        run(UNKNOWN, "uses_nanosleep_and_tex", 1, 1, (x, np.uint64(0)))


WARP = r"""
extern "C" __global__ void warp_sum(const float* x, float* out, unsigned* ballot) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
  ballot[threadIdx.x] = __ballot_sync(0xffffffff, x[threadIdx.x] > 0.0f);
}
extern "C" __global__ void bad_mask(float* x) {
  if (threadIdx.x < 16) x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[threadIdx.x], 1);
}
"""


def test_warp_shuffle_reduction_and_ballot():
    x = np.arange(-20, 44, dtype=np.float32)
    out, ballot = np.zeros(2, np.float32), np.zeros(64, np.uint32)
    r = run(WARP, "warp_sum", 1, 64, (x, out, ballot))
    np.testing.assert_array_equal(out, x.reshape(2, 32).sum(1))
    want = [sum(1 << i for i in range(32) if x[w * 32 + i] > 0) for w in range(2)]
    np.testing.assert_array_equal(ballot, np.repeat(np.array(want, np.uint32), 32))
    assert not r.warp_misuse


def test_shuffle_with_absent_lanes_is_a_warp_misuse():
    r = run(WARP, "bad_mask", 1, 32, (np.zeros(32, np.float32),))
    assert r.warp_misuse and r.warp_misuse[0]["line"] == 9 and 16 in r.warp_misuse[0]["missing"]


INTS = r"""
extern "C" __global__ void ints(const int* a, const int* b, int* prod, unsigned* sh, int* q) {
  int i = threadIdx.x;
  prod[i] = a[i] * b[i];
  sh[i] = ((unsigned)a[i]) >> (i % 32);
  q[i] = a[i] / (b[i] == 0 ? 1 : b[i]) + a[i] % (b[i] == 0 ? 1 : b[i]);
}
"""


def test_int32_overflow_wraps_and_unsigned_shift_is_logical():
    rng = np.random.default_rng(3)
    a = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    prod, sh, q = np.zeros(64, np.int32), np.zeros(64, np.uint32), np.zeros(64, np.int32)
    run(INTS, "ints", 1, 64, (a, b, prod, sh, q))
    np.testing.assert_array_equal(prod, (a.astype(np.int64) * b & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(sh, a.view(np.uint32) >> (np.arange(64) % 32).astype(np.uint32))
    bb = np.where(b == 0, 1, b).astype(np.int64)
    quo = np.trunc(a / bb).astype(np.int64)
    np.testing.assert_array_equal(q, (quo + (a - quo * bb)).astype(np.int32))


FLOATS = r"""
extern "C" __global__ void corners(const float* x, float* out) {
  int i = threadIdx.x;
  out[4 * i + 0] = 1.0f / x[i];
  out[4 * i + 1] = sqrtf(x[i]);
  out[4 * i + 2] = x[i] * 0.5f;
  out[4 * i + 3] = x[i] - x[i];
}
extern "C" __global__ void arith(const float* a, const float* b, float* out) {
  int i = threadIdx.x;
  float s = a[i] + b[i];
  float d = a[i] / b[i];
  out[i] = s * d;
}
extern "C" __global__ void dbl(const double* a, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] / 3.0 + sqrt(a[i]);
}
"""


def test_float_corner_cases():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-40, 3.0], np.float32)
    out = np.zeros(32, np.float32)
    run(FLOATS, "corners", 1, 8, (x, out))
    with np.errstate(all="ignore"):
        want = np.stack([np.float32(1) / x, np.sqrt(x), x * np.float32(0.5), x - x], 1).ravel()
    np.testing.assert_array_equal(out.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)])
    assert np.array_equal(np.isnan(out), np.isnan(want))
    assert out[24 + 2] == np.float32(5e-41)  # a denormal result is kept (no flush to zero)


def test_float32_rounding_matches_numpy():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    out = np.zeros(256, np.float32)
    run(FLOATS, "arith", 1, 256, (a, b, out))
    np.testing.assert_array_equal(out, (a + b) * (a / b))


def test_double_precision_kernel():
    a = np.random.default_rng(5).random(100) * 100
    out = np.zeros(100)
    run(FLOATS, "dbl", 1, 128, (a, out, np.int32(100)))
    np.testing.assert_array_equal(out, a / 3.0 + np.sqrt(a))


MISC = r"""
__device__ __noinline__ float square_plus(float v, float w) { return v * v + w; }
extern "C" __global__ void calls(const float* x, float* y) {
  int i = threadIdx.x;
  if (i % 2) y[i] = square_plus(x[i], 1.0f); else y[i] = -x[i];
}
extern "C" __global__ void reverse(float* x) {
  extern __shared__ float buf[];
  buf[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void hello(const float* x) {
  printf("thread %d sees %.2f\n", threadIdx.x, x[threadIdx.x]);
}
"""


def test_noinline_device_function_call():
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    r = run(MISC, "calls", 1, 10, (x, y))
    np.testing.assert_array_equal(y, np.where(np.arange(10) % 2, x * x + 1, -x))
    assert ".func" in r.ptx


def test_dynamic_extern_shared():
    x = np.arange(48, dtype=np.float32)
    r = run(MISC, "reverse", 1, 48, (x,), shared_bytes=48 * 4)
    np.testing.assert_array_equal(x, np.arange(48, dtype=np.float32)[::-1])
    assert [a.shape for a in r.arrays if a.space == "shared"] == [(48,)]


def test_printf_is_captured_in_thread_order():
    r = run(MISC, "hello", 1, 3, (np.array([1.5, 2.25, -3], np.float32),))
    assert r.printed == ["thread 0 sees 1.50\n", "thread 1 sees 2.25\n", "thread 2 sees -3.00\n"]


WARP_SUM = r"""
extern "C" __global__ void wsum(const float* x, float* out) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncwarp();
    for (int off = 16; off > 0; off /= 2) {
        float v = 0.0f;
        if (t < off) v = s[t + off];
        __syncwarp();
        if (t < off) s[t] += v;
        __syncwarp();
    }
    if (t == 0) out[0] = s[0];
}
extern "C" __global__ void wsum_unsynced(const float* x, float* out) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = x[t];
    for (int off = 16; off > 0; off /= 2) {
        if (t < off) s[t] += s[t + off];
    }
    if (t == 0) out[0] = s[0];
}
"""


def test_syncwarp_orders_a_shared_memory_warp_reduction():
    from helpers.ptx import trace

    x, out = np.arange(32, dtype=np.float32), np.zeros(1, np.float32)
    t = trace(WARP_SUM, "wsum", 1, 32, x, out)
    assert out[0] == x.sum()
    assert t.verdicts == [], [v.message for v in t.verdicts]
    t = trace(WARP_SUM, "wsum_unsynced", 1, 32, x, np.zeros(1, np.float32))
    race = [v for v in t.verdicts if v.kind == "race"]
    assert race and "a __syncwarp() would order them too" in race[0].message


ISA_FLOAT = r"""
extern "C" __global__ void isa_float(const float* a, const float* b, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) {
    out[i] = fminf(a[i], b[i]);
    out[n + i] = fmaxf(a[i], b[i]);
    out[2 * n + i] = __fdividef(a[i], b[i]);
  }
}
"""


def test_min_max_canonical_nan_and_div_approx_of_huge_divisors():
    """PTX ISA: min/max of two NaNs is the canonical NaN (0x7fffffff); div.approx.f32 with
    2^126 < |b| < 2^128 is 0, or NaN when a is infinite."""
    nan_a = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
    nan_b = np.array([0xFFC00002], np.uint32).view(np.float32)[0]
    a = np.array([nan_a, nan_a, 1.0, 1.0, -3.0, np.inf, 6.0], np.float32)
    b = np.array([nan_b, 2.0, 2.0**127, -(2.0**127), 3e38, 2.0**127, 2.0], np.float32)
    out = np.zeros(3 * len(a), np.float32)
    run(ISA_FLOAT, "isa_float", 1, 32, (a, b, out, np.int32(len(a))))
    mn, mx, q = out.reshape(3, -1)
    assert mn.view(np.uint32)[0] == 0x7FFFFFFF and mx.view(np.uint32)[0] == 0x7FFFFFFF
    assert mn[1] == 2.0 and mx[1] == 2.0
    np.testing.assert_array_equal(q[[2, 3, 4, 6]], np.array([0.0, -0.0, -0.0, 3.0], np.float32))
    assert list(np.signbit(q[[2, 3, 4]])) == [False, True, True]
    assert np.isnan(q[5])


INT_TO_FLOAT = r"""
extern "C" __global__ void i2f(const long long* x, double* d, float* f) {
  int i = threadIdx.x;
  d[i] = __ll2double_rz(x[i]); d[4 + i] = __ll2double_rd(x[i]); d[8 + i] = __ll2double_ru(x[i]);
  f[i] = __ll2float_rz(x[i]);
}
"""


def test_directed_int_to_float_rounds_the_integer_once():
    """cvt.rz/rm/rp from 64-bit integers: 2^60 - 1 is not a double; rounding it to nearest first (as a float64
    detour does) lands on 2^60 and the directed rounding then has nothing left to do."""
    x = np.array([2**60 - 1, -(2**60 - 1), 2**53 + 1, 3], np.int64)
    d, f = np.zeros(12), np.zeros(4, np.float32)
    run(INT_TO_FLOAT, "i2f", 1, 4, (x, d, f))
    below, above = np.nextafter(2.0**60, 0), 2.0**60
    np.testing.assert_array_equal(d[:4], [below, -below, 2.0**53, 3.0])
    np.testing.assert_array_equal(d[4:8], [below, -above, 2.0**53, 3.0])
    np.testing.assert_array_equal(d[8:], [above, -below, 2.0**53 + 2, 3.0])
    assert f[0] == np.nextafter(np.float32(2.0**60), np.float32(0)) and f[3] == 3.0


DIRECTED_EDGES = r"""
#include <cuda_fp16.h>
extern "C" __global__ void edges(const float* x, float* f, __half* h) {
  int i = threadIdx.x;
  f[i] = __fadd_rd(x[i], -x[i]);
  f[4 + i] = __fmaf_rd(x[i], 1.0f, -x[i]);
  f[8 + i] = __fadd_rd(0.0f, x[i] * 0.0f);
  h[i] = __float2half_rz(x[i] * 70000.0f); h[4 + i] = __float2half_rd(x[i] * 1.0001f); h[8 + i] = __float2half_ru(x[i]);
}
"""


def test_directed_rounding_zero_signs_and_half_narrowing():
    """IEEE 754 in round-down: x + (-x) is -0.0 (+0 + +0 stays +0); cvt.rz/rm/rp.f16.f32 honour the mode,
    overflow included (rz of 70000 is 65504, not inf)."""
    from ptx_corpus.replay import fp16_include

    x = np.array([1.5, -3.0, 1.0, 0.1], np.float32)
    f, h = np.zeros(12, np.float32), np.zeros(12, np.float16)
    run(DIRECTED_EDGES, "edges", 1, 4, (x, f, h), options=(f"-I{fp16_include()}",))
    assert np.all(f[:8] == 0) and np.all(np.signbit(f[:8]))
    assert list(np.signbit(f[8:])) == [False, True, False, False]  # +0 + (x * +0): -0 only where x < 0
    np.testing.assert_array_equal(h[:3], [65504, -65504, 65504])
    hi = x.astype(np.float64)
    lo = (x * np.float32(1.0001)).astype(np.float64)
    assert np.all(h[4:8] <= lo) and np.all(np.nextafter(h[4:8], np.float16(np.inf)) > lo)  # rd: largest below
    assert np.all(h[8:] >= hi) and np.all(np.nextafter(h[8:], np.float16(-np.inf)) < hi)  # ru: smallest above
