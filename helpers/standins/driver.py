"""CPU stand-in for the ``cuda.bindings.driver`` calls of notebook 10's driver-API cell.

    driver = helpers.standins.library("cuda.bindings.driver")
    err, dev = driver.cuDeviceGet(0)        # every call returns (CUresult, *values), as the bindings do

Why: the driver API is the layer every library sits on, and its one hard part, ``kernelParams``
(an array of addresses, one per argument, each pointing at the argument's value), can be checked
on a CPU: ``cuLaunchKernel`` here reads that array from memory exactly as the driver would, with
the sizes the kernel's PTX declares. Memory from ``cuMemAlloc`` is host memory. A CUBIN is
machine code for a GPU, so ``cuModuleLoadData`` accepts PTX, or a CUBIN that
``helpers.cuda_c.compile`` built in this process (whose source it compiles to PTX again).
The enums (``CUresult``, ``CUdevice_attribute``...) are the real ones from cuda.bindings.
"""

from __future__ import annotations

import ctypes

import numpy as np
from cuda.bindings.driver import CUdevice_attribute, CUdeviceptr, CUresult

from .. import cuda_c
from ..errors import LearnerError, LearnerTypeError, shown
from ..ptx.parser import parse
from ..ptx.values import DTYPES
from . import _launch

SUPPORTED = (
    "for the driver API runs cuInit, cuDeviceGet, the primary context, cuModuleLoadData (PTX, or a CUBIN "
    "compiled in this process), cuModuleGetFunction, cuMemAlloc/cuMemcpyHtoD/cuMemcpyDtoH/cuMemFree, "
    "streams (each launch runs at once) and cuLaunchKernel"
)
__all__ = ["CUdevice_attribute", "CUdeviceptr", "CUresult"]
OK = CUresult.CUDA_SUCCESS
_ATTRIBUTES = {
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,  # the course's NVRTC target, sm_90
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
    CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE: 32,
}
_MEMORY: dict[int, np.ndarray] = {}  # address -> the bytes cuMemAlloc handed out (kept alive until cuMemFree)


class _Handle:
    """An opaque handle (device, context, module, function, stream), as the bindings return."""

    def __init__(self, kind, value=0, **data):
        self.kind, self.value, self.data = kind, value, data

    def __int__(self):
        return self.value

    def __repr__(self):
        return f"<CU{self.kind} {self.value} (CPU stand-in)>"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _launch.needs_gpu(f"driver.{name}", SUPPORTED)


def _handle(value, kind: str, call: str, made_by: str):
    """A handle the stand-in gave out (a CUmodule, a CUfunction), or one sentence saying what came instead
    (cuda.bindings raises a TypeError from its Cython code)."""
    if not isinstance(value, _Handle) or value.kind != kind:
        raise LearnerTypeError(
            f"{call} needs the CU{kind} that {made_by} returned (through check()), not {shown(value)}."
        )
    return value


def cuInit(Flags):  # noqa: N802, N803 - the driver's names
    return (OK,)


def cuDriverGetVersion():  # noqa: N802
    return (OK, 13000)


def cuDeviceGet(ordinal):  # noqa: N802
    if isinstance(ordinal, bool) or not isinstance(ordinal, (int, np.integer)):
        raise LearnerTypeError(f"cuDeviceGet takes the device's number, such as cuDeviceGet(0), not {shown(ordinal)}.")
    if int(ordinal) != 0:
        return (CUresult.CUDA_ERROR_INVALID_DEVICE, None)
    return (OK, _Handle("device", 0))


def cuDeviceGetAttribute(attrib, dev):  # noqa: N802
    if attrib not in _ATTRIBUTES:
        raise _launch.needs_gpu(f"cuDeviceGetAttribute({attrib.name})", SUPPORTED)
    return (OK, _ATTRIBUTES[attrib])


def cuDevicePrimaryCtxRetain(dev):  # noqa: N802
    return (OK, _Handle("context", 1))


def cuDevicePrimaryCtxRelease(dev):  # noqa: N802
    return (OK,)


def cuCtxSetCurrent(ctx):  # noqa: N802
    return (OK,)


def cuModuleLoadData(image):  # noqa: N802
    data = bytes(image) if isinstance(image, (bytes, bytearray, memoryview)) else None
    if data is None:
        raise _launch.needs_gpu("cuModuleLoadData from a pointer", SUPPORTED)
    known = cuda_c.source_of(data)
    if known is not None:  # compiled by helpers.cuda_c here: run its source's PTX, with line information
        source, extern_c, options = known
        source = 'extern "C" { ' + source + "\n}\n" if extern_c else source
        ptx_text = _launch.compile_ptx(source, tuple(options))[0]
    elif data[:4] == b"\x7fELF":
        raise _launch.needs_gpu("Loading a CUBIN not compiled by helpers.cuda_c in this process", SUPPORTED)
    elif b".version" not in data:  # neither a CUBIN nor PTX: the driver's answer on an H200
        return (CUresult.CUDA_ERROR_INVALID_IMAGE, None)
    else:  # PTX from elsewhere: it runs, but a verdict cannot quote the source
        source, ptx_text = None, data.rstrip(b"\0 ").decode(errors="replace")
    return (OK, _Handle("module", id(data), source=source, ptx=ptx_text))


def cuModuleGetFunction(hmod, name):  # noqa: N802
    hmod = _handle(hmod, "module", "cuModuleGetFunction", "cuModuleLoadData")
    name = name.decode() if isinstance(name, bytes) else str(name)
    mod = parse(hmod.data["ptx"])
    if name not in mod.functions or not mod.functions[name].entry:
        return (CUresult.CUDA_ERROR_NOT_FOUND, None)
    return (OK, _Handle("function", id(hmod) + 1, module=hmod, name=name, params=mod.functions[name].params))


def cuModuleUnload(hmod):  # noqa: N802
    return (OK,)


def cuMemAlloc(bytesize):  # noqa: N802
    buf = np.zeros(max(_launch.whole_number(bytesize, "cuMemAlloc's size in bytes"), 1), np.uint8)
    ptr = _launch.register(buf)
    _MEMORY[ptr] = buf
    return (OK, CUdeviceptr(ptr))


def cuMemFree(dptr):  # noqa: N802
    return (OK,) if _MEMORY.pop(int(dptr), None) is not None else (CUresult.CUDA_ERROR_INVALID_VALUE,)


def _device_bytes(dptr, nbytes):
    mem = _launch.resolve(int(dptr), np.uint8)
    if mem is None or len(mem) < nbytes:
        raise LearnerError(f"cuMemcpy: {nbytes} bytes at {int(dptr):#x} are not inside one cuMemAlloc allocation.")
    return mem[:nbytes]


def cuMemcpyHtoD(dstDevice, srcHost, ByteCount):  # noqa: N802, N803
    src = srcHost if isinstance(srcHost, (bytes, np.ndarray)) else ctypes.string_at(int(srcHost), int(ByteCount))
    _device_bytes(dstDevice, int(ByteCount))[:] = np.frombuffer(bytes(src)[: int(ByteCount)], np.uint8)
    return (OK,)


def cuMemcpyDtoH(dstHost, srcDevice, ByteCount):  # noqa: N802, N803
    data = _device_bytes(srcDevice, int(ByteCount)).tobytes()
    ctypes.memmove(int(dstHost) if not isinstance(dstHost, np.ndarray) else dstHost.ctypes.data, data, len(data))
    return (OK,)


def cuStreamCreate(Flags):  # noqa: N802, N803
    return (OK, _Handle("stream", 1))


def cuStreamSynchronize(hStream):  # noqa: N802, N803
    return (OK,)


def cuStreamDestroy(hStream):  # noqa: N802, N803
    return (OK,)


def cuCtxSynchronize():  # noqa: N802
    return (OK,)


def _read_params(f, kernel_params):
    """The arguments as the driver reads them: kernelParams[i] is the address of argument i's value."""
    if not isinstance(kernel_params, int) and not isinstance(kernel_params, np.integer):
        raise _launch.needs_gpu("cuLaunchKernel with kernelParams given as Python objects", SUPPORTED)
    args = []
    for i, p in enumerate(f.data["params"]):
        addr = ctypes.c_uint64.from_address(int(kernel_params) + 8 * i).value
        raw = ctypes.string_at(addr, p.size)
        dt = np.dtype(DTYPES.get(p.type, np.uint8)) if p.size in (1, 2, 4, 8) else None
        if dt is None or dt.itemsize != p.size:
            raise _launch.needs_gpu(f"a {p.size}-byte kernel parameter", SUPPORTED)
        value = np.frombuffer(raw, dt)[0]
        args.append(int(value) if p.size == 8 and _launch.resolve(int(value.view(np.uint64))) is not None else value)
    return args


def cuLaunchKernel(  # noqa: N802
    f,
    gridDimX,  # noqa: N803
    gridDimY,  # noqa: N803
    gridDimZ,  # noqa: N803
    blockDimX,  # noqa: N803
    blockDimY,  # noqa: N803
    blockDimZ,  # noqa: N803
    sharedMemBytes,  # noqa: N803
    hStream,  # noqa: N803
    kernelParams,  # noqa: N803
    extra,
):
    if extra not in (0, None):
        raise _launch.needs_gpu("cuLaunchKernel with extra=", SUPPORTED)
    f = _handle(f, "function", "cuLaunchKernel", "cuModuleGetFunction")
    sizes = (gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ)
    if all(isinstance(v, (int, np.integer)) for v in sizes) and min(sizes) < 1:
        return (CUresult.CUDA_ERROR_INVALID_VALUE,)  # as the driver answers a launch of no threads
    name, mod = f.data["name"], f.data["module"]
    args = _launch.pointer_args(_read_params(f, kernelParams), mod.data["source"], name)
    _launch.run(
        "Driver API",
        mod.data["source"],
        mod.data["ptx"],
        name,
        (gridDimX, gridDimY, gridDimZ),
        (blockDimX, blockDimY, blockDimZ),
        args,
        shared=sharedMemBytes,
    )
    return (OK,)
