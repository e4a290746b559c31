"""Arithmetic, logic, comparison and conversion instructions, decoded into NumPy closures.

Why each rule is what it is (all from the PTX ISA):
  * integers wrap at their width (NumPy fixed-width arrays do the same); shifts past the width
    give 0 (or the sign for `shr.s`); `div`/`rem` truncate toward zero like C.
  * `.f32` add/sub/mul/div/sqrt round to nearest in float32; because float64 has more than
    2*24+2 bits, computing in float64 and rounding once more is still correctly rounded.
    Directed modes (.rz/.rm/.rp) and `fma.f32` use the exact float64 error term and
    round-to-odd so the final rounding is single. `fma.f64` is done with exact rationals.
  * `.approx` functions (ex2, lg2, sin, cos, tanh, rsqrt, rcp/div.approx) are computed in
    float64 and rounded once: at most 0.5 ulp from the true value, while the GPU's hardware
    approximations are within a few ulp (2 ulp for ex2/rsqrt; sin/cos absolute 2^-20.5).
    Compare such results with a tolerance of a few float32 ulps.
  * float min/max return the non-NaN operand, the canonical NaN (see canonical_nan) if both are NaN; with
    `.NaN`, the canonical NaN if either is.
  * `div.approx.f32` with 2^126 < |b| < 2^128 gives 0 (NaN for an infinite a), as the ISA states.
"""

from __future__ import annotations

import numpy as np

from .values import DTYPES, SIGNED, UNSIGNED, add_to_f32, fma64_exact, ftz32, to_f32, two_sum

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
OPS = {}


def op(*names):
    def reg(f):
        for n in names:
            OPS[n] = f
        return f

    return reg


def _mode(ins):
    for m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"):
        if m in ins.parts:
            return m
    return ""


def _fin(ins, T):
    """Post-processing of a float result: .ftz and .sat (clamp to [0, 1], NaN -> 0)."""
    ftz = "ftz" in ins.parts and T == F32
    sat = "sat" in ins.parts and T.kind == "f"
    if not (ftz or sat):
        return None

    def fin(v):
        if ftz:
            v = ftz32(v)
        if sat:
            v = np.where(np.isnan(v), T.type(0), np.clip(v, T.type(0), T.type(1))).astype(T)
        return v

    return fin


def _flushing(g):
    return lambda S, idx: ftz32(g(S, idx))


def _generic(ins, cx, f, nsrc, T=None):
    T = T or cx.typ(ins)
    d = cx.dst(ins.operands[0], T)
    srcs = [cx.src(o, T) for o in ins.operands[1 : 1 + nsrc]]
    fin = _fin(ins, T)
    ftz_in = "ftz" in ins.parts and T == F32
    if ftz_in:
        srcs = [_flushing(g) for g in srcs]
    if nsrc == 1:
        (a,) = srcs
        if fin:
            return lambda S, idx: d(S, idx, fin(f(a(S, idx))))
        return lambda S, idx: d(S, idx, f(a(S, idx)))
    if nsrc == 2:
        a, b = srcs
        if fin:
            return lambda S, idx: d(S, idx, fin(f(a(S, idx), b(S, idx))))
        return lambda S, idx: d(S, idx, f(a(S, idx), b(S, idx)))
    a, b, c = srcs
    if fin:
        return lambda S, idx: d(S, idx, fin(f(a(S, idx), b(S, idx), c(S, idx))))
    return lambda S, idx: d(S, idx, f(a(S, idx), b(S, idx), c(S, idx)))


def _f64(x):
    """As float64; a uniform register (one element broadcast) stays one element."""
    x = np.asarray(x)
    return np.float64(x.reshape(-1)[0]) if x.ndim == 1 and len(x) and x.strides == (0,) else x.astype(np.float64)


def _wide(T):
    return SIGNED[T.itemsize * 2] if T.kind == "i" else UNSIGNED[T.itemsize * 2]


def _hi(a, b, T):
    """High half of the full product of two T values."""
    bits = 8 * T.itemsize
    if T.itemsize <= 4:
        return (np.asarray(a).astype(_wide(T)) * np.asarray(b).astype(_wide(T)) >> bits).astype(T)
    p = np.asarray(a).astype(object) * np.asarray(b).astype(object)
    return np.array([(int(x) >> 64) & (2**64 - 1) for x in np.atleast_1d(p)], np.uint64).view(T)


def _directed(ins, T, f64fun, exact_err=None):
    """An f32 operation in a directed rounding mode via float64 + exact error + round-to-odd."""
    mode = _mode(ins)

    def f(*xs):
        xs = [np.asarray(x, np.float64) for x in xs]
        s, e = exact_err(*xs) if exact_err else (f64fun(*xs), None)
        r = to_f32(s, mode, e)
        return _sum_zero_sign(r, *xs) if exact_err and mode == "rm" else r

    return f


def _sum_zero_sign(r, a, b):
    """IEEE 754: an exact zero sum is -0 when rounding toward -inf, unless both addends are +0
    (float64 arithmetic, which rounds to nearest, gives +0)."""
    zero = (r == 0) & ~((a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b))
    return np.where(zero, np.float32(-0.0), r).astype(np.float32) if np.any(zero) else r


@op("add", "sub")
def _add(ins, cx):
    T = cx.typ(ins)
    sub = ins.parts[0] == "sub"
    if T.kind == "f" and _mode(ins) not in ("", "rn"):
        if T != F32:
            raise cx.refuse(ins)
        return _generic(ins, cx, _directed(ins, T, None, lambda a, b: two_sum(a, -b if sub else b)), 2)
    if "sat" in ins.parts and T.kind == "i":
        info = np.iinfo(T)
        return _generic(
            ins,
            cx,
            lambda a, b: np.clip(
                np.asarray(a, np.int64) + (-1 if sub else 1) * np.asarray(b, np.int64), info.min, info.max
            ).astype(T),
            2,
        )
    if "cc" in ins.parts or ins.parts[0] in ("addc", "subc"):
        raise cx.refuse(ins)
    return _generic(ins, cx, np.subtract if sub else np.add, 2)


@op("mul")
def _mul(ins, cx):
    T = cx.typ(ins)
    if "wide" in ins.parts:
        W = _wide(T)
        return _generic_mixed(ins, cx, T, W, lambda a, b: np.asarray(a).astype(W) * np.asarray(b).astype(W), 2)
    if "hi" in ins.parts:
        return _generic(ins, cx, lambda a, b: _hi(a, b, T), 2)
    if T.kind == "f" and _mode(ins) not in ("", "rn"):
        if T != F32:
            raise cx.refuse(ins)
        return _generic(ins, cx, _directed(ins, T, np.multiply), 2)
    return _generic(ins, cx, np.multiply, 2)


def _generic_mixed(ins, cx, T, W, f, nsrc):
    """Sources of type T, result (and a third `mad` addend) of type W (the `.wide` forms)."""
    d = cx.dst(ins.operands[0], W)
    a, b = cx.src(ins.operands[1], T), cx.src(ins.operands[2], T)
    if nsrc == 2:
        return lambda S, idx: d(S, idx, f(a(S, idx), b(S, idx)))
    c = cx.src(ins.operands[3], W)
    return lambda S, idx: d(S, idx, f(a(S, idx), b(S, idx)) + c(S, idx))


@op("mad", "fma")
def _mad(ins, cx):
    T = cx.typ(ins)
    if "wide" in ins.parts:
        W = _wide(T)
        return _generic_mixed(ins, cx, T, W, lambda a, b: np.asarray(a).astype(W) * np.asarray(b).astype(W), 3)
    if "hi" in ins.parts:
        return _generic(ins, cx, lambda a, b, c: _hi(a, b, T) + c, 3)
    if T.kind in "iu":
        return _generic(ins, cx, lambda a, b, c: a * b + c, 3)
    if T == F64:
        if _mode(ins) not in ("", "rn"):
            raise cx.refuse(ins)
        return _generic(ins, cx, fma64_exact, 3)
    if T != F32:
        raise cx.refuse(ins)
    mode = _mode(ins) or "rn"

    def fma32(a, b, c):  # the product of two floats is exact in float64; one error term left
        p = _f64(a) * _f64(b)
        c = _f64(c)
        if mode == "rn":
            return np.asarray(add_to_f32(p, c))
        s, e = two_sum(p, c)
        r = to_f32(s, mode, e)
        return _sum_zero_sign(r, p, c) if mode == "rm" else r

    return _generic(ins, cx, fma32, 3)


@op("mul24", "mad24")
def _mul24(ins, cx):
    T = cx.typ(ins)

    def m24(a, b, *c):
        a64, b64 = (np.asarray(x).astype(np.int64) for x in (a, b))
        if T.kind == "i":
            a64, b64 = ((x << 40) >> 40 for x in (a64, b64))
        else:
            a64, b64 = a64 & 0xFFFFFF, b64 & 0xFFFFFF
        p = a64 * b64
        r = (p >> 16) if "hi" in ins.parts else p
        r = (r & 0xFFFFFFFF).astype(np.uint32).view(T)
        return r + c[0] if c else r

    return _generic(ins, cx, m24, 3 if ins.parts[0] == "mad24" else 2)


def _idiv(T, rem):
    def f(a, b):
        a64 = np.asarray(a).astype(np.int64 if T.kind == "i" or T.itemsize < 8 else np.uint64)
        b64 = np.asarray(b).astype(a64.dtype)
        zero = b64 == 0
        bb = np.where(zero, 1, b64).astype(a64.dtype)
        if T.kind == "i":
            q = np.abs(a64) // np.abs(bb) * np.where((a64 < 0) != (bb < 0), -1, 1)
        else:
            q = a64 // bb
        if rem:
            r = (a64 - q * bb).astype(T)
            return np.where(zero, a, r).astype(T)
        return np.where(zero, T.type(-1) if T.kind == "i" else np.iinfo(T).max, q.astype(T)).astype(T)

    return f


@op("div")
def _div(ins, cx):
    T = cx.typ(ins)
    if T.kind in "iu":
        return _generic(ins, cx, _idiv(T, False), 2)
    if _mode(ins) not in ("", "rn") and T == F32:
        return _generic(ins, cx, _directed(ins, T, np.divide), 2)
    if "approx" in ins.parts and T == F32:
        return _generic(ins, cx, _div_approx, 2)
    return _generic(ins, cx, np.divide, 2)  # .rn and .full: correctly rounded here


def _div_approx(a, b):
    """div.approx.f32 is a * (1/b): for 2^126 < |b| < 2^128 the ISA says the result is 0, or NaN when a is
    infinite (the reciprocal underflows); elsewhere the quotient, correctly rounded here (GPU: 2 ulp)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    huge = np.isfinite(b) & (np.abs(b) > np.float32(2.0**126))
    if not huge.any():
        return np.divide(a, b)
    zero = np.copysign(np.zeros_like(b), b)  # 1/b underflowed to a zero of b's sign
    return np.where(huge, a * zero, np.divide(a, b)).astype(a.dtype)


@op("rem")
def _rem(ins, cx):
    return _generic(ins, cx, _idiv(cx.typ(ins), True), 2)


@op("abs")
def _abs(ins, cx):
    return _generic(ins, cx, np.abs, 1)


@op("neg")
def _neg(ins, cx):
    return _generic(ins, cx, np.negative, 1)


def canonical_nan(dt):
    """The PTX ISA's canonical NaN: all exponent and mantissa bits set, sign clear (0x7fffffff for .f32).
    min/max return it when both operands are NaN, except min.f64/max.f64 without .NaN: on an H200 they
    returned the second operand, quieted (tests/ptx_corpus, fmin_fmax_nan_signed_zero)."""
    dt = np.dtype(dt)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return np.array([np.iinfo(u).max >> 1], u).view(dt)[0]


def _fminmax(is_min, nan):
    def f(a, b):
        a, b = np.asarray(a), np.asarray(b)
        a, b = np.broadcast_arrays(a, b)
        first = np.signbit(a) > np.signbit(b) if is_min else np.signbit(a) < np.signbit(b)
        pick_a = (a < b) if is_min else (a > b)
        pick_a = pick_a | ((a == b) & first) | np.isnan(b)
        r = np.where(pick_a, a, b)
        both = (np.isnan(a) | np.isnan(b)) if nan else (np.isnan(a) & np.isnan(b))
        if a.dtype == np.float64 and not nan:  # the second NaN, quieted, as an H200 returned (see canonical_nan)
            quiet = (b.view(np.uint64) | np.uint64(1 << 51)).view(np.float64)
            return np.where(both, quiet, r).astype(a.dtype)
        return np.where(both, canonical_nan(a.dtype), r).astype(a.dtype)

    return f


@op("min", "max")
def _minmax(ins, cx):
    T = cx.typ(ins)
    is_min = ins.parts[0] == "min"
    if T.kind == "f":
        return _generic(ins, cx, _fminmax(is_min, "NaN" in ins.parts), 2)
    return _generic(ins, cx, np.minimum if is_min else np.maximum, 2)


@op("sqrt")
def _sqrt(ins, cx):
    T = cx.typ(ins)
    if T == F32 and _mode(ins) not in ("", "rn"):
        return _generic(ins, cx, _directed(ins, T, np.sqrt), 1)
    return _generic(ins, cx, np.sqrt, 1)


def _approx(f64fun):
    def f(a):
        a = np.asarray(a)
        return f64fun(a.astype(np.float64)).astype(a.dtype)

    return f


_UNARY = {
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


@op(*_UNARY)
def _unary(ins, cx):
    return _generic(ins, cx, _approx(_UNARY[ins.parts[0]]), 1)


@op("rcp")
def _rcp(ins, cx):
    T = cx.typ(ins)
    if T == F32 and _mode(ins) not in ("", "rn"):
        return _generic(ins, cx, _directed(ins, T, lambda x: 1.0 / x), 1)
    return _generic(ins, cx, lambda x: T.type(1) / x, 1)


@op("copysign")
def _copysign(ins, cx):
    return _generic(ins, cx, lambda a, b: np.copysign(b, a), 2)


# ----------------------------------------------------------------------------- logic and bits
@op("and", "or", "xor")
def _logic(ins, cx):
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.parts[0]]
    return _generic(ins, cx, f, 2)


@op("not")
def _not(ins, cx):
    return _generic(ins, cx, np.invert, 1)


@op("cnot")
def _cnot(ins, cx):
    T = cx.typ(ins)
    return _generic(ins, cx, lambda a: (np.asarray(a) == 0).astype(T), 1)


@op("shl", "shr")
def _shift(ins, cx):
    T = cx.typ(ins)
    bits = 8 * T.itemsize
    d = cx.dst(ins.operands[0], T)
    a = cx.src(ins.operands[1], T)
    b = cx.src(ins.operands[2], DTYPES["u32"])
    left = ins.parts[0] == "shl"
    arith = T.kind == "i" and not left

    def run(S, idx):
        x, n = np.asarray(a(S, idx)), np.asarray(b(S, idx)).astype(np.uint64)
        big = n >= bits
        n = np.minimum(n, bits - 1).astype(T)
        if left:
            r = np.where(big, T.type(0), x << n)
        elif arith:
            r = x >> n  # shifting by width-1 already gives the sign fill for big amounts
        else:
            r = np.where(big, T.type(0), x >> n)
        d(S, idx, r.astype(T))

    return run
