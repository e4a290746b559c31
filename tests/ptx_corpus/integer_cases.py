"""Corpus kernels about integers: overflow, unsigned wrap, shifts, division of negatives, bit intrinsics.

Each kernel writes K results per element into one (K, n) array, so one case covers many operations.
Inputs avoid C undefined behaviour the compiler could exploit differently per version (division by
zero, INT_MIN / -1); shift amounts past the width go through inline PTX, where the ISA defines them.
"""

from __future__ import annotations

import numpy as np

from .case import Case, i32_mix

N = 192


def _rows(k, dtype, n=N):
    return np.zeros((k, n), dtype)


def _nonzero(rng, n):
    b = i32_mix(rng, n)
    b[1::3] = rng.integers(1, 20, len(b[1::3])) * np.where(rng.random(len(b[1::3])) < 0.5, -1, 1)
    b[b == 0] = 3
    b[b == -1] = -5  # no INT_MIN / -1
    return b


CASES = [
    Case(
        "int32_overflow_wrap",
        "integer",
        r"""
extern "C" __global__ void ovf(const int* a, const int* b, int* out, long long* wide, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  out[0 * n + i] = x + y;
  out[1 * n + i] = x - y;
  out[2 * n + i] = x * y;
  out[3 * n + i] = -x;
  out[4 * n + i] = abs(x);
  out[5 * n + i] = x * y + x;
  out[6 * n + i] = __mulhi(x, y);
  out[7 * n + i] = __mul24(x, y);
  out[8 * n + i] = __hadd(x, y);
  out[9 * n + i] = __rhadd(x, y);
  out[10 * n + i] = max(x, y) - min(x, y);
  out[11 * n + i] = (int)((unsigned)max(x, y) - (unsigned)min(x, y));
  wide[i] = (long long)x * y;
  wide[n + i] = (long long)x * y * 4611686018427387903LL;
}""",
        "ovf",
        2,
        128,
        lambda rng: {
            "a": i32_mix(rng, N),
            "b": i32_mix(rng, N)[::-1].copy(),
            "out": _rows(12, np.int32),
            "wide": _rows(2, np.int64),
            "n": np.int32(N),
        },
        ("out", "wide"),
        note="signed overflow is UB in C but the PTX (add/mul.lo.s32) wraps; both sides run that PTX",
    ),
    Case(
        "unsigned_wrap_and_truncation",
        "integer",
        r"""
extern "C" __global__ void uwrap(const unsigned* a, const unsigned* b, unsigned* out, unsigned long long* o64,
                                 int* narrow, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned long long X = ((unsigned long long)x << 32) | y, Y = ((unsigned long long)y << 29) ^ x;
  out[0 * n + i] = x - y;
  out[1 * n + i] = x * y;
  out[2 * n + i] = x + y;
  out[3 * n + i] = ~x;
  out[4 * n + i] = -x;
  out[5 * n + i] = __umulhi(x, y);
  out[6 * n + i] = __umul24(x, y);
  out[7 * n + i] = x / (y | 1u) + x % (y | 1u);
  o64[0 * n + i] = X - Y;
  o64[1 * n + i] = X * Y;
  o64[2 * n + i] = __umul64hi(X, Y);
  o64[3 * n + i] = X / (Y | 1ull) + X % 1000000007ull;
  narrow[0 * n + i] = (unsigned char)x;
  narrow[1 * n + i] = (signed char)x;
  narrow[2 * n + i] = (short)x;
  narrow[3 * n + i] = (unsigned short)(x * 3u);
  narrow[4 * n + i] = (int)(long long)(signed char)(x >> 3);
}""",
        "uwrap",
        2,
        128,
        lambda rng: {
            "a": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
            "b": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
            "out": _rows(8, np.uint32),
            "o64": _rows(4, np.uint64),
            "narrow": _rows(5, np.int32),
            "n": np.int32(N),
        },
        ("out", "o64", "narrow"),
    ),
    Case(
        "shifts_of_negatives",
        "integer",
        r"""
extern "C" __global__ void shifts(const int* a, const int* s, int* out, long long* o64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], k = s[i] & 31;
  long long X = (long long)x * 1000003LL;
  out[0 * n + i] = x >> k;
  out[1 * n + i] = (int)((unsigned)x << k);
  out[2 * n + i] = (int)((unsigned)x >> k);
  out[3 * n + i] = x >> 31;
  out[4 * n + i] = (x << 3) >> 3;
  out[5 * n + i] = x / 8 - (x >> 3);
  o64[0 * n + i] = X >> (k * 2);
  o64[1 * n + i] = (long long)((unsigned long long)X >> (k + 17));
  o64[2 * n + i] = (long long)((unsigned long long)X << (k + 5));
}""",
        "shifts",
        2,
        128,
        lambda rng: {
            "a": i32_mix(rng, N),
            "s": rng.integers(0, 64, N).astype(np.int32),
            "out": _rows(6, np.int32),
            "o64": _rows(3, np.int64),
            "n": np.int32(N),
        },
        ("out", "o64"),
    ),
    Case(
        "shift_amounts_past_width_ptx",
        "integer",
        r"""
extern "C" __global__ void bigshift(const int* a, const unsigned* s, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], r0, r1, r2;
  unsigned k = s[i];
  asm("shl.b32 %0, %1, %2;" : "=r"(r0) : "r"(x), "r"(k));
  asm("shr.s32 %0, %1, %2;" : "=r"(r1) : "r"(x), "r"(k));
  asm("shr.u32 %0, %1, %2;" : "=r"(r2) : "r"(x), "r"(k));
  out[i] = r0; out[n + i] = r1; out[2 * n + i] = r2;
}""",
        "bigshift",
        2,
        128,
        lambda rng: {
            "a": i32_mix(rng, N),
            "s": np.concatenate([np.arange(0, 70), rng.integers(0, 2**32, N - 70, dtype=np.uint64)]).astype(np.uint32),
            "out": _rows(3, np.int32),
            "n": np.int32(N),
        },
        ("out",),
        note="PTX clamps shift amounts to the width (inline PTX: in C such shifts are UB)",
    ),
    Case(
        "division_modulo_negatives",
        "integer",
        r"""
extern "C" __global__ void divmod(const int* a, const int* b, int* out, long long* o64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  long long X = (long long)x * 77777LL, Y = (long long)y * 3LL;
  out[0 * n + i] = x / y;
  out[1 * n + i] = x % y;
  out[2 * n + i] = x / 7;
  out[3 * n + i] = x % 7;
  out[4 * n + i] = x / -3;
  out[5 * n + i] = x % -3;
  out[6 * n + i] = x / 1024;
  out[7 * n + i] = (int)((unsigned)x / 10u);
  out[8 * n + i] = (int)((unsigned)x % (unsigned)y);
  o64[0 * n + i] = X / Y;
  o64[1 * n + i] = X % Y;
  o64[2 * n + i] = X / 1000;
}""",
        "divmod",
        2,
        128,
        lambda rng: {
            "a": i32_mix(rng, N),
            "b": _nonzero(rng, N),
            "out": _rows(9, np.int32),
            "o64": _rows(3, np.int64),
            "n": np.int32(N),
        },
        ("out", "o64"),
        note="C truncates toward zero; constant divisors become mul.hi sequences",
    ),
    Case(
        "bit_intrinsics",
        "integer",
        r"""
extern "C" __global__ void bitops(const unsigned* a, const unsigned* b, unsigned* out, unsigned long long* o64,
                                  int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned long long X = ((unsigned long long)y << 32) | x;
  out[0 * n + i] = __popc(x);
  out[1 * n + i] = __clz(x);
  out[2 * n + i] = __ffs(x);
  out[3 * n + i] = __brev(x);
  out[4 * n + i] = __byte_perm(x, y, y & 0x7777u);
  out[5 * n + i] = __popcll(X) + (__clzll(X) << 8) + (__ffsll(X) << 16);
  out[6 * n + i] = (x >> (y & 31)) & ((1u << (y >> 27)) - 1u);
  out[7 * n + i] = __clz((int)x >> 3);
  o64[i] = __brevll(X);
}""",
        "bitops",
        2,
        128,
        lambda rng: {
            "a": np.concatenate([[0, 1, 2**31, 2**32 - 1], rng.integers(0, 2**32, N - 4, dtype=np.uint64)]).astype(
                np.uint32
            ),
            "b": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
            "out": _rows(8, np.uint32),
            "o64": np.zeros(N, np.uint64),
            "n": np.int32(N),
        },
        ("out", "o64"),
    ),
    Case(
        "funnel_shift",
        "integer",
        r"""
extern "C" __global__ void funnel(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = __funnelshift_l(a[i], b[i], b[i] >> 3);
  out[n + i] = __funnelshift_rc(a[i], b[i], b[i] >> 5);
  out[2 * n + i] = __sad((int)a[i], (int)b[i], 7u);
}""",
        "funnel",
        1,
        64,
        lambda rng: {
            "a": rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32),
            "b": rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32),
            "out": _rows(3, np.uint32, 64),
            "n": np.int32(64),
        },
        ("out",),
        refused="shf (funnel shift) and sad are not interpreted",
    ),
]
