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
  * negative_index: `x[-1]` wraps to the last element in a Numba kernel (numba-cuda wraps signed
    indices, as NumPy does) but reads before the array in CUDA C: almost always a boundary bug.
  * grid_sync_divergent: `cuda.cg.this_grid().sync()` that some threads of the grid never reached.
  * warp_misuse (CUDA C run by helpers.ptx): a warp-level call (__shfl_sync...) whose mask names
    lanes that did not arrive, or leaves out the calling lane.
  * unwritten_output: elements of an `outputs` array that no thread wrote.
"""

import linecache

import numpy as np

from ..accesses import ATOMIC, READ, WRITE, unlinear
from .findings import VERB, Verdict, block_chunks, fmt3, group_ids, idx, more, ranges, source_line, where, who
from .races import find_races

__all__ = ["Verdict", "VERDICT_KINDS", "find_verdicts"]

VERDICT_KINDS = (
    "out_of_bounds",
    "race",
    "uninitialized_shared",
    "divergent_barrier",
    "unwritten_output",
    "warp_misuse",
    "negative_index",
    "grid_sync_divergent",
)


# ----------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# verdicts
# ----------------------------------------------------------------------------------------------


def find_verdicts(t):
    verdicts = []
    verdicts += _out_of_bounds(t)
    # A barrier only part of the block reached comes before the races and uninitialised reads it
    # causes: those name a missing barrier, and the learner's is there, inside an `if`.
    verdicts += _divergent(t)
    # So does a warp call whose mask names a lane that is not there (or leaves out the caller): what
    # it returns is undefined, and the races that follow from it would name a missing syncwarp.
    verdicts += _warp_misuse(t)
    verdicts += find_races(t)
    verdicts += _uninitialized(t)
    verdicts += _unwritten(t)
    verdicts += _negative(t)
    verdicts += _grid_divergent(t)
    if _is_c(t):
        for v in verdicts:
            v.message = _in_c(v.message)
    return verdicts


_C_WORDS = (
    ("cuda.atomic.add(array, index, value)", "atomicAdd(&array[index], value)"),
    ("cuda.atomic.add", "atomicAdd"),
    ("cuda.syncthreads()", "__syncthreads()"),
    ("cuda.syncwarp()", "__syncwarp()"),
    ("cuda.blockIdx.x", "blockIdx.x"),
    ("`if i > 0:`", "`if (i > 0)`"),
)


def _in_c(message):
    """The sentences name Numba's spelling; a CUDA C learner reads the C one."""
    for numba, c in _C_WORDS:
        message = message.replace(numba, c)
    return message


def _is_c(t):
    return getattr(t, "language", "python") == "cuda_c"


def _out_of_bounds(t):
    by_array = {}
    for event in t.out_of_bounds:
        by_array.setdefault(event.array, []).append(event)
    verdicts = []
    for aid, events in by_array.items():
        if aid < 0:  # CUDA C: a pointer into no array at all (helpers.ptx records aid -1)
            verdicts.append(_stray(t, events))
            continue
        info = t.arrays[aid]
        aid_, index, kind, (gtid, _epoch), code, line = events[0]
        threads = {e.thread[0] for e in events}
        shape = info.shape
        dim = next((d for d, (i, n) in enumerate(zip(index, shape)) if not 0 <= i < n), 0)
        bad, n = index[dim], shape[dim]
        which = f" in dimension {dim}" if len(shape) > 1 else ""
        src = source_line(code, line)
        if bad < 0 and _is_c(t):
            why = f"index {bad}{which} is negative: in CUDA C that is out of bounds, memory before the array."
            fix = "Check the index before using it, e.g. `if (i > 0)` before reading `x[i - 1]`."
        elif bad < 0:
            why = (
                f"index {bad}{which} is negative and larger than the size ({n}): Numba wraps a negative index "
                f"once, as NumPy does, and {bad} + {n} is still before the array."
            )
            fix = "Check the index before using it, e.g. `if i > 0:` before reading `x[i - 1]`."
        else:
            why = f"index {bad}{which} is past the end (valid: 0 to {n - 1})."
            bound = f"{info.var}.shape[{dim}]"
            if _is_c(t):
                fix = "Guard the access with a bounds check such as `if (i < n)`, or fix how the index is computed."
            elif len(shape) > 1:
                fix = (
                    f"Check every dimension against its own size: the index in dimension {dim} must stay below {bound}."
                )
            else:
                fix = (
                    f"Guard the access with a bounds check such as `if i < {bound}:` (the "
                    f"grid usually has more threads than elements), or fix how the index "
                    f"is computed."
                )
        msg = (
            f"Out of bounds: {who(t, gtid)} {VERB[kind]} {info.element(index)} at "
            f"line {line}{src}, but {info.var} has shape {tuple(shape)}: {why} {fix}"
            + more(
                len(events),
                f"out-of-bounds access to {info.var}",
                f"out-of-bounds accesses to {info.var} (by {len(threads)} threads in all)",
            )
        )
        verdicts.append(
            Verdict(
                "out_of_bounds",
                msg,
                info.name,
                tuple(index),
                t.block_of(gtid),
                t.thread_of(gtid),
                line,
                len(events),
                details={"events": events},
            )
        )
    return verdicts


def _uninitialized(t):
    a = t.accesses
    shared = np.array([info.space == "shared" for info in t.arrays], bool)
    if len(a) == 0 or not shared.any():
        return []
    firsts = []
    for start, stop in block_chunks(t):  # a chunk of blocks at a time: no group spans blocks
        rows = start + np.flatnonzero(shared[a.array[start:stop]])
        if len(rows) == 0:
            continue
        gid, ng = group_ids(a.array[rows], a.gtid[rows] // a.tpb, a.index[rows])
        first = np.full(ng, len(a), np.int64)
        np.minimum.at(first, gid, rows)  # rows are in execution order
        firsts.append(first[a.kind[first] != WRITE])
    bad = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
    if len(bad) == 0:
        return []
    verdicts = []
    for aid in np.unique(a.array[bad]):
        info = t.arrays[aid]
        mine = bad[a.array[bad] == aid]
        r = mine[0]
        index = np.unravel_index(int(a.index[r]), info.shape)
        verb = "atomically updated" if a.kind[r] == ATOMIC else "read"
        fix = (
            "Set it to a starting value (e.g. 0) first, then cuda.syncthreads()."
            if a.kind[r] == ATOMIC
            else "Check that your loads cover every element that is read (the edges and halo "
            "too), and that a cuda.syncthreads() separates the loads from the reads."
        )
        msg = (
            f"Uninitialised shared memory: {who(t, a.gtid[r])} {verb} "
            f"{info.element(index)} at {where(t, a.loc[r])} before any thread of its "
            f"block wrote it. Shared memory starts out holding garbage on a GPU. {fix}"
            + more(
                len(mine),
                f"element of {info.var} was used before being written",
                f"elements of {info.var} were used before being written",
            )
        )
        verdicts.append(
            Verdict(
                "uninitialized_shared",
                msg,
                info.name,
                tuple(int(v) for v in index),
                t.block_of(a.gtid[r]),
                t.thread_of(a.gtid[r]),
                t.locations[a.loc[r]].line,
                len(mine),
                mine,
            )
        )
    return verdicts


def _stray(t, events):
    _aid, address, kind, (gtid, _epoch), code, line = events[0]
    at = f" 0x{int(address[0]):x}" if address else ""
    msg = (
        f"Out of bounds: {who(t, gtid)} {VERB[kind]} address{at} at line {line}{source_line(code, line)}, "
        f"which lies in none of the kernel's arrays: a pointer computed wrongly (or an index far past "
        f"an end, or negative, which in CUDA C is out of bounds too). On a GPU this crashes or corrupts memory."
        + more(len(events), "access to no array", "accesses to no array")
    )
    return Verdict(
        "out_of_bounds",
        msg,
        None,
        None,
        t.block_of(gtid),
        t.thread_of(gtid),
        line,
        len(events),
        details={"events": events},
    )


def _negative(t):
    """One verdict per array: a negative index Numba wrapped to the other end of the array."""
    by_array = {}
    for event in getattr(t, "negative_index", ()):
        by_array.setdefault(event.array, []).append(event)
    verdicts = []
    for aid, events in by_array.items():
        info = t.arrays[aid]
        _aid, index, kind, (gtid, _epoch), code, line = events[0]
        wrapped = tuple(int(i) + n if int(i) < 0 else int(i) for i, n in zip(index, info.shape))
        last = "the last element" if sum(int(i) < 0 for i in index) == 1 and -1 in index else info.element(wrapped)
        src = linecache.getline(code.co_filename, line).strip()
        msg = (
            f"Negative index: `{info.element(index)}` in {who(t, gtid)} (line {line}"
            + (f": `{src}`" if src else "")
            + f") wraps to {last} in Numba; in CUDA C it reads before the array, so a negative index is usually "
            f"a boundary bug: "
            f"check the index first, e.g. `if i > 0:` before reading `{info.var}[i - 1]`."
            + more(len(events), f"negative index into {info.var}", f"negative indices into {info.var}")
        )
        verdicts.append(
            Verdict(
                "negative_index",
                msg,
                info.name,
                tuple(index),
                t.block_of(gtid),
                t.thread_of(gtid),
                line,
                len(events),
                details={"events": events, "wrapped": wrapped, "kind": kind},
            )
        )
    return verdicts


def _grid_divergent(t):
    events = getattr(t, "grid_divergent", ())
    if not events:
        return []
    ev = events[0]
    gtid = ev["missing"][0]
    msg = (
        f"Grid barrier not reached: {len(ev['arrived'])} threads waited at `grid.sync()` on line {ev['line']}"
        f"{source_line(ev['code'], ev['line'])}, but {who(t, gtid)} and {len(ev['missing']) - 1} other(s) "
        f"{ev['why']}. Every thread of the grid must reach cuda.cg.this_grid().sync(), or the GPU hangs: "
        f"move the sync out of the `if` (and guard the work instead of returning early)."
    )
    return [
        Verdict(
            "grid_sync_divergent",
            msg,
            None,
            None,
            t.block_of(gtid),
            t.thread_of(gtid),
            ev["line"],
            len(ev["missing"]),
            details={"events": events},
        )
    ]


def _warp_misuse(t):
    events = getattr(t, "warp_misuse", ())
    if not events:
        return []
    ev = events[0]
    if not _is_c(t):
        return [_warp_misuse_python(t, events)]
    missing = f"; lanes {ranges(ev['missing'])} did not take part" if ev.get("missing") else ""
    msg = (
        f"Warp misuse: in block {fmt3(unlinear(ev['block'], t.griddim), t.griddim)}, lane {ev['lane']} of warp "
        f"{ev['warp']} called {ev['what']} at line {ev['line']}{source_line(ev['code'], ev['line'])} with mask "
        f"0x{ev['mask']:08x}, but {ev['why']}{missing}. Every lane named in the mask must make the same call; "
        f"compute the mask with __ballot_sync or __activemask() before the branch, or keep all lanes together."
        + more(len(events), "misused warp call", "misused warp calls")
    )
    tpb = t.threads_per_block
    return [
        Verdict(
            "warp_misuse",
            msg,
            None,
            None,
            t.block_of(ev["block"] * tpb),
            t.thread_of(ev["warp"] * 32 + ev["lane"]),
            ev["line"],
            len(events),
            details={"events": events},
        )
    ]


def _divergent(t):
    if not t.divergent:
        return []
    ev = t.divergent[0]
    block = fmt3(unlinear(ev["block"], t.griddim), t.griddim)

    def threads(ts):
        return f"thread {ranges(ts)}" if len(ts) == 1 else f"threads {ranges(ts)}"

    missing = []
    if ev["finished"]:
        missing.append(f"{threads(ev['finished'])} had already finished")
    for line, ts in ev["elsewhere"].items():
        missing.append(f"{threads(ts)} {'was' if len(ts) == 1 else 'were'} waiting at the syncthreads() on line {line}")
    ids = " (linear ids)" if t.blockdim[1] > 1 or t.blockdim[2] > 1 else ""
    barrier = "__syncthreads()" if _is_c(t) else "cuda.syncthreads()"
    msg = (
        f"Divergent barrier: in block {block}, {'thread' if len(ev['arrived']) == 1 else 'threads'}{ids} "
        f"{ranges(ev['arrived'])} waited at "
        f"{barrier} on line {ev['line']}{source_line(ev['code'], ev['line'])}, but "
        f"{' and '.join(missing)}. Every thread of a block must reach the same "
        f"syncthreads(); on a GPU this can hang or silently skip the barrier. Move the "
        f"syncthreads() out of the `if` (and guard the work instead of returning early)."
        + more(len(t.divergent), "barrier was missed by part of a block", "barriers were missed by part of a block")
    )
    first_thread = ev["arrived"][0]
    tpb = t.threads_per_block
    return [
        Verdict(
            "divergent_barrier",
            msg,
            None,
            None,
            t.block_of(ev["block"] * tpb),
            t.thread_of(first_thread),
            ev["line"],
            len(t.divergent),
            details={"events": t.divergent},
        )
    ]


def _unwritten(t):
    a = t.accesses
    verdicts = []
    for aid in t.outputs:
        info = t.arrays[aid]
        written = np.zeros(info.size, bool)
        parts = [aid] + [i for i, f in enumerate(t.arrays) if f.base == aid]  # a record's fields count
        m = np.isin(a.array, parts) & (a.kind != READ)
        written[a.index[m]] = True
        expected = getattr(t, "output_elements", {}).get(aid)  # an output that is a view of part of the array
        missing = np.flatnonzero(~written) if expected is None else expected[~written[expected]]
        if len(missing) == 0:
            continue
        if len(info.shape) == 1:
            where = f"elements {ranges(missing)} of {info.name} were never written"
        else:
            lo = np.unravel_index(int(missing[0]), info.shape)
            hi = np.unravel_index(int(missing[-1]), info.shape)
            where = (
                f"{len(missing)} of the {info.size} elements of {info.name} (shape "
                f"{tuple(info.shape)}) were never written, from {info.name}[{idx(lo)}] "
                f"to {info.name}[{idx(hi)}]"
            )
        msg = (
            f"Unwritten output: {where}: is your grid large enough? The launch ran "
            f"{t.nthreads} threads ({t.nblocks} block(s) of {t.threads_per_block}); round "
            f"the number of blocks up, e.g. `(n + threads - 1) // threads`, or use a "
            f"grid-stride loop."
        )
        verdicts.append(
            Verdict(
                "unwritten_output",
                msg,
                info.name,
                tuple(int(v) for v in np.unravel_index(int(missing[0]), info.shape)),
                None,
                None,
                None,
                len(missing),
                details={"missing": missing},
            )
        )
    return verdicts


def _warp_misuse_python(t, events):
    """A Numba warp call whose mask names a lane that is not there, or a shuffle from a finished lane."""
    ev = events[0]
    tpb = t.threads_per_block
    gtid = ev["block"] * tpb + ev["warp"] * 32 + ev["lane"]
    msg = (
        f"Warp misuse: {who(t, gtid)} (lane {ev['lane']} of warp {ev['warp']}) called cuda.{ev['what']} at line "
        f"{ev['line']}{source_line(ev['code'], ev['line'])} with mask 0x{ev['mask']:08x}, but {ev['why']}. "
        f"Every lane named in the mask must make the same call: compute the mask with "
        f"cuda.ballot_sync or cuda.activemask() before the branch, or keep all lanes together."
        + more(len(events), "misused warp call", "misused warp calls")
    )
    return Verdict(
        "warp_misuse",
        msg,
        None,
        None,
        t.block_of(gtid),
        t.thread_of(gtid),
        ev["line"],
        len(events),
        details={"events": events},
    )
