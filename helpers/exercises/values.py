"""Exercises whose answer is a number or a tuple, and the comparisons every kind uses."""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import Exercise, fmt
from .results import Graded


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

    def _grade(self, given, rng) -> Graded:
        problem = type_problem(given, self.answer, "your answer")
        if problem:
            return Graded("failed", problem)
        given = trim_trailing_ones(given, self.answer)
        if same(given, self.answer, self.tolerance):
            return Graded("passed", f"correct: {fmt(given)}.")
        for wrong, why in self.mistakes.items():
            if same(given, wrong, self.tolerance):
                return Graded("failed", f"{fmt(given)} is not right: {why}")
        return Graded("failed", f"{fmt(given)} is not right; {self.nudge()}")


def normal_text(s: str) -> str:
    """A string answer as the check compares it: case, spaces and quotes ignored, and an import
    statement read as the module it names ('import pycuda.autoprimaryctx' is 'pycuda.autoprimaryctx',
    'from pycuda import autoprimaryctx' too)."""
    t = " ".join(s.strip().strip("'\"`").split()).lower()
    m = re.fullmatch(r"from ([\w.]+) import ([\w.]+)", t)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return t.removeprefix("import ").strip()


def trim_trailing_ones(got, want):
    """(x, y, 1) for a 2-D answer (x, y): a trailing 1 is how CUDA spells an unused dimension."""
    if isinstance(want, tuple) and isinstance(got, (tuple, list)) and len(got) > len(want):
        extra = got[len(want) :]
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == 1 for v in extra):
            return type(got)(got[: len(want)])
    return got


def same(a, b, tol=0.0) -> bool:
    if isinstance(b, tuple):
        a = trim_trailing_ones(a, b)
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(b, (float, np.floating)):
        if not isinstance(a, (int, float, np.number)) or isinstance(a, (bool, np.bool_)):
            return False
        if isinstance(a, np.floating) and np.finfo(a.dtype).eps > np.finfo(np.float64).eps:
            # a float32 result holds about 7 digits: compare it to that precision, not to the last float64 bit
            tol = max(tol, 4 * float(np.finfo(a.dtype).eps) * abs(float(b)))
        return abs(float(a) - float(b)) <= tol
    if isinstance(b, str):
        return isinstance(a, str) and normal_text(a) == normal_text(b)
    return type(a) is not bool and a == b


def type_problem(got, want, what: str) -> str | None:
    """A plain sentence when ``got`` has the wrong kind (float for int, list for tuple...), else None."""
    if isinstance(want, tuple):
        if isinstance(got, str):
            try:
                parsed = ast.literal_eval(got.strip())
            except (ValueError, SyntaxError):
                parsed = None
            if isinstance(parsed, tuple):
                return f"{what} should be a tuple of {len(want)} values, not a string: give it without the quotes."
            example = "('A', 'B', ...)" if all(isinstance(w, str) for w in want) else "(1, 2, ...)"
            return (
                f"{what} should be a tuple of {len(want)} values, not the string {got!r}: write it in "
                f"parentheses, e.g. {example}."
            )
        if not isinstance(got, (tuple, list)):
            return f"{what} should be a tuple of {len(want)} values, got {fmt(got)}."
        got = trim_trailing_ones(got, want)
        if len(got) != len(want):
            return f"{what} should have {len(want)} values, got {len(got)}: {fmt(tuple(got))}."
        for g, w in zip(got, want):
            p = type_problem(g, w, what)
            if p:
                return p
        return None
    if isinstance(want, (int, float, np.number)) and not isinstance(want, bool) and isinstance(got, str):
        try:
            float(got)
        except ValueError:
            return f"{what} should be a number, got the string {got!r}."
        return f"{what} should be a number, not a string: give {got.strip()} without the quotes."
    if isinstance(want, (int, np.integer)) and not isinstance(want, bool):
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            if isinstance(got, (float, np.floating)):
                return (
                    f"{what} gave {fmt(got)}, a float, but counts of blocks, threads and indices are "
                    "whole numbers (int): use // instead of /."
                )
            return f"{what} gave {fmt(got)} ({type(got).__name__}) but should give a whole number (int)."
    return None
