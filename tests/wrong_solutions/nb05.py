"""Wrong kernels for helpers/problems/nb05.py: the shared-memory mistakes learners really make."""

import numba
from numba import cuda

from helpers.problems.nb05 import BLOCK, HALO_BLOCK, T_PADDED, T_ROWS, T_TILE, TILE

from . import Wrong

# -- stencil


@cuda.jit
def stencil_no_barrier(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = x.size
    tile[t] = x[i] if i < n else 0.0
    if cuda.threadIdx.x == 0:
        tile[0] = x[i - 1] if 0 < i <= n else 0.0
    if cuda.threadIdx.x == BLOCK - 1:
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
    if i < n:  # reads neighbours' slots that may not be written yet
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


@cuda.jit
def stencil_no_halo(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    tile[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    if i < x.size:  # tile[0] and tile[BLOCK + 1] were never loaded
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


@cuda.jit
def stencil_global_only(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        left = x[i - 1] if i > 0 else 0.0
        right = x[i + 1] if i + 1 < n else 0.0
        out[i] = left + x[i] + right


@cuda.jit
def stencil_no_guard(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = x.size
    tile[t] = x[i]
    if cuda.threadIdx.x == 0:
        tile[0] = x[i - 1] if i > 0 else 0.0
    if cuda.threadIdx.x == BLOCK - 1:
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
    cuda.syncthreads()
    if i < n:
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


# -- matmul_tiled


@cuda.jit
def matmul_no_second_barrier(A, B, C):
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
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def matmul_no_first_barrier(A, B, C):
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
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def matmul_no_edge_zeros(A, B, C):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    acc = numba.float32(0.0)
    for t0 in range(0, K, TILE):
        sA[ty, tx] = A[row, t0 + tx]  # past the edge: out of bounds
        sB[ty, tx] = B[t0 + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def matmul_naive(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = numba.float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def matmul_square_only(A, B, C):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    n = A.shape[0]  # assumes square matrices: stops K and N short
    acc = numba.float32(0.0)
    for t0 in range(0, n, TILE):
        sA[ty, tx] = A[row, t0 + tx] if row < n and t0 + tx < n else 0.0
        sB[ty, tx] = B[t0 + ty, col] if t0 + ty < n and col < n else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


@cuda.jit
def matmul_row_from_x(A, B, C):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.x * TILE + ty  # the 1-D formula: the row from blockIdx.x, as the column
    col = cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    acc = numba.float32(0.0)
    for t0 in range(0, K, TILE):
        sA[ty, tx] = A[row, t0 + tx] if row < M and t0 + tx < K else 0.0
        sB[ty, tx] = B[t0 + ty, col] if t0 + ty < K and col < N else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


# -- transpose_padded


@cuda.jit
def transpose_float64_tile(inp, out):
    tile = cuda.shared.array((T_TILE, T_PADDED), numba.float64)  # twice the shared memory of the float32 data
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.x * T_TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


@cuda.jit
def transpose_unpadded(inp, out):
    tile = cuda.shared.array((T_TILE, T_TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.x * T_TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


@cuda.jit
def transpose_naive(inp, out):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            out[x, y] = inp[y, x]


@cuda.jit
def transpose_no_barrier(inp, out):
    tile = cuda.shared.array((T_TILE, T_PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    x = cuda.blockIdx.y * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.x * T_TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


@cuda.jit
def transpose_blocks_not_swapped(inp, out):
    tile = cuda.shared.array((T_TILE, T_PADDED), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * T_TILE + tx
    for j in range(0, T_TILE, T_ROWS):
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    for j in range(0, T_TILE, T_ROWS):  # the tile goes back to the block's own position
        y = cuda.blockIdx.y * T_TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


WRONG = {
    "stencil": [
        Wrong("race", stencil_no_barrier, "the CPU tracer found"),
        Wrong("uninitialised shared", stencil_no_halo, "uninitialised shared memory"),
        Wrong("over budget", stencil_global_only, "budget"),
        Wrong("missing guard", stencil_no_guard, "an out-of-bounds access"),
    ],
    "matmul_tiled": [
        Wrong("race", matmul_no_second_barrier, "race"),
        Wrong("race (first barrier)", matmul_no_first_barrier, "the CPU tracer found"),
        Wrong("missing guard", matmul_no_edge_zeros, "an out-of-bounds access"),
        Wrong("over budget", matmul_naive, "budget"),
        Wrong("hard-coded for square matrices", matmul_square_only, "never written"),
        Wrong("1-D index", matmul_row_from_x, "`row = cuda.blockIdx.x * TILE + ty` is the 1-D index"),
    ],
    "transpose_padded": [
        Wrong("bank conflicts", transpose_unpadded, "shape (T_TILE, T_PADDED)"),
        Wrong("uncoalesced", transpose_naive, "coalescing"),
        Wrong("race", transpose_no_barrier, "Put a cuda.syncthreads() between line"),
        Wrong("wrong index", transpose_blocks_not_swapped, "the CPU tracer found"),
        Wrong("float64 tile", transpose_float64_tile, "shared array tile is float64 while the kernel"),
    ],
}
