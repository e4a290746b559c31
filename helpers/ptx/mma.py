"""Warp matrix instructions: wmma.load, wmma.mma and wmma.store (nvcuda::wmma in CUDA C).

Why this model: PTX keeps a fragment's layout across the warp's registers opaque (only wmma.load
and wmma.store see it), so any layout that load, mma and store share is a correct one. Here lane L
holds elements 8L .. 8L+7 of its matrix tile in row-major order (a 16x16 tile: two lanes per row);
a 16-bit fragment whose registers hold more than 8 values (an .f16 matrix_a/b: 8 registers, 16
halves) holds them twice, as the hardware's fragments also hold copies. Each lane reads and writes
its own elements through memory.access, so the access log, bounds and race verdicts cover them.

Rounding, stated because the hardware's is not IEEE and NVIDIA does not document it: each wmma.mma
sums the products of one k-step (16 of them, each exact) and C in float64 and rounds that once, to float32 for an
.f32 accumulator or to nearest even in float16 for an .f16 one (overflow gives inf, as on the GPU).
A GPU may differ from this in the last bits of a float32 result, never in an f16 overflow.
"""

from __future__ import annotations

import numpy as np

from ..accesses import READ, WRITE
from .halves import bf16_to_f64, f64_to_f16
from .memory import _space, access
from .parser import Vec
from .warp import check

U16, U32, F16, F32, F64 = (np.dtype(t) for t in (np.uint16, np.uint32, np.float16, np.float32, np.float64))
_SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16)}
_FULL = np.uint32(0xFFFFFFFF)


def _shape(ins, cx):
    got = [p for p in ins.parts if p in _SHAPES]
    if not got:
        raise cx.refuse(ins)
    return _SHAPES[got[0]]


def _dims(which, shape):
    """(rows, cols) of fragment `which` (a, b, c or d) for an (m, n, k) shape."""
    m, n, k = shape
    return {"a": (m, k), "b": (k, n)}.get(which, (m, n))


def _regs(op, cx, ins):
    if not isinstance(op, Vec):
        raise cx.refuse(ins)
    return op.items


def _elements(S, idx, rows, cols):
    """Per running thread: its lane and the (row, col) of each of its 8 elements (shape (m, 8))."""
    t = S.tids(idx)
    lane = (t % 32) if S.nblk == 1 else S.warps.lane[t]
    per = rows * cols // 32
    e = lane[:, None].astype(np.int64) * per + np.arange(per)
    return e // cols, e % cols


def decode_wmma(ins, cx):
    kind = ins.parts[1]  # load / mma / store
    if kind == "mma":
        return _decode_mma(ins, cx)
    if kind not in ("load", "store"):
        raise cx.refuse(ins)
    which = ins.parts[2]
    etype = ins.parts[-1]
    if etype not in ("f16", "bf16", "f32") or which not in "abcd":
        raise cx.refuse(ins)
    col = "col" in ins.parts
    rows, cols = _dims(which, _shape(ins, cx))
    space = _space(ins)
    if space not in ("generic", "global", "shared"):
        raise cx.refuse(ins)
    T = U16 if etype in ("f16", "bf16") else F32
    size = np.uint64(T.itemsize)
    loc = cx.prog.loc_id(cx.fn, ins)
    if kind == "load":
        dst_op, mem_op, ld_op = ins.operands[0], ins.operands[1], ins.operands[2]
    else:
        mem_op, dst_op, ld_op = ins.operands[0], ins.operands[1], ins.operands[2]
    regs = _regs(dst_op, cx, ins)
    addr, ldm = cx.addr(mem_op), cx.src(ld_op, U32)
    pack = 2 if T == U16 else 1
    per = rows * cols // 32
    if len(regs) * pack < per:
        raise cx.refuse(ins)
    R = U32 if pack == 2 else F32

    def offsets(S, idx):
        r, c = _elements(S, idx, rows, cols)
        ld = np.asarray(ldm(S, idx)).astype(np.uint64).reshape(-1, 1)
        base = np.asarray(addr(S, idx), np.uint64).reshape(-1, 1)
        lin = (c * ld + r) if col else (r * ld + c)  # element offsets as uint64 (ld is uint64)
        return base + lin.astype(np.uint64) * size

    if kind == "load":
        sets = [cx.dst(x, R) for x in regs]

        def load(S, idx):
            check(S, idx, _FULL, loc, f"wmma.load.{which}")
            a = offsets(S, idx)
            # one access for every (thread, element): each thread's addresses in a row, read as one vector
            got = access(S, space, a.reshape(-1), T, READ, np.repeat(S.tids(idx), per), loc).reshape(-1, per)
            vals = [got[:, s] for s in range(per)]
            for i, st in enumerate(sets):
                if pack == 2:
                    lo, hi = vals[(2 * i) % per], vals[(2 * i + 1) % per]
                    st(S, idx, lo.astype(U32) | (hi.astype(U32) << np.uint32(16)))
                else:
                    st(S, idx, vals[i % per])

        return load
    gets = [cx.src(x, R) for x in regs]

    def store(S, idx):
        check(S, idx, _FULL, loc, f"wmma.store.{which}")
        a = offsets(S, idx)
        t = S.tids(idx)
        vals = np.empty((len(t), per), T)
        for s in range(per):
            v = np.broadcast_to(np.asarray(gets[s // pack](S, idx)), (len(t),))
            if pack == 2:
                v = ((v >> np.uint32(16 * (s % 2))) & np.uint32(0xFFFF)).astype(U16)
            vals[:, s] = v
        access(S, space, a.reshape(-1), T, WRITE, np.repeat(t, per), loc, vals.reshape(-1))

    return store


def _unpack(gets, per, S, idx, kind):
    """A fragment's registers as float64 values, shape (threads, per)."""
    if kind == "f32":
        return np.stack([np.asarray(g(S, idx), F32).astype(F64) for g in gets[:per]], axis=1)
    words = [np.asarray(g(S, idx), U32) for g in gets[: (per + 1) // 2]]
    halves = []
    for w in words:
        halves += [(w & np.uint32(0xFFFF)).astype(U16), (w >> np.uint32(16)).astype(U16)]
    h = np.stack(halves[:per], axis=1)
    return bf16_to_f64(h) if kind == "bf16" else h.view(F16).astype(F64)


def _warps_of(S, t):
    """The warps of the running threads: (first thread of each, and each thread's warp among them)."""
    lane = (t % 32) if S.nblk == 1 else S.warps.lane[t]
    firsts, which = np.unique(t - lane, return_inverse=True)
    return firsts, which, lane


def _warp_tiles(vals, t, S, rows, cols, firsts, which, lane):
    """Each running warp's whole (rows, cols) tile from its lanes' elements (shape (warps, rows, cols)); a lane
    that is not running gives zeros (and check() has recorded the misuse)."""
    per = rows * cols // 32
    out = np.zeros((len(firsts), 32, per), F64)
    out[which, lane] = vals
    return out.reshape(len(firsts), rows, cols)


def _decode_mma(ins, cx):
    m, n, k = _shape(ins, cx)
    types = [p for p in ins.parts if p in ("f16", "f32", "bf16")]
    if len(types) == 4 and types[1] == types[2]:  # .f32.bf16.bf16.f32: d, a, b, c
        dt, ab, ct = types[0], types[1], types[3]
    elif len(types) == 2:  # .f32.f32 / .f16.f16 / .f32.f16 ...: f16 inputs, d and c types
        dt, ab, ct = types[0], "f16", types[1]
    else:
        raise cx.refuse(ins)
    if "satfinite" in ins.parts or (ab == "bf16" and (dt, ct) != ("f32", "f32")):
        raise cx.refuse(ins)
    d_ops, a_ops, b_ops, c_ops = (_regs(o, cx, ins) for o in ins.operands[:4])
    loc = cx.prog.loc_id(cx.fn, ins)
    RD, RC = (U32 if t == "f16" else F32 for t in (dt, ct))
    sets = [cx.dst(x, RD) for x in d_ops]
    ga = [cx.src(x, U32) for x in a_ops]
    gb = [cx.src(x, U32) for x in b_ops]
    gc = [cx.src(x, RC) for x in c_ops]
    pa, pb, pc = m * k // 32, k * n // 32, m * n // 32

    def mma(S, idx):
        check(S, idx, _FULL, loc, "wmma.mma")
        t = S.tids(idx)
        firsts, which, lane = _warps_of(S, t)
        A = _warp_tiles(_unpack(ga, pa, S, idx, ab), t, S, m, k, firsts, which, lane)
        B = _warp_tiles(_unpack(gb, pb, S, idx, ab), t, S, k, n, firsts, which, lane)
        C = _unpack(gc, pc, S, idx, ct)
        r, c = _elements(S, idx, m, n)
        prod = np.matmul(A, B)  # one product per warp: exact products, summed in float64
        acc = prod[which[:, None], r, c] + C
        if dt == "f32":
            out = acc.astype(F32)
            for i, st in enumerate(sets):
                st(S, idx, out[:, i])
            return
        h = f64_to_f16(acc).view(U16).astype(U32)
        for i, st in enumerate(sets):
            st(S, idx, h[:, 2 * i] | (h[:, 2 * i + 1] << np.uint32(16)))

    return mma
