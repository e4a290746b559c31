"""Wrong answers named by their real mistake: a barrier inside an `if` is a divergent barrier, an in-place
blur is told to write out, a transpose without its barrier gets one between the loops, parameters in the
wrong order are named, a grid-stride loop stepping by blockDim is told gridsize."""

import re
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

from helpers.problems import nb02, nb04, nb05, nb06
from helpers.problems.nb05 import BLOCK, HALO_BLOCK
from helpers.problems.nb06 import BINS, SCAN

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)


@cuda.jit
def hist_zero_barrier_in_if(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
        cuda.syncthreads()  # only the zeroing threads reach it
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def hist_count_barrier_in_if(data, hist):
    local = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(local, data[i], 1)
        cuda.syncthreads()  # threads past the end never reach it
    if t < BINS:
        cuda.atomic.add(hist, t, local[t])


@cuda.jit
def stencil_barrier_in_guard(x, out):
    tile = cuda.shared.array(HALO_BLOCK, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + 1
    n = x.size
    if i < n:
        tile[t] = x[i]
        if cuda.threadIdx.x == 0:
            tile[0] = x[i - 1] if i > 0 else 0.0
        if cuda.threadIdx.x == BLOCK - 1:
            tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
        cuda.syncthreads()  # inside the guard: the block's idle threads skip it
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


@cuda.jit
def scan_barrier_in_if(x, out):
    buf = cuda.shared.array((2, SCAN), numba.int32)
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t] if t < n else 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < SCAN:
        if t >= d:
            buf[1 - src, t] = buf[src, t] + buf[src, t - d]
            cuda.syncthreads()  # in the while, and in the if too
        else:
            buf[1 - src, t] = buf[src, t]
        src = 1 - src
        d *= 2
    if t < n:
        out[t] = buf[src, t]


@cuda.jit
def sum_barrier_in_if(x, total):
    buf = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
            cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])


@pytest.mark.parametrize(
    "ex,kernel",
    [
        (nb06.histogram_shared, hist_zero_barrier_in_if),
        (nb06.histogram_shared, hist_count_barrier_in_if),
        (nb05.stencil, stencil_barrier_in_guard),
        (nb06.scan, scan_barrier_in_if),
        (nb06.sum_atomic, sum_barrier_in_if),
    ],
    ids=["histogram_shared-zeroing", "histogram_shared-counting", "stencil-guard", "scan-loop", "sum_atomic-loop"],
)
def test_a_barrier_inside_an_if_is_a_divergent_barrier(ex, kernel):
    r = _grade(ex, kernel)
    assert r.status == "failed" and "divergent barrier" in r.message, r.message
    assert "out of the `if`" in r.message
    for wrong in ("between the atomics and the read", "uninitialised", "inside the loop", "Race on"):
        assert wrong not in r.message, r.message


@cuda.jit
def blur_in_place(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = np.float32(0.0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[min(max(row + dr, 0), rows - 1), min(max(col + dc, 0), cols - 1)]
        img[row, col] = total / np.float32(9.0)  # neighbours, some in other blocks, still read img
        out[row, col] = img[row, col]


def test_an_in_place_blur_is_told_to_write_out():
    r = _grade(nb04.blur, blur_in_place)
    assert r.status == "failed" and "race" in r.message
    assert "write the results into the output array, not into img" in r.message, r.message
    assert "add a cuda.syncthreads()" not in r.message and "end of the loop body" not in r.message


@cuda.jit
def transpose_without_barrier(inp, out):
    tile = cuda.shared.array((32, 33), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * 32 + tx
    for j in range(0, 32, 8):  # the load loop
        y = cuda.blockIdx.y * 32 + ty + j
        if y < inp.shape[0] and x < inp.shape[1]:
            tile[ty + j, tx] = inp[y, x]
    x = cuda.blockIdx.y * 32 + tx
    for j in range(0, 32, 8):  # the store loop: its barrier belongs before it, not inside either loop
        y = cuda.blockIdx.x * 32 + ty + j
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = tile[tx, ty + j]


def test_a_transpose_without_its_barrier_gets_one_between_the_loops():
    r = _grade(nb05.transpose_padded, transpose_without_barrier)
    assert r.status == "failed" and "race" in r.message
    lines = re.search(r"Put a cuda\.syncthreads\(\) between line (\d+) and line (\d+)", r.message)
    assert lines, r.message
    assert "inside the loop" not in r.message and "end of the loop body" not in r.message
    load, store = int(lines.group(1)), int(lines.group(2))
    first = transpose_without_barrier.py_func.__code__.co_firstlineno
    src = transpose_without_barrier.py_func.__code__.co_filename
    text = Path(src).read_text().splitlines()
    assert "tile[ty + j, tx] = inp[y, x]" in text[load - 1] and "out[y, x] = tile[tx, ty + j]" in text[store - 1]
    assert first < load < store


@cuda.jit
def add_out_first(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def saxpy_alpha_last(x, y, out, alpha):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def test_parameters_in_the_wrong_order_never_say_never_written_or_indexerror():
    for ex, kernel in ((nb02.vector_add, add_out_first), (nb02.saxpy, saxpy_alpha_last)):
        r = _grade(ex, kernel, **ex.reference_options())
        assert r.status == "failed" and "wrong order" in r.message, r.message
        assert "never written" not in r.message and "IndexError" not in r.message, r.message


@cuda.jit
def square_block_stride(x, out):
    for i in range(cuda.grid(1), x.size, cuda.blockDim.x):  # one block's width: blocks overlap
        out[i] = x[i] * x[i]


def test_a_grid_stride_loop_stepping_by_blockdim_is_told_gridsize():
    r = _grade(nb02.square_stride, square_block_stride)
    assert r.status == "failed" and "stride = cuda.gridsize(1)" in r.message, r.message
    assert "cuda.blockDim.x" in r.message and "atomic" not in r.message
