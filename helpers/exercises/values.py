"""Exercises whose answer is a number or a tuple, and the comparisons every kind uses."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import Exercise, fmt


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
        problem = type_problem(given, self.answer, "your answer")
        if problem:
            return "failed", problem, None, {}
        if same(given, self.answer, self.tolerance):
            return "passed", f"correct: {fmt(given)}.", None, {}
        for wrong, why in self.mistakes.items():
            if same(given, wrong, self.tolerance):
                return "failed", f"{fmt(given)} is not right: {why}", None, {}
        return "failed", f"{fmt(given)} is not right; ex.hint() gives a nudge.", None, {}


def same(a, b, tol=0.0) -> bool:
    if isinstance(b, tuple):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(b, (float, np.floating)):
        return isinstance(a, (int, float, np.number)) and not isinstance(a, bool) and abs(float(a) - float(b)) <= tol
    return type(a) is not bool and a == b


def type_problem(got, want, what: str) -> str | None:
    """A plain sentence when ``got`` has the wrong kind (float for int, list for tuple...), else None."""
    if isinstance(want, tuple):
        if not isinstance(got, (tuple, list)):
            return f"{what} should be a tuple of {len(want)} values, got {fmt(got)}."
        if len(got) != len(want):
            return f"{what} should have {len(want)} values, got {len(got)}: {fmt(tuple(got))}."
        for g, w in zip(got, want):
            p = type_problem(g, w, what)
            if p:
                return p
        return None
    if isinstance(want, (int, np.integer)) and not isinstance(want, bool):
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            if isinstance(got, (float, np.floating)):
                return (
                    f"{what} gave {fmt(got)}, a float, but counts of blocks, threads and indices are "
                    "whole numbers (int): use // instead of /."
                )
            return f"{what} gave {fmt(got)} ({type(got).__name__}) but should give a whole number (int)."
    return None
