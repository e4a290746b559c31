"""Derive every mutant of every exercise's reference and grade it with the exercise's own check.

For a kernel exercise the kernel is mutated with the kernel operators and, where the learner
writes the launch, the launch function with the host operators; a function exercise's
reference, a device pipeline, and a library call's factory get the host operators. Each mutant
is graded with the check a learner's answer gets (same seed for all, so a literal copied from
the check's first launch is the one the check uses). A mutant is killed when its status is
``failed`` or ``error``: anything else is a green tick (or an unchecked one) for wrong code,
unless ``equivalent`` says why that mutant is right.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..exercises import KernelExercise
from ..exercises.launch import launch_for
from ..exercises.libraries import CudaCExercise
from ..exercises.plan import check_plan
from ..exercises.tiles import TileKernelExercise
from . import c_answers, call_ops, host_ops, kernel_ops
from .build import build, function_tree, globals_of, unresolved
from .sites import Context, call_name, mutate

SEED = 20261127  # one seed for the report: the literals of the check's first launch come from it
KILLED = ("failed", "error")


@dataclass(frozen=True)
class Mutant:
    exercise: str  # "nb02.vector_add"
    part: str  # "kernel", "launch", "function", "factory", "cuda_c" (a CUDA C answer: source or expressions)
    operator: str
    site: str
    source: str

    @property
    def key(self) -> str:
        return f"{self.exercise} | {self.part} | {self.operator} | {self.site}"


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str
    message: str
    seconds: float = 0.0  # how long its grading took (the journal keeps it; the slowest are printed)

    @property
    def killed(self) -> bool:
        return self.status in KILLED


def exercise_id(ex) -> str:
    return f"{ex.notebook}.{ex.name}"


def targets(ex) -> list:
    """(part, reference function, operators, call) for each piece of the exercise a learner writes."""
    factory = getattr(ex, "factory", None)
    if isinstance(ex, (CudaCExercise, TileKernelExercise)):
        return [("cuda_c", ex.reference, c_answers.OPERATORS, False)]
    host_code = host_ops.OPERATORS + call_ops.OPERATORS  # code that launches, copies and calls libraries
    if isinstance(ex, KernelExercise):
        out = [("kernel", ex.reference, kernel_ops.OPERATORS, False)]
        if ex.launch.kind == "learner":
            out.append(("launch", ex.launch.example, host_code, False))
        return out
    if factory is not None:
        return [("factory", factory, host_ops.OPERATORS, True)]
    reference = getattr(ex, "reference", None)
    kind = type(ex).__name__
    if callable(reference) and kind in ("FunctionExercise", "ApproxFunctionExercise"):
        return [("function", reference, host_ops.OPERATORS, False)]
    if callable(reference) and kind in ("DevicePipelineExercise", "CallExercise", "ArrayExercise"):
        return [("function", reference, host_code, False)]
    return []


def context(ex, tree) -> Context:
    declared = tuple(
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and call_name(node.value) in ("cuda.shared.array", "cuda.local.array")
        for t in node.targets
        if isinstance(t, ast.Name)
    )
    if not isinstance(ex, KernelExercise):
        return Context(arrays=declared)
    params = [a.arg for a in tree.args.args]
    roles = [a.role for a in ex.args]
    rule = launch_for(ex, ex.launch.example if ex.launch.kind == "learner" else None)
    size, grid, block = check_plan(ex, rule, np.random.default_rng(SEED))[0]
    pad = lambda t: tuple(t) + (1,) * (3 - len(t))  # noqa: E731 - a one-line shape helper
    return Context(
        inputs=tuple(p for p, r in zip(params, roles) if r == "in"),
        outputs=tuple(p for p, r in zip(params, roles) if r in ("out", "acc")),
        block=pad(block),
        grid=pad(grid),
        size=int(size),
        arrays=declared,
    )


def mutants(ex) -> Iterator[tuple[Mutant, ast.FunctionDef, object, bool]]:
    """Every distinct, runnable mutant of the exercise: (Mutant, tree, namespace, call); for a CUDA C
    answer the "tree" is the mutated answer itself (a string, or a reduction's four) and nothing is built."""
    if isinstance(ex, (CudaCExercise, TileKernelExercise)):
        for m in c_answers.mutants(ex, SEED):
            yield Mutant(exercise_id(ex), "cuda_c", m.operator, m.site, m.source), m.answer, None, False
        return
    for part, fn, operators, call in targets(ex):
        tree = function_tree(fn)
        namespace = globals_of(fn)
        ctx = context(ex, tree)
        seen, labels = {ast.unparse(tree)}, {}
        for op in operators:
            for mutated, site in mutate(tree, op.match, op.variants, ctx):
                text = ast.unparse(mutated)
                if text in seen or unresolved(mutated, namespace):
                    continue
                seen.add(text)
                # Two sites can read alike (two 256s on one line): number the later ones so keys stay unique.
                labels[(op.name, site)] = labels.get((op.name, site), 0) + 1
                if labels[(op.name, site)] > 1:
                    site = f"{site} (#{labels[(op.name, site)]})"
                yield Mutant(exercise_id(ex), part, op.name, site, text), mutated, namespace, call


def grade(ex, mutant: Mutant, tree, namespace, call: bool) -> Outcome:
    """The exercise's check on one mutant (built fresh), as a learner's answer is graded."""
    try:
        answer = tree if mutant.part == "cuda_c" else build(tree, namespace, call)
    except Exception as e:  # a mutant that does not even build is not a runnable answer: say so, it counts as killed
        return Outcome(mutant, "error", f"did not build: {type(e).__name__}: {e}")
    options = {}
    if isinstance(ex, KernelExercise) and ex.launch.kind == "learner":
        options = {"launch": answer if mutant.part == "launch" else ex.launch.example}
        if mutant.part == "launch":
            answer = ex.reference
    result = ex.grade(answer, seed=SEED, **options)
    status = result.status
    if status == "error" and re.search(r"\b(ModuleNotFoundError|ImportError)\b", result.message):
        status = "broken"  # the course's own environment failed (a package missing), not the mutant: proves nothing
    return Outcome(mutant, status, result.message)


def grade_job(job) -> Outcome:
    """(exercise id, mutant key) -> its timed Outcome: derives the exercise's mutants again (cheap
    and deterministic), so a worker process needs only the two strings."""
    import dataclasses
    import time

    from ..problems import all_exercises

    exercise, key = job
    ex = next(e for e in all_exercises() if exercise_id(e) == exercise)
    for m, tree, namespace, call in mutants(ex):
        if m.key == key:
            start = time.perf_counter()
            outcome = grade(ex, m, tree, namespace, call)
            return dataclasses.replace(outcome, seconds=time.perf_counter() - start)
    raise LookupError(f"{key}: not derived")


def run_exercise(ex) -> list[Outcome]:
    return [grade(ex, m, tree, ns, call) for m, tree, ns, call in mutants(ex)]


GPU_LIKE = {"1d": 1 << 14, "2d": 96}  # sizes an equivalent mutant must also be right at
DRAWS = 20_000  # inputs an equivalent host function must agree with the reference on


def right_beyond_the_check(ex, answer) -> bool:
    """Is an answer the check cannot tell from the reference really right? A kernel at a GPU-like size
    (``right_at_size``); a function on many more inputs than the check draws."""
    if isinstance(ex, KernelExercise):
        return right_at_size(ex, answer)
    if isinstance(ex, TileKernelExercise):  # its check on other inputs (other seeds)
        return all(ex.grade(answer, seed=SEED + k).status == "passed" for k in range(8))
    if isinstance(ex, CudaCExercise):
        return c_right(ex, answer)
    if getattr(ex, "judge", None) is not None:  # a call judged whole: its own check, on many more draws
        return all(ex.grade(answer, seed=SEED + k).status == "passed" for k in range(40))
    rng = np.random.default_rng(SEED)
    names = list(ex.inputs)
    cases = [dict(zip(names, c)) for c in ex.edge_cases]
    while len(cases) < DRAWS:
        case = {k: ex.inputs[k].draw(rng) for k in names}
        if ex.where is None or ex.where(**case):
            cases.append(case)
    return all(answer(**c) == ex.reference(**c) for c in cases)


def c_right(ex, answer, draws: int = 12) -> bool:
    """Is a CUDA C answer right on many more inputs than the check draws, with zeros and the ends of
    each input's range planted in every array (where a boundary mutant would differ), at two sizes?"""
    from ..exercises.cuda_run import grown, judge, run_on_cpu
    from ..exercises.executor import LOCAL
    from ..exercises.libraries import _to_source

    src = _to_source(ex.kind, answer, ex)
    rng = np.random.default_rng(SEED)
    for k in range(draws):
        values = ex.make_inputs(rng)
        values = grown(values, 1 << 14) if k % 2 else values
        for v in values.values():
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                v[::5], v[1::7], v[2::7] = 0, v.min(), v.max()
        status, out = run_on_cpu(ex, src, values, "it", LOCAL)
        if status != "ran" or judge(ex, values, out[0], "it") is not None:
            return False
    return True


TRACE_CAP = 1 << 15  # threads the tracer runs in a few seconds: a GPU-like size is halved down to it


def right_at_size(ex, answer) -> bool:
    """Does a kernel answer compute the oracle's numbers at a GPU-like size (traced on the CPU)?
    The check's own sizes are small; an equivalent mutant must be right where a GPU would run it. The
    size is halved while the launch has more than TRACE_CAP threads, and where the exercise's own
    launch cannot cover it (one block of 64 threads scans at most 64 elements: the reference is wrong
    there too)."""
    from ..exercises.launch import Grid2D

    n = GPU_LIKE["2d" if isinstance(ex.launch, Grid2D) else "1d"]
    rule = launch_for(ex, ex.launch.example if ex.launch.kind == "learner" else None)
    while n > 1 and int(np.prod(rule(n, 0)[0])) * int(np.prod(rule(n, 0)[1])) > TRACE_CAP:
        n //= 2
    while True:
        if _right(ex, answer, rule, n):
            return True
        if n <= 1 or _right(ex, ex.reference, rule, n):
            return False
        n //= 2


def _right(ex, answer, rule, n: int) -> bool:
    from ..exercises.explain import compare
    from ..exercises.inputs import make
    from ..tracer import trace

    grid, block = rule(n, 0)
    rng = np.random.default_rng(SEED)
    args = [make(a, rng, n, grid) for a in ex.args]
    inputs = {a.name: (v.copy() if isinstance(v, np.ndarray) else v) for a, v in zip(ex.args, args) if a.role != "out"}
    want = ex.expect(**{a.name: inputs[a.name] for a in ex.args if a.role in ("in", "scalar", "size")})
    want = want if isinstance(want, tuple) else (want,)
    trace(answer, grid, block, *args)
    got = [args[p] for p, a in enumerate(ex.args) if a.role in ("out", "acc")]
    return all(
        not any(part.size for part in compare(g, np.asarray(w), ex.rtol, ex.atol, True)) for g, w in zip(got, want)
    )
