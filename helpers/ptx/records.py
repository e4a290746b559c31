"""How a run names things: source locations, demangled names, shared arrays and parameters.

A Location carries a `code` stand-in (co_filename, co_name) because the tracer's verdicts read
one from out-of-bounds and barrier records, where the Numba tracer stores a real code object.
Arrays are described by helpers.accesses.ArrayInfo, as in the tracer.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass

import numpy as np

from .values import DTYPES


@dataclass(frozen=True)
class SourceRef:
    """Stands where the tracer keeps a code object: verdicts read co_filename / co_name."""

    co_filename: str
    co_name: str


@dataclass
class Location:
    file: str
    line: int
    function: str
    code: SourceRef = None

    @property
    def source(self):
        return linecache.getline(self.file, self.line).strip()


def demangle(name):
    """`_ZZ6reduceE1s` -> "s", `_Z6kernelPfi` -> "kernel"; anything else unchanged."""
    m = re.match(r"_ZZ\d+\w*?E(\d+)(\w+)", name)
    if m:
        return m.group(2)[: int(m.group(1))]
    m = re.match(r"_Z(\d+)(\w+)", name)
    return m.group(2)[: int(m.group(1))] if m else name


_CTYPES = {
    "float": np.float32,
    "double": np.float64,
    "int": np.int32,
    "unsigned": np.uint32,
    "unsigned int": np.uint32,
    "short": np.int16,
    "char": np.int8,
    "unsigned char": np.uint8,
    "long long": np.int64,
    "long": np.int64,
    "unsigned long long": np.uint64,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "uint64_t": np.uint64,
    "float4": np.float32,
    "float2": np.float32,
    "int4": np.int32,
    "bool": np.uint8,
}


def _shared_decl(source, var):
    """(dtype, dims, line) of `__shared__ T var[a][b]` in the CUDA C source, where readable."""
    if not source:
        return None, None, None
    consts = dict(re.findall(r"#define\s+(\w+)\s+\(?(\d+)\)?", source))
    consts.update(re.findall(r"(?:const|constexpr)\s+(?:int|unsigned|size_t)\s+(\w+)\s*=\s*(\d+)\s*;", source))
    pat = (
        r"__shared__\s+(?:__align__\(\d+\)\s+)?((?:unsigned\s+|signed\s+|const\s+)*[A-Za-z_]\w*(?:\s+long)?)"
        rf"\s+{re.escape(var)}\s*((?:\[[^\]]*\])*)"
    )
    m = re.search(pat, source)
    if not m:
        return None, None, None
    line = source[: m.start()].count("\n") + 1
    dt = _CTYPES.get(" ".join(m.group(1).replace("signed ", "").split()))
    dims = []
    for d in re.findall(r"\[([^\]]*)\]", m.group(2)):
        d = d.strip()
        d = consts.get(d, d)
        dims.append(int(d) if d.isdigit() else None)
    return (np.dtype(dt) if dt else None), dims, line


def scalar_size_problem(pos, name, param, value) -> str | None:
    """A NumPy scalar whose size is not its PTX parameter's (the kernel reads param.size bytes of it)."""
    if value.dtype.itemsize == param.size:
        return None
    t = DTYPES.get(param.type)
    return (
        f"Argument {pos} ({name}) is {value.dtype.name} ({value.dtype.itemsize} bytes) but the kernel's parameter "
        f"is .{param.type} ({param.size} bytes): pass np.{t.name if t is not None else 'int32'}(...) instead."
    )


def _param_names(source, kernel):
    if not source:
        return []
    m = re.search(rf"\b{re.escape(kernel)}\s*\(([^)]*)\)", source)
    if not m:
        return []
    return [
        re.findall(r"\w+", p)[-1] if re.findall(r"\w+", p) else f"arg{i}" for i, p in enumerate(m.group(1).split(","))
    ]


_ELEMENT_BYTES = {
    "__half": 2, "half": 2, "__nv_bfloat16": 2, "float": 4, "double": 8, "char": 1, "signed char": 1,
    "unsigned char": 1, "short": 2, "unsigned short": 2, "int": 4, "unsigned int": 4, "unsigned": 4,
    "long long": 8, "unsigned long long": 8, "long long int": 8, "bool": 1,
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}  # fmt: skip
_NOT_TYPE = {"const", "volatile", "__restrict__", "__restrict", "restrict"}


def pointee_types(source, kernel) -> list:
    """Per parameter of ``kernel`` in ``source``: (C element type, its bytes) for a pointer to a known number
    type, else None (a scalar, a struct, a template parameter)."""
    m = re.search(rf"\b{re.escape(kernel)}\s*\(([^)]*)\)", source or "")
    out = []
    for p in m.group(1).split(",") if m else ():
        if "*" not in p:
            out.append(None)
            continue
        words = [w for w in re.findall(r"\w+", p.split("*")[0]) if w not in _NOT_TYPE]
        ctype = " ".join(words)
        out.append((ctype, _ELEMENT_BYTES[ctype]) if ctype in _ELEMENT_BYTES else None)
    return out


_DTYPE_OF = {"float": "float32", "double": "float64", "int": "int32", "unsigned int": "uint32", "__half": "float16"}


def pointee_problem(pos: int, name: str, array, source, kernel) -> str | None:
    """The sentence for an array whose elements are not the size the kernel's pointer declares (a float64
    array for ``float*``): the kernel would treat its bytes as other numbers, which no later verdict names."""
    pointees = pointee_types(source, kernel)
    declared = pointees[pos] if pos < len(pointees) else None
    if not declared:
        return None
    ctype, size = declared
    floating = ctype in ("float", "double", "__half", "half", "__nv_bfloat16")
    if array.dtype.itemsize == size and floating == (array.dtype.kind == "f"):
        return None  # int32 for unsigned int* is the same bits for every count a kernel indexes with
    if ctype in ("__nv_bfloat16", "nv_bfloat16") and array.dtype == np.uint16:
        return None  # NumPy has no bfloat16: its bit patterns in a uint16 array are how a host holds them
    return (
        f"Argument {pos} ({name}) is a {array.dtype.name} array, but the kernel's {name} points to {ctype} "
        f"({size}-byte {'floating-point' if floating else 'integer'} elements): a GPU reads and writes its bytes as "
        f"{ctype}s, so the numbers come out as garbage; "
        f"pass an array of the kernel's type, e.g. {name}.astype(np.{_DTYPE_OF.get(ctype, 'float32')})."
    )


def local_bytes(kernel, functions) -> int:
    """A thread's local arrays: the kernel's own, plus the largest device function's (ptxas's stack frame)."""
    size = lambda f: sum(v.size for v in f.vars if v.space == "local")  # noqa: E731 - one expression, used twice
    return size(kernel) + max((size(f) for f in functions.values() if not f.entry), default=0)
