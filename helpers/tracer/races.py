"""Races: two threads of one block touch one element in the same barrier epoch (at least one a
plain write, or a plain read against an atomic), or two blocks touch one element at all.
Within one warp a cuda.syncwarp() between the two accesses orders them as well (CUDA's memory
model: syncwarp is a barrier and a fence for the lanes that take part).
"""

import numpy as np

from ..accesses import ATOMIC, READ, WRITE, barrier_epoch, grid_epoch, warp_epoch
from . import findings
from .findings import VERB, Verdict, block_chunks, group_ids, more, where, who


def _conflicting_groups(gid, ngroups, actor, kind):
    """Which groups hold a racing pair: different actors, one a plain write, or read vs atomic.

    Every racing pair needs two actors, so groups that one actor alone touched (most of them, in
    a kernel where each thread owns its elements) are set aside first and the per-kind bounds
    are computed over the others only: that keeps memory and time to the groups that matter."""
    big = np.iinfo(np.int64).max
    lo_all, hi_all = np.full(ngroups, big, np.int64), np.full(ngroups, -1, np.int64)
    np.minimum.at(lo_all, gid, actor)
    np.maximum.at(hi_all, gid, actor)
    shared = lo_all != hi_all
    del lo_all, hi_all
    racing = np.zeros(ngroups, bool)
    if shared.any():
        keep = shared[gid]
        renumber = np.cumsum(shared) - 1
        racing[shared] = _racing_among(renumber[gid[keep]], int(shared.sum()), actor[keep], kind[keep])
    return racing


def _racing_among(gid, ngroups, actor, kind):
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
    return (
        (has[WRITE] & (lo[WRITE] != hi[WRITE]))
        | (one_writer & ((lo[None] != lo[WRITE]) | (hi[None] != hi[WRITE])))
        | (
            ~has[WRITE]
            & has[READ]
            & has[ATOMIC]
            & ~((lo[READ] == hi[READ]) & (lo[ATOMIC] == hi[ATOMIC]) & (lo[READ] == lo[ATOMIC]))
        )
    )


def _conflict(k1, k2):
    return WRITE in (k1, k2) or {k1, k2} == {READ, ATOMIC}


def _first_pair(rows, actor, kind):
    """The first (earlier, later) pair of record positions that race, in execution order;
    `actor` holds the actor of each of `rows`."""
    rows, actor = rows[:4000], actor[:4000]
    for j in range(len(rows)):
        for i in range(j):
            if actor[i] != actor[j] and _conflict(kind[rows[i]], kind[rows[j]]):
                return rows[i], rows[j]
    return rows[0], rows[-1]


def contended_rows(a, by_block=False, arrays=None):
    """Positions of the log's accesses to elements that could race, ascending: elements something
    wrote or atomically updated, and that more than one thread (`by_block`: block) touched.

    In most kernels each thread owns the elements it writes, so this leaves few or none. A few
    passes over the log, CHUNK rows at a time, and no sort: each element written (of the arrays
    `arrays` marks, if given) remembers one actor that touched it (the last assignment wins), and
    an access by any other actor marks the element. Temporaries: a chunk's, and the arrays' own size."""
    n = len(a)
    empty = np.zeros(0, np.int64)
    if n == 0:
        return empty
    chunks = [(s, min(s + findings.CHUNK, n)) for s in range(0, n, findings.CHUNK)]
    naid = int(a.array.max()) + 1
    top, has_write = np.zeros(naid, np.int64), np.zeros(naid, bool)
    for s, e in chunks:
        np.maximum.at(top, a.array[s:e], a.index[s:e])
        has_write[a.array[s:e][a.kind[s:e] != READ]] = True
    look = has_write if arrays is None else has_write & arrays[:naid]
    if not look.any():
        return empty
    size = np.where(look, top + 1, 0)
    offset = np.cumsum(size) - size  # each array's elements after the previous ones'

    def elements(s, e):
        """(rows of looked-at arrays in this chunk, their element keys)."""
        aid = a.array[s:e]
        rows = np.flatnonzero(look[aid])
        return rows, offset[aid[rows]] + a.index[s:e][rows]

    def actor(s, rows):
        g = a.gtid[s + rows]
        return g // a.tpb if by_block else g

    written = np.zeros(int(size.sum()), bool)
    for s, e in chunks:
        rows, key = elements(s, e)
        written[key[a.kind[s:e][rows] != READ]] = True
    owner = np.zeros(len(written), a.gtid.dtype)
    for s, e in chunks:
        rows, key = elements(s, e)
        w = written[key]
        owner[key[w]] = actor(s, rows[w])
    twice = np.zeros(len(written), bool)
    for s, e in chunks:
        rows, key = elements(s, e)
        w = written[key]
        key, rows = key[w], rows[w]
        twice[key[owner[key] != actor(s, rows)]] = True
    del owner, written
    found = []
    for s, e in chunks:
        rows, key = elements(s, e)
        found.append(s + rows[twice[key]])
    return np.concatenate(found)


def find_races(t):
    a = t.accesses
    if len(a) == 0:
        return []
    tpb = a.tpb
    is_global = np.array([info.space == "global" for info in t.arrays], bool)
    racy = np.zeros(len(a), bool)  # records in a racing element
    cross = np.zeros(len(a), bool)

    # same block, same epoch: actors are threads; a chunk of blocks at a time (no group spans blocks)
    contended = contended_rows(a)
    for start, stop in block_chunks(t) if len(contended) else ():
        c = contended[np.searchsorted(contended, start) : np.searchsorted(contended, stop)]
        if len(c) == 0:
            continue
        gtid = a.gtid[c]
        gid, ng = group_ids(a.array[c], gtid // tpb, barrier_epoch(a.epoch[c]), a.index[c])
        bad = _ordered_by_syncwarp(a, gid, ng, _conflicting_groups(gid, ng, gtid, a.kind[c]), c)
        bad = _cas_guesses(a, gid, ng, bad, gtid, t.cas_locations, c)
        racy[c] = bad[gid]
    # different blocks, any epoch (global memory only): actors are blocks
    g = contended_rows(a, by_block=True, arrays=is_global)
    if len(g):
        # a grid sync (the epoch's high bits, see helpers.accesses.GRID_SHIFT) orders blocks too
        gid2, ng2 = group_ids(a.array[g], a.index[g], grid_epoch(a.epoch[g]))
        block = a.gtid[g] // tpb
        bad2 = _conflicting_groups(gid2, ng2, block, a.kind[g])
        bad2 = _cas_guesses(a, gid2, ng2, bad2, block, t.cas_locations, g)
        cross[g] = bad2[gid2]
    flagged = np.flatnonzero(racy | cross)
    if len(flagged) == 0:
        return []
    verdicts = []
    reported = set()  # structured arrays already reported through one of their fields
    for aid in np.unique(a.array[flagged]):
        info = t.arrays[aid]
        if info.base is not None:
            if info.base in reported:
                continue
            reported.add(info.base)
        rows_all = flagged[a.array[flagged] == aid]
        first = rows_all[0]
        element = a.index[first]
        n_elements = len(np.unique(a.index[rows_all]))
        same = rows_all[a.index[rows_all] == element]
        block = a.gtid[same] // tpb
        if racy[first]:
            epoch = barrier_epoch(a.epoch[same])
            same = same[(block == a.gtid[first] // tpb) & (epoch == barrier_epoch(a.epoch[first]))]
            actor = a.gtid[same]
        else:
            actor = block
        i, j = _first_pair(same, actor, a.kind)
        verdicts.append(_race_verdict(t, info, element, i, j, rows_all, n_elements, same))
    return verdicts


def _cas_guesses(a, gid, ng, bad, actor, cas_locations, rows_of):
    """Clear the racing groups that are compare-and-swap loops: no plain write, every atomic a CAS,
    and each actor's plain reads come before its own CAS on the element. That is the CUDA
    Programming Guide's idiom (``old = *a; do { assumed = old; old = atomicCAS(a, assumed, f(assumed)); }
    while (assumed != old);``): the plain read is only a first guess that the CAS checks, so whatever
    another thread wrote meanwhile, the loop goes round again. A read after the actor's last CAS
    (the result read before a barrier) still races. ``rows_of``: the log rows gid numbers, and
    ``actor`` the actor of each."""
    if not cas_locations or not bad.any():
        return bad
    picked = np.flatnonzero(bad[gid])
    group, rows = gid[picked], rows_of[picked]
    kind, who = a.kind[rows], actor[picked]
    is_cas = np.isin(a.loc[rows], np.fromiter(cas_locations, np.int64))
    keep = np.zeros(ng, bool)
    np.logical_or.at(keep, group, (kind == WRITE) | ((kind == ATOMIC) & ~is_cas))
    last_read, last_cas = {}, {}
    for grp, actor_id, k, row in zip(group.tolist(), who.tolist(), kind.tolist(), rows.tolist()):
        target = last_read if k == READ else last_cas
        target[(grp, actor_id)] = max(row, target.get((grp, actor_id), -1))
    for (grp, actor_id), row in last_read.items():
        if last_cas.get((grp, actor_id), -1) < row:
            keep[grp] = True
    return bad & keep


def _ordered_by_syncwarp(a, gid, ng, bad, rows_of):
    """Clear the racing groups whose every conflicting pair is one warp's, split by a syncwarp.

    A group whose threads span several warps keeps its verdict: a syncwarp orders nothing across
    warps. A one-warp group is split by the syncwarps its threads had passed; it still races only
    if a conflicting pair falls within one part (no syncwarp between them). ``rows_of``: the log
    rows gid numbers.
    """
    picked = np.flatnonzero(bad[gid])
    rows = rows_of[picked]
    if len(rows) == 0 or not np.any(warp_epoch(a.epoch[rows])):
        return bad
    gtid = a.gtid[rows]
    g, warp = gid[picked], gtid // a.tpb * 1024 + gtid % a.tpb // 32
    lo, hi = np.full(ng, np.iinfo(np.int64).max), np.full(ng, -1)
    np.minimum.at(lo, g, warp)
    np.maximum.at(hi, g, warp)
    one_warp = lo == hi
    sub, nsub = group_ids(g, warp_epoch(a.epoch[rows]))
    still = np.zeros(ng, bool)
    np.logical_or.at(still, g, _conflicting_groups(sub, nsub, gtid, a.kind[rows])[sub])
    return bad & (~one_warp | still)


def _race_verdict(t, info, element, i, j, rows, n_elements, same):
    a = t.accesses
    index = np.unravel_index(int(element), info.shape)
    tpb = a.tpb
    cross_block = a.gtid[i] // tpb != a.gtid[j] // tpb
    ki, kj = int(a.kind[i]), int(a.kind[j])
    name = info.element(index)
    if info.space == "global" and "/" in info.name:  # arguments that are views of one memory (helpers.tracer.arguments)
        names = list(dict.fromkeys(info.name.split("/")))
        if len(names) > 1:
            name += f" ({', '.join(names[:-1])} and {names[-1]} are views of the same memory)"
    both_write = np.any((a.gtid[same] == a.gtid[i]) & (a.kind[same] != READ)) and np.any(
        (a.gtid[same] == a.gtid[j]) & (a.kind[same] != READ)
    )
    li, lj = t.locations[a.loc[i]].line, t.locations[a.loc[j]].line
    aid = int(a.array[i]) if info.base is None else info.base
    in_place = (
        info.space == "global"
        and ATOMIC not in (ki, kj)
        and not both_write
        and (cross_block or (bool(t.outputs) and aid not in t.outputs))  # an output may be staged with barriers
        and _overwrites_its_input(a, i, j)
    )
    stride = _loop_stride(a, i) if cross_block and ki == kj == WRITE else 0
    if cross_block:
        when = "but they are in different blocks, and nothing orders different blocks (no grid.sync() between them)"
        fix = (
            "Let each block write its own element (e.g. index by cuda.blockIdx.x) and combine "
            "them afterwards, or use cuda.atomic.add for a shared total."
        )
        if stride and stride == t.threads_per_block and t.nblocks > 1:
            fix = (
                f"The loop at line {li} steps by one block ({stride} threads, cuda.blockDim.x), so the blocks "
                f"walk over the same elements: step by the whole grid, stride = cuda.gridsize(1)."
            )
    else:
        same_warp = a.gtid[i] // tpb == a.gtid[j] // tpb and a.gtid[i] % tpb // 32 == a.gtid[j] % tpb // 32
        when = "with no cuda.syncthreads() between them" + (
            " (both are lanes of one warp: a cuda.syncwarp() would order them too)" if same_warp else ""
        )
        if ATOMIC in (ki, kj):
            fix = (
                "Read the value only after all atomic updates are done: put a "
                "cuda.syncthreads() between the atomics and the read."
            )
            read, upd = (li, lj) if ki == READ else (lj, li)
            fi, fj = (getattr(t.locations[a.loc[k]], "function", None) for k in (i, j))
            if READ in (ki, kj) and read < upd and fi == fj:  # a read, then an atomic below it in one function
                fix = (
                    f"Line {read} reads it and line {upd} then updates it atomically, but another thread's atomic can "
                    "land in between: if the value read feeds the update, make the whole update one atomic "
                    "(cuda.atomic.add, max, ...) or a cuda.atomic.cas loop that retries with the value it returns; "
                    "if it is meant as the final result, put a cuda.syncthreads() between the atomics and the read."
                )
        elif info.field and set(t.arrays[info.base].dtype.names) == {"s0", "s1"}:
            fix = (
                "Threads share one random-number state, so they draw the same numbers and overwrite its "
                "update: give each thread its own state, e.g. xoroshiro128p_uniform_float32(states, i) with "
                "i = cuda.grid(1) and one state per thread from create_xoroshiro128p_states(n, seed)."
            )
        elif both_write:
            fix = (
                "Several threads update the same element and overwrite each other's work: "
                "use an atomic such as cuda.atomic.add(array, index, value)."
            )
        elif _rounds_without_barrier(a, i, j) or _rounds_without_barrier(a, j, i):
            line = li if ki == WRITE else lj
            fix = (
                f"A loop goes round again without a barrier: put a cuda.syncthreads() inside "
                f"the loop, after line {line}, so each round finishes before the next starts."
            )
        elif li == lj:
            fix = (
                f"Split line {li} in two phases: read into a local variable, call "
                f"cuda.syncthreads(), then write (or write into a second buffer)."
            )
        elif _came_round_again(a, i, j):
            fix = (
                f"The write at line {li} belongs to the next round of a loop and overwrote "
                f"a value other threads still needed: add a cuda.syncthreads() at the end "
                f"of the loop body, after line {lj}."
            )
        else:
            fix = (
                f"Put a cuda.syncthreads() between line {min(li, lj)} and line {max(li, lj)} "
                f"so that every write finishes before any thread reads, or use a second "
                f"buffer."
            )
    if in_place:
        fix = (
            f"The kernel overwrites {info.var} while other threads (of other blocks too, which no barrier "
            f"orders) still read it: write the results into the output array, not into {info.var}."
        )
    msg = (
        f"Race on {name}: {who(t, a.gtid[i])} {VERB[ki]} it at {where(t, a.loc[i])} and "
        f"{who(t, a.gtid[j])} {VERB[kj]} it at {where(t, a.loc[j])}, {when}. The result "
        f"depends on which thread runs first, so it can change from run to run even if it "
        f"looks right now. {fix}"
        + more(n_elements, f"element of {info.var} is raced on", f"elements of {info.var} are raced on")
    )
    return Verdict(
        "race",
        msg,
        info.name,
        tuple(int(v) for v in index),
        t.block_of(a.gtid[i]),
        t.thread_of(a.gtid[i]),
        li,
        n_elements,
        rows,
        details={
            "pair": (int(i), int(j)),
            "cross_block": bool(cross_block),
            "other_thread": t.thread_of(a.gtid[j]),
            "other_block": t.block_of(a.gtid[j]),
            "other_line": lj,
        },
    )


def _rounds_without_barrier(a, w, other):
    """Did the thread of record `w` write at that line more than once within one epoch, going
    round a loop that also holds the other record's line (a load loop followed by a separate
    read loop is no such loop: its barrier belongs between the two loops)?"""
    e = barrier_epoch(a.epoch)
    mine = (a.gtid == a.gtid[w]) & (e == e[w])
    if np.count_nonzero(mine & (a.loc == a.loc[w]) & (a.kind == WRITE)) < 2:
        return False
    if a.loc[other] == a.loc[w]:
        return True
    lines = a.loc[mine & np.isin(a.loc, (a.loc[w], a.loc[other]))]
    return np.count_nonzero(lines[1:] != lines[:-1]) > 1  # A..B..A: the two lines alternate


def _overwrites_its_input(a, i, j):
    """Did the writing thread of the pair read this array before it wrote it (a kernel updating
    its input in place while neighbours still read it)?"""
    w = i if a.kind[i] == WRITE else j
    before = np.arange(len(a)) < w
    return bool(np.any(before & (a.gtid == a.gtid[w]) & (a.array == a.array[w]) & (a.kind == READ)))


def _loop_stride(a, w):
    """The step between the elements the thread of record `w` wrote at its line (0 if one)."""
    rows = np.flatnonzero((a.gtid == a.gtid[w]) & (a.loc == a.loc[w]) & (a.array == a.array[w]) & (a.kind == WRITE))
    steps = np.unique(np.diff(a.index[rows]))
    return int(steps[0]) if len(steps) == 1 else 0


def _came_round_again(a, i, j):
    """Did the thread of record i run record j's line earlier in the same epoch (a loop)?"""
    earlier = np.arange(len(a)) < i
    e = barrier_epoch(a.epoch)
    return bool(np.any(earlier & (a.gtid == a.gtid[i]) & (e == e[i]) & (a.loc == a.loc[j])))
