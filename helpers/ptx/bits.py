"""Bit instructions: popc, clz, brev, bfind, bfe, bfi, prmt.

Why apart from alu.py: they work on raw bits of unsigned views, bit by bit where the PTX ISA
defines them so (bfe's sign fill, bfind's .shiftamt, prmt's byte selectors).
"""

from __future__ import annotations

import numpy as np

from .alu import op
from .values import DTYPES, UNSIGNED


def _popc(x, T):
    return np.bitwise_count(np.asarray(x).view(UNSIGNED[T.itemsize])).astype(np.uint32)


def _bitlen(u, bits):
    """Number of significant bits of unsigned values (0 for 0)."""
    u = np.asarray(u).astype(np.uint64)
    n = np.zeros(u.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= bits:
            continue
        big = (u >> np.uint64(s)) != 0
        n += np.where(big, s, 0)
        u = np.where(big, u >> np.uint64(s), u)
    return n + (u != 0)


@op("popc", "clz", "brev", "bfind")
def _bits(ins, cx):
    T = cx.typ(ins)
    bits = 8 * T.itemsize
    U = UNSIGNED[T.itemsize]
    kind = ins.parts[0]
    out = T if kind == "brev" else DTYPES["u32"]
    d = cx.dst(ins.operands[0], out)
    a = cx.src(ins.operands[1], T)

    def run(S, idx):
        x = np.asarray(a(S, idx))
        u = x.view(U) if x.ndim else np.asarray([x]).view(U)
        if kind == "popc":
            r = _popc(u, T)
        elif kind == "clz":
            r = (bits - _bitlen(u, bits)).astype(np.uint32)
        elif kind == "brev":
            r = np.zeros(u.shape, np.uint64)
            v = u.astype(np.uint64)
            for i in range(bits):
                r |= ((v >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
            r = r.astype(U).view(T)
        else:  # bfind: position of the most significant non-sign bit, 0xFFFFFFFF if none
            v = np.where(u.view(T) < 0, ~u, u) if T.kind == "i" else u
            n = _bitlen(v, bits)
            r = np.where(n == 0, 0xFFFFFFFF, n - 1).astype(np.uint32)
            if "shiftamt" in ins.parts:
                r = np.where(n == 0, 0xFFFFFFFF, bits - 1 - r).astype(np.uint32)
        d(S, idx, r)

    return run


@op("bfe")
def _bfe(ins, cx):
    T = cx.typ(ins)
    bits = 8 * T.itemsize
    d, a = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], T)
    b, c = cx.src(ins.operands[2], DTYPES["u32"]), cx.src(ins.operands[3], DTYPES["u32"])

    def run(S, idx):
        x = np.asarray(a(S, idx)).astype(np.int64 if T.kind == "i" else np.uint64).astype(object)
        pos = np.asarray(b(S, idx)).astype(np.int64) & 0xFF
        ln = np.asarray(c(S, idx)).astype(np.int64) & 0xFF
        x, pos, ln = np.broadcast_arrays(x, pos, ln)
        out = []
        for xi, p, n in zip(x.ravel(), pos.ravel(), ln.ravel()):
            xi, p, n = int(xi), int(p), int(n)
            msb = min(p + n - 1, bits - 1)
            sbit = (xi >> msb) & 1 if (T.kind == "i" and n) else 0
            v = 0
            for i in range(bits):
                bit = ((xi >> (p + i)) & 1) if (i < n and p + i <= bits - 1) else sbit
                v |= bit << i
            out.append(v)
        d(S, idx, np.array(out, np.uint64).astype(UNSIGNED[T.itemsize]).view(T))

    return run


@op("bfi")
def _bfi(ins, cx):
    T = cx.typ(ins)
    bits = 8 * T.itemsize
    U = UNSIGNED[T.itemsize]
    d, a, b = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], T), cx.src(ins.operands[2], T)
    c, e = cx.src(ins.operands[3], DTYPES["u32"]), cx.src(ins.operands[4], DTYPES["u32"])

    def run(S, idx):
        x, y = np.asarray(a(S, idx)).astype(U).astype(np.uint64), np.asarray(b(S, idx)).astype(U).astype(np.uint64)
        pos = np.asarray(c(S, idx)).astype(np.uint64) & np.uint64(0xFF)
        ln = np.asarray(e(S, idx)).astype(np.uint64) & np.uint64(0xFF)
        ln = np.minimum(ln, np.uint64(bits))
        mask = np.where(ln >= 64, np.uint64(2**64 - 1), (np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1))
        mask = np.where(pos >= bits, np.uint64(0), mask << np.minimum(pos, np.uint64(63)))
        r = (y & ~mask) | ((x << np.minimum(pos, np.uint64(63))) & mask)
        d(S, idx, (r & np.uint64(2**bits - 1)).astype(U).view(T))

    return run


@op("prmt")
def _prmt(ins, cx):
    if len(ins.parts) > 2:
        raise cx.refuse(ins)
    U32 = DTYPES["u32"]
    d, a, b, c = (cx.dst(ins.operands[0], U32), *(cx.src(o, U32) for o in ins.operands[1:4]))

    def run(S, idx):
        x, y, s = np.broadcast_arrays(*(np.atleast_1d(np.asarray(g(S, idx))).astype(np.uint64) for g in (a, b, c)))
        pool = x | (y << np.uint64(32))
        r = np.zeros(x.shape, np.uint64)
        for i in range(4):
            sel = (s >> np.uint64(4 * i)) & np.uint64(0xF)
            byte = (pool >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            sign = np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0))
            r |= np.where(sel & np.uint64(8), sign, byte) << np.uint64(8 * i)
        d(S, idx, r.astype(np.uint32))

    return run
