"""Corpus kernels about memory and threads: reductions, atomics, warp instructions, indexing, control flow.

Sizes are small so the whole corpus replays in the interpreter in well under a minute.
"""

from __future__ import annotations

import numpy as np

from .case import Case, f32_mix, i32_mix

FULL = "#define FULL 0xffffffffu\n"


def _f32(rng, n, lo=-10.0, hi=10.0):
    return rng.uniform(lo, hi, n).astype(np.float32)


CASES = [
    Case(
        "reduce_tree_f32",
        "reduction",
        r"""
extern "C" __global__ void tree_sum(const float* x, float* partial, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}""",
        "tree_sum",
        4,
        256,
        lambda rng: {"x": _f32(rng, 1000), "partial": np.full(4, np.nan, np.float32), "n": np.int32(1000)},
        ("partial",),
        note="float sums in a fixed tree order: bit-identical",
    ),
    Case(
        "reduce_dynamic_shared_i32",
        "reduction",
        r"""
extern "C" __global__ void dyn_sum(const int* x, int* partial, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}""",
        "dyn_sum",
        3,
        128,
        lambda rng: {"x": i32_mix(rng, 350), "partial": np.zeros(3, np.int32), "n": np.int32(350)},
        ("partial",),
        shared_bytes=128 * 4,
        note="dynamic shared memory; int32 sums wrap",
    ),
    Case(
        "reduce_tree_then_shuffle",
        "reduction",
        FULL
        + r"""
extern "C" __global__ void tree_warp_sum(const float* x, float* partial, int n) {
  __shared__ float s[128];
  int t = threadIdx.x, i = blockIdx.x * 128 + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = 64; stride >= 32; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t < 32) {
    float v = s[t];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL, v, o);
    if (t == 0) partial[blockIdx.x] = v;
  }
}""",
        "tree_warp_sum",
        3,
        128,
        lambda rng: {"x": _f32(rng, 300, -1e3, 1e3), "partial": np.full(3, np.nan, np.float32), "n": np.int32(300)},
        ("partial",),
    ),
    Case(
        "reduce_fmax_with_nan",
        "reduction",
        r"""
extern "C" __global__ void tree_max(const float* x, float* partial, int n) {
  __shared__ float s[128];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : __int_as_float(0xff800000);  // -inf
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] = fmaxf(s[t], s[t + stride]);
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}""",
        "tree_max",
        2,
        128,
        lambda rng: {
            "x": np.where(rng.random(256) < 0.2, np.float32(np.nan), _f32(rng, 256)).astype(np.float32),
            "partial": np.zeros(2, np.float32),
            "n": np.int32(256),
        },
        ("partial",),
        note="fmaxf skips NaN",
    ),
    Case(
        "reduce_tree_f64",
        "reduction",
        r"""
extern "C" __global__ void tree_sum_d(const double* x, double* partial, int n) {
  __shared__ double s[64];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}""",
        "tree_sum_d",
        4,
        64,
        lambda rng: {"x": rng.standard_normal(250) * 1e6, "partial": np.zeros(4), "n": np.int32(250)},
        ("partial",),
    ),
    Case(
        "reduce_block_then_atomic",
        "reduction",
        r"""
extern "C" __global__ void block_atomic(const int* x, int* partial, int* total, int n) {
  __shared__ int s[64];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0;
  __syncthreads();
  for (int stride = 32; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) { partial[blockIdx.x] = s[0]; atomicAdd(total, s[0]); }
}""",
        "block_atomic",
        5,
        64,
        lambda rng: {
            "x": rng.integers(-1000, 1000, 300).astype(np.int32),
            "partial": np.zeros(5, np.int32),
            "total": np.zeros(1, np.int32),
            "n": np.int32(300),
        },
        ("partial", "total"),
        note="the atomic total is an integer sum: order-independent",
    ),
    # ------------------------------------------------------------------------- atomics
    Case(
        "atomic_histogram_global_and_shared",
        "atomic",
        r"""
extern "C" __global__ void hist(const int* x, int* gbins, int* sbins_out, int n) {
  __shared__ int h[16];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 16) h[t] = 0;
  __syncthreads();
  if (i < n) { atomicAdd(&gbins[x[i] & 15], 1); atomicAdd(&h[(x[i] >> 4) & 15], 1); }
  __syncthreads();
  if (t < 16) atomicAdd(&sbins_out[t], h[t]);
}""",
        "hist",
        3,
        128,
        lambda rng: {
            "x": rng.integers(0, 1 << 20, 333).astype(np.int32),
            "gbins": np.zeros(16, np.int32),
            "sbins_out": np.zeros(16, np.int32),
            "n": np.int32(333),
        },
        ("gbins", "sbins_out"),
        note="counts: order-independent",
    ),
    Case(
        "atomic_min_max",
        "atomic",
        r"""
extern "C" __global__ void minmax(const int* x, int* mx, int* mn, unsigned* umx, long long* lmn, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicMax(mx, x[i]);
    atomicMin(mn, x[i]);
    atomicMax(umx, (unsigned)x[i]);
    atomicMin(lmn, (long long)x[i] * 3);
  }
}""",
        "minmax",
        2,
        128,
        lambda rng: {
            "x": i32_mix(rng, 200),
            "mx": np.array([-(2**31)], np.int32),
            "mn": np.array([2**31 - 1], np.int32),
            "umx": np.zeros(1, np.uint32),
            "lmn": np.array([2**62], np.int64),
            "n": np.int32(200),
        },
        ("mx", "mn", "umx", "lmn"),
        note="min/max: order-independent",
    ),
    Case(
        "atomic_cas_float_max",
        "atomic",
        r"""
__device__ float atomic_max_float(float* addr, float v) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(a, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}
extern "C" __global__ void cas_max(const float* x, float* best, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_float(best, x[i]);
}""",
        "cas_max",
        3,
        64,
        lambda rng: {"x": _f32(rng, 180, -1e4, 1e4), "best": np.array([-np.inf], np.float32), "n": np.int32(180)},
        ("best",),
        note="a CAS loop; the final maximum is order-independent",
    ),
    Case(
        "atomic_add_exact_floats",
        "atomic",
        r"""
extern "C" __global__ void fadd(const float* x, const double* y, float* fs, double* ds, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { atomicAdd(fs, x[i]); atomicAdd(ds, y[i]); }
}""",
        "fadd",
        4,
        64,
        lambda rng: {
            "x": rng.integers(-50, 50, 250).astype(np.float32),
            "y": rng.integers(-(2**30), 2**30, 250).astype(np.float64),
            "fs": np.zeros(1, np.float32),
            "ds": np.zeros(1, np.float64),
            "n": np.int32(250),
        },
        ("fs", "ds"),
        note="integer-valued floats: every partial sum is exact, so the order does not matter",
    ),
    Case(
        "atomic_inc_dec_wrap",
        "atomic",
        r"""
extern "C" __global__ void incdec(unsigned* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { atomicInc(&c[0], 17u); atomicDec(&c[1], 10u); atomicAdd(&c[2], 0x10000001u); atomicSub(&c[3], 3u); }
}""",
        "incdec",
        3,
        100,
        lambda rng: {"c": np.array([0, 0, 5, 7], np.uint32), "n": np.int32(290)},
        ("c",),
        note="wrapping counters: the final values do not depend on the order",
    ),
    Case(
        "atomic_bitwise_and_u64",
        "atomic",
        r"""
extern "C" __global__ void bits(const unsigned* x, unsigned* o, unsigned long long* big, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicOr(&o[0], x[i] & 0x01010101u);
    atomicAnd(&o[1], x[i] | 0xfefefefeu);
    atomicXor(&o[2], x[i]);
    atomicAdd(&big[0], (unsigned long long)x[i] << 32);
    atomicMax(&big[1], (unsigned long long)x[i] * 12345ull);
  }
}""",
        "bits",
        2,
        128,
        lambda rng: {
            "x": rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32),
            "o": np.array([0, 0xFFFFFFFF, 0x12345678], np.uint32),
            "big": np.array([2**63, 0], np.uint64),
            "n": np.int32(256),
        },
        ("o", "big"),
        note="and/or/xor/add/max: order-independent",
    ),
    # ------------------------------------------------------------------------- warp
    Case(
        "warp_shfl_down_sum",
        "warp",
        FULL
        + r"""
extern "C" __global__ void warp_sum(const float* x, const double* y, float* out, double* outd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  double d = y[i];
  for (int o = 16; o > 0; o >>= 1) { v += __shfl_down_sync(FULL, v, o); d += __shfl_down_sync(FULL, d, o); }
  if ((threadIdx.x & 31) == 0) { out[i / 32] = v; outd[i / 32] = d; }
}""",
        "warp_sum",
        2,
        96,
        lambda rng: {
            "x": _f32(rng, 192),
            "y": rng.standard_normal(192),
            "out": np.zeros(6, np.float32),
            "outd": np.zeros(6),
        },
        ("out", "outd"),
    ),
    Case(
        "warp_shfl_xor_butterfly",
        "warp",
        FULL
        + r"""
extern "C" __global__ void butterfly(const int* x, int* out, int* mx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i], m = x[i];
  for (int o = 1; o < 32; o <<= 1) { v += __shfl_xor_sync(FULL, v, o); m = max(m, __shfl_xor_sync(FULL, m, o)); }
  out[i] = v;
  mx[i] = m;
}""",
        "butterfly",
        2,
        64,
        lambda rng: {"x": i32_mix(rng, 128), "out": np.zeros(128, np.int32), "mx": np.zeros(128, np.int32)},
        ("out", "mx"),
    ),
    Case(
        "warp_shfl_up_scan_idx_width",
        "warp",
        FULL
        + r"""
extern "C" __global__ void scan(const int* x, int* scan_out, int* bcast, int* seg, int* segdown, int* segxor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int v = x[i];
  for (int o = 1; o < 32; o <<= 1) { int u = __shfl_up_sync(FULL, v, o); if (lane >= o) v += u; }
  scan_out[i] = v;
  bcast[i] = __shfl_sync(FULL, x[i], 5);
  seg[i] = __shfl_sync(FULL, x[i], 3, 8);
  segdown[i] = __shfl_down_sync(FULL, x[i], 3, 8);
  segxor[i] = __shfl_xor_sync(FULL, x[i], 9, 16) + __shfl_up_sync(FULL, x[i], 2, 4);
}""",
        "scan",
        1,
        64,
        lambda rng: {
            "x": rng.integers(-100, 100, 64).astype(np.int32),
            **{k: np.zeros(64, np.int32) for k in ("scan_out", "bcast", "seg", "segdown", "segxor")},
        },
        ("scan_out", "bcast", "seg", "segdown", "segxor"),
        note="shuffles with width: out-of-segment lanes keep their own value",
    ),
    Case(
        "warp_ballot_any_all",
        "warp",
        FULL
        + r"""
extern "C" __global__ void votes(const int* x, unsigned* ballot, int* anyv, int* allv, int* pop, unsigned* sub) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  unsigned b = __ballot_sync(FULL, x[i] > 0);
  ballot[i] = b;
  anyv[i] = __any_sync(FULL, x[i] > 90);
  allv[i] = __all_sync(FULL, x[i] > -95);
  pop[i] = __popc(b);
  sub[i] = 0;
  if (lane % 3 == 0) sub[i] = __ballot_sync(0x49249249u, x[i] & 1);
}""",
        "votes",
        2,
        64,
        lambda rng: {
            "x": rng.integers(-100, 100, 128).astype(np.int32),
            "ballot": np.zeros(128, np.uint32),
            "anyv": np.zeros(128, np.int32),
            "allv": np.zeros(128, np.int32),
            "pop": np.zeros(128, np.int32),
            "sub": np.zeros(128, np.uint32),
        },
        ("ballot", "anyv", "allv", "pop", "sub"),
        note="a ballot inside a branch with the branch's own mask (lanes 0, 3, ..., 30)",
    ),
    Case(
        "warp_match_reduce",
        "warp",
        FULL
        + r"""
extern "C" __global__ void match_reduce(const int* x, unsigned* match, unsigned* rsum, int* rmax, unsigned* ror) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  match[i] = __match_any_sync(FULL, x[i] & 3);
  rsum[i] = __reduce_add_sync(FULL, (unsigned)x[i]);
  rmax[i] = __reduce_max_sync(FULL, x[i]);
  ror[i] = __reduce_or_sync(FULL, (unsigned)x[i] & 0xf0f0u);
}""",
        "match_reduce",
        1,
        64,
        lambda rng: {
            "x": i32_mix(rng, 64),
            "match": np.zeros(64, np.uint32),
            "rsum": np.zeros(64, np.uint32),
            "rmax": np.zeros(64, np.int32),
            "ror": np.zeros(64, np.uint32),
        },
        ("match", "rsum", "rmax", "ror"),
    ),
    # ------------------------------------------------------------------------- indexing
    Case(
        "index_2d_pitch",
        "indexing",
        r"""
extern "C" __global__ void pitched(const float* src, size_t spitch, float* dst, size_t dpitch,
                                   int width, int height, float a) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    const float* srow = (const float*)((const char*)src + y * spitch);
    float* drow = (float*)((char*)dst + y * dpitch);
    drow[x] = a * srow[x] + (float)(y * width + x);
  }
}""",
        "pitched",
        (3, 2),
        (16, 16),
        lambda rng: {
            "src": _f32(rng, 21 * 64).reshape(21, 64),
            "spitch": np.uint64(64 * 4),
            "dst": np.full((21, 48), np.nan, np.float32),
            "dpitch": np.uint64(48 * 4),
            "width": np.int32(45),
            "height": np.int32(21),
            "a": np.float32(1.75),
        },
        ("dst",),
        note="rows addressed through a byte pitch; the padding must stay untouched",
    ),
    Case(
        "index_transpose_shared_tile",
        "indexing",
        r"""
#define TILE 32
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}""",
        "transpose",
        (3, 2),
        (32, 8),
        lambda rng: {
            "in": _f32(rng, 50 * 70).reshape(50, 70),
            "out": np.full((70, 50), np.nan, np.float32),
            "rows": np.int32(50),
            "cols": np.int32(70),
        },
        ("out",),
    ),
    Case(
        "index_3d_grid_block",
        "indexing",
        r"""
extern "C" __global__ void ids(int* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) {
    int flat_block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    int flat_thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[(z * ny + y) * nx + x] = flat_block * 1000 + flat_thread;
  }
}""",
        "ids",
        (2, 3, 2),
        (4, 2, 3),
        lambda rng: {"out": np.full((5, 5, 7), -1, np.int32), "nx": np.int32(7), "ny": np.int32(5), "nz": np.int32(5)},
        ("out",),
    ),
    Case(
        "index_grid_stride_size_t",
        "indexing",
        r"""
extern "C" __global__ void stride_loop(const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    y[i] = x[i] * x[i] - 2.0f * x[i];
}""",
        "stride_loop",
        2,
        64,
        lambda rng: {"x": _f32(rng, 1000), "y": np.full(1003, np.nan, np.float32), "n": np.uint64(1000)},
        ("y",),
    ),
    Case(
        "index_tiled_matmul",
        "indexing",
        r"""
#define T 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[T][T], Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + T - 1) / T; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < n && t * T + threadIdx.x < n) ? A[row * n + t * T + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < n && t * T + threadIdx.y < n) ? B[(t * T + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}""",
        "matmul",
        (3, 3),
        (16, 16),
        lambda rng: {
            "A": _f32(rng, 40 * 40).reshape(40, 40),
            "B": _f32(rng, 40 * 40).reshape(40, 40),
            "C": np.full((40, 40), np.nan, np.float32),
            "n": np.int32(40),
        },
        ("C",),
        note="fma-contracted dot products in a fixed order: bit-identical",
    ),
    Case(
        "index_stencil_clamped",
        "indexing",
        r"""
extern "C" __global__ void stencil(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int xl = max(x - 1, 0), xr = min(x + 1, w - 1), yu = max(y - 1, 0), yd = min(y + 1, h - 1);
  out[y * w + x] = 0.5f * in[y * w + x] + 0.125f * (in[y * w + xl] + in[y * w + xr] + in[yu * w + x] + in[yd * w + x]);
}""",
        "stencil",
        (3, 3),
        (8, 8),
        lambda rng: {
            "in": _f32(rng, 19 * 23).reshape(19, 23),
            "out": np.full((19, 23), np.nan, np.float32),
            "w": np.int32(23),
            "h": np.int32(19),
        },
        ("out",),
    ),
    # ------------------------------------------------------------------------- control flow
    Case(
        "control_calls_local_array_switch",
        "control",
        r"""
__device__ __noinline__ int collatz(long long v) {
  int steps = 0;
  while (v != 1 && steps < 500) { v = (v & 1) ? 3 * v + 1 : v >> 1; ++steps; }
  return steps;
}
__device__ float pick(int k, float a) {
  switch (k & 7) {
    case 0: return a; case 1: return -a; case 2: return a * 2.0f; case 3: return a + 1.0f;
    case 4: return a * a; case 5: return 0.0f; case 6: return a - 3.0f; default: return 1.0f / a;
  }
}
extern "C" __global__ void control(const int* x, const float* f, int* steps, float* picked, int* hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  steps[i] = collatz((long long)(x[i] & 0xffff) + 1);
  picked[i] = pick(x[i], f[i]);
  int local[10];
  for (int k = 0; k < 10; ++k) local[k] = k * x[i];
  hist[i] = local[(x[i] & 0x7fffffff) % 10] + local[(unsigned)x[i] % 7u];
}""",
        "control",
        2,
        100,
        lambda rng: {
            "x": i32_mix(rng, 180),
            "f": _f32(rng, 180),
            "steps": np.zeros(180, np.int32),
            "picked": np.zeros(180, np.float32),
            "hist": np.zeros(180, np.int32),
            "n": np.int32(180),
        },
        ("steps", "picked", "hist"),
        note="a divergent loop in a non-inlined call, a switch and a dynamically indexed local array",
    ),
    Case(
        "control_vector_loads_ldg",
        "control",
        r"""
extern "C" __global__ void vec(const float4* __restrict__ a, const int2* __restrict__ b, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = __ldg(&a[i]);
    int2 w = b[i];
    out[i] = make_float4(v.x + w.x, v.y * w.y, v.z - v.w, (float)(w.x ^ w.y));
  }
}""",
        "vec",
        2,
        64,
        lambda rng: {
            "a": _f32(rng, 4 * 100).reshape(100, 4),
            "b": rng.integers(-1000, 1000, 200).astype(np.int32).reshape(100, 2),
            "out": np.full((100, 4), np.nan, np.float32),
            "n": np.int32(100),
        },
        ("out",),
    ),
    Case(
        "control_recursion",
        "control",
        r"""
__device__ int fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }
extern "C" __global__ void rec(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fib(x[i] & 15);
}""",
        "rec",
        1,
        32,
        lambda rng: {"x": rng.integers(0, 100, 32).astype(np.int32), "out": np.zeros(32, np.int32), "n": np.int32(32)},
        ("out",),
        refused="the interpreter does not run recursive calls",
    ),
    Case(
        "control_mixed_specials_select",
        "control",
        r"""
extern "C" __global__ void sel(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = v > 0.0f ? v : (v < -1.0f ? -1.0f : v * 0.5f);
  }
}""",
        "sel",
        2,
        64,
        lambda rng: {"x": f32_mix(rng, 128), "out": np.zeros(128, np.float32), "n": np.int32(128)},
        ("out",),
    ),
]
