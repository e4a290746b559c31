"""`Trace`: what one traced launch did, with its verdicts, metrics and pictures."""

import linecache
from dataclasses import dataclass

import numpy as np

from ..accesses import BadAccess, unlinear
from ..errors import LearnerError, shown
from . import pictures
from .constant import const_reads
from .metrics import compute_metrics, summarize
from .verdicts import find_verdicts


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
        self.output_elements = {}  # array id -> the elements expected written, where an output is part of it
        self.accesses = Accesses(rec.table(), self.threads_per_block)
        self.locations = [None] * len(rec.locs)
        for (code, line), i in rec.locs.items():
            self.locations[i] = Location(code.co_filename, line, code.co_name)
        self.cas_locations = frozenset(rec.locs[s] for s in rec.cas_sites if s in rec.locs)
        self.out_of_bounds = rec.oob
        self.divergent = rec.divergent
        self.negative_index = rec.negative
        self.grid_divergent = rec.grid_divergent
        self.warp_misuse, self.language = rec.warp_misuse, "python"
        self._verdicts = self._metrics = None
        self.compiled = None  # a CompileResult when trace(..., compile_check=True) asked the GPU compiler

    @classmethod
    def from_table(cls, kernel_name, griddim, blockdim, arrays, table, locations, *, outputs=(), **found):
        """A Trace from an access table recorded elsewhere (helpers.ptx runs CUDA C), so the same
        verdicts, metrics and pictures apply. `found`: out_of_bounds, divergent, warp_misuse
        (lists in the tracer's shapes; out-of-bounds entries become BadAccess) and language
        ("cuda_c" words the sentences for C)."""
        t = cls.__new__(cls)
        t.kernel_name, t.griddim, t.blockdim = kernel_name, tuple(griddim), tuple(blockdim)
        t.threads_per_block = blockdim[0] * blockdim[1] * blockdim[2]
        t.nblocks = griddim[0] * griddim[1] * griddim[2]
        t.nthreads = t.nblocks * t.threads_per_block
        t.arrays, t.outputs, t.locations = list(arrays), list(outputs), list(locations)
        t.output_elements = {}
        t.accesses = Accesses(np.asarray(table, dtype=np.int64).reshape(6, -1), t.threads_per_block)
        t.out_of_bounds = [BadAccess(*e) for e in found.get("out_of_bounds", ())]
        t.divergent = list(found.get("divergent", ()))
        t.warp_misuse = list(found.get("warp_misuse", ()))
        t.negative_index = [BadAccess(*e) for e in found.get("negative_index", ())]
        t.grid_divergent = list(found.get("grid_divergent", ()))
        t.language = found.get("language", "python")
        t.cas_locations = frozenset(found.get("cas_locations", ()))
        t._verdicts = t._metrics = None
        t.compiled = None  # no GPU compiler was asked (summary() and ok read it)
        return t

    # -- identities ---------------------------------------------------------------------------
    def block_of(self, gtid):
        gtid = _index("the global thread id", gtid, self.nthreads)
        return unlinear(gtid // self.threads_per_block, self.griddim)

    def thread_of(self, gtid):
        gtid = _index("the global thread id", gtid, self.nthreads)
        return unlinear(gtid % self.threads_per_block, self.blockdim)

    def array_id(self, name):
        if not isinstance(name, str):
            raise LearnerError(
                f"name an array by its parameter name as a string, such as {self._example()!r}, not {shown(name)}."
            )
        for i, a in enumerate(self.arrays):
            if name in (a.name, a.name.split(" (")[0], a.name.split(" ")[1] if " " in a.name else None):
                return i
        raise LearnerError(f"No array called {name!r} in this trace; arrays: {', '.join(a.name for a in self.arrays)}.")

    # -- results ------------------------------------------------------------------------------
    @property
    def verdicts(self):
        if self._verdicts is None:
            self._verdicts = find_verdicts(self)
        return self._verdicts

    @property
    def metrics(self):
        if self._metrics is None:
            self._metrics = compute_metrics(self)
        return self._metrics

    @property
    def ok(self):
        return not self.verdicts and not (self.compiled is not None and self.compiled.ok is False)

    def summary(self):
        text = summarize(self)
        if self.compiled is not None and self.compiled.ok is False:
            text = f"GPU compiler: {self.compiled.message}\n{text}"
        return text

    def __repr__(self):
        return (
            f"<Trace of {self.kernel_name}: {self.nblocks} block(s) x "
            f"{self.threads_per_block} threads, {len(self.accesses)} accesses, "
            f"{len(self.verdicts)} verdict(s)>"
        )

    # -- pictures -----------------------------------------------------------------------------
    def show(self, block=0, array=None, max_rows=24):
        block, array = self._picked(block, array)
        max_rows = _index("max_rows", max_rows, None, minimum=1)
        return pictures.draw_accesses(self, block=block, array=array, max_rows=max_rows)

    def show_coalescing(self, array=None, block=0, warp=0, limit=6):
        block, array = self._picked(block, array)
        warp, limit = self._warp(warp), _index("limit", limit, None, minimum=1)
        return pictures.draw_coalescing(self, array=array, block=block, warp=warp, limit=limit)

    def show_banks(self, array=None, block=0, warp=0, limit=6):
        """Shared-memory banks of one warp's accesses, worst bank conflict first (`limit` panels)."""
        block, array = self._picked(block, array)
        warp, limit = self._warp(warp), _index("limit", limit, None, minimum=1)
        return pictures.draw_banks(self, array=array, block=block, warp=warp, limit=limit)

    def const_reads(self):
        """Warp-wide reads of constant memory and the passes they need: one per distinct address."""
        return const_reads(self)

    # -- checking what a learner asked a picture of ----------------------------------------------
    def _example(self) -> str:
        return self.arrays[0].name.split(" (")[0].split(" ")[-1] if self.arrays else "out"

    def _picked(self, block, array):
        """block: a block's linear number, or its (x, y[, z]) coordinates as blockIdx gives them;
        array: a parameter name (or None for every array)."""
        if isinstance(block, tuple) and 1 <= len(block) <= 3:
            dims = tuple(self.griddim) + (1,) * (3 - len(self.griddim))
            coords = tuple(block) + (0,) * (3 - len(block))
            if all(
                isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < d
                for c, d in zip(coords, dims)
            ):
                block = int(coords[0] + dims[0] * (coords[1] + dims[1] * coords[2]))
            else:
                raise LearnerError(
                    f"block must be a block of this trace's {dims[0]} x {dims[1]} x {dims[2]} grid, such as "
                    f"(0, 0, 0) or its number 0 to {self.nblocks - 1}, not {shown(block)}."
                )
        block = _index("block", block, self.nblocks)
        if array is not None:
            self.array_id(array)  # says which names exist when this one does not
        return block, array

    def _warp(self, warp):
        return _index("warp", warp, -(-self.threads_per_block // 32))


def _index(name, value, count, minimum=0) -> int:
    """A whole number in [minimum, count) for a picture or an id, or one sentence saying what fits."""
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if whole and minimum <= value and (count is None or value < count):
        return int(value)
    fits = f"a whole number from {minimum} to {count - 1}" if count is not None else f"a whole number >= {minimum}"
    raise LearnerError(f"{name} must be {fits} for this trace, not {shown(value)}.")
