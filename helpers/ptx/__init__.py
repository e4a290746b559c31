"""Run one launch of a CUDA C kernel on the CPU, thread by thread, from its PTX.

    r = helpers.ptx.run(cuda_source, "saxpy", griddim=4, blockdim=256,
                        args=(np.float32(2.0), x, y, np.int32(n)))
    r.table, r.arrays, r.locations, r.out_of_bounds, r.divergent, r.warp_misuse, r.printed, r.schedule

Why: the course checks CUDA C answers (CuPy RawKernel, PyCUDA SourceModule, cuda.core) on
machines without a GPU. NVRTC compiles on the CPU; this package runs the PTX it produces on
NumPy arrays (updated in place, as a launch would) and records every global and shared
memory access in the log the Numba tracer writes too (helpers.accesses), so the same
verdicts (races, out of bounds, uninitialised shared memory, divergent barriers) apply. See
machine.py for the scheduling model, grid.py for when every block runs at once (with the
block-by-block result exactly) and alu.py for the floating-point accuracy of `.approx`
instructions.
"""

from __future__ import annotations

import itertools
import linecache
import numbers

from ..accesses import ATOMIC, READ, WRITE, ArrayInfo, access_table
from ..errors import LearnerError, LearnerTypeError, LearnerValueError, shown
from ..limits import TRACE_MAX_THREADS, launch_dims, launch_limits
from .parser import parse
from .program import Location, Program, SourceRef, demangle

__all__ = [
    "ATOMIC",
    "READ",
    "WRITE",
    "ArrayInfo",
    "Location",
    "PtxRun",
    "SourceRef",
    "compile_source",
    "run",
    "trace",
    "to_trace",
]
MAX_STEPS = 200_000
_counter = itertools.count(1)


class PtxRun:
    """What one launch did: the access log and everything found on the way."""

    def __init__(self, prog, ptx):
        self.kernel_name = demangle(prog.kernel)
        self.griddim, self.blockdim = prog.griddim, prog.blockdim
        self.threads_per_block = prog.tpb
        self.arrays = prog.arrays
        # one chunk (a whole grid, or one barrier-free block) is the table already: no 48-byte-per-access copy
        self.table = prog.chunks[0] if len(prog.chunks) == 1 else access_table(prog.chunks)
        self.locations = prog.locations
        self.cas_locations = frozenset(prog.cas_locs)
        self.out_of_bounds = prog.oob
        self.divergent = prog.divergent
        self.warp_misuse = prog.warp_misuse
        self.printed = prog.printed
        self.steps = prog.steps
        self.schedule = prog.schedule  # whether blocks ran together, and why not (grid.Schedule)
        self.ptx = ptx

    def __repr__(self):
        return (
            f"<PtxRun of {self.kernel_name}: grid {self.griddim} x block {self.blockdim}, "
            f"{self.table.shape[1]} accesses, {len(self.out_of_bounds)} out of bounds, {self.steps} steps>"
        )


def _check_run_arguments(source_or_ptx, kernel_name, args, shared_bytes, max_steps) -> None:
    """What run() is given, checked before any of it is used: one sentence per mistake."""
    if not isinstance(source_or_ptx, (str, bytes)):
        raise LearnerTypeError(f"run() needs CUDA C source or PTX text as a string, not {shown(source_or_ptx)}.")
    if not isinstance(kernel_name, str):
        raise LearnerTypeError(
            f"kernel_name must be the kernel's name as a string, such as 'saxpy', not {shown(kernel_name)}."
        )
    if not isinstance(args, (tuple, list)):
        raise LearnerTypeError(
            f"args must be a tuple of the kernel's arguments, such as (x, y, np.int32(n)), not {shown(args)}."
        )
    for name, value, least in (("shared_bytes", shared_bytes, 0), ("max_steps", max_steps, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise LearnerValueError(f"{name} must be a whole number of at least {least}, not {shown(value)}.")


def compile_source(source, name="kernel.cu", options=(), nvrtc=None):
    """CUDA C -> PTX text with line information, through NVRTC (no GPU needed). ``nvrtc``: a
    compiler with ``cuda_c.compile``'s signature (the batch grader's runs in its own process)."""
    if nvrtc is None:
        from ..cuda_c import compile as nvrtc

    return nvrtc(source, target="ptx", name=name, options=("-lineinfo", *options)).decode().rstrip("\0 ")


def _find_kernel(mod, name):
    if name in mod.functions and mod.functions[name].entry:
        return name
    entries = [f for f in mod.functions if mod.functions[f].entry]
    hits = [f for f in entries if demangle(f) == name]
    if len(hits) == 1:
        return hits[0]
    raise LearnerError(
        f"No kernel called {name!r} in this code; kernels: {', '.join(map(demangle, entries)) or 'none'}"
        f"{' (several match: give the mangled name)' if hits else ''}."
    )


def run(
    source_or_ptx,
    kernel_name,
    griddim,
    blockdim,
    args,
    *,
    shared_bytes=0,
    source=None,
    max_steps=MAX_STEPS,
    python_scalars="refuse",
    options=(),
    whole_grid=True,
    nvrtc=None,
    keep_log=True,
    max_threads=TRACE_MAX_THREADS,
):
    """Run one launch of `kernel_name` on the CPU and return a `PtxRun`.

    `source_or_ptx`: CUDA C (compiled here with NVRTC and -lineinfo) or PTX text. `source`:
    the CUDA C the PTX came from, to show source lines. `args`: NumPy arrays (updated in
    place) and NumPy scalars matching the kernel's parameter types. `python_scalars` says
    what a plain Python int/float means: "refuse" (default: a LearnerError asks for
    np.int32(...)/np.float32(...)), "cupy" (as CuPy passes them: int64/float64, of which the
    kernel reads its parameter's width), or "cast" (converted to the parameter's type).
    `max_steps`: instructions one thread may run before the run stops with a KernelError.
    `whole_grid`: False runs block after block even where running all blocks together gives the
    same result (the reference the whole-grid path is tested against; see grid.py). `nvrtc`: the
    compiler for CUDA C (``cuda_c.compile`` by default; see compile_source). `keep_log`: False drops
    the access log once it has served (the run's `table` is then empty): a launch that wants only its
    results (launch.py) keeps no 48 bytes per access. `max_threads`: the most threads a launch may start.
    """
    _check_run_arguments(source_or_ptx, kernel_name, args, shared_bytes, max_steps)
    text = source_or_ptx.decode(errors="replace") if isinstance(source_or_ptx, bytes) else source_or_ptx
    is_ptx = ".entry" in text and (".version" in text or ".target" in text)
    fname = f"ptxrun_{next(_counter)}.cu"
    if not is_ptx:
        source = text
        text = compile_source(source, fname, options, nvrtc)
    src_file = None
    if source is not None:
        label = f"<CUDA C {fname[:-3]}>"
        linecache.cache[label] = (len(source), None, source.splitlines(True), label)
        src_file = (label, fname if not is_ptx else "")
    mod = parse(text)
    kernel = _find_kernel(mod, kernel_name)
    if not isinstance(python_scalars, str) or python_scalars not in ("refuse", "cupy", "cast"):
        raise LearnerValueError(f"python_scalars must be 'refuse', 'cupy' or 'cast', not {shown(python_scalars)}.")
    griddim, blockdim = launch_dims(griddim, "griddim"), launch_dims(blockdim, "blockdim")
    launch_limits(griddim, blockdim, most_threads=max_threads)  # what a GPU refuses, and more than the CPU runs
    prog = Program(
        mod, kernel, griddim, blockdim, list(args), int(shared_bytes), source, src_file, max_steps, python_scalars
    )
    from .grid import run_launch

    prog.keep_log = keep_log
    prog.schedule = run_launch(prog, whole_grid)
    for original, host in prog.write_back:
        original[...] = host
    return PtxRun(prog, text)


def trace(source, kernel_name, griddim, blockdim, *args, outputs=(), **options):
    """Run CUDA C on the CPU and return a helpers.tracer.Trace (verdicts, metrics, pictures)."""
    from .adapter import to_trace as _to_trace

    return _to_trace(run(source, kernel_name, griddim, blockdim, args, **options), outputs)


def to_trace(r, outputs=()):
    """A finished PtxRun as a helpers.tracer.Trace; `outputs`: arrays every thread must fill."""
    from .adapter import to_trace as _to_trace

    return _to_trace(r, outputs)
