"""Buggy kernels, several per verdict class, each with exactly the verdict kinds it deserves."""

import numpy as np
from numba import cuda, float32, int32

from helpers.errors import UnsupportedByTracer

from .case import Case

RNG = np.random.default_rng(99)


def f32(*shape):
    return RNG.random(shape).astype(np.float32)


# -- out of bounds ------------------------------------------------------------------------------


@cuda.jit
def add_no_guard(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] + y[i]


@cuda.jit
def difference(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] - x[i - 1]  # i = 0 reads x[-1]: Numba wraps it to x[63]; CUDA C would read before x


@cuda.jit
def scale_2d_wrong_guard(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[0]:  # should be a.shape[1]
        out[row, col] = 2 * a[row, col]


@cuda.jit
def histogram_bad_bin(values, hist):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(hist, values[i] // 2 + 1, 1)  # the top value lands one past the end


# -- races --------------------------------------------------------------------------------------

TILE = 4


@cuda.jit
def matmul_missing_sync(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0)
    for k in range(A.shape[1] // TILE):
        sA[ty, tx] = A[row, k * TILE + tx]
        sB[ty, tx] = B[k * TILE + ty, col]
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        # missing: cuda.syncthreads() before the next tiles overwrite these
    C[row, col] = acc


@cuda.jit
def histogram_nonatomic(values, hist):
    i = cuda.grid(1)
    if i < values.size:
        hist[values[i]] += 1


@cuda.jit
def scan_in_place(x, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    offset = 1
    while offset < 32:
        if t >= offset:
            s[t] += s[t - offset]
        cuda.syncthreads()
        offset *= 2
    out[t] = s[t]


@cuda.jit
def first_element_per_block(x, out):
    if cuda.threadIdx.x == 0:
        out[0] = x[cuda.blockIdx.x * cuda.blockDim.x]


@cuda.jit
def reduction_missing_sync(x, partial):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    stride = 16
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2  # missing syncthreads inside the loop
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def normalize_racy(x, total, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
        out[i] = x[i] / total[0]  # reads the total while other threads still add to it


# -- uninitialised shared memory ----------------------------------------------------------------

BLOCK = 32
HALO_TILE = BLOCK + 2  # Numba's real compiler refuses an expression as a shared-array shape


@cuda.jit
def stencil_no_halo(x, out):
    tile = cuda.shared.array(HALO_TILE, float32)  # a shape must be one constant: BLOCK + 2 does not compile
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    tile[t] = x[i]  # the two halo cells tile[0] and tile[BLOCK + 1] are never loaded
    cuda.syncthreads()
    out[i] = tile[t - 1] + tile[t] + tile[t + 1]


NBINS = 8


@cuda.jit
def histogram_private_not_zeroed(values, hist):
    local_hist = cuda.shared.array(NBINS, int32)
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(local_hist, values[i], 1)
    cuda.syncthreads()
    t = cuda.threadIdx.x
    if t < NBINS:
        cuda.atomic.add(hist, t, local_hist[t])


# -- divergent barriers -------------------------------------------------------------------------


@cuda.jit
def barrier_in_if(x, out):
    i = cuda.grid(1)
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
    out[i] = 2 * x[i]


@cuda.jit
def early_return_then_barrier(x, out):
    s = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    if i >= x.size:
        return
    s[cuda.threadIdx.x] = x[i]
    cuda.syncthreads()
    out[i] = s[cuda.threadIdx.x] * 2


@cuda.jit
def barriers_in_both_branches(x, out):
    i = cuda.grid(1)
    if i % 2 == 0:
        out[i] = x[i]
        cuda.syncthreads()
    else:
        cuda.syncthreads()
        out[i] = -x[i]


# -- unwritten output ---------------------------------------------------------------------------


@cuda.jit
def double(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


@cuda.jit
def double_2d(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[row, col] = 2 * a[row, col]


# -- unsupported --------------------------------------------------------------------------------


@cuda.jit
def half_add(x, out):
    i = cuda.grid(1)
    out[i] = cuda.fp16.hadd(x[i], x[i])


# -- the cases ----------------------------------------------------------------------------------


def _vals(n, hi):
    return RNG.integers(0, hi, n).astype(np.int32)


CASES = [
    Case(
        "oob_missing_guard",
        add_no_guard,
        4,
        32,
        lambda: (f32(100), f32(100), np.zeros(100, np.float32)),
        expect=frozenset({"out_of_bounds"}),
        outputs=("out",),
    ),
    Case(
        "oob_negative_index",
        difference,
        2,
        32,
        lambda: (f32(64), np.zeros(64, np.float32)),
        expect=frozenset({"negative_index"}),
        outputs=("out",),
    ),
    Case(
        "oob_second_dimension",
        scale_2d_wrong_guard,
        (2, 2),
        (8, 8),
        lambda: (f32(12, 7), np.zeros((12, 7), np.float32)),
        expect=frozenset({"out_of_bounds"}),
        outputs=("out",),
    ),
    Case(
        "oob_atomic_bin",
        histogram_bad_bin,
        1,
        64,
        lambda: (np.arange(16, dtype=np.int32), np.zeros(8, np.int32)),
        expect=frozenset({"out_of_bounds"}),
    ),
    Case(
        "race_matmul_missing_sync",
        matmul_missing_sync,
        (2, 2),
        (TILE, TILE),
        lambda: (f32(8, 8), f32(8, 8), np.zeros((8, 8), np.float32)),
        expect=frozenset({"race"}),
        outputs=("C",),
    ),
    Case(
        "race_histogram_nonatomic",
        histogram_nonatomic,
        2,
        32,
        lambda: (_vals(64, 4), np.zeros(4, np.int32)),
        expect=frozenset({"race"}),
        reference=lambda a: np.bincount(a[0], minlength=4),
        out=1,
        note="the numbers come out right on the CPU: the race only shows on a GPU",
    ),
    Case(
        "race_scan_in_place",
        scan_in_place,
        1,
        32,
        lambda: (f32(32), np.zeros(32, np.float32)),
        expect=frozenset({"race"}),
        outputs=("out",),
    ),
    Case(
        "race_cross_block_out0",
        first_element_per_block,
        3,
        32,
        lambda: (f32(96), np.zeros(1, np.float32)),
        expect=frozenset({"race"}),
        outputs=("out",),
    ),
    Case(
        "race_reduction_missing_sync",
        reduction_missing_sync,
        2,
        32,
        lambda: (f32(64), np.zeros(2, np.float32)),
        expect=frozenset({"race"}),
        outputs=("partial",),
    ),
    Case(
        "race_read_during_atomics",
        normalize_racy,
        2,
        32,
        lambda: (f32(64), np.zeros(1, np.float32), np.zeros(64, np.float32)),
        expect=frozenset({"race"}),
        outputs=("out",),
    ),
    Case(
        "uninit_stencil_halo",
        stencil_no_halo,
        2,
        BLOCK,
        lambda: (f32(64), np.zeros(64, np.float32)),
        expect=frozenset({"uninitialized_shared"}),
        outputs=("out",),
    ),
    Case(
        "uninit_private_histogram",
        histogram_private_not_zeroed,
        2,
        32,
        lambda: (_vals(64, NBINS), np.zeros(NBINS, np.int32)),
        expect=frozenset({"uninitialized_shared"}),
        outputs=("hist",),
    ),
    Case(
        "divergent_barrier_in_if",
        barrier_in_if,
        2,
        32,
        lambda: (f32(64), np.zeros(64, np.float32)),
        expect=frozenset({"divergent_barrier"}),
        outputs=("out",),
        reference=lambda a: 2 * a[0],
        out=1,
    ),
    Case(
        "divergent_early_return",
        early_return_then_barrier,
        2,
        32,
        lambda: (f32(50), np.zeros(50, np.float32)),
        expect=frozenset({"divergent_barrier"}),
        outputs=("out",),
    ),
    Case(
        "divergent_two_branches",
        barriers_in_both_branches,
        1,
        32,
        lambda: (f32(32), np.zeros(32, np.float32)),
        expect=frozenset({"divergent_barrier"}),
        outputs=("out",),
    ),
    Case(
        "unwritten_floor_grid",
        double,
        1000 // 128,
        128,
        lambda: (f32(1000), np.zeros(1000, np.float32)),
        expect=frozenset({"unwritten_output"}),
        outputs=("out",),
    ),
    Case(
        "unwritten_2d_floor_grid",
        double_2d,
        (20 // 8, 12 // 8),
        (8, 8),
        lambda: (f32(12, 20), np.zeros((12, 20), np.float32)),
        expect=frozenset({"unwritten_output"}),
        outputs=(1,),
    ),
    Case("unsupported_fp16", half_add, 1, 32, lambda: (f32(32), np.zeros(32, np.float32)), raises=UnsupportedByTracer),
]
