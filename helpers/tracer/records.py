"""How a traced launch records: thread coordinates and the access log (its format: helpers.accesses).

The recorder is shared by everything in one run (traced arrays, the fake `cuda` module,
the scheduler). The hot path appends one small tuple per access, (array id and kind packed in
one int, flat index, code object, line), and every FLUSH_EVERY accesses the buffer becomes
compact NumPy columns (int32 array id and location, int8 kind, int64 index: 17 bytes an
access). Who made an access is not stored per access: the scheduler calls `begin` each time it
hands the CPU to a thread, and the (position, thread, epoch) of each such switch gives the
thread and epoch columns by np.repeat when the log is read (a launch that passed no barrier shares
one zero epoch). That keeps both the per-access cost and the memory low (25 to 33 bytes an access
once read, against some 300 as Python objects). Threads run as NumPy lanes (helpers.tracer.vector)
append their columns and switches directly.

How many accesses a launch may record is sized from the launch (LIMIT_PER_THREAD each,
between LIMIT_MIN and LIMIT_MAX in all). A trace that reaches it stops; it asks "is a loop
missing its exit?" only when the thread that was running had made far more accesses than the
threads before it, which is what an endless loop looks like; a big launch of ordinary threads
is told to trace a smaller problem.
"""

import numbers
from array import array
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from ..accesses import ATOMIC, READ, WRITE, ArrayInfo, BadAccess, unlinear
from ..errors import KernelError

# The access kinds stay importable from here: helpers.exercises.explain reads ATOMIC from this module.
__all__ = [
    "ATOMIC",
    "READ",
    "WRITE",
    "FLUSH_EVERY",
    "KIND_BITS",
    "LIMIT_MIN",
    "ArrayInfo",
    "Arrival",
    "Dim3",
    "Recorder",
    "VectorFallback",
    "WarpCall",
]

FLUSH_EVERY = 1 << 16  # accesses buffered as tuples before they become NumPy columns
KIND_BITS = 2  # the hot path packs (array id << KIND_BITS) | kind into one int
LIMIT_PER_THREAD = 2048  # accesses a launch may record per thread (a 128x128 tiled matmul makes 289)
LIMIT_MIN = 4_000_000  # ...but never fewer than this: one thread may loop over a large array
LIMIT_MAX = 60_000_000  # ...nor more: about 2 GB of log, and minutes of Python
LOOP_FLOOR = 10_000  # a running thread is looping when it made at least this many accesses
LOOP_RATIO = 50  # ...and this many times the mean of the other threads that accessed memory


def access_limit(nthreads):
    """The accesses a launch of `nthreads` threads may record before the trace stops."""
    return min(max(nthreads * LIMIT_PER_THREAD, LIMIT_MIN), LIMIT_MAX)


class VectorFallback(Exception):
    """Threads run together as NumPy lanes (helpers.tracer.vector) cannot go on as one: run them one by one."""


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

    def __init__(self, max_accesses, blockdim=(1, 1, 1)):
        self.buf = []  # ((array id << KIND_BITS) | kind, flat index, code, line) per access
        self.chunks = []  # (array id, index, kind, loc) columns of FLUSH_EVERY accesses each
        self.total = 0  # accesses flushed into chunks
        self.max_accesses = max_accesses
        self.blockdim = blockdim
        # one entry per switch to a thread: where in the log it began, the thread, its epoch
        self.seg_pos, self.seg_gtid, self.seg_epoch = array("q", [0]), array("q", [0]), array("q", [0])
        self.locs = {}  # (code, line) -> loc id
        self._codes = {}  # id(code) -> (code, its index): codes are kept alive, so ids stay theirs
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
        self.vector = None  # the VectorRun while threads run as NumPy lanes (helpers.tracer.vector)

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

    @property
    def cur(self):
        """(global thread id, epoch) of the running thread: the last switch's."""
        return (self.seg_gtid[-1], self.seg_epoch[-1])

    def begin(self, gtid, epoch):
        """The scheduler hands the CPU to thread `gtid` in barrier epoch `epoch`: its accesses follow."""
        self.seg_pos.append(self.total + len(self.buf))
        self.seg_gtid.append(gtid)
        self.seg_epoch.append(epoch)

    def flush(self):
        """Turn the buffered tuples into compact columns, vectorized: codes are told apart by
        id() and each distinct (code, line) gets its location id in order of first use."""
        buf = self.buf
        if not buf:
            return
        if self.vector is not None:  # lanes log one entry per access of them all: this many is too many
            raise VectorFallback("too many accesses for one run of lanes")
        n = len(buf)
        key = np.fromiter(map(itemgetter(0), buf), np.int64, n)  # zip(*buf) costs ten times more
        flat = np.fromiter(map(itemgetter(1), buf), np.int64, n)
        codes = list(map(itemgetter(2), buf))
        lines = np.fromiter(map(itemgetter(3), buf), np.int64, n)
        code_of = self._codes
        if codes.count(codes[0]) == len(codes):  # one function made them all (count compares identity first)
            if id(codes[0]) not in code_of:
                code_of[id(codes[0])] = (codes[0], len(code_of))
            cix = code_of[id(codes[0])][1]
        else:  # device functions too: tell the codes apart by id(), without hashing a code object per access
            ids = np.fromiter(map(id, codes), np.int64, len(codes))
            uid, ufirst, uinv = np.unique(ids, return_index=True, return_inverse=True)
            for i, f in zip(uid.tolist(), ufirst.tolist()):
                if i not in code_of:
                    code_of[i] = (codes[f], len(code_of))
            cix = np.array([code_of[i][1] for i in uid.tolist()], np.int64)[uinv.reshape(-1)]
        site = lines | (np.asarray(cix, np.int64) << 32)
        uniq, first, inverse = np.unique(site, return_index=True, return_inverse=True)
        by_index = [c for c, _ in sorted(code_of.values(), key=lambda e: e[1])]
        locs, site_loc = self.locs, np.empty(len(uniq), np.int32)
        for u in np.argsort(first, kind="stable"):  # new locations numbered in order of first use
            site_loc[u] = locs.setdefault((by_index[int(uniq[u]) >> 32], int(uniq[u]) & 0xFFFFFFFF), len(locs))
        self.chunks.append(
            [
                (key >> KIND_BITS).astype(np.int32),
                flat,
                (key & ((1 << KIND_BITS) - 1)).astype(np.int8),
                site_loc[inverse.reshape(-1)],
            ]
        )
        self.total += len(buf)
        line = buf[-1][3]
        buf.clear()
        if self.total > self.max_accesses:
            self.stop(line)

    def stop(self, line, share=None):
        """Past the launch's limit: stop, blaming a loop only where the running thread looks like one.
        `share`: (the running thread's accesses, the other threads', how many others made any)."""
        gtid = self.cur[0]
        own, rest, busy = share if share is not None else self._share(gtid)
        others = rest / busy if busy else 0.0
        if own >= LOOP_FLOOR and own > LOOP_RATIO * others:
            tpb = self.blockdim[0] * self.blockdim[1] * self.blockdim[2]
            thread = unlinear(gtid % tpb, self.blockdim)
            them = f", the other threads {others:,.0f} on average" if busy else ""
            raise KernelError(
                f"The tracer stopped your kernel after {self.total:,} memory accesses: thread {thread} of block "
                f"{gtid // tpb} made {own:,} of them (the last one at line {line}){them}. Is a loop missing its "
                f"exit? If not, trace a smaller problem (fewer threads or elements)."
            )
        raise KernelError(
            f"The tracer stopped your kernel after {self.total:,} memory accesses (the last one at line {line}), "
            f"the most it records for a launch of this size, and no thread made far more than the others: trace "
            f"a smaller problem (fewer threads or elements), or allow more with trace(..., max_accesses=...)."
        )

    def _share(self, gtid):
        """(accesses of thread `gtid`, of the other threads, how many other threads made any)."""
        pos = np.frombuffer(self.seg_pos, np.int64)
        seg_gtid = np.frombuffer(self.seg_gtid, np.int64)
        made = np.diff(np.r_[pos, self.total])
        own = int(made[seg_gtid == gtid].sum())
        return own, self.total - own, len(np.unique(seg_gtid[(made > 0) & (seg_gtid != gtid)]))

    def table(self):
        """The (array, index, kind, gtid, epoch, loc) columns of the whole log; each chunk column
        is released once joined, so the log is never held twice over."""
        self.flush()
        chunks, self.chunks = self.chunks, []
        cols = []
        for j, dtype in enumerate((np.int32, np.int64, np.int8, np.int32)):
            cols.append(np.concatenate([c[j] for c in chunks]) if chunks else np.zeros(0, dtype))
            for c in chunks:
                c[j] = None
        pos = np.frombuffer(self.seg_pos, np.int64)
        made = np.diff(np.r_[pos, self.total])
        gtid = np.repeat(np.frombuffer(self.seg_gtid, np.int64), made)
        seg_epoch = np.frombuffer(self.seg_epoch, np.int64)
        if seg_epoch.any():
            epoch = np.repeat(seg_epoch, made)
        else:  # no barrier passed: one read-only zero for every access, not 8 bytes each
            epoch = np.broadcast_to(np.zeros(1, np.int64), (self.total,))
        return cols[0], cols[1], cols[2], gtid, epoch, cols[3]

    def log_negative(self, aid, index, kind, frame):
        if self.vector is not None:  # logged per thread, with the thread's own coordinates
            raise VectorFallback("a negative index")
        if len(self.negative) < 10_000:  # a few are enough to explain; the count saturates
            idx = tuple(int(i) if isinstance(i, numbers.Integral) else i for i in index)
            self.negative.append(BadAccess(aid, idx, kind, self.cur, frame.f_code, frame.f_lineno))

    def log_oob(self, aid, index, kind, frame):
        if self.vector is not None:
            raise VectorFallback("an out-of-bounds index")
        if len(self.oob) > self.max_accesses:  # out-of-bounds accesses are kept one by one: the same limit
            self.flush()
            self.total = len(self.oob)
            own = sum(1 for b in self.oob if b.thread[0] == self.cur[0])
            busy = len({b.thread[0] for b in self.oob} - {self.cur[0]})
            self.stop(frame.f_lineno, (own, self.total - own, busy))
        idx = tuple(int(i) if isinstance(i, numbers.Integral) else i for i in index)
        self.oob.append(BadAccess(aid, idx, kind, self.cur, frame.f_code, frame.f_lineno))
