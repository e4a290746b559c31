"""CPU stand-in for the part of PyCUDA notebook 09 uses: memory, SourceModule, prepared calls, gpuarray.

    from helpers.standins.pycuda import driver as drv, SourceModule, gpuarray, ElementwiseKernel

Why: PyCUDA needs a GPU and nvcc, but what notebook 09 teaches about it (drv.In/Out/InOut copy on
every call, prepare() letters decide how scalars are packed, NumPy scalars of the C type for a
plain call) is about how arguments reach a kernel, and that runs on a CPU. Arguments are handled
as PyCUDA's own ``_build_arg_buf`` and ``prepared_call`` handle them: a plain call takes NumPy
scalars, allocations, In/Out/InOut and GPUArrays and refuses a Python number; ``prepared_call``
packs each argument with its format letter (a Python 2.0 under ``f`` is a 4-byte float). The
kernel is compiled with NVRTC (SourceModule's ``extern "C"`` wrapper included), not nvcc, and runs
in helpers.ptx. Contexts, devices, events and timing need a GPU and say so.
"""

from __future__ import annotations

import re

import numpy as np

from .. import cuda_c
from ..errors import LearnerError, LearnerTypeError, LearnerValueError, shown
from . import _launch

SUPPORTED = (
    "for PyCUDA runs mem_alloc/memcpy_htod/memcpy_dtoh, SourceModule.get_function, calls with In/Out/InOut, "
    "prepare/prepared_call, gpuarray.to_gpu/empty_like/sum and ElementwiseKernel"
)
VERSION_TEXT = "CPU stand-in"


class DeviceAllocation:
    """``drv.mem_alloc(n)``: n bytes of stand-in device memory; ``int()`` is its address."""

    def __init__(self, nbytes):
        nbytes = _launch.whole_number(nbytes, "mem_alloc's size in bytes")
        self._buf = np.zeros(max(nbytes, 1), np.uint8)
        self._ptr = _launch.register(self._buf)

    def __int__(self):
        return self._ptr

    __index__ = __int__

    def free(self):
        self._buf = None


def mem_alloc(bytes):  # noqa: A002 - PyCUDA's parameter name
    return DeviceAllocation(bytes)


def _host(a, what: str) -> np.ndarray:
    if not isinstance(a, np.ndarray) or a.dtype == object:
        raise LearnerTypeError(f"{what} must be a NumPy array of numbers, not {shown(a)}.")
    return a


def _bytes_at(ptr, nbytes):
    if not isinstance(ptr, (DeviceAllocation, int, np.integer)) or isinstance(ptr, bool):
        raise LearnerTypeError(f"memcpy needs device memory from drv.mem_alloc(...), not {shown(ptr)}.")
    mem = _launch.resolve(int(ptr), np.uint8)
    if mem is None or len(mem) < nbytes:
        raise LearnerError(f"memcpy: {nbytes} bytes at {int(ptr):#x} are not inside one mem_alloc allocation.")
    return mem[:nbytes]


def memcpy_htod(dest, src, stream=None):
    src = np.ascontiguousarray(_host(src, "memcpy_htod's source"))
    _bytes_at(dest, src.nbytes)[:] = src.reshape(-1).view(np.uint8)


def memcpy_dtoh(dest, src, stream=None):
    dest = _host(dest, "memcpy_dtoh's destination")
    dest.reshape(-1).view(np.uint8)[:] = _bytes_at(src, dest.nbytes)


class In:
    """Copy the host array to the GPU before the launch (kernel writes to it are not copied back)."""

    copy_in, copy_out = True, False

    def __init__(self, array):
        self.array = array


class Out(In):
    """Copy the result back to the host array after the launch."""

    copy_in, copy_out = False, True


class InOut(In):
    """Copy in before, and back after, the launch."""

    copy_in, copy_out = True, True


class GPUArray:
    """``pycuda.gpuarray.GPUArray``: a NumPy array in stand-in device memory (``.gpudata``, ``.get()``)."""

    def __init__(self, shape, dtype, allocator=None, base=None, gpudata=None, strides=None, order="C"):
        try:
            self._dev = np.zeros(shape, dtype, order=order)
        except (TypeError, ValueError) as e:  # a negative or non-integer shape, an unknown dtype
            raise LearnerValueError(
                f"a GPUArray of shape {shown(shape)} and dtype {shown(dtype)} is refused: {e}."
            ) from None
        self.gpudata = _launch.register(self._dev)
        self.shape, self.dtype, self.size, self.nbytes = (
            self._dev.shape,
            self._dev.dtype,
            self._dev.size,
            self._dev.nbytes,
        )

    def get(self, ary=None, pagelocked=False, async_=False, stream=None):
        return self._dev.copy() if ary is None else np.copyto(ary, self._dev) or ary

    def __len__(self):
        return len(self._dev)


def to_gpu(ary, allocator=None):
    g = GPUArray(np.shape(ary), np.asarray(ary).dtype)
    g._dev[...] = ary
    return g


def empty_like(other_ary, dtype=None, order="K"):
    return GPUArray(other_ary.shape, dtype or other_ary.dtype)


def zeros(shape, dtype=np.float64, allocator=None, order="C"):
    return GPUArray(shape, dtype)


def _sum(a, dtype=None, stream=None, allocator=None):
    """gpuarray.sum: a 0-d GPUArray (PyCUDA's own reduction kernel; NumPy here)."""
    g = GPUArray((), dtype or a.dtype)
    g._dev[...] = a._dev.sum(dtype=g.dtype)
    return g


def _launch_args(func_name, args):
    """(kernel args, [(In/Out handler, device copy)]): PyCUDA's _build_arg_buf, on the CPU."""
    out, handlers = [], []
    for i, a in enumerate(args):
        if isinstance(a, np.number):
            out.append(a)
        elif isinstance(a, In):
            dev = np.ascontiguousarray(a.array).copy() if a.copy_in else np.empty_like(a.array)
            handlers.append((a, dev))
            out.append(dev)
        elif isinstance(a, (DeviceAllocation, GPUArray)):
            out.append(int(a) if isinstance(a, DeviceAllocation) else a.gpudata)
        else:
            raise LearnerError(
                f"PyCUDA refuses parameter #{i} (0-based) of {func_name}, a {type(a).__name__} (TypeError: invalid "
                f"type on parameter #{i}): pass a NumPy scalar of the C type, e.g. np.float32(...), or device memory."
            )
    return out, handlers


class Function:
    """A kernel from ``SourceModule.get_function``: call it, or ``prepare`` then ``prepared_call``."""

    def __init__(self, module, name):
        self.module, self.name, self.arg_format = module, name, None

    def _run(self, grid, block, args, shared):
        grid, block = _launch.dims(grid, "grid"), _launch.dims(block, "block")
        args = _launch.pointer_args(args, self.module.code, self.name)
        _launch.run("PyCUDA", self.module.code, self.module.ptx, self.name, grid, block, args, shared=shared)

    def __call__(self, *args, **kwargs):
        grid, block, shared = kwargs.pop("grid", (1, 1)), kwargs.pop("block", None), kwargs.pop("shared", 0)
        kwargs.pop("stream", None)
        if kwargs.pop("time_kernel", False):
            raise _launch.needs_gpu("time_kernel=True (timing)", SUPPORTED)
        if kwargs:  # PyCUDA: ValueError("extra keyword arguments")
            raise LearnerError(
                f"{self.name}() got the keyword(s) {', '.join(kwargs)}, which PyCUDA does not take: a launch takes "
                "block=, grid=, shared= and stream=."
            )
        if block is None:  # PyCUDA: ValueError("must specify block size")
            raise LearnerError(f"{self.name}(...) needs block=(threads, 1, 1) (and grid=(blocks, 1)) to launch.")
        call, handlers = _launch_args(self.name, args)
        self._run(grid, block, call, shared)
        for h, dev in handlers:
            if h.copy_out:
                h.array[...] = dev

    def prepare(self, arg_types, texrefs=[]):  # noqa: B006 - PyCUDA's signature
        fmt = ""
        if not isinstance(arg_types, (str, list, tuple)):
            raise LearnerTypeError(
                f"prepare() takes the parameters' types as a string such as 'PPfi' (or a list), not {shown(arg_types)}."
            )
        for t in arg_types:
            fmt += t if isinstance(t, str) else np.dtype(t).char if t is not None else "P"
        self.arg_format = fmt
        return self

    def prepared_call(self, grid, block, *args, shared_size=0):
        letters = re.findall(r"\d*[a-zA-Z?]", self.arg_format or "")
        if self.arg_format is None or len(letters) != len(args):
            raise LearnerError(
                f"prepared_call of {self.name} got {len(args)} argument(s) for the format {self.arg_format!r}."
            )
        packed = []
        for letter, a in zip(letters, args):
            if letter == "P":
                packed.append(int(a.gpudata if isinstance(a, GPUArray) else a))
            else:
                packed.append(np.array(a).astype(np.dtype(letter)).reshape(())[()])  # struct.pack's conversion
        self._run(grid, block, packed, shared_size)


class SourceModule:
    """``SourceModule(source)``: CUDA C compiled (by NVRTC here, nvcc in PyCUDA), wrapped in extern "C"."""

    def __init__(
        self,
        source,
        nvcc="nvcc",
        options=None,
        keep=False,
        no_extern_c=False,
        arch=None,
        code=None,
        cache_dir=None,
        include_dirs=[],  # noqa: B006 - PyCUDA's signature
    ):
        source = _launch.source_text(source, "SourceModule's source")
        self.code = source if no_extern_c else 'extern "C" { ' + source + "\n}\n"
        self.ptx = _launch.compile_ptx(self.code, tuple(f"-I{d}" for d in include_dirs))[0]

    def get_function(self, name):
        if not re.search(rf"\.entry\s+{re.escape(name)}\s*\(", self.ptx):
            raise LearnerError(
                f"SourceModule has no kernel called {name!r} (with no_extern_c=True, names are mangled)."
            )
        return Function(self, name)


class ElementwiseKernel:
    """PyCUDA's ``ElementwiseKernel(arguments, operation, name)``: C arguments as written, a loop over i < n."""

    def __init__(
        self, arguments, operation, name="kernel", keep=False, options=None, preamble="", loop_prep="", after_loop=""
    ):
        generated = cuda_c.pycuda_elementwise_source(arguments, operation, name)  # says which text is not a string
        self.name, self.params = name, _launch.c_params(arguments)
        self.code = preamble + "\n" + generated
        self.ptx = _launch.compile_ptx(self.code)[0]

    def __call__(self, *args, **kwargs):
        if kwargs.get("range") is not None or kwargs.get("slice") is not None:
            raise _launch.needs_gpu("ElementwiseKernel with range= or slice=", SUPPORTED)
        arrays = [a for a in args if isinstance(a, GPUArray)]
        if not arrays:
            raise LearnerError(f"{self.name} needs at least one GPUArray argument (it sets n from the first).")
        call = []
        for (pname, ptr, dt), a in zip(self.params, args):
            if isinstance(a, GPUArray):
                call.append(a.gpudata)
            elif ptr:
                raise LearnerError(f"{self.name}: {pname} is a pointer; pass a GPUArray, not a {type(a).__name__}.")
            else:  # PyCUDA packs scalars with the declared type
                call.append(dt.type(a))
        n = arrays[0].size
        call = _launch.pointer_args(call, self.code, self.name)
        _launch.run(
            "PyCUDA ElementwiseKernel",
            self.code,
            self.ptx,
            self.name,
            min(-(-n // 128), 32),
            128,
            [*call, np.uint64(n)],
        )


driver = _launch.namespace(
    "pycuda.driver",
    SUPPORTED,
    mem_alloc=mem_alloc,
    memcpy_htod=memcpy_htod,
    memcpy_dtoh=memcpy_dtoh,
    In=In,
    Out=Out,
    InOut=InOut,
    DeviceAllocation=DeviceAllocation,
    Function=Function,
)
compiler = _launch.namespace("pycuda.compiler", SUPPORTED, SourceModule=SourceModule)
gpuarray = _launch.namespace(
    "pycuda.gpuarray", SUPPORTED, GPUArray=GPUArray, to_gpu=to_gpu, empty_like=empty_like, zeros=zeros, sum=_sum
)
elementwise = _launch.namespace("pycuda.elementwise", SUPPORTED, ElementwiseKernel=ElementwiseKernel)
