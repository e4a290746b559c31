"""Self-checking exercises: ``ex.check(answer)``, ``ex.hint()``, ``ex.solution()``, ``progress()``.

An exercise is data (see ``helpers/problems/``): a reference, how to make inputs, which
arguments are outputs, a launch rule, tolerances and hints. Three kinds:

- ``KernelExercise``   the learner writes a ``@cuda.jit`` kernel; checked on fresh random
  inputs of awkward sizes, outputs poisoned first, run under the CPU tracer (CPU mode) or on
  the GPU with guard bands plus a small traced CPU run (GPU mode).
- ``FunctionExercise`` a plain Python function, compared with the reference on many inputs.
- ``ValueExercise``    a number or tuple.

``grade(answer, seed)`` is pure and never raises: it returns a ``Result`` whose status is
"passed", "failed", "not_attempted" or "error". ``check`` = grade + show + record progress.
The batch grader calls ``grade`` in a fresh process, so grading uses only the engine's own
objects (saved NumPy ufuncs below, private references) and the function it is given.
"""

from __future__ import annotations

import base64
import html
import inspect
import io
import os
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _numba, env
from . import _progress
from .errors import CourseError, GPURequired, KernelError, LearnerError, UnsupportedByTracer

# Saved at import: a learner's cell (or a kernel running as Python on the tracer) could rebind
# numpy attributes; comparisons use these ufuncs and nothing else.
_isnan, _abs, _less_equal, _equal = np.isnan, np.absolute, np.less_equal, np.equal
_flatnonzero, _rint, _asarray, _copy = np.flatnonzero, np.rint, np.asarray, np.array

PLACEHOLDER = "YOUR CODE HERE"
MAX_THREADS_PER_BLOCK = 1024
_MISSING = object()


# ----------------------------------------------------------------------------- results


@dataclass
class Result:
    """The outcome of one check. ``figure`` is a number-with-words on success (e.g. "2.0 global
    reads per thread") folded into ``message``; ``picture`` is an optional matplotlib Figure."""

    exercise: str
    status: str  # "passed" | "failed" | "not_attempted" | "error"
    message: str
    seed: int | None = None
    picture: Any = None
    metrics: dict = field(default_factory=dict)
    points: float = 0.0
    max_points: float = 1.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def figure(self):  # the name the grader contract uses
        return self.picture

    def line(self) -> str:
        mark = {"passed": "✓", "failed": "✗", "error": "✗", "not_attempted": "·"}[self.status]
        seed = f"  [seed {self.seed}: check(..., seed={self.seed}) repeats it]" if self.seed is not None and self.status == "failed" else ""
        return f"{mark} {self.exercise}: {self.message}{seed}"

    def __str__(self) -> str:
        return self.line()

    def _repr_html_(self) -> str:
        color = {"passed": "#1a7f37", "not_attempted": "#6e7781"}.get(self.status, "#cf222e")
        out = f"<div style='color:{color};font-weight:600'>{html.escape(self.line())}</div>"
        if self.picture is not None:
            out += f"<img src='data:image/png;base64,{_png_base64(self.picture)}'/>"
        return out


def _png_base64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=90)
    return base64.b64encode(buf.getvalue()).decode()


def _in_jupyter() -> bool:
    try:
        from IPython import get_ipython

        ip = get_ipython()
    except ImportError:
        return False
    return ip is not None and hasattr(ip, "kernel")


def _show(result: Result) -> None:
    if _in_jupyter():
        from IPython.display import HTML, display

        display(HTML(result._repr_html_()))
    else:
        print(result.line())


def _show_text(title: str, body: str, code: bool = False) -> None:
    if _in_jupyter():
        from IPython.display import HTML, display

        tag = "pre" if code else "div"
        display(HTML(f"<b>{html.escape(title)}</b><{tag}>{html.escape(body)}</{tag}>"))
    else:
        print(f"{title}\n{body}")


# ----------------------------------------------------------------------------- base class


def _fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little") % 1_000_000  # short enough to retype


def not_attempted(answer) -> bool:
    """None, ..., or a function whose source still holds the ``# YOUR CODE HERE`` placeholder."""
    if answer is None or answer is Ellipsis or answer is _MISSING:
        return True
    if isinstance(answer, str) and PLACEHOLDER in answer:
        return True
    fn = _numba.python_function(answer) or (answer if inspect.isfunction(answer) else None)
    if fn is not None:
        try:
            return PLACEHOLDER in inspect.getsource(fn)
        except (OSError, TypeError):  # source unavailable (exec'd code): judge by running it
            return False
    return False


@dataclass(eq=False)
class Exercise:
    """Fields common to every kind. ``name`` and ``notebook`` are filled by ``register``."""

    prompt: str = ""
    hints: tuple = ()
    points: float = 1.0
    name: str = ""
    notebook: str = ""

    random = True  # False for exercises with fixed answers: no seed to print

    def __post_init__(self):
        self._hint_level = 0

    @property
    def id(self) -> str:
        return f"{self.notebook}.{self.name}" if self.notebook else self.name

    def __repr__(self) -> str:  # never print the reference or the answer
        return f"<{type(self).__name__} {self.id}: {self.prompt}>"

    # -- learner API
    def grade(self, answer=_MISSING, seed: int | None = None, **options) -> Result:
        """Pure: never prints, never raises (learner and checker problems become status "error")."""
        seed = None if not self.random else _fresh_seed() if seed is None else int(seed)
        try:
            if not_attempted(answer):
                return self._result("not_attempted", f"not attempted yet: replace the `# {PLACEHOLDER}` line with "
                                                     "your code, run that cell, then run this check again.", seed)
            status, message, picture, metrics = self._grade(answer, np.random.default_rng(seed), **options)
        except CourseError as e:  # LearnerError, KernelError, UnsupportedByTracer, GPURequired
            return self._result("error", str(e), seed)
        except Exception as e:  # noqa: BLE001 - the learner's code raised somewhere unexpected
            return self._result("error", f"your code raised {type(e).__name__}: {e}; fix it and check again.", seed)
        return self._result(status, message, seed, picture, metrics)

    def check(self, answer=_MISSING, seed: int | None = None, **options) -> None:
        """Grade, show one green/red line (and a picture where it helps), record progress."""
        result = self.grade(answer, seed=seed, **options)
        self.last_result = result
        _show(result)
        _progress.record_result(self.id, result)

    def hint(self) -> None:
        if not self.hints:
            _show_text(f"{self.id}: no hints", "This exercise has no hints; ex.solution() shows the answer.")
            return
        level = min(self._hint_level, len(self.hints) - 1)
        self._hint_level = level + 1
        more = "" if level + 1 < len(self.hints) else "  (last hint; ex.solution() shows the answer)"
        _show_text(f"Hint {level + 1}/{len(self.hints)} for {self.id}{more}", textwrap.dedent(self.hints[level]).strip())
        _progress.record_hint(self.id, level + 1)

    def solution(self) -> None:
        _show_text(f"Solution for {self.id}", self._solution_text(), code=True)
        _progress.record_solution(self.id)

    # -- for subclasses
    def _result(self, status, message, seed, picture=None, metrics=None) -> Result:
        points = float(self.points) if status == "passed" else 0.0
        return Result(self.id, status, message, seed, picture, dict(metrics or {}), points, float(self.points))

    def _grade(self, answer, rng, **options):
        raise NotImplementedError

    def _solution_text(self) -> str:
        raise NotImplementedError

    def reference_answer(self):
        """What a correct learner would pass to ``check`` (used by the tests)."""
        raise NotImplementedError


def _source(fn) -> str:
    fn = _numba.python_function(fn) or fn
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"(source not available for {getattr(fn, '__name__', fn)!r})"


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        text = f"{float(v):.6g}"
        return text if any(c in text for c in ".en") else text + ".0"  # 4.0 must not read as the int 4
    return repr(v.item() if isinstance(v, np.generic) else v)


# ----------------------------------------------------------------------------- value exercises


@dataclass(eq=False, repr=False)
class ValueExercise(Exercise):
    """The answer is a number or a tuple. ``mistakes`` maps known wrong answers to a message."""

    random = False
    answer: Any = None
    explanation: str = ""
    mistakes: dict = field(default_factory=dict)
    tolerance: float = 0.0  # absolute, for float answers

    def reference_answer(self):
        return self.answer

    def _solution_text(self) -> str:
        return f"{self.answer!r}\n\n{textwrap.dedent(self.explanation).strip()}"

    def _grade(self, given, rng):
        problem = _type_problem(given, self.answer, "your answer")
        if problem:
            return "failed", problem, None, {}
        if _same(given, self.answer, self.tolerance):
            return "passed", f"correct: {_fmt(given)}.", None, {}
        for wrong, why in self.mistakes.items():
            if _same(given, wrong, self.tolerance):
                return "failed", f"{_fmt(given)} is not right: {why}", None, {}
        return "failed", f"{_fmt(given)} is not right; ex.hint() gives a nudge.", None, {}


def _same(a, b, tol=0.0) -> bool:
    if isinstance(b, tuple):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(_same(x, y, tol) for x, y in zip(a, b))
    if isinstance(b, (float, np.floating)):
        return isinstance(a, (int, float, np.number)) and not isinstance(a, bool) and abs(float(a) - float(b)) <= tol
    return type(a) is not bool and a == b


def _type_problem(got, want, what: str) -> str | None:
    """A plain sentence when ``got`` has the wrong kind (float for int, list for tuple...), else None."""
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)):
            return f"{what} should be a tuple of {len(want)} values, got {_fmt(got)}."
        if len(got) != len(want):
            return f"{what} should have {len(want)} values, got {len(got)}: {_fmt(tuple(got))}."
        for g, w in zip(got, want):
            p = _type_problem(g, w, what)
            if p:
                return p
        return None
    if isinstance(want, (int, np.integer)) and not isinstance(want, bool):
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            if isinstance(got, (float, np.floating)):
                return (f"{what} gave {_fmt(got)}, a float, but counts of blocks, threads and indices are "
                        "whole numbers (int): use // instead of /.")
            return f"{what} gave {_fmt(got)} ({type(got).__name__}) but should give a whole number (int)."
    return None


# ----------------------------------------------------------------------------- function exercises


@dataclass(frozen=True)
class Ints:
    """A random int argument: uniform in [low, high], or one of ``choices``."""

    low: int = 0
    high: int = 100
    choices: tuple = ()

    def draw(self, rng):
        return int(rng.choice(self.choices)) if self.choices else int(rng.integers(self.low, self.high + 1))


@dataclass(eq=False, repr=False)
class FunctionExercise(Exercise):
    """A plain Python function checked against ``reference`` on edge cases then random inputs.

    ``inputs`` maps argument name -> ``Ints`` (or any object with ``draw(rng)``); ``where`` can
    reject a drawn combination; ``mistakes`` is a tuple of (wrong_function, message) so that a
    known mistake gets its own explanation.
    """

    reference: Callable = None
    inputs: dict = field(default_factory=dict)
    edge_cases: tuple = ()
    trials: int = 200
    where: Callable = None
    mistakes: tuple = ()

    def reference_answer(self):
        return self.reference

    def _solution_text(self) -> str:
        return _source(self.reference)

    def _cases(self, rng):
        names = list(self.inputs)
        yield from (dict(zip(names, c)) for c in self.edge_cases)
        made = 0
        while made < self.trials:
            case = {k: spec.draw(rng) for k, spec in self.inputs.items()}
            if self.where is None or self.where(**case):
                made += 1
                yield case

    def _grade(self, fn, rng):
        if _numba.is_cuda_function(fn):
            raise LearnerError("this exercise wants a plain Python function, not a @cuda.jit kernel: remove "
                               f"@cuda.jit above def {fn.__name__}(...).")
        if not callable(fn):
            raise LearnerError(f"pass your function itself (e.g. check({self.name})), not {_fmt(fn)}.")
        fname = getattr(fn, "__name__", "<lambda>")
        said = lambda case: (f"{fname}({_args_text(case)})" if fname != "<lambda>"  # noqa: E731
                             else f"your function with {_args_text(case)}")
        _check_arity(fn, list(self.inputs), "your function")
        cases = list(self._cases(rng))
        got, want = [], []
        for case in cases:
            want.append(self.reference(**case))
            try:
                g = fn(*case.values())
            except Exception as e:  # noqa: BLE001 - learner code
                raise LearnerError(f"{said(case)} raised {type(e).__name__}: {e}; fix it and check again.") from None
            got.append(g)
            problem = _type_problem(g, want[-1], said(case))
            if problem:
                return "failed", problem, None, {}
        wrong = [i for i in range(len(cases)) if not _same(got[i], want[i])]
        if not wrong:
            c = cases[len(self.edge_cases) if len(cases) > len(self.edge_cases) else 0]
            return "passed", (f"correct on all {len(cases)} inputs, e.g. {_args_text(c)} gives "
                              f"{_fmt(self.reference(**c))}."), None, {"cases": len(cases)}
        if len({repr(g) for g in got}) == 1 and len({repr(w) for w in want}) > 1:
            return "failed", (f"{'your function' if fname == '<lambda>' else fname} returned {_fmt(got[0])} for every input: it looks "
                              f"hard-coded for one example; compute the answer from {', '.join(self.inputs)} instead."), None, {}
        i = wrong[0]
        why = "ex.hint() gives a nudge."
        for mistake, message in self.mistakes:
            if all(_same(got[j], mistake(**cases[j])) for j in wrong):
                why = message
                break
        return "failed", (f"{said(cases[i])} returned {_fmt(got[i])} but should return {_fmt(want[i])} "
                          f"({len(wrong)} of {len(cases)} inputs wrong): {why}"), None, {}


def _args_text(case: dict) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in case.items())


def _check_arity(fn, names, what) -> None:
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        varargs = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    if varargs or len(params) == len(names):
        return
    mine = ", ".join(p.name for p in params) or "nothing"
    raise LearnerError(f"{what} takes {len(params)} argument{'s' if len(params) != 1 else ''} ({mine}) but this exercise "
                       f"passes {len(names)} ({', '.join(names)}): change the def line to take exactly those, in that order.")


# ----------------------------------------------------------------------------- kernel exercises

@dataclass(frozen=True)
class Arg:
    """One kernel parameter. role: "in" (random values), "out" (poisoned before the run), "acc"
    (starts at ``init``, e.g. a histogram for atomics), "scalar" (random number), "size" (n).
    shape: "n" -> (n,), "blocks" -> (blocks per grid,), a tuple, or a callable of n.
    Ints are drawn from [low, high) and floats from [low, high)."""

    name: str
    role: str
    dtype: str = "float32"
    shape: Any = "n"
    low: float = -1.0
    high: float = 1.0
    init: float = 0


def In(name, dtype="float32", shape="n", low=-1.0, high=1.0):  # noqa: N802 - reads like a type in definitions
    return Arg(name, "in", dtype, shape, low, high)


def Out(name, dtype="float32", shape="n"):  # noqa: N802
    return Arg(name, "out", dtype, shape)


def Acc(name, dtype="int32", shape="n", init=0):  # noqa: N802
    return Arg(name, "acc", dtype, shape, init=init)


def Scalar(name, dtype="float32", low=-2.0, high=2.0):  # noqa: N802
    return Arg(name, "scalar", dtype, (), low, high)


def Size(name="n"):  # noqa: N802
    return Arg(name, "size", "int64", ())


def _poison(dtype):
    """NaN for floats, an extreme value for ints: a value no correct kernel writes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(np.nan)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if dtype.kind == "i" else info.max)
    return dtype.type(0)


def _make(arg: Arg, rng, n, grid):
    if arg.role == "size":
        return int(n)
    dtype = np.dtype(arg.dtype)
    if arg.role == "scalar":
        v = rng.integers(arg.low, arg.high) if dtype.kind in "iu" else rng.uniform(arg.low, arg.high)
        return dtype.type(v)
    if callable(arg.shape):
        shape = tuple(arg.shape(n))
    else:
        shape = {"n": (n,), "blocks": (grid[0],)}.get(arg.shape, arg.shape)
    if arg.role == "in":
        if dtype.kind in "iu":
            return rng.integers(arg.low, arg.high, size=shape).astype(dtype)
        return rng.uniform(arg.low, arg.high, size=shape).astype(dtype)
    return np.full(shape, _poison(dtype) if arg.role == "out" else arg.init, dtype=dtype)


@dataclass(frozen=True)
class LaunchRule:
    """How a kernel exercise is launched: one thread per element, a fixed grid, or the learner's own."""

    kind: str  # "per_element" | "fixed" | "learner"
    threads: int = 32
    blocks: int = 1
    example: Callable = None  # learner kind: a correct launch function, n -> (blocks, threads)

    @property
    def example_source(self) -> str:
        return _source(self.example).strip() if self.example else ""

    def config(self, n):
        if self.kind == "fixed":
            return (self.blocks,), (self.threads,)
        return ((n + self.threads - 1) // self.threads,), (self.threads,)


def per_element(threads=32) -> LaunchRule:
    """One thread per element: blocks = ceil(n / threads)."""
    return LaunchRule("per_element", threads)


def fixed(blocks, threads) -> LaunchRule:
    """A small fixed grid whatever n is (grid-stride loops must cover the rest)."""
    return LaunchRule("fixed", threads, blocks)


def learner_launch(example) -> LaunchRule:
    """The learner passes ``launch=f`` with f(n) -> (blocks_per_grid, threads_per_block)."""
    return LaunchRule("learner", example=example)


def _dims(value, what):
    vals = list(value) if isinstance(value, (tuple, list)) else [value]
    if not 1 <= len(vals) <= 3:
        raise LearnerError(f"{what} must be a number or a tuple of 1 to 3 numbers, got {_fmt(value)}.")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fix = " use (n + t - 1) // t rather than n / t." if isinstance(v, (float, np.floating)) else ""
            raise LearnerError(f"{what} must be whole numbers (int), got "
                               f"{_fmt(value)}:{fix or ' convert it with int(...).'}")
        if v < 1:
            raise LearnerError(f"{what} must be at least 1, got {_fmt(value)}: a launch with 0 "
                               f"{'threads' if 'thread' in what else 'blocks'} runs nothing.")
    return tuple(int(v) for v in vals)


def _validate_launch(cfg):
    """(grid, block) from the learner's launch, or a LearnerError naming what is wrong."""
    if not (isinstance(cfg, (tuple, list)) and len(cfg) == 2):
        raise LearnerError(f"your launch should give (blocks_per_grid, threads_per_block), got {_fmt(cfg)}.")
    grid, block = _dims(cfg[0], "blocks per grid"), _dims(cfg[1], "threads per block")
    total = int(np.prod(block))
    if total > MAX_THREADS_PER_BLOCK:
        raise LearnerError(f"{total} threads per block is more than the {MAX_THREADS_PER_BLOCK} a CUDA block can "
                           "hold: use 128 or 256.")
    if len(block) == 3 and block[2] > 64:
        raise LearnerError(f"a block can be at most 64 threads deep in z, got {block[2]}.")
    return grid, block


def _launch_for(ex, launch):
    """n -> (grid, block) for this check, validating a learner's launch on first use."""
    if ex.launch.kind != "learner":
        if launch is not None:
            raise LearnerError(f"{ex.id} picks the launch itself: call check(your_kernel) without launch=.")
        return ex.launch.config
    if launch is None:
        raise LearnerError(f"{ex.id} also checks your launch: call check(your_kernel, launch=your_launch) where "
                           "your_launch(n) returns (blocks_per_grid, threads_per_block).")
    if not_attempted(launch):
        raise _NotAttempted()
    if callable(launch):
        def rule(n):
            try:
                cfg = launch(n)
            except Exception as e:  # noqa: BLE001 - learner code
                raise LearnerError(f"your launch function raised {type(e).__name__}: {e} for n={n}.") from None
            if isinstance(cfg, (tuple, list)) and len(cfg) == 2 and isinstance(cfg[0], (int, np.integer)) and cfg[0] == 0 < n:
                raise _Failed(f"your launch starts 0 blocks for n = {n} (fewer elements than one block), so the last, partial "
                              "block is skipped: round the number of blocks up, (n + t - 1) // t.")
            return _validate_launch(cfg)
        return rule
    fixed_cfg = _validate_launch(launch)
    return lambda n: fixed_cfg


class _NotAttempted(Exception):
    pass


class _Failed(Exception):
    """A wrong answer found before any run (e.g. a launch of 0 blocks); the message says why."""


def _default_sizes(rng, threads, unit, several=(2, 4)):
    """Below one block; several blocks with a partial last one (twice, so inputs differ)."""
    small = int(rng.integers(1, threads)) if threads > 1 else 1
    big = [int(unit * rng.integers(*several) + rng.integers(1, max(threads, 2))) for _ in range(2)]
    return [small, *big]


def _kernel_function(kernel):
    """The learner's Python function behind a kernel, or a LearnerError saying what was passed."""
    name = getattr(kernel, "__name__", None)
    if not _numba.is_cuda_function(kernel):
        if _numba.python_function(kernel) is not None:  # kernel[blocks, threads] on a GPU
            raise LearnerError("pass the kernel itself, without [blocks, threads]: check(my_kernel); the check "
                               "chooses the launch.")
        if inspect.isfunction(kernel):
            raise LearnerError(f"{name} is a plain Python function, not a kernel: put @cuda.jit on the line above "
                               f"def {name}(...) and run that cell again.")
        raise LearnerError(f"pass your @cuda.jit kernel itself, not {type(kernel).__name__} {_fmt(kernel)[:40]}.")
    if _numba.is_device_function(kernel):
        raise LearnerError(f"{name} is a device function (@cuda.jit(device=True)), which cannot be launched: use "
                           "plain @cuda.jit for a kernel.")
    return _numba.python_function(kernel)


# -- executors: CPU tracer (numbers + verdicts) and GPU (numbers, guard bands); GPU path UNTESTED here


def _run_traced(kernel, grid, block, call_args, outputs):
    from .trace import trace

    return trace(kernel, grid, block, *call_args, outputs=tuple(outputs))


_GUARD = 64  # elements of sentinel on each side of every GPU buffer


def _run_gpu(kernel, grid, block, call_args):
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
            host = np.full(a.size + 2 * _GUARD, _poison(a.dtype), dtype=a.dtype)
            host[_GUARD:_GUARD + a.size] = a.reshape(-1)
            dev = cuda.to_device(host)
            launch_args.append(dev[_GUARD:_GUARD + a.size].reshape(a.shape))
            buffers.append((pos, a, dev, host))
        else:
            launch_args.append(a)
    try:
        kernel[grid, block](*launch_args)
        cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - CudaAPIError, typing errors...
        raise KernelError(f"your kernel failed on the GPU ({type(e).__name__}: {str(e)[:200]}); after a crash restart the "
                          "Jupyter kernel, and run with COURSE_MODE=cpu to see the offending line.") from None
    hits = []
    for pos, a, dev, host in buffers:
        back = dev.copy_to_host()
        for lo, hi, offset in ((0, _GUARD, -_GUARD), (_GUARD + a.size, back.size, -_GUARD)):
            changed = _flatnonzero(back[lo:hi].view(np.uint8) != host[lo:hi].view(np.uint8))
            if changed.size:
                hits.append((pos, int(changed[0] // a.itemsize + lo + offset)))
        a.reshape(-1)[:] = back[_GUARD:_GUARD + a.size]
    return hits


def _time_gpu(kernel, grid, block, args, reps=10) -> float:
    """Milliseconds per launch from CUDA events, after a warm-up launch (compilation). GPU only."""
    from numba import cuda

    kernel[grid, block](*args)
    cuda.synchronize()
    start, stop = cuda.event(), cuda.event()
    start.record()
    for _ in range(reps):
        kernel[grid, block](*args)
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / reps


# -- verdicts and numbers -> one sentence

_VERDICT_LABEL = {
    "out_of_bounds": "out-of-bounds access",
    "race": "race",
    "uninitialized_shared": "read of uninitialised shared memory",
    "divergent_barrier": "divergent barrier",
    "unwritten_output": "unwritten output",
}


def _verdict_message(v) -> str:
    """The tracer's own explanation (it names thread, line and fix), behind a stable label."""
    label = _VERDICT_LABEL.get(v.kind, v.kind)
    return f"the CPU tracer found {'an' if label[0] in 'aeiou' else 'a'} {label}. {str(v.message).strip()}"


def _compare(got, exp, rtol, atol, poisoned):
    """Flat indices never written (still poison) and written-but-wrong."""
    g, e = got.reshape(-1), exp.reshape(-1)
    if got.dtype.kind == "f":
        gn, en = _isnan(g), _isnan(e)
        unwritten = gn & ~en if poisoned else np.zeros(g.shape, bool)
        close = _less_equal(_abs(g.astype(np.float64) - e), atol + rtol * _abs(e.astype(np.float64))) | (gn & en)
        wrong = ~unwritten & ~close
    else:
        unwritten = (_equal(g, _poison(got.dtype)) & ~_equal(e, _poison(got.dtype))) if poisoned else np.zeros(g.shape, bool)
        wrong = ~unwritten & ~_equal(g, e)
    return _flatnonzero(unwritten), _flatnonzero(wrong)


def _ranges(idx) -> str:
    """[3,4,5,9] -> '3–5, 9' (at most three ranges)."""
    parts, start = [], idx[0]
    for a, b in zip(idx, list(idx[1:]) + [None]):
        if b != a + 1:
            parts.append(f"{start}" if start == a else f"{start}–{a}")
            start = b
    return ", ".join(parts[:3]) + (", …" if len(parts) > 3 else "")


def _unwritten_message(name, idx, size, grid, block, kind, per_block=False) -> str:
    """Name the likely cause from the pattern of never-written elements (one per thread, or
    one per block for outputs of shape "blocks")."""
    t, total = int(np.prod(block)), int(np.prod(block) * np.prod(grid))
    if per_block:
        if idx[0] == 1 and len(idx) == size - 1:
            return (f"only block 0 wrote its result; {name}[1–{size - 1}] were never written: let thread 0 of every "
                    f"block write {name}[cuda.blockIdx.x].")
        return (f"{name}[{_ranges(list(idx))}] were never written: thread 0 of every block must write "
                f"{name}[cuda.blockIdx.x].")
    n_un, first = len(idx), int(idx[0])
    what = (f"element{'s' if n_un > 1 else ''} {_ranges(list(idx))} of {name} {'were' if n_un > 1 else 'was'} never "
            "written")
    tail = first + n_un == size and idx[-1] == size - 1
    if n_un == size:
        return (f"{name} was never written: does your kernel assign to {name}[i] (and is the guard `if i < n`, not "
                "`if i > n`)?")
    if tail and first == t and np.prod(grid) > 1:
        return (f"only the first block wrote its elements (0–{t - 1}); {what}: include cuda.blockIdx.x in your "
                "index, e.g. i = cuda.grid(1).")
    if tail and first == total and kind == "fixed":
        return (f"{what}: the grid has only {total} threads, so each thread must handle several elements with a "
                "grid-stride loop (for i in range(start, n, stride)).")
    if tail and first >= (size // t) * t and first > 0:
        return (f"{what} (the last, partial block): is your grid large enough (round the number of blocks up) and "
                "does your guard use `i < n`?")
    if tail:
        return (f"{what}: is your grid large enough, and does every thread use its global index (cuda.blockIdx.x * "
                "cuda.blockDim.x + cuda.threadIdx.x)?")
    return f"{n_un} of {size} {what}: check your index, every element needs exactly one thread (i = cuda.grid(1))."


def _wrong_message(ex, name, k, ci, cases, widx, unwritten) -> str:
    got, exp = cases[ci]["got"][k].reshape(-1), cases[ci]["exp"][k].reshape(-1)
    i = int(widx[0])
    count = f" ({len(widx)} of {got.size} elements wrong" + (f", {len(unwritten)} never written)" if len(unwritten) else ")")
    head = f"{name}[{i}] is {_fmt(got[i])} but should be {_fmt(exp[i])}{count}"
    # Hard-coded: this output did not change with the inputs, though the right answer did.
    for cj, other in enumerate(cases):
        if cj == ci:
            continue
        og, oe = other["got"][k].reshape(-1), other["exp"][k].reshape(-1)
        m = min(og.size, got.size)
        same = _equal(og[:m], got[:m]) | (_isnan(og[:m]) & _isnan(got[:m])) if got.dtype.kind == "f" else _equal(og[:m], got[:m])
        if m and bool(same.all()) and not bool(_equal(oe[:m], exp[:m]).all()) and not (got.dtype.kind == "f" and _isnan(got[:m]).all()):
            return (f"{head}: {name} came out the same for different inputs, so it looks hard-coded for one "
                    "example; compute it from the input arrays.")
    for mistake, message in ex.mistakes:
        alt = mistake(**cases[ci]["inputs"])
        alt = alt if isinstance(alt, tuple) else (alt,)
        if _compare(got, _asarray(alt[k]).reshape(-1), ex.rtol, ex.atol, False)[1].size == 0:
            return f"{head}: {message}"
    if got.dtype.kind == "f":
        gw, ew = got[widx].astype(np.float64), exp[widx].astype(np.float64)
        if bool(_equal(gw, _rint(gw)).all()) and not bool(_equal(ew, _rint(ew)).all()):
            return (f"{head}: the results are whole numbers, so a variable or array is probably an integer type; "
                    "use float32 (e.g. numba.float32).")
    for shift in (1, -1):
        j = widx + shift
        ok = (j >= 0) & (j < exp.size)
        if ok.all() and _compare(got[widx], exp[j], ex.rtol, ex.atol, False)[1].size == 0:
            return f"{head}: {name}[i] holds the value of element i{shift:+d}, so your index is off by one."
    return f"{head}: compare your formula with the exercise text; ex.hint() gives a nudge."


def _status_picture(name, got, exp, rtol, atol, poisoned, title):
    """A strip per output: green correct, red wrong, grey never written (1D outputs only)."""
    if got.ndim != 1 or got.size > 4096:
        return None
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    un, wr = _compare(got, exp, rtol, atol, poisoned)
    status = np.zeros(got.size)
    status[wr], status[un] = 1, 2
    fig = Figure(figsize=(8, 1.1))
    ax = fig.add_subplot()
    ax.imshow(status[None, :], aspect="auto", cmap=ListedColormap(["#2da44e", "#cf222e", "#afb8c1"]), vmin=0, vmax=2, interpolation="nearest")
    ax.set_yticks([])
    ax.set_xlabel(f"{name} index")
    ax.set_title(f"{title}: green = correct, red = wrong, grey = never written", fontsize=9)
    return fig


def _metrics_dict(m) -> dict:
    """The tracer's Metrics as plain numbers (JSON-friendly for the grader). Per-thread means are
    over threads that touched memory, so idle threads of the last block do not dilute them."""
    active = max(m.threads - m.idle_threads, 1)
    per = lambda pair: float(pair[0]) * m.threads / active  # noqa: E731
    return {
        "threads": int(m.threads), "idle_threads": int(m.idle_threads),
        "global_reads_per_thread": per(m.global_reads), "global_writes_per_thread": per(m.global_writes),
        "shared_reads_per_thread": per(m.shared_reads), "shared_writes_per_thread": per(m.shared_writes),
        "atomics_per_thread": per(m.atomics), "max_global_reads_per_thread": int(m.global_reads[1]),
        "coalescing": float(m.coalescing), "bank_conflicts": int(m.bank_conflicted), "bank_ways_max": int(m.bank_ways_max),
    }


def _success_figure(metrics) -> str:
    """A useful number for the green line, from whatever metrics the tracer gave."""
    parts = []
    for key, label in (("global_reads_per_thread", "global read"), ("global_writes_per_thread", "global write"),
                       ("atomics_per_thread", "atomic"), ("shared_reads_per_thread", "shared read")):
        v = float(metrics.get(key, 0.0))
        if v >= 0.05:
            parts.append(f"{v:.1f} {label}{'' if v == 1 else 's'}")
    text = ", ".join(parts) + (" per thread" if parts else "")
    if "coalescing" in metrics:
        text += f"{', ' if text else ''}{float(metrics['coalescing']):.0%} coalesced"
    return text


_HIGHER_IS_BETTER = {"coalescing", "coalescing_efficiency"}


def _budget_problem(budgets, metrics) -> str | None:
    for key, limit in budgets.items():
        limit, advice = limit if isinstance(limit, tuple) else (limit, "")
        if key not in metrics:
            continue  # the tracer did not measure it (e.g. no shared memory used)
        v = float(metrics[key])
        over = v < limit if key in _HIGHER_IS_BETTER else v > limit
        if over:
            word = "at least" if key in _HIGHER_IS_BETTER else "at most"
            return f"the numbers are right, but {key.replace('_', ' ')} is {v:.2f} and the budget is {word} {limit:g}" + (": "
                                                                                                                          f"{advice}" if advice else ".")
    return None


def grade_kernel(ex, kernel, rng, launch):
    """Run ``kernel`` on fresh inputs of several sizes; first problem found becomes the message."""
    try:
        return _grade_kernel(ex, kernel, rng, launch)
    except _Failed as e:
        return "failed", str(e), None, {}


def _grade_kernel(ex, kernel, rng, launch):
    _kernel_function(kernel)
    _check_arity(_numba.python_function(kernel), [a.name for a in ex.args], "your kernel")
    try:
        rule = _launch_for(ex, launch)
    except _NotAttempted:
        return "not_attempted", f"your launch function is not written yet: replace its `# {PLACEHOLDER}` line.", None, {}
    grid0, block0 = rule(1000)
    threads = int(np.prod(block0))
    unit = threads * (ex.launch.blocks if ex.launch.kind == "fixed" else 1)
    sizes = ex.sizes(rng, threads) if ex.sizes else _default_sizes(rng, threads, unit, (1, 3) if ex.launch.kind == "fixed" else (2, 4))
    out_pos = [p for p, a in enumerate(ex.args) if a.role in ("out", "acc")]
    gpu = env.on_gpu()
    cases, metrics, verdict = [], {}, None
    for ci, n in enumerate(sizes):
        grid, block = rule(n)
        call_args = [_make(a, rng, n, grid) for a in ex.args]
        inputs = {a.name: (_copy(v) if isinstance(v, np.ndarray) else v) for a, v in zip(ex.args, call_args) if a.role in ("in", "scalar", "size")}
        exp = ex.expect(**{k: (_copy(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
        exp = [_asarray(e) for e in (exp if isinstance(exp, tuple) else (exp,))]
        if not gpu or ci < 2:  # on a GPU, a small traced CPU run still catches races and stray reads
            traced_args = [_copy(v) if isinstance(v, np.ndarray) else v for v in call_args]
            t = _run_traced(kernel, grid, block, traced_args, out_pos)
            bad = [v for v in t.verdicts if v.kind != "unwritten_output"]
            if n >= max(sizes[:ci + 1]):  # budgets and the green line use the largest traced launch
                metrics = _metrics_dict(t.metrics)
            if bad and verdict is None:
                verdict = (bad[0], t, _metrics_dict(t.metrics))
                if gpu and bad[0].kind == "out_of_bounds":  # do not let it scribble on (or crash) the GPU
                    return "failed", _verdict_message(bad[0]), _safe_show(t, bad[0]), verdict[2]
            if not gpu:
                call_args = traced_args
        if gpu:
            hits = _run_gpu(kernel, grid, block, call_args)
            if hits:
                pos, elem = hits[0]
                name = ex.args[pos].name
                return "failed", (f"your kernel wrote {name}[{elem}] outside the array (length {call_args[pos].size}) on the GPU: "
                                  "add a bounds guard `if i < n:`."), None, metrics
        cases.append({"n": n, "grid": grid, "block": block, "inputs": inputs, "exp": exp,
                      "got": [call_args[p] for p in out_pos]})
    numeric = _numeric_problem(ex, cases, out_pos)
    # Never-written elements point at the root cause (index or grid) better than the race or
    # stray access they often come with; otherwise the tracer's verdict comes first, since a
    # race can give right numbers in the tracer's fixed thread order.
    if numeric and (numeric[0] == "unwritten" or verdict is None):
        return "failed", numeric[1], numeric[2], metrics
    if verdict is not None:
        v, t, vmetrics = verdict
        return "failed", _verdict_message(v), _safe_show(t, v), vmetrics
    problem = _budget_problem(ex.budgets, metrics)
    if problem:
        return "failed", problem, None, metrics
    if gpu and ex.max_slowdown:
        slow = _speed_problem(ex, kernel, rule)
        if slow:
            return "failed", slow, None, metrics
    ns = ", ".join(str(c["n"]) for c in cases)
    extra = _success_figure(metrics)
    return "passed", f"correct for n = {ns}" + (f"; {extra}." if extra else "."), None, metrics


def _numeric_problem(ex, cases, out_pos):
    """("unwritten" | "wrong", message, picture) for the first output that is not right, else None."""
    # Largest first: a launch of several blocks tells more (first block only? last partial block?).
    for ci in sorted(range(len(cases)), key=lambda c: -cases[c]["n"]):
        case = cases[ci]
        for k, p in enumerate(out_pos):
            arg, got, exp = ex.args[p], case["got"][k], case["exp"][k]
            if got.shape != exp.shape:  # an engine/definition bug, not the learner's
                raise CourseError(f"{ex.id}: expected {arg.name} of shape {exp.shape}, made {got.shape}.")
            un, wr = _compare(got, exp, ex.rtol, ex.atol, arg.role == "out")
            if not (un.size or wr.size):
                continue
            if wr.size:
                kind, msg = "wrong", _wrong_message(ex, arg.name, k, ci, cases, wr, un)
            else:
                kind, msg = "unwritten", _unwritten_message(arg.name, un, got.size, case["grid"], case["block"],
                                                            ex.launch.kind, arg.shape == "blocks")
            title = f"n = {case['n']}, {case['grid'][0]} blocks x {case['block'][0]} threads"
            return kind, msg, _status_picture(arg.name, got, exp, ex.rtol, ex.atol, arg.role == "out", title)
    return None


def _safe_show(t, verdict):
    """The tracer's picture of the offending block (Trace.show takes a linear block number)."""
    try:
        b = verdict.block if verdict.block is not None else 0
        if isinstance(b, tuple):
            gx, gy = t.griddim[0], t.griddim[1]
            b = b[0] + gx * (b[1] + gy * (b[2] if len(b) > 2 else 0))
        return t.show(block=int(b))
    except Exception:  # noqa: BLE001 - a picture is a bonus; the sentence already says it all
        return None


def _speed_problem(ex, kernel, rule) -> str | None:
    """GPU only. TODO(verify on GPU): compare learner and reference at a large size."""
    from numba import cuda

    n = env.size(gpu=1 << 22, cpu=1024)
    grid, block = rule(n)
    rng = np.random.default_rng(0)
    args = [cuda.to_device(v) if isinstance(v, np.ndarray) else v for v in (_make(a, rng, n, grid) for a in ex.args)]
    ref_grid, ref_block = (ex.launch.example(n) if ex.launch.kind == "learner" else (grid, block))
    mine, ref = _time_gpu(kernel, grid, block, args), _time_gpu(ex.reference, ref_grid, ref_block, args)
    if mine > ex.max_slowdown * ref:
        return (f"the numbers are right, but your kernel takes {mine:.3f} ms at n = {n}, {mine / ref:.1f}x the "
                f"reference ({ref:.3f} ms); the budget is {ex.max_slowdown:g}x.")
    return None


@dataclass(eq=False, repr=False)
class KernelExercise(Exercise):
    """A ``@cuda.jit`` kernel. ``args`` lists the kernel's parameters in order (``In``, ``Out``,
    ``Acc``, ``Scalar``, ``Size``); ``expect(**inputs)`` is the NumPy oracle returning the
    output(s) in ``args`` order; ``reference`` is the model kernel (solution, tests, GPU speed).

    ``budgets`` maps a tracer metric to a limit, e.g. ``{"global_reads_per_thread": 2}`` (a
    maximum) or ``{"coalescing": 0.9}`` (a minimum for metrics where higher is better).
    ``mistakes`` is a tuple of (wrong_oracle, message) recognised by their outputs.
    """

    args: tuple = ()
    expect: Callable = None
    reference: Any = None
    launch: LaunchRule = field(default_factory=lambda: per_element(32))
    sizes: Callable = None  # rng, threads_per_launch -> list of n; default: below one block, several with a partial last
    rtol: float = 1e-5
    atol: float = 1e-6
    budgets: dict = field(default_factory=dict)
    max_slowdown: float | None = None  # GPU only: learner time / reference time
    mistakes: tuple = ()

    def reference_answer(self):
        return self.reference

    def reference_options(self) -> dict:
        """Options a correct learner passes with the reference (a launch for learner-launch exercises)."""
        return {"launch": self.launch.example} if self.launch.kind == "learner" else {}

    def _solution_text(self) -> str:
        text = _source(self.reference)
        if self.launch.kind == "learner":
            text += f"\n# launch: {self.launch.example_source}"
        return text

    def _grade(self, kernel, rng, launch=None):
        return grade_kernel(self, kernel, rng, launch)


# ----------------------------------------------------------------------------- registry and progress


def register(module_name: str, namespace: dict) -> dict:
    """Name every Exercise in a problems module after its variable; returns {name: exercise}."""
    notebook = module_name.rsplit(".", 1)[-1]
    found = {}
    for var, obj in namespace.items():
        if isinstance(obj, Exercise) and not var.startswith("_"):
            obj.name, obj.notebook = var, notebook
            found[var] = obj
    return found


def progress(show: bool = True):
    """Show a table of this learner's exercises (status, attempts, points, last result)."""
    from . import problems

    rows = _progress.rows(problems.all_exercises())
    if show:
        if _in_jupyter():
            from IPython.display import HTML, display

            display(HTML(_progress.table_html(rows)))
        else:
            print(_progress.table_text(rows))
        return None
    return rows


__all__ = [
    "Result", "Exercise", "ValueExercise", "FunctionExercise", "KernelExercise", "Ints",
    "Arg", "In", "Out", "Acc", "Scalar", "Size", "LaunchRule", "per_element", "fixed", "learner_launch",
    "register", "progress", "not_attempted", "GPURequired", "KernelError", "UnsupportedByTracer", "env",
]
