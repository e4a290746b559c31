"""Which blocks run together: the whole grid at once where that gives the block-by-block result
exactly, else one block after another.

Why: one NumPy operation per instruction for every thread of the grid is what makes a million
threads affordable (issue 33); one block at a time costs the Python overhead of every
instruction once per block. Block by block stays the reference: a GPU runs blocks in no fixed
order, this interpreter in block order, and each block alone does exactly what it does among
the others (machine.py), so the two differ only where one block sees another's writes.
Hence:
  * kernels with shared memory, a barrier, __syncwarp or a clock read run block by block (a
    barrier and shared memory belong to one block, the fake clock counts per block), as do
    launches whose arguments overlap in memory (one block's writes through one name could be
    another's reads through the other);
  * the others run as a whole grid, in chunks of at most GRID_THREADS threads, from a copy of
    global memory taken before each chunk. A chunk runs again block by block, from that copy,
    when its log shows an element of a global array touched by two blocks and written (or
    updated atomically and also read) by one of them, when atomics came in another order than
    block order (atomics.py), when a record reached its cap, or on any error (so the error is
    the one block-by-block execution raises).
The records (the log, out-of-bounds accesses, warp misuse, printf lines) are put in block order,
the order block-by-block execution appends them in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..accesses import ATOMIC, READ, WRITE
from .machine import Block

GRID_THREADS = 2**20  # threads run together at most: registers and the log grow with it
MAX_MISUSE = 1000  # warp.check stops recording past this many


@dataclass(frozen=True)
class Schedule:
    """How a launch ran: `whole_grid` when blocks ran together, `why` what made blocks run one at a time ('')."""

    whole_grid: bool
    why: str


def run_launch(prog, whole_grid=True) -> Schedule:
    """Run every block of the launch, together where that is exact."""
    nblocks = prog.griddim[0] * prog.griddim[1] * prog.griddim[2]
    why = why_block_by_block(prog, nblocks) if whole_grid else "asked for (whole_grid=False)"
    if why:
        for b in range(nblocks):
            Block(prog, b).run()
        return Schedule(False, why)
    step = max(1, GRID_THREADS // prog.tpb)
    reasons = [_together(prog, b0, min(step, nblocks - b0)) for b0 in range(0, nblocks, step)]
    return Schedule(not all(reasons), "; ".join(dict.fromkeys(r for r in reasons if r)))


def why_block_by_block(prog, nblocks) -> str:
    """Why this launch cannot run its blocks together ('' when it can)."""
    if nblocks == 1:
        return "one block"
    if prog.shared_vars:
        return "the kernel uses shared memory"
    if prog.has_barrier:
        return "the kernel has a barrier"
    if prog.reads_clock:
        return "the kernel reads the clock"
    wins = [w.data for w in prog.gwin]
    if any(np.may_share_memory(a, b) for i, a in enumerate(wins) for b in wins[i + 1 :]):
        return "two arguments overlap in memory"
    return ""


class _Marks:
    """How long each record was before a chunk: to put the chunk's part in block order, or take it back."""

    def __init__(self, prog):
        self.chunks, self.naccess, self.oob = len(prog.chunks), prog.naccess, len(prog.oob)
        self.misuse, self.seen = len(prog.warp_misuse), set(prog.misuse_seen)
        self.printed, self.steps = len(prog.printed), prog.steps

    def undo(self, prog):
        del prog.chunks[self.chunks :], prog.oob[self.oob :], prog.warp_misuse[self.misuse :]
        del prog.printed[self.printed :]
        prog.naccess, prog.misuse_seen, prog.steps = self.naccess, self.seen, self.steps

    def block_order(self, prog):
        tpb = prog.tpb
        prog.oob[self.oob :] = sorted(prog.oob[self.oob :], key=lambda e: e.thread[0] // tpb)
        prog.warp_misuse[self.misuse :] = sorted(prog.warp_misuse[self.misuse :], key=lambda m: m["block"])


def _together(prog, b0, nblk) -> str:
    """Run blocks b0 .. b0 + nblk - 1 together; '' if that stood, else why they ran one at a time instead."""
    marks = _Marks(prog)
    saved = [w.data.copy() for w in prog.gwin]
    prog.together = True
    try:
        S = Block(prog, b0, nblk)
        S.execute()
        why = _crossed(prog, S)
        S.finish()
    except Exception as e:  # noqa: BLE001 - block by block raises its own error, the one a learner is shown
        why = f"running together raised {type(e).__name__}"
    finally:
        prog.together = False
    if not why:
        marks.block_order(prog)
        return ""
    for w, data in zip(prog.gwin, saved):
        w.data[...] = data
    marks.undo(prog)
    for b in range(b0, b0 + nblk):
        Block(prog, b).run()
    return why


def _crossed(prog, S) -> str:
    """Why the chunk's result may differ from block by block ('' if it cannot)."""
    if len(prog.oob) >= prog.max_oob:
        return "too many out-of-bounds accesses to keep"
    if len(prog.warp_misuse) > MAX_MISUSE:
        return "too much warp misuse to keep"
    if S.atomic_disorder or any(m.mixed() for m in S.atomics.values()):
        return "atomics on one element came from blocks out of block order"
    by_array = {}
    for r in S.log.runs:
        by_array.setdefault(r.aid, []).append(r)
    sizes = {w.aid: -(-w.nbytes // max(w.itemsize, 1)) for w in prog.gwin if w.aid is not None}
    for aid, runs in by_array.items():
        elem = _shared_element(runs, sizes[aid], prog.tpb)
        if elem is not None:
            return f"two blocks touch {prog.arrays[aid].name}[{elem}] and one of them writes it"
    return ""


def _one_thread_per_element(runs):
    """Every access to the array by the same threads at the same elements, each element once (y[i] = f(y[i])):
    no element can be shared, and checking that costs no array of the array's size."""
    first = runs[0]
    e = first.elems
    if first.wide or not (e[1:] > e[:-1]).all():
        return False
    return all(
        not r.wide and (r.tids is first.tids or np.array_equal(r.tids, first.tids)) and np.array_equal(r.elems, e)
        for r in runs[1:]
    )


def _shared_element(runs, size, tpb):
    """An element of one array that a block wrote (plainly or atomically) and another block touched, where
    that makes the order of blocks matter; None if there is none. Atomic updates from several blocks are
    fine among themselves (atomics.py checks their order) but not next to plain reads or writes."""
    writers = [r for r in runs if r.kind != READ]
    if not writers or _one_thread_per_element(runs):
        return None
    lo = np.full(size, np.iinfo(np.int64).max)
    hi = np.full(size, -1)
    plain = np.zeros(size, bool)
    for r in writers:
        block = r.tids // tpb
        np.minimum.at(lo, r.elems, block)
        np.maximum.at(hi, r.elems, block)
        if r.kind == WRITE:
            plain[r.elems] = True
    for r in runs:
        block = r.tids // tpb
        h, low = hi[r.elems], lo[r.elems]
        bad = (h >= 0) & ((low != block) | (h != block))  # a writer in another block
        if r.kind == ATOMIC:
            bad &= plain[r.elems]
        if bad.any():
            return int(r.elems[np.argmax(bad)])
    return None
