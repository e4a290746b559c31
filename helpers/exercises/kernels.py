"""Kernel exercises: the learner's ``@cuda.jit`` kernel run on fresh inputs of several sizes,
under the CPU tracer (CPU mode) or on the GPU with guard bands plus a small traced CPU run.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import _numba, env
from ..errors import CourseError, LearnerError
from .base import PLACEHOLDER, Exercise, fmt, source
from .executor import LOCAL
from .explain import SAVED, budget_problem, numeric_problem, success_figure, verdict_message
from .functions import check_arity
from .inputs import make
from .launch import Failed, LaunchRule, NotAttempted, launch_for, per_element
from .plan import check_plan
from .results import Graded
from .technique import changed_input, spread_problem, wide_scratch

_asarray, _copy = SAVED.asarray, SAVED.array


def kernel_function(kernel):
    """The learner's Python function behind a kernel, or a LearnerError saying what was passed."""
    name = getattr(kernel, "__name__", None)
    if not _numba.is_cuda_function(kernel):
        if _numba.python_function(kernel) is not None:  # kernel[blocks, threads] on a GPU
            raise LearnerError(
                "pass the kernel itself, without [blocks, threads]: check(my_kernel); the check chooses the launch."
            )
        if _numba.is_plain_function(kernel):
            raise LearnerError(
                f"{name} is a plain Python function, not a kernel: put @cuda.jit on the line above "
                f"def {name}(...) and run that cell again."
            )
        raise LearnerError(f"pass your @cuda.jit kernel itself, not {type(kernel).__name__} {fmt(kernel)[:40]}.")
    if _numba.is_device_function(kernel):
        raise LearnerError(
            f"{name} is a device function (@cuda.jit(device=True)), which cannot be launched: use "
            "plain @cuda.jit for a kernel."
        )
    return _numba.python_function(kernel)


TRACE_ON_GPU = 8192  # threads: a launch this small is traced on the CPU in GPU mode too


def grade_kernel(ex, kernel, rng, launch, executor=LOCAL) -> Graded:
    """Run ``kernel`` on fresh inputs of several sizes; first problem found becomes the message."""
    try:
        return _grade_kernel(ex, kernel, rng, launch, executor)
    except Failed as e:
        return Graded("failed", str(e))


def _grade_kernel(ex, kernel, rng, launch, executor) -> Graded:
    """A GPU compiler's refusal comes first: such a kernel never runs on a GPU, whatever the
    tracer made of it (or of the Python exception it raised there)."""
    compiling = []
    try:
        graded = _run_cases(ex, kernel, rng, launch, compiling, executor)
    except CourseError as e:
        if order := order_problem(ex, kernel):
            return Graded("failed", order)
        if compiling and compiling[0].result().ok is False:
            return Graded("failed", compiling[0].result().message)
        if getattr(e, "refused", False):  # a GPU launch Numba refused to compile (run_gpu)
            return Graded("failed", str(e))
        raise
    except Exception:  # any error (an IndexError from a scalar where an array was meant...): swapped parameters?
        if order := order_problem(ex, kernel):
            return Graded("failed", order)
        raise
    failed = graded.status == "failed" or (compiling and compiling[0].result().ok is False)
    if failed and (order := order_problem(ex, kernel)):
        return Graded("failed", order, graded.picture, graded.metrics)
    if compiling and compiling[0].result().ok is False:
        return Graded("failed", compiling[0].result().message)
    if graded.status == "passed" and compiling and compiling[0].result().ok is None:
        # Right on the tracer, but nobody asked a GPU compiler: say so, and do not count it.
        why = compiling[0].result().message.rstrip(".").removesuffix("; this is not your mistake")
        fix = (
            "define the kernel with @cuda.jit in a notebook cell or a .py file (its source must be readable) "
            "and check again"
            if "skipped" in why
            else "run `make lab` (it reinstalls the locked compiler, the nvidia-nvvm wheel) and check again"
        )
        return Graded(
            "unchecked",
            f"your kernel gives the right numbers on the CPU tracer, but {why}, so it is not marked passed: {fix}.",
            graded.picture,
            graded.metrics,
        )
    return graded


def order_problem(ex, kernel) -> str | None:
    """The kernel's parameters are the exercise's, in another order: the check passes them by position,
    so an output lands where an input was expected (and "never written", or an index into a scalar,
    is all that shows)."""
    fn = _numba.python_function(kernel)
    try:
        mine = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    want = [a.name for a in ex.args]
    if mine == want or len(mine) != len(want):
        return None
    if sorted(mine) != sorted(want):  # other names too: judge by the names both use
        moved = [n for n in mine if n in want and mine.index(n) != want.index(n)]
        if not moved:
            return None
        n = moved[0]
        return (
            f"your kernel's parameters are in the wrong order: {n} is parameter {mine.index(n) + 1} of "
            f"def {fn.__name__}({', '.join(mine)}), but the check passes ({', '.join(want)}) in that order, by "
            f"position, so {n} is parameter {want.index(n) + 1}; reorder the def line."
        )
    return (
        f"your kernel's parameters are in the wrong order: def {fn.__name__}({', '.join(mine)}), but the check "
        f"passes ({', '.join(want)}) in that order, by position; reorder the def line to {fn.__name__}"
        f"({', '.join(want)})."
    )


def read_before_write(ex, kernel) -> str | None:
    """The kernel reads an output it should only assign (out[i] += ..., out[i] = out[i] + ...): outputs
    start with whatever was in memory (the check fills them with NaN), so the result is garbage."""
    try:
        tree = ast.parse(source(kernel))
    except SyntaxError:
        return None
    fn = _numba.python_function(kernel)
    try:
        mine = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    outs = {mine[p] for p, a in enumerate(ex.args) if a.role == "out" and p < len(mine)}
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AugAssign) else node
        if not isinstance(target, ast.Subscript) or not isinstance(target.value, ast.Name):
            continue
        name = target.value.id
        if name in outs and (isinstance(node, ast.AugAssign) or isinstance(target.ctx, ast.Load)):
            op = "+=" if isinstance(node, ast.AugAssign) else "reads"
            how = f"{name}[...] {op} ..." if op == "+=" else f"your kernel reads {name}[...]"
            return (
                f"{name} was read before being written: {how} uses the old contents of {name}, which start "
                f"as garbage (the check fills {name} with NaN); {name} must be assigned (=), not accumulated "
                "into: add up in a local variable, then write it once."
            )
    return None


def _run_cases(ex, kernel, rng, launch, compiling, executor) -> Graded:
    kernel_function(kernel)
    check_arity(_numba.python_function(kernel), [a.name for a in ex.args], "your kernel")
    try:
        rule = launch_for(ex, launch)
    except NotAttempted:
        return Graded("not_attempted", f"your launch function is not written yet: replace its `# {PLACEHOLDER}` line.")
    plan = check_plan(ex, rule, rng)
    sizes = [c.n for c in plan]
    out_pos = [p for p, a in enumerate(ex.args) if a.role in ("out", "acc")]
    gpu = env.on_gpu()
    cases, metrics, verdict, elements, clobbered, wide = [], {}, None, 0, None, None
    for ci, (n, grid, block) in enumerate(plan):
        traced_got = None
        call_args = [make(a, rng, n, grid) for a in ex.args]
        # The tracer is Python: ask the GPU compiler too. On a GPU a launch here compiles; the batch
        # grader's executor compiles with the judge's own server, whatever launches the kernel.
        if ci == 0 and (not gpu or not executor.launch_compiles):
            compiling.append(executor.compile_check(kernel, call_args))
        inputs = {
            a.name: (_copy(v) if isinstance(v, np.ndarray) else v)
            for a, v in zip(ex.args, call_args)
            if a.role in ("in", "scalar", "size")
        }
        exp = ex.expect(**{k: (_copy(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
        exp = [_asarray(e) for e in (exp if isinstance(exp, tuple) else (exp,))]
        # On a GPU the traced CPU run still catches races and stray reads; every case the tracer runs quickly
        # is traced, so both modes see the same verdicts and budgets (the sizes a check draws are small).
        if not gpu or ci < 2 or int(np.prod(grid)) * int(np.prod(block)) <= TRACE_ON_GPU:
            traced_args = [_copy(v) if isinstance(v, np.ndarray) else v for v in call_args]
            t = executor.trace(kernel, grid, block, traced_args, out_pos)
            bad = [v for v in t.verdicts if v.kind != "unwritten_output"]
            wide = wide or wide_scratch(t.arrays)
            if n >= max(sizes[: ci + 1]):  # budgets and the green line use the largest traced launch
                metrics = executor.metrics(t)
                elements = max((v.size for v in traced_args if isinstance(v, np.ndarray)), default=0)
            if bad and verdict is None:
                verdict = (bad[0], t, executor.metrics(t))  # the first verdict, its trace and that trace's metrics
                if gpu and bad[0].kind == "out_of_bounds":  # do not let it scribble on (or crash) the GPU
                    return _verdict_failure(*verdict)
            if gpu and any(v.kind == "grid_sync_divergent" for v in bad):  # a block that never arrives hangs the GPU
                return _verdict_failure(*verdict)
            if not gpu:
                call_args = traced_args
            traced_got = [traced_args[p] for p in out_pos]
        if gpu:
            hits = executor.run_gpu(kernel, grid, block, call_args)
            if hits:
                pos, elem = hits[0]
                name = ex.args[pos].name
                return Graded(
                    "failed",
                    (
                        f"your kernel wrote {name}[{elem}] outside the array (length {call_args[pos].size}) on "
                        "the GPU: "
                        "add a bounds guard `if i < n:`."
                    ),
                    None,
                    metrics,
                )
        clobbered = clobbered or changed_input(ex, inputs, call_args)
        got = [call_args[p] for p in out_pos]
        cases.append(
            {"n": n, "grid": grid, "block": block, "inputs": inputs, "exp": exp, "got": got, "traced": traced_got}
        )
    src = source(kernel)
    numeric = numeric_problem(ex, cases, out_pos, src)
    if gpu and numeric and ex.mistakes:
        numeric = _named_by_trace(ex, cases, out_pos, src, numeric)
    if numeric and (stale := read_before_write(ex, kernel)):
        return Graded("failed", stale, numeric.picture, metrics)
    # Never-written elements point at the root cause (index or grid) better than the race or
    # stray access they often come with; otherwise the tracer's verdict comes first, since a
    # race can give right numbers in the tracer's fixed thread order.
    if numeric and (numeric.kind == "unwritten" or verdict is None):
        return Graded("failed", numeric.message, numeric.picture, metrics)
    if verdict is not None:
        return _verdict_failure(*verdict)
    # Serial work in a few threads comes before the budgets: it is the cause of whatever they measure.
    problem = clobbered or spread_problem(ex, metrics, elements) or wide or budget_problem(ex.budgets, metrics, src)
    if problem:
        return Graded("failed", problem, None, metrics)
    ns = ", ".join(str(c["n"]) for c in cases)
    extra = success_figure(metrics)
    return Graded("passed", f"correct for n = {ns}" + (f"; {extra}." if extra else "."), None, metrics)


def _named_by_trace(ex, cases, out_pos, src, numeric):
    """A GPU's wrong numbers named by the tracer: a known mistake (a CAS that never retries) gives one
    pattern in the tracer's fixed lane order and another on every GPU run, so when the traced run of the same
    launches matches a mistake, that mistake's sentence is the cause; otherwise the GPU's numbers speak."""
    traced = [{**c, "got": c["traced"]} for c in cases if c["traced"] is not None]
    named = numeric_problem(ex, traced, out_pos, src) if traced else None
    if named and any(sentence in named.message for _, sentence in ex.mistakes):
        return named
    return numeric


def _verdict_failure(verdict, t, metrics) -> Graded:
    """The tracer's verdict as the failure: its sentence, the picture of its block, that trace's metrics."""
    return Graded("failed", verdict_message(verdict), safe_show(t, verdict), metrics)


def safe_show(t, verdict):
    """The tracer's picture of the offending block (Trace.show takes a linear block number)."""
    try:
        b = verdict.block if verdict.block is not None else 0
        if isinstance(b, tuple):
            gx, gy = t.griddim[0], t.griddim[1]
            b = b[0] + gx * (b[1] + gy * (b[2] if len(b) > 2 else 0))
        return t.show(block=int(b))
    except Exception:  # any failure: a picture is a bonus; the sentence already says it all
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
    sizes: Callable = (
        None  # rng, threads_per_launch -> list of n; default: below one block, several with a partial last
    )
    rtol: float = 1e-5
    atol: float = 1e-6
    budgets: dict = field(default_factory=dict)
    mistakes: tuple = ()
    spread_advice: str = ""  # how this exercise spreads its work over threads, for the serial-work sentence

    def reference_answer(self):
        return self.reference

    def reference_options(self) -> dict:
        """Options a correct learner passes with the reference (a launch for learner-launch exercises)."""
        return {"launch": self.launch.example} if self.launch.kind == "learner" else {}

    def _solution_text(self) -> str:
        text = source(self.reference)
        if self.launch.kind == "learner":
            text += f"\n# launch: {self.launch.example_source}"
        return text

    def _grade(self, kernel, rng, launch=None, executor=LOCAL) -> Graded:
        return grade_kernel(self, kernel, rng, launch, executor)
