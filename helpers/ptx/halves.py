"""Half-precision instructions: .f16 and .bf16 arithmetic (and their x2 pairs) and conversions.

Why a module of its own: bf16 has no NumPy type, so its values stay 16-bit patterns (the top half
of a float32) and every result is rounded here, to nearest even with 8 significant bits; .f16 keeps
NumPy's float16. Each result is worked out exactly (float64 sum and its error, made round-to-odd,
values.round_odd) and rounded once, as the PTX ISA specifies `.rn`: a fused `fma.rn.f16` is one
rounding, not a float16 product then a float16 sum. `wrap(decoders)` sends only instructions that
name a half type here, at decode time, so the float32 paths pay nothing.
"""

from __future__ import annotations

import numpy as np

from .values import DTYPES, round_odd, two_sum

U16, U32 = np.dtype(np.uint16), np.dtype(np.uint32)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
HALVES = ("f16", "bf16", "f16x2", "bf16x2")
_ARITH = ("add", "sub", "mul", "fma", "neg", "abs", "min", "max")


# ----------------------------------------------------------------------------- values
def bf16_to_f64(bits):
    """bf16 bit patterns -> float64 (exact: a bf16 is the top half of a float32)."""
    return (np.asarray(bits).astype(U32) << np.uint32(16)).view(F32).astype(F64)


def f32_to_bf16(x):
    """float32 -> bf16 bits, rounded to nearest even (cvt.rn.bf16.f32); NaN -> the canonical 0x7FFF."""
    b = np.asarray(x, F32).view(U32)
    r = ((b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(U16)
    nan = np.isnan(np.asarray(x, F32))
    return np.where(nan, np.uint16(0x7FFF), r).astype(U16) if nan.any() else r


def _odd_f32(s):
    """float64 -> float32 rounded to odd (toward zero, last bit set when inexact): then rounding that
    float32 to 8 or 11 bits is the same as rounding s once (24 >= 11 + 2)."""
    r = s.astype(F32)
    r64 = r.astype(F64)
    over = np.isfinite(s) & (np.abs(r64) > np.abs(s))
    r = np.where(over, np.nextafter(r, np.float32(0)), r).astype(F32)
    inexact = np.isfinite(s) & (r.astype(F64) != s)
    bits = r.view(U32) | inexact.astype(U32)
    return bits.view(F32)


def f64_to_bf16(s, mode="rn"):
    """float64 -> bf16 bits in rounding mode rn (nearest even) or rz (toward zero)."""
    s = np.asarray(s, F64)
    if mode == "rz":
        b = _odd_f32(s).view(U32) & np.uint32(0xFFFF0000)  # truncating the odd float32 is truncating s
        out = (b >> np.uint32(16)).astype(U16)
        return np.where(np.isnan(s), np.uint16(0x7FFF), out).astype(U16)
    return f32_to_bf16(_odd_f32(s))


def f64_to_f16(s, mode="rn"):
    """float64 -> float16, one rounding (NumPy's float64->float16 cast rounds to nearest even)."""
    s = np.asarray(s, F64)
    r = s.astype(F16)
    if mode == "rz":
        over = np.isfinite(s) & (np.abs(r.astype(F64)) > np.abs(s))
        r = np.where(over, np.nextafter(r, np.float16(0)), r).astype(F16)
    return r


# ----------------------------------------------------------------------------- arithmetic
def _exact_fma(a, b, c):
    """a*b + c of float64 values holding half-precision numbers: the product is exact (at most 22
    bits), the sum is made round-to-odd so the final rounding to 8 or 11 bits is single."""
    p = a * b
    s, e = two_sum(p, c)
    return round_odd(s, e)


def _half_fn(base, bf, mode):
    """The operation on half-precision values (as float64) rounded back to the half type."""
    to = (lambda s: f64_to_bf16(s, mode)) if bf else (lambda s: f64_to_f16(s, mode))
    if base == "fma":
        return lambda a, b, c: to(_exact_fma(a, b, c))
    if base in ("add", "sub"):
        sign = -1.0 if base == "sub" else 1.0
        return lambda a, b: to(_exact_fma(a, np.float64(1.0), sign * b))
    if base == "mul":
        return lambda a, b: to(a * b)  # exact in float64: one rounding
    if base == "neg":
        return lambda a: to(-a)
    if base == "abs":
        return lambda a: to(np.abs(a))
    nan_out = np.float64(np.nan)

    def minmax(a, b):  # the non-NaN operand; canonical NaN when both are NaN
        pick = np.fmin if base == "min" else np.fmax
        r = pick(a, b)
        return to(np.where(np.isnan(a) & np.isnan(b), nan_out, r))

    return minmax


def _decode_arith(ins, cx):
    t = next(p for p in ins.parts if p in HALVES)
    bf, pair = t.startswith("bf"), t.endswith("x2")
    mode = "rz" if "rz" in ins.parts else "rn"
    if any(p in ins.parts for p in ("rm", "rp", "sat", "relu", "oob")) or ("ftz" in ins.parts and bf):
        raise cx.refuse(ins)
    base = ins.parts[0]
    f = _half_fn(base, bf, mode)
    nsrc = {"fma": 3, "neg": 1, "abs": 1}.get(base, 2)
    R = U32 if pair else U16
    d = cx.dst(ins.operands[0], R)
    srcs = [cx.src(o, R) for o in ins.operands[1 : 1 + nsrc]]
    read = bf16_to_f64 if bf else (lambda v: np.asarray(v).view(F16).astype(F64))
    write = (lambda r: r) if bf else (lambda r: np.asarray(r, F16).view(U16))

    def one(vals):
        return write(f(*(read(v) for v in vals)))

    if not pair:
        return lambda S, idx: d(S, idx, one([np.asarray(g(S, idx), U16) for g in srcs]))

    def run(S, idx):  # .x2: the low and high halves of each 32-bit register, independently
        vs = [np.asarray(g(S, idx), U32) for g in srcs]
        lo = one([(v & np.uint32(0xFFFF)).astype(U16) for v in vs]).astype(U32)
        hi = one([(v >> np.uint32(16)).astype(U16) for v in vs]).astype(U32)
        d(S, idx, lo | (hi << np.uint32(16)))

    return run


def _decode_cvt(ins, cx):
    """cvt to or from .bf16 (and .f16x2/.bf16x2 packing); other conversions stay in moves.py."""
    mode = "rz" if "rz" in ins.parts else "rn"
    types = [p for p in ins.parts[1:] if p in DTYPES or p in HALVES]
    if len(types) != 2 or any(p in ins.parts for p in ("relu", "satfinite", "sat", "rm", "rp", "rna")):
        raise cx.refuse(ins)
    to, frm = types
    if to in ("f16x2", "bf16x2"):  # cvt.rn.bf16x2.f32 d, hi, lo
        if frm != "f32":
            raise cx.refuse(ins)
        d = cx.dst(ins.operands[0], U32)
        hi, lo = cx.src(ins.operands[1], F32), cx.src(ins.operands[2], F32)
        half = (lambda x: f64_to_bf16(x, mode)) if to == "bf16x2" else (lambda x: f64_to_f16(x, mode).view(U16))

        def pack(S, idx):
            h = half(np.asarray(hi(S, idx), F64)).astype(U32)
            low = half(np.asarray(lo(S, idx), F64)).astype(U32)
            d(S, idx, low | (h << np.uint32(16)))

        return pack
    if to == "bf16":
        if frm not in ("f32", "f64", "f16"):
            raise cx.refuse(ins)
        d, a = cx.dst(ins.operands[0], U16), cx.src(ins.operands[1], DTYPES[frm])
        return lambda S, idx: d(S, idx, f64_to_bf16(np.asarray(a(S, idx)).astype(F64), mode))
    if frm == "bf16":
        if to not in ("f32", "f64", "f16"):
            raise cx.refuse(ins)
        T = DTYPES[to]
        d, a = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], U16)
        if to == "f16":
            return lambda S, idx: d(S, idx, f64_to_f16(bf16_to_f64(a(S, idx)), mode))
        return lambda S, idx: d(S, idx, bf16_to_f64(a(S, idx)).astype(T))
    raise cx.refuse(ins)


def wrap(decoders):
    """The decoders of add/sub/mul/fma/neg/abs/min/max/cvt, sending half-type instructions here.

    Only .f16 fma and the .bf16 and x2 forms need this module: `add.f16` and `mul.f16` in NumPy's
    float16 are already one correct rounding (24 bits >= 2 * 11 + 2)."""
    out = {}
    for name in (*_ARITH, "cvt"):
        original = decoders[name]

        def dec(ins, cx, original=original, name=name):
            parts = ins.parts
            if name == "cvt":
                if any(p in parts for p in ("bf16", "bf16x2", "f16x2")):
                    return _decode_cvt(ins, cx)
            elif any(p in parts for p in ("bf16", "bf16x2", "f16x2")) or (name == "fma" and "f16" in parts):
                return _decode_arith(ins, cx)
            return original(ins, cx)

        out[name] = dec
    return out
