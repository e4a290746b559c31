"""Constant-memory reads of a trace, warp by warp: a GPU's constant cache serves one address at a
time, so a warp-wide read costs as many passes as its lanes read distinct addresses (CUDA C
Programming Guide, "Constant Memory": a request is split into as many separate requests as there
are different memory addresses in it). All lanes on one address is one pass, broadcast to the warp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .findings import distinct
from .metrics import warp_groups


@dataclass(frozen=True)
class ConstReads:
    """Warp-wide reads of `cuda.const.array_like` tables and the passes they need."""

    warp_reads: int  # warp-wide reads (same line, same step of each lane)
    passes: int  # one per distinct address in each of them
    serialised: int  # the warp-wide reads that needed more than one pass
    worst: int  # the most distinct addresses one warp-wide read touched

    def __str__(self):
        if not self.warp_reads:
            return "constant memory: no reads"
        return (
            f"constant memory: {self.warp_reads} warp-wide reads in {self.passes} passes, {self.serialised} "
            f"serialised (worst: {self.worst} address{'es' if self.worst > 1 else ''} in one read)"
        )


def const_reads(t) -> ConstReads:
    rows, wid, nw, addr = warp_groups(t, "const")
    if nw == 0:
        return ConstReads(0, 0, 0, 0)
    base = np.array([i << 32 for i in range(len(t.arrays))], dtype=np.int64)[t.accesses.array[rows]]
    group, _ = distinct(wid, addr + base)  # distinct (warp-wide read, address) pairs
    per_read = np.bincount(group, minlength=nw)
    return ConstReads(nw, int(per_read.sum()), int((per_read > 1).sum()), int(per_read.max()))
