"""Run a learner's `@cuda.jit` kernel on the CPU and record every memory access it makes.

    t = trace(kernel, griddim, blockdim, *args, outputs=("out",))
    t = trace(kernel[griddim, blockdim], *args)
    t.ok, t.verdicts, t.metrics, t.summary(), t.show()

How it works, and why:
  * We never launch anything.  We take the kernel's Python function (via `helpers._numba`), and
    make a copy of it (same code object) whose globals point `cuda` (and `numba.cuda`) at our
    own small fake module.  The learner's real globals are never touched, and it does not
    matter whether the simulator is switched on: a real `CUDADispatcher` works the same way.
  * Every simulated thread runs to completion or to its next `syncthreads()` in a fixed order
    (block by block, thread 0, 1, 2, ...).  Threads are greenlets, so a barrier is just a
    switch back to the block scheduler.  A fixed order makes every verdict reproducible.
    Kernels that never mention syncthreads skip greenlets and run threads as plain calls.
  * Arrays are wrapped in `TracedArray`, which checks bounds in every dimension (negative
    indices do NOT wrap, unlike NumPy) and appends one small tuple per access to a log.
    The log becomes NumPy arrays; `helpers.verdicts` does all analysis on those.
"""

import inspect
import linecache
import numbers
import re
import sys
import types as pytypes
from dataclasses import dataclass

import numpy as np

from . import _numba
from .errors import CourseError, KernelError, LearnerError, UnsupportedByTracer

__all__ = ["trace", "Trace", "ArrayInfo", "READ", "WRITE", "ATOMIC"]

READ, WRITE, ATOMIC = 0, 1, 2
KIND_NAMES = ("read", "write", "atomic")
MAX_ACCESSES = 4_000_000  # generous: a small traced launch makes thousands, not millions
_FLUSH_EVERY = 1 << 16
_INTS = frozenset({int, np.int64, np.int32, np.int16, np.int8,
                   np.uint64, np.uint32, np.uint16, np.uint8, np.intp})
_getframe = sys._getframe


# ----------------------------------------------------------------------------------------------
# Recorded facts
# ----------------------------------------------------------------------------------------------

@dataclass
class ArrayInfo:
    """One array the kernel touched. `space` is "global", "shared", "local" or "const"."""

    name: str
    space: str
    shape: tuple
    dtype: np.dtype
    strides: tuple  # bytes; used to turn element indices into addresses for coalescing
    param: object = None  # position in the kernel's parameters (global arrays only)
    line: object = None  # allocation line (shared/local arrays)
    var: str = ""  # the variable name, for element names such as `tile[3]`

    def __post_init__(self):
        if not self.var:
            self.var = self.name

    def element(self, index):
        """`out[3]`, `shared tile[1, 2]`: how messages name one element."""
        text = f"{self.var}[{', '.join(str(int(i)) for i in index)}]"
        return text if self.space == "global" else f"{self.space} {text}"

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class Dim3:
    """threadIdx / blockIdx / blockDim / gridDim: `.x .y .z`, like the real thing."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y=1, z=1):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"({self.x}, {self.y}, {self.z})"


def _unlinear(lin, dims):
    """Linear id -> (x, y, z) with x fastest, as CUDA numbers threads and blocks."""
    x = lin % dims[0]
    y = (lin // dims[0]) % dims[1]
    z = lin // (dims[0] * dims[1])
    return (int(x), int(y), int(z))


class _Recorder:
    """State shared by everything in one traced run: who is running now, and the access log.

    `cur` is the (global linear thread id, barrier epoch) of the running thread; the scheduler
    sets it before each switch, so recording never needs to ask "which thread am I?".
    """

    def __init__(self, max_accesses):
        self.buf = []  # (array id, flat index, kind, cur, code, line) per access
        self.chunks = []
        self.total = 0
        self.max_accesses = max_accesses
        self.cur = (0, 0)
        self.locs = {}  # (code, line) -> loc id
        self.arrays = []  # ArrayInfo, index = array id
        self.oob = []  # (array id, index tuple, kind, cur, code, line)
        self.divergent = []  # dicts, see _Runner._barrier
        self.sites = {}  # shared/local allocation site -> array id
        self.block_shared = {}  # shared allocation site -> TracedArray of the running block
        self.sched = None  # the block scheduler greenlet

    def add_array(self, info):
        self.arrays.append(info)
        return len(self.arrays) - 1

    def flush(self):
        buf = self.buf
        if not buf:
            return
        aid, flat, kind, cur, code, line = zip(*buf)
        locs = self.locs
        loc = [locs.setdefault(k, len(locs)) for k in zip(code, line)]
        gtid, epoch = zip(*cur)
        self.chunks.append(np.array([aid, flat, kind, gtid, epoch, loc], dtype=np.int64))
        self.total += len(buf)
        last = buf[-1]
        buf.clear()
        if self.total > self.max_accesses:
            raise KernelError(
                f"The tracer stopped your kernel after {self.total:,} memory accesses "
                f"(last one at line {last[5]}). Is a loop missing its exit? "
                f"If not, trace a smaller problem (fewer threads or elements).")

    def log_oob(self, aid, index, kind, frame):
        if len(self.oob) > self.max_accesses:
            self.total = len(self.oob)
            self.buf.append((aid, 0, kind, self.cur, frame.f_code, frame.f_lineno))
            self.flush()
        self.oob.append((aid, tuple(int(i) if isinstance(i, numbers.Integral) else i
                                    for i in index), kind, self.cur, frame.f_code, frame.f_lineno))


# ----------------------------------------------------------------------------------------------
# Arrays as the kernel sees them
# ----------------------------------------------------------------------------------------------

class TracedArray:
    """A NumPy array that records each element access and refuses out-of-bounds ones.

    Reads return NumPy scalars of the array's dtype, so float32 arithmetic matches a launch.
    An out-of-bounds read returns 0 and an out-of-bounds write is dropped (and both are
    recorded), so the kernel keeps running and we can report every mistake at once.
    """

    __slots__ = ("_data", "_map", "_aid", "_rec", "_record", "_n0", "_n1",
                 "shape", "size", "ndim", "dtype", "_fullmap")

    def __init__(self, data, aid, rec, record=True, index_map=None):
        self._data = data
        self._map = index_map  # for views: base-array flat index of each view element
        self._aid = aid
        self._rec = rec
        self._record = record
        self.shape = data.shape
        self.size = data.size
        self.ndim = data.ndim
        self.dtype = data.dtype
        self._n0 = data.shape[0] if data.ndim >= 1 else 0
        self._n1 = data.shape[1] if data.ndim >= 2 else 0
        self._fullmap = None

    # -- element access: a fast path for the common 1-D / 2-D integer index, else _locate ------
    def __getitem__(self, idx):
        if idx.__class__ in _INTS and self.ndim == 1:
            if 0 <= idx < self._n0:
                flat = idx
            else:
                return self._out_of_bounds((idx,), READ, _getframe(1))
        elif (idx.__class__ is tuple and self.ndim == 2 and len(idx) == 2
              and idx[0].__class__ in _INTS and idx[1].__class__ in _INTS):
            i, j = idx
            if 0 <= i < self._n0 and 0 <= j < self._n1:
                flat = i * self._n1 + j
            else:
                return self._out_of_bounds(idx, READ, _getframe(1))
        else:
            flat = self._locate(idx)
            if flat is None:
                return self._view(idx)
            if flat < 0:
                return self._out_of_bounds(idx, READ, _getframe(1))
        if self._record:
            rec = self._rec
            f = _getframe(1)
            if self._map is not None:
                flat = int(self._map.flat[flat])
            rec.buf.append((self._aid, flat, READ, rec.cur, f.f_code, f.f_lineno))
            if len(rec.buf) >= _FLUSH_EVERY:
                rec.flush()
        return self._data[idx]

    def __setitem__(self, idx, value):
        if idx.__class__ in _INTS and self.ndim == 1:
            if 0 <= idx < self._n0:
                flat = idx
            else:
                return self._out_of_bounds((idx,), WRITE, _getframe(1))
        elif (idx.__class__ is tuple and self.ndim == 2 and len(idx) == 2
              and idx[0].__class__ in _INTS and idx[1].__class__ in _INTS):
            i, j = idx
            if 0 <= i < self._n0 and 0 <= j < self._n1:
                flat = i * self._n1 + j
            else:
                return self._out_of_bounds(idx, WRITE, _getframe(1))
        else:
            flat = self._locate(idx)
            if flat is None:
                raise TypeError("cannot assign to a slice of an array inside a kernel; "
                                "write one element at a time")
            if flat < 0:
                return self._out_of_bounds(idx, WRITE, _getframe(1))
        if self._record:
            rec = self._rec
            f = _getframe(1)
            if self._map is not None:
                flat = int(self._map.flat[flat])
            rec.buf.append((self._aid, flat, WRITE, rec.cur, f.f_code, f.f_lineno))
            if len(rec.buf) >= _FLUSH_EVERY:
                rec.flush()
        self._data[idx] = value

    def _locate(self, idx):
        """Flat (row-major) index of `idx`; -1 when out of bounds; None for a partial index."""
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) > self.ndim:
            raise IndexError(f"too many indices: the array has {self.ndim} dimension(s) "
                             f"but was indexed with {len(idx)}")
        for i in idx:
            if not isinstance(i, numbers.Integral):
                if isinstance(i, slice) or i is Ellipsis:
                    return None
                raise TypeError(f"array indices must be integers, not {type(i).__name__} "
                                f"({i!r}); use int(...) or // for the index")
        if len(idx) < self.ndim:
            return None
        flat = 0
        inside = True
        for i, n in zip(idx, self.shape):
            if not 0 <= i < n:
                inside = False
            flat = flat * n + int(i)
        return flat if inside else -1

    def _out_of_bounds(self, idx, kind, frame):
        self._rec.log_oob(self._aid, idx if isinstance(idx, tuple) else (idx,), kind, frame)
        if kind == READ:
            return self.dtype.type(0)
        return None

    def _view(self, idx):
        """`A[i]` of a 2-D array (or a slice): a traced view that records base-array indices."""
        if self._map is not None:
            base = self._map
        else:
            if self._fullmap is None:
                self._fullmap = np.arange(self.size, dtype=np.int64).reshape(self.shape)
            base = self._fullmap
        try:
            data, index_map = self._data[idx], base[idx]
        except IndexError:
            raise IndexError(f"index {idx!r} is out of bounds for an array of shape "
                             f"{self.shape}") from None
        return TracedArray(data, self._aid, self._rec, self._record, index_map)

    # -- the rest of the array interface a kernel may use ------------------------------------
    def __len__(self):
        return self._n0

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def strides(self):
        return self._data.strides

    def __iter__(self):
        for i in range(self._n0):
            yield self[i]

    def __repr__(self):
        return f"<traced array {self._rec.arrays[self._aid].name} shape={self.shape}>"


def _element_op(ary, idx, frame, op):
    """Read-modify-write of one element for the atomics; returns the old value."""
    if not isinstance(ary, TracedArray):
        old = ary[idx]
        ary[idx] = op(old)
        return old
    flat = ary._locate(idx)
    if flat is None:
        raise TypeError("an atomic needs the index of one element, not a slice")
    if flat < 0:
        ary._rec.log_oob(ary._aid, idx if isinstance(idx, tuple) else (idx,), ATOMIC, frame)
        return ary.dtype.type(0)
    if ary._record:
        rec = ary._rec
        if ary._map is not None:
            flat = int(ary._map.flat[flat])
        rec.buf.append((ary._aid, flat, ATOMIC, rec.cur, frame.f_code, frame.f_lineno))
    data = ary._data
    old = data[idx]
    data[idx] = op(old)
    return old


# ----------------------------------------------------------------------------------------------
# The fake `cuda` module, modelled one-to-one on numba-cuda's simulator/kernelapi.py
# ----------------------------------------------------------------------------------------------

_UNSUPPORTED = {
    "shfl_sync": "warp shuffles", "shfl_up_sync": "warp shuffles",
    "shfl_down_sync": "warp shuffles", "shfl_xor_sync": "warp shuffles",
    "all_sync": "warp vote functions", "any_sync": "warp vote functions",
    "eq_sync": "warp vote functions", "ballot_sync": "warp vote functions",
    "match_any_sync": "warp match functions", "match_all_sync": "warp match functions",
    "syncwarp": "warp-level synchronisation", "activemask": "warp masks",
    "lanemask_lt": "warp masks", "cg": "cooperative groups", "grid_group": "cooperative groups",
    "this_grid": "cooperative groups", "fp16": "half-precision intrinsics",
}


def _unsupported(what, why=None):
    kind = f" ({why})" if why else ""
    return UnsupportedByTracer(
        f"{what}{kind} is not supported by the CPU tracer; run this kernel on a GPU to test it.")


def _dim_or_attr(attr):
    if _numba.numba_type(attr):
        return attr
    return None


class _FakeShared:
    def __init__(self, rec, dynamic_bytes):
        self._rec = rec
        self._dynamic_bytes = dynamic_bytes

    def array(self, shape, dtype, alignment=None):
        """One array per block per allocation line, like the simulator; recorded."""
        rec = self._rec
        f = _getframe(1)
        site = (f.f_code, f.f_lineno)
        arr = rec.block_shared.get(site)
        if arr is None:
            dtype = _numba.as_dtype(dtype)
            if shape == 0 or shape == (0,):
                data = rec.block_shared.get("dynamic")
                if data is None:
                    data = rec.block_shared["dynamic"] = np.zeros(self._dynamic_bytes, np.uint8)
                data = data[: len(data) // dtype.itemsize * dtype.itemsize].view(dtype)
            else:
                data = np.zeros(shape, dtype)
            aid = rec.sites.get(site)
            if aid is None:
                var = _assigned_name(f, "shared")
                name = f"shared {var} (line {f.f_lineno})"
                aid = rec.sites[site] = rec.add_array(ArrayInfo(
                    name, "shared", data.shape, data.dtype, data.strides, None, f.f_lineno, var))
            arr = rec.block_shared[site] = TracedArray(data, aid, rec)
        return arr


class _FakeLocal:
    def __init__(self, rec):
        self._rec = rec

    def array(self, shape, dtype, alignment=None):
        """Private to one thread: bounds-checked but not recorded (no other thread sees it)."""
        rec = self._rec
        f = _getframe(1)
        site = ("local", f.f_code, f.f_lineno)
        data = np.zeros(shape, _numba.as_dtype(dtype))
        aid = rec.sites.get(site)
        if aid is None:
            var = _assigned_name(f, "local")
            name = f"local {var} (line {f.f_lineno})"
            aid = rec.sites[site] = rec.add_array(ArrayInfo(
                name, "local", data.shape, data.dtype, data.strides, None, f.f_lineno, var))
        return TracedArray(data, aid, rec, record=False)


class _FakeConst:
    def __init__(self, rec):
        self._rec = rec

    def array_like(self, ary):
        """Constant memory: read-only, bounds-checked, not recorded."""
        rec = self._rec
        f = _getframe(1)
        site = ("const", f.f_code, f.f_lineno)
        data = np.array(ary, copy=True)
        data.flags.writeable = False
        aid = rec.sites.get(site)
        if aid is None:
            var = _assigned_name(f, "const")
            name = f"const {var} (line {f.f_lineno})"
            aid = rec.sites[site] = rec.add_array(ArrayInfo(
                name, "const", data.shape, data.dtype, data.strides, None, f.f_lineno, var))
        return TracedArray(data, aid, rec, record=False)


class _FakeAtomic:
    """cuda.atomic.*: each returns the old value, as on the GPU. Recorded as kind "atomic"."""

    def add(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: old + val)

    def sub(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: old - val)

    def max(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: max(old, val))

    def min(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: min(old, val))

    def nanmax(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: np.nanmax([old, val]))

    def nanmin(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: np.nanmin([old, val]))

    def exch(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: val)

    def cas(self, ary, idx, old, val):
        expected = old
        return _element_op(ary, idx, _getframe(1), lambda cur: val if cur == expected else cur)

    def compare_and_swap(self, ary, old, val):
        expected = old
        return _element_op(ary, (0,) * ary.ndim, _getframe(1),
                           lambda cur: val if cur == expected else cur)

    def and_(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: old & val)

    def or_(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: old | val)

    def xor(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: old ^ val)

    def inc(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1), lambda old: 0 if old >= val else old + 1)

    def dec(self, ary, idx, val):
        return _element_op(ary, idx, _getframe(1),
                           lambda old: val if (old == 0 or old > val) else old - 1)

    def __getattr__(self, name):
        raise _unsupported(f"cuda.atomic.{name}")


class FakeCuda:
    """What `cuda` means inside a traced kernel. The scheduler sets threadIdx/blockIdx."""

    warpsize = 32

    def __init__(self, rec, griddim, blockdim, dynamic_bytes=0):
        self._rec = rec
        self.gridDim = Dim3(*griddim)
        self.blockDim = Dim3(*blockdim)
        self.threadIdx = Dim3(0, 0, 0)
        self.blockIdx = Dim3(0, 0, 0)
        self.shared = _FakeShared(rec, dynamic_bytes)
        self.local = _FakeLocal(rec)
        self.const = _FakeConst(rec)
        self.atomic = _FakeAtomic()
        self._greenlets = True  # False when threads run as plain calls (no barrier possible)

    @property
    def laneid(self):
        t, b = self.threadIdx, self.blockDim
        return (t.x + b.x * (t.y + b.y * t.z)) % 32

    def grid(self, ndim):
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        x = b.x * d.x + t.x
        if ndim == 1:
            return x
        y = b.y * d.y + t.y
        if ndim == 2:
            return (x, y)
        if ndim == 3:
            return (x, y, b.z * d.z + t.z)
        raise TypeError(f"cuda.grid takes 1, 2 or 3, not {ndim!r}")

    def gridsize(self, ndim):
        d, g = self.blockDim, self.gridDim
        if ndim == 1:
            return d.x * g.x
        if ndim == 2:
            return (d.x * g.x, d.y * g.y)
        if ndim == 3:
            return (d.x * g.x, d.y * g.y, d.z * g.z)
        raise TypeError(f"cuda.gridsize takes 1, 2 or 3, not {ndim!r}")

    # -- barriers: a switch back to the block scheduler -----------------------------------------
    def _barrier(self, value, frame):
        if not self._greenlets:  # cannot happen: the code scan found no syncthreads
            raise _unsupported("cuda.syncthreads reached through an unusual route")
        return self._rec.sched.switch(((frame.f_code, frame.f_lineno), value))

    def syncthreads(self):
        self._barrier(0, _getframe(1))

    def syncthreads_count(self, value):
        return self._barrier(1 if value else 0, _getframe(1))[0]

    def syncthreads_and(self, value):
        count, n = self._barrier(1 if value else 0, _getframe(1))
        return 1 if count == n else 0

    def syncthreads_or(self, value):
        return 1 if self._barrier(1 if value else 0, _getframe(1))[0] else 0

    def threadfence(self):
        pass

    threadfence_block = threadfence_system = threadfence

    # -- the simulator's scalar intrinsics --------------------------------------------------------
    @staticmethod
    def fma(a, b, c):
        return a * b + c

    @staticmethod
    def cbrt(a):
        return a ** (1 / 3)

    @staticmethod
    def popc(val):
        return bin(int(val) & 0xFFFFFFFFFFFFFFFF).count("1")

    @staticmethod
    def brev(val):
        return int("{:032b}".format(int(val) & 0xFFFFFFFF)[::-1], 2)

    @staticmethod
    def clz(val):
        s = "{:032b}".format(int(val) & 0xFFFFFFFF)
        return len(s) - len(s.lstrip("0"))

    @staticmethod
    def ffs(val):
        s = "{:032b}".format(int(val) & 0xFFFFFFFF)
        return (len(s) - len(s.rstrip("0")) + 1) % 33

    @staticmethod
    def selp(a, b, c):
        return b if a else c

    def __getattr__(self, name):
        # Only reached for names not defined above: numba types such as cuda.float32 pass
        # through; any other CUDA feature is refused rather than guessed at.
        if name.startswith("__"):
            raise AttributeError(name)
        value = _dim_or_attr(_numba.cuda_attribute(name))
        if value is not None:
            return value
        raise _unsupported(f"cuda.{name}", _UNSUPPORTED.get(name))


class _FakeNumba:
    """`numba` as a kernel sees it: `numba.cuda` is the fake, everything else is real."""

    def __init__(self, real, fake_cuda):
        self.cuda = fake_cuda
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=")


def _assigned_name(frame, space):
    """The variable a shared/local array is assigned to (`tile = cuda.shared.array(...)`)."""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno, frame.f_globals)
    m = _ASSIGN.match(line)
    return m.group(1) if m else "array"


# ----------------------------------------------------------------------------------------------
# Copying the learner's functions with the fake module in their globals
# ----------------------------------------------------------------------------------------------

def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            yield from _code_objects(const)


class _Instrumenter:
    """Makes traced copies of the kernel and, recursively, of the device functions it calls."""

    def __init__(self, fake_cuda):
        self.fake_cuda = fake_cuda
        self.fake_numba = None
        self.functions = {}  # id(original function) -> traced copy
        self.globals = {}  # id(original globals dict) -> (original, copy)
        self.codes = set()  # learner code objects, to find the learner's line in tracebacks
        self.uses_barrier = False

    def function(self, func):
        key = id(func)
        if key in self.functions:
            return self.functions[key]
        orig_globals = func.__globals__
        entry = self.globals.get(id(orig_globals))
        if entry is None:
            entry = self.globals[id(orig_globals)] = (orig_globals, dict(orig_globals))
        new_globals = entry[1]
        closure = func.__closure__
        if closure:
            closure = tuple(pytypes.CellType(self._replacement(_cell_value(c))) for c in closure)
        new = pytypes.FunctionType(func.__code__, new_globals, func.__name__,
                                   func.__defaults__, closure)
        new.__kwdefaults__ = func.__kwdefaults__
        self.functions[key] = new  # before recursing: device functions may be recursive
        names = set()
        for code in _code_objects(func.__code__):
            self.codes.add(code)
            names.update(code.co_names)
        if any(n.startswith("syncthreads") for n in names):
            self.uses_barrier = True
        for name in names:
            if name in orig_globals:
                new_globals[name] = self._replacement(orig_globals[name])
        return new

    def _replacement(self, value):
        if _numba.is_cuda_module(value):
            return self.fake_cuda
        if _numba.is_numba_module(value):
            if self.fake_numba is None:
                self.fake_numba = _FakeNumba(value, self.fake_cuda)
            return self.fake_numba
        if _numba.is_cuda_function(value):
            return self.function(_numba.python_function(value))
        return value


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # empty cell
        return None


# ----------------------------------------------------------------------------------------------
# Running the threads
# ----------------------------------------------------------------------------------------------

class _Runner:
    def __init__(self, fn, args, griddim, blockdim, rec, fake, instr):
        self.fn, self.args = fn, args
        self.griddim, self.blockdim = griddim, blockdim
        self.rec, self.fake, self.instr = rec, fake, instr
        self.tpb = blockdim[0] * blockdim[1] * blockdim[2]
        self.tids = [Dim3(*_unlinear(t, blockdim)) for t in range(self.tpb)]

    def run(self):
        nblocks = self.griddim[0] * self.griddim[1] * self.griddim[2]
        run_block = self._block_greenlets if self.instr.uses_barrier else self._block_plain
        self.fake._greenlets = self.instr.uses_barrier
        for b in range(nblocks):
            self.fake.blockIdx = Dim3(*_unlinear(b, self.griddim))
            self.rec.block_shared = {}
            run_block(b)
        self.rec.flush()

    def _block_plain(self, b):
        fn, args, fake, rec, tids = self.fn, self.args, self.fake, self.rec, self.tids
        base = b * self.tpb
        for t in range(self.tpb):
            fake.threadIdx = tids[t]
            rec.cur = (base + t, 0)
            try:
                fn(*args)
            except CourseError:
                raise
            except Exception as exc:
                raise self._kernel_error(exc, b, t) from None

    def _block_greenlets(self, b):
        from greenlet import greenlet, getcurrent

        fn, args, fake, rec, tids, tpb = self.fn, self.args, self.fake, self.rec, self.tids, self.tpb
        base = b * tpb
        rec.sched = getcurrent()

        def body(*_):
            fn(*args)

        threads = [greenlet(body) for _ in range(tpb)]
        epoch = [0] * tpb
        resume = [None] * tpb
        live = list(range(tpb))
        while live:
            waiting = {}  # thread -> (barrier site, value)
            for t in live:
                fake.threadIdx = tids[t]
                rec.cur = (base + t, epoch[t])
                try:
                    got = threads[t].switch(resume[t])
                except CourseError:
                    raise
                except Exception as exc:
                    raise self._kernel_error(exc, b, t) from None
                if not threads[t].dead:
                    waiting[t] = got
            if not waiting:
                break
            self._barrier(b, waiting, epoch, resume)
            live = sorted(waiting)

    def _barrier(self, b, waiting, epoch, resume):
        """Release every waiting thread; a barrier some threads of the block missed is a verdict."""
        by_site = {}
        for t, (site, _) in waiting.items():
            by_site.setdefault(site, []).append(t)
        if len(waiting) != self.tpb or len(by_site) > 1:
            main_site = max(by_site, key=lambda s: len(by_site[s]))
            self.rec.divergent.append({
                "block": b, "line": main_site[1], "code": main_site[0],
                "arrived": by_site[main_site],
                "elsewhere": {s[1]: ts for s, ts in by_site.items() if s != main_site},
                "finished": [t for t in range(self.tpb) if t not in waiting],
                "epoch": epoch[by_site[main_site][0]],
            })
        for site, ts in by_site.items():
            count = sum(waiting[t][1] for t in ts)
            for t in ts:
                epoch[t] += 1
                resume[t] = (count, len(ts))

    def _kernel_error(self, exc, b, t):
        frame_line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in self.instr.codes:
                frame_line = (tb.tb_frame.f_code, tb.tb_lineno)
            tb = tb.tb_next
        where = ""
        if frame_line is not None:
            code, line = frame_line
            src = linecache.getline(code.co_filename, line).strip()
            where = f", at line {line} (in {code.co_name}): `{src}`"
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return KernelError(
            f"Your kernel raised {what} in block {_unlinear(b, self.griddim)}, "
            f"thread {_unlinear(t, self.blockdim)}{where}. Fix that line and trace again.")


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------

def _dims(value, what):
    if isinstance(value, numbers.Integral):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except TypeError:
        raise LearnerError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}.") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LearnerError(f"{what} must be 1 to 3 positive ints, not {value!r}.")
    return dims + (1,) * (3 - len(dims))


def _split_launch(kernel, args):
    """(python function, griddim, blockdim, sharedmem, kernel args) from either call style."""
    config = _numba.launch_configuration(kernel)
    func = _numba.python_function(kernel)
    if func is None:
        if isinstance(kernel, pytypes.FunctionType):
            func = kernel
        else:
            raise LearnerError(f"trace() needs a @cuda.jit kernel, not {type(kernel).__name__}.")
    if _numba.is_device_function(kernel):
        raise LearnerError(f"{func.__name__} is a device function (device=True); trace the "
                           f"kernel that calls it instead.")
    nparams = len(inspect.signature(func).parameters)
    if config is not None and (len(args) == nparams or type(kernel).__name__ != "FakeCUDAKernel"):
        _, griddim, blockdim, sharedmem = config
        return func, griddim, blockdim, sharedmem, args
    if len(args) < 2:
        raise LearnerError("Give the launch: trace(kernel, griddim, blockdim, *args) or "
                           "trace(kernel[griddim, blockdim], *args).")
    return func, args[0], args[1], 0, args[2:]


def trace(kernel, *args, outputs=(), sharedmem=None, max_accesses=MAX_ACCESSES):
    """Run `kernel` on the CPU, one thread at a time, and record every memory access.

    `trace(kernel, griddim, blockdim, *args)` or `trace(kernel[griddim, blockdim], *args)`.
    NumPy arrays are updated in place, as a launch would; device arrays (anything with
    `copy_to_host`) are copied in and, where possible, copied back.  `outputs` names the
    arrays every element of which the kernel should write (parameter names or positions).
    Returns a `Trace`; look at `.verdicts`, `.summary()` and `.show()`.
    """
    func, griddim, blockdim, dyn, kargs = _split_launch(kernel, args)
    griddim, blockdim = _dims(griddim, "griddim"), _dims(blockdim, "blockdim")
    if sharedmem is not None:
        dyn = int(sharedmem)
    if blockdim[0] * blockdim[1] * blockdim[2] > 1024:
        raise LearnerError(f"A block can have at most 1024 threads; blockdim {blockdim} has "
                           f"{blockdim[0] * blockdim[1] * blockdim[2]}.")
    params = list(inspect.signature(func).parameters)
    if len(kargs) != len(params):
        raise LearnerError(f"{func.__name__} takes {len(params)} argument(s) "
                           f"({', '.join(params)}) but {len(kargs)} were given.")

    rec = _Recorder(max_accesses)
    traced_args, write_back = [], []
    seen = {}
    for pos, (name, value) in enumerate(zip(params, kargs)):
        host = value
        if not isinstance(value, np.ndarray) and hasattr(value, "copy_to_host"):
            host = value.copy_to_host()
            if hasattr(value, "copy_to_device"):
                write_back.append((value, host))
        if isinstance(host, np.ndarray) and host.ndim > 0:
            if id(host) in seen:  # the same array passed twice: one array, both names
                traced_args.append(seen[id(host)])
                rec.arrays[seen[id(host)]._aid].name += f"/{name}"
                continue
            aid = rec.add_array(ArrayInfo(name, "global", host.shape, host.dtype,
                                          host.strides, pos))
            seen[id(host)] = proxy = TracedArray(host, aid, rec)
            traced_args.append(proxy)
        else:
            traced_args.append(value)

    fake = FakeCuda(rec, griddim, blockdim, dyn)
    instr = _Instrumenter(fake)
    fn = instr.function(func)
    _Runner(fn, traced_args, griddim, blockdim, rec, fake, instr).run()
    for device_array, host in write_back:
        device_array.copy_to_device(host)

    out_ids = []
    for o in (outputs if isinstance(outputs, (tuple, list)) else (outputs,)):
        pos = o if isinstance(o, numbers.Integral) else (params.index(o) if o in params else None)
        if pos is None or not 0 <= pos < len(params) or not isinstance(traced_args[pos], TracedArray):
            raise LearnerError(f"outputs: {o!r} is not an array parameter of {func.__name__} "
                               f"(parameters: {', '.join(params)}).")
        out_ids.append(traced_args[pos]._aid)
    return Trace(func, griddim, blockdim, rec, out_ids)


# ----------------------------------------------------------------------------------------------
# The result
# ----------------------------------------------------------------------------------------------

class Accesses:
    """Every recorded in-bounds access, in execution order, as NumPy arrays.

    array: array id (index into Trace.arrays); index: flat row-major element index;
    kind: READ/WRITE/ATOMIC; gtid: global linear thread id (block * threads_per_block +
    thread); epoch: syncthreads passed by that thread; loc: index into Trace.locations.
    """

    def __init__(self, table, tpb):
        self.array, self.index, self.kind, self.gtid, self.epoch, self.loc = table
        self.tpb = tpb

    def __len__(self):
        return len(self.array)

    @property
    def block(self):
        return self.gtid // self.tpb

    @property
    def thread(self):
        return self.gtid % self.tpb

    @property
    def warp(self):
        return (self.gtid % self.tpb) // 32


@dataclass
class Location:
    file: str
    line: int
    function: str

    @property
    def source(self):
        return linecache.getline(self.file, self.line).strip()


class Trace:
    """What one traced launch did. Verdicts and metrics are computed on first use."""

    def __init__(self, func, griddim, blockdim, rec, outputs):
        self.kernel_name = func.__name__
        self.griddim, self.blockdim = griddim, blockdim
        self.threads_per_block = blockdim[0] * blockdim[1] * blockdim[2]
        self.nblocks = griddim[0] * griddim[1] * griddim[2]
        self.nthreads = self.nblocks * self.threads_per_block
        self.arrays = rec.arrays
        self.outputs = outputs
        table = (np.concatenate(rec.chunks, axis=1) if rec.chunks
                 else np.zeros((6, 0), dtype=np.int64))
        self.accesses = Accesses(table, self.threads_per_block)
        self.locations = [None] * len(rec.locs)
        for (code, line), i in rec.locs.items():
            self.locations[i] = Location(code.co_filename, line, code.co_name)
        self.out_of_bounds = rec.oob
        self.divergent = rec.divergent
        self._verdicts = self._metrics = None

    # -- identities ---------------------------------------------------------------------------
    def block_of(self, gtid):
        return _unlinear(gtid // self.threads_per_block, self.griddim)

    def thread_of(self, gtid):
        return _unlinear(gtid % self.threads_per_block, self.blockdim)

    def array_id(self, name):
        for i, a in enumerate(self.arrays):
            if name in (a.name, a.name.split(" (")[0], a.name.split(" ")[1] if " " in a.name else None):
                return i
        raise LearnerError(f"No array called {name!r} in this trace; arrays: "
                           f"{', '.join(a.name for a in self.arrays)}.")

    # -- results ------------------------------------------------------------------------------
    @property
    def verdicts(self):
        if self._verdicts is None:
            from .verdicts import find_verdicts

            self._verdicts = find_verdicts(self)
        return self._verdicts

    @property
    def metrics(self):
        if self._metrics is None:
            from .verdicts import compute_metrics

            self._metrics = compute_metrics(self)
        return self._metrics

    @property
    def ok(self):
        return not self.verdicts

    def summary(self):
        from .verdicts import summarize

        return summarize(self)

    def __repr__(self):
        return (f"<Trace of {self.kernel_name}: {self.nblocks} block(s) x "
                f"{self.threads_per_block} threads, {len(self.accesses)} accesses, "
                f"{len(self.verdicts)} verdict(s)>")

    # -- pictures -----------------------------------------------------------------------------
    def show(self, block=0, array=None, **kwargs):
        from .draw import draw_accesses

        return draw_accesses(self, block=block, array=array, **kwargs)

    def show_coalescing(self, array=None, block=0, warp=0, **kwargs):
        from .draw import draw_coalescing

        return draw_coalescing(self, array=array, block=block, warp=warp, **kwargs)

    def show_banks(self, array=None, block=0, warp=0, **kwargs):
        from .draw import draw_banks

        return draw_banks(self, array=array, block=block, warp=warp, **kwargs)
