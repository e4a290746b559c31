"""Typed register values: PTX types as NumPy dtypes, operand readers/writers, float rounding.

Why: every PTX instruction names the type it works in (`add.s32`, `fma.rn.f32`), while a
register keeps the type it was declared with (`.reg .b32 %r<9>`). Reading a register as
another type of the same width is a free NumPy `.view`; narrower or wider types are
truncated or extended the way the PTX ISA says for `ld`/`cvt`. Values are NumPy vectors,
one element per thread of the group being executed, so integer arithmetic wraps exactly
like the GPU and `.f32` arithmetic rounds to float32.
"""

from __future__ import annotations

import numpy as np

DTYPES = {
    "pred": np.bool_,
    "b8": np.uint8,
    "u8": np.uint8,
    "s8": np.int8,
    "b16": np.uint16,
    "u16": np.uint16,
    "s16": np.int16,
    "f16": np.float16,
    "b32": np.uint32,
    "u32": np.uint32,
    "s32": np.int32,
    "f32": np.float32,
    "b64": np.uint64,
    "u64": np.uint64,
    "s64": np.int64,
    "f64": np.float64,
}
DTYPES = {k: np.dtype(v) for k, v in DTYPES.items()}
UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def convert(v, src, dst):
    """Bits of type `src` as type `dst`: a view when widths match, else truncate/extend."""
    if src == dst:
        return v
    if src.kind == "b" or dst.kind == "b":
        return v != 0 if dst.kind == "b" else np.asarray(v).astype(dst)
    if src.itemsize == dst.itemsize:
        return v.view(dst)
    if src.kind == "f" or dst.kind == "f":
        return np.asarray(v).astype(dst)
    if src.itemsize < dst.itemsize:  # extend by the source's signedness, as ld/cvt do
        return np.asarray(v).astype(SIGNED[dst.itemsize] if src.kind == "i" else UNSIGNED[dst.itemsize]).view(dst)
    return np.asarray(v).astype(UNSIGNED[src.itemsize]).astype(UNSIGNED[dst.itemsize]).view(dst)


def immediate(imm, dt):
    """A literal as a NumPy scalar of type `dt` (0f/0d literals keep their exact bits)."""
    v = imm.value
    if isinstance(v, float):
        if dt.kind == "f":
            return dt.type(v)
        bits = np.float32(v) if imm.bits == 32 else np.float64(v)
        return convert(np.array([bits]), bits.dtype, dt)[0] if imm.bits else dt.type(int(v))
    if dt.kind == "f":
        return dt.type(v)
    if dt.kind == "b":
        return np.bool_(v)
    return np.array([v & ((1 << (8 * dt.itemsize)) - 1)], UNSIGNED[dt.itemsize]).view(dt)[0]


# ----------------------------------------------------------------------------- float rounding
def round_odd(s, e):
    """Make an inexact float64 sum `s` (exact error `e`) round-to-odd, so that a second rounding
    to float32 in any mode is correct: 53 bits >= 24 + 2 (Boldo & Melquiond). An even `s` with an
    error moves one step toward the exact value: its bit pattern + 1 away from zero, - 1 toward it
    (two_sum leaves e = 0 where s is not finite, and s = 0 only when the sum is exact)."""
    bits = s.view(np.int64)
    fix = (e != 0) & ((bits & 1) == 0)
    if not fix.any():
        return s
    step = np.where(np.signbit(s) == np.signbit(e), 1, -1)
    return (bits + np.where(fix, step, 0)).view(np.float64)


def two_sum(a, b):
    """s = fl(a + b) and the exact error e, with a + b == s + e (Knuth)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


_F32_NORMAL_BITS = np.float64(2.0**-126).view(np.int64)


def add_to_f32(p, c):
    """float64 p + c rounded once, to nearest, to float32 (fma.rn.f32 with p the exact product).

    Why not always two_sum: rounding to float64 first and then to float32 differs from rounding once only
    where the float64 sum lands exactly halfway between two float32 numbers (its low 29 mantissa bits
    10...0) or among float32 subnormals (other halfway patterns): the exact error is worked out there
    alone, which at a million threads saves a dozen full-size temporaries."""
    if np.ndim(p) == 0 and np.ndim(c) == 0:  # every operand the same for all threads (uniform registers)
        return add_to_f32(np.atleast_1d(p), np.atleast_1d(c))[0]
    s = p + c
    bits = s.view(np.int64)
    low = bits & 0x1FFFFFFF
    risky = low == 0x10000000
    np.bitwise_and(bits, np.int64(0x7FFFFFFFFFFFFFFF), out=low)  # |s| as bits, in the same buffer
    risky |= low < _F32_NORMAL_BITS  # below float32's normal range (NaN's bits are above it)
    del low
    r = s.astype(np.float32)
    if risky.any():
        k = np.flatnonzero(risky)
        ss, e = two_sum(np.broadcast_to(p, s.shape)[k], np.broadcast_to(c, s.shape)[k])
        r[k] = to_f32(ss, "rn", e)
    return r


def to_f32(s, mode="rn", e=None):
    """Round float64 values to float32 in PTX rounding mode rn/rz/rm/rp."""
    s = np.asarray(s, np.float64)
    if e is not None:
        s = round_odd(s, e)
    r = s.astype(np.float32)
    if mode in ("rn", "rni", ""):
        return r
    r64 = r.astype(np.float64)
    if mode in ("rz", "rzi"):
        bad = np.abs(r64) > np.abs(s)
        toward = np.zeros_like(r)
    elif mode in ("rm", "rmi"):
        bad = r64 > s
        toward = np.full_like(r, -np.inf)
    else:
        bad = r64 < s
        toward = np.full_like(r, np.inf)
    return np.where(bad, np.nextafter(r, toward), r)


def ftz32(v):
    """Flush float32 subnormals to sign-preserving zero (the `.ftz` modifier)."""
    v = np.asarray(v)
    tiny = (v != 0) & (np.abs(v) < np.float32(1.1754943508222875e-38))
    return np.where(tiny, np.copysign(np.float32(0), v), v).astype(v.dtype) if np.any(tiny) else v


def fma64_exact(a, b, c):
    """Correctly rounded a*b+c in float64, element by element with exact rationals."""
    from fractions import Fraction

    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64))
    out = a * b + c
    for i in np.flatnonzero(np.isfinite(out) & np.isfinite(a * b)):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        if exact != 0:
            try:
                out[i] = float(exact)
            except OverflowError:
                out[i] = np.inf if exact > 0 else -np.inf
    return out


def init_bytes(init, dt) -> np.ndarray:
    """A global's initialiser as its type's bytes. A negative literal in an unsigned type keeps its two's
    complement bits, as ptxas stores it (cuda::std's headers, which cooperative_groups.h pulls in, write
    `.u32 ... = -125`), where np.array(-125, np.uint32) raised OverflowError."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        bits = 8 * dt.itemsize
        unsigned = np.dtype(f"u{dt.itemsize}")
        return np.array([int(x) & ((1 << bits) - 1) for x in init], unsigned).view(np.uint8)
    return np.array(init, dt).view(np.uint8)
