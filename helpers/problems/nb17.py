"""Notebook 17 - warps, divergence and cooperative groups: a warp-wide inclusive scan with
cuda.shfl_up_sync, a per-warp compaction with cuda.ballot_sync, popc and lanemask_lt (ordered by
cuda.syncwarp), and a one-launch normalisation across the whole grid with cuda.cg.this_grid().sync().

The tracer makes the lanes of a warp meet at every warp call, as a GPU does, and names a lane that a
mask names but that never arrives; it runs every block side by side when the kernel syncs the grid,
so a grid.sync() that a thread misses and a read of another block's result before it are verdicts.
"""

import numba
import numpy as np
from numba import cuda

from helpers.exercises import Acc, In, KernelExercise, Out, per_element, register

FULL_MASK = 0xFFFFFFFF  # all 32 lanes
WARP = 32


def _per_warp(x, fn):
    """fn applied to each warp's 32 elements (the last warp may be shorter)."""
    return [fn(x[k : k + WARP]) for k in range(0, x.size, WARP)]


# ----------------------------------------------------------------------------- 1. warp scan


@cuda.jit
def _warp_scan(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i] if i < x.size else numba.int32(0)  # lanes past the end take part in every shuffle, with 0
    delta = 1
    while delta < WARP:
        up = cuda.shfl_up_sync(FULL_MASK, v, delta)  # every lane calls it: the value of lane - delta
        if lane >= delta:  # lanes below delta have no lane - delta: they got their own value back
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v


def _scan_expect(x):
    return np.concatenate(_per_warp(x, np.cumsum)).astype(np.int32)


warp_scan = KernelExercise(
    prompt=(
        "Write out[i] = the inclusive prefix sum of x within i's warp: x[w] + x[w + 1] + ... + x[i], where w is "
        "the first element of the warp (i - cuda.laneid). One thread per element, blocks of 64 or 128 threads; "
        "use cuda.shfl_up_sync with the full mask (five steps: delta = 1, 2, 4, 8, 16) and no shared memory."
    ),
    args=(In("x", "int32", low=-100, high=100), Out("out", "int32")),
    expect=_scan_expect,
    reference=_warp_scan,
    launch=per_element(64, 128, fixed_by="the scan is per warp: any block of whole warps gives the same answer"),
    budgets={
        "shared_reads_per_thread": (
            0,
            "the warp's values travel through registers here: up = cuda.shfl_up_sync(FULL_MASK, v, delta), added "
            "when cuda.laneid >= delta, instead of a scan in shared memory.",
        ),
    },
    mistakes=(
        (
            lambda x: (_scan_expect(x) - x).astype(np.int32),
            "that is the exclusive scan (each element left out of its own sum): write the running sum itself, "
            "v, which includes x[i].",
        ),
    ),
    hints=(
        "v = x[i], or 0 past the end: every lane takes part in each shuffle, since the full mask names all 32.",
        "delta = 1, 2, 4, 8, 16: up = cuda.shfl_up_sync(FULL_MASK, v, delta) is lane (laneid - delta)'s v.",
        "Call the shuffle in every lane, then add only where cuda.laneid >= delta (lower lanes get their own value "
        "back, which must not be added); write out[i] = v if i < x.size.",
    ),
)

# ----------------------------------------------------------------------------- 2. warp compaction


@cuda.jit
def _warp_compact(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)  # bit k: lane k keeps its value
    if i < x.size:
        out[i] = 0  # clear my slot of the warp's segment
    cuda.syncwarp()  # every lane's clear lands before any lane's packed write into the same segment
    if keep:
        rank = cuda.popc(kept & cuda.lanemask_lt())  # kept lanes below me
        out[i - cuda.laneid + rank] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // WARP] = cuda.popc(kept)


def _compact_segment(seg):
    kept = seg[seg > 0]
    return np.concatenate([kept, np.zeros(seg.size - kept.size, seg.dtype)])


def _compact_expect(x):
    out = np.concatenate(_per_warp(x, _compact_segment)).astype(np.int32)
    counts = np.array(_per_warp(x, lambda s: int((s > 0).sum())), dtype=np.int32)
    return out, counts


def _shifted_by_one(x):
    """Ranks counted with the lane itself (lanemask_le): every kept value one slot to the right."""
    out = np.concatenate(_per_warp(x, lambda s: np.concatenate([[0], _compact_segment(s)])[: s.size]))
    return out.astype(np.int32), _compact_expect(x)[1]


def _compact_sizes(rng, threads):
    """The default plan's four kinds of size (blocks of 64, 128, 64, 128), with the largest a multiple of 32 but
    not of 128: its last block has a warp wholly past the end, whose lane 0 has no count to write."""
    return [
        int(rng.integers(1, threads)),
        128 * int(rng.integers(2, 5)),
        64 * int(rng.integers(2, 5)) + 1,
        128 * int(rng.integers(8, 11)) + WARP,
    ]


compact = KernelExercise(
    prompt=(
        "Pack the positive values of each warp to the front of that warp's own 32 elements of out, in order, "
        "with 0 in the rest of them, and write counts[warp] = how many the warp kept (warp = i // 32). One thread "
        "per element, blocks of 64 or 128 threads, no shared memory and no atomics: cuda.ballot_sync says which "
        "lanes keep a value, cuda.popc(ballot & cuda.lanemask_lt()) is a kept lane's slot, and every lane first "
        "writes 0 into its own slot, so the zeros and the packed values must be ordered by cuda.syncwarp()."
    ),
    args=(
        In("x", "int32", low=-5, high=5),
        Out("out", "int32"),
        Out("counts", "int32", shape=lambda n: ((n + WARP - 1) // WARP,)),
    ),
    expect=_compact_expect,
    reference=_warp_compact,
    launch=per_element(64, 128, fixed_by="the compaction is per warp: any block of whole warps gives the same answer"),
    sizes=_compact_sizes,
    budgets={
        "shared_reads_per_thread": (
            0,
            "the warp's votes travel in one 32-bit ballot: kept = cuda.ballot_sync(FULL_MASK, keep), and a kept "
            "lane's slot is cuda.popc(kept & cuda.lanemask_lt()), no shared memory needed.",
        ),
        "atomics_per_thread": (
            0,
            "no atomics are needed: each warp packs into its own 32 elements, at cuda.popc(kept & "
            "cuda.lanemask_lt()), and lane 0 writes the warp's count, cuda.popc(kept).",
        ),
    },
    mistakes=(
        (
            _shifted_by_one,
            "every kept value lands one slot too far right: a lane's slot counts the kept lanes *below* it, "
            "cuda.popc(kept & cuda.lanemask_lt()), not itself too.",
        ),
    ),
    hints=(
        "keep = i < x.size and x[i] > 0; kept = cuda.ballot_sync(FULL_MASK, keep) in every lane, past the end too.",
        "Every lane in range writes out[i] = 0, then cuda.syncwarp(); a lane that keeps its value then writes it "
        "at out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] (its warp's first element + its rank).",
        "Lane 0 writes counts[i // 32] = cuda.popc(kept), if i < x.size (a warp past the end has no count).",
    ),
)

# ----------------------------------------------------------------------------- 3. normalise with a grid sync

NORM_THREADS = 128


@cuda.jit
def _normalize(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
    cuda.cg.this_grid().sync()  # every thread of every block: past the end too, or the grid never meets
    if i < x.size:
        out[i] = x[i] / total[0]


normalize = KernelExercise(
    prompt=(
        f"In one launch, scale x so that it sums to 1: out[i] = x[i] / sum(x). One thread per element, blocks of "
        f"{NORM_THREADS}; every thread adds its x[i] into total[0] (which starts at zero) with an atomic, the whole "
        "grid waits at cuda.cg.this_grid().sync(), then every thread divides by total[0]."
    ),
    args=(In("x", low=0.5, high=1.0), Out("out"), Acc("total", "float32", shape=(1,))),
    expect=lambda x: (
        (x.astype(np.float64) / x.astype(np.float64).sum()).astype(np.float32),
        np.array([x.astype(np.float64).sum()], dtype=np.float32),
    ),
    reference=_normalize,
    launch=per_element(NORM_THREADS, fixed_by="the prompt gives blocks of NORM_THREADS threads"),
    rtol=1e-4,
    atol=1e-6,
    budgets={
        "max_global_reads_per_thread": (
            3,
            "each thread reads its own x[i] (to add it, then to divide it) and total[0] once: let every thread add "
            "its x[i] with cuda.atomic.add(total, 0, x[i]) rather than one thread looping over x.",
        ),
    },
    mistakes=(
        (
            lambda x: (np.ones_like(x), np.array([x.astype(np.float64).sum()], dtype=np.float32)),
            "every element came out 1: each thread divided x[i] by total[0] before the other threads had added "
            "to it; the division must come after cuda.cg.this_grid().sync().",
        ),
    ),
    hints=(
        "if i < x.size: cuda.atomic.add(total, 0, x[i]): threads of every block add to the one total.",
        "g = cuda.cg.this_grid(); g.sync(): no thread of any block goes on until every thread has arrived, so "
        "total[0] is complete after it. cuda.syncthreads() only waits for your own block.",
        "Every thread must reach g.sync(), the ones past the end too: keep it outside the `if i < x.size`, then "
        "if i < x.size: out[i] = x[i] / total[0].",
    ),
)

EXERCISES = register(__name__, globals())
