"""CPU stand-in for ``cuda.compute`` (CCCL's device-wide algorithms), as notebook 14 uses it.

Same keyword-only signatures as cuda-cccl 1.2.1 (``reduce_into(d_in=, d_out=, num_items=, op=,
h_init=)`` ...), NumPy underneath, so a learner's call that is wrong for the real library (a
missing keyword, an output too small, a Python callable where only ``OpKind`` works without
numba-cuda-mlir) is one sentence here too. What a learner's answer can tell behaves as 1.2.1 did
on an H200: a host (NumPy) array as d_in or d_out is refused (AttributeError there: it has no
``__cuda_array_interface__``); reduce_into and radix_sort write the accumulator's (h_init's) or
the keys' bytes into d_out without converting, so a float64 d_out for float32 data reads as
garbage, while the scans convert to d_out's dtype. What a stand-in cannot show (speed, the
temp-storage sizes CUB picks) is said in the notebook, which reads the GPU's recorded numbers.
"""

from __future__ import annotations

import enum

import numpy as np

from ..errors import GPURequired, LearnerAttributeError, LearnerValueError
from .cupy import ndarray as _device_array

__all__ = [
    "OpKind",
    "SortOrder",
    "CountingIterator",
    "reduce_into",
    "inclusive_scan",
    "exclusive_scan",
    "radix_sort",
    "make_reduce_into",
]


class OpKind(enum.Enum):
    PLUS = "plus"
    MULTIPLIES = "multiplies"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    BIT_AND = "bit_and"
    BIT_OR = "bit_or"
    BIT_XOR = "bit_xor"


class SortOrder(enum.Enum):
    ASCENDING = 0
    DESCENDING = 1


_UFUNC = {
    OpKind.PLUS: np.add,
    OpKind.MULTIPLIES: np.multiply,
    OpKind.MAXIMUM: np.maximum,
    OpKind.MINIMUM: np.minimum,
    OpKind.BIT_AND: np.bitwise_and,
    OpKind.BIT_OR: np.bitwise_or,
    OpKind.BIT_XOR: np.bitwise_xor,
}


MAX_COUNTED = 100_000_000  # values a CountingIterator may make in memory (800 MB of int64)


class CountingIterator:
    """start, start + 1, ... without an array in memory (as cuda.compute.CountingIterator)."""

    def __init__(self, start):
        if not isinstance(start, np.generic):
            raise LearnerValueError(
                f"CountingIterator needs a NumPy scalar that fixes its type, e.g. np.int64({start!r}); "
                "a plain Python number does not say how many bytes each value has."
            )
        self.start = start

    def _values(self, n):
        if n > MAX_COUNTED:
            raise GPURequired(
                f"a CountingIterator over {n:,} items needs a GPU: the CPU stand-in makes its values in memory, "
                f"so use at most {MAX_COUNTED:,} here."
            )
        return np.arange(n, dtype=self.start.dtype) + self.start


def _op(op, name):
    if isinstance(op, OpKind):
        return _UFUNC[op]
    if callable(op):
        raise LearnerValueError(
            f"{name}: a Python function as op needs numba-cuda-mlir on a GPU (cuda.compute raises 'numba-cuda-mlir "
            "is required to JIT compile Python callables' without it, and the course's GPU set does not install "
            "it); use an OpKind such as OpKind.PLUS."
        )
    raise LearnerValueError(f"{name}: op must be an OpKind (e.g. OpKind.PLUS), not {type(op).__name__}.")


def _on_device(a, name, what):
    """`a` as cuda.compute takes it: device memory (a CuPy array), one contiguous block."""
    if not isinstance(a, _device_array):
        raise LearnerAttributeError(
            f"{name}: {what} is a NumPy array in host memory, and cuda.compute works on device arrays only (on a "
            "GPU: AttributeError: 'numpy.ndarray' object has no attribute '__cuda_array_interface__'): copy it "
            "with cp.asarray(...) or allocate it with cp.empty(...)."
        )
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise LearnerValueError(
            f"{name}: {what} is not contiguous (cuda.compute: 'Non-contiguous arrays are not "
            "supported.'): pass a contiguous copy, cp.ascontiguousarray(...)."
        )
    return a


def _input(d_in, num_items, name, what="d_in"):
    if isinstance(num_items, bool) or not isinstance(num_items, (int, np.integer)) or num_items < 0:
        raise LearnerValueError(f"{name}: num_items must be a non-negative int, not {num_items!r}.")
    if isinstance(d_in, CountingIterator):
        return d_in._values(int(num_items))
    if not isinstance(d_in, np.ndarray):
        raise LearnerValueError(f"{name}: {what} must be a device array or an iterator, not {type(d_in).__name__}.")
    _on_device(d_in, name, what)
    if d_in.size < num_items:
        raise LearnerValueError(f"{name}: num_items is {num_items} but {what} holds only {d_in.size} elements.")
    return d_in.reshape(-1, order="A")[: int(num_items)].view(np.ndarray)


def _output(d_out, need, name, what="d_out"):
    if not isinstance(d_out, np.ndarray):
        raise LearnerValueError(
            f"{name}: {what} must be a device array (e.g. cp.empty(...)), not {type(d_out).__name__}."
        )
    _on_device(d_out, name, what)
    if d_out.size < need:
        raise LearnerValueError(f"{name}: {what} holds {d_out.size} elements but the result needs {need}.")
    return d_out.reshape(-1, order="A").view(np.ndarray)  # a view (C or F order): writes reach the learner


def _write_bytes(out, values, name, what, typed_by):
    """Write `values` as their own bytes at the start of `out`, as reduce_into and radix_sort do: CUB
    writes its accumulator's (or the keys') type, whatever d_out's dtype (cuda-cccl 1.2.1 on an H200:
    a float32 sum in a float64 d_out read 5.6e-315, float32 keys sorted into float64 read 2.7e17)."""
    raw = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    dst = out.view(np.uint8)
    if dst.size < raw.size:
        raise LearnerValueError(
            f"{name}: the result is {raw.size} bytes of {values.dtype} ({typed_by}) but {what} holds only "
            f"{dst.size} bytes of {out.dtype}: cuda.compute writes {values.dtype} values without converting, so "
            f"give {what} the dtype {values.dtype}."
        )
    dst[: raw.size] = raw


def _init_value(value, name, dtype, required):
    if value is None:
        if required:
            raise LearnerValueError(f"{name}: init_value is required (e.g. np.zeros(1, dtype) for a sum).")
        return None
    arr = np.asarray(value)
    # a longer array is read for its first element, as cuda.compute does (cuda-cccl 1.2.1 on an H200)
    if arr.dtype == object or arr.size < 1 or not isinstance(value, (np.ndarray, np.generic)):
        raise LearnerValueError(
            f"{name}: the initial value must be a one-element NumPy array such as np.zeros(1, {np.dtype(dtype).name}),"
            f" not {value!r}: its dtype is the accumulator's type."
        )
    return arr.reshape(-1)[0]


def reduce_into(*, d_in, d_out, num_items, op, h_init=None, stream=None, **kwargs):
    f = _op(op, "reduce_into")
    x = _input(d_in, num_items, "reduce_into")
    out = _output(d_out, 1, "reduce_into")
    init = _init_value(h_init, "reduce_into", x.dtype, required=False)
    acc_dtype = np.asarray(h_init).dtype if init is not None else x.dtype
    if not x.size and init is None:
        return  # cuda.compute 1.2.1: "If num_items is also zero, d_out is unmodified."
    total = f.reduce(x.astype(acc_dtype), initial=init) if x.size else init
    _write_bytes(out, np.asarray([total], acc_dtype), "reduce_into", "d_out", "the accumulator has h_init's dtype")


def _scan(d_in, d_out, op, init_value, num_items, name, exclusive):
    f = _op(op, name)
    x = _input(d_in, num_items, name)
    out = _output(d_out, x.size, name)
    init = _init_value(init_value, name, x.dtype, required=exclusive)
    acc = np.asarray(init_value).dtype if init is not None else x.dtype
    running = f.accumulate(x.astype(acc)) if x.size else x.astype(acc)
    if init is not None and x.size:
        running = f(init, running)
    if exclusive and x.size:
        running = np.concatenate(([init], running[:-1]))
    out[: x.size] = running


def inclusive_scan(*, d_in, d_out, op, init_value=None, num_items, stream=None):
    _scan(d_in, d_out, op, init_value, num_items, "inclusive_scan", exclusive=False)


def exclusive_scan(*, d_in, d_out, op, init_value, num_items, stream=None):
    _scan(d_in, d_out, op, init_value, num_items, "exclusive_scan", exclusive=True)


def radix_sort(
    *,
    d_in_keys,
    d_out_keys,
    d_in_values=None,
    d_out_values=None,
    num_items,
    order,
    begin_bit=None,
    end_bit=None,
    stream=None,
):
    if not isinstance(order, SortOrder):
        raise LearnerValueError("radix_sort: order must be SortOrder.ASCENDING or SortOrder.DESCENDING.")
    keys = _input(d_in_keys, num_items, "radix_sort", "d_in_keys")
    if keys.dtype.kind not in "iuf":
        raise LearnerValueError(f"radix_sort sorts numbers (integers or floats), not {keys.dtype}.")
    idx = np.argsort(keys, kind="stable")
    if order is SortOrder.DESCENDING:
        idx = np.argsort(-keys.astype(np.float64), kind="stable") if keys.dtype.kind == "f" else idx[::-1]
    same = getattr(d_out_keys, "dtype", None) == keys.dtype  # else the bytes must fit (_write_bytes)
    out = _output(d_out_keys, keys.size if same else 0, "radix_sort", "d_out_keys")
    _write_bytes(out, keys[idx], "radix_sort", "d_out_keys", "keys of d_in_keys' dtype")
    if d_in_values is not None:  # values convert here: a GPU's handling of another dtype was not checked
        vals = _input(d_in_values, num_items, "radix_sort", "d_in_values")
        _output(d_out_values, keys.size, "radix_sort", "d_out_values")[: keys.size] = vals[idx]


class _Reduce:
    """The two-phase object API: call with temp_storage=None for the bytes needed, then with the buffer."""

    def __init__(self, op, h_init):
        self.op, self.h_init = op, h_init

    def __call__(self, *, temp_storage, d_in, d_out, num_items, op=None, h_init=None, stream=None):
        if temp_storage is None:
            return 1  # a real GPU asks CUB; the CPU needs none (the notebook says so)
        reduce_into(d_in=d_in, d_out=d_out, num_items=num_items, op=op or self.op, h_init=h_init or self.h_init)
        return None


def make_reduce_into(*, d_in, d_out, op, h_init=None, **kwargs):
    _op(op, "make_reduce_into")
    return _Reduce(op, h_init)
