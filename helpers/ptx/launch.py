"""Numba launches in CPU mode, run from the kernel's own PTX on this interpreter where that can be done.

    kernel[blocks, threads](x, y, out)      # a notebook's launch, as written for a GPU

Why: Numba's simulator runs every GPU thread as a Python thread (about 0.4 ms each, README), so the
notebooks used to shrink their problems in CPU mode. Here the launch compiles the kernel with Numba's
real compiler (the compile server: NVVM at -O3, as a GPU launch compiles it, no GPU needed) and runs
that PTX on NumPy arrays, one NumPy operation per instruction for every thread of a barrier-free grid
(grid.py): SAXPY over a million threads takes about a second of CPU instead of minutes.

The package root installs one ``Launcher`` in CPU mode (helpers/__init__.py, from ``env.MODE``);
``_numba.route_simulator_launches`` hands it every launch made from the host. The arrays a launch
gets are the simulator's own (``cuda.to_device`` arrays and NumPy arrays alike are updated in
place), so launches may alternate between the two paths on the same arrays.

Where the PTX path cannot stand in for the simulator, the launch runs on the simulator and says why,
once per kernel: a ``debug=True`` build or a kernel that raises (a GPU reports exceptions only in
debug builds; the simulator reports them), an argument the interpreter does not take (a non-contiguous
or structured array, a library's array), no compiler here, an instruction the interpreter does not
run, more threads than it runs (MAX_THREADS). Where the two differ, this path does what
a GPU does: ``print`` formats as CUDA's printf (a float with six decimals) and its lines appear after
the launch, in thread order; an index past the end of one axis of a 2-D array that still falls inside
the array reaches the neighbouring element (Numba's CUDA target compiles no bounds checks), where the
simulator raises IndexError. An access outside every array raises IndexError, as the simulator does.
"""

from __future__ import annotations

import ast
import numbers
import sys

import numpy as np

from .. import _numba
from ..accesses import unlinear
from ..compile_check import client, describe
from ..errors import KernelError, LearnerError, LearnerIndexError, UnsupportedByTracer
from ..limits import block_problem, dynamic_shared_problem, grid_problem
from . import run
from .numba_run import compile_described, entry, flatten

__all__ = ["Launcher", "Simulate", "install"]
MAX_STEPS = 10**9  # instructions a thread may run: a loop that never ends runs on, as on the simulator
# Threads one launch may start: with no access log kept, memory grows with the arrays and one chunk of at most
# grid.GRID_THREADS threads, not with the launch (the tracer's limit, limits.TRACE_MAX_THREADS, is 2**22).
MAX_THREADS = 2**25
# The most threads a launch sent to the simulator may start (about 26 s at 0.4 ms a thread): the notebooks now use
# their text's sizes, where a fallback would run for many minutes with nothing on screen.
SIMULATOR_MOST = 2**16
NUMBER_KINDS = "biuf"


class Simulate(Exception):
    """This launch runs on the simulator; the message says why, as the end of a sentence."""


def _host_arrays(args):
    """(values the interpreter takes, positions of NumPy arrays passed directly) or Simulate."""
    values, host = [], []
    for pos, a in enumerate(args):
        held = _numba.simulator_array(a)
        if held is not None:
            a = held
        elif isinstance(a, np.ndarray):
            host.append(pos)
        elif isinstance(a, (np.generic, numbers.Number)) and not isinstance(a, np.void):
            if isinstance(a, (complex, np.complexfloating)):
                raise Simulate(f"argument {pos} is a complex number")
            values.append(a)
            continue
        else:
            raise Simulate(f"argument {pos} is a {type(a).__name__}, which only the simulator takes")
        if a.ndim == 0 or a.dtype.kind not in NUMBER_KINDS:
            raise Simulate(f"argument {pos} is a {'0-d' if a.ndim == 0 else a.dtype.name} array")
        if not a.flags.c_contiguous:
            raise Simulate(f"argument {pos} is not a C-contiguous array")
        values.append(a)
    return values, host


def _as_declared(kernel, values):
    """Scalars converted to the types of ``@cuda.jit("void(...)")``, as a GPU launch converts them."""
    declared = _numba.declared_signatures(kernel)
    if declared is None:
        return values
    sigs, _ = declared
    if len(sigs) != 1 or len(sigs[0]) != len(values):
        raise Simulate("it declares several signatures")
    out = []
    for v, t in zip(values, sigs[0]):
        out.append(v if isinstance(v, np.ndarray) else _numba.as_dtype(t).type(v))
    return out


def _raises(request) -> bool:
    """Does the kernel, or a device function it calls, hold a ``raise`` or an ``assert``?"""
    for f in request["functions"]:
        try:
            tree = ast.parse(f["source"])
        except SyntaxError:
            return True
        if any(isinstance(n, (ast.Raise, ast.Assert)) for n in ast.walk(tree)):
            return True
    return False


def _thread_text(lin, griddim, blockdim):
    tpb = blockdim[0] * blockdim[1] * blockdim[2]
    return f"tid={list(unlinear(lin % tpb, blockdim))} ctaid={list(unlinear(lin // tpb, griddim))}"


def _out_of_bounds(r, names, griddim, blockdim):
    """The simulator's IndexError for the first out-of-bounds access (in thread order), as one sentence."""
    bad = min(r.out_of_bounds, key=lambda b: b.thread[0])
    where = f", line {bad.line}" if bad.line else ""
    fix = "compare the index with the array's size before the access"
    if bad.array < 0:
        return LearnerIndexError(
            f"{_thread_text(bad.thread[0], griddim, blockdim)}: an access{where} reaches no array: {fix}."
        )
    info = r.arrays[bad.array]
    shape = tuple(info.shape) or (1,)
    axis = next((k for k, (i, n) in enumerate(zip(bad.index, shape)) if not 0 <= i < n), 0)
    name = names.get(info.param, info.name)
    return LearnerIndexError(
        f"{_thread_text(bad.thread[0], griddim, blockdim)}: index {bad.index[axis]} is out of bounds for axis "
        f"{axis} with size {shape[axis]} ({name}{where}): {fix}."
    )


class Launcher:
    """Runs the launches it is handed from their PTX; ``say`` prints the sentence of a launch sent to the
    simulator (once per kernel and reason); ``out`` is where printf's lines go."""

    def __init__(self, say=print, out=None):
        self.say = say
        self.out = out
        self.said: set = set()

    def __call__(self, kernel, griddim, blockdim, sharedmem, args, simulate):
        fn = _numba.python_function(kernel)
        name = getattr(fn, "__name__", "the kernel")
        try:
            self.run(kernel, griddim, blockdim, sharedmem, args)
        except Simulate as why:
            threads = int(np.prod(griddim)) * int(np.prod(blockdim))
            if threads > SIMULATOR_MOST:
                minutes = max(1, round(threads * 0.4e-3 / 60))
                raise LearnerError(
                    f"CPU mode: {name} would run on Numba's simulator because {why}, and its {threads:,} threads "
                    f"would take about {minutes:,} minutes there (0.4 ms a thread): launch at most "
                    f"{SIMULATOR_MOST:,} threads in CPU mode, or run it on a GPU."
                ) from None
            if (fn, str(why)) not in self.said:
                self.said.add((fn, str(why)))
                self.say(f"CPU mode: {name} runs on Numba's simulator, about 0.4 ms a thread, because {why}.")
            return simulate()
        return None

    def run(self, kernel, griddim, blockdim, sharedmem, args):
        """Run one launch from its PTX, or raise Simulate with every array as it was."""
        problem = block_problem(blockdim) or grid_problem(griddim) or dynamic_shared_problem(sharedmem)
        if problem:  # what a GPU refuses, it refuses here too
            raise LearnerError(problem[0].upper() + problem[1:])
        threads = int(np.prod(griddim)) * int(np.prod(blockdim))
        if threads > MAX_THREADS:
            raise Simulate(f"its {threads:,} threads are more than the PTX interpreter runs ({MAX_THREADS:,})")
        options = _numba.simulator_kernel_options(kernel)
        if options["debug"]:
            raise Simulate("it was compiled with debug=True, whose exceptions only the simulator reports here")
        if options["extensions"]:
            raise Simulate("it has launch extensions")
        values, host = _host_arrays(args)
        values = _as_declared(kernel, values)
        try:
            request = describe.request(kernel, values)
        except describe.NotDescribable as e:
            raise Simulate(f"it cannot be sent to Numba's compiler ({e})") from None
        except (OSError, SyntaxError, TypeError, ValueError):  # a source inspect cannot read back as one def
            raise Simulate("its source cannot be read back to send to Numba's compiler") from None
        if _raises(request):
            raise Simulate("it raises exceptions, which a GPU reports only in a debug=True build")
        try:
            text = compile_described(request, optimise=True, fastmath=options["fastmath"])
        except (UnsupportedByTracer, client.Unavailable) as e:
            raise Simulate(f"Numba's compiler could not run here ({e})") from None
        except LearnerError as e:
            raise Simulate(f"Numba's compiler could not compile it here ({e})") from None
        self._execute(text, request["params"], griddim, blockdim, sharedmem, values, host)

    def _execute(self, text, params, griddim, blockdim, sharedmem, values, host):
        arrays = [v for v in values if isinstance(v, np.ndarray)]
        before = [a.copy() for a in arrays]
        flat, origin = flatten(values)
        try:
            r = run(
                text,
                entry(text),
                griddim,
                blockdim,
                flat,
                shared_bytes=sharedmem,
                max_steps=MAX_STEPS,
                keep_log=False,
                max_threads=MAX_THREADS,
            )
        except Exception as e:  # noqa: BLE001 - whatever stopped the interpreter, the simulator runs it from the start
            for a, b in zip(arrays, before):
                a[...] = b
            if isinstance(e, UnsupportedByTracer):
                raise Simulate(f"the PTX interpreter does not run it ({e})") from None
            what = "stopped" if isinstance(e, KernelError) else "failed"
            raise Simulate(f"the PTX interpreter {what} on it ({type(e).__name__}: {e})") from None
        out = self.out or sys.stdout
        for line in r.printed:
            out.write(line)
        if r.out_of_bounds:
            for pos in host:  # the simulator copies NumPy arguments back only after a launch that finished
                values[pos][...] = before[next(k for k, a in enumerate(arrays) if a is values[pos])]
            names = {k: params[pos] for k, pos in origin.items() if pos < len(params)}
            raise _out_of_bounds(r, names, griddim, blockdim)


def install(launcher):
    """Hand every host launch of a simulator kernel to ``launcher`` (None: the simulator's own launch);
    returns the one it replaces."""
    return _numba.route_simulator_launches(launcher)
