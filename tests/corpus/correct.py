"""Correct kernels: the tracer must find nothing wrong with any of them."""

import numba
import numpy as np
from numba import cuda, float32, int32

from .case import Case

RNG = np.random.default_rng(1234)


def f32(*shape):
    return RNG.random(shape).astype(np.float32)


# -- element-wise -------------------------------------------------------------------------------


@cuda.jit
def vector_add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < len(out):
        out[i] = a * x[i] + y[i]


@cuda.jit
def grid_stride_scale(x, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        out[i] = 2 * x[i]


@cuda.jit
def matrix_add(a, b, c):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = a[row, col] + b[row, col]


@cuda.jit
def add_one_3d(a):
    x, y, z = cuda.grid(3)
    if x < a.shape[2] and y < a.shape[1] and z < a.shape[0]:
        a[z, y, x] += 1


@cuda.jit(device=True)
def clamp01(v):
    return min(max(v, 0.0), 1.0)


@cuda.jit(device=True)
def scaled_clamp(v, s):
    return clamp01(v * s)


@cuda.jit
def clamp_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scaled_clamp(x[i], 3.0)


@cuda.jit
def local_polynomial(x, out):
    i = cuda.grid(1)
    coeffs = cuda.local.array(4, float32)
    for k in range(4):
        coeffs[k] = k + 1
    if i < x.size:
        acc = float32(0)
        for k in range(3, -1, -1):
            acc = acc * x[i] + coeffs[k]
        out[i] = acc


WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)


@cuda.jit
def const_smooth(x, out):
    w = cuda.const.array_like(WEIGHTS)
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        out[i] = w[0] * x[i - 1] + w[1] * x[i] + w[2] * x[i + 1]


@cuda.jit
def mandelbrot(img, max_iter):
    col, row = cuda.grid(2)
    h, w = img.shape
    if row < h and col < w:
        c_re = -2.0 + 3.0 * col / w
        c_im = -1.0 + 2.0 * row / h
        z_re = 0.0
        z_im = 0.0
        n = 0
        while n < max_iter and z_re * z_re + z_im * z_im < 4.0:
            z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2 * z_re * z_im + c_im
            n += 1
        img[row, col] = n


@cuda.jit
def blur_clamp(img, out):
    col, row = cuda.grid(2)
    h, w = img.shape
    if row < h and col < w:
        total = float32(0)
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                r = min(max(row + dy, 0), h - 1)
                c = min(max(col + dx, 0), w - 1)
                total += img[r, c]
        out[row, col] = total / 9


@cuda.jit
def row_sums(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]  # a 1-D view of one row
        s = float32(0)
        for j in range(row.shape[0]):
            s += row[j]
        out[i] = s


# -- shared memory ------------------------------------------------------------------------------

BLOCK = 32
RADIUS = 1
HALO = BLOCK + 2 * RADIUS  # a GPU compiler takes a shared shape that is a constant, not arithmetic on names


@cuda.jit
def stencil_halo(x, out):
    tile = cuda.shared.array(HALO, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + RADIUS
    n = x.size
    tile[t] = x[i] if i < n else 0
    if cuda.threadIdx.x < RADIUS:
        left = i - RADIUS
        right = i + BLOCK
        tile[t - RADIUS] = x[left] if 0 <= left < n else 0
        tile[t + BLOCK] = x[right] if right < n else 0
    cuda.syncthreads()
    if i < n:
        out[i] = tile[t - 1] + tile[t] + tile[t + 1]


TILE = 4


@cuda.jit
def tiled_matmul(A, B, C):
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
        cuda.syncthreads()
    C[row, col] = acc


T = 8
T_PADDED = T + 1


@cuda.jit
def transpose_padded(a, out):
    tile = cuda.shared.array((T, T_PADDED), dtype=np.float32)
    x = cuda.blockIdx.x * T + cuda.threadIdx.x
    y = cuda.blockIdx.y * T + cuda.threadIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * T + cuda.threadIdx.x
    y = cuda.blockIdx.x * T + cuda.threadIdx.y
    if y < out.shape[0] and x < out.shape[1]:
        out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


@cuda.jit
def block_sum(x, partial):
    s = cuda.shared.array(64, "float32")
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def histogram_atomic(values, hist):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(hist, values[i], 1)


NBINS = 16


@cuda.jit
def histogram_private(values, hist):
    local_hist = cuda.shared.array(NBINS, int32)
    t = cuda.threadIdx.x
    if t < NBINS:
        local_hist[t] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local_hist, values[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(hist, t, local_hist[t])


@cuda.jit
def scan_double_buffer(x, out):
    buf = cuda.shared.array((2, 32), float32)
    t = cuda.threadIdx.x
    n = x.size
    buf[0, t] = x[t] if t < n else 0
    cuda.syncthreads()
    src = 0
    offset = 1
    while offset < 32:
        dst = 1 - src
        if t >= offset:
            buf[dst, t] = buf[src, t] + buf[src, t - offset]
        else:
            buf[dst, t] = buf[src, t]
        cuda.syncthreads()
        src = dst
        offset *= 2
    if t < n:
        out[t] = buf[src, t]


@cuda.jit
def scan_two_phase(x, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = x[t] if t < x.size else 0
    cuda.syncthreads()
    offset = 1
    while offset < 32:
        v = s[t - offset] if t >= offset else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        offset *= 2
    if t < x.size:
        out[t] = s[t]


@cuda.jit
def extremes(x, result, flag):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(result, 0, x[i])
        cuda.atomic.min(result, 1, x[i])
        cuda.atomic.cas(flag, 0, 0, 1)
        cuda.atomic.exch(flag, 1, 7)


@cuda.jit
def count_positive(x, counts):
    i = cuda.grid(1)
    v = x[i] if i < x.size else -1.0
    n = cuda.syncthreads_count(v > 0)
    if cuda.threadIdx.x == 0:
        counts[cuda.blockIdx.x] = n


@cuda.jit
def dynamic_shared_reverse(x, out):
    s = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i]
    cuda.syncthreads()
    out[i] = s[cuda.blockDim.x - 1 - t]


# -- the cases ----------------------------------------------------------------------------------


def _hist_values(n, bins):
    return RNG.integers(0, bins, n).astype(np.int32)


def _scan_ref(args):
    return np.cumsum(args[0]).astype(np.float32)


def _transpose_args():
    return f32(10, 12), np.zeros((12, 10), np.float32)


def _block_ref(args):
    x = np.zeros(4 * 64, np.float32)
    x[: args[0].size] = args[0]
    return x.reshape(4, 64).sum(axis=1)


CASES = [
    Case(
        "vector_add",
        vector_add,
        4,
        32,
        lambda: (f32(100), f32(100), np.zeros(100, np.float32)),
        outputs=("out",),
        reference=lambda a: a[0] + a[1],
        out=2,
    ),
    Case(
        "saxpy_guard",
        saxpy,
        4,
        64,
        lambda: (np.float32(2.5), f32(200), f32(200), np.zeros(200, np.float32)),
        outputs=(3,),
        reference=lambda a: a[0] * a[1] + a[2],
        out=3,
    ),
    Case(
        "grid_stride_loop",
        grid_stride_scale,
        2,
        32,
        lambda: (f32(300), np.zeros(300, np.float32)),
        outputs=("out",),
        reference=lambda a: 2 * a[0],
        out=1,
    ),
    Case(
        "matrix_add_2d",
        matrix_add,
        (2, 3),
        (8, 8),
        lambda: (f32(20, 13), f32(20, 13), np.zeros((20, 13), np.float32)),
        outputs=("c",),
        reference=lambda a: a[0] + a[1],
        out=2,
    ),
    Case(
        "launch_3d",
        add_one_3d,
        (2, 2, 2),
        (4, 4, 2),
        lambda: (np.zeros((4, 8, 8), np.int32),),
        outputs=("a",),
        reference=lambda a: np.ones((4, 8, 8), np.int32),
        out=0,
    ),
    Case(
        "device_function",
        clamp_kernel,
        2,
        32,
        lambda: (f32(50), np.zeros(50, np.float32)),
        outputs=("out",),
        reference=lambda a: np.clip(a[0] * 3, 0, 1),
        out=1,
    ),
    Case(
        "local_array",
        local_polynomial,
        2,
        32,
        lambda: (f32(40), np.zeros(40, np.float32)),
        outputs=("out",),
        reference=lambda a: 1 + a[0] * (2 + a[0] * (3 + 4 * a[0])),
        out=1,
    ),
    Case("const_array", const_smooth, 1, 32, lambda: (f32(32), np.zeros(32, np.float32))),
    Case("mandelbrot", mandelbrot, (2, 2), (8, 8), lambda: (np.zeros((12, 16), np.int32), 20), outputs=("img",)),
    Case(
        "blur_clamp",
        blur_clamp,
        (2, 2),
        (8, 8),
        lambda: (f32(12, 10), np.zeros((12, 10), np.float32)),
        outputs=("out",),
    ),
    Case(
        "row_view",
        row_sums,
        1,
        32,
        lambda: (f32(20, 6), np.zeros(20, np.float32)),
        outputs=("out",),
        reference=lambda a: a[0].sum(axis=1),
        out=1,
    ),
    Case(
        "stencil_halo",
        stencil_halo,
        3,
        BLOCK,
        lambda: (f32(90), np.zeros(90, np.float32)),
        outputs=("out",),
        reference=lambda a: np.convolve(a[0], np.ones(3, np.float32), mode="same"),
        out=1,
    ),
    Case(
        "tiled_matmul",
        tiled_matmul,
        (2, 2),
        (TILE, TILE),
        lambda: (f32(8, 8), f32(8, 8), np.zeros((8, 8), np.float32)),
        outputs=("C",),
        reference=lambda a: a[0] @ a[1],
        out=2,
    ),
    Case(
        "transpose_padded",
        transpose_padded,
        (2, 2),
        (T, T),
        _transpose_args,
        outputs=("out",),
        reference=lambda a: a[0].T,
        out=1,
    ),
    Case(
        "block_sum_reduction",
        block_sum,
        4,
        64,
        lambda: (f32(250), np.zeros(4, np.float32)),
        outputs=("partial",),
        reference=_block_ref,
        out=1,
    ),
    Case(
        "histogram_atomic",
        histogram_atomic,
        2,
        64,
        lambda: (_hist_values(120, 8), np.zeros(8, np.int32)),
        reference=lambda a: np.bincount(a[0], minlength=8),
        out=1,
    ),
    Case(
        "histogram_privatized",
        histogram_private,
        2,
        32,
        lambda: (_hist_values(200, NBINS), np.zeros(NBINS, np.int32)),
        outputs=("hist",),
        reference=lambda a: np.bincount(a[0], minlength=NBINS),
        out=1,
    ),
    Case(
        "scan_double_buffer",
        scan_double_buffer,
        1,
        32,
        lambda: (f32(30), np.zeros(30, np.float32)),
        outputs=("out",),
        reference=_scan_ref,
        out=1,
    ),
    Case(
        "scan_two_phase",
        scan_two_phase,
        1,
        32,
        lambda: (f32(32), np.zeros(32, np.float32)),
        outputs=("out",),
        reference=_scan_ref,
        out=1,
    ),
    Case(
        "atomic_max_min_cas",
        extremes,
        2,
        32,
        lambda: (f32(50), np.array([-np.inf, np.inf], np.float32), np.zeros(2, np.int32)),
        reference=lambda a: np.array([a[0].max(), a[0].min()], np.float32),
        out=1,
    ),
    Case(
        "syncthreads_count",
        count_positive,
        2,
        32,
        lambda: (RNG.standard_normal(50).astype(np.float32), np.zeros(2, np.int32)),
        outputs=("counts",),
        reference=lambda a: np.array([(a[0][:32] > 0).sum(), (a[0][32:] > 0).sum()]),
        out=1,
    ),
    Case(
        "dynamic_shared",
        dynamic_shared_reverse,
        2,
        16,
        lambda: (f32(32), np.zeros(32, np.float32)),
        outputs=("out",),
        reference=lambda a: a[0].reshape(2, 16)[:, ::-1].ravel(),
        out=1,
        configured=True,
        sharedmem=16 * 4,
    ),
]
