"""Launch a compiled Numba kernel again and again at the host cost of a CUDA C launch.

Why: Numba's launch path looks at every argument in Python on every launch (25-50 µs of host time),
and cuda.core's ``launch`` packs its arguments on every call (5-7 µs for the many words a Numba kernel
takes). A kernel launched thousands of times with the same arguments (the step of an iteration, a time
loop) can have its parameters packed once. ``prepare`` loads Numba's own cubin with cuda.core, writes
the parameters exactly as Numba's calling convention lays them out (each array is meminfo, parent,
item count, item size, data pointer, then its shape and its strides) into one buffer, and each call is
one ``cuLaunchKernel`` given that buffer's address.

The arguments are fixed when the launch is prepared: it reads the device arrays' addresses then, so
the arrays must stay alive (the prepared launch keeps a reference) and their contents may change
between launches, their shapes may not. In CPU mode there is no host cost to save: the prepared launch
calls the kernel through Numba (the simulator), so the same code runs in both modes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import env
from ._numba import compiled_kernel

# Numba scalar types and the NumPy type of their kernel parameter (a bool is passed as one byte).
_SCALARS = {
    "bool": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float32": np.float32,
    "float64": np.float64,
}


class PrepareError(ValueError):
    """An argument the prepared launch cannot pass; the message says which and what to do."""


@dataclass(frozen=True)
class Parameters:
    """A kernel's parameters in Numba's calling convention: one NumPy scalar per PTX parameter."""

    words: tuple  # NumPy scalars, in the order of the kernel's PTX parameters
    kinds: tuple  # per argument: "array" or the scalar type's name, for messages

    @property
    def sizes(self) -> tuple:
        return tuple(w.dtype.itemsize for w in self.words)


def _array_interface(arg):
    cai = getattr(arg, "__cuda_array_interface__", None)
    if cai is None:
        return None
    shape = tuple(int(s) for s in cai["shape"])
    itemsize = np.dtype(cai["typestr"]).itemsize
    strides = cai.get("strides")
    if strides is None:  # C-contiguous: the interface may leave the strides out
        strides, step = [], itemsize
        for s in reversed(shape):
            strides.insert(0, step)
            step *= s
    return int(cai["data"][0]), shape, tuple(int(s) for s in strides), itemsize


def numba_parameters(args, argtypes) -> Parameters:
    """The words a kernel compiled for ``argtypes`` (Numba types) takes for ``args``.

    Arrays must expose ``__cuda_array_interface__`` (Numba device arrays, CuPy arrays, cuda.core
    buffers viewed as arrays); host NumPy arrays cannot be passed without a copy each launch.
    """
    if len(args) != len(argtypes):
        raise PrepareError(f"the kernel takes {len(argtypes)} arguments and {len(args)} were given.")
    words, kinds = [], []
    for i, (arg, ty) in enumerate(zip(args, argtypes)):
        ndim = getattr(ty, "ndim", None)
        if ndim is not None:
            view = _array_interface(arg)
            if view is None:
                raise PrepareError(
                    f"argument {i} is not on the device; copy it once with cuda.to_device (or pass a CuPy array) "
                    "before preparing the launch."
                )
            ptr, shape, strides, itemsize = view
            if len(shape) != ndim or itemsize != np.dtype(str(ty.dtype)).itemsize:
                raise PrepareError(f"argument {i} is not the {ty} the kernel was compiled for.")
            nitems = int(np.prod(shape, dtype=np.int64))
            words += [np.uint64(0), np.uint64(0), np.int64(nitems), np.int64(itemsize), np.uint64(ptr)]
            words += [np.int64(s) for s in shape] + [np.int64(s) for s in strides]
            kinds.append("array")
            continue
        scalar = _SCALARS.get(str(ty))
        if scalar is None:
            raise PrepareError(f"argument {i} is a {ty}; a prepared launch passes arrays and plain numbers only.")
        words.append(scalar(arg))
        kinds.append(str(ty))
    return Parameters(tuple(words), tuple(kinds))


def _packed(params: Parameters):
    """One 8-byte slot per parameter and the array of their addresses that cuLaunchKernel reads."""
    slots = np.zeros(len(params.words), dtype=np.uint64)
    raw = slots.view(np.uint8)
    for i, w in enumerate(params.words):
        raw[8 * i : 8 * i + w.dtype.itemsize] = np.frombuffer(w.tobytes(), np.uint8)
    base = slots.ctypes.data
    pointers = np.array([base + 8 * i for i in range(len(params.words))], dtype=np.uint64)
    return slots, pointers


def _stream_handle(stream) -> int:
    if stream is None or stream == 0:
        return 0
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "ptr"):  # CuPy
        return int(stream.ptr)
    handle = getattr(stream, "handle", None)  # a Numba stream
    value = getattr(handle, "value", handle)
    if value is None:
        raise PrepareError("the stream is not one the course knows; pass a Numba, CuPy or cuda.core stream.")
    return int(value)


def _dims(d) -> tuple:
    d = (d,) if isinstance(d, (int, np.integer)) else tuple(d)
    return tuple(int(v) for v in d) + (1,) * (3 - len(d))


class PreparedLaunch:
    """``launch()`` runs the kernel once on its stream; nothing is checked or packed per call."""

    def __init__(self, kernel, grid, block, args, stream=None, shared_bytes=0, on_gpu=None):
        self.grid, self.block, self.args = _dims(grid), _dims(block), tuple(args)
        self._stream = stream
        self.on_gpu = env.on_gpu() if on_gpu is None else on_gpu
        if not self.on_gpu:
            self._configured = kernel[self.grid, self.block, stream or 0, shared_bytes]
            self.parameters = None
            return
        from cuda.bindings import driver
        from cuda.core import Device, ObjectCode

        Device().set_current()
        if len(kernel.overloads) != 1:
            raise PrepareError(
                "the kernel needs exactly one compiled version: give @cuda.jit a signature or launch it once first."
            )
        self.parameters = numba_parameters(self.args, next(iter(kernel.overloads)))  # keyed by argument types
        cubin, name = compiled_kernel(kernel)
        self._kernel = ObjectCode.from_cubin(cubin).get_kernel(name)  # kept: it owns the loaded code
        if self._kernel.num_arguments != len(self.parameters.words):
            raise PrepareError(
                f"Numba's kernel takes {self._kernel.num_arguments} parameters and {len(self.parameters.words)} "
                "were packed; this argument kind is not supported by a prepared launch."
            )
        self._slots, self._pointers = _packed(self.parameters)
        self._call = (
            driver.CUfunction(int(self._kernel.handle)),
            *self.grid,
            *self.block,
            int(shared_bytes),
            driver.CUstream(_stream_handle(stream)),
            int(self._pointers.ctypes.data),
            0,
        )
        self._launch = driver.cuLaunchKernel
        self._success = driver.CUresult.CUDA_SUCCESS

    def __call__(self) -> None:
        if not self.on_gpu:
            self._configured(*self.args)
            return
        (err,) = self._launch(*self._call)
        if err != self._success:
            raise RuntimeError(f"the prepared launch failed with {err.name}.")


def prepare(kernel, grid, block, *args, stream=None, shared_bytes=0) -> PreparedLaunch:
    """Pack ``kernel[grid, block, stream](*args)`` once; call the result to launch it."""
    return PreparedLaunch(kernel, grid, block, args, stream=stream, shared_bytes=shared_bytes)
