"""Streaming kernels with several elements per thread: what brings a copy, a vector add and a
SAXPY to the copy ceiling on a GPU with more bandwidth than one element per thread can use.

Little's law: to keep a memory system busy, the bytes in flight must equal bandwidth x latency.
One float32 per thread leaves 4 bytes in flight per thread; even at full occupancy (2,048 threads
on each of 132 SMs) that is about 1 MiB, less than an H200's ~4.8 TB/s x ~600 ns wants. A thread
that issues K independent loads before it uses any of them has K x 4 bytes in flight. Each
element j of a block's tile sits at ``base + j * blockDim.x``, so every one of the K loads is
still coalesced across the warp.

``make_*(k)`` returns a kernel for a fixed k (a closure constant, so the loops unroll and the
local array lives in registers); ``tile_launch`` gives the launch that covers n elements.
"""

from __future__ import annotations

import math

from numba import cuda, float32, int64, uint32, uint64

THREADS = 256


def tile_launch(n: int, k: int, threads: int = THREADS):
    """Blocks of ``threads`` threads, each block covering ``threads * k`` elements."""
    return (max(math.ceil(n / (threads * k)), 1),), (threads,)


def make_copy(k: int, dtype=float32):
    """The copy with k elements per thread; dtype=uint64 copies a float32 array viewed as 64-bit words:
    twice the bytes per load instruction. Array indexing in numba-cuda 0.30 gives no wider load (a
    128-bit one takes inline PTX through an @intrinsic, as notebook 07's SGEMM section shows)."""

    @cuda.jit
    def copy_k(src, dst):
        base = cuda.blockIdx.x * cuda.blockDim.x * k + cuda.threadIdx.x
        step = cuda.blockDim.x
        v = cuda.local.array(k, dtype)
        for j in range(k):  # every load is issued before the first store waits on one
            i = base + j * step
            if i < dst.size:
                v[j] = src[i]
        for j in range(k):
            i = base + j * step
            if i < dst.size:
                dst[i] = v[j]

    return copy_k


def make_vector_add(k: int):
    @cuda.jit
    def vector_add_k(a, b, out):
        base = cuda.blockIdx.x * cuda.blockDim.x * k + cuda.threadIdx.x
        step = cuda.blockDim.x
        va = cuda.local.array(k, float32)
        vb = cuda.local.array(k, float32)
        for j in range(k):
            i = base + j * step
            if i < out.size:
                va[j] = a[i]
                vb[j] = b[i]
        for j in range(k):
            i = base + j * step
            if i < out.size:
                out[i] = va[j] + vb[j]

    return vector_add_k


def make_saxpy(k: int):
    @cuda.jit
    def saxpy_k(a, x, y, out):
        base = cuda.blockIdx.x * cuda.blockDim.x * k + cuda.threadIdx.x
        step = cuda.blockDim.x
        vx = cuda.local.array(k, float32)
        vy = cuda.local.array(k, float32)
        for j in range(k):
            i = base + j * step
            if i < out.size:
                vx[j] = x[i]
                vy[j] = y[i]
        for j in range(k):
            i = base + j * step
            if i < out.size:
                out[i] = a * vx[j] + vy[j]

    return saxpy_k


@cuda.jit
def copy_grid_stride(src, dst):
    """One element per step, as many steps as the grid needs: a grid sized to the GPU, not to n."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, dst.size, stride):
        dst[i] = src[i]


def make_copy_u64(k: int):
    """The copy through 64-bit words (make_copy's dtype=uint64), for a float32 array viewed as uint64."""
    return make_copy(k, uint64)


def transpose_tiles_launch(rows: int, cols: int, tile: int, per_thread: int):
    """One block of (tile, tile // per_thread) threads per tile x tile tile of the input."""
    return (math.ceil(cols / tile), math.ceil(rows / tile)), (tile, tile // per_thread)


def make_transpose(tile: int, per_thread: int, unsigned: bool = False):
    """The padded-tile transpose (interior tiles skip the bounds checks) with a tile side and a
    number of elements per thread of one's choice: more elements per thread, more loads in
    flight per block before the barrier.

    ``unsigned``: every index is a uint32. Numba wraps a negative signed index around as Python
    does, so each access with a signed index also computes ``i + n`` and selects on ``i < 0``; an
    unsigned index cannot be negative and skips it (the SGEMM ladder's step 4 does the same). For
    the 64 x 64 tile with 8 per thread that is 250 PTX instructions instead of 663."""
    padded = tile + 1
    step = tile // per_thread
    idx = uint32 if unsigned else int64

    @cuda.jit
    def transpose_t(inp, out):
        buf = cuda.shared.array((tile, padded), float32)
        tx, ty = idx(cuda.threadIdx.x), idx(cuda.threadIdx.y)
        bx, by = idx(cuda.blockIdx.x), idx(cuda.blockIdx.y)
        rows, cols = idx(inp.shape[0]), idx(inp.shape[1])
        side = idx(tile)
        interior = (by + idx(1)) * side <= rows and (bx + idx(1)) * side <= cols
        x = bx * side + tx
        for j in range(0, tile, step):
            y = by * side + ty + idx(j)
            if interior or (y < rows and x < cols):
                buf[ty + idx(j), tx] = inp[y, x]
        cuda.syncthreads()
        x = by * side + tx
        for j in range(0, tile, step):
            y = bx * side + ty + idx(j)
            if interior or (y < cols and x < rows):
                out[y, x] = buf[tx, ty + idx(j)]

    return transpose_t


def make_transpose_staged(tile: int, per_thread: int):
    """make_transpose with each thread's loads of an interior tile staged in registers first: all
    of them are issued before the first shared store, so per_thread loads are in flight."""
    padded = tile + 1
    step = tile // per_thread

    @cuda.jit
    def transpose_s(inp, out):
        buf = cuda.shared.array((tile, padded), float32)
        v = cuda.local.array(per_thread, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        bx, by = cuda.blockIdx.x, cuda.blockIdx.y
        rows, cols = inp.shape
        x = bx * tile + tx
        if (by + 1) * tile <= rows and (bx + 1) * tile <= cols:
            for j in range(per_thread):
                v[j] = inp[by * tile + ty + j * step, x]
            for j in range(per_thread):
                buf[ty + j * step, tx] = v[j]
        else:
            for j in range(per_thread):
                y = by * tile + ty + j * step
                if y < rows and x < cols:
                    buf[ty + j * step, tx] = inp[y, x]
        cuda.syncthreads()
        x = by * tile + tx
        for j in range(per_thread):
            y = bx * tile + ty + j * step
            if y < cols and x < rows:
                out[y, x] = buf[tx, ty + j * step]

    return transpose_s
