"""How a traced kernel used memory: accesses per thread, coalescing, bank conflicts."""

from dataclasses import dataclass

import numpy as np

from ..accesses import ATOMIC, READ, WRITE
from .findings import block_chunks, distinct, distinct_first, group_ids


@dataclass
class Metrics:
    """How the kernel used memory. Per-thread figures are (mean, max) over the threads that touched
    global or shared memory: the idle threads of a last, partial block do not dilute them, and the
    exercise checks and budgets read the same numbers."""

    threads: int
    global_reads: tuple
    global_writes: tuple
    shared_reads: tuple
    shared_writes: tuple
    atomics: tuple
    warp_accesses: int  # warp-wide global accesses
    sectors: int  # 32-byte sectors they touched
    ideal_sectors: int  # the fewest sectors that could hold the same bytes
    coalescing: float  # ideal_sectors / sectors: 1.0 is perfect
    shared_warp_accesses: int
    bank_conflicted: int  # warp-wide shared accesses that needed more than one pass
    bank_ways_max: int
    idle_threads: int  # threads that touched no global or shared memory

    def __str__(self):
        lines = [
            f"per active thread (mean / max): global reads {self.global_reads[0]:.1f} / "
            f"{self.global_reads[1]}, global writes {self.global_writes[0]:.1f} / "
            f"{self.global_writes[1]}, shared reads {self.shared_reads[0]:.1f} / "
            f"{self.shared_reads[1]}, shared writes {self.shared_writes[0]:.1f} / "
            f"{self.shared_writes[1]}, atomics {self.atomics[0]:.1f} / {self.atomics[1]}",
        ]
        if self.warp_accesses:
            lines.append(
                f"coalescing: {self.coalescing:.0%} ({self.ideal_sectors} sectors "
                f"needed, {self.sectors} touched, {self.warp_accesses} warp-wide "
                f"global accesses)"
            )
        if self.shared_warp_accesses:
            lines.append(
                f"shared-memory bank conflicts: {self.bank_conflicted} of "
                f"{self.shared_warp_accesses} warp-wide accesses (worst: "
                f"{self.bank_ways_max}-way)"
            )
        lines.append(f"idle threads (touched no memory): {self.idle_threads} of {self.threads}")
        return "\n".join(lines)


def _per_thread(t, mask, active):
    """(mean over the active threads, max) of the accesses in `mask`."""
    counts = np.bincount(t.accesses.gtid[mask], minlength=t.nthreads)
    if not len(counts):
        return (0.0, 0)
    return (float(counts.sum() / max(int(active.sum()), 1)), int(counts.max()))


def warp_groups(t, space, start=0, stop=None):
    """Warp-wide accesses to arrays in `space` ("global" or "shared"), among log rows start to stop.

    Returns (rows, gid, ngroups, address): `rows` are positions in t.accesses; `gid` numbers
    the warp-wide access each belongs to: same block, warp, source line, epoch, array, kind and
    the same per-thread occurrence (k-th time this thread ran that access).  `address` is the
    byte offset of each accessed element from the start of its array.
    """
    a = t.accesses
    in_space = np.array([info.space == space for info in t.arrays], bool)
    rows = start + np.flatnonzero(in_space[a.array[start:stop]]) if len(a) else np.zeros(0, np.int64)
    if len(rows) == 0:
        return rows, rows, 0, rows
    gtid, epoch, loc, arr, kind = a.gtid[rows], a.epoch[rows], a.loc[rows], a.array[rows], a.kind[rows]
    gid, ng = group_ids(gtid, epoch, loc, arr, kind)
    # occurrence count within each (thread, epoch, line, array, kind) group, in execution order
    order = np.argsort(gid, kind="stable")  # rows ascend: a stable sort keeps execution order in each group
    starts = np.r_[0, np.flatnonzero(np.diff(gid[order])) + 1]
    del gid
    counts = np.diff(np.r_[starts, len(order)])
    occ = np.empty(len(rows), np.int64)
    occ[order] = np.arange(len(order)) - np.repeat(starts, counts)
    del order
    tpb = a.tpb
    # block and warp from the rows' own thread ids (a.block and a.warp would compute them for every access)
    wid, nw = group_ids(gtid // tpb, gtid % tpb // 32, loc, epoch, arr, kind, occ)
    del gtid, epoch, loc, kind, occ
    address = np.zeros(len(rows), np.int64)
    index = a.index[rows]
    for aid in np.unique(arr):
        info = t.arrays[aid]
        m = arr == aid
        if not info.shape:  # a 0-d array: its one element is at its start
            continue
        multi = np.unravel_index(index[m], info.shape)
        address[m] = sum(i * s for i, s in zip(multi, info.strides))
    return rows, wid, nw, address


def coalescing_table(t):
    """Per warp-wide global access: (sectors touched, ideal sectors), a chunk of blocks at a time."""
    parts = [_coalescing(t, start, stop) for start, stop in block_chunks(t)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _coalescing(t, start, stop):
    rows, wid, nw, addr = warp_groups(t, "global", start, stop)
    if nw == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = t.accesses
    itemsize = np.array([info.itemsize for info in t.arrays])[a.array[rows]]
    # sectors: distinct (group, sector) pairs, counting both ends of each element
    first = addr // 32
    last = (addr + itemsize - 1) // 32
    spans = last != first  # an element inside one sector adds no second pair (most of them)
    sectors = np.bincount(distinct_first(np.r_[wid, wid[spans]], np.r_[first, last[spans]]), minlength=nw)
    size = np.zeros(nw, np.int64)
    size[wid] = itemsize  # one array per warp-wide access: one element size
    needed = np.bincount(distinct_first(wid, a.index[rows]), minlength=nw) * size
    ideal = np.ceil(needed / 32).astype(np.int64)
    return sectors, ideal


def bank_table(t):
    """Per warp-wide shared access: (passes needed, ideal passes), 32 banks of 4 bytes.

    Threads reading the same 4-byte word get it by broadcast, so only distinct words count;
    the passes needed are the most distinct words that fall into any one bank.
    """
    parts = [_banks(t, start, stop) for start, stop in block_chunks(t)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _banks(t, start, stop):
    rows, wid, nw, addr = warp_groups(t, "shared", start, stop)
    if nw == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a = t.accesses
    itemsize = np.array([info.itemsize for info in t.arrays])[a.array[rows]]
    words_per = np.maximum(itemsize // 4, 1)
    rep = np.repeat(np.arange(len(rows)), words_per)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(words_per) - words_per, words_per)
    word = addr[rep] // 4 + offs
    g = wid[rep]
    # distinct (group, word); shared arrays are separate allocations: offset them apart
    base = np.array([i << 32 for i in range(len(t.arrays))], dtype=np.int64)[a.array[rows]][rep]
    uniq = distinct(g, word + base)
    bank = (uniq[1] - (uniq[1] >> 32 << 32)) % 32
    (bank_wid, _), per_bank = distinct(uniq[0], bank, counts=True)
    passes = np.zeros(nw, np.int64)
    if len(bank_wid):  # the rows come sorted by group: the most per bank of each group in one pass
        starts = np.flatnonzero(np.r_[True, bank_wid[1:] != bank_wid[:-1]])
        passes[bank_wid[starts]] = np.maximum.reduceat(per_bank, starts)
    nwords = np.bincount(uniq[0], minlength=nw)
    ideal = np.maximum(np.ceil(nwords / 32).astype(np.int64), 1)
    return passes, ideal


def compute_metrics(t):
    a = t.accesses
    glob = np.array([info.space == "global" for info in t.arrays] + [False], bool)[a.array]
    shar = np.array([info.space == "shared" for info in t.arrays] + [False], bool)[a.array]
    sectors, ideal = coalescing_table(t)
    passes, bank_ideal = bank_table(t)
    touched = np.zeros(t.nthreads, bool)
    touched[a.gtid[glob | shar]] = True
    idle = int((~touched).sum())
    active = touched if touched.any() else ~touched  # nothing touched memory: every mean is 0 anyway
    ways = passes / bank_ideal if len(passes) else np.zeros(0)
    return Metrics(
        threads=t.nthreads,
        global_reads=_per_thread(t, glob & (a.kind == READ), active),
        global_writes=_per_thread(t, glob & (a.kind == WRITE), active),
        shared_reads=_per_thread(t, shar & (a.kind == READ), active),
        shared_writes=_per_thread(t, shar & (a.kind == WRITE), active),
        atomics=_per_thread(t, a.kind == ATOMIC, active),
        warp_accesses=len(sectors),
        sectors=int(sectors.sum()),
        ideal_sectors=int(ideal.sum()),
        coalescing=float(ideal.sum() / sectors.sum()) if sectors.sum() else 1.0,
        shared_warp_accesses=len(passes),
        bank_conflicted=int((passes > bank_ideal).sum()),
        bank_ways_max=int(np.ceil(ways.max())) if len(ways) else 1,
        idle_threads=idle,
    )


def summarize(t):
    head = (
        f"{t.kernel_name}: {t.nblocks} block(s) x {t.threads_per_block} threads, "
        f"{len(t.accesses)} memory accesses traced."
    )
    if t.verdicts:
        body = "\n".join(f"- {v.message}" for v in t.verdicts)
    else:
        body = "No problems found."
    return f"{head}\n{body}\n{t.metrics}"
