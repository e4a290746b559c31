"""Every CUDA C source of the course as differential cases, found automatically.

Why automatic: a kernel added to a notebook must be proved on the GPU too, without anyone
remembering to add it here. Sources come from the scan tests/notebooks/test_cuda_sources_compile.py already does
(solutions/ notebooks and helpers/problems/), inputs from the kernel's parameter list; the
exercises' reference answers run on their own `make_inputs`, packed as the grader packs them.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from .case import Case

N, BLOCK = 301, 128  # never a multiple of the block: the last block has idle threads
LENGTH_NAMES = {"n", "_n", "N", "size", "count", "length"}
# Course kernels the interpreter refuses by design, with why: each must still be refused (not run wrongly).
REFUSED = {
    "cluster_sums": "thread-block clusters (barrier.cluster, mapa, ld.shared::cluster) are not interpreted: "
    "notebook 17 launches this kernel on a GPU only",
}
# Course kernels that fault by design, left out of the comparison: a store past its array lands wherever it lands on
# a GPU (the differential run on an H200 found it "ran"), while the interpreter reports the out-of-bounds access,
# which is what notebook 19 shows in CPU mode (tests/notebooks/test_claims_nb19.py).
FAULTS = {
    "far_store": "notebook 19's faulting kernel: it stores far past its array to show how a fault surfaces",
}
# Course kernels that take a launch of their own instead of one thread per element: name -> (grid, block, make).
# Notebook 18's tile kernels: one warp per 16x16 tile of C (M x N) over K, small integers so every order of
# summation gives the same float32 numbers (the GPU's tensor cores and the interpreter must agree exactly).


def _tiles(rng, M=32, N=48, K=64):
    return {
        "a": rng.integers(-3, 4, M * K).astype(np.float16),
        "b": rng.integers(-3, 4, K * N).astype(np.float16),
        "c": rng.integers(-50, 51, M * N).astype(np.float32),
        "M": np.int32(M),
        "N": np.int32(N),
        "K": np.int32(K),
    }


LAUNCHES = {"wmma_ab": ((3, 2), 32, _tiles), "wmma_gemm": ((3, 2), 32, _tiles)}
_CTYPE = {
    "float": np.float32,
    "double": np.float64,
    "int": np.int32,
    "unsigned": np.uint32,
    "unsigned int": np.uint32,
    "long long": np.int64,
    "long long int": np.int64,
    "unsigned long long": np.uint64,
    "unsigned long": np.uint64,
    "long": np.int64,
    "size_t": np.uint64,
    "short": np.int16,
    "char": np.int8,
    "signed char": np.int8,
    "unsigned char": np.uint8,
    "__half": np.float16,
}


def _signature(source, name):
    """[(param name, is_pointer, dtype)] of kernel `name` in `source`, or None if not found."""
    m = re.search(r"__global__\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", source)
    if not m:
        return None
    out = []
    for p in filter(None, (q.strip() for q in m.group(1).split(","))):
        words = p.replace("*", " * ").split()
        typ = " ".join(w for w in words[:-1] if w not in ("const", "__restrict__", "*", "volatile"))
        if typ not in _CTYPE:
            return None
        out.append((words[-1], "*" in words, np.dtype(_CTYPE[typ])))
    return out


def _values(dt, rng, n):
    if dt.kind == "f":
        return rng.uniform(-4, 4, n).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 200, n).astype(dt)
    return rng.integers(-100, 100, n).astype(dt)


def _generic_make(sig):
    def make(rng):
        values = {}
        for name, ptr, dt in sig:
            if ptr:
                values[name] = _values(dt, rng, N)
            elif name in LENGTH_NAMES:
                values[name] = dt.type(N)
            else:
                values[name] = dt.type(rng.uniform(0.5, 2.0)) if dt.kind == "f" else dt.type(rng.integers(1, 9))
        return values

    return make


def _label(where, unit):
    """'solutions/08_cupy.ipynb cell 17: saxpy_src' -> '08_cupy-saxpy_src-1a2b', the last part from
    the source text. Why not the cell number: a case's name seeds its inputs, so a cell added above
    a source would change its name and need a new GPU run; the source's own hash changes only when
    the source does (and then its GPU result must be recorded again anyway)."""
    tag = f"{zlib.crc32(unit.encode()) & 0xFFFF:04x}"
    m = re.match(r"(?:solutions|helpers/problems)/([\w.]+?)(?:\.ipynb|\.py)(?: cell \d+)?: (\w+)", where)
    if not m:
        return re.sub(r"\W+", "_", re.sub(r" cell \d+", "", where))[:40] + f"-{tag}"
    return f"{m.group(1)}-{m.group(2)}-{tag}"


def found_sources():
    """(where, kind, translation unit) of every compilable CUDA C source in solutions/ and helpers/problems/."""
    from support import cuda_sources as scan  # tests/ is on sys.path under pytest and in tools/ptx_differential.py

    out = []
    for f in scan.FOUND:
        if not f.where.startswith(("solutions/", "helpers/problems/")) or f.kind not in (
            "source",
            "elementwise",
            "reduction",
            "pycuda_elementwise",
        ):
            continue
        out.append((f.where, f.kind, f.translation_unit()))
    return out


def source_cases(faults=False):
    """One case per kernel of every course source; identical sources (saxpy in four notebooks) once.
    ``faults``: only the kernels that fault by design (FAULTS), for the test that the interpreter catches them."""
    from helpers.cuda_c import compile as nvrtc
    from helpers.cuda_c import entry_points, reduction_threads
    from helpers.ptx.records import demangle

    cases, seen = [], {}
    for where, kind, unit in found_sources():
        entries = [demangle(e) for e in entry_points(nvrtc(unit))]
        for kernel in entries:
            if (kernel in FAULTS) != faults:
                continue
            key = (unit, kernel)
            if key in seen:
                seen[key].extra.setdefault("also", []).append(where)
                continue
            sig = _signature(unit, kernel)
            if sig is None:
                raise ValueError(f"{where}: cannot read the parameters of {kernel}: add its types to course._CTYPE")
            one_block = kind == "reduction"  # the ReductionKernel stand-in: one block, partials combined
            arrays = tuple(n for n, ptr, _ in sig if ptr)  # inputs too: they must come back unchanged
            grid, block, make = LAUNCHES.get(
                kernel,
                (
                    1 if one_block else (N + BLOCK - 1) // BLOCK,
                    reduction_threads(N) if one_block else BLOCK,
                    _generic_make(sig),
                ),
            )
            case = Case(
                f"course-{_label(where, unit)}-{kernel}",
                "course",
                unit,
                kernel,
                grid,
                block,
                make,
                arrays,
                origin=where,
                note=f"{kind} source from {where}",
                refused=REFUSED.get(kernel, ""),
            )
            seen[key] = case
            cases.append(case)
    return cases


def exercise_cases():
    """The reference answer of every CUDA C exercise (notebooks 08-11), on the exercise's own inputs."""
    import importlib

    from helpers.exercises import cuda_run
    from helpers.exercises.libraries import CudaCExercise, _to_source

    cases = []
    for nb in ("nb08", "nb09", "nb10", "nb11"):
        mod = importlib.import_module(f"helpers.problems.{nb}")
        for key, ex in mod.EXERCISES.items():
            if not isinstance(ex, CudaCExercise) or ex.make_inputs is None:
                continue
            unit = _to_source(ex.kind, ex.reference, ex)
            layout = {}

            def make(rng, ex=ex, layout=layout):
                values = ex.make_inputs(rng)
                want = np.asarray(ex.oracle(values))
                n = next(len(v) for v in values.values() if isinstance(v, np.ndarray))
                dt = want.dtype if want.dtype.kind == "f" else np.float32
                full = np.full(max(want.size, 1) + cuda_run.PAD, np.nan, dt)
                args, grid, block = cuda_run.pack(ex, values, full, n)
                layout.update(grid=grid, block=block)
                return {("out" if a is full else f"arg{i}"): a for i, a in enumerate(args)}

            name = f"course-exercise-{nb}-{key}"
            make(np.random.default_rng(zlib.crc32(name.encode())))  # the launch shape for the case's own inputs
            cases.append(
                Case(
                    name,
                    "course",
                    unit,
                    ex.kernel,
                    layout["grid"],
                    layout["block"],
                    make,
                    ("out",),
                    shared_bytes=ex.shared_bytes,
                    origin=f"helpers/problems/{nb}.py: {key}",
                    note=f"reference answer of the {ex.kind} exercise, packed as the grader packs it",
                )
            )
    return cases


def cases():
    return source_cases() + exercise_cases()
