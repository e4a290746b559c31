"""Running a whole block (or several) of a traced launch at once, with NumPy arrays as the thread index.

The per-thread tracer runs each thread's Python in turn (helpers.tracer.runner). Where the threads
of a block take the same path through the kernel, one run of its Python over `Lanes` (one value
per thread, helpers.tracer.lanes) does the work of all of them, and the access log it leaves,
reordered thread by thread, is the one the per-thread run writes: same accesses, same order,
same threads, epochs and locations, so every verdict and metric is the same.

The result is kept only where that equivalence holds; otherwise the block runs thread by thread:
  * a kernel that names atomics, local or constant arrays, warp calls, syncthreads_count/and/or or
    a grid sync is never vectorized (their results depend on the order of threads);
  * lanes that would branch differently (`if`, a loop bound, `int()`), an index out of bounds
    or negative, an unusual type or operation, a whole-array ufunc, a structured array: the run
    stops (`VectorFallback`) and its writes are undone;
  * after the run, an element one lane wrote and another touched in the same epoch (a race:
    thread order decides the values) undoes it too.
Blocks of a kernel with shared memory or barriers run one at a time; other kernels run several
blocks together (no element two of them touch, so their order does not matter either).
"""

import builtins

import numpy as np

from ..accesses import READ
from .arrays import TracedArray
from .fakecuda import FakeCuda, FakeNumba
from .gpumath import FakeMath, gpu_div
from .instrument import WARP_CALLS
from .lanes import Lanes, lanes_max, lanes_min, supported
from .records import KIND_BITS, Dim3, VectorFallback

ENABLED = True  # tests turn it off to compare with the per-thread path
LANES = 1 << 14  # threads run together, at most (blocks without shared memory or barriers)
MAX_LANE_ACCESSES = 1 << 22  # lane accesses one run may log before it is left to the per-thread path
MAX_BARRIERS = 4096  # barriers one run may pass (a uniform loop spinning on one is the per-thread path's to judge)
GIVE_UP = 2  # single blocks that fell back before the launch stops trying...
KEEP_GOING = 8  # ...unless at least this many blocks ran as lanes for each (the edge blocks of a 2-D grid)
_REFUSED = WARP_CALLS | frozenset(
    {
        "atomic",
        "local",
        "const",  # its table is copied (and the copy's reads logged) once, by the first thread to get there
        "this_grid",
        "syncthreads_count",
        "syncthreads_and",
        "syncthreads_or",
        "lanemask_lt",
    }
)


_BUILTINS = frozenset({"range", "len", "min", "max", "abs", "int", "float", "bool"})  # lanes mean the same


def eligible(instr):
    """May this kernel run as lanes at all? Not where it names something whose effect depends on the
    order of threads (atomics, warp calls...) or anything outside the kernel's own world (`print`,
    `time.sleep`, NumPy itself: once for many threads is not once per thread)."""
    if not ENABLED:
        return False
    names = set()
    for c in instr.codes:
        names.update(c.co_names)
    if names & _REFUSED:
        return False
    ours = {id(f) for f in instr.functions.values()}
    for f in instr.functions.values():  # what a kernel defined inside a function captured from it
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell: nothing captured yet
                continue
            if not _known(value, ours):
                return False
    for _, copied in instr.globals.values():
        for name in names:
            if name in copied:
                if not _known(copied[name], ours):
                    return False
            elif name in vars(builtins) and name not in _BUILTINS:
                return False
    return True


def _known(value, ours):
    """A global the lanes may use: the fake cuda, numba or math, an array, a number, a numba type,
    gpu_div, min and max, or one of the kernel's own (traced) device functions."""
    if isinstance(value, (FakeCuda, FakeNumba, FakeMath, TracedArray, bool, int, float, np.number)):
        return True
    if value is gpu_div or value is lanes_min or value is lanes_max:
        return True
    return id(value) in ours or type(value).__module__.startswith("numba.core.types")


class Vectorizer:
    """Runs the blocks of one launch as lanes where it can; `run(b)` says how many blocks it ran."""

    def __init__(self, runner):
        self.r = runner
        names = set()
        for c in runner.instr.codes:
            names.update(c.co_names)
        self.per_block = runner.instr.uses_barrier or "shared" in names
        self.group = 1 if self.per_block else max(1, LANES // runner.tpb)
        self.size = self.group  # blocks the next run takes: halved after a run falls back, to find the block that did
        self.failures = self.successes = 0
        self.on = True

    def run(self, b):
        """Run block b (and the next ones) as lanes; the number run, 0 if block b must run per thread."""
        nblocks = self.r.griddim[0] * self.r.griddim[1] * self.r.griddim[2]
        while True:
            count = min(self.size, nblocks - b)
            if VectorRun(self.r, b, count).attempt():
                self.successes += count
                return count
            if count == 1:
                self.failures += 1
                self.on = self.failures < GIVE_UP or self.successes >= KEEP_GOING * self.failures
                self.size = self.group  # past this block, whole groups again
                return 0
            self.size = max(1, count // 2)


class VectorRun:
    """Blocks b0 to b0 + count - 1 run once as lanes: the log they leave, and how to undo their writes."""

    def __init__(self, runner, b0, count):
        self.r = runner
        tpb = runner.tpb
        self.gtid = np.arange(b0 * tpb, (b0 + count) * tpb, dtype=np.int64)
        self.n = len(self.gtid)
        self.b0, self.count = b0, count
        self.undo = []  # (array data, index, old values) of every write
        self.barriers = [0]  # positions in the lanes' log where each epoch begins
        self.start = 0
        self.lane_accesses = 0

    # -- the run ---------------------------------------------------------------------------
    def attempt(self):
        """Run the lanes; keep what they did if it is what the per-thread run would do, else undo it."""
        r = self.r
        rec, fake = r.rec, r.fake
        if rec.buf:
            rec.flush()
        start = self.start = len(rec.buf)  # 0: the barriers' positions are the lanes' own
        fake.threadIdx = _coords(self.gtid % r.tpb, r.blockdim)
        fake.blockIdx = _coords(self.gtid // r.tpb, r.griddim)
        rec.block_shared = {}
        sched, greenlets = rec.sched, fake._greenlets
        rec.sched, fake._greenlets, rec.vector = self, True, self
        r.progress()
        try:
            if r.fn(*r.args) is not None:
                raise VectorFallback("a return value")
            entries = rec.buf[start:]
            ok = not self._conflicts(entries) and rec.total + self.n * len(entries) <= rec.max_accesses
        except Exception:  # anything at all: the per-thread run says what it means
            ok, entries = False, None
        finally:
            rec.sched, fake._greenlets, rec.vector = sched, greenlets, None
            del rec.buf[start:]
        if not ok:
            for data, index, old in reversed(self.undo):
                data[index] = old
            return False
        self._commit(entries)
        return True

    def switch(self, arrival):
        """The scheduler's side of a barrier (fake cuda switches here as to the block scheduler)."""
        if arrival.kind != "block" or len(self.barriers) > MAX_BARRIERS:
            raise VectorFallback(f"a {arrival.kind} barrier")
        self.barriers.append(len(self.r.rec.buf) - self.start)
        return (arrival.payload * self.n, self.n)

    # -- element access (helpers.tracer.arrays sends lanes here) -----------------------------
    def _locate(self, arr, idx):
        """(flat element of memory per lane, index into the array's data) of an in-bounds index."""
        comps = idx if idx.__class__ is tuple else (idx,)
        if len(comps) != arr.ndim or arr._fields:
            raise VectorFallback("a partial index, a view or a record")
        flat, where = 0, []
        for c, n in zip(comps, arr.shape):
            if isinstance(c, Lanes):
                if c.v.dtype.kind not in "iu" or c.weak is bool:
                    raise VectorFallback("an index that is not an integer")
                v = c.v
                if v.min() < 0 or v.max() >= n:
                    raise VectorFallback("an index out of bounds (or negative)")
            elif isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) and 0 <= c < n:
                v = int(c)
            else:
                raise VectorFallback("an index the per-thread path must judge")
            flat = flat * n + v
            where.append(v)
        if not isinstance(flat, np.ndarray):
            flat = np.full(self.n, flat, np.int64)
        if arr._map is not None:
            flat = arr._map.reshape(-1)[flat]
        return flat, tuple(where)

    def _log(self, key, flat, frame):
        self.lane_accesses += self.n
        if self.lane_accesses > MAX_LANE_ACCESSES:
            raise VectorFallback("too many accesses for one run of lanes")
        self.r.rec.buf.append((key, flat, frame.f_code, frame.f_lineno))

    def read(self, arr, idx, frame):
        flat, where = self._locate(arr, idx)
        if not supported(arr.dtype):
            raise VectorFallback(f"{arr.dtype} elements")
        if arr._record:
            self._log(arr._rkey, flat, frame)
        values = arr._data[where]
        if not isinstance(values, np.ndarray):  # every lane read one element: its scalar, for all
            values = np.full(self.n, values, arr.dtype)
        return Lanes(values)

    def write(self, arr, idx, value, frame):
        flat, where = self._locate(arr, idx)
        if arr._readonly or not any(isinstance(w, np.ndarray) for w in where):
            raise VectorFallback("a read-only array, or every lane writing one element")
        values = _storable(arr.dtype, value)
        self.undo.append((arr._data, where, arr._data[where].copy()))
        if arr._record:
            self._log(arr._wkey, flat, frame)
        arr._data[where] = values

    # -- keeping the result ------------------------------------------------------------------
    def _epochs(self, entries):
        bounds = self.barriers + [len(entries)]
        return [entries[s:e] for s, e in zip(bounds[:-1], bounds[1:])]

    def _conflicts(self, entries):
        """Did one lane write an element that another lane touched in the same epoch?"""
        mask = (1 << KIND_BITS) - 1
        for part in self._epochs(entries):
            written = {key >> KIND_BITS for key, *_ in part if key & mask != READ}
            if not written:
                continue
            flats, lanes, writes = [], [], []
            for key, flat, *_ in part:
                if key >> KIND_BITS in written:
                    flats.append((key >> KIND_BITS << 40) + np.broadcast_to(flat, self.n))
                    lanes.append(np.arange(self.n))
                    writes.append(np.full(self.n, key & mask != READ))
            element, lane, write = np.concatenate(flats), np.concatenate(lanes), np.concatenate(writes)
            order = np.lexsort((lane, element))
            element, lane, write = element[order], lane[order], write[order]
            starts = np.flatnonzero(np.r_[True, element[1:] != element[:-1]])
            ends = np.r_[starts[1:], len(element)] - 1
            if np.any((lane[starts] != lane[ends]) & np.logical_or.reduceat(write, starts)):
                return True
        return False

    def _commit(self, entries):
        """Append the lanes' log as the per-thread run writes it: epoch by epoch, thread by thread."""
        rec, n = self.r.rec, self.n
        for e, part in enumerate(self._epochs(entries)):
            k = len(part)
            if k:
                keys = np.array([p[0] for p in part], np.int64)
                flats = np.empty((n, k), np.int64)
                for j, p in enumerate(part):
                    flats[:, j] = p[1]
                locs = np.array([rec.locs.setdefault((p[2], p[3]), len(rec.locs)) for p in part], np.int32)
                rec.chunks.append(
                    [
                        np.tile((keys >> KIND_BITS).astype(np.int32), n),
                        flats.reshape(-1),
                        np.tile((keys & ((1 << KIND_BITS) - 1)).astype(np.int8), n),
                        np.tile(locs, n),
                    ]
                )
            rec.seg_pos.frombytes((rec.total + np.arange(n, dtype=np.int64) * k).tobytes())
            rec.seg_gtid.frombytes(self.gtid.tobytes())
            rec.seg_epoch.frombytes(np.full(n, e, np.int64).tobytes())
            rec.total += n * k


def _coords(linear, dims):
    """Dim3 of lanes (or of plain ints where every lane has the same value) from linear ids."""
    x = linear % dims[0]
    y = linear // dims[0] % dims[1]
    z = linear // (dims[0] * dims[1])
    return Dim3(*(_lanes_or_int(c) for c in (x, y, z)))


def _lanes_or_int(v):
    return int(v[0]) if (v == v[0]).all() else Lanes(v, int)


def _storable(dtype, value):
    """The values to store, where NumPy's array store equals the per-thread scalar store."""
    if isinstance(value, Lanes):
        kind = value.v.dtype.kind
        if dtype.kind == "f" and kind in "biuf" or dtype.kind == "b" and kind == "b":
            return value.v
        if dtype.kind in "iu" and kind in "biu" and supported(dtype):
            info = np.iinfo(dtype)
            if kind == "b" or (value.v.min() >= info.min and value.v.max() <= info.max):
                return value.v
        raise VectorFallback(f"storing {value.v.dtype} lanes into {dtype}")
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)) and not (
        dtype.kind in "iub" and isinstance(value, (float, np.floating))
    ):
        return value
    raise VectorFallback(f"storing {type(value).__name__} into {dtype}")
