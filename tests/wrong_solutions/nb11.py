"""Wrong answers for helpers/problems/nb11.py (interop)."""

from numba import cuda

from . import Wrong


@cuda.jit
def saxpy_no_guard(a, x, y, out):
    i = cuda.grid(1)
    out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_thread_index(a, x, y, out):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_first_block(a, x, y, out):
    i = cuda.grid(1)
    if i < cuda.blockDim.x:
        out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_swapped(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * y[i] + x[i]


def _cai(obj):
    return obj.__cuda_array_interface__


def none_is_strided(obj):
    cai = _cai(obj)
    if cai["strides"] is None:
        return "strided"
    return _reference(obj)


def _reference(obj):
    from helpers.problems.nb11 import _layout

    return _layout(obj)


def layout_ignoring_itemsize(obj):
    """Assumes 4-byte elements: float64 arrays come out wrong."""
    cai = _cai(obj)
    if cai["strides"] is None:
        return "C"
    dims = list(zip(cai["shape"], cai["strides"]))
    for order, name in ((dims[::-1], "C"), (dims, "F")):
        step = 4
        if all(stride == step * _prod(e for e, _ in order[:k]) for k, (_, stride) in enumerate(order)):
            return name
    return "strided"


def _prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def last_stride_only(obj):
    cai = _cai(obj)
    if cai["strides"] is None:
        return "C"
    itemsize = int(cai["typestr"][2:])
    if cai["strides"][-1] == itemsize:
        return "C"
    return "F" if cai["strides"][0] == itemsize else "strided"


WRONG = {
    "saxpy": [
        Wrong("missing guard", saxpy_no_guard, "out-of-bounds"),
        Wrong("wrong index", saxpy_thread_index, "block"),
        Wrong("first block only", saxpy_first_block, "block"),
        Wrong("swapped inputs", saxpy_swapped, "wrong"),
    ],
    "layout": [
        Wrong("strides None", none_is_strided, "shorthand for C-contiguous"),
        Wrong("itemsize ignored", layout_ignoring_itemsize, "returned"),
        Wrong("last stride only", last_stride_only, "returned"),
        Wrong("hard-coded", lambda obj: "C", "hard-coded"),
    ],
    "zero_copy": [
        Wrong("thinks it copies", 0.0, "zero-copy view"),
        Wrong("index", 0, "zero-copy view"),
        Wrong("unknown", 4.0, "not right"),
    ],
    "choose_tool": [
        Wrong("numba", "numba", "CUDA C already"),
        Wrong("pycuda", "pycuda", "no FFTs"),
        Wrong("cuda.core", "cuda.core", "no array library"),
        Wrong("an option number", 2, "one of the names ('numba', 'cupy', 'pycuda' or 'cuda.core'), not the number 2"),
        Wrong("an option letter", "b", "not the letter 'b'"),
    ],
}
WRONG_GPU = {}


def ends_only(obj):  # judges by the innermost strides alone: an F array sliced along its columns reads as 'F'
    cai = obj.__cuda_array_interface__
    if cai["strides"] is None:
        return "C"
    size, strides = int(cai["typestr"][2:]), cai["strides"]
    if strides[-1] == size and list(strides) == sorted(strides, reverse=True):
        return "C"
    return "F" if strides[0] == size else "strided"


WRONG["layout"].append(Wrong("innermost stride and order only", ends_only, "should return 'strided'"))
