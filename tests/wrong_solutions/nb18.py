"""Wrong answers for helpers/problems/nb18.py (tensor cores and mixed precision)."""

import numpy as np

from helpers.problems.nb18 import _WMMA_GEMM_SRC

from . import Wrong

# ----------------------------------------------------------------------------- to_bf16


def truncates(x):
    return float(np.uint32(int(np.float32(x).view(np.uint32)) & 0xFFFF0000).view(np.float32))


def ties_up(x):
    bits = int(np.float32(x).view(np.uint32)) + 0x8000
    return float(np.uint32((bits >> 16) << 16).view(np.float32))


def unrounded(x):
    return float(np.float32(x))


def _edit(old, new):
    src = _WMMA_GEMM_SRC.replace(old, new)
    assert src != _WMMA_GEMM_SRC, old
    return src


B_FRAGMENT = "wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;"
LOAD_C = "wmma::load_matrix_sync(acc, c_tile, N, wmma::mem_row_major);      // the accumulator starts from C"

WRONG = {
    "to_bf16": [
        Wrong("truncation", truncates, "it truncates (drops the low 16 bits)"),
        Wrong("wrong tie rule", ties_up, "ties go up (adding 0x8000)"),
        Wrong("not rounded", unrounded, "returned"),
    ],
    "wmma_gemm": [
        Wrong(
            "wrong layout",
            _edit(B_FRAGMENT, B_FRAGMENT.replace("row_major", "col_major")),
            "each tile of B was read transposed",
        ),
        Wrong(
            "wrong ldm",
            _edit("a + tile_row * 16 * K + k, K);", "a + tile_row * 16 * K + k, 16);"),
            "A was read with a leading dimension of 16",
        ),
        Wrong(
            "wrong ldm",
            _edit("b + k * N + tile_col * 16, N);", "b + k * N + tile_col * 16, 16);"),
            "B was read with a leading dimension of 16",
        ),
        Wrong("missing init", _edit(LOAD_C, ""), "the result is A B without C"),
        Wrong("missing init", _edit(LOAD_C, "wmma::fill_fragment(acc, 0.0f);"), "the result is A B without C"),
        Wrong("short loop", _edit("k < K; k += 16", "k < K - 16; k += 16"), "expected"),
        Wrong("wrong signature", _edit("float* c, int M", "double* c, int M"), "the kernel's parameters are wrong"),
        Wrong(
            "compile error",
            _edit("wmma::mma_sync(acc, fa, fb, acc);", "wmma::mma_sync(acc, fa, fb);"),
            "NVRTC rejects it",
        ),
        Wrong("not extern C", _edit('extern "C" __global__', "__global__"), 'declare it extern "C"'),
    ],
}


# ----------------------------------------------------------------------------- dot_fp32_acc


def float16_sum(x, y):
    acc = np.float16(0)
    for p in x * y:
        acc = np.float16(acc + p)
    return float(acc)


def float16_products(x, y):
    return float(np.sum((x * y).astype(np.float32), dtype=np.float32))


def last_term_dropped(x, y):
    return float(np.sum(x[:-1].astype(np.float32) * y[:-1].astype(np.float32), dtype=np.float32))


def float64_sum(x, y):
    return float(np.sum(x.astype(np.float64) * y.astype(np.float64)))


def returns_array(x, y):
    return x.astype(np.float32) * y.astype(np.float32)


WRONG["dot_fp32_acc"] = [
    Wrong("float16 accumulation", float16_sum, "the sum was kept in float16, which overflows past 65504"),
    Wrong("float16 products", float16_products, "rounded each product to float16 before summing"),
    Wrong("off by one", last_term_dropped, "expected"),
    Wrong("float64 accumulation", float64_sum, "so the sum was float64"),
    Wrong("wrong type", returns_array, "return the sum as a Python float"),
]
