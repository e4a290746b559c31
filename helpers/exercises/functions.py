"""Exercises whose answer is a plain Python function, compared with a reference on many inputs."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import _numba
from ..errors import CourseError, LearnerError
from .base import Exercise, fmt, fmt_pair, rounding_note, source
from .causes import floor_divisions
from .explain import floor_sentence, whole_for_fractions
from .results import Graded
from .values import same, type_problem


@dataclass(frozen=True)
class Ints:
    """A random int argument: uniform in [low, high], or one of ``choices``."""

    low: int = 0
    high: int = 100
    choices: tuple = ()

    def draw(self, rng):
        return int(rng.choice(self.choices)) if self.choices else int(rng.integers(self.low, self.high + 1))


@dataclass(frozen=True)
class Floats:
    """A random float argument, uniform in [low, high], rounded to ``decimals`` (a value a learner
    could type), never below ``low``."""

    low: float = 0.0
    high: float = 1.0
    decimals: int | None = None

    def draw(self, rng):
        v = float(rng.uniform(self.low, self.high))
        return v if self.decimals is None else max(self.low, round(v, self.decimals))


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
    running = "your function"  # the watchdog's name for it: "your function has run line 7 for 20 s"
    mistakes: tuple = ()

    def reference_answer(self):
        return self.reference

    def _solution_text(self) -> str:
        return source(self.reference)

    def _cases(self, rng):
        names = list(self.inputs)
        yield from (dict(zip(names, c)) for c in self.edge_cases)
        made = 0
        while made < self.trials:
            case = {k: spec.draw(rng) for k, spec in self.inputs.items()}
            if self.where is None or self.where(**case):
                made += 1
                yield case

    def _grade(self, fn, rng) -> Graded:
        if _numba.is_cuda_function(fn):
            raise LearnerError(
                "this exercise wants a plain Python function, not a @cuda.jit kernel: remove "
                f"@cuda.jit above def {fn.__name__}(...)."
            )
        if not callable(fn):
            raise LearnerError(f"pass your function itself (e.g. check({self.name})), not {fmt(fn)}.")
        fname = getattr(fn, "__name__", "<lambda>")

        def said(case):
            return f"{fname}({args_text(case)})" if fname != "<lambda>" else f"your function with {args_text(case)}"

        check_arity(fn, list(self.inputs), "your function")
        cases = list(self._cases(rng))
        got, want = [], []
        for case in cases:
            want.append(self.reference(**case))
            try:
                g = fn(*case.values())
            except CourseError:  # the watchdog stopped it: its sentence names the line
                raise
            except Exception as e:  # the learner's code may raise anything: one sentence names it
                raise LearnerError(f"{said(case)} raised {type(e).__name__}: {e}; fix it and check again.") from None
            got.append(g)
            problem = type_problem(g, want[-1], said(case))
            if problem:
                return Graded("failed", problem)
        wrong = [i for i in range(len(cases)) if not same(got[i], want[i])]
        if not wrong:
            c = cases[len(self.edge_cases) if len(cases) > len(self.edge_cases) else 0]
            return Graded(
                "passed",
                f"correct on all {len(cases)} inputs, e.g. {args_text(c)} gives {fmt(self.reference(**c))}.",
                None,
                {"cases": len(cases)},
            )
        i = wrong[0]
        shown = fmt_pair(got[i], want[i])
        head = (
            f"{said(cases[i])} returned {shown[0]} but should return {shown[1]} "
            f"({len(wrong)} of {len(cases)} inputs wrong)"
        )
        # Before "hard-coded": floor division makes every result 0 whatever the inputs (a catalogued
        # mistake that floors says it better).
        floored = floor_problem(fn, [got[j] for j in wrong], [want[j] for j in wrong])
        if floored and not self._known(got, cases, wrong):
            return Graded("failed", f"{head}: {floored}")
        if len({repr(g) for g in got}) == 1 and len({repr(w) for w in want}) > 1:
            return Graded(
                "failed",
                f"{'your function' if fname == '<lambda>' else fname} returned {fmt(got[0])} for every "
                "input: it looks "
                f"hard-coded for one example; compute the answer from {', '.join(self.inputs)} instead.",
            )
        order = order_problem(fn, list(self.inputs), [cases[j] for j in wrong], self.reference)
        if order:
            return Graded("failed", order)
        why = self._known(got, cases, wrong) or rounding_note(got[i], want[i]) or self.nudge()
        return Graded("failed", f"{head}: {why}")

    def _known(self, got, cases, wrong) -> str | None:
        """The message of the catalogued mistake that gives every wrong result, if one does."""
        for mistake, message in self.mistakes:
            if all(same(got[j], mistake(**cases[j])) for j in wrong):
                return message
        return None


def floor_problem(fn, got, want) -> str | None:
    """Whole-number results where the answers have fractions, from a function that floor-divides:
    the // is the cause (all 0 is not hard-coding), quoted as the learner wrote it."""
    numbers = (int, float, np.integer, np.floating)
    if not all(isinstance(v, numbers) and not isinstance(v, (bool, np.bool_)) for v in (*got, *want)):
        return None
    if not whole_for_fractions(np.array(got, float), np.array(want, float)):
        return None
    # The learner's own function, not ApproxFunctionExercise's snapping wrapper: a function graded from the
    # student's process brings its source along, which the wrapper does not.
    try:
        own = inspect.unwrap(fn)
    except ValueError:  # a __wrapped__ cycle: read the function as it is
        own = fn
    found = floor_divisions(source(own), kernel=False)
    if not found:
        return None
    return floor_sentence(found[0], all(float(g) == 0 for g in got), "result", "results")


def order_problem(fn, names, cases, reference) -> str | None:
    """The learner's parameters are the exercise's names in another order (the check passes them by
    position), and the answers are right once the arguments are matched by name."""
    try:
        mine = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return None
    if mine == names or sorted(mine) != sorted(names):
        return None
    try:
        by_name = [fn(*(case[k] for k in mine)) for case in cases]
    except Exception:  # the learner's code may raise anything; the positional message stands
        return None
    if not all(same(g, reference(**case)) for g, case in zip(by_name, cases)):
        return None
    name = getattr(fn, "__name__", "your function")
    return (
        f"your function's parameters are in the wrong order: def {name}({', '.join(mine)}), but the check passes "
        f"({', '.join(names)}) in that order, by position; reorder the def line to {name}({', '.join(names)})."
    )


def args_text(case: dict) -> str:
    return ", ".join(f"{k}={fmt(v)}" for k, v in case.items())


def check_arity(fn, names, what) -> None:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        varargs = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    if varargs or len(params) == len(names):
        return
    mine = ", ".join(p.name for p in params) or "nothing"
    raise LearnerError(
        f"{what} takes {len(params)} argument{'s' if len(params) != 1 else ''} ({mine}) but this exercise "
        f"passes {len(names)} ({', '.join(names)}): change the def line to take exactly those, in that order."
    )


@dataclass(eq=False, repr=False)
class ApproxFunctionExercise(FunctionExercise):
    """A FunctionExercise whose float results may differ from the reference by rounding.

    The engine compares results exactly; ``nbytes / ms / 1e6`` and ``nbytes / (ms / 1000) / 1e9`` differ
    in the last bit. So the learner's result is snapped to the reference's (or to a known mistake's)
    when within ``rtol``, and the engine's exact comparison then does the rest.
    """

    rtol: float = 1e-9

    def _grade(self, fn, rng) -> Graded:
        if callable(fn) and not _numba.is_cuda_function(fn):
            fn = snapping(fn, [self.reference, *(m for m, _ in self.mistakes)], self.rtol)
        return super()._grade(fn, rng)


def snapping(fn, candidates, rtol):
    @functools.wraps(fn)
    def snapped(*args):
        got = fn(*args)
        if isinstance(got, (float, np.floating)):
            tol = rtol
            if isinstance(got, np.floating):  # a float32 result carries about 7 digits, not 16
                tol = max(rtol, 4 * float(np.finfo(got.dtype).eps))
            for cand in candidates:
                want = cand(*args)
                if abs(float(got) - want) <= tol * abs(want):
                    return want
        return got

    return snapped
