"""Corpus kernels about floating point: conversions, NaN/inf, subnormals, rounding, double, half, .approx.

Tolerances (ulps between GPU and interpreter; the interpreter rounds every `.approx` instruction
correctly, helpers/ptx/alu.py): 0 for everything correctly rounded in the PTX ISA. For `.approx`
the ISA's bound plus the interpreter's half ulp: ex2 2 ulp -> 3; rsqrt/rcp/div.approx (2 ulp for
|b| in [2^-126, 2^126]) -> 3; lg2 and sin/cos are bounded in absolute error (2^-22 and 2^-20.5),
so those cases carry an `atol` as well; __powf chains lg2 and ex2, so its error grows with
|y * log2(x)| (bounded here by the input ranges).
"""

from __future__ import annotations

import numpy as np

from .case import F32_SPECIALS, Case, f32_mix, f64_mix

N = 256


def _pairs():
    """Every special against every special: x[i], y[i] over the cross product."""
    x, y = np.meshgrid(F32_SPECIALS, F32_SPECIALS, indexing="ij")
    return x.ravel().copy(), y.ravel().copy()


PAIRS = len(F32_SPECIALS) ** 2
PAIR_GRID = (PAIRS + 255) // 256


def _rows(k, dtype, n=N):
    return np.zeros((k, n), dtype)


def _pair_inputs(k, dtype=np.float32, **more):
    """x, y, z over the cross product of specials, then `out` (k rows), the `more` arrays, then n."""

    def make(rng):
        x, y = _pairs()
        z = np.roll(y, 7)
        out = {"x": x, "y": y, "z": z, "out": np.zeros((k, PAIRS), dtype) if k else np.zeros(PAIRS, np.int32)}
        return {**out, **{name: np.zeros(shape, dt) for name, (shape, dt) in more.items()}, "n": np.int32(PAIRS)}

    return make


def _denormals(rng, n=N):
    tiny = np.float32(1.1754944e-38)
    v = (rng.uniform(-4, 4, n) * tiny).astype(np.float32)  # half subnormal, half small normal
    v[:8] = [1e-45, -1e-45, 1.1754942e-38, tiny, -tiny, 0.0, -0.0, 5.9e-39]
    return v


_DENORM_SRC = r"""
extern "C" __global__ void denorm(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  out[0 * n + i] = a + b;
  out[1 * n + i] = a * 0.5f;
  out[2 * n + i] = a * 3.0e7f;
  out[3 * n + i] = b * 1.0e-3f;
  out[4 * n + i] = fmaf(a, 0.75f, b);
  out[5 * n + i] = a / 3.0f;
  out[6 * n + i] = sqrtf(fabsf(a));
  out[7 * n + i] = a - b * 0.25f;
  out[8 * n + i] = (a < b) ? 1.0f : 0.0f;
  out[9 * n + i] = (float)((double)a * 0.5);
  out[10 * n + i] = fmaxf(a, b);
  out[11 * n + i] = 1.0f / (a * 1e30f);
}"""


def _denorm_inputs(rng):
    return {"x": _denormals(rng), "y": _denormals(rng)[::-1].copy(), "out": _rows(12, np.float32), "n": np.int32(N)}


def _integral_inputs(rng):
    return {
        "x": np.concatenate([np.arange(-8, 8, 0.5), f32_mix(rng, 96, 1e3), rng.uniform(-1e7, 1e7, 128)]).astype(
            np.float32
        ),
        "d": np.concatenate([np.arange(-8, 8, 0.5), f64_mix(rng, 96, 1e3), rng.uniform(-1e16, 1e16, 128)]),
        "out": _rows(6, np.float32),
        "dout": _rows(4, np.float64),
        "li": _rows(2, np.int64),
        "n": np.int32(N),
    }


def _half_inputs(rng):
    a = (rng.standard_normal(N) * 100).astype(np.float16)
    a[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 6e-8]
    return {
        "a": a,
        "b": (rng.standard_normal(N) * 10).astype(np.float16),
        "out": _rows(5, np.float16),
        "cmp": np.zeros(N, np.int32),
        "n": np.int32(N),
    }


def _uniform(lo, hi, n=N):
    return lambda rng: rng.uniform(lo, hi, n).astype(np.float32)


CASES = [
    # ------------------------------------------------------------------------- conversions
    Case(
        "float_to_int_specials",
        "conversion",
        r"""
extern "C" __global__ void f2i(const float* x, const double* d, int* i32, unsigned* u32, long long* i64,
                               unsigned long long* u64, int* small, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  i32[i] = (int)v;
  i32[n + i] = __float2int_rn(v);
  i32[2 * n + i] = __float2int_rd(v);
  i32[3 * n + i] = __float2int_ru(v);
  i32[4 * n + i] = __double2int_rn(d[i]);
  u32[i] = (unsigned)v;
  u32[n + i] = __float2uint_rn(v);
  u32[2 * n + i] = __float2uint_rd(v);
  u32[3 * n + i] = __double2uint_ru(d[i]);
  i64[i] = (long long)v;
  i64[n + i] = __float2ll_rn(v);
  i64[2 * n + i] = __double2ll_rd(d[i]);
  u64[i] = (unsigned long long)v;
  u64[n + i] = __float2ull_ru(v);
  u64[2 * n + i] = (unsigned long long)d[i];
  small[i] = (short)v;
  small[n + i] = (signed char)v;
  small[2 * n + i] = (unsigned char)v;
}""",
        "f2i",
        1,
        N,
        lambda rng: {
            "x": f32_mix(rng, N, 1e9),
            "d": f64_mix(rng, N, 1e15),
            "i32": _rows(5, np.int32),
            "u32": _rows(4, np.uint32),
            "i64": _rows(3, np.int64),
            "u64": _rows(3, np.uint64),
            "small": _rows(3, np.int32),
            "n": np.int32(N),
        },
        ("i32", "u32", "i64", "u64", "small"),
        note="cvt saturates and maps NaN to 0 (C calls out-of-range conversions UB; the PTX defines them)",
    ),
    Case(
        "int_to_float_rounding",
        "conversion",
        r"""
extern "C" __global__ void i2f(const int* a, const long long* b, float* f, double* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  long long X = b[i];
  f[0 * n + i] = (float)x;
  f[1 * n + i] = __int2float_rz(x);
  f[2 * n + i] = __int2float_rd(x);
  f[3 * n + i] = __int2float_ru(x);
  f[4 * n + i] = __uint2float_rz((unsigned)x);
  f[5 * n + i] = __uint2float_ru((unsigned)x);
  f[6 * n + i] = (float)X;
  f[7 * n + i] = __ll2float_rz(X);
  f[8 * n + i] = __ll2float_rd(X);
  f[9 * n + i] = __ull2float_ru((unsigned long long)X);
  d[0 * n + i] = (double)X;
  d[1 * n + i] = __ll2double_rz(X);
  d[2 * n + i] = __ll2double_ru(X);
  d[3 * n + i] = __ull2double_rd((unsigned long long)X);
  d[4 * n + i] = (double)(unsigned long long)X;
}""",
        "i2f",
        1,
        N,
        lambda rng: {
            "a": rng.integers(-(2**31), 2**31, N).astype(np.int32),
            "b": rng.integers(-(2**63), 2**63 - 1, N, dtype=np.int64) >> rng.integers(0, 40, N),
            "f": _rows(10, np.float32),
            "d": _rows(5, np.float64),
            "n": np.int32(N),
        },
        ("f", "d"),
    ),
    Case(
        "double_to_float_narrowing",
        "conversion",
        r"""
extern "C" __global__ void d2f(const double* x, float* out, double* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[0 * n + i] = (float)v;
  out[1 * n + i] = __double2float_rz(v);
  out[2 * n + i] = __double2float_rd(v);
  out[3 * n + i] = __double2float_ru(v);
  back[i] = (double)(float)v;
}""",
        "d2f",
        1,
        N,
        lambda rng: {
            "x": np.concatenate([f64_mix(rng, 128, 1e30), rng.standard_normal(64) * 1e-40, rng.standard_normal(64)]),
            "out": _rows(4, np.float32),
            "back": np.zeros(N),
            "n": np.int32(N),
        },
        ("out", "back"),
        note="overflow to inf or FLT_MAX by mode, subnormal results",
    ),
    # ------------------------------------------------------------------------- NaN and inf
    Case(
        "specials_arithmetic",
        "nan-inf",
        r"""
extern "C" __global__ void arith(const float* x, const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  out[0 * n + i] = a + b;
  out[1 * n + i] = a - b;
  out[2 * n + i] = a * b;
  out[3 * n + i] = a / b;
  out[4 * n + i] = sqrtf(a);
  out[5 * n + i] = fmaf(a, b, z[i]);
  out[6 * n + i] = 1.0f / a;
}""",
        "arith",
        PAIR_GRID,
        256,
        _pair_inputs(7),
        ("out",),
        note="every pair of specials; a computed NaN's payload is not fixed by the ISA (nan='any')",
    ),
    Case(
        "fmin_fmax_nan_signed_zero",
        "nan-inf",
        r"""
extern "C" __global__ void minmax(const float* x, const float* y, const float* z, float* out, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  out[0 * n + i] = fminf(a, b);
  out[1 * n + i] = fmaxf(a, b);
  out[2 * n + i] = fminf(fmaxf(a, -1.0f), 1.0f);
  dout[0 * n + i] = fmin((double)a, (double)b);
  dout[1 * n + i] = fmax((double)a, (double)b);
}""",
        "minmax",
        PAIR_GRID,
        256,
        _pair_inputs(3, dout=((2, PAIRS), np.float64)),
        ("out", "dout"),
        nan="bits",
        note="min/max return the other operand for one NaN and the canonical NaN for two; -0 < +0",
    ),
    Case(
        "copysign_abs_neg",
        "nan-inf",
        r"""
extern "C" __global__ void signs(const float* x, const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = copysignf(x[i], y[i]);
  out[1 * n + i] = fabsf(x[i]);
  out[2 * n + i] = -x[i];
  out[3 * n + i] = copysignf(1.0f, y[i]) * fabsf(x[i]);
}""",
        "signs",
        PAIR_GRID,
        256,
        _pair_inputs(4),
        ("out",),
        note="neg/abs of a NaN: the ISA leaves the payload unspecified, so NaNs compare as any NaN",
    ),
    Case(
        "comparisons_with_nan",
        "nan-inf",
        r"""
extern "C" __global__ void cmp(const float* x, const float* y, const float* z, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  out[i] = (a < b) | (a <= b) << 1 | (a == b) << 2 | (a != b) << 3 | (!(a >= b)) << 4 | (a > b) << 5
         | isnan(a) << 6 | isinf(a) << 7 | isfinite(a) << 8 | signbit(a) << 9
         | (__float_as_int(a) == __float_as_int(b)) << 10;
}""",
        "cmp",
        PAIR_GRID,
        256,
        _pair_inputs(0),
        ("out",),
    ),
    Case(
        "libm_exact_functions",
        "nan-inf",
        r"""
extern "C" __global__ void libm(const float* x, const float* y, const float* z, float* out, int* iout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  int e;
  out[0 * n + i] = fmodf(a, b);
  out[1 * n + i] = remainderf(a, b);
  out[2 * n + i] = ldexpf(a, (int)fminf(fmaxf(b, -300.0f), 300.0f));
  out[3 * n + i] = frexpf(a, &e);
  out[4 * n + i] = nextafterf(a, b);
  out[5 * n + i] = fdimf(a, b);
  out[6 * n + i] = truncf(a) + floorf(b);
  iout[i] = e;
  iout[n + i] = ilogbf(a);
}""",
        "libm",
        PAIR_GRID,
        256,
        _pair_inputs(7, iout=((2, PAIRS), np.int32)),
        ("out", "iout"),
        note="libdevice functions whose results are exact",
        exact_approx="fmodf/remainderf take div/rcp.approx as a quotient estimate and correct it "
        "(0 ulp in the CUDA guide)",
    ),
    # ------------------------------------------------------------------------- subnormals
    Case(
        "denormals_default",
        "denormal",
        _DENORM_SRC,
        "denorm",
        1,
        N,
        _denorm_inputs,
        ("out",),
        note="NVRTC's default keeps subnormals (no .ftz)",
    ),
    Case(
        "denormals_ftz",
        "denormal",
        _DENORM_SRC,
        "denorm",
        1,
        N,
        _denorm_inputs,
        ("out",),
        options=("-ftz=true",),
        note="-ftz=true: subnormal inputs and results of .f32 instructions flush to sign-preserving zero",
    ),
    Case(
        "denormals_double",
        "denormal",
        r"""
extern "C" __global__ void dden(const double* x, double* out, float* f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = x[i], b = x[n - 1 - i];
  out[0 * n + i] = a * 1e-300;
  out[1 * n + i] = a * b;
  out[2 * n + i] = a / 1e300 + b;
  out[3 * n + i] = sqrt(fabs(a * 1e-310));
  out[4 * n + i] = fma(a, 1e-308, b * 1e-10);
  f[i] = (float)(a * 1e-30);
}""",
        "dden",
        1,
        N,
        lambda rng: {
            # powers of ten parsed, not computed: 10.0 ** k comes from the host's libm, and the GPU
            # host's differed from this one's (the stored fingerprint did not match)
            "x": rng.standard_normal(N) * np.array([float(f"1e{k}") for k in rng.integers(-20, 20, N)]),
            "out": _rows(5, np.float64),
            "f": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("out", "f"),
    ),
    # ------------------------------------------------------------------------- rounding
    Case(
        "rounding_intrinsics_f32",
        "rounding",
        r"""
extern "C" __global__ void rnd(const float* x, const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i], c = z[i];
  out[0 * n + i] = __fadd_rn(a, b);  out[1 * n + i] = __fadd_rz(a, b);
  out[2 * n + i] = __fadd_rd(a, b);  out[3 * n + i] = __fadd_ru(a, b);
  out[4 * n + i] = __fsub_rz(a, b);  out[5 * n + i] = __fsub_ru(a, b);
  out[6 * n + i] = __fmul_rz(a, b);  out[7 * n + i] = __fmul_rd(a, b);  out[8 * n + i] = __fmul_ru(a, b);
  out[9 * n + i] = __fdiv_rn(a, b);  out[10 * n + i] = __fdiv_rz(a, b);
  out[11 * n + i] = __fdiv_rd(a, b); out[12 * n + i] = __fdiv_ru(a, b);
  out[13 * n + i] = __fsqrt_rn(fabsf(a)); out[14 * n + i] = __fsqrt_rz(fabsf(a));
  out[15 * n + i] = __fsqrt_rd(fabsf(a)); out[16 * n + i] = __fsqrt_ru(fabsf(a));
  out[17 * n + i] = __frcp_rn(b); out[18 * n + i] = __frcp_rz(b);
  out[19 * n + i] = __frcp_rd(b); out[20 * n + i] = __frcp_ru(b);
  out[21 * n + i] = __fmaf_rn(a, b, c); out[22 * n + i] = __fmaf_rz(a, b, c);
  out[23 * n + i] = __fmaf_rd(a, b, c); out[24 * n + i] = __fmaf_ru(a, b, c);
  out[25 * n + i] = __frsqrt_rn(fabsf(a));
}""",
        "rnd",
        PAIR_GRID,
        256,
        lambda rng: {
            "x": np.where(np.arange(PAIRS) % 2, _pairs()[0], rng.standard_normal(PAIRS) * 1e3).astype(np.float32),
            "y": np.where(np.arange(PAIRS) % 3, _pairs()[1], rng.standard_normal(PAIRS)).astype(np.float32),
            "z": (rng.standard_normal(PAIRS) * 1e2).astype(np.float32),
            "out": np.zeros((26, PAIRS), np.float32),
            "n": np.int32(PAIRS),
        },
        ("out",),
        note="__frsqrt_rn is correctly rounded (not .approx)",
        exact_approx="__frsqrt_rn refines an rsqrt.approx seed to the correctly rounded result",
    ),
    Case(
        "rounding_to_integral",
        "rounding",
        r"""
extern "C" __global__ void integral(const float* x, const double* d, float* out, double* dout, long long* li,
                                    int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
  double b = d[i];
  out[0 * n + i] = rintf(a); out[1 * n + i] = roundf(a); out[2 * n + i] = truncf(a);
  out[3 * n + i] = floorf(a); out[4 * n + i] = ceilf(a); out[5 * n + i] = nearbyintf(a);
  dout[0 * n + i] = rint(b); dout[1 * n + i] = trunc(b); dout[2 * n + i] = floor(b); dout[3 * n + i] = ceil(b);
  li[i] = llrintf(a); li[n + i] = llrint(b);
}""",
        "integral",
        1,
        N,
        _integral_inputs,
        ("out", "dout", "li"),
        note="ties: rint to even, roundf away from zero",
    ),
    Case(
        "rounding_round_double",
        "rounding",
        r"""
extern "C" __global__ void dround(const float* x, const double* d, float* out, double* dout, long long* li,
                                  int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dout[i] = round(d[i]);
  li[i] = llround(d[i]);
}""",
        "dround",
        1,
        N,
        _integral_inputs,
        ("dout", "li"),
        refused="round(double) uses add.rz.f64: directed f64 rounding is not interpreted",
    ),
    Case(
        "fma_contraction_default",
        "rounding",
        r"""
extern "C" __global__ void muladd(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}""",
        "muladd",
        1,
        N,
        lambda rng: {
            "a": _uniform(-1, 1)(rng),
            "b": _uniform(-1, 1)(rng),
            "c": _uniform(-1e-3, 1e-3)(rng),
            "out": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("out",),
        note="contracted into fma.rn.f32 by default",
    ),
    Case(
        "fma_contraction_off",
        "rounding",
        r"""
extern "C" __global__ void muladd(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}""",
        "muladd",
        1,
        N,
        lambda rng: {
            "a": _uniform(-1, 1)(rng),
            "b": _uniform(-1, 1)(rng),
            "c": _uniform(-1e-3, 1e-3)(rng),
            "out": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("out",),
        options=("-fmad=false",),
        note="-fmad=false: mul.rn then add.rn, two roundings",
    ),
    Case(
        "rounding_intrinsics_f64",
        "rounding",
        r"""
extern "C" __global__ void drnd(const double* x, const double* y, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = x[i], b = y[i];
  out[0 * n + i] = __dadd_rz(a, b); out[1 * n + i] = __dmul_ru(a, b); out[2 * n + i] = __ddiv_rd(a, b);
  out[3 * n + i] = __dsqrt_ru(fabs(a)); out[4 * n + i] = __fma_rz(a, b, a);
}""",
        "drnd",
        1,
        64,
        lambda rng: {
            "x": rng.standard_normal(64) * 1e3,
            "y": rng.standard_normal(64),
            "out": _rows(5, np.float64, 64),
            "n": np.int32(64),
        },
        ("out",),
        refused="directed rounding of f64 (add.rz.f64, fma.rz.f64) is not interpreted",
    ),
    # ------------------------------------------------------------------------- double
    Case(
        "double_arithmetic",
        "double",
        r"""
extern "C" __global__ void darith(const double* x, const double* y, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = x[i], b = y[i];
  out[0 * n + i] = a + b; out[1 * n + i] = a - b; out[2 * n + i] = a * b; out[3 * n + i] = a / b;
  out[4 * n + i] = sqrt(a); out[5 * n + i] = fma(a, b, a); out[6 * n + i] = 1.0 / b;
  out[7 * n + i] = a * b + 0.1 * a;
}""",
        "darith",
        1,
        N,
        lambda rng: {
            "x": f64_mix(rng, N, 1e5),
            "y": f64_mix(rng, N, 1e-3)[::-1].copy(),
            "out": _rows(8, np.float64),
            "n": np.int32(N),
        },
        ("out",),
    ),
    Case(
        "double_libdevice",
        "double",
        r"""
extern "C" __global__ void dmath(const double* x, double* out, double* seeded, double* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = x[i];
  out[0 * n + i] = exp(a); out[1 * n + i] = exp2(a * 0.5); out[2 * n + i] = cbrt(a);
  seeded[0 * n + i] = log(fabs(a)); seeded[1 * n + i] = log1p(fabs(a)); seeded[2 * n + i] = tanh(a);
  p[i] = pow(fabs(a), 0.37);
}""",
        "dmath",
        1,
        128,
        lambda rng: {
            "x": np.concatenate(
                [rng.uniform(-30, 30, 120), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, 1e-310, 710.0]]
            ),
            "out": _rows(3, np.float64, 128),
            "seeded": _rows(3, np.float64, 128),
            "p": np.zeros(128),
            "n": np.int32(128),
        },
        ("out", "seeded", "p"),
        ulps={"out": 0, "seeded": 2, "p": 4},
        note="libdevice double math; log/log1p/tanh/pow start from rcp.approx.f64 seeds: 2x their documented "
        "1-ulp (pow: 2-ulp) error",
    ),
    Case(
        "double_sin_cos",
        "double",
        r"""
extern "C" __global__ void dtrig(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { out[i] = sin(x[i]); out[n + i] = cos(x[i]); }
}""",
        "dtrig",
        1,
        64,
        lambda rng: {
            "x": np.concatenate([rng.uniform(-30, 30, 60), [1e300, -1e22, np.inf, np.nan]]),
            "out": _rows(2, np.float64, 64),
            "n": np.int32(64),
        },
        ("out",),
        refused="the large-argument range reduction uses carry chains (madc.hi.cc), which are not interpreted",
    ),
    Case(
        "float_libdevice",
        "double",
        r"""
extern "C" __global__ void fmath(const float* x, float* out, float* seeded, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
  out[0 * n + i] = logf(fabsf(a)); out[1 * n + i] = sinf(a); out[2 * n + i] = cosf(a);
  seeded[0 * n + i] = tanhf(a); seeded[1 * n + i] = erff(a); seeded[2 * n + i] = cbrtf(a);
  seeded[3 * n + i] = expf(a);
}""",
        "fmath",
        1,
        128,
        lambda rng: {
            "x": np.concatenate(
                [rng.uniform(-20, 20, 120), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, 1e-40, 88.0]]
            ).astype(np.float32),
            "out": _rows(3, np.float32, 128),
            "seeded": _rows(4, np.float32, 128),
            "n": np.int32(128),
        },
        ("out", "seeded"),
        ulps={"out": 0, "seeded": 4},
        note="accurate float math (no fast math): logf/sinf/cosf are polynomials of exact instructions; "
        "tanhf/erff/cbrtf/expf use ex2/lg2/rcp.approx inside: 2x their documented 2-ulp error",
    ),
    # ------------------------------------------------------------------------- half
    Case(
        "half_conversions",
        "half",
        r"""
#include <cuda_fp16.h>
extern "C" __global__ void hconv(const float* x, __half* h, float* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  h[i] = __float2half(x[i]);
  h[n + i] = __float2half_rz(x[i]);
  h[2 * n + i] = __float2half_rd(x[i]);
  h[3 * n + i] = __float2half_ru(x[i]);
  back[i] = __half2float(__float2half(x[i]));
}""",
        "hconv",
        1,
        N,
        lambda rng: {
            "x": np.concatenate(
                [f32_mix(rng, 128, 1e3), rng.standard_normal(64) * 1e-6, rng.uniform(6e4, 7e4, 64)]
            ).astype(np.float32),
            "h": _rows(4, np.float16),
            "back": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("h", "back"),
        fp16=True,
        note="half subnormals (below 6.1e-5) and overflow past 65504",
    ),
    Case(
        "half_arithmetic",
        "half",
        r"""
#include <cuda_fp16.h>
extern "C" __global__ void harith(const __half* a, const __half* b, __half* out, int* cmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i];
  out[0 * n + i] = __hadd(x, y);
  out[1 * n + i] = __hsub(x, y);
  out[2 * n + i] = __hmul(x, y);
  out[3 * n + i] = __hmax(x, y);
  out[4 * n + i] = __hneg(x);
}""",
        "harith",
        1,
        N,
        _half_inputs,
        ("out",),
        fp16=True,
    ),
    Case(
        "half_compare",
        "half",
        r"""
#include <cuda_fp16.h>
extern "C" __global__ void hcmp(const __half* a, const __half* b, __half* out, int* cmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) cmp[i] = __hlt(a[i], b[i]) | __heq(a[i], b[i]) << 1 | __hisnan(a[i]) << 2;
}""",
        "hcmp",
        1,
        N,
        _half_inputs,
        ("cmp",),
        fp16=True,
    ),
    Case(
        "half_fma_half2",
        "half",
        r"""
#include <cuda_fp16.h>
extern "C" __global__ void hfma(const __half2* a, const __half2* b, __half2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = __hfma2(a[i], b[i], a[i]);
  out[n + i] = __hadd2(a[i], b[i]);
}""",
        "hfma",
        1,
        64,
        lambda rng: {
            "a": (rng.standard_normal(128) * 10).astype(np.float16),
            "b": (rng.standard_normal(128) * 10).astype(np.float16),
            "out": np.zeros(256, np.float16),
            "n": np.int32(64),
        },
        ("out",),
        fp16=True,
    ),
    # ------------------------------------------------------------------------- .approx
    Case(
        "approx_exp_intrinsics",
        "approx",
        r"""
extern "C" __global__ void fexp(const float* x, float* e, float* e10, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { e[i] = __expf(x[i]); e10[i] = __exp10f(x[i] * 0.25f); }
}""",
        "fexp",
        1,
        N,
        lambda rng: {
            "x": _uniform(-20, 20)(rng),
            "e": np.zeros(N, np.float32),
            "e10": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("e", "e10"),
        ulps=3,
        note="ex2.approx.ftz.f32: 2 ulp on the GPU",
    ),
    Case(
        "approx_log_intrinsics",
        "approx",
        r"""
extern "C" __global__ void flog(const float* x, float* l, float* l2, float* l10, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { l[i] = __logf(x[i]); l2[i] = __log2f(x[i]); l10[i] = __log10f(x[i]); }
}""",
        "flog",
        1,
        N,
        lambda rng: {
            # exact scaling by powers of two: np.exp's last bits depend on the host's CPU (SIMD paths)
            "x": np.ldexp(rng.uniform(1.0, 2.0, N), rng.integers(-28, 29, N)).astype(np.float32),
            "l": np.zeros(N, np.float32),
            "l2": np.zeros(N, np.float32),
            "l10": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("l", "l2", "l10"),
        ulps=4,
        atol=2.0**-21,
        note="lg2.approx: absolute error 2^-22 near 1, a few ulps elsewhere",
    ),
    Case(
        "approx_sin_cos",
        "approx",
        r"""
extern "C" __global__ void fsin(const float* x, float* s, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { s[i] = __sinf(x[i]); c[i] = __cosf(x[i]); }
}""",
        "fsin",
        1,
        N,
        lambda rng: {
            "x": _uniform(-3.14159, 3.14159)(rng),
            "s": np.zeros(N, np.float32),
            "c": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("s", "c"),
        ulps=4,
        atol=2.0**-20,
        note="sin/cos.approx: absolute error 2^-20.5 on [-pi, pi]",
    ),
    Case(
        "approx_divide_rsqrt",
        "approx",
        r"""
extern "C" __global__ void fdiv(const float* x, const float* y, float* q, float* r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { q[i] = __fdividef(x[i], y[i]); r[i] = rsqrtf(y[i]); }
}""",
        "fdiv",
        1,
        N,
        lambda rng: {
            "x": np.concatenate([[1.0, -1.0, np.inf, 3e38, 1.0, 0.0], _uniform(-1e3, 1e3, N - 6)(rng)]).astype(
                np.float32
            ),
            "y": np.concatenate(
                [[2.0**127, -(2.0**127), 2.0**127, 3e38, 2.0**-126, 1.0], _uniform(0.001, 1e4, N - 6)(rng)]
            ).astype(np.float32),
            "q": np.zeros(N, np.float32),
            "r": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("q", "r"),
        ulps=3,
        note="div.approx: 2 ulp for |y| in [2^-126, 2^126], and 0 (NaN for an infinite x) above 2^126",
    ),
    Case(
        "approx_powf",
        "approx",
        r"""
extern "C" __global__ void fpow(const float* x, const float* y, float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __powf(x[i], y[i]);
}""",
        "fpow",
        1,
        N,
        lambda rng: {
            "x": _uniform(0.1, 10)(rng),
            "y": _uniform(-4, 4)(rng),
            "p": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("p",),
        ulps=32,
        note="ex2(y * lg2(x)): the lg2 error is multiplied by |y| <= 4",
    ),
    Case(
        "approx_fast_math",
        "approx",
        r"""
extern "C" __global__ void fast(const float* x, const float* y, float* e, float* q, float* s, float* t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { e[i] = expf(x[i]); q[i] = x[i] / y[i]; s[i] = sqrtf(y[i]); t[i] = x[i] * y[i] + 1.0f; }
}""",
        "fast",
        1,
        N,
        lambda rng: {
            "x": _uniform(-10, 10)(rng),
            "y": _uniform(0.01, 1e3)(rng),
            "e": np.zeros(N, np.float32),
            "q": np.zeros(N, np.float32),
            "s": np.zeros(N, np.float32),
            "t": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("e", "q", "s", "t"),
        ulps={"e": 3, "q": 3, "s": 3, "t": 0},
        options=("--use_fast_math",),
        note="--use_fast_math: expf -> ex2.approx.ftz, / -> div.approx.ftz, sqrtf -> sqrt.approx.ftz",
    ),
    Case(
        "approx_ptx_ex2_rcp_tanh",
        "approx",
        r"""
extern "C" __global__ void raw(const float* x, float* e, float* r, float* t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], a, b, c;
  asm("ex2.approx.f32 %0, %1;" : "=f"(a) : "f"(v));
  asm("rcp.approx.f32 %0, %1;" : "=f"(b) : "f"(v));
  asm("tanh.approx.f32 %0, %1;" : "=f"(c) : "f"(v * 0.1f));
  e[i] = a; r[i] = b; t[i] = c;
}""",
        "raw",
        1,
        N,
        lambda rng: {
            "x": np.concatenate(
                [[0.0, -0.0, np.inf, -np.inf, np.nan, -130.0, -149.5, 128.0, 1e-40], rng.uniform(-140, 127, N - 9)]
            ).astype(np.float32),
            "e": np.zeros(N, np.float32),
            "r": np.zeros(N, np.float32),
            "t": np.zeros(N, np.float32),
            "n": np.int32(N),
        },
        ("e", "r", "t"),
        ulps={"e": 3, "r": 2, "t": 2**13},
        note="inline PTX: ex2.approx 2 ulp (subnormal results kept), rcp.approx 1 ulp, tanh.approx rel. 2^-11",
    ),
]
