"""The fake `cuda` module a traced kernel runs against, one-to-one with numba-cuda's
simulator (kernelapi.py): thread coordinates, shared/local/const arrays, atomics, barriers.
"""

import dataclasses
import linecache
import re
import sys

import numpy as np

from .. import _numba
from ..accesses import ArrayInfo
from ..errors import LearnerError, UnsupportedByTracer
from ..limits import const_problem, local_problem, shared_problem
from . import shapes
from .arrays import TracedArray, element_op
from .records import Arrival, Dim3, WarpCall

_getframe = sys._getframe

_UNSUPPORTED = {
    "fp16": "half-precision intrinsics",
}


def _unsupported(what, why=None):
    kind = f" ({why})" if why else ""
    return UnsupportedByTracer(f"{what}{kind} is not supported by the CPU tracer; run this kernel on a GPU to test it.")


def _dim_or_attr(attr):
    if _numba.numba_type(attr):
        return attr
    return None


class Word32(np.int64):
    """A 32-bit result of a warp call (a ballot, a match or lane mask), held as an int64: Numba types
    these int32 or uint32, and arithmetic with them is int64 there as here (Numba widens), storing
    one into any integer array keeps its 32 bits (a uint32 array gets 0xFFFFFFF0 for an int32 -16,
    as on a GPU, where a Python int raised OverflowError), and cuda.popc counts 32 bits, not 64."""

    __slots__ = ()


def _refuse_shape(frame, rec):
    """A shared or local array whose shape a GPU compiler refuses (helpers.tracer.shapes) stops the trace."""
    problem = shapes.refusal(frame, rec.kernel_code)
    if problem:
        raise LearnerError(problem)


class _FakeShared:
    def __init__(self, rec, dynamic_bytes):
        self._rec = rec
        self._dynamic_bytes = dynamic_bytes
        self._block, self._static_bytes = None, 0  # the running block's shared dict, bytes allocated in it
        self._dynamic_aids = {}  # element size -> the array id every dynamic shared array of that size shares

    def _allocate_static(self, shape, dtype):
        """Count a block's static shared bytes as they are allocated; refuse past the 48 KB a GPU allows."""
        if self._block is not self._rec.block_shared:
            self._block, self._static_bytes = self._rec.block_shared, 0
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        problem = shared_problem(self._static_bytes + nbytes)
        if problem:
            raise LearnerError(problem[0].upper() + problem[1:])
        self._static_bytes += nbytes
        return np.zeros(shape, dtype)

    def array(self, shape, dtype, alignment=None):
        """One array per block per allocation line, like the simulator; recorded."""
        rec = self._rec
        f = _getframe(1)
        site = (f.f_code, f.f_lineno)
        arr = rec.block_shared.get(site)
        if arr is None:
            dtype = _numba.as_dtype(dtype)
            if site not in rec.sites and shape != 0 and shape != (0,):  # first at this line: can a GPU have it?
                _refuse_shape(f, rec)
            if shape == 0 or shape == (0,):
                data = rec.block_shared.get("dynamic")
                if data is None:
                    data = rec.block_shared["dynamic"] = np.zeros(self._dynamic_bytes, np.uint8)
                data = data[: len(data) // dtype.itemsize * dtype.itemsize].view(dtype)
            else:
                data = self._allocate_static(shape, dtype)
            aid = rec.sites.get(site)
            if aid is None:
                var = _assigned_name(f, "shared")
                if shape == 0 or shape == (0,):
                    aid = rec.sites[site] = self._dynamic_array(data, var, f.f_lineno)
                else:
                    name = f"shared {var} (line {f.f_lineno})"
                    aid = rec.sites[site] = rec.add_array(
                        ArrayInfo(name, "shared", data.shape, data.dtype, data.strides, None, f.f_lineno, var)
                    )
            arr = rec.block_shared[site] = TracedArray(data, aid, rec)
        return arr

    def _dynamic_array(self, data, var, line):
        """The array id of a dynamic shared array: every ``cuda.shared.array(0, ...)`` starts at one address, so
        one of an element size already seen gets that array's id (writes through one race reads through another)."""
        rec = self._rec
        aid = self._dynamic_aids.get(data.dtype.itemsize)
        if aid is not None:
            info = rec.arrays[aid]
            rec.arrays[aid] = dataclasses.replace(info, name=f"{info.name[:-1]}; also {var}, line {line})")
            return aid
        info = ArrayInfo(f"shared {var} (line {line})", "shared", data.shape, data.dtype, data.strides, None, line, var)
        aid = self._dynamic_aids[data.dtype.itemsize] = rec.add_array(info)
        return aid


class _FakeLocal:
    def __init__(self, rec):
        self._rec = rec

    def array(self, shape, dtype, alignment=None):
        """Private to one thread: bounds-checked but not recorded (no other thread sees it)."""
        rec = self._rec
        f = _getframe(1)
        site = ("local", f.f_code, f.f_lineno)
        if site not in rec.sites:
            _refuse_shape(f, rec)
        dtype = _numba.as_dtype(dtype)
        problem = local_problem(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)  # before allocating it
        if problem:
            raise LearnerError(problem[0].upper() + problem[1:])
        data = np.zeros(shape, dtype)
        aid = rec.sites.get(site)
        if aid is None:
            var = _assigned_name(f, "local")
            name = f"local {var} (line {f.f_lineno})"
            aid = rec.sites[site] = rec.add_array(
                ArrayInfo(name, "local", data.shape, data.dtype, data.strides, None, f.f_lineno, var)
            )
        return TracedArray(data, aid, rec, record=False)


class _FakeConst:
    def __init__(self, rec):
        self._rec = rec
        self._tables = {}  # site -> the table's copy: made once, as a GPU bakes it into the kernel
        self._baked = {}  # name -> a global NumPy array the kernel reads (its proxy): Numba makes it a constant too

    def array_like(self, ary):
        """Constant memory: read-only (a write is an error), bounds-checked, recorded (Trace.const_reads
        counts the addresses each warp reads); all the kernel's tables together may take 64 KiB, as on a GPU."""
        rec = self._rec
        f = _getframe(1)
        site = ("const", f.f_code, f.f_lineno)
        data = self._tables.get(site)
        if data is None:
            self._baked = {n: pb for n, pb in self._baked.items() if pb[0] is not ary}  # baked once, as this table
            data = np.array(ary, copy=True)
            problem = self._over(data.nbytes)
            if problem:
                raise LearnerError(problem[0].upper() + problem[1:])
            self._tables[site] = data
        aid = rec.sites.get(site)
        if aid is None:
            var = _assigned_name(f, "const")
            name = f"const {var} (line {f.f_lineno})"
            aid = rec.sites[site] = rec.add_array(
                ArrayInfo(name, "const", data.shape, data.dtype, data.strides, None, f.f_lineno, var)
            )
        return TracedArray(data, aid, rec, readonly=True)

    def bake(self, name: str, proxy, nbytes: int) -> None:
        """A global array the kernel reads: Numba bakes it into constant memory (``.const _cudapy_cmem``)."""
        self._baked[name] = (proxy, nbytes)
        if problem := self._over(0):
            raise LearnerError(problem[0].upper() + problem[1:])

    def _over(self, more: int) -> str | None:
        tables, baked = sum(t.nbytes for t in self._tables.values()) + more, sum(b for _, b in self._baked.values())
        parts = ["its cuda.const.array_like tables"] * bool(tables) + [
            f"the global arrays it reads ({', '.join(self._baked)}), which Numba compiles into constant memory,"
        ] * bool(baked)
        return const_problem(tables + baked, " and ".join(parts))


class _FakeAtomic:
    """cuda.atomic.*: each returns the old value, as on the GPU. Recorded as kind "atomic"."""

    def __init__(self, fake=None):
        self._fake = fake

    def _lockstep(self, frame):
        """The lanes of a warp that reach a compare-and-swap meet there first, as a converged warp
        runs it: each lane read its guess before any lane's CAS, so all but one CAS fail and must retry
        with the value returned. One thread at a time, every CAS would succeed and a loop that never
        retries would pass. Only where threads run as greenlets (the code scan saw the CAS)."""
        fake = self._fake
        if fake is not None and fake._greenlets:
            fake._warp("activemask", 0xFFFFFFFF, None, 0, frame)

    def add(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: old + val)

    def sub(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: old - val)

    def max(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: max(old, val))

    def min(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: min(old, val))

    def nanmax(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: np.nanmax([old, val]))

    def nanmin(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: np.nanmin([old, val]))

    def exch(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: val)

    def cas(self, ary, idx, old, val):
        expected = old
        frame = _getframe(1)
        self._lockstep(frame)
        return element_op(ary, idx, frame, lambda cur: val if cur == expected else cur, cas=True)

    def compare_and_swap(self, ary, old, val):
        expected = old
        frame = _getframe(1)
        self._lockstep(frame)
        return element_op(ary, (0,) * ary.ndim, frame, lambda cur: val if cur == expected else cur, cas=True)

    def and_(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: old & val)

    def or_(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: old | val)

    def xor(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: old ^ val)

    def inc(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: 0 if old >= val else old + 1)

    def dec(self, ary, idx, val):
        return element_op(ary, idx, _getframe(1), lambda old: val if (old == 0 or old > val) else old - 1)

    def __getattr__(self, name):
        raise _unsupported(f"cuda.atomic.{name}")


class _GridGroup:
    def __init__(self, fake):
        self._fake = fake

    def sync(self):
        """A barrier for every thread of every block (the runner runs all blocks side by side)."""
        self._fake._switch("grid", _getframe(1), None)


class _FakeCg:
    """cuda.cg: only this_grid(), as numba-cuda offers."""

    def __init__(self, fake):
        self._grid = _GridGroup(fake)

    def this_grid(self):
        return self._grid


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
        self.atomic = _FakeAtomic(self)
        self.cg = _FakeCg(self)
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

    # -- barriers: a switch back to the scheduler ------------------------------------------------
    def _switch(self, kind, frame, payload):
        if not self._greenlets:  # cannot happen: the code scan found no barrier or warp call
            raise _unsupported(f"a {kind} barrier reached through an unusual route")
        return self._rec.sched.switch(Arrival(kind, (frame.f_code, frame.f_lineno), payload))

    def _barrier(self, value, frame):
        return self._switch("block", frame, value)

    def _warp(self, op, mask, value, arg, frame):
        return self._switch("warp", frame, WarpCall(op, mask, value, arg))

    # -- warp-level calls: the lanes of a warp meet at the call, as on a GPU ----------------------
    def syncwarp(self, mask=0xFFFFFFFF):
        self._warp("syncwarp", mask, None, 0, _getframe(1))

    def shfl_sync(self, mask, value, src_lane):
        return self._warp("shfl_sync", mask, value, src_lane, _getframe(1))

    def shfl_up_sync(self, mask, value, delta):
        return self._warp("shfl_up_sync", mask, value, delta, _getframe(1))

    def shfl_down_sync(self, mask, value, delta):
        return self._warp("shfl_down_sync", mask, value, delta, _getframe(1))

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._warp("shfl_xor_sync", mask, value, lane_mask, _getframe(1))

    def all_sync(self, mask, predicate):
        return self._warp("all_sync", mask, predicate, 0, _getframe(1))

    def any_sync(self, mask, predicate):
        return self._warp("any_sync", mask, predicate, 0, _getframe(1))

    def eq_sync(self, mask, predicate):
        return self._warp("eq_sync", mask, predicate, 0, _getframe(1))

    def ballot_sync(self, mask, predicate):
        return self._warp("ballot_sync", mask, predicate, 0, _getframe(1))

    def match_any_sync(self, mask, value):
        return self._warp("match_any_sync", mask, value, 0, _getframe(1))

    def match_all_sync(self, mask, value):
        return self._warp("match_all_sync", mask, value, 0, _getframe(1))

    def activemask(self):
        """The lanes of this warp that reach this same call (finished or diverged lanes are 0)."""
        return self._warp("activemask", 0xFFFFFFFF, None, 0, _getframe(1))

    def lanemask_lt(self):
        return Word32((1 << self.laneid) - 1)  # Numba types it uint32

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
        """Set bits in the value's own width: popc of an int32 ballot of 32 lanes is 32, not 64."""
        width = 32 if isinstance(val, Word32) else val.dtype.itemsize * 8 if isinstance(val, np.integer) else 64
        return bin(int(val) & ((1 << width) - 1)).count("1")

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


class FakeNumba:
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
