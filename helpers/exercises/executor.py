"""Where a check's work on an answer runs: an ``Executor``, passed to ``Exercise.grade``.

Why an argument: in a notebook the learner's kernel is traced, compiled and launched right here;
the batch grader keeps the exercise in its own process and hands the check stand-ins for answers
that live in the student's (sandboxed) process, with an executor that runs each operation where
it must run (``grading/executor.py``: the judge's own compiler, tracer and NVRTC processes, or the
student's process for the learner's own host code). The checks call the operations below and
never ask which executor they have; ``LOCAL`` is the default, used by ``check()``.

The operations, derived from what the checks do with an answer:

- a kernel: ``trace`` (the CPU tracer), ``metrics`` (of a trace, as plain numbers),
  ``compile_check`` (Numba's GPU compiler), ``run_gpu`` (a launch with guard bands);
- CUDA C: ``compile_cuda`` (NVRTC), ``launch_cuda_c`` (one of the course's GPU runners);
- the learner's host function: ``host_run(op, fn, here, *args)``, ``here(fn, *args)`` run where
  ``fn`` lives (``op`` names that operation for an executor that runs it elsewhere).

Calling a function answer (``fn(*args)``) needs no executor: a stand-in runs the call where it lives.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Callable

import numpy as np

from .. import compile_check, cuda_c
from ..errors import CourseError, KernelError
from ..tracer import trace as _trace
from ..tracer.records import ATOMIC
from .inputs import poison

_flatnonzero = np.flatnonzero  # held at import, before any learner code runs

GUARD = 64  # elements of sentinel on each side of every GPU buffer


class Executor(ABC):
    """The operations a check performs on an answer, run somewhere (see the module's docstring)."""

    # True where run_gpu compiles the kernel as Numba's GPU compiler does (a launch here), so that
    # a separate compile check adds nothing on a GPU.
    launch_compiles = True

    @abstractmethod
    def trace(self, kernel, grid, block, call_args: list, outputs: list):
        """The CPU tracer's run: a trace (verdicts, arrays, griddim, show()); the arrays of
        ``call_args`` hold what the kernel wrote."""

    @abstractmethod
    def metrics(self, t) -> dict:
        """The metrics the checks and budgets read, as plain numbers, of a trace ``trace`` returned."""

    @abstractmethod
    def compile_check(self, kernel, call_args):
        """A pending compile (``compile_check.Pending``): ``.result()`` says whether Numba compiles it."""

    @abstractmethod
    def run_gpu(self, kernel, grid, block, call_args: list) -> list:
        """A GPU launch with guard bands; the results into ``call_args``; the (argument, element)
        of each out-of-bounds write."""

    @abstractmethod
    def compile_cuda(self, src, **options) -> bytes:
        """``cuda_c.compile(src, **options)``: PTX or a CUBIN, or ``cuda_c.CompileError``."""

    @abstractmethod
    def launch_cuda_c(self, runner: Callable, answer, values: dict, block: int):
        """``runner(answer, values, block)``, one of ``exercises/cuda_runners.py``'s GPU runners:
        (the output, whether the guard band stayed intact)."""

    @abstractmethod
    def host_run(self, op: str, fn, here: Callable, *args):
        """``here(fn, *args)`` where the learner's function ``fn`` lives; the same value either way."""


class LocalExecutor(Executor):
    """Everything in this process: a notebook's ``check()``, the tests, the judge's own workers."""

    def trace(self, kernel, grid, block, call_args, outputs):
        return _trace(kernel, grid, block, *call_args, outputs=tuple(outputs))

    def metrics(self, t) -> dict:
        return metrics_dict(t.metrics, t)

    def compile_check(self, kernel, call_args):
        return compile_check.start(kernel, call_args)

    def run_gpu(self, kernel, grid, block, call_args) -> list:
        return gpu_launch(kernel, grid, block, call_args)

    def compile_cuda(self, src, **options) -> bytes:
        return cuda_c.compile(src, **options)

    def launch_cuda_c(self, runner, answer, values, block):
        return runner(answer, values, block)

    def host_run(self, op, fn, here, *args):
        return here(fn, *args)


LOCAL = LocalExecutor()


class RemoteFailure(CourseError):
    """The process an executor sent work to failed in a way that is not the student's code raising
    (it died, stopped answering, or answered with something that is not plain data)."""


def raised(error: dict) -> BaseException:
    """The exception the student's code raised in another process, rebuilt here under the same class
    name so the checks' sentences ("raised ZeroDivisionError: ...") read as they do in a notebook."""
    name = str(error.get("type") or "Exception")[:60]
    message = str(error.get("message") or "")[:1500]
    if error.get("course"):  # LearnerError, KernelError, TookTooLong...: the sentence is ours already
        exc = CourseError(message)
    else:
        if not name.isidentifier():
            name = "Exception"
        exc = type(name, (Exception,), {"__module__": "builtins"})(message)
    if error.get("refused") is True:
        exc.refused = True
    frames = error.get("frames")
    exc.course_frames = tuple(str(f)[:80] for f in frames[-40:]) if isinstance(frames, list) else ()
    return exc


def frames_of(exc: BaseException) -> tuple:
    """The names of the functions an exception passed through, here or (for one rebuilt by
    ``raised``) in the other process: a check may tell errors apart by where they came from."""
    names, tb = [], exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return tuple(getattr(exc, "course_frames", ())) + tuple(names)


def takes_executor(fn) -> bool:
    """True when ``fn`` (an exercise kind's ``_grade``, a custom judge) has a parameter named
    ``executor``: it runs the answer other than by calling it, and is given the executor."""
    try:
        return "executor" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# ----------------------------------------------------------------------------- what LOCAL runs


def gpu_launch(kernel, grid, block, call_args) -> list:
    """Launch on the GPU with guard bands; copy results into ``call_args``; return band hits.

    Each array is copied into a larger device buffer whose extra elements hold a sentinel and
    the kernel gets a view of the middle; after the run, changed band bytes are out-of-bounds
    writes. Reads out of bounds are invisible here: the traced CPU run catches those.
    TODO(verify on GPU): slicing + reshape of DeviceNDArray, sticky-error message after a crash.
    """
    from numba import cuda

    launch_args, buffers = [], []
    for pos, a in enumerate(call_args):
        if isinstance(a, np.ndarray):
            host = np.full(a.size + 2 * GUARD, poison(a.dtype), dtype=a.dtype)
            host[GUARD : GUARD + a.size] = a.reshape(-1)
            dev = cuda.to_device(host)
            launch_args.append(dev[GUARD : GUARD + a.size].reshape(a.shape))
            buffers.append((pos, a, dev, host))
        else:
            launch_args.append(a)
    try:
        kernel[grid, block](*launch_args)
        cuda.synchronize()
    except Exception as e:  # anything the launch raises (CudaAPIError, typing errors...) is one sentence
        refused = _refusal(kernel, call_args, e)
        if refused is not None:
            raise refused from None
        raise KernelError(
            f"your kernel failed on the GPU ({type(e).__name__}: {str(e)[:200]}); after a crash restart the "
            "Jupyter kernel, and run with COURSE_MODE=cpu to see the offending line."
        ) from None
    hits = []
    for pos, a, dev, host in buffers:
        back = dev.copy_to_host()
        for lo, hi, offset in ((0, GUARD, -GUARD), (GUARD + a.size, back.size, -GUARD)):
            changed = _flatnonzero(back[lo:hi].view(np.uint8) != host[lo:hi].view(np.uint8))
            if changed.size:
                hits.append((pos, int(changed[0] // a.itemsize + lo + offset)))
        a.reshape(-1)[:] = back[GUARD : GUARD + a.size]
    return hits


def _refusal(kernel, call_args, exc) -> CourseError | None:
    """The compile check's one sentence when the GPU launch failed because Numba refused to compile
    the kernel (not a crash): the same sentence a CPU-mode check gives, never Numba's report.
    ``refused`` marks it as the kernel's fault, graded ``failed``."""
    from numba.core.errors import NumbaError

    if not isinstance(exc, NumbaError):
        return None
    result = compile_check.compile_check(kernel, call_args)
    if result.ok is not False:
        return None
    err = KernelError(result.message)
    err.refused = True
    return err


def metrics_dict(m, t=None) -> dict:
    """The tracer's Metrics as plain numbers (JSON-friendly for the grader). Per-thread means are
    the tracer's own, over threads that touched memory (idle threads of the last block do not
    dilute them), so a notebook printing ``t.metrics`` shows the numbers the budgets check.
    With the trace ``t``, two structural figures too: global atomics per block (a privatised
    histogram makes one per bin) and the most memory accesses one thread made (the span of a
    parallel scan, which a serial loop in one thread blows)."""
    per = lambda pair: float(pair[0])  # noqa: E731
    return {
        **_trace_figures(t),
        **{
            "threads": int(m.threads),
            "idle_threads": int(m.idle_threads),
            "global_reads_per_thread": per(m.global_reads),
            "global_writes_per_thread": per(m.global_writes),
            "shared_reads_per_thread": per(m.shared_reads),
            "shared_writes_per_thread": per(m.shared_writes),
            "atomics_per_thread": per(m.atomics),
            "max_global_reads_per_thread": int(m.global_reads[1]),
            "coalescing": float(m.coalescing),
            "bank_conflicts": int(m.bank_conflicted),
            "bank_ways_max": int(m.bank_ways_max),
        },
    }


def _trace_figures(t) -> dict:
    if t is None:
        return {}
    a = t.accesses
    if not len(a):
        return {"global_atomics_per_block": 0.0, "max_accesses_per_thread": 0}
    glob = np.array([info.space == "global" for info in t.arrays] + [False], bool)[a.array]
    mem = np.array([info.space in ("global", "shared") for info in t.arrays] + [False], bool)[a.array]
    per_thread = np.bincount(a.gtid[mem], minlength=t.nthreads)
    return {
        "global_atomics_per_block": float(np.count_nonzero(glob & (a.kind == ATOMIC))) / max(t.nblocks, 1),
        "max_accesses_per_thread": int(per_thread.max()) if per_thread.size else 0,
    }
