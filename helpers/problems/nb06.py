"""Notebook 06 - reductions, atomics and scans: a privatised histogram, a block sum finished with
one atomic per block, a Hillis-Steele inclusive scan with double buffering, a warp-shuffle sum, and an
atomic multiply built from a compare-and-swap loop.
"""

import numba
import numpy as np
from numba import cuda

from helpers.exercises import Acc, In, KernelExercise, Out, fixed, per_element, register

# ----------------------------------------------------------------------------- 1. privatised histogram

BINS = 16
HIST_THREADS = 64  # more threads than bins: threads 0..BINS-1 also zero and flush the block's copy


@cuda.jit
def _histogram_shared(data, hist):
    local = cuda.shared.array(BINS, numba.int32)  # this block's private histogram
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)  # fast: shared-memory atomics, contention within the block only
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])  # one global atomic per bin per block


histogram_shared = KernelExercise(
    prompt=(
        f"Count the values 0..{BINS - 1} of data into hist (which starts at zero), blocks of {HIST_THREADS} threads. "
        "Each block first counts into its own shared-memory histogram, then adds it to hist with one atomic per bin: "
        f"at most {BINS} global atomics per block (the check counts them)."
    ),
    args=(In("data", "int32", low=0, high=BINS), Acc("hist", "int32", shape=(BINS,))),
    expect=lambda data: np.bincount(data, minlength=BINS).astype(np.int32),
    reference=_histogram_shared,
    launch=per_element(HIST_THREADS, fixed_by="the prompt gives blocks of HIST_THREADS threads, more than BINS"),
    budgets={
        "global_atomics_per_block": (
            BINS,
            "count into the block's shared-memory histogram first, cuda.atomic.add(local, data[i], 1); only "
            f"threads t < {BINS} then add one bin each to hist.",
        )
    },
    mistakes=(
        (
            lambda data: np.bincount(data, minlength=BINS).astype(np.int32) * (HIST_THREADS // BINS),
            "every bin is too large by the same factor: only threads 0..BINS-1 should add the block's counts "
            "to hist (one thread per bin).",
        ),
    ),
    hints=(
        "local = cuda.shared.array(BINS, numba.int32); threads t < BINS set local[t] = 0, then cuda.syncthreads().",
        "Count with cuda.atomic.add(local, data[i], 1): many threads of the block hit the same bin.",
        "cuda.syncthreads() again, then threads t < BINS do cuda.atomic.add(hist, t, local[t]): other blocks "
        "add to hist too.",
    ),
)

# ----------------------------------------------------------------------------- 2. block sum + atomic

SUM_THREADS = 64


@cuda.jit
def _sum_atomic(x, total):
    buf = cuda.shared.array(SUM_THREADS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = SUM_THREADS // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()  # outside the if: every thread of the block must reach it
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])  # blocks finish in any order: one atomic per block


sum_atomic = KernelExercise(
    prompt=(
        f"Add up all of x into total[0] (which starts at zero) in ONE launch, blocks of {SUM_THREADS} threads: "
        "a tree reduction in shared memory per block, then thread 0 adds the block's sum with one atomic."
    ),
    args=(In("x", low=0.0, high=1.0), Acc("total", "float32", shape=(1,))),
    expect=lambda x: np.array([x.astype(np.float64).sum()], dtype=np.float32),
    reference=_sum_atomic,
    launch=per_element(SUM_THREADS, fixed_by="the shared buffer holds SUM_THREADS partial sums, a constant"),
    rtol=1e-4,
    atol=1e-4,
    budgets={
        "atomics_per_thread": (
            0.25,
            "let the block add its values in shared memory first; only thread 0 should do an atomic.",
        )
    },
    hints=(
        "Each thread loads one element (0.0 past the end) into buf[t]; cuda.syncthreads().",
        "Halve s from SUM_THREADS // 2 down to 1: threads t < s do buf[t] += buf[t + s]; the barrier goes "
        "after the if, inside the loop.",
        "Blocks run in any order and at the same time: total[0] += ... loses updates, cuda.atomic.add(total, "
        "0, buf[0]) does not.",
    ),
)

# ----------------------------------------------------------------------------- 3. inclusive scan

SCAN = 64  # one block of SCAN threads scans up to SCAN elements
# memory accesses of the busiest thread: Hillis-Steele needs about 22 and a work-efficient (Blelloch) scan 53;
# at n = SCAN one serial thread makes 2 * SCAN = 128, and a thread summing its own prefix SCAN + 1 = 65
SCAN_SPAN = 56


@cuda.jit
def _scan(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)  # two buffers: read one, write the other
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t] if t < n else 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
        else:
            buf[1 - src, t] = buf[src, t]
        cuda.syncthreads()
        src = 1 - src
        d *= 2
    if t < n:
        out[t] = buf[src, t]


def _scan_sizes(rng, threads):
    # A full block first: the span budget needs it traced, and on a GPU only the first two sizes are.
    # Then one element (one past zero blocks), a part of the block, and more than half of it.
    return [SCAN, 1, int(rng.integers(3, 32)), int(rng.integers(33, SCAN))]


scan = KernelExercise(
    prompt=(
        f"Inclusive scan: out[i] = x[0] + x[1] + ... + x[i] for up to {SCAN} int32 elements, ONE block of "
        f"{SCAN} threads "
        "(Hillis-Steele: log2(SCAN) steps; in the step with distance d, element t adds element t - d), with "
        "two shared buffers. Every thread works in every step: the check counts the memory accesses of the busiest "
        f"thread (at most {SCAN_SPAN}), so one thread adding everything up in a loop does not pass."
    ),
    args=(In("x", "int32", low=-9, high=10), Out("out", "int32")),
    expect=lambda x: np.cumsum(x).astype(np.int32),
    reference=_scan,
    launch=fixed(1, SCAN, fixed_by="one block of SCAN threads scans up to SCAN elements, as the prompt says"),
    sizes=_scan_sizes,
    spread_advice="in Hillis-Steele thread t owns element t and does one add per step, log2(SCAN) = 6 steps",
    budgets={
        "max_accesses_per_thread": (
            SCAN_SPAN,
            "a thread loops over the elements itself (one thread doing it all, or every thread summing its own "
            "prefix); in Hillis-Steele every thread does one add per step, log2(SCAN) = 6 steps, a few dozen "
            "accesses in all.",
        )
    },
    mistakes=(
        (
            lambda x: (np.cumsum(x) - x).astype(np.int32),
            "that is the exclusive scan (each element left out of its own sum): add x[t] itself too.",
        ),
    ),
    hints=(
        "Load x into buffer 0 (0 past the end), then loop d = 1, 2, 4, ... while d < SCAN.",
        "Each step reads buffer src and writes buffer 1 - src: threads t >= d write buf[src, t] + buf[src, t - "
        "d], the others copy buf[src, t].",
        "One cuda.syncthreads() per step, reached by every thread (outside any if); then src = 1 - src. "
        "Without the second buffer, thread t could read element t - d after its owner already overwrote it.",
    ),
)

# ----------------------------------------------------------------------------- 4. warp-shuffle sum

WARP_THREADS = 64  # two warps per block
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def _warp_sum(x, total):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.float32(0.0)  # every lane takes part in the shuffles, past the end too
    delta = 16
    while delta > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, delta)  # lane k adds lane k + delta's value
        delta //= 2
    if cuda.laneid == 0:  # lane 0 now holds its warp's sum
        cuda.atomic.add(total, 0, v)


warp_sum = KernelExercise(
    prompt=(
        f"Add up all of x into total[0] (which starts at zero), blocks of {WARP_THREADS} threads, with warp "
        "shuffles and no shared memory: each warp sums its 32 values with cuda.shfl_down_sync, then lane 0 adds "
        "the warp's sum with one atomic. The check counts shared-memory reads (none allowed) and atomics "
        "(one per warp)."
    ),
    args=(In("x", low=0.0, high=1.0), Acc("total", "float32", shape=(1,))),
    expect=lambda x: np.array([x.astype(np.float64).sum()], dtype=np.float32),
    reference=_warp_sum,
    launch=per_element(WARP_THREADS, fixed_by="the prompt gives blocks of WARP_THREADS threads (two warps)"),
    rtol=1e-4,
    atol=1e-4,
    budgets={
        "shared_reads_per_thread": (
            0,
            "the warp's values travel through registers here: v += cuda.shfl_down_sync(FULL_MASK, v, delta) "
            "with delta = 16, 8, 4, 2, 1 instead of a shared-memory tree.",
        ),
        "atomics_per_thread": (
            0.1,
            "only lane 0 of each warp should add to total (if cuda.laneid == 0), once the shuffles have "
            "gathered the warp's sum there.",
        ),
    },
    hints=(
        "Every thread loads x[i], or 0.0 past the end: all 32 lanes must reach each shuffle, since the full mask "
        "names them all.",
        "delta = 16, then halve it: v += cuda.shfl_down_sync(FULL_MASK, v, delta). After five steps lane 0 holds "
        "the warp's sum.",
        "if cuda.laneid == 0: cuda.atomic.add(total, 0, v): warps of every block finish in any order.",
    ),
)

# ----------------------------------------------------------------------------- 5. atomic multiply (CAS loop)

P = 1_000_003  # a prime; a product of two numbers below it fits in int64 ((P - 1) ** 2 < 2 ** 63)
MUL_THREADS = 64


@cuda.jit
def _atomic_mul(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]  # a first guess: the CAS below checks it
        while True:
            assumed = old
            old = cuda.atomic.cas(prod, 0, assumed, assumed * x[i] % P)  # swaps only if prod[0] is still assumed
            if old == assumed:  # it was: our factor is in
                break  # otherwise another thread got there first: retry from the value it left


def _product(x):
    total = 1
    for v in x.tolist():  # Python ints: no overflow on the way
        total = total * v % P
    return np.array([total], dtype=np.int64)


atomic_mul = KernelExercise(
    prompt=(
        f"Multiply every element of x into prod[0] (which starts at 1), modulo the prime P = {P}, blocks of "
        f"{MUL_THREADS} threads, one element per thread. There is no atomic multiply: build one from "
        "cuda.atomic.cas(prod, 0, assumed, assumed * x[i] % P) in a loop that retries with the value the CAS "
        "returns until the swap succeeds."
    ),
    args=(In("x", "int64", low=1, high=P), Acc("prod", "int64", shape=(1,), init=1)),
    expect=_product,
    reference=_atomic_mul,
    launch=per_element(MUL_THREADS, fixed_by="the prompt gives blocks of MUL_THREADS threads"),
    mistakes=(
        (  # the CPU tracer runs a block's lanes in step at the CAS: thread 0 wins (a GPU loses others' factors)
            lambda x: _product(x[::MUL_THREADS]),
            "factors were lost: a CAS fails when another thread changed prod[0] after your guess, so loop until "
            "it succeeds, retrying with the value it returned.",
        ),
    ),
    hints=(
        "prod[0] = prod[0] * x[i] % P is a read, a multiply and a write: another thread can write in between, and "
        "one of the two factors is lost.",
        "old = prod[0] as a first guess; then loop: assumed = old; old = cuda.atomic.cas(prod, 0, assumed, "
        "assumed * x[i] % P). The CAS writes only if prod[0] still holds assumed, and returns what it found.",
        "if old == assumed: break. Otherwise another thread changed prod[0] since your guess: go round again "
        "with old, the value the CAS returned (a loop that keeps the stale guess never succeeds).",
    ),
)

EXERCISES = register(__name__, globals())
