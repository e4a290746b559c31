"""Turn parsed PTX operands into small closures over the per-block register file.

Why: the machine runs each instruction many times (once per thread group per visit), so
names, types and conversions are resolved once here. A getter `g(S, idx)` returns the
operand as a NumPy vector for the threads `idx` (None: every thread; a slice: consecutive threads,
read as a view; else an array of thread numbers); a setter
`w(S, idx, v)` stores a vector back, converting to the register's declared type.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedByTracer
from .parser import Addr, Imm, Reg, Sym, Vec
from .values import DTYPES, convert, immediate

_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
SPECIAL_TYPES = {"%clock64": _U64, "%globaltimer": _U64, "%gridid": _U64}
SPECIALS = {f"%{s}.{a}" for s in ("tid", "ntid", "ctaid", "nctaid") for a in "xyz"} | {
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%smid",
    "%nsmid",
    "%clock",
    "%clock64",
    "%globaltimer",
    "%globaltimer_lo",
    "%globaltimer_hi",
    "%gridid",
    "%dynamic_smem_size",
    "%total_smem_size",
    "%lanemask_eq",
    "%lanemask_le",
    "%lanemask_lt",
    "%lanemask_ge",
    "%lanemask_gt",
}


class Unsupported(Exception):
    """Raised while decoding; the machine turns it into UnsupportedByTracer with the line."""


def refuse(ins, what=None):
    name = what or ins.opcode
    return UnsupportedByTracer(
        f"The CPU runner of CUDA C does not know the PTX instruction `{name}` (from line {ins.line} of your "
        f"kernel); run this kernel on a GPU to test it."
    )


class Cx:
    """Decoding context of one function: its registers, symbols and the shared slot table."""

    def __init__(self, prog, fn):
        self.prog, self.fn = prog, fn

    def refuse(self, ins, what=None):
        return refuse(ins, what)

    # -- types -------------------------------------------------------------------------------
    def typ(self, ins, pos=-1):
        t = ins.parts[pos]
        if t not in DTYPES:
            raise refuse(ins)
        return DTYPES[t]

    def slot(self, name):
        """Register name -> (slot, storage dtype); specials share one slot per program."""
        key = name if name in SPECIALS else (self.fn.name, name)
        got = self.prog.slot_of.get(key)
        if got is None:
            if name in SPECIALS:
                dt = SPECIAL_TYPES.get(name, _U32)
            elif name in self.fn.regs:
                dt = DTYPES.get(self.fn.regs[name])
                if dt is None:
                    raise Unsupported(f"register type .{self.fn.regs[name]}")
            else:
                raise Unsupported(f"register {name}")
            got = self.prog.slot_of[key] = (len(self.prog.slot_types), dt)
            self.prog.slot_types.append(dt)
        return got

    # -- operands ----------------------------------------------------------------------------
    def src(self, op, T):
        """Getter for a source operand read as type T."""
        if isinstance(op, tuple) and op[0] == "not":  # `!%p` source of setp/selp-style ops
            g = self.src(op[1], T)
            return lambda S, idx: ~g(S, idx)
        if isinstance(op, Imm):
            c = immediate(op, T)
            return lambda S, idx: c
        if isinstance(op, Sym) and op.name in self.fn.regs:  # a scoped `.reg .f16 low;` of inline asm
            return self.src(Reg(op.name), T)
        if isinstance(op, Sym):
            c = immediate(Imm(self.prog.symbol_address(self.fn, op.name)), T)
            return lambda S, idx: c
        if isinstance(op, Reg):
            if op.name in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo"):
                self.prog.reads_clock = True  # the fake clock counts per block (grid.py)

                def clock(S, idx):  # fake clock: grows by 1000 at every read, so timing loops end
                    S.clock += 1000
                    return T.type(S.clock)

                return clock
            slot, D = self.slot(op.name)
            if D == T:

                def g(S, idx):
                    r = S.R[slot]
                    return r if idx is None else pick(r, idx)
            else:

                def g(S, idx):
                    r = S.R[slot]
                    return convert(r if idx is None else pick(r, idx), D, T)

            return g
        if isinstance(op, Vec):  # {%r1, %r2} read as one wider value (mov.b64 %rd, {lo, hi})
            return self.pack(op, T)
        raise Unsupported(f"operand {op}")

    def pack(self, vec, T):
        n = len(vec.items)
        part = {
            2: {8: _U32, 4: np.dtype(np.uint16), 2: np.dtype(np.uint8)},
            4: {8: np.dtype(np.uint16), 4: np.dtype(np.uint8)},
        }[n][T.itemsize]
        gets = [self.src(x, part) for x in vec.items]
        wide = {2: np.dtype(np.uint16), 4: _U32, 8: _U64}[T.itemsize]

        def g(S, idx):
            out = np.zeros(S.width(idx), wide)
            for i, get in enumerate(gets):
                out |= np.asarray(get(S, idx)).astype(wide) << wide.type(8 * part.itemsize * i)
            return out.view(T)

        return g

    def dst(self, op, T):
        """Setter for a destination operand holding a value of type T."""
        if isinstance(op, Sym) and op.name in self.fn.regs:  # a register named without % (inline asm)
            op = Reg(op.name)
        if isinstance(op, Reg) and op.name == "_":
            return lambda S, idx, v: None
        if isinstance(op, Vec):  # mov.b64 {%r1, %r2}, %rd: split into parts, low first
            n = len(op.items)
            part = UNS[T.itemsize // n]
            sets = [self.dst(x, part) for x in op.items]
            wide = UNS[T.itemsize]

            def wv(S, idx, v):
                v = np.asarray(v).view(wide) if np.ndim(v) else np.asarray([v]).view(wide)
                for i, s in enumerate(sets):
                    s(
                        S,
                        idx,
                        ((v >> wide.type(8 * part.itemsize * i)) & wide.type((1 << 8 * part.itemsize) - 1)).astype(
                            part
                        ),
                    )

            return wv
        if not isinstance(op, Reg):
            raise Unsupported(f"destination {op}")
        slot, D = self.slot(op.name)

        def w(S, idx, v):
            if D != T:
                v = convert(np.asarray(v), T, D)
            r = S.R[slot]
            if idx is None:
                S.R[slot] = store(r, v, D, S.n)
            elif r.flags.writeable:
                r[idx] = v
            elif not _same_uniform(r, v, D):  # a uniform (or never written) register gets values of its own
                r = S.R[slot] = np.array(r)
                r[idx] = v

        return w

    def addr(self, op):
        """Getter for the address of `[reg+off]` / `[sym+off]` as uint64 (or an int)."""
        if not isinstance(op, Addr):
            raise Unsupported(f"address {op}")
        off = op.offset
        if op.base is None:
            return lambda S, idx: np.uint64(off)
        if isinstance(op.base, Sym):
            c = np.uint64((self.prog.symbol_address(self.fn, op.base.name) + off) & (2**64 - 1))
            return lambda S, idx: c
        slot, D = self.slot(op.base.name)
        o = np.uint64(off & (2**64 - 1))

        def g(S, idx):
            r = S.R[slot]
            r = r if idx is None else r[idx]
            if D.itemsize == 4:  # 32-bit shared/local addresses
                r = r.view(np.uint32).astype(np.uint64) if D.kind != "u" else r.astype(np.uint64)
            elif D != _U64:
                r = r.view(_U64)
            return r + o

        return g


UNS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: _U32, 8: _U64}


def uniform(value, D, n):
    """One value for every thread: a read-only broadcast of one element, no memory per thread."""
    return _repeated(np.array(value, D).reshape(1), n)


def _repeated(one, n):
    """n read-only copies of a one-element array's value (stride 0; np.broadcast_to takes 4x longer)."""
    a = np.ndarray((n,), one.dtype, one, 0, (0,))
    a.flags.writeable = False
    return a


def pick(r, idx):
    """Register r's values for threads idx; a uniform register stays one element."""
    if r.strides != (0,):
        return r[idx]
    return _repeated(r[:1], idx.stop - idx.start if isinstance(idx, slice) else len(idx))


def _same_uniform(r, v, D):
    """Writing v leaves uniform register r as it is (the same bits for every thread)."""
    v = np.asarray(v, D)
    if v.ndim and v.strides != (0,):
        return False
    return r.strides == (0,) and v.reshape(-1)[:1].tobytes() == r[:1].tobytes()


def store(r, v, D, n):
    """What register `r` (n values of type D) holds after every thread writes v.

    Why not always a fresh array: at a million threads each fresh register is megabytes of new pages
    for the kernel to fault in, which costs more than the arithmetic. A value the same for every thread
    stays one element; otherwise the register's own memory is reused where it has some."""
    v = np.asarray(v)
    if v.size == 1 or v.strides == (0,):  # a scalar, one element (bit instructions on an immediate), a broadcast
        return uniform(v.reshape(-1)[0], D, n)
    if r.flags.writeable:
        r[...] = v
        return r
    return np.array(np.broadcast_to(v, (n,)), D)
