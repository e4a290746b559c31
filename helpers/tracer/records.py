"""What a traced launch records: arrays, thread coordinates and the access log.

The recorder is shared by everything in one run (traced arrays, the fake `cuda` module,
the scheduler); it appends one small tuple per access and turns them into NumPy arrays in
chunks, which is what keeps tracing cheap.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import KernelError

READ, WRITE, ATOMIC = 0, 1, 2  # the access kinds in the log
# A thread's epoch packs what it has passed, so one int64 per access orders it: syncthreads in
# the low 20 bits, grid syncs from bit 20, syncwarps from bit 40 (races.py splits them again).
GRID_SHIFT, WARP_SHIFT = 20, 40
BLOCK_EPOCH = (1 << GRID_SHIFT) - 1
WARP_EPOCH = 1 << WARP_SHIFT


def barrier_epoch(epoch):
    """The part of an epoch that orders threads of one block: syncthreads and grid syncs."""
    return epoch & ((1 << WARP_SHIFT) - 1)


def grid_epoch(epoch):
    """The part that orders blocks: grid syncs passed."""
    return (epoch >> GRID_SHIFT) & ((1 << (WARP_SHIFT - GRID_SHIFT)) - 1)


def warp_epoch(epoch):
    """Syncwarps passed: orders lanes of one warp, and nothing else."""
    return epoch >> WARP_SHIFT


MAX_ACCESSES = 4_000_000  # generous: a small traced launch makes thousands, not millions
FLUSH_EVERY = 1 << 16  # accesses buffered as tuples before they become a NumPy chunk


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
    field: str = ""  # one field of a structured array (`pts[i].x`): fields are separate bytes on a GPU
    base: object = None  # for a field: the array id of the whole structured array

    def __post_init__(self):
        if not self.var:
            self.var = self.name

    def element(self, index):
        """`out[3]`, `shared tile[1, 2]`, `pts[0].x`: how messages name one element."""
        text = f"{self.var}[{', '.join(str(int(i)) for i in index)}]" + (f".{self.field}" if self.field else "")
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


def unlinear(lin, dims):
    """Linear id -> (x, y, z) with x fastest, as CUDA numbers threads and blocks."""
    x = lin % dims[0]
    y = (lin // dims[0]) % dims[1]
    z = lin // (dims[0] * dims[1])
    return (int(x), int(y), int(z))


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
        self.arrays = []  # ArrayInfo, index = array id
        self.field_aids = {}  # (array id, field name) -> array id of that field's log
        self.oob = []  # (array id, index tuple, kind, cur, code, line)
        self.negative = []  # the same, for negative indices that Numba wrapped
        self.warp_misuse = []  # dicts, see fakecuda's warp calls
        self.grid_divergent = []  # dicts, see Runner: grid.sync() not reached by every thread
        self.divergent = []  # dicts, see Runner._barrier
        self.sites = {}  # shared/local allocation site -> array id
        self.block_shared = {}  # shared allocation site -> TracedArray of the running block
        self.sched = None  # the block scheduler greenlet

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
            self.negative.append((aid, idx, kind, self.cur, frame.f_code, frame.f_lineno))

    def log_oob(self, aid, index, kind, frame):
        if len(self.oob) > self.max_accesses:
            self.total = len(self.oob)
            self.buf.append((aid, 0, kind, self.cur, frame.f_code, frame.f_lineno))
            self.flush()
        self.oob.append(
            (
                aid,
                tuple(int(i) if isinstance(i, numbers.Integral) else i for i in index),
                kind,
                self.cur,
                frame.f_code,
                frame.f_lineno,
            )
        )
