"""Kernels the CPU tracer runs happily but a GPU compiler refuses, one per family, as data:
(family, kernel, args, words the compile check's sentence must contain)."""

import math

import numba
import numpy as np
from numba import cuda

SCALE = 2.0
LOOKUP = {"a": 1}


def host_helper(x):
    return x + 1


@cuda.jit(device=True)
def square(x):
    return x * x


@cuda.jit
def good(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = square(x[i]) * SCALE + math.sqrt(abs(x[i])) + np.float32(1)


@cuda.jit
def uses_list(x, out, n):
    i = cuda.grid(1)
    if i + 1 < n:
        vals = [x[i], x[i + 1]]
        out[i] = sum(vals)


@cuda.jit
def uses_np_zeros(x, out, n):
    i = cuda.grid(1)
    if i < n:
        tmp = np.zeros(3)
        out[i] = x[i] + tmp[0]


@cuda.jit
def fstring_print(x, out, n):
    i = cuda.grid(1)
    if i < n:
        print(f"thread {i}")
        out[i] = x[i]


@cuda.jit
def returns_value(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i]
    return out[0]


@cuda.jit("void(float64[:], float64[:], int64)")
def declared_float64(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i]


@cuda.jit
def shared_size_from_array(x, out, n):
    tile = cuda.shared.array(out.size, numba.float32)
    i = cuda.grid(1)
    if i < n:
        tile[0] = x[i]
        out[i] = tile[0]


@cuda.jit
def shared_size_from_block(x, out, n):
    tile = cuda.shared.array(cuda.blockDim.x + 2, numba.float32)
    i = cuda.grid(1)
    if i < n:
        tile[0] = x[i]
        out[i] = tile[0]


TILE = 64


@cuda.jit
def shared_size_from_arithmetic(x, out, n):
    tile = cuda.shared.array(TILE + 2, numba.float32)  # Numba folds no arithmetic on names: HALO = TILE + 2
    i = cuda.grid(1)
    if i < n:
        tile[0] = x[i]
        out[i] = tile[0]


@cuda.jit
def calls_python_function(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = host_helper(x[i])


@cuda.jit
def uses_dict(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i] * LOOKUP["a"]


@cuda.jit
def uses_string(x, out, n):
    i = cuda.grid(1)
    if i < n:
        label = "x" + str(i)
        out[i] = len(label)


@cuda.jit
def uses_try(x, out, n):
    i = cuda.grid(1)
    try:
        out[i] = x[i]
    except IndexError:
        pass


a = np.arange(64, dtype=np.float32)
ARGS = (a, np.zeros_like(a), a.size)

CASES = [
    ("list", uses_list, "Python list"),
    ("np.zeros", uses_np_zeros, "np.zeros"),
    ("f-string print", fstring_print, "f-string"),
    ("return value", returns_value, "return"),
    ("signature dtype", declared_float64, "float64"),
    ("shared shape from array", shared_size_from_array, "constant"),
    ("shared shape from blockDim", shared_size_from_block, "constant"),
    ("shared shape from arithmetic", shared_size_from_arithmetic, "constant"),
    ("python function", calls_python_function, "host_helper"),
    ("dict", uses_dict, "dict"),
    ("string", uses_string, "string"),
    ("try/except", uses_try, "try"),
]
