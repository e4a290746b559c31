"""Notebook 18 - tensor cores and mixed precision.

Exercise 1 rounds a float32 to bfloat16 by its bits (a plain function, checked on ties, overflow and random
values). Exercise 2 completes a WMMA kernel, C = A B + C with one warp per 16x16 tile (helpers/exercises/
tiles.py): in CPU mode it runs from its PTX on the interpreter (helpers/ptx/mma.py), on a GPU with CuPy;
a column-major B, a leading dimension of 16 and an accumulator that does not start from C each have a
sentence of their own.
"""

from __future__ import annotations

import numpy as np

from helpers.exercises import CallExercise, Floats, FunctionExercise, register
from helpers.exercises.tiles import TileKernelExercise

# ----------------------------------------------------------------------------- 1. float32 -> bfloat16


def _to_bf16(x):
    bits = int(np.float32(x).view(np.uint32))
    bits += 0x7FFF + ((bits >> 16) & 1)  # round to nearest, ties to even: add just under half, plus the lsb
    return float(np.uint32((bits >> 16) << 16).view(np.float32))


def _truncated(x):
    return float(np.uint32(int(np.float32(x).view(np.uint32)) & 0xFFFF0000).view(np.float32))


def _half_up(x):
    bits = int(np.float32(x).view(np.uint32)) + 0x8000
    return float(np.uint32((bits >> 16) << 16).view(np.float32))


to_bf16 = FunctionExercise(
    prompt="Write to_bf16(x): the float32 value x rounded to bfloat16 (8 significant bits: float32's sign and "
    "exponent, the top 7 of its 23 fraction bits), to nearest with ties to even, returned as a Python float. "
    "Work on the bits: np.float32(x).view(np.uint32).",
    reference=_to_bf16,
    inputs={"x": Floats(-1000.0, 1000.0)},
    edge_cases=(
        (1 + 2.0**-8,),  # halfway between 1 and 1 + 2^-7: to even, down
        (1 + 3 * 2.0**-8,),  # halfway again: to even, up
        (-(1 + 2.0**-8),),
        (3.0e38,),  # near the top of the range, where bfloat16's steps are 2^120
        (0.1,),
        (0.0,),
    ),
    trials=300,
    mistakes=(
        (
            _truncated,
            "it truncates (drops the low 16 bits): round to nearest by adding 0x7FFF plus the kept part's lowest "
            "bit before dropping them.",
        ),
        (
            _half_up,
            "ties go up (adding 0x8000): a value exactly halfway must go to the neighbour whose last kept bit is 0, "
            "so add 0x7FFF + ((bits >> 16) & 1).",
        ),
    ),
    hints=(
        "bits = int(np.float32(x).view(np.uint32)); bfloat16 keeps the top 16 of those bits.",
        "Rounding to nearest even: bits + 0x7FFF + ((bits >> 16) & 1), then keep the top 16 bits (>> 16 << 16).",
        "Back to a float: float(np.uint32(kept).view(np.float32)).",
    ),
)

# ----------------------------------------------------------------------------- 2. a WMMA tile kernel

C_PARAMS = "const __half* a, const __half* b, float* c, int M, int N, int K"

# Section 4's kernel, C = A B (the accumulator filled with zeros): exercise 2 starts it from C instead.
WMMA_AB_SRC = r"""#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

// C = A B: A is M x K, B is K x N, C is M x N, all row-major; one warp per 16x16 tile of C
extern "C" __global__ void wmma_ab(const __half* a, const __half* b, float* c, int M, int N, int K) {
    int tile_row = blockIdx.y, tile_col = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);                                    // the accumulator starts at zero
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + tile_row * 16 * K + k, K);      // rows of A are K long
        wmma::load_matrix_sync(fb, b + k * N + tile_col * 16, N);      // rows of B are N long
        wmma::mma_sync(acc, fa, fb, acc);                              // acc = fa fb + acc, in FP32
    }
    wmma::store_matrix_sync(c + tile_row * 16 * N + tile_col * 16, acc, N, wmma::mem_row_major);
}
"""

_WMMA_GEMM_SRC = r"""#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

// C = A B + C: A is M x K, B is K x N, C is M x N, all row-major; one warp per 16x16 tile of C
extern "C" __global__ void wmma_gemm(const __half* a, const __half* b, float* c, int M, int N, int K) {
    int tile_row = blockIdx.y, tile_col = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    float* c_tile = c + tile_row * 16 * N + tile_col * 16;
    wmma::load_matrix_sync(acc, c_tile, N, wmma::mem_row_major);      // the accumulator starts from C
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + tile_row * 16 * K + k, K);      // rows of A are K long
        wmma::load_matrix_sync(fb, b + k * N + tile_col * 16, N);      // rows of B are N long
        wmma::mma_sync(acc, fa, fb, acc);                              // acc = fa fb + acc, in FP32
    }
    wmma::store_matrix_sync(c_tile, acc, N, wmma::mem_row_major);
}
"""


def _inputs(rng, on_gpu):
    """Two launches: several tiles each way, then one tile with K past 32,767 (a short loop counter wraps)."""
    out = []
    for M, N, K in ((128, 96, 256) if on_gpu else (32, 48, 64), (16, 16, 32784)):
        a = rng.integers(-3, 4, (M, K)).astype(np.float16)  # small integers: every sum exact in float32
        b = rng.integers(-3, 4, (K, N)).astype(np.float16)
        c = rng.integers(-50, 51, (M, N)).astype(np.float32)
        out.append({"a": a, "b": b, "c": c, "M": M, "N": N, "K": K})
    return out


def _f64(values):
    return values["a"].astype(np.float64), values["b"].astype(np.float64), values["c"].astype(np.float64)


def _gemm(values):
    a, b, c = _f64(values)
    return (a @ b + c).astype(np.float32)


def _b_tiles_transposed(values):
    """What matrix_b declared col_major reads: each 16x16 tile of B transposed in place."""
    a, b, c = _f64(values)
    K, N = b.shape
    t = b.reshape(K // 16, 16, N // 16, 16).transpose(0, 3, 2, 1).reshape(K, N)
    return (a @ t + c).astype(np.float32)


def _tile_reads(flat, base_rows, base_cols, stride, rows, cols, ld):
    """A matrix read tile by tile with leading dimension ld from flat memory (row-major tiles of 16)."""
    out = np.zeros((rows, cols))
    for r0 in range(0, rows, 16):
        for c0 in range(0, cols, 16):
            i, j = np.mgrid[0:16, 0:16]
            start = r0 * stride + c0 if base_rows else r0 * stride + c0
            idx = start + i * ld + j
            out[r0 : r0 + 16, c0 : c0 + 16] = flat[np.clip(idx, 0, flat.size - 1)]
    return out


def _a_ldm_16(values):
    a, b, c = _f64(values)
    M, K = a.shape
    return (_tile_reads(a.ravel(), True, True, K, M, K, 16) @ b + c).astype(np.float32)


def _b_ldm_16(values):
    a, b, c = _f64(values)
    K, N = b.shape
    return (a @ _tile_reads(b.ravel(), True, True, N, K, N, 16) + c).astype(np.float32)


def _no_c(values):
    a, b, _ = _f64(values)
    return (a @ b).astype(np.float32)


wmma_gemm = TileKernelExercise(
    prompt="Complete wmma_gemm: C = A B + C with half-precision A (M x K) and B (K x N) and float32 C (M x N), all "
    "row-major; block (tile_col, tile_row) is one warp that computes one 16x16 tile of C with nvcuda::wmma "
    "(m16n16k16, FP32 accumulator). The check launches (N/16, M/16) blocks of 32 threads.",
    kernel="wmma_gemm",
    c_params=C_PARAMS,
    reference=_WMMA_GEMM_SRC,
    make_inputs=_inputs,
    oracle=_gemm,
    mistakes=(
        (
            _b_tiles_transposed,
            "each tile of B was read transposed: B is row-major in memory, so declare matrix_b's fragment "
            "wmma::row_major (col_major reads down the columns).",
        ),
        (
            _a_ldm_16,
            "A was read with a leading dimension of 16: ldm is the length of a whole row of the matrix in memory, K "
            "for A, not the tile's 16.",
        ),
        (
            _b_ldm_16,
            "B was read with a leading dimension of 16: ldm is the length of a whole row of the matrix in memory, N "
            "for B (and for C), not the tile's 16.",
        ),
        (
            _no_c,
            "the result is A B without C: the accumulator must start from C (load_matrix_sync(acc, c_tile, N, "
            "wmma::mem_row_major) before the k loop); a fragment not loaded or filled holds whatever its registers "
            "held, and fill_fragment(acc, 0) drops C.",
        ),
    ),
    hints=(
        "load_matrix_sync(fragment, pointer to the tile's first element, ldm): ldm is the row length of the whole "
        "matrix in memory (K for A, N for B and C).",
        "Start the accumulator from C: load_matrix_sync(acc, c_tile, N, wmma::mem_row_major); then for each k step "
        "of 16 load A's and B's tiles and mma_sync(acc, fa, fb, acc).",
        "Store with store_matrix_sync(c_tile, acc, N, wmma::mem_row_major).",
    ),
)

# ----------------------------------------------------------------------------- 3. FP16 inputs, FP32 accumulation


def _dot32(x, y):
    acc = np.float32(0)
    for p in x.astype(np.float32) * y.astype(np.float32):  # a product of two float16s is exact in float32
        acc = np.float32(acc + p)
    return float(acc)


def _dot_cases(rng):
    n = int(rng.integers(200, 400))
    big = (np.full(n, 20.0), np.full(n, 20.0))  # n * 400 > 65504: a float16 sum overflows
    small = np.full(n, 2.0**-6)
    small[0] = 64.0  # 64 first, then products of 2^-12 each: below half a float16 step of 64, each is lost
    tiny = (small, np.where(np.arange(n) == 0, 1.0, 2.0**-6))
    rand = (rng.standard_normal(n), rng.standard_normal(n))
    wide = (np.where(np.arange(n) == 0, 4096.0, 1.0), np.where(np.arange(n) == 0, 4096.0, 1.0))  # 2^24, then 1s
    return [("overflow", big), ("lost bits", tiny), ("random", rand), ("float32", wide)]


def _float32_sums(x, y):
    """What float32 accumulation may give, in either order NumPy or a loop sums: one after another, or pairwise."""
    p = x.astype(np.float32) * y.astype(np.float32)
    return {_dot32(x, y), float(np.sum(p, dtype=np.float32)), float(np.dot(x.astype(np.float32), y.astype(np.float32)))}


def _judge_dot(fn, rng):
    name = getattr(fn, "__name__", "dot_fp32_acc")
    for what, (x, y) in _dot_cases(rng):
        x, y = x.astype(np.float16), y.astype(np.float16)
        with np.errstate(all="ignore"):
            got = fn(x.copy(), y.copy())
        want = _dot32(x, y)
        if not isinstance(got, (float, np.floating)):
            return False, f"{name} returned {type(got).__name__}; return the sum as a Python float (float(acc))."
        got = float(got)
        if what == "float32":  # 2^24 then 1s: a float32 sum keeps some of them, a float64 one all
            if got in _float32_sums(x, y):
                continue
            if got == float(np.sum(x.astype(np.float64) * y.astype(np.float64))):
                return False, (
                    f"{name} returned {got:.0f} for 4096 * 4096 followed by ones: every 1 was kept, so the sum was "
                    "float64; the exercise asks for float32 accumulation (np.float32), as a tensor core does."
                )
        elif np.isclose(got, want, rtol=1e-5, atol=1e-6):
            continue
        if what == "overflow" and np.isinf(got):
            return False, (
                f"{name} returned inf for {len(x)} products of 400: the sum was kept in float16, which overflows "
                "past 65504; convert x and y to float32 before multiplying and summing."
            )
        rounded = float(np.sum((x * y).astype(np.float32), dtype=np.float64))
        if what == "random" and np.isclose(got, rounded, rtol=1e-5, atol=1e-6):
            return False, (
                f"{name} rounded each product to float16 before summing (x * y of two float16 arrays is float16): "
                "convert x and y to float32 first; a product of two float16s is exact in float32."
            )
        return False, f"{name} returned {got:g} for {what} inputs, expected {want:g} (float32 accumulation)."
    return (
        True,
        "float32 accumulation: no overflow at 400 x n, no small product lost, random inputs right, float32's rounding.",
    )


dot_fp32_acc = CallExercise(
    prompt="Write dot_fp32_acc(x, y): the dot product of two float16 NumPy arrays with float32 accumulation (what a "
    "tensor core does with FP16 inputs), returned as a Python float. The check uses inputs where a float16 sum "
    "overflows and where it loses the small terms.",
    reference=_dot32,
    judge=_judge_dot,
    remote_ok=True,  # the judge only calls the function on arrays, which a stand-in for it can do
    hints=(
        "Convert first: x.astype(np.float32) * y.astype(np.float32); a product of two float16s is exact in float32.",
        "Sum those products in float32 (np.sum(..., dtype=np.float32) or a loop) and return float(...).",
    ),
)

EXERCISES = register(__name__, globals())
