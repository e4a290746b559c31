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


def _param_names(source, kernel):
    if not source:
        return []
    m = re.search(rf"\b{re.escape(kernel)}\s*\(([^)]*)\)", source)
    if not m:
        return []
    return [
        re.findall(r"\w+", p)[-1] if re.findall(r"\w+", p) else f"arg{i}" for i, p in enumerate(m.group(1).split(","))
    ]


def local_bytes(kernel, functions) -> int:
    """A thread's local arrays: the kernel's own, plus the largest device function's (ptxas's stack frame)."""
    size = lambda f: sum(v.size for v in f.vars if v.space == "local")  # noqa: E731 - one expression, used twice
    return size(kernel) + max((size(f) for f in functions.values() if not f.entry), default=0)
