"""CPU stand-in for CuPy's matrix product and its compute types (``cupy._core.set_compute_type``).

What CuPy 14 does (cupy/_core/_routines_linalg.pyx, tensordot_core_v11): a 2-D product calls cuBLAS's
``cublasGemmEx``; for float32 with the compute type TF32 it asks for CUBLAS_COMPUTE_32F_FAST_TF32, for
PEDANTIC CUBLAS_COMPUTE_32F_PEDANTIC, for any other CUBLAS_COMPUTE_32F; float16 arrays are multiplied with
CUBLAS_COMPUTE_32F too (FP32 accumulation, float16 output); float64 with CUBLAS_COMPUTE_64F. The float32
compute type starts as TF32 when the environment has CUPY_TF32 > 0 the first time it is asked for.

How it is modelled here, stated because cuBLAS's own order of summation is not documented:
- TF32: each input rounded to 11 significant bits (FP32's exponent), to nearest even, then an FP32 product
  (NumPy's float32 matmul: float32 accumulation, its own order);
- float16: the float16 inputs multiplied in float32, the result rounded to float16;
- float32 (not TF32) and float64: NumPy's matmul in that type.
So the size of each format's error is right; the last bits may differ from a GPU's.
"""

from __future__ import annotations

import os
import types

import numpy as np

from ..errors import LearnerTypeError, LearnerValueError, shown

# CuPy's values (cupy/_core/_routines_linalg.pxd): the same numbers, so a saved setting means the same
COMPUTE_TYPE_TBD, COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_PEDANTIC = 0, 1, 2
COMPUTE_TYPE_FP16, COMPUTE_TYPE_FP32, COMPUTE_TYPE_FP64, COMPUTE_TYPE_BF16, COMPUTE_TYPE_TF32 = 3, 4, 5, 6, 7
_NAMES = {
    0: "COMPUTE_TYPE_TBD",
    1: "COMPUTE_TYPE_DEFAULT",
    2: "COMPUTE_TYPE_PEDANTIC",
    3: "COMPUTE_TYPE_FP16",
    4: "COMPUTE_TYPE_FP32",
    5: "COMPUTE_TYPE_FP64",
    6: "COMPUTE_TYPE_BF16",
    7: "COMPUTE_TYPE_TF32",
}
_types = [COMPUTE_TYPE_TBD] * 3  # float16, float32, float64: CuPy's list


def to_compute_type_index(dtype) -> int:
    char = np.dtype(dtype).char
    if char == "e":
        return 0
    if char in "fF":
        return 1
    if char in "dD":
        return 2
    raise TypeError(f"dtype is not supported: {dtype}")


def set_compute_type(dtype, compute_type):
    """As CuPy (on a GPU of compute capability 8.0 or later, where BF16 and TF32 are accepted)."""
    if compute_type not in _NAMES:
        raise ValueError(f"Unknown compute type: {compute_type}")
    _types[to_compute_type_index(dtype)] = compute_type


def get_compute_type(dtype):
    index = to_compute_type_index(dtype)
    if _types[index] == COMPUTE_TYPE_TBD:
        tf32 = np.dtype(dtype).char in "fF" and int(os.getenv("CUPY_TF32", "0")) > 0
        set_compute_type(dtype, COMPUTE_TYPE_TF32 if tf32 else COMPUTE_TYPE_DEFAULT)
    return _types[index]


def compute_type_to_str(compute_type):
    return _NAMES.get(compute_type, compute_type)


def round_to_tf32(x):
    """float32 values rounded to nearest even with 11 significant bits (10 fraction bits), FP32's range."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = bits + np.uint64(0xFFF) + ((bits >> np.uint64(13)) & np.uint64(1))
    out = ((bits >> np.uint64(13)) << np.uint64(13)).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), out, x).astype(np.float32)


def modelled(a, b) -> bool:
    """Two 2-D arrays of one float type, with matching inner sizes: the products this module models."""
    return (
        all(isinstance(x, np.ndarray) and x.ndim == 2 and x.dtype.char in "efd" for x in (a, b))
        and a.dtype == b.dtype
        and a.shape[1] == b.shape[0]
    )


def matmul(a, b, out=None):
    """``cupy.matmul`` for 2-D float arrays of one type, with that type's compute type (see above), as a
    NumPy array (cupy.py makes it a stand-in device array)."""
    if out is not None:
        raise LearnerValueError("cupy.matmul(a, b, out=...): CuPy does not support out here either; use c = a @ b.")
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, np.ndarray) or x.ndim != 2 or x.dtype.char not in "efd":
            raise LearnerTypeError(
                f"the CPU stand-in multiplies 2-D float16, float32 or float64 arrays; {name} is {shown(x)}."
            )
    if a.dtype != b.dtype:
        raise LearnerTypeError(f"a is {a.dtype} and b is {b.dtype}: convert one (b.astype(a.dtype)) first.")
    a, b = np.asarray(a), np.asarray(b)
    if a.shape[1] != b.shape[0]:
        raise LearnerValueError(f"shapes {a.shape} and {b.shape} not aligned: a's columns must equal b's rows.")
    if a.dtype == np.float16:
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    if a.dtype == np.float32 and get_compute_type(np.float32) == COMPUTE_TYPE_TF32:
        return round_to_tf32(a) @ round_to_tf32(b)
    return a @ b


_routines_linalg = types.SimpleNamespace(
    **{n: v for n, v in globals().items() if n.startswith("COMPUTE_TYPE_")},
    get_compute_type=get_compute_type,
    set_compute_type=set_compute_type,
    compute_type_to_str=compute_type_to_str,
    to_compute_type_index=to_compute_type_index,
)
core = types.SimpleNamespace(
    get_compute_type=get_compute_type, set_compute_type=set_compute_type, _routines_linalg=_routines_linalg
)
