"""One kernel launch made ready to run: memory layout, parameters, decoded code, records.

Why here: everything that is the same for all blocks (where each array and variable lives,
the packed kernel parameters, the instruction closures, source locations) is built once;
`machine.Block` then runs block after block over it and writes into its records.
"""

from __future__ import annotations

import re

import numpy as np

from ..accesses import ArrayInfo
from ..errors import KernelError, LearnerError, UnsupportedByTracer
from ..limits import local_problem, shared_problem
from . import atomics, halves, mma, records, warp
from . import machine as M
from . import memory as mem
from .alu import OPS
from .decode import Cx, Unsupported, refuse, uniform
from .moves import comparison  # noqa: F401  (registers mov/cvt/setp in OPS)
from .parser import Imm
from .records import Location, SourceRef, _param_names, _shared_decl, demangle, local_bytes, pointee_problem
from .values import DTYPES, init_bytes


class BlockOrderMatters(Exception):
    """Running blocks together would not give the block-by-block records here (grid.py catches it)."""


class Program:
    def __init__(self, module, kernel, griddim, blockdim, args, shared_bytes, source, src_file, max_steps, scalars):
        self.mod, self.kernel = module, kernel
        self.griddim, self.blockdim = griddim, blockdim
        self.tpb = blockdim[0] * blockdim[1] * blockdim[2]
        self.source, self.src_file = source, src_file
        self.max_steps, self.max_oob = max_steps, 100_000
        self.slot_of, self.slot_types = {}, []
        self.locations, self._locs = [], {}
        self.cas_locs = set()  # locations of compare-and-swap atomics (a CAS loop's first plain read is a guess)
        self.arrays, self.chunks, self.naccess = [], [], 0
        self.oob, self.divergent, self.warp_misuse, self.misuse_seen, self.printed = [], [], [], set(), []
        self.steps = 0
        self.bar_count, self.bar_hooks, self.calls = {}, {}, {}
        self.shared_bytes = shared_bytes
        # what keeps blocks from running together (grid.py); `together` while they do
        self.has_barrier = self.reads_clock = self.together = False
        self.keep_log = True  # False: the access log is read where blocks run together (grid.py), then dropped
        self.kfn = module.functions[kernel]
        self._layout(args, scalars)
        self._decode()

    # -- memory layout -----------------------------------------------------------------------
    def _layout(self, args, scalars):
        fn = self.kfn
        if len(args) != len(fn.params):
            raise LearnerError(
                f"{demangle(self.kernel)} takes {len(fn.params)} argument(s) but {len(args)} were given."
            )
        names = _param_names(self.source, demangle(self.kernel))
        self.gwin, self.cwin, self.write_back, seen = [], [], [], {}
        self.kparam_offset, buf = {}, bytearray()
        for pos, (p, a) in enumerate(zip(fn.params, args)):
            name = names[pos] if pos < len(names) else f"arg{pos}"
            off = -(-len(buf) // p.align) * p.align
            buf.extend(b"\0" * (off - len(buf)))
            self.kparam_offset[p.name] = off
            if isinstance(a, np.ndarray):
                if p.size != 8:
                    raise LearnerError(
                        f"Argument {pos} ({name}) is an array but the kernel's parameter {pos} is not a "
                        f"pointer (it is {p.size} bytes)."
                    )
                if a.dtype.hasobject or a.dtype.kind in "UST":  # Python objects or text: no GPU memory holds them
                    raise LearnerError(
                        f"Argument {pos} ({name}) is an array of {a.dtype.name}; a kernel reads numbers: "
                        "pass a NumPy array of a number type such as np.float32 or np.int32."
                    )
                if problem := pointee_problem(pos, name, a, self.source, demangle(self.kernel)):
                    raise LearnerError(problem)
                if id(a) not in seen:
                    host = a if a.flags.c_contiguous else np.ascontiguousarray(a)
                    if host is not a:
                        self.write_back.append((a, host))
                    aid = len(self.arrays)
                    self.arrays.append(ArrayInfo(name, "global", a.shape, a.dtype, host.strides, pos))
                    win = mem.Window(
                        "global",
                        name,
                        host.nbytes,
                        a.dtype.itemsize,
                        aid,
                        a.shape or (1,),
                        host.reshape(-1).view(np.uint8),
                    )
                    seen[id(a)] = len(self.gwin)
                    self.gwin.append(win)
                else:
                    self.arrays[self.gwin[seen[id(a)]].aid].name += f"/{name}"
                value = np.uint64(mem.gbase(seen[id(a)])).tobytes()
            else:
                value = self._scalar(pos, name, p, a, scalars)
            buf.extend(value)
        self.kparam = np.frombuffer(bytes(buf) + b"\0" * 16, np.uint8)
        self.syms = {}
        for v in self.mod.vars + [v for f in self.mod.functions.values() for v in f.vars]:
            if v.space in ("global", "const"):
                data = np.zeros(max(v.size, 1), np.uint8)
                if v.init:
                    raw = init_bytes(v.init, DTYPES.get(v.type, np.uint8))
                    data[: len(raw)] = raw[: len(data)]
                wins = self.gwin if v.space == "global" else self.cwin
                dt = np.dtype(DTYPES.get(v.type, np.uint8)) if v.type != "b8" else np.dtype(np.uint8)
                aid = None
                if v.space == "global" and not v.name.startswith("$"):
                    aid = len(self.arrays)
                    self.arrays.append(
                        ArrayInfo(demangle(v.name), "global", (max(v.size, 1) // dt.itemsize,), dt, (dt.itemsize,))
                    )
                wins.append(mem.Window(v.space, v.name, v.size, dt.itemsize, aid, None, data))
                base = mem.gbase(len(wins) - 1) if v.space == "global" else mem.sbase(len(wins) - 1)
                self.syms[v.name] = base
        self.shared_vars, self.local_vars = [], []
        mine = [self.kfn] + [f for f in self.mod.functions.values() if f.defined and not f.entry]
        used = " ".join(i.text for f in mine for i in f.body)
        for f in [None, *self.mod.functions.values()]:
            for v in self.mod.vars if f is None else f.vars:
                if (
                    v.space == "shared"
                    and v.name not in self.syms
                    and re.search(rf"(?<![\w$]){re.escape(v.name)}\b", used)
                ):
                    self._add_shared(v)
                elif v.space == "local" and f is not None:
                    self.syms[(f.name, v.name)] = mem.sbase(len(self.local_vars))
                    self.local_vars.append(v)
        # What a GPU refuses is refused before anything runs (and before it is allocated per block here).
        static = sum(nb for v, (_aid, nb, _isz, _shape) in self.shared_vars if not v.extern)
        problem = shared_problem(static, "cuda_c") or local_problem(local_bytes(self.kfn, self.mod.functions))
        if problem:
            raise LearnerError(f"{demangle(self.kernel)}: {problem}")

    def _add_shared(self, v):
        var = demangle(v.name)
        dt, dims, line = _shared_decl(self.source, var)
        nbytes = self.shared_bytes if v.extern else v.size
        if v.extern and any(s.extern for s, _ in self.shared_vars):  # every extern array is the same memory
            k = next(i for i, (s, _) in enumerate(self.shared_vars) if s.extern)
            self.syms[v.name] = mem.sbase(k)
            return
        if dt is None:
            dt = (
                np.dtype(DTYPES[v.type])
                if v.type not in ("b8", "pred")
                else np.dtype(np.float32 if nbytes % 4 == 0 else np.uint8)
            )
        shape = (nbytes // dt.itemsize,)
        if dims and all(dims) and int(np.prod(dims)) * dt.itemsize == nbytes:
            shape = tuple(dims)
        aid = len(self.arrays)
        self.arrays.append(
            ArrayInfo(
                f"shared {var}" + (f" (line {line})" if line else ""),
                "shared",
                shape,
                dt,
                tuple(int(x) for x in np.zeros(shape, dt).strides),
                None,
                line,
                var,
            )
        )
        self.syms[v.name] = mem.sbase(len(self.shared_vars))
        self.shared_vars.append((v, (aid, nbytes, dt.itemsize, shape)))

    def _scalar(self, pos, name, p, a, scalars):
        t = DTYPES.get(p.type)
        if isinstance(a, np.generic):
            if problem := records.scalar_size_problem(pos, name, p, a):
                raise LearnerError(problem)
            return a.tobytes()
        if isinstance(a, (bool, int, float)):
            if scalars == "cast" and t is not None:
                return np.array(a).astype(t).tobytes()
            if scalars == "cupy":  # CuPy passes int as int64, float as float64; the kernel reads p.size bytes
                raw = np.array(a, np.float64 if isinstance(a, float) else np.int64).tobytes()
                return raw[: p.size] + b"\0" * max(0, p.size - 8)
            want = f"np.{t.name}({a!r})" if t is not None else "a NumPy scalar such as np.int32(...)"
            raise LearnerError(
                f"Argument {pos} ({name}) is a plain Python {type(a).__name__}; the kernel expects .{p.type}, so "
                f"pass {want} (CuPy would pass a Python {type(a).__name__} as a 64-bit value)."
            )
        raise LearnerError(f"Argument {pos} ({name}) must be a NumPy array or a NumPy scalar, not {type(a).__name__}.")

    def new_shared(self):
        return [
            mem.Window("shared", v.name, nb, isz, aid, shape, np.zeros(max(nb, 1), np.uint8))
            for v, (aid, nb, isz, shape) in self.shared_vars
        ]

    def new_local(self, n):
        return [
            mem.Window("local", v.name, v.size, 1, None, None, np.zeros((n, max(v.size, 1)), np.uint8), True)
            for v in self.local_vars
        ]

    def array_for(self, win):
        """Array id of a window for an out-of-bounds record (local/const get one when first needed)."""
        if win.aid is None:
            if self.together:  # block by block, each block's local window gets its own id: let grid.py rerun
                raise BlockOrderMatters("a stray access to local or constant memory")
            win.aid = len(self.arrays)
            self.arrays.append(
                ArrayInfo(
                    f"{win.space} {demangle(win.name)}",
                    win.space,
                    win.shape,
                    np.dtype(np.uint8),
                    (1,),
                    var=demangle(win.name),
                )
            )
        return win.aid

    def symbol_address(self, fn, name):
        if (fn.name, name) in self.syms:
            return self.syms[(fn.name, name)]
        if name in self.syms:
            return self.syms[name]
        raise Unsupported(f"symbol {name}")

    def param_size(self, fn, name):
        sizes = [v.size for v in fn.params + fn.returns + fn.vars if v.name == name]
        return max(sizes + [8])

    # -- locations ---------------------------------------------------------------------------
    def loc_id(self, fn, ins):
        path = self.mod.files.get(ins.file, "")
        if self.src_file and (not path or path.endswith(self.src_file[1])):
            path = self.src_file[0]
        key = (path, ins.line, fn.name)
        got = self._locs.get(key)
        if got is None:
            name = demangle(self.kernel)
            got = self._locs[key] = len(self.locations)
            self.locations.append(Location(path, ins.line, name, SourceRef(path, name)))
        return got

    def line_at(self, p):
        return self.locations[self.line_of[p]].line

    def special_values(self, b, nblk=1):
        """Special registers of blocks b .. b + nblk - 1, one value per thread (only those the kernel reads);
        a value the same for every thread is one element (decode.uniform)."""
        n, bd, gd = self.tpb, self.blockdim, self.griddim
        t = np.tile(np.arange(n), nblk) if nblk > 1 else np.arange(n)
        m = len(t)
        blk = np.repeat(np.arange(b, b + nblk), n) if nblk > 1 else b
        lane = lambda: t % 32  # noqa: E731 - only for the specials that need it
        vals = {
            "%tid.x": lambda: t % bd[0],
            "%tid.y": lambda: t // bd[0] % bd[1],
            "%tid.z": lambda: t // (bd[0] * bd[1]),
            "%ctaid.x": lambda: blk % gd[0],
            "%ctaid.y": lambda: blk // gd[0] % gd[1],
            "%ctaid.z": lambda: blk // (gd[0] * gd[1]),
            "%laneid": lane,
            "%warpid": lambda: t // 32,
            "%nwarpid": lambda: (n + 31) // 32,
            "%lanemask_eq": lambda: 1 << lane(),
            "%lanemask_lt": lambda: (1 << lane()) - 1,
            "%lanemask_le": lambda: (2 << lane()) - 1,
            "%lanemask_gt": lambda: 0xFFFFFFFF & ~((2 << lane()) - 1),
            "%lanemask_ge": lambda: 0xFFFFFFFF & ~((1 << lane()) - 1),
            "%dynamic_smem_size": lambda: self.shared_bytes,
        }
        for i, a in enumerate("xyz"):
            vals[f"%ntid.{a}"] = lambda i=i: bd[i]
            vals[f"%nctaid.{a}"] = lambda i=i: gd[i]
        out = {}
        for name, (slot, dt) in ((k, v) for k, v in self.slot_of.items() if isinstance(k, str)):
            got = vals.get(name)
            v = got() if got else 0
            out[slot] = (
                uniform(np.int64(v).astype(dt), dt, m) if np.ndim(v) == 0 else np.asarray(v, np.int64).astype(dt)
            )
        return out

    # -- decoding ----------------------------------------------------------------------------
    def _decode(self):
        funcs = [self.kfn] + [f for f in self.mod.functions.values() if f.defined and not f.entry]
        self.start_of = {}
        pos = 0
        for f in funcs:
            self.start_of[f.name] = pos
            pos += len(f.body) + 1  # + an implicit `ret` at the end
        self.start = 0
        self.code, self.line_of = [], []
        for fid, f in enumerate(funcs):
            cx = Cx(self, f)
            for ins in f.body + [None]:
                if ins is None:  # falling off the end of a function returns
                    self.code.append((M.make_ret(self, fid), None, True))
                    self.line_of.append(self.line_of[-1] if self.line_of else None)
                    continue
                self.line_of.append(self.loc_id(f, ins))
                try:
                    entry = self._one(ins, cx, f, fid, funcs)
                except (Unsupported, UnsupportedByTracer) as exc:
                    err = exc if isinstance(exc, UnsupportedByTracer) else refuse(ins)
                    entry = (_raiser(err), None, True)
                self.code.append(entry)

    def _guard(self, ins, cx):
        if ins.guard is None:
            return None
        g = cx.src(ins.guard[0], DTYPES["pred"])
        if ins.guard[1]:
            return lambda S, idx: ~g(S, idx)
        return g

    def _one(self, ins, cx, f, fid, funcs):
        base = ins.parts[0]
        if ins.operands is None:
            raise refuse(ins)
        guard = self._guard(ins, cx)
        p = len(self.code)
        if base == "bra":
            return (M.make_bra(self.start_of[f.name] + f.labels[ins.operands[0].name]), guard, True)
        if base in ("ret", "exit"):
            return ((M.make_exit() if base == "exit" else M.make_ret(self, fid)), guard, True)
        if base in ("bar", "barrier") and "warp" not in ins.parts:
            return self._bar(ins, cx, p, guard)
        if base == "call":
            return self._call(ins, cx, f, p, guard, funcs)
        if base == "trap":
            return (
                _raiser(KernelError(f"Your kernel stopped itself (trap, e.g. a failed assert) at line {ins.line}.")),
                guard,
                True,
            )
        dec = DECODERS.get(base)
        if dec is None:
            raise refuse(ins)
        return (dec(ins, cx), guard, False)

    def _bar(self, ins, cx, p, guard):
        self.has_barrier = True
        if "arrive" in ins.parts:
            return (lambda S, idx: None, guard, False)
        if "cluster" in ins.parts:
            raise refuse(ins)
        ops = ins.operands
        pred_get = None
        if "red" in ins.parts:
            d, ops = ins.operands[0], ins.operands[1:]
            pred_get = cx.src(ops[-1], DTYPES["pred"])
            ops = ops[:-1]
            kind = next(x for x in ("popc", "and", "or") if x in ins.parts)
            setter = cx.dst(d, DTYPES["u32"] if kind == "popc" else DTYPES["pred"])

            def hook(S, ts, vals):
                r = vals.sum() if kind == "popc" else vals.all() if kind == "and" else vals.any()
                setter(S, ts, np.full(len(ts), r))

            self.bar_hooks[p] = hook
        if len(ops) > 1 and isinstance(ops[1], Imm):
            self.bar_count[p] = int(ops[1].value)
        return (M.make_bar(pred_get), guard, True)

    def _call(self, ins, cx, f, p, guard, funcs):
        rets, callee, argnames = ins.call
        if callee == "vprintf":
            from .printf import make_vprintf

            return (make_vprintf(self, f, argnames, rets), guard, True)
        target = self.mod.functions.get(callee)
        if target is None or not target.defined or callee not in self.start_of:
            raise UnsupportedByTracer(
                f"The CPU runner of CUDA C cannot call `{demangle(callee)}` (line {ins.line}): its code is not in the "
                f"kernel's PTX; run this kernel on a GPU to test it."
            )
        self.calls[p] = (f, rets, target, argnames)
        return (M.make_call(self, p, callee, funcs.index(target), self.start_of[callee]), guard, True)

    def copy_args(self, S, site, t):
        caller, _, callee, argnames = self.calls[site]
        for a, prm in zip(argnames, callee.params):
            self._copy(S, (caller.name, a), self.param_size(caller, a), (callee.name, prm.name), prm.size, t)

    def copy_returns(self, S, site, t):
        caller, rets, callee, _ = self.calls[site]
        for r, prm in zip(rets, callee.returns):
            self._copy(S, (callee.name, prm.name), prm.size, (caller.name, r), self.param_size(caller, r), t)

    @staticmethod
    def _copy(S, src, ssize, dst, dsize, t):
        a, b = S.fparam_buf(src, ssize), S.fparam_buf(dst, dsize)
        m = min(a.shape[1], b.shape[1])
        b[t, :m] = a[t, :m]

    def read_bytes(self, S, t, addr, n=None):
        """Bytes at a generic address for thread t (printf's format and arguments)."""
        addr = int(addr)
        tag = addr >> mem.GSHIFT
        space = "global" if tag < 0x7000 else {v: k for k, v in mem.TAG.items()}.get(tag)
        a = addr if space == "global" else addr & ((1 << mem.GSHIFT) - 1)
        wins, k, off = mem.split(S, space, np.array([a], np.uint64))
        k, off = int(k[0]), int(off[0])
        if space is None or not 0 <= k < len(wins) or not 0 <= off <= wins[k].nbytes:
            return b""
        data = wins[k].data[t] if wins[k].per_thread else wins[k].data
        raw = data[off : wins[k].nbytes if n is None else off + n].tobytes()
        return raw.split(b"\0")[0] if n is None else raw


def _raiser(err):
    def run(S, idx, p, guard):
        raise err

    return run


DECODERS = dict(OPS)
DECODERS.update(
    {
        "ld": mem.decode_ld_st,
        "ldu": mem.decode_ld_st,
        "st": mem.decode_ld_st,
        "atom": atomics.decode_atom,
        "red": atomics.decode_atom,
        "cvta": mem.decode_cvta,
        "isspacep": mem.decode_isspacep,
        "shfl": warp.decode_shfl,
        "vote": warp.decode_vote,
        "match": warp.decode_match,
        "redux": warp.decode_redux,
        "activemask": warp.decode_activemask,
        "bar": warp.decode_warp_bar,
        "wmma": mma.decode_wmma,
    }
)
DECODERS.update(halves.wrap(DECODERS))  # .f16/.bf16 forms decoded in halves.py, the rest as before
for _noop in ("membar", "fence", "prefetch", "prefetchu", "nanosleep", "discard", "applypriority", "pmevent"):
    DECODERS[_noop] = lambda ins, cx: lambda S, idx: None
