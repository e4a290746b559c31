"""mov, cvt, setp, selp, slct and testp: moving values between types and comparing them.

Why the care: `cvt` is where C casts become PTX, and the GPU's rules differ from NumPy's
`astype`: float -> int conversions saturate (NaN: see _float_to_int), int -> float conversions and
float narrowing honour the rounding modifier, `.sat` clamps. Comparisons follow the PTX
table: ordered ops are false with a NaN operand, the `u` forms (equ, ltu, ...) are true.
"""

from __future__ import annotations

import numpy as np

from . import bits  # noqa: F401  (registers the bit instructions)
from .alu import OPS, _mode, op
from .parser import Vec
from .values import DTYPES, ftz32, to_f32

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
PRED = DTYPES["pred"]


@op("mov")
def _mov(ins, cx):
    T = cx.typ(ins)
    d, a = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], T)
    if isinstance(ins.operands[0], Vec) or isinstance(ins.operands[1], Vec):
        return lambda S, idx: d(S, idx, a(S, idx))
    return lambda S, idx: d(S, idx, a(S, idx))


def _float_to_int(x, D, mode):
    """Saturating float -> int, as `cvt.rzi.s32.f32` and friends do (NaN: see the end)."""
    src_f64 = x.dtype == np.float64
    x = np.asarray(x, np.float64) if x.dtype != np.float64 else np.asarray(x)
    r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, "": np.trunc}[mode](x)
    info = np.iinfo(D)
    nan = np.isnan(r)
    r = np.where(nan, 0, r)
    lo, hi = float(info.min), float(info.max)
    big = r >= hi
    out = np.clip(r, lo, hi).astype(D) if D.itemsize < 8 else np.where(big, 0, np.clip(r, lo, hi)).astype(D)
    out = np.where(big, D.type(info.max), out).astype(D)
    if (src_f64 or D.itemsize == 8) and nan.any():
        # NaN from .f64, or into a 64-bit integer, gives the top bit alone (INT_MIN; 2^31 or 2^63
        # unsigned): what an H200 returned in the differential corpus (float_to_int_specials,
        # rounding_to_integral). From .f32 into 32 bits or fewer it gives 0.
        top = np.array([1 << (8 * D.itemsize - 1)], np.uint64).astype(np.dtype(f"u{D.itemsize}")).view(D)[0]
        out = np.where(nan, top, out).astype(D)
    return out


def _narrow_directed(x, r, mode):
    """`r`, x rounded to nearest in a narrower float, moved one ulp where the mode rounds the other way
    (overflow included: rz and rm of a too-large positive value give the largest finite number)."""
    x64, r64 = np.asarray(x, np.float64), np.asarray(r).astype(np.float64)
    if mode == "rz":
        move, toward = np.abs(r64) > np.abs(x64), np.zeros_like(r)
    elif mode == "rm":
        move, toward = r64 > x64, np.full_like(r, -np.inf)
    else:
        move, toward = r64 < x64, np.full_like(r, np.inf)
    return np.where(move, np.nextafter(r, toward), r).astype(r.dtype)


def _int_directed(x, r, mode):
    """Integers rounded to nearest as `r`, moved one ulp where the mode rounds the other way. Exact in
    Python ints: going through float64 first would round 64-bit integers twice."""
    x = np.atleast_1d(x)
    r = np.atleast_1d(r).copy()
    for i, (v, f) in enumerate(zip(x.tolist(), r.tolist())):
        if not np.isfinite(f) or int(f) == v:  # cvt of a 64-bit int never overflows f32/f64
            continue
        down = mode == "rm" or (mode == "rz" and v > 0)
        if down and int(f) > v:
            r[i] = np.nextafter(r[i], r.dtype.type(-np.inf))
        elif not down and int(f) < v:
            r[i] = np.nextafter(r[i], r.dtype.type(np.inf))
    return r


@op("cvt")
def _cvt(ins, cx):
    types = [p for p in ins.parts[1:] if p in DTYPES]
    if len(types) != 2:
        raise cx.refuse(ins)
    D, Sr = DTYPES[types[0]], DTYPES[types[1]]
    mode = _mode(ins)
    d, a = cx.dst(ins.operands[0], D), cx.src(ins.operands[1], Sr)
    sat, ftz = "sat" in ins.parts, "ftz" in ins.parts

    def conv(x):
        x = np.asarray(x)
        if ftz and Sr == F32:
            x = ftz32(x)
        if D.kind == "f" and Sr.kind == "f":
            if D == Sr:
                r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}.get(mode, lambda v: v)(x)
            elif D == F32 and Sr == F64:
                r = to_f32(x, mode or "rn")
            else:
                r = x.astype(D)
                if D.itemsize < Sr.itemsize and mode in ("rz", "rm", "rp"):  # to .f16 by __float2half_rz...
                    r = _narrow_directed(x, r, mode)
        elif D.kind == "f":  # int -> float
            r = x.astype(D)
            if mode in ("rz", "rm", "rp"):
                r = _int_directed(x, r, mode)
        elif Sr.kind == "f":
            r = _float_to_int(x, D, mode)
        else:  # int -> int: wrap, or clamp with .sat
            if sat:
                info = np.iinfo(D)
                big = x.astype(object) if x.dtype.itemsize == 8 else x.astype(np.int64)
                r = np.clip(big, info.min, info.max).astype(D)
            else:
                r = x.astype(D)
        if sat and D.kind == "f":
            r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(D)
        if ftz and D == F32:
            r = ftz32(r)
        return r

    return lambda S, idx: d(S, idx, conv(a(S, idx)))


_CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "lo": np.less,
    "ls": np.less_equal,
    "hi": np.greater,
    "hs": np.greater_equal,
}


def comparison(name, T):
    """The compare function of setp/set for operator `name` on type T."""
    if name in ("lo", "ls", "hi", "hs") and T.kind == "i":
        T = np.dtype(T.str.replace("i", "u"))
    if name in ("num", "nan"):

        def f(a, b):
            nan = np.isnan(a) | np.isnan(b)
            return nan if name == "nan" else ~nan

        return f
    if name.endswith("u") and name[:-1] in _CMP and T.kind == "f":
        base = _CMP[name[:-1]]
        return lambda a, b: base(a, b) | np.isnan(a) | np.isnan(b)
    base = _CMP[name]
    if name == "ne" and T.kind == "f":  # ordered: false when either is NaN
        return lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b)
    return base


def _bool_op(parts):
    for p in ("and", "or", "xor"):
        if p in parts[2:]:
            return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[p]
    return None


@op("setp")
def _setp(ins, cx):
    T = cx.typ(ins)
    cmp = comparison(ins.parts[1], T)
    if T.kind == "u" and ins.parts[1] in ("lt", "le", "gt", "ge"):
        pass
    ftz = "ftz" in ins.parts and T == F32
    dst = ins.operands[0]
    dp, dq = dst.items if isinstance(dst, Vec) else (dst, None)
    sp = cx.dst(dp, PRED)
    sq = cx.dst(dq, PRED) if dq is not None else None
    a, b = cx.src(ins.operands[1], T), cx.src(ins.operands[2], T)
    bop = _bool_op(ins.parts)
    c = cx.src(ins.operands[3], PRED) if bop else None

    def run(S, idx):
        x, y = a(S, idx), b(S, idx)
        if ftz:
            x, y = ftz32(x), ftz32(y)
        t = np.asarray(cmp(x, y))
        if bop is not None:
            cc = c(S, idx)
            p, q = bop(t, cc), bop(~t, cc)
        else:
            p, q = t, ~t
        sp(S, idx, p)
        if sq is not None:
            sq(S, idx, q)

    return run


@op("set")
def _set(ins, cx):
    D, T = DTYPES[ins.parts[2]], DTYPES[ins.parts[-1]]
    cmp = comparison(ins.parts[1], T)
    d, a, b = cx.dst(ins.operands[0], D), cx.src(ins.operands[1], T), cx.src(ins.operands[2], T)
    one = D.type(1.0) if D.kind == "f" else D.type(-1) if D.kind == "i" else np.iinfo(D).max

    def run(S, idx):
        d(S, idx, np.where(cmp(a(S, idx), b(S, idx)), one, D.type(0)).astype(D))

    return run


@op("selp")
def _selp(ins, cx):
    T = cx.typ(ins)
    d, a, b, c = (
        cx.dst(ins.operands[0], T),
        cx.src(ins.operands[1], T),
        cx.src(ins.operands[2], T),
        cx.src(ins.operands[3], PRED),
    )
    return lambda S, idx: d(S, idx, np.where(c(S, idx), a(S, idx), b(S, idx)).astype(T))


@op("slct")
def _slct(ins, cx):
    T, C = DTYPES[ins.parts[-2]], DTYPES[ins.parts[-1]]
    d, a, b, c = (
        cx.dst(ins.operands[0], T),
        cx.src(ins.operands[1], T),
        cx.src(ins.operands[2], T),
        cx.src(ins.operands[3], C),
    )
    return lambda S, idx: d(S, idx, np.where(np.asarray(c(S, idx)) >= 0, a(S, idx), b(S, idx)).astype(T))


@op("testp")
def _testp(ins, cx):
    T = cx.typ(ins)
    d, a = cx.dst(ins.operands[0], PRED), cx.src(ins.operands[1], T)
    tiny = np.finfo(T).tiny
    f = {
        "finite": np.isfinite,
        "infinite": np.isinf,
        "number": lambda x: ~np.isnan(x),
        "notanumber": np.isnan,
        "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny),
        "subnormal": lambda x: (x != 0) & (np.abs(x) < tiny),
    }[ins.parts[1]]
    return lambda S, idx: d(S, idx, f(np.asarray(a(S, idx))))


__all__ = ["OPS", "comparison"]
