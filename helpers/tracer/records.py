"""How a traced launch records: thread coordinates and the access log (its format: helpers.accesses).

The recorder is shared by everything in one run (traced arrays, the fake `cuda` module,
the scheduler); it appends one small tuple per access and turns them into NumPy arrays in
chunks, which is what keeps tracing cheap.
"""

import numbers
from typing import NamedTuple

import numpy as np

from ..accesses import ATOMIC, READ, WRITE, ArrayInfo, BadAccess
from ..errors import KernelError

# The access kinds stay importable from here: helpers.exercises.explain reads ATOMIC from this module.
__all__ = [
    "ATOMIC",
    "READ",
    "WRITE",
    "FLUSH_EVERY",
    "MAX_ACCESSES",
    "ArrayInfo",
    "Arrival",
    "Dim3",
    "Recorder",
    "WarpCall",
]

MAX_ACCESSES = 4_000_000  # generous: a small traced launch makes thousands, not millions
FLUSH_EVERY = 1 << 16  # accesses buffered as tuples before they become a NumPy chunk


class Dim3:
    """threadIdx / blockIdx / blockDim / gridDim: `.x .y .z`, like the real thing."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y=1, z=1):
        self.x, self.y, self.z = x, y, z

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"({self.x}, {self.y}, {self.z})"


class Arrival(NamedTuple):
    """What a thread hands the scheduler when it stops at a barrier or a warp call."""

    kind: str  # "block" (syncthreads), "warp" (a warp-level call) or "grid" (grid.sync())
    site: tuple  # (code object, line) of the call
    payload: object  # block: 1 or 0, the predicate of syncthreads_count/and/or; warp: a WarpCall; grid: None


class WarpCall(NamedTuple):
    """One lane's warp-level call: `cuda.shfl_sync(mask, value, src_lane)` and the like."""

    op: str  # "shfl_sync", "ballot_sync", "syncwarp", ...
    mask: int
    value: object
    arg: object  # the source lane, delta or lane mask of a shuffle; 0 when the call has none


class Recorder:
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
        self.cas_sites = set()  # (code, line) of compare-and-swap atomics
        self.arrays = []  # ArrayInfo, index = array id
        self.field_aids = {}  # (array id, field name) -> array id of that field's log
        self.oob = []  # BadAccess
        self.negative = []  # the same, for negative indices that Numba wrapped
        self.warp_misuse = []  # dicts, see fakecuda's warp calls
        self.grid_divergent = []  # dicts, see Runner: grid.sync() not reached by every thread
        self.divergent = []  # dicts, see Runner._barrier
        self.sites = {}  # shared/local allocation site -> array id
        self.block_shared = {}  # shared allocation site -> TracedArray of the running block
        self.sched = None  # the block scheduler greenlet
        self.kernel_code = None  # the traced kernel's code object (its parameters are never compile-time constants)

    def add_array(self, info):
        self.arrays.append(info)
        return len(self.arrays) - 1

    def field_array(self, aid, field):
        """The array id under which field `field` of structured array `aid` is logged, so two
        threads writing different fields of one record (different bytes) do not race."""
        key = (aid, field)
        if key not in self.field_aids:
            info = self.arrays[aid]
            self.field_aids[key] = self.add_array(
                ArrayInfo(
                    f"{info.name}.{field}",
                    info.space,
                    info.shape,
                    info.dtype.fields[field][0],
                    info.strides,
                    info.param,
                    info.line,
                    info.var,
                    field,
                    aid,
                )
            )
        return self.field_aids[key]

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
                f"If not, trace a smaller problem (fewer threads or elements)."
            )

    def log_negative(self, aid, index, kind, frame):
        if len(self.negative) < 10_000:  # a few are enough to explain; the count saturates
            idx = tuple(int(i) if isinstance(i, numbers.Integral) else i for i in index)
            self.negative.append(BadAccess(aid, idx, kind, self.cur, frame.f_code, frame.f_lineno))

    def log_oob(self, aid, index, kind, frame):
        if len(self.oob) > self.max_accesses:
            self.total = len(self.oob)
            self.buf.append((aid, 0, kind, self.cur, frame.f_code, frame.f_lineno))
            self.flush()
        idx = tuple(int(i) if isinstance(i, numbers.Integral) else i for i in index)
        self.oob.append(BadAccess(aid, idx, kind, self.cur, frame.f_code, frame.f_lineno))
