"""The course's reference kernels, as the benchmark times them.

They are the notebooks' solutions written for speed on a real GPU (float32 throughout, sizes
that need not divide the tiles), and they run unchanged on the CPU tracer, which is how
``tests/bench/test_benchmarks.py`` checks that none of them has a race or an out-of-bounds access.
Launch helpers return the grid and block for a problem size, so the benchmark, the tests and
the notebooks launch them the same way.
"""

from __future__ import annotations

import math

from numba import cuda, float32

# ------------------------------------------------------------------------------ streaming

STREAM_THREADS = 256  # threads per block for the one-element-per-thread kernels


def streaming_launch(n, threads=STREAM_THREADS):
    """One thread per element: enough blocks to cover ``n``."""
    return (math.ceil(n / threads),), (threads,)


@cuda.jit
def copy_kernel(src, dst):
    """The simplest streaming kernel: what a hand-written copy reaches."""
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def saxpy(a, x, y, out):
    # `a` must arrive as np.float32: a Python float is float64 and would make the sum float64.
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


# ------------------------------------------------------------------------------ transpose

TILE = 32  # a tile is TILE x TILE elements
PADDED = TILE + 1  # a shape must be a literal or a global constant, not an expression
ROWS = 8  # threads per block in y: each thread moves TILE // ROWS elements (more work per thread)


def transpose_launch(rows, cols):
    """Blocks of (TILE, ROWS) threads, one block per TILE x TILE tile of the input."""
    return (math.ceil(cols / TILE), math.ceil(rows / TILE)), (TILE, ROWS)


@cuda.jit
def transpose_naive(inp, out):
    # Reads along a row (coalesced); writes down a column (one sector per element).
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    for j in range(0, TILE, ROWS):
        y = cuda.blockIdx.y * TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            out[x, y] = inp[y, x]


@cuda.jit
def transpose_tiled(inp, out):
    # Coalesced both ways through a shared tile; reading a tile column is a 32-way bank conflict.
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    for j in range(0, TILE, ROWS):
        y = cuda.blockIdx.y * TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    for j in range(0, TILE, ROWS):
        y = cuda.blockIdx.x * TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


@cuda.jit
def transpose_padded(inp, out):
    # Same as transpose_tiled; one extra column shifts each row by one bank: no conflicts.
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    for j in range(0, TILE, ROWS):
        y = cuda.blockIdx.y * TILE + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    for j in range(0, TILE, ROWS):
        y = cuda.blockIdx.x * TILE + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


FAST_ROWS = 4  # measured on an H100: 4 rows per thread beat 8 for this variant (79% vs 77% in one run)


def transpose_fast_launch(rows, cols):
    return (math.ceil(cols / TILE), math.ceil(rows / TILE)), (TILE, FAST_ROWS)


@cuda.jit
def transpose_padded_fast(inp, out):
    # The padded transpose, plus: a tile wholly inside the matrix (all but the edge tiles)
    # skips the per-element bounds checks, so the loads and stores issue back to back.
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    rows, cols = inp.shape
    interior = (by + 1) * TILE <= rows and (bx + 1) * TILE <= cols
    x = bx * TILE + tx
    if interior:
        for j in range(0, TILE, FAST_ROWS):
            tile[ty + j, tx] = inp[by * TILE + ty + j, x]
    else:
        for j in range(0, TILE, FAST_ROWS):
            y = by * TILE + ty + j
            if y < rows and x < cols:
                tile[ty + j, tx] = inp[y, x]
    cuda.syncthreads()
    x = by * TILE + tx
    if interior:
        for j in range(0, TILE, FAST_ROWS):
            out[bx * TILE + ty + j, x] = tile[tx, ty + j]
    else:
        for j in range(0, TILE, FAST_ROWS):
            y = bx * TILE + ty + j
            if y < cols and x < rows:
                out[y, x] = tile[tx, ty + j]


# ------------------------------------------------------------------------------ reduction

RED_THREADS = 256  # threads per block of the reduction (a power of two)


def reduction_blocks(n, sm_count=None):
    """Enough blocks to fill the GPU (8 per SM) but never more than the data needs."""
    most = math.ceil(n / (RED_THREADS * 4))
    return max(1, min(most, 8 * sm_count if sm_count else most))


@cuda.jit
def block_sum(x, partial):
    """Pass 1 with many blocks: partial[b] = sum of block b's share; pass 2 with one block.

    Each thread first adds many elements (a grid-stride loop, four loads in flight), then the
    block adds its threads' sums as a tree in shared memory.
    """
    buf = cuda.shared.array(RED_THREADS, float32)
    tid = cuda.threadIdx.x
    n = x.size
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    while i + 3 * stride < n:
        a0 += x[i]
        a1 += x[i + stride]
        a2 += x[i + 2 * stride]
        a3 += x[i + 3 * stride]
        i += 4 * stride
    while i < n:
        a0 += x[i]
        i += stride
    buf[tid] = (a0 + a1) + (a2 + a3)
    cuda.syncthreads()
    s = RED_THREADS // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


def reduce_sum(x, partial, result):
    """Two launches: many blocks write ``partial``, then one block sums ``partial`` into ``result[0]``."""
    block_sum[partial.size, RED_THREADS](x, partial)
    block_sum[1, RED_THREADS](partial, result)


# ------------------------------------------------------------------------------ SGEMM: C = A @ B

MM_TILE = 32  # shared-memory tile of sgemm_tiled (blocks of MM_TILE x MM_TILE threads)


def sgemm_launch(m, n):
    """sgemm_naive and sgemm_tiled: one thread per element of C."""
    return (math.ceil(n / MM_TILE), math.ceil(m / MM_TILE)), (MM_TILE, MM_TILE)


@cuda.jit
def sgemm_naive(A, B, C):
    # Every multiply-add reads two numbers from global memory (caches help a little).
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def sgemm_tiled(A, B, C):
    # Each block stages MM_TILE x MM_TILE tiles of A and B in shared memory: every number read
    # from global memory is used MM_TILE times.
    sA = cuda.shared.array((MM_TILE, MM_TILE), float32)
    sB = cuda.shared.array((MM_TILE, MM_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * MM_TILE + ty
    col = cuda.blockIdx.x * MM_TILE + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t0 in range(0, K, MM_TILE):
        if row < M and t0 + tx < K:
            sA[ty, tx] = A[row, t0 + tx]
        else:
            sA[ty, tx] = float32(0.0)
        if t0 + ty < K and col < N:
            sB[ty, tx] = B[t0 + ty, col]
        else:
            sB[ty, tx] = float32(0.0)
        cuda.syncthreads()
        for k in range(MM_TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < M and col < N:
        C[row, col] = acc


# Register blocking: a block computes a BM x BN tile of C with 16 x 16 threads; each thread
# keeps a TM x TN micro-tile of C in registers, so one number read from shared memory feeds
# TM (or TN) multiply-adds instead of one.
BM = 128
BN = 128
BK = 8
TM = 8
TN = 8
RB_THREADS = (BN // TN, BM // TM)  # (16, 16) = 256 threads
SA_COLS = BM + 4  # sA is stored transposed; 4 extra columns make its stores conflict-free


def sgemm_regblock_launch(m, n):
    return (math.ceil(n / BN), math.ceil(m / BM)), RB_THREADS


@cuda.jit
def sgemm_regblock(A, B, C):
    sA = cuda.shared.array((BK, SA_COLS), float32)  # sA[k, m] = A[m0 + m, k0 + k]
    sB = cuda.shared.array((BK, BN), float32)  # sB[k, n] = B[k0 + k, n0 + n]
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * RB_THREADS[0] + tx  # 0..255, for the cooperative loads
    m0 = cuda.blockIdx.y * BM
    n0 = cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)
    for k0 in range(0, K, BK):
        # A tile (BM x BK): each warp reads 4 rows x 8 consecutive k (whole 32-byte sectors).
        for r in range(BM * BK // 256):
            m = t // BK + r * (256 // BK)
            k = t % BK
            if m0 + m < M and k0 + k < K:
                sA[k, m] = A[m0 + m, k0 + k]
            else:
                sA[k, m] = float32(0.0)
        # B tile (BK x BN): each warp reads 32 consecutive floats of one row.
        for r in range(BK * BN // 256):
            k = t // BN + r * (256 // BN)
            n = t % BN
            if k0 + k < K and n0 + n < N:
                sB[k, n] = B[k0 + k, n0 + n]
            else:
                sB[k, n] = float32(0.0)
        cuda.syncthreads()
        for k in range(BK):
            # Thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j: neighbouring threads
            # read neighbouring words of shared memory (no bank conflicts) and write
            # neighbouring words of C (coalesced).
            for i in range(TM):
                a[i] = sA[k, ty + i * RB_THREADS[1]]
            for j in range(TN):
                b[j] = sB[k, tx + j * RB_THREADS[0]]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        row = m0 + ty + i * RB_THREADS[1]
        for j in range(TN):
            col = n0 + tx + j * RB_THREADS[0]
            if row < M and col < N:
                C[row, col] = acc[i, j]
