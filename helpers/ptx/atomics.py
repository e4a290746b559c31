"""atom and red: read-modify-write of one element, for many threads at once, grouped by element.

Why grouped: the interpreter applies the atomics of one instruction in thread order, lowest
thread first (a GPU's order is unspecified; a fixed one makes each thread's old value
reproducible). Applied one thread at a time that cost two memory accesses per thread (1,000
threads with four atomics took seconds). Here the threads are sorted by element (stably, so
thread order is kept within an element) and each element's chain of updates is computed at
once: integer add as a running sum that wraps like the GPU, the other operations round by
round (the r-th update of every element together), and a long chain on one element with
NumPy's accumulate, which is sequential (float32 stays float32 at every step). The results
are the one-at-a-time results exactly; the one-at-a-time path remains for what grouping
cannot express: threads of one instruction in different arrays or memory spaces, misaligned
addresses, per-thread (local) memory.

Several blocks at once (grid.py): block after block, the updates of one element come in
block order. Each element therefore remembers the highest block that updated it; an update
from a lower block means the blocks interleaved, and grid.py runs those blocks again one at a
time. Updates whose result no thread reads and whose order cannot change the final value
(integer add, and, or, xor, min, max) are exempt, unless order-sensitive updates touch the
same element.
"""

from __future__ import annotations

import re

import numpy as np

from ..accesses import ATOMIC
from . import memory as mem

LONG = 16  # longer chains on one element are finished with accumulate (or one by one) instead of rounds

_SCALAR = {
    "add": lambda o, b, c: o + b,
    "and": lambda o, b, c: o & b,
    "or": lambda o, b, c: o | b,
    "xor": lambda o, b, c: o ^ b,
    "exch": lambda o, b, c: b,
    "cas": lambda o, b, c: c if o == b else o,
    "inc": lambda o, b, c: type(o)(0) if o >= b else o + type(o)(1),
    "dec": lambda o, b, c: b if (o == 0 or o > b) else o - type(o)(1),
}


def _scalar_minmax(is_min):
    def f(o, b, c):
        if isinstance(o, np.floating) and (np.isnan(o) or np.isnan(b)):
            return b if np.isnan(o) else o
        return min(o, b) if is_min else max(o, b)

    return f


_SCALAR["min"], _SCALAR["max"] = _scalar_minmax(True), _scalar_minmax(False)


def _vector(opname, T):
    """The operation on arrays (old values o, operands b and c), giving what _SCALAR gives element by element."""
    if opname in ("min", "max"):
        lower = opname == "min"

        def f(o, b, c):
            r = np.where(b < o, b, o) if lower else np.where(b > o, b, o)  # Python's min/max keep o on a tie
            if T.kind == "f":
                r = np.where(np.isnan(o), b, np.where(np.isnan(b), o, r))
            return r.astype(T, copy=False)

        return f
    ops = {
        "add": lambda o, b, c: o + b,
        "and": lambda o, b, c: o & b,
        "or": lambda o, b, c: o | b,
        "xor": lambda o, b, c: o ^ b,
        "exch": lambda o, b, c: b,
        "cas": lambda o, b, c: np.where(o == b, c, o),
        "inc": lambda o, b, c: np.where(o >= b, T.type(0), o + T.type(1)),
        "dec": lambda o, b, c: np.where((o == 0) | (o > b), b, o - T.type(1)),
    }
    g = ops[opname]
    return lambda o, b, c: np.asarray(g(o, b, c)).astype(T, copy=False)


def _accumulate(opname, T):
    """A ufunc whose accumulate is the chain of updates, or None."""
    if opname == "add":
        return np.add
    if T.kind == "f":
        return None  # float min/max: NaN and signed-zero rules differ from np.minimum
    return {
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
        "min": np.minimum,
        "max": np.maximum,
    }.get(opname)


def decode_atom(ins, cx):
    T = cx.typ(ins)
    space = mem._space(ins)
    opname = next((p for p in ins.parts[1:] if p in _SCALAR), None)
    if (
        opname is None
        or T.kind not in "iuf"
        or T.itemsize < 4
        or (T.kind == "f" and opname not in ("add", "exch", "min", "max"))
    ):
        raise cx.refuse(ins)
    red = ins.parts[0] == "red"
    ops = ins.operands
    d = None if red else cx.dst(ops[0], T)
    addr = cx.addr(ops[0] if red else ops[1])
    rest = ops[1:] if red else ops[2:]
    b = cx.src(rest[0], T)
    c = cx.src(rest[1], T) if len(rest) > 1 else (lambda S, idx: T.type(0))
    unused = red or _never_read(cx.fn, getattr(ops[0], "name", "_"))
    op = Op(opname, T, cx.prog.loc_id(cx.fn, ins), unused and T.kind in "iu" and opname in _COMMUTATIVE)
    if opname == "cas":
        cx.prog.cas_locs.add(op.loc)

    def run(S, idx):
        m = S.width(idx)
        a = np.broadcast_to(np.asarray(addr(S, idx), mem.U64), (m,))
        bv = np.broadcast_to(np.asarray(b(S, idx), T), (m,))
        cv = np.broadcast_to(np.asarray(c(S, idx), T), (m,))
        with np.errstate(all="ignore"):
            old = op.grouped(S, space, a, bv, cv, idx)
            if old is None:
                old = op.one_by_one(S, space, a, bv, cv, idx)
        if d is not None:
            d(S, idx, old)

    return run


_COMMUTATIVE = ("add", "and", "or", "xor", "min", "max")


class Op:
    """One atomic instruction's operation, type and source line; `exempt`: its order cannot matter."""

    def __init__(self, opname, T, loc, exempt):
        self.name, self.T, self.loc, self.exempt = opname, T, loc, exempt
        self.scalar, self.vector, self.ufunc = _SCALAR[opname], _vector(opname, T), _accumulate(opname, T)

    def one_by_one(self, S, space, a, bv, cv, idx):
        """One thread after another: read (logged as the atomic access), update, write (not logged again)."""
        T, tids = self.T, S.tids(idx)
        old = np.zeros(len(tids), T)
        for i in range(len(tids)):
            one = tids[i : i + 1]
            o = mem.access(S, space, a[i : i + 1], T, ATOMIC, one, self.loc)[0]
            S.quiet = True  # the element was recorded once, as one atomic access
            try:
                mem.access(
                    S, space, a[i : i + 1], T, ATOMIC, one, self.loc, np.asarray([self.scalar(o, bv[i], cv[i])], T)
                )
            finally:
                S.quiet = False
            old[i] = o
        return old

    def grouped(self, S, space, a, bv, cv, idx):
        """Every thread at once when all addresses are aligned and in one shared or global window; else None."""
        T, w = self.T, self.T.itemsize
        space, a = _one_space(space, a)
        if space not in ("global", "shared"):
            return None
        wins, k, off = mem.split(S, space, a)
        k0 = int(k[0])
        if not (k == k0).all():
            return None
        win = wins[k0] if 0 <= k0 < len(wins) else None
        if win is not None and ((off & (w - 1)).any() or win.data.size % w):
            return None
        got = mem.access(S, space, a, T, ATOMIC, idx, self.loc)  # logs each thread's access (or its stray address)
        if win is None:
            return got
        ok = (off >= 0) & (off <= win.nbytes - w)
        every = ok.all()
        if not every and not ok.any():  # every address strays: nothing to update
            return got
        e = (off if every else off[ok]) >> (w.bit_length() - 1)
        pick = (lambda v: v) if every else (lambda v: v[ok])
        olds, elems, finals = self.chains(e, pick(got), pick(bv), pick(cv))
        win.data.view(T)[elems] = finals
        if every:
            got = olds
        else:
            got[ok] = olds
        if S.nblk > 1:
            tids = S.tids(idx)
            self.note_order(S, win, e, (tids if every else tids[ok]) // S.tpb, w)
        return got

    def chains(self, e, init, b, c):
        """Old value per thread (thread order) and each element's final value, applying updates in thread order."""
        order = np.argsort(e, kind="stable")
        es = e[order]
        new = np.empty(len(es), bool)
        new[0] = True
        np.not_equal(es[1:], es[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        init, b, c = init[order], b[order], c[order]
        if self.name == "add" and self.T.kind == "f" and np.isnan(b).any():
            # NaN + NaN keeps one operand's payload and sign, and which one NumPy's scalar and vector code keep differs
            olds, finals = self.in_turn(init[starts], b, c, starts)
        elif len(starts) == len(es):  # one thread per element: one step
            olds, finals = init, self.vector(init, b, c)
        elif self.name == "add" and self.T.kind in "iu":
            olds, finals = _running_sum(init, b, starts)
        else:
            olds, finals = self.rounds(init, b, c, starts)
        out = np.empty_like(olds)
        out[order] = olds
        return out, es[starts], finals

    def rounds(self, init, b, c, starts):
        """Chains element by element in lockstep: round r applies every element's r-th update."""
        lens = np.diff(np.append(starts, len(init)))
        state = init[starts].copy()
        olds = np.empty_like(init)
        for r in range(min(int(lens.max()), LONG)):
            live = np.flatnonzero(lens > r)
            pos = starts[live] + r
            olds[pos] = state[live]
            state[live] = self.vector(state[live], b[pos], c[pos])
        for s in np.flatnonzero(lens > LONG):
            lo, hi = starts[s] + LONG, starts[s] + lens[s]
            if self.ufunc is not None or self.name == "exch":
                seq = np.concatenate([state[s : s + 1], b[lo:hi]])
                seq = self.ufunc.accumulate(seq, dtype=self.T) if self.ufunc is not None else seq
                olds[lo:hi], state[s] = seq[:-1], seq[-1]
                continue
            olds[lo:hi], state[s : s + 1] = self.in_turn(state[s : s + 1], b[lo:hi], c[lo:hi], np.zeros(1, int))
        return olds, state

    def in_turn(self, first, b, c, starts):
        """Chains starting from values `first` with the scalar rule, one update after another (as one_by_one)."""
        ends = np.append(starts[1:], len(b))
        olds, state = np.empty(len(b), self.T), first.copy()
        for s, (lo, hi) in enumerate(zip(starts, ends)):
            o = state[s]
            for i in range(lo, hi):
                olds[i] = o
                o = self.T.type(self.scalar(o, b[i], c[i]))
            state[s] = o
        return olds, state

    def note_order(self, S, win, e, blocks, w):
        """Several blocks at once: remember, per 4-byte word, the highest block that updated it (see the docstring)."""
        marks = S.atomics.get(id(win))
        if marks is None:
            words = -(-win.nbytes // 4)
            marks = S.atomics[id(win)] = AtomicMarks(np.full(words, -1, np.int64), np.zeros(words, bool))
        words = e * (w // 4)
        if w == 8:
            words, blocks = np.concatenate([words, words + 1]), np.concatenate([blocks, blocks])
        if self.exempt:
            marks.exempt[words] = True
            return
        if (marks.last[words] > blocks).any():
            S.atomic_disorder = True
        np.maximum.at(marks.last, words, blocks)


class AtomicMarks:
    """Per 4-byte word of one array: the highest block whose order-sensitive atomic updated it (-1: none),
    and whether an exempt one did."""

    def __init__(self, last, exempt):
        self.last, self.exempt = last, exempt

    def mixed(self):
        """A word updated both ways: the exempt updates' order then matters too."""
        return bool((self.exempt & (self.last >= 0)).any())


def _never_read(fn, reg):
    """No instruction of the function names `reg` but this one (NVRTC writes an unused atomicAdd result to a
    register nobody reads; its PTX names every virtual register once per value)."""
    if reg == "_":
        return True
    name = re.compile(re.escape(reg) + r"(?![\w$])")
    return sum(len(name.findall(i.text)) for i in fn.body) <= 1


def _one_space(space, a):
    """(space, address within it) when every thread's address is in one space, else (None, None)."""
    if space != "generic":
        return space, a
    tag = (a >> np.uint64(mem.GSHIFT)).astype(np.int64)
    if ((tag < 0x7000) & (tag >= 0)).all():
        return "global", a
    for sp in ("shared", "local", "const"):
        if (tag == mem.TAG[sp]).all():
            return sp, a & np.uint64((1 << mem.GSHIFT) - 1)
    return None, None


def _running_sum(init, b, starts):
    """Integer add chains as one running sum: modular arithmetic makes the differences exact."""
    T = init.dtype
    total = np.cumsum(b, dtype=T)
    before = total - b  # the sum of the updates before each one, over all elements
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(b))))
    base = before[starts]
    olds = init + (before - base[seg])
    ends = np.append(starts[1:], len(b)) - 1
    return olds, init[starts] + (total[ends] - base)
