"""Turn a recorded trace into verdicts (mistakes, explained) and metrics (how well it uses memory).

Pure NumPy analysis of `Trace.accesses`; nothing here runs the kernel.  Each verdict class is
reported once per (kind, array) with one representative access and a count, so a learner sees
a few plain sentences rather than a thousand lines.

Rules (see the course notes for why):
  * race: two different threads touch one element in the same barrier epoch of one block and at
    least one of them is a plain write, or one is a plain read and the other an atomic.  Between
    different blocks the epoch does not matter: no barrier orders blocks.
  * uninitialized_shared: the first access to a shared element (in the tracer's fixed order,
    which respects every barrier) is a read or an atomic rather than a write.
  * out_of_bounds / divergent_barrier: recorded while running, explained here.
  * unwritten_output: elements of an `outputs` array that no thread wrote.
"""


from dataclasses import dataclass, field

import numpy as np

from .records import ATOMIC, READ, WRITE, unlinear


__all__ = ["Verdict", "VERDICT_KINDS", "find_verdicts", "group_ids"]

VERDICT_KINDS = ("out_of_bounds", "race", "uninitialized_shared", "divergent_barrier",
                 "unwritten_output")
_VERB = {READ: "read", WRITE: "wrote", ATOMIC: "atomically updated"}


@dataclass
class Verdict:
    """One kind of mistake on one array, with its first example and how many more there are."""

    kind: str
    message: str
    array: object = None  # array name, or None (divergent barrier)
    index: object = None  # multi-dimensional element index of the example
    block: object = None  # (x, y, z) of the example
    thread: object = None  # (x, y, z) within its block
    line: object = None
    count: int = 1  # offending elements (or events) in all
    accesses: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # ^ positions in Trace.accesses of every offending access, for highlighting in pictures
    details: dict = field(default_factory=dict)

    def __str__(self):
        return self.message


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------

def group_ids(*cols):
    """Dense group id per row for the combination of `cols` (and the number of groups)."""
    n = len(cols[0])
    if n == 0:
        return np.zeros(0, np.int64), 0
    order = np.lexsort(cols[::-1])
    change = np.zeros(n, bool)
    change[0] = True
    for c in cols:
        s = c[order]
        change[1:] |= s[1:] != s[:-1]
    gid_sorted = np.cumsum(change) - 1
    gid = np.empty(n, np.int64)
    gid[order] = gid_sorted
    return gid, int(gid_sorted[-1]) + 1


def _ranges(values):
    """[0,1,2,5,7,8] -> '0–2, 5, 7–8' (sorted, unique)."""
    values = np.unique(np.asarray(values, dtype=np.int64))
    if len(values) == 0:
        return ""
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = np.r_[values[0], values[breaks + 1]]
    ends = np.r_[values[breaks], values[-1]]
    parts = [f"{s}" if s == e else f"{s}–{e}" for s, e in zip(starts, ends)]
    if len(parts) > 6:
        parts = parts[:6] + [f"… ({len(parts) - 6} more ranges)"]
    return ", ".join(parts)


def _fmt3(xyz, dims):
    """(3, 0, 0) -> '3' for 1-D launches, '(3, 0)' for 2-D, '(3, 0, 1)' for 3-D."""
    n = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
    return str(xyz[0]) if n == 1 else "(" + ", ".join(str(v) for v in xyz[:n]) + ")"


def _idx(index):
    return ", ".join(str(int(i)) for i in index)


def _who(t, gtid):
    return (f"thread {_fmt3(t.thread_of(gtid), t.blockdim)} of block "
            f"{_fmt3(t.block_of(gtid), t.griddim)}")


def _where(t, loc):
    where = t.locations[loc]
    src = where.source
    return f"line {where.line}" + (f" (`{src}`)" if src else "")


def _more(count, one, many):
    """' …and 3 more elements of x.' (count includes the example already described)."""
    if count <= 1:
        return ""
    return f" …and {count - 1} more {one if count == 2 else many}."


def _conflicting_groups(gid, ngroups, actor, kind):
    """Which groups hold a racing pair: different actors, one a plain write, or read vs atomic."""
    big = np.iinfo(np.int64).max
    lo, hi = {}, {}
    for k in (READ, WRITE, ATOMIC, None):
        m = slice(None) if k is None else kind == k
        lo[k] = np.full(ngroups, big, np.int64)
        hi[k] = np.full(ngroups, -1, np.int64)
        np.minimum.at(lo[k], gid[m], actor[m])
        np.maximum.at(hi[k], gid[m], actor[m])
    has = {k: hi[k] >= 0 for k in (READ, WRITE, ATOMIC)}
    one_writer = has[WRITE] & (lo[WRITE] == hi[WRITE])
    return ((has[WRITE] & (lo[WRITE] != hi[WRITE]))
            | (one_writer & ((lo[None] != lo[WRITE]) | (hi[None] != hi[WRITE])))
            | (~has[WRITE] & has[READ] & has[ATOMIC]
               & ~((lo[READ] == hi[READ]) & (lo[ATOMIC] == hi[ATOMIC])
                   & (lo[READ] == lo[ATOMIC]))))


def _conflict(k1, k2):
    return WRITE in (k1, k2) or {k1, k2} == {READ, ATOMIC}


def _first_pair(rows, actor, kind):
    """The first (earlier, later) pair of record positions that race, in execution order."""
    rows = rows[:4000]
    for j in range(len(rows)):
        for i in range(j):
            if actor[rows[i]] != actor[rows[j]] and _conflict(kind[rows[i]], kind[rows[j]]):
                return rows[i], rows[j]
    return rows[0], rows[-1]


# ----------------------------------------------------------------------------------------------
# verdicts
# ----------------------------------------------------------------------------------------------

def find_verdicts(t):
    verdicts = []
    verdicts += _out_of_bounds(t)
    verdicts += _races(t)
    verdicts += _uninitialized(t)
    verdicts += _divergent(t)
    verdicts += _unwritten(t)
    return verdicts


def _out_of_bounds(t):
    by_array = {}
    for event in t.out_of_bounds:
        by_array.setdefault(event[0], []).append(event)
    verdicts = []
    for aid, events in by_array.items():
        info = t.arrays[aid]
        aid_, index, kind, (gtid, _epoch), code, line = events[0]
        threads = {e[3][0] for e in events}
        shape = info.shape
        dim = next((d for d, (i, n) in enumerate(zip(index, shape)) if not 0 <= i < n), 0)
        bad, n = index[dim], shape[dim]
        which = f" in dimension {dim}" if len(shape) > 1 else ""
        src = _src(code, line)
        if bad < 0:
            why = (f"index {bad}{which} is negative. On a GPU a negative index does not wrap "
                   f"around as in NumPy: it reaches memory before the array.")
            fix = ("Check the index before using it, e.g. `if i > 0:` before reading "
                   "`x[i - 1]`.")
        else:
            why = f"index {bad}{which} is past the end (valid: 0 to {n - 1})."
            bound = f"{info.var}.shape[{dim}]"
            if len(shape) > 1:
                fix = (f"Check every dimension against its own size: the index in dimension "
                       f"{dim} must stay below {bound}.")
            else:
                fix = (f"Guard the access with a bounds check such as `if i < {bound}:` (the "
                       f"grid usually has more threads than elements), or fix how the index "
                       f"is computed.")
        msg = (f"Out of bounds: {_who(t, gtid)} {_VERB[kind]} {info.element(index)} at "
               f"line {line}{src}, but {info.var} has shape {tuple(shape)}: {why} {fix}"
               + _more(len(events), f"out-of-bounds access to {info.var}",
                       f"out-of-bounds accesses to {info.var} (by {len(threads)} threads in all)"))
        verdicts.append(Verdict("out_of_bounds", msg, info.name, tuple(index), t.block_of(gtid),
                                t.thread_of(gtid), line, len(events),
                                details={"events": events}))
    return verdicts


def _src(code, line):
    import linecache

    s = linecache.getline(code.co_filename, line).strip()
    return f" (`{s}`)" if s else ""


def _races(t):
    a = t.accesses
    if len(a) == 0:
        return []
    block = a.block
    space = np.array([info.space for info in t.arrays], dtype=object)
    is_global = np.array([s == "global" for s in space], bool)[a.array]
    racy = np.zeros(len(a), bool)  # records in a racing element
    cross = np.zeros(len(a), bool)

    # same block, same epoch: actors are threads
    gid, ng = group_ids(a.array, block, a.epoch, a.index)
    bad = _conflicting_groups(gid, ng, a.gtid, a.kind)
    racy |= bad[gid]
    # different blocks, any epoch (global memory only): actors are blocks
    g = np.flatnonzero(is_global)
    if len(g):
        gid2, ng2 = group_ids(a.array[g], a.index[g])
        bad2 = _conflicting_groups(gid2, ng2, block[g], a.kind[g])
        cross[g] = bad2[gid2]
    verdicts = []
    for aid in np.unique(a.array[racy | cross]):
        info = t.arrays[aid]
        rows_all = np.flatnonzero((a.array == aid) & (racy | cross))
        first = rows_all[0]
        element = a.index[first]
        n_elements = len(np.unique(a.index[rows_all]))
        same = rows_all[a.index[rows_all] == element]
        if racy[first]:
            same = same[(block[same] == block[first]) & (a.epoch[same] == a.epoch[first])]
            actor = a.gtid
        else:
            actor = block
        i, j = _first_pair(same, actor, a.kind)
        verdicts.append(_race_verdict(t, info, element, i, j, rows_all, n_elements, same))
    return verdicts


def _race_verdict(t, info, element, i, j, rows, n_elements, same):
    a = t.accesses
    index = np.unravel_index(int(element), info.shape)
    cross_block = a.block[i] != a.block[j]
    ki, kj = int(a.kind[i]), int(a.kind[j])
    name = info.element(index)
    both_write = (np.any((a.gtid[same] == a.gtid[i]) & (a.kind[same] != READ))
                  and np.any((a.gtid[same] == a.gtid[j]) & (a.kind[same] != READ)))
    li, lj = t.locations[a.loc[i]].line, t.locations[a.loc[j]].line
    if cross_block:
        when = "but they are in different blocks, and nothing orders different blocks"
        fix = ("Let each block write its own element (e.g. index by cuda.blockIdx.x) and combine "
               "them afterwards, or use cuda.atomic.add for a shared total.")
    else:
        when = "with no cuda.syncthreads() between them"
        if ATOMIC in (ki, kj):
            fix = ("Read the value only after all atomic updates are done: put a "
                   "cuda.syncthreads() between the atomics and the read.")
        elif both_write:
            fix = ("Several threads update the same element and overwrite each other's work: "
                   "use an atomic such as cuda.atomic.add(array, index, value).")
        elif _rounds_without_barrier(a, i) or _rounds_without_barrier(a, j):
            line = li if ki == WRITE else lj
            fix = (f"A loop goes round again without a barrier: put a cuda.syncthreads() inside "
                   f"the loop, after line {line}, so each round finishes before the next starts.")
        elif li == lj:
            fix = (f"Split line {li} in two phases: read into a local variable, call "
                   f"cuda.syncthreads(), then write (or write into a second buffer).")
        elif _came_round_again(a, i, j):
            fix = (f"The write at line {li} belongs to the next round of a loop and overwrote "
                   f"a value other threads still needed: add a cuda.syncthreads() at the end "
                   f"of the loop body, after line {lj}.")
        else:
            fix = (f"Put a cuda.syncthreads() between line {min(li, lj)} and line {max(li, lj)} "
                   f"so that every write finishes before any thread reads, or use a second "
                   f"buffer.")
    msg = (f"Race on {name}: {_who(t, a.gtid[i])} {_VERB[ki]} it at {_where(t, a.loc[i])} and "
           f"{_who(t, a.gtid[j])} {_VERB[kj]} it at {_where(t, a.loc[j])}, {when}. The result "
           f"depends on which thread runs first, so it can change from run to run even if it "
           f"looks right now. {fix}"
           + _more(n_elements, f"element of {info.var} is raced on",
                   f"elements of {info.var} are raced on"))
    return Verdict("race", msg, info.name, tuple(int(v) for v in index), t.block_of(a.gtid[i]),
                   t.thread_of(a.gtid[i]), li, n_elements, rows,
                   details={"pair": (int(i), int(j)), "cross_block": bool(cross_block),
                            "other_thread": t.thread_of(a.gtid[j]),
                            "other_block": t.block_of(a.gtid[j]), "other_line": lj})


def _rounds_without_barrier(a, w):
    """Did the thread of record `w` write at that line more than once within one epoch?"""
    same = ((a.gtid == a.gtid[w]) & (a.epoch == a.epoch[w]) & (a.loc == a.loc[w])
            & (a.kind == WRITE))
    return np.count_nonzero(same) > 1


def _came_round_again(a, i, j):
    """Did the thread of record i run record j's line earlier in the same epoch (a loop)?"""
    earlier = np.arange(len(a)) < i
    return bool(np.any(earlier & (a.gtid == a.gtid[i]) & (a.epoch == a.epoch[i])
                       & (a.loc == a.loc[j])))


def _uninitialized(t):
    a = t.accesses
    shared = np.array([info.space == "shared" for info in t.arrays], bool)
    if len(a) == 0 or not shared.any():
        return []
    rows = np.flatnonzero(shared[a.array])
    if len(rows) == 0:
        return []
    gid, ng = group_ids(a.array[rows], a.block[rows], a.index[rows])
    first = np.full(ng, len(a), np.int64)
    np.minimum.at(first, gid, rows)  # rows are in execution order
    bad = first[a.kind[first] != WRITE]
    verdicts = []
    for aid in np.unique(a.array[bad]):
        info = t.arrays[aid]
        mine = bad[a.array[bad] == aid]
        r = mine[0]
        index = np.unravel_index(int(a.index[r]), info.shape)
        verb = ("atomically updated" if a.kind[r] == ATOMIC else "read")
        fix = ("Set it to a starting value (e.g. 0) first, then cuda.syncthreads()."
               if a.kind[r] == ATOMIC else
               "Check that your loads cover every element that is read (the edges and halo "
               "too), and that a cuda.syncthreads() separates the loads from the reads.")
        msg = (f"Uninitialised shared memory: {_who(t, a.gtid[r])} {verb} "
               f"{info.element(index)} at {_where(t, a.loc[r])} before any thread of its "
               f"block wrote it. Shared memory starts out holding garbage on a GPU. {fix}"
               + _more(len(mine), f"element of {info.var} was used before being written",
                       f"elements of {info.var} were used before being written"))
        verdicts.append(Verdict("uninitialized_shared", msg, info.name,
                                tuple(int(v) for v in index), t.block_of(a.gtid[r]),
                                t.thread_of(a.gtid[r]), t.locations[a.loc[r]].line, len(mine),
                                mine))
    return verdicts


def _divergent(t):
    if not t.divergent:
        return []
    ev = t.divergent[0]
    block = _fmt3(unlinear(ev["block"], t.griddim), t.griddim)
    missing = []
    if ev["finished"]:
        missing.append(f"threads {_ranges(ev['finished'])} had already finished")
    for line, ts in ev["elsewhere"].items():
        missing.append(f"threads {_ranges(ts)} were waiting at the syncthreads() on line {line}")
    ids = " (linear ids)" if t.blockdim[1] > 1 or t.blockdim[2] > 1 else ""
    msg = (f"Divergent barrier: in block {block}, threads{ids} {_ranges(ev['arrived'])} waited at "
           f"cuda.syncthreads() on line {ev['line']}{_src(ev['code'], ev['line'])}, but "
           f"{' and '.join(missing)}. Every thread of a block must reach the same "
           f"syncthreads(); on a GPU this can hang or silently skip the barrier. Move the "
           f"syncthreads() out of the `if` (and guard the work instead of returning early)."
           + _more(len(t.divergent), "barrier was missed by part of a block",
                   "barriers were missed by part of a block"))
    first_thread = ev["arrived"][0]
    tpb = t.threads_per_block
    return [Verdict("divergent_barrier", msg, None, None, t.block_of(ev["block"] * tpb),
                    t.thread_of(first_thread), ev["line"], len(t.divergent),
                    details={"events": t.divergent})]


def _unwritten(t):
    a = t.accesses
    verdicts = []
    for aid in t.outputs:
        info = t.arrays[aid]
        written = np.zeros(info.size, bool)
        m = (a.array == aid) & (a.kind != READ)
        written[a.index[m]] = True
        missing = np.flatnonzero(~written)
        if len(missing) == 0:
            continue
        if len(info.shape) == 1:
            where = f"elements {_ranges(missing)} of {info.name} were never written"
        else:
            lo = np.unravel_index(int(missing[0]), info.shape)
            hi = np.unravel_index(int(missing[-1]), info.shape)
            where = (f"{len(missing)} of the {info.size} elements of {info.name} (shape "
                     f"{tuple(info.shape)}) were never written, from {info.name}[{_idx(lo)}] "
                     f"to {info.name}[{_idx(hi)}]")
        msg = (f"Unwritten output: {where}: is your grid large enough? The launch ran "
               f"{t.nthreads} threads ({t.nblocks} block(s) of {t.threads_per_block}); round "
               f"the number of blocks up, e.g. `(n + threads - 1) // threads`, or use a "
               f"grid-stride loop.")
        verdicts.append(Verdict("unwritten_output", msg, info.name,
                                tuple(int(v) for v in np.unravel_index(int(missing[0]), info.shape)),
                                None, None, None, len(missing),
                                details={"missing": missing}))
    return verdicts


