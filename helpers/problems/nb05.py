"""Notebook 05 - shared memory: a stencil with a halo, a tiled matrix multiply, a padded transpose.

Budgets make the point of each exercise: the right numbers without shared memory (three
global reads per output, or a whole row and column per output) fail with the budget named.
"""

import numba
import numpy as np
from numba import cuda

from helpers.exercises import In, KernelExercise, Out, grid2d, per_element, register

# ----------------------------------------------------------------------------- 1. stencil

BLOCK = 32  # threads per block of the stencil; the notebook launches the same
HALO_BLOCK = BLOCK + 2  # a shared shape must be a constant: one neighbour on each side


def _stencil_expect(x):
    p = np.concatenate(([0], x.astype(np.float64), [0]))
    return (p[:-2] + p[1:-1] + p[2:]).astype(np.float32)


@cuda.jit
def _stencil(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1  # this thread's slot; slots 0 and BLOCK + 1 are the halo
    n = x.size
    tile[t] = x[i] if i < n else 0.0
    if cuda.threadIdx.x == 0:  # the first thread also loads the left neighbour of the block
        tile[0] = x[i - 1] if 0 < i <= n else 0.0
    if cuda.threadIdx.x == BLOCK - 1:  # the last thread loads the right neighbour
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
    cuda.syncthreads()
    if i < n:
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


stencil = KernelExercise(
    prompt=(
        f"out[i] = x[i-1] + x[i] + x[i+1] (a missing neighbour counts as 0), blocks of {BLOCK} threads. "
        "Each thread loads ONE element into a shared tile with a one-element halo on each side, then "
        "reads its three neighbours from the tile."
    ),
    args=(In("x"), Out("out")),
    expect=_stencil_expect,
    reference=_stencil,
    launch=per_element(BLOCK, fixed_by="the shared tile holds BLOCK + 2 elements, a constant of the exercise"),
    rtol=1e-5,
    atol=1e-5,
    budgets={
        "global_reads_per_thread": (
            1.5,
            "load each element into shared memory once and read the neighbours from the tile, not from x.",
        )
    },
    hints=(
        f"tile = cuda.shared.array(HALO_BLOCK, numba.float32) has room for the block's {BLOCK} elements plus "
        "one neighbour on each side; thread t stores x[i] in tile[t + 1].",
        "Thread 0 also loads x[i - 1] into tile[0] and the last thread x[i + 1] into tile[BLOCK + 1] (0.0 past "
        "either end of x).",
        "cuda.syncthreads() after the loads, before anyone reads the tile; the final write needs `if i < n`.",
    ),
)

# ----------------------------------------------------------------------------- 2. tiled matmul

TILE = 8  # small so that the CPU check stays fast; 16 or 32 on a real GPU


@cuda.jit
def _matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    acc = numba.float32(0.0)
    for t0 in range(0, K, TILE):
        sA[ty, tx] = A[row, t0 + tx] if row < M and t0 + tx < K else 0.0
        sB[ty, tx] = B[t0 + ty, col] if t0 + ty < K and col < N else 0.0
        cuda.syncthreads()  # the tiles are complete
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # everyone is done with them before the next loads overwrite them
    if row < M and col < N:
        C[row, col] = acc


def _matmul_sizes(rng, threads):
    # Rows with partial tiles, an exact multiple of TILE, and one past a multiple; the columns
    # (_n) exceed the rows by more than a tile, so swapped x and y always show.
    return [int(rng.integers(9, 16)), TILE * int(rng.integers(2, 4)), TILE * int(rng.integers(2, 4)) + 1]


def _k(n):
    return n + 5  # inner dimension


def _n(n):
    return n + TILE + 3  # columns of B and C: more than a tile wider than C is tall


matmul_tiled = KernelExercise(
    prompt=(
        f"C = A @ B with A of shape (M, K) and B of shape (K, N), float32, none of them multiples of TILE = {TILE}, "
        f"through {TILE} x {TILE} tiles in shared memory; blocks of {TILE} x {TILE} threads, one thread per "
        "element of C "
        "(x = column, y = row)."
    ),
    args=(
        In("A", shape=lambda n: (n, _k(n))),
        In("B", shape=lambda n: (_k(n), _n(n))),
        Out("C", shape=lambda n: (n, _n(n))),
    ),
    expect=lambda A, B: (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32),
    reference=_matmul_tiled,
    launch=grid2d(
        (TILE, TILE),
        shape=lambda n: (n, _n(n)),
        fixed_by="the shared tiles are TILE x TILE, a constant of the exercise",
    ),
    sizes=_matmul_sizes,
    rtol=1e-4,
    atol=1e-4,
    budgets={
        "global_reads_per_thread": (
            10,
            "stage TILE x TILE tiles of A and B in shared memory: each thread should read "
            "one element of A and one of B per tile, not a whole row and column.",
        )
    },
    hints=(
        "Start from the square version in section 3: M, K = A.shape and N = B.shape[1] replace n.",
        "Loop t0 over range(0, K, TILE); guard A's load with row < M and t0 + tx < K, B's with t0 + ty < K and "
        "col < N (store 0.0 otherwise).",
        "Two barriers per tile, as before; the final write needs row < M and col < N.",
    ),
)

# ----------------------------------------------------------------------------- 3. padded transpose

T_TILE = 32
T_ROWS = 8  # blocks of 32 x 8 threads: each thread moves T_TILE // T_ROWS = 4 elements
T_PADDED = T_TILE + 1


@cuda.jit
def _transpose_padded(inp, out):
    tile = cuda.shared.array((T_TILE, T_PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * T_TILE + tx  # the block's tile lands at the mirrored position
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.x * T_TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


def _transpose_sizes(rng, threads):
    # Rows below one tile; then a side that is an exact multiple of T_TILE (rows 32, or columns
    # 27 + 37 = 64), and a side one past a multiple (rows 33, or columns 28 + 37 = 65).
    return [int(rng.integers(20, 32)), int(rng.choice([T_TILE, 2 * T_TILE - 37])), int(rng.choice([33, 28]))]


def _cols(n):
    return n + 37  # more than a tile wider than tall: swapped indices always show


transpose_padded = KernelExercise(
    prompt=(
        f"out = inp.T for an (n, n + 37) float32 matrix, through a shared {T_TILE} x {T_TILE} tile: blocks of "
        f"{T_TILE} x {T_ROWS} threads, each thread moves {T_TILE // T_ROWS} elements. Reads AND writes of "
        "global memory "
        "must be coalesced and the tile free of bank conflicts."
    ),
    args=(In("inp", shape=lambda n: (n, _cols(n))), Out("out", shape=lambda n: (_cols(n), n))),
    expect=lambda inp: np.ascontiguousarray(inp.T),
    reference=_transpose_padded,
    launch=grid2d(
        (T_TILE, T_ROWS),
        tile=(T_TILE, T_TILE),
        shape=lambda n: (n, _cols(n)),
        fixed_by="the tile is T_TILE x T_PADDED; each thread moves T_TILE // T_ROWS elements: constants",
    ),
    sizes=_transpose_sizes,
    budgets={
        "coalescing": (
            0.8,
            "write `out` along rows too: read the tile column-wise (tile[tx, ty + j]) and write out[y, x] with "
            "x running along threadIdx.x.",
        ),
        "bank_ways_max": (
            1,
            "a warp reading a tile column hits one bank 32 times: give the tile one extra column, shape "
            "(T_TILE, T_PADDED) with the notebook's T_PADDED = T_TILE + 1 (a shared array's shape must be "
            "constants: Numba refuses T_TILE + 1 written inside the call).",
        ),
    },
    hints=(
        "First loop: tile[ty + j, tx] = inp[y, x] for j = 0, T_ROWS, 2*T_ROWS, ... (guard y and x).",
        "After cuda.syncthreads(), swap the block coordinates: x = blockIdx.y * T_TILE + tx, y = blockIdx.x * "
        "T_TILE + ty + j, and write out[y, x] = tile[tx, ty + j].",
        "Declare the tile with shape (T_TILE, T_PADDED): the extra column moves each row one bank along, so a "
        "column is spread over 32 banks.",
    ),
)

EXERCISES = register(__name__, globals())
