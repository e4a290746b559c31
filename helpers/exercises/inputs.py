"""A kernel exercise's parameters as data (``In``, ``Out``, ``Acc``, ``Scalar``, ``Size``) and
the fresh inputs made from them for every check: random values, poisoned outputs, awkward sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Arg:
    """One kernel parameter. role: "in" (random values), "out" (poisoned before the run), "acc"
    (starts at ``init``, e.g. a histogram for atomics), "scalar" (random number), "size" (n).
    shape: "n" -> (n,), "blocks" -> (blocks per grid,), a tuple, or a callable of n.
    Ints are drawn from [low, high) and floats from [low, high)."""

    name: str
    role: str
    dtype: str = "float32"
    shape: Any = "n"
    low: float = -1.0
    high: float = 1.0
    init: float = 0


def In(name, dtype="float32", shape="n", low=-1.0, high=1.0):  # noqa: N802 - reads like a type in definitions
    return Arg(name, "in", dtype, shape, low, high)


def Out(name, dtype="float32", shape="n"):  # noqa: N802
    return Arg(name, "out", dtype, shape)


def Acc(name, dtype="int32", shape="n", init=0):  # noqa: N802
    return Arg(name, "acc", dtype, shape, init=init)


def Scalar(name, dtype="float32", low=-2.0, high=2.0):  # noqa: N802
    return Arg(name, "scalar", dtype, (), low, high)


def Size(name="n"):  # noqa: N802
    return Arg(name, "size", "int64", ())


_NAN_BITS = {2: (np.uint16, 0x7E0B), 4: (np.uint32, 0x7FC00BAD), 8: (np.uint64, 0x7FF8000000000BAD)}


def poison(dtype):
    """NaN for floats, an extreme value for ints: a value no correct kernel writes.

    The NaN carries its own bit pattern (payload 0xBAD), so a NaN the kernel computed (0 / 0, ...)
    is told apart from an element it never wrote (``is_poison``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        if dtype.itemsize in _NAN_BITS:
            uint, bits = _NAN_BITS[dtype.itemsize]
            return np.array([bits], dtype=uint).view(dtype)[0]
        return dtype.type(np.nan)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if dtype.kind == "i" else info.max)
    return dtype.type(0)


def make(arg: Arg, rng, n, grid):
    if arg.role == "size":
        return int(n)
    dtype = np.dtype(arg.dtype)
    if arg.role == "scalar":
        v = rng.integers(arg.low, arg.high) if dtype.kind in "iu" else rng.uniform(arg.low, arg.high)
        return dtype.type(v)
    if callable(arg.shape):
        shape = tuple(arg.shape(n))
    else:
        shape = {"n": (n,), "blocks": (grid[0],)}.get(arg.shape, arg.shape)
    if arg.role == "in":
        if dtype.kind in "iu":
            return rng.integers(arg.low, arg.high, size=shape).astype(dtype)
        return rng.uniform(arg.low, arg.high, size=shape).astype(dtype)
    return np.full(shape, poison(dtype) if arg.role == "out" else arg.init, dtype=dtype)


def is_poison(values, dtype):
    """Elementwise: does ``values`` (an array of ``dtype``) still hold the poison, bit for bit?"""
    dtype = np.dtype(dtype)
    values = np.ascontiguousarray(values)
    if dtype.kind == "f" and dtype.itemsize in _NAN_BITS:
        uint, bits = _NAN_BITS[dtype.itemsize]
        return values.view(uint) == uint(bits)
    return values == poison(dtype)
