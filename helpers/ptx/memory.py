"""Memory spaces and the instructions that touch them: ld, st, cvta, isspacep (atom and red: atomics.py).

Why fake addresses: a kernel does pointer arithmetic, so every array needs an address.
Global array k lives in its own 2**40-byte window, at its middle, so that any pointer
computed from it (even a negative index) still tells which array it came from and how far
off it is. Shared, local and const variables get 2**24-byte windows in their own 32-bit
spaces, and generic addresses put those spaces above the global windows. An address
outside its array is recorded as out of bounds: reads give 0, writes are dropped, the
kernel goes on, as the Numba tracer does.

Each global/shared element access appends (array id, element, kind, thread, epoch, line)
rows, the log format of helpers.accesses; local and const accesses are bounds-checked only.
"""

from __future__ import annotations

import numpy as np

from ..accesses import READ, WRITE
from .parser import Reg, Vec
from .values import DTYPES

GSHIFT, SSHIFT = 40, 24
TAG = {"shared": 0x7000, "local": 0x7100, "const": 0x7200}
_SPACES = ("global", "shared", "local", "const", "param")
U64 = np.dtype(np.uint64)


def gbase(k):
    return ((k + 1) << GSHIFT) + (1 << (GSHIFT - 1))


def sbase(k):
    return ((k + 1) << SSHIFT) + (1 << (SSHIFT - 1))


class Window:
    """One variable or array: its bytes, and how its elements are named in the log."""

    def __init__(self, space, name, nbytes, itemsize, aid=None, shape=None, data=None, per_thread=False):
        self.space, self.name, self.nbytes, self.itemsize = space, name, nbytes, itemsize
        self.aid, self.shape = aid, shape or (max(nbytes // max(itemsize, 1), 0),)
        self.data, self.per_thread = data, per_thread


def unravel(flat, shape):
    """Flat element index -> index tuple, letting the first dimension run out of range."""
    out = []
    for n in reversed(shape[1:]):
        flat, r = divmod(flat, n)
        out.append(r)
    return (flat, *reversed(out))


def split(S, space, addr):
    """(window list, window number, signed offset) per thread for addresses in `space`."""
    if np.ndim(addr):
        a = np.asarray(addr)
        a = a.view(np.int64) if a.dtype == U64 else a.astype(np.int64, copy=False)
    else:
        a = np.int64(np.uint64(addr).astype(np.int64))
    if space == "global":
        k = (a >> GSHIFT) - 1
        return S.prog.gwin, k, a - (((k + 1) << GSHIFT) + (1 << (GSHIFT - 1)))
    k = (a >> SSHIFT) - 1
    wins = S.shared if space == "shared" else S.local if space == "local" else S.prog.cwin
    return wins, k, a - (((k + 1) << SSHIFT) + (1 << (SSHIFT - 1)))


def access(S, space, addr, T, kind, idx, loc, values=None):
    """Load (values None) or store `values` of type T at `addr` for threads idx; returns loads."""
    tids = S.tids(idx)
    m = len(tids)
    addr = np.asarray(addr, U64)
    if addr.shape != (m,):
        addr = np.broadcast_to(addr, (m,))
    if space == "generic":
        tag = (addr >> np.uint64(GSHIFT)).astype(np.int64)
        out = np.zeros(m, T) if values is None else None
        for sp in ("global", "shared", "local", "const"):
            sel = (tag < 0x7000) if sp == "global" else (tag == TAG[sp])
            if sp == "global":
                sel &= tag >= 0  # tag 0 (null and small pointers) falls into global: out of bounds
            if sel.all():  # every thread in one space: no copies
                return _access(
                    S, sp, addr if sp == "global" else addr & np.uint64((1 << GSHIFT) - 1), T, kind, tids, loc, values
                )
            if sel.any():
                sub = np.flatnonzero(sel)
                a = addr[sub] if sp == "global" else addr[sub] & np.uint64((1 << GSHIFT) - 1)
                r = _access(S, sp, a, T, kind, tids[sub], loc, None if values is None else _take(values, sub))
                if out is not None:
                    out[sub] = r
        return out
    return _access(S, space, addr, T, kind, tids, loc, values)


def _take(v, sub):
    return v[sub] if np.ndim(v) else v


def _windows(S, space):
    return (
        S.prog.gwin
        if space == "global"
        else S.shared
        if space == "shared"
        else S.local
        if space == "local"
        else S.prog.cwin
    )


def _access(S, space, addr, T, kind, tids, loc, values):
    if not len(tids):
        return np.zeros(0, T) if values is None else None
    a = addr.view(np.int64)
    shift = GSHIFT if space == "global" else SSHIFT
    lo, hi = int(np.minimum.reduce(a)), int(np.maximum.reduce(a))
    if lo >> shift == hi >> shift:  # the usual case, every thread in one array: one subtraction, no np.unique
        k0 = (lo >> shift) - 1
        base = ((k0 + 1) << shift) + (1 << (shift - 1))
        off = a - base
        return _one_window(
            S, space, _windows(S, space), k0, off, addr, T, kind, tids, loc, values, lo - base, hi - base
        )
    wins, k, off = split(S, space, addr)
    out = np.zeros(len(tids), T) if values is None else None
    for kk in np.unique(k):
        sel = np.flatnonzero(k == kk)
        o = off[sel]
        v = None if values is None else np.broadcast_to(np.asarray(values, T), (len(tids),))[sel]
        got = _one_window(S, space, wins, int(kk), o, addr[sel], T, kind, tids[sel], loc, v, o.min(), o.max())
        if out is not None:
            out[sel] = got
    return out


def _one_window(S, space, wins, kk, off, addr, T, kind, tids, loc, values, first, last):
    """Threads whose addresses all point into window kk (or into none), at offsets first..last: bounds, log, data."""
    w = T.itemsize
    win = wins[kk] if 0 <= kk < len(wins) else None
    if win is None:
        S.out_of_bounds(None, space, off, addr, tids, kind, loc)
        return np.zeros(len(tids), T) if values is None else None
    allok = first >= 0 and last <= win.nbytes - w
    if allok:
        good, gt = off, tids
    else:
        ok = (off >= 0) & (off <= win.nbytes - w)
        S.out_of_bounds(win, space, off[~ok], None, tids[~ok], kind, loc)
        if not ok.any():
            return np.zeros(len(tids), T) if values is None else None
        good, gt = off[ok], tids[ok]
    # element numbers once, for the log and the data, when the access is one aligned element
    aligned = w == 1 or not int(np.bitwise_or.reduce(good)) & (w - 1)  # one pass, no temporary array
    elems = good >> (w.bit_length() - 1) if aligned else None
    if win.aid is not None and space in ("global", "shared"):
        S.record(win, good, w, gt, kind, loc, elems if w == win.itemsize else None)
    rows = gt if win.per_thread else None
    typed = elems is not None and rows is None and win.data.size % w == 0
    if values is None:
        vals = win.data.view(T)[elems] if typed else _gather(win.data, good, w, T, rows)
        if allok:
            return vals
        out = np.zeros(len(tids), T)
        out[ok] = vals
        return out
    v = np.asarray(values, T)
    if not allok:
        v = np.broadcast_to(v, (len(tids),))[ok]
    if typed:
        win.data.view(T)[elems] = v
    else:
        _scatter(win.data, good, w, np.broadcast_to(v, (len(good),)), rows)
    return None


def _whole_elements(buf, off, w) -> bool:
    """Every offset a whole element of width w (a power of two) in a per-thread 2-D buffer whose rows
    hold whole elements: one typed index instead of w byte indices per thread."""
    return (
        buf.ndim == 2
        and buf.shape[1] % w == 0
        and buf.flags.c_contiguous
        and not int(np.bitwise_or.reduce(off)) & (w - 1)
    )


def _gather(buf, off, w, T, rows):
    if rows is not None and _whole_elements(buf, off, w):  # per-thread memory read as typed rows
        return buf.view(T)[rows, off >> (w.bit_length() - 1)]
    if rows is not None:
        ix = off[:, None] + np.arange(w)
        return np.ascontiguousarray(buf[rows[:, None], ix]).reshape(-1).view(T)
    if w == 1:
        return buf[off].view(T)
    if buf.size % w == 0 and not (off & (w - 1)).any():
        return buf.view(T)[off >> (w.bit_length() - 1)]
    return np.ascontiguousarray(buf[off[:, None] + np.arange(w)]).reshape(-1).view(T)


def _scatter(buf, off, w, v, rows):
    if rows is not None and _whole_elements(buf, off, w):
        buf.view(v.dtype)[rows, off >> (w.bit_length() - 1)] = v
    elif rows is not None:
        b = np.ascontiguousarray(v).view(np.uint8).reshape(len(off), w)
        buf[rows[:, None], off[:, None] + np.arange(w)] = b
    elif buf.size % w == 0 and not (off & (w - 1)).any():
        buf.view(v.dtype)[off >> (w.bit_length() - 1)] = v
    else:
        b = np.ascontiguousarray(v).view(np.uint8).reshape(len(off), w)
        buf[off[:, None] + np.arange(w)] = b


# ----------------------------------------------------------------------------- instructions
def _space(ins):
    for p in ins.parts[1:]:
        if p in _SPACES:
            return p
    return "generic"


def decode_ld_st(ins, cx):
    from .alu import OPS  # noqa: F401  (the op registry lives there)

    T = cx.typ(ins)
    space = _space(ins)
    store = ins.parts[0] == "st"
    mem, val = (ins.operands[0], ins.operands[1]) if store else (ins.operands[1], ins.operands[0])
    items = val.items if isinstance(val, Vec) else (val,)
    loc = cx.prog.loc_id(cx.fn, ins)
    if space == "param":
        return _param(ins, cx, T, mem, items, store)
    addr = cx.addr(mem)
    w = T.itemsize
    if store:
        gets = [cx.src(x, T) for x in items]

        def st(S, idx):
            a = addr(S, idx)
            for i, g in enumerate(gets):
                access(S, space, a + np.uint64(i * w) if i else a, T, WRITE, idx, loc, g(S, idx))

        return st
    sets = [cx.dst(x, T) for x in items]

    def ld(S, idx):
        a = addr(S, idx)
        for i, s in enumerate(sets):
            s(S, idx, access(S, space, a + np.uint64(i * w) if i else a, T, READ, idx, loc))

    return ld


def _param(ins, cx, T, mem, items, store):
    """Kernel parameters are one buffer for all threads; .func/call parameters are per thread."""
    if isinstance(mem.base, Reg):
        raise cx.refuse(ins, ins.opcode + " through a register")
    name, off = mem.base.name, mem.offset
    w = T.itemsize
    if cx.fn.entry and name in {p.name for p in cx.fn.params}:
        if store:
            raise cx.refuse(ins)
        sets = [cx.dst(x, T) for x in items]
        start = cx.prog.kparam_offset[name] + off

        def ldk(S, idx):
            for i, s in enumerate(sets):
                v = S.kparam[start + i * w : start + (i + 1) * w].view(T)[0]
                s(S, idx, v)  # one value for all threads: the register stays uniform (decode.store)

        return ldk
    key = (cx.fn.name, name)
    size = cx.prog.param_size(cx.fn, name)
    if store:
        gets = [cx.src(x, T) for x in items]

        def stp(S, idx):
            buf = S.fparam_buf(key, size)
            rows = S.tids(idx)
            for i, g in enumerate(gets):
                v = np.broadcast_to(np.asarray(g(S, idx), T), (len(rows),))
                _scatter(buf, np.full(len(rows), off + i * w), w, v, rows)

        return stp
    sets = [cx.dst(x, T) for x in items]

    def ldp(S, idx):
        buf = S.fparam_buf(key, size)
        rows = S.tids(idx)
        for i, s in enumerate(sets):
            s(S, idx, _gather(buf, np.full(len(rows), off + i * w), w, T, rows))

    return ldp


def decode_cvta(ins, cx):
    to = "to" in ins.parts
    space = next(p for p in ins.parts if p in ("global", "shared", "local", "const", "param"))
    T = cx.typ(ins)
    d, a = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], T)
    if space == "global":
        return lambda S, idx: d(S, idx, a(S, idx))  # the setter keeps its own copy (decode.store)
    if space == "param":
        raise cx.refuse(ins)
    tag = np.uint64(TAG[space] << GSHIFT)
    low = np.uint64((1 << GSHIFT) - 1)

    def run(S, idx):
        v = np.asarray(a(S, idx)).astype(np.uint64)
        d(S, idx, (v & low if to else v + tag).astype(T))

    return run


def decode_isspacep(ins, cx):
    space = ins.parts[1]
    d, a = cx.dst(ins.operands[0], DTYPES["pred"]), cx.src(ins.operands[1], DTYPES["u64"])

    def run(S, idx):
        tag = np.asarray(a(S, idx)).astype(np.uint64) >> np.uint64(GSHIFT)
        d(S, idx, (tag < 0x7000) if space == "global" else tag == TAG.get(space, -1))

    return run
