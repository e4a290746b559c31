"""What every stand-in shares: "device" memory, compiling with NVRTC, and one launch in helpers.ptx.

Why one module: CuPy, PyCUDA, cuda.core and the driver API differ in how they pack arguments, but
on the CPU they all end the same way: the kernel's PTX runs thread by thread in helpers.ptx on
NumPy arrays, and whatever the trace finds (out of bounds, a race, a divergent barrier, warp
misuse) becomes one sentence naming the kernel, the thread and the source line.

"Device" memory is host memory here. Every stand-in allocation is registered by its address, so a
raw pointer (``x_d.data.ptr``, ``int(drv.mem_alloc(n))``, a ``CUdeviceptr``) passed to a launch is
found again and handed to the interpreter as the array it points into.
"""

from __future__ import annotations

import functools
import re
import types
import weakref
from typing import NamedTuple

import numpy as np

from .. import cuda_c, ptx
from ..errors import GPURequired, KernelError, LearnerError, LearnerTypeError, LearnerValueError, shown

_ALLOCATIONS: dict[int, weakref.ref] = {}  # start address -> the NumPy array that owns the bytes


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def register(a: np.ndarray) -> int:
    """Remember the memory under `a` as an allocation; return `a`'s own address (a "device pointer")."""
    root = _root(a)
    start = root.__array_interface__["data"][0]
    if start not in _ALLOCATIONS or _ALLOCATIONS[start]() is not root:
        _ALLOCATIONS[start] = weakref.ref(root)
    return a.__array_interface__["data"][0]


def resolve(ptr, dtype=None) -> np.ndarray | None:
    """The memory a pointer points into, from the pointer to the allocation's end, as `dtype` (else
    the allocation's own), or None when `ptr` is in no stand-in allocation."""
    ptr = int(ptr)
    for start, ref in list(_ALLOCATIONS.items()):
        root = ref()
        if root is None:
            del _ALLOCATIONS[start]
            continue
        if start <= ptr < start + max(root.nbytes, 1):
            raw = root.reshape(-1).view(np.uint8)[ptr - start :]
            dt = np.dtype(dtype) if dtype is not None else root.dtype
            return raw[: len(raw) // dt.itemsize * dt.itemsize].view(dt)
    return None


# ----------------------------------------------------------------------------- compiling
@functools.lru_cache(maxsize=64)
def compile_ptx(source: str, options: tuple = (), name_expressions: tuple = (), arch: str = "compute_90"):
    """(PTX text, {name expression: lowered name}) for `source`, with -lineinfo so that a verdict
    can quote the source line. NVRTC runs on the CPU; the lowered names are how CuPy's RawModule
    finds template instantiations (nvrtcAddNameExpression / nvrtcGetLoweredName)."""
    from cuda.bindings import nvrtc

    check = cuda_c.check
    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), b"standin.cu", 0, [], []))
    try:
        for expr in name_expressions:
            check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()))
        opts = [f"--gpu-architecture={arch}", "-lineinfo", *cuda_c.include_options(), *options]  # cuda_fp16.h...
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = bytearray(check(nvrtc.nvrtcGetProgramLogSize(prog)))  # NVRTC writes into it: never bytes
            check(nvrtc.nvrtcGetProgramLog(prog, log))
            text = bytes(log).rstrip(b"\0 ").decode(errors="replace")
            raise cuda_c.CompileError(cuda_c.compile_failure("the kernel", text), text)
        out = bytearray(check(nvrtc.nvrtcGetPTXSize(prog)))
        check(nvrtc.nvrtcGetPTX(prog, out))
        out = bytes(out)
        lowered = {e: check(nvrtc.nvrtcGetLoweredName(prog, e.encode())).decode() for e in name_expressions}
        return out.rstrip(b"\0 ").decode(), lowered
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


# ----------------------------------------------------------------------------- C signatures
_C_TYPES = {v: k for k, v in cuda_c._CTYPES.items()} | {"long": "int64", "unsigned long": "uint64", "size_t": "uint64"}


class CParam(NamedTuple):
    """One parameter of a CUDA C kernel as declared: `const float* x` is ("x", True, float32)."""

    name: str
    pointer: bool
    dtype: object  # the NumPy dtype of the C type (of what a pointer points to), or None if unknown


def c_params(text: str) -> list[CParam]:
    """'const float* x, int n' -> [CParam("x", True, float32), CParam("n", False, int32)]."""
    out = []
    for p in filter(None, (q.strip() for q in text.split(","))):
        words = p.replace("*", " * ").replace("&", " & ").split()
        drop = ("const", "__restrict__", "*", "&", "volatile")
        typ = " ".join(w for w in words[:-1] if w not in drop)
        dt = _C_TYPES.get(typ)
        out.append(CParam(words[-1], "*" in words, np.dtype(dt) if dt and dt != "bool" else None))
    return out


def kernel_signature(source: str, kernel: str):
    """The parameters of `kernel` as declared in `source` (see c_params), or [] when not found."""
    m = re.search(rf"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?{re.escape(kernel)}\s*\(([^)]*)\)", source)
    return c_params(m.group(1)) if m else []


# ----------------------------------------------------------------------------- launching
def source_text(value, what: str = "the kernel's source") -> str:
    """CUDA C given to a stand-in: a string (bytes are decoded), or one sentence saying what came instead."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if not isinstance(value, str):
        raise LearnerTypeError(f"{what} must be a string of CUDA C, not {shown(value)}.")
    return value


def whole_number(value, what: str, minimum: int = 0) -> int:
    """A count a stand-in is given (bytes, a device number): a whole number of at least `minimum`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise LearnerValueError(f"{what} must be a whole number of at least {minimum}, not {shown(value)}.")
    return int(value)


def dims(value, what: str, empty_ok: bool = False) -> tuple:
    """An int or a 1-3 tuple of launch dimensions, as every library accepts them. A 0 is refused,
    as cuda.core, PyCUDA and the driver refuse it, unless ``empty_ok`` (CuPy launches nothing:
    checked on an H200)."""

    def whole(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    if whole(value):
        out = (int(value),)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3 and all(whole(v) for v in value):
        out = tuple(int(v) for v in value)
    else:
        raise LearnerError(
            f"{what} must be an int or a tuple of 1 to 3 ints, such as 4 or (16, 16), not {shown(value)}."
        )
    if min(out) < 1 and not (empty_ok and min(out) == 0):  # cuda.core: "value must be >= 1"; PyCUDA: invalid argument
        raise LearnerError(
            f"{what} {shown(value)} launches nothing: every dimension must be at least 1, e.g. "
            "(n + threads - 1) // threads blocks for n elements."
        )
    return out


def pointer_args(args, source: str, kernel: str):
    """Raw pointers (ints, allocations) among `args` replaced by the arrays they point into, typed by
    the kernel's declared parameter types; other values are left as they are."""
    sig = kernel_signature(source or "", kernel)
    out = []
    for pos, a in enumerate(args):
        if isinstance(a, np.ndarray) or isinstance(a, (float, bool, np.generic)):
            out.append(a)
            continue
        try:
            ptr = int(a)
        except (TypeError, ValueError):
            raise LearnerError(
                f"Argument {pos} of {kernel} is a {type(a).__name__}, which cannot be passed to a kernel."
            ) from None
        dt = sig[pos].dtype if pos < len(sig) and sig[pos].pointer else None
        found = resolve(ptr, dt)
        if found is None and not isinstance(a, int):
            raise LearnerError(
                f"Argument {pos} of {kernel} points at memory the CPU stand-in did not allocate "
                f"(address {ptr:#x}); allocate it through the library first."
            )
        out.append(found if found is not None else a)
    return out


def run(library, source, ptx_text, kernel, grid, block, args, *, shared=0, python_scalars="refuse"):
    """Run one launch in helpers.ptx and raise KernelError with the trace's first verdict, if any.

    `library` names the stand-in in the sentence ("CuPy RawKernel"); `ptx_text` may be None (then
    `source` is compiled); arrays in `args` are updated in place, as a launch would update them."""
    empty_ok = library.startswith("CuPy")
    grid, block = dims(grid, "grid", empty_ok), dims(block, "block", empty_ok)
    if min(grid + block) == 0:  # CuPy: a launch of no threads does nothing, and says nothing
        return None
    # plain NumPy views of the same memory: the interpreter indexes them, and a stand-in's array
    # type (CuPy's x[i] is a 0-d array) is for the learner's code, not for it
    args = tuple(a.view(np.ndarray) if isinstance(a, np.ndarray) and type(a) is not np.ndarray else a for a in args)
    r = ptx.run(
        ptx_text if ptx_text is not None else source,
        kernel,
        grid,
        block,
        args,
        shared_bytes=shared or 0,  # helpers.ptx.run says what is wrong with it
        source=source,
        python_scalars=python_scalars,
    )
    verdicts = ptx.to_trace(r).verdicts
    if verdicts:
        raise KernelError(
            f"{library} launch of {r.kernel_name} (grid {grid}, block {block}) on the CPU stand-in: "
            f"{verdicts[0].message}"
        )
    return r


def needs_gpu(what: str, supported: str) -> GPURequired:
    """The one sentence for a feature a stand-in does not model."""
    return GPURequired(f"{what} needs a GPU: the CPU stand-in {supported}.")


def namespace(name: str, supported: str, **members) -> types.ModuleType:
    """A module-like object with `members`; any other attribute raises the one-sentence GPURequired."""
    mod = types.ModuleType(name)
    mod.__dict__.update(members)

    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise needs_gpu(f"{name}.{attr}", supported)

    mod.__getattr__ = __getattr__
    return mod
