"""CUDA C from Python, kept small: compile with NVRTC (no GPU needed) and check binding results.

- ``compile(src, target="ptx"|"cubin", arch=...)`` runs NVRTC through ``cuda.bindings.nvrtc``;
  a failed compile raises ``CompileError`` whose message is the compiler's own error lines.
- The CUDA headers this environment ships (cuda_fp16.h, cuda_bf16.h...: ``header_dirs``) are on
  NVRTC's include path; a header it does not ship is named in one sentence, not NVRTC's raw error.
- ``check(result)`` unpacks the ``(err, value, ...)`` tuples every ``cuda.bindings`` call
  returns, raising ``CudaError`` with the error's name when ``err`` is not success.
- ``elementwise_source`` / ``reduction_source`` / ``pycuda_elementwise_source`` wrap the C
  snippets given to CuPy's ``ElementwiseKernel``/``ReductionKernel`` and PyCUDA's
  ``ElementwiseKernel`` in a kernel equivalent to what those libraries generate, so the
  snippets can be compiled (and so checked) on a machine without a GPU.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

from .errors import CourseError, LearnerTypeError, LearnerValueError, shown

DEFAULT_ARCH = "sm_90"  # H100; any recent arch works for a compile-only check on the CPU


class CompileError(CourseError):
    """NVRTC rejected the source; the message holds its error lines."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class CudaError(CourseError):
    """A ``cuda.bindings`` call returned an error code."""


# CUBINs and PTX compiled in this process -> (source, extern_c, options). A CUBIN is machine code
# that no CPU can run, and PTX compiled without -lineinfo cannot name a source line, so the driver
# API's CPU stand-in (helpers.standins.driver) looks the source up here and runs PTX compiled from
# it with line information. Bounded: a notebook compiles a handful of kernels.
_COMPILED: dict[bytes, tuple[str, bool, tuple]] = {}


def source_of(binary: bytes):
    """(source, extern_c, options) of a CUBIN or PTX that ``compile`` produced in this process, or None."""
    if not isinstance(binary, (bytes, bytearray, memoryview)):
        raise LearnerTypeError(f"source_of needs what compile() returned (bytes), not {shown(binary)}.")
    return _COMPILED.get(bytes(binary).rstrip(b"\0 "))


# ----------------------------------------------------------------------------- (err, value) tuples


def _error_name(err) -> str:
    """The enum's own name (CUDA_ERROR_INVALID_VALUE, NVRTC_ERROR_COMPILATION...): needs no driver."""
    return getattr(err, "name", None) or str(err)


def _is_code(err) -> bool:
    """An error code: an int or one of cuda.bindings' enums (which convert with int())."""
    if isinstance(err, (bool, float, str, bytes)):
        return False
    try:
        int(err)
    except Exception:  # anything that is not a number is not an error code
        return False
    return True


def check(result):
    """``check(driver.cuDeviceGet(0))`` -> the device. None for no values, a tuple for several.

    Every function in ``cuda.bindings`` returns a tuple whose first item is the error code;
    C's output parameters become the other items. Ignoring the code hides failures, so
    every call goes through this.
    """
    if not isinstance(result, tuple) or not result or not _is_code(result[0]):
        raise LearnerTypeError(
            "check() expects the tuple a cuda.bindings call returns, such as check(driver.cuDeviceGet(0)), "
            f"not {shown(result)}: pass the call's result itself."
        )
    err, *values = result
    if int(err) != 0:  # every success code (CUDA_SUCCESS, cudaSuccess, NVRTC_SUCCESS) is 0
        raise CudaError(f"CUDA call failed: {_error_name(err)} ({int(err)})")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _texts(**named) -> None:
    """Each named argument is CUDA C text (a str, or bytes where source is meant), or one sentence says so."""
    for what, value in named.items():
        if not isinstance(value, (str, bytes) if what in ("src", "ptx") else str):
            raise LearnerTypeError(f"{what} must be a string of CUDA C, not {shown(value)}.")
        if isinstance(value, bytes):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as e:
                raise LearnerValueError(
                    f"{what} is bytes that are not UTF-8 text (byte {e.start} is {value[e.start]:#04x}): pass the "
                    "CUDA C source as a str, or read the file with open(path, encoding='utf-8')."
                ) from None


def _listed(value) -> tuple:
    try:
        return tuple(value)
    except Exception:  # not iterable (or its iterator raises): not a tuple of names
        return (None,)


# ----------------------------------------------------------------------------- NVRTC


def _first_errors(log: str, limit: int = 4) -> str:
    lines = [ln.strip() for ln in log.splitlines() if "error" in ln and "detected in the compilation" not in ln]
    return "; ".join(lines[:limit]) or log.strip()[:400]


# Headers a learner's kernel may include, in the order a sentence lists the ones found.
_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cooperative_groups.h", "cuda_runtime.h", "math_constants.h")


@functools.cache
def header_dirs() -> tuple:
    """Folders of CUDA headers shipped in this Python environment, for NVRTC's include path.

    Why these and not a system toolkit: a learner's kernel must compile the same on every machine
    with the course's environment. The CUDA runtime wheel (GPU set: nvidia/cu13/include or
    nvidia/cuda_runtime/include) ships cuda_fp16.h, cuda_bf16.h, cooperative_groups.h and mma.h
    (its crt/mma.h comes from nvidia-cuda-crt, nv/target and cuda/std from nvidia-cuda-cccl); the
    CPU set installs the same three wheels for their headers, and numba-cuda ships cuda_fp16.h,
    cuda_bf16.h and cuda_fp8.h for each CUDA major (numba_cuda/numba/cuda/include/13)."""
    found = []
    spec = importlib.util.find_spec("nvidia")
    for root in list(spec.submodule_search_locations or ()) if spec else ():
        found += sorted(Path(root).glob("*/include"))
    spec = importlib.util.find_spec("numba_cuda")
    if spec and spec.submodule_search_locations:
        from cuda.bindings import nvrtc

        major = check(nvrtc.nvrtcVersion())[0]
        found.append(Path(list(spec.submodule_search_locations)[0]) / "numba" / "cuda" / "include" / str(major))
    dirs = [d for d in found if any((d / h).is_file() for h in _HEADERS)]
    # CCCL's wheel puts cuda/std/... under include/cccl, which cooperative_groups.h includes
    dirs += [d / "cccl" for d in dirs if (d / "cccl" / "cuda").is_dir()]
    return tuple(str(d) for d in dirs)


def include_options() -> tuple:
    return tuple(f"--include-path={d}" for d in header_dirs())


def compile_failure(what: str, log: str) -> str:
    """The sentence for a failed NVRTC compile: a header this environment lacks by name, else the
    compiler's own error lines."""
    m = re.search(r'(?:could not|cannot) open source file "([^"]+)"', log)
    if not m:
        return f"{what} does not compile: {_first_errors(log)}"
    shipped = [h for h in _HEADERS if any((Path(d) / h).is_file() for d in header_dirs())]
    return (
        f"{what} does not compile: it includes <{m.group(1)}>, a header this environment does not ship, so "
        f"NVRTC cannot find it (the CUDA headers here: {', '.join(shipped) or 'none'}); write the kernel "
        "without it, or run it on a GPU machine with a CUDA toolkit that has it."
    )


def compile(
    src: str | bytes,
    *,
    target: str = "ptx",
    arch: str | None = None,
    name: str = "kernel.cu",
    options: tuple = (),
    extern_c: bool = False,
) -> bytes:  # noqa: A001 - the natural name
    """Compile CUDA C with NVRTC and return PTX (text, as bytes) or a CUBIN (ELF bytes).

    ``arch`` is "sm_90"-style; PTX targets use the matching "compute_90". ``extern_c=True``
    wraps the source in ``extern "C" { ... }`` the way PyCUDA's SourceModule does.
    """
    if not isinstance(target, str) or target not in ("ptx", "cubin"):
        raise LearnerValueError(f"target must be 'ptx' or 'cubin', not {shown(target)}.")
    _texts(src=src, name=name)
    if arch is not None and (not isinstance(arch, str) or not re.fullmatch(r"(sm|compute)_\d+[a-z]?", arch)):
        raise LearnerValueError(f"arch must be a string such as 'sm_90' (or left out), not {shown(arch)}.")
    if isinstance(options, (str, bytes)) or not all(isinstance(o, str) for o in _listed(options)):
        raise LearnerTypeError(f"options must be a tuple of strings such as ('-lineinfo',), not {shown(options)}.")
    from cuda.bindings import nvrtc

    text = src.decode(errors="replace") if isinstance(src, bytes) else src
    if extern_c:
        text = 'extern "C" { ' + text + "\n}\n"  # on the first line: error line numbers stay right
    arch = arch or DEFAULT_ARCH
    sm = arch.split("_")[-1]
    opts = [f"--gpu-architecture={'sm' if target == 'cubin' else 'compute'}_{sm}", *include_options(), *options]
    prog = check(nvrtc.nvrtcCreateProgram(text.encode(), name.encode(), 0, [], []))
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        # NVRTC writes into the buffer it is given: a mutable one (b" " * 1 is CPython's shared
        # one-byte object, and writing a NUL into it turns every b" " in the process into b"\x00").
        log = bytearray(check(nvrtc.nvrtcGetProgramLogSize(prog)))
        check(nvrtc.nvrtcGetProgramLog(prog, log))
        log = bytes(log).rstrip(b"\x00 ").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(compile_failure(name, log), log)
        get_size, get = (
            (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
            if target == "cubin"
            else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
        )
        out = bytearray(check(get_size(prog)))
        check(get(prog, out))
        out = bytes(out)
        if len(_COMPILED) >= 64:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[out.rstrip(b"\0 ")] = (src.decode() if isinstance(src, bytes) else src, extern_c, tuple(options))
        return out
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def entry_points(ptx: bytes | str) -> dict[str, int]:
    """Kernel names in PTX and their parameter counts: {"saxpy": 4}. Mangled names stay mangled."""
    _texts(ptx=ptx)
    text = ptx.decode(errors="replace") if isinstance(ptx, bytes) else ptx
    found = {}
    for m in re.finditer(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", text):
        found[m.group(1)] = len(re.findall(r"\.param", m.group(2)))
    return found


def cubin_arch(cubin: bytes) -> str:
    """The SM a CUBIN was built for, read from its ELF header ("sm_90")."""
    if not isinstance(cubin, (bytes, bytearray)):
        raise LearnerTypeError(
            f"cubin_arch needs a CUBIN's bytes (from compile(src, target='cubin')), not {shown(cubin)}."
        )
    if cubin[:4] != b"\x7fELF" or len(cubin) < 0x34:  # the ELF header holds the flags read below
        raise LearnerValueError("not a CUBIN: an ELF file starts with b'\\x7fELF'; pass compile(src, target='cubin').")
    flags = int.from_bytes(cubin[0x30:0x34], "little")
    return f"sm_{(flags >> 8) & 0xFF}"


# ----------------------------------------------------------------------------- library snippets

# NumPy-style type names used by CuPy's ElementwiseKernel -> C types. One capital letter
# (T, U...) is a type placeholder CuPy fills in at call time; float stands in for it here.
_CTYPES = {
    "float16": "__half",
    "float32": "float",
    "float64": "double",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "bool": "bool",
}


def _params(spec: str):
    """'float32 x, raw T y' -> [(ctype, name, raw)]."""
    _texts(parameters=spec)
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        words = part.split()
        raw = words[0] == "raw"
        words = words[1:] if raw else words
        if len(words) != 2:
            raise LearnerValueError(f"cannot read parameter {part!r}: write 'type name', e.g. 'float32 x'.")
        typ, name = words
        ctype = "float" if re.fullmatch(r"[A-Z]", typ) else _CTYPES.get(typ)
        if ctype is None:
            raise LearnerValueError(f"unknown type {typ!r} in {part!r}: use a NumPy name such as float32 or int32.")
        out.append((ctype, name, raw))
    return out


def _placeholder_typedefs(*specs) -> str:
    names = sorted({w for s in specs for w in re.findall(r"\b([A-Z])\b", s)})
    return "".join(f"typedef float {n};\n" for n in names)


def elementwise_source(
    in_params: str, out_params: str, operation: str, name: str = "elementwise", scalars: tuple = ()
) -> str:
    """A kernel with the shape of the one CuPy generates for ``ElementwiseKernel``.

    Non-raw parameters are the i-th elements (inputs const); ``raw`` parameters are whole
    arrays indexed by the operation; ``i`` and ``_ind.size()`` exist as in CuPy. Inputs named
    in ``scalars`` are the ones the call passes as scalars: CuPy passes those **by value**
    (``const float s`` in the kernel's parameter list), not through a pointer.
    """
    _texts(operation=operation, name=name)
    if not re.fullmatch(r"[A-Za-z_]\w*", name):  # it becomes the kernel's C name, as in CuPy
        raise LearnerValueError(f"name must be a C identifier such as 'scale_add' (letters, digits, _), not {name!r}.")
    ins, outs = _params(in_params), _params(out_params)
    if isinstance(scalars, str) or not all(isinstance(v, str) for v in _listed(scalars)):
        raise LearnerTypeError(f"scalars must be a tuple of parameter names, such as ('a',), not {shown(scalars)}.")
    unknown = set(scalars) - {pname for _, pname, _ in ins}
    if unknown:
        raise LearnerValueError(f"scalars {sorted(unknown)} are not input parameters of {in_params!r}.")
    args, loads = [], []
    for ctype, pname, raw in ins + outs:
        is_out = (ctype, pname, raw) in outs
        if pname in scalars and not is_out:
            args.append(f"const {ctype} {pname}")
        elif raw:
            args.append(f"{ctype}* {pname}")
        else:
            args.append(f"{ctype}* _{pname}")
            loads.append(f"{ctype}& {pname} = _{pname}[i];" if is_out else f"const {ctype} {pname} = _{pname}[i];")
    return (
        _placeholder_typedefs(in_params, out_params)
        + "struct _Index { long long n; __device__ long long size() const { return n; } };\n"
        + f'extern "C" __global__ void {name}({", ".join(args)}, long long _n) {{\n'
        + "  _Index _ind = {_n};\n"
        + "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < _n;"
        + " i += (long long)blockDim.x * gridDim.x) {\n"
        + "".join(f"    {ld}\n" for ld in loads)
        + f"    {operation};\n  }}\n}}\n"
    )


REDUCTION_BLOCK = 512  # CuPy's _default_block_size for reductions (cupy/_core/_reduction.pyx)


def reduction_threads(n: int) -> int:
    """Threads whose partial results CuPy's reduction kernel combines for a full reduction of ``n``
    elements: 512 for 512 or more; fewer for a small input (_get_block_specs: a block stride of the
    power of two at most 512 // n leaves 512 // stride threads on the one output). An H200 with CuPy
    14.2 added a wrong identity 1, 2, 64 and 128 times for n = 1, 2, 64 and 100; from a few hundred
    elements CuPy may use CUB's block reduction instead, whose tree combines partial results as well."""
    x = max(1, REDUCTION_BLOCK // max(1, int(n)))
    return REDUCTION_BLOCK // (1 << (x.bit_length() - 1))


def reduction_source(
    in_params: str,
    out_params: str,
    map_expr: str,
    reduce_expr: str,
    post_map_expr: str,
    identity: str,
    name: str = "reduction",
    reduce_type: str | None = None,
) -> str:
    """A kernel with the shape of CuPy's ``ReductionKernel``: each thread maps its strided share of
    the elements and folds them into a partial result from ``identity`` (``a`` the partial result,
    ``b`` the mapped element), then a shared-memory tree combines the threads' partial results
    with the same ``reduce_expr`` (``a`` and ``b`` both partial results), and ``post_map_expr``
    (which sees the total as ``a``) writes the outputs. Why a tree and not one loop: a
    ``reduce_expr`` that is right only for an accumulator and one element (``a + b * b``) gives a
    wrong total on a GPU, and must here too. Launch one block of ``reduction_threads(n)`` threads
    (a power of two, at most 512)."""
    _texts(map_expr=map_expr, reduce_expr=reduce_expr, post_map_expr=post_map_expr, identity=identity, name=name)
    ins, outs = _params(in_params), _params(out_params)
    if not outs:
        raise LearnerValueError("a reduction needs at least one output parameter, such as 'float32 y'.")
    acc = _CTYPES.get(reduce_type, reduce_type) if reduce_type else outs[0][0]
    args = [f"const {c}* _{n}" for c, n, _ in ins] + [f"{c}* _{n}" for c, n, _ in outs]
    loads = "".join(f"    const {c} {n} = _{n}[_j];\n" for c, n, _ in ins)
    outs_ref = "".join(f"    {c}& {n} = _{n}[0];\n" for c, n, _ in outs)
    return (
        _placeholder_typedefs(in_params, out_params)
        + f'extern "C" __global__ void {name}({", ".join(args)}, long long _n) {{\n'
        + f"  typedef {acc} _type_reduce;\n"
        + f"  __shared__ __align__(16) char _sdata_raw[{REDUCTION_BLOCK} * sizeof(_type_reduce)];\n"
        + "  _type_reduce* _sdata = reinterpret_cast<_type_reduce*>(_sdata_raw);\n"
        + "  const unsigned int _tid = threadIdx.x;\n"
        + f"  _type_reduce _s = _type_reduce({identity});\n"
        + "  for (long long _j = _tid; _j < _n; _j += blockDim.x) {\n"
        + loads
        + f"    const _type_reduce _m = _type_reduce({map_expr});\n"
        + f"    {{ const _type_reduce a = _s, b = _m; _s = ({reduce_expr}); }}\n  }}\n"
        + "  _sdata[_tid] = _s;\n  __syncthreads();\n"
        + "  for (unsigned int _half = blockDim.x / 2; _half > 0; _half >>= 1) {\n"
        + "    if (_tid < _half) {\n"
        + f"      const _type_reduce a = _sdata[_tid], b = _sdata[_tid + _half]; _sdata[_tid] = ({reduce_expr});\n"
        + "    }\n    __syncthreads();\n  }\n"
        + "  if (_tid == 0) {\n    const _type_reduce a = _sdata[0];\n"
        + outs_ref
        + f"    {post_map_expr};\n  }}\n}}\n"
    )


def pycuda_elementwise_source(arguments: str, operation: str, name: str = "elementwise") -> str:
    """The kernel PyCUDA's ``ElementwiseKernel(arguments, operation)`` generates: C arguments
    as written, plus a grid-stride loop over ``i`` up to ``n``."""
    _texts(arguments=arguments, operation=operation, name=name)
    return (
        f'extern "C" __global__ void {name}({arguments}, unsigned long n) {{\n'
        "  unsigned tid = threadIdx.x; unsigned total_threads = gridDim.x * blockDim.x;\n"
        "  unsigned cta_start = blockDim.x * blockIdx.x;\n"
        "  for (unsigned long i = cta_start + tid; i < n; i += total_threads) {\n"
        f"    {operation};\n  }}\n}}\n"
    )


def signature_probe(kernel: str, c_params: str) -> str:
    """C++ appended to a source so that it compiles only if ``kernel`` takes exactly ``c_params``,
    const and pointer order included: a swapped ``float* out, const float* x`` would pass an
    output where an input is expected, so it is a wrong signature too."""
    _texts(kernel=kernel, c_params=c_params)
    types = ", ".join(" ".join(p.split()[:-1]) for p in c_params.split(","))
    return (
        "\ntemplate<class A, class B> struct _same_t { static const bool v = false; };\n"
        "template<class A> struct _same_t<A, A> { static const bool v = true; };\n"
        f"static_assert(_same_t<decltype(&{kernel}), void (*)({types})>::v, "
        f'"SIGNATURE: the kernel must be declared as {kernel}({c_params})");\n'
    )
