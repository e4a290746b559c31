"""The access log both CPU interpreters write: the Numba tracer and the PTX interpreter (CUDA C).

One log format means one set of verdicts, metrics and pictures for both languages. The log is
a (6, n) int64 table, one column per element access, in this row order:

    array id, flat element index, kind (READ/WRITE/ATOMIC), global thread id, epoch, location id

where the array id indexes a list of ``ArrayInfo`` and the location id a list of source
locations. An access whose index is out of bounds (or negative, which Numba wraps) is not in
the table: it is kept as a ``BadAccess`` for its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

READ, WRITE, ATOMIC = 0, 1, 2  # the access kinds in the log

# A thread's epoch packs what it has passed, so one int64 per access orders it: syncthreads in
# the low 20 bits, grid syncs from bit 20, syncwarps from bit 40 (the tracer's races.py splits them).
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


def access_table(chunks):
    """The (6, n) log from the chunks an interpreter appended, or an empty one."""
    return np.concatenate(chunks, axis=1) if chunks else np.zeros((6, 0), dtype=np.int64)


def unlinear(lin, dims):
    """Linear id -> (x, y, z) with x fastest, as CUDA numbers threads and blocks."""
    x = lin % dims[0]
    y = (lin // dims[0]) % dims[1]
    z = lin // (dims[0] * dims[1])
    return (int(x), int(y), int(z))


@dataclass
class ArrayInfo:
    """One array the kernel touched. `space` is "global", "shared", "local" or "const"."""

    name: str
    space: str
    shape: tuple
    dtype: np.dtype
    strides: tuple  # bytes: element indices become addresses for coalescing
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
        inside = ", ".join(str(int(i)) for i in index) or "()"  # a 0-d array's one element is x[()]
        text = f"{self.var}[{inside}]" + (f".{self.field}" if self.field else "")
        return text if self.space == "global" else f"{self.space} {text}"

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class BadAccess(NamedTuple):
    """One access the verdicts explain rather than log: out of bounds, or a negative index Numba wrapped."""

    array: int  # array id; -1 for a CUDA C pointer into no array at all
    index: tuple  # the index tuple (a CUDA C stray pointer: its address, alone)
    kind: int  # READ, WRITE or ATOMIC
    thread: tuple  # (global thread id, epoch), as in the table
    code: object  # the code object of the line (or, for CUDA C, a stand-in with co_filename/co_name)
    line: int
