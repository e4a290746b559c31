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
    """The answer is a number or a tuple. ``mistakes`` maps known wrong answers to a message.

    ``choices`` makes it a quiz: the allowed answers (option numbers, letters or names), each mapped to
    the text the question shows for it (or a tuple of them), so an answer in another form (a letter for
    a number, the option's text) is told the form. For a tuple answer they are the choices of each item."""

    random = False
    answer: Any = None
    explanation: str = ""
    mistakes: dict = field(default_factory=dict)
    tolerance: float = 0.0  # absolute, for float answers
    choices: Any = ()

    def reference_answer(self):
        return self.answer

    def _solution_text(self) -> str:
        return f"{self.answer!r}\n\n{textwrap.dedent(self.explanation).strip()}"

    def _grade(self, given, rng) -> Graded:
        problem = choice_problem(given, self.answer, self.choices) or type_problem(
            given, self.answer, "your answer", typed=True
        )
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


def type_problem(got, want, what: str, typed=False) -> str | None:
    """A plain sentence when ``got`` has the wrong kind (float for int, list for tuple...), else None.
    ``typed``: the answer is a value the learner wrote, not a function's result, so a float for an int
    came from writing it so, not (only) from dividing with /."""
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
            p = type_problem(g, w, what, typed)
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
            if isinstance(got, (float, np.floating)) and typed:
                whole = f"write {int(got)}" if float(got).is_integer() else "work it out in whole numbers"
                return (
                    f"{what} is {fmt(got)}, a float, but the answer is a whole number (int): {whole} (dividing "
                    "with / always gives a float; // gives an int)."
                )
            if isinstance(got, (float, np.floating)):
                if float(got).is_integer():  # the right count as a float: math.ceil is int, np.ceil and / are not
                    return (
                        f"{what} gave {fmt(got)}, a float, but counts of blocks, threads and indices are whole "
                        "numbers (int): / and np.ceil give floats; use // (or wrap the count in int(...))."
                    )
                return (
                    f"{what} gave {fmt(got)}, a float, but counts of blocks, threads and indices are "
                    "whole numbers (int): use // instead of /."
                )
            return f"{what} gave {fmt(got)} ({type(got).__name__}) but should give a whole number (int)."
    return None


def _listing(keys) -> str:
    shown = [repr(k) for k in keys]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def choice_problem(given, answer, choices) -> str | None:
    """A quiz answer in the wrong form, said as the form wanted: the option's number for a letter or for
    its text, a letter for a number, the bare name for a longer phrase. None when ``given`` is one of the
    choices (right or wrong, the mistakes say why) or has a form type_problem names (a quoted number)."""
    if not choices:
        return None
    choices = dict(choices) if isinstance(choices, dict) else dict.fromkeys(choices, "")
    if isinstance(answer, tuple):
        if not isinstance(given, (tuple, list)):
            return None
        return next((p for g in given if (p := _choice_form(g, choices, "each item of your answer"))), None)
    return _choice_form(given, choices, "your answer")


def _is_choice(given, key) -> bool:
    """``given`` is ``key`` in the key's own form: the same text (case, spaces and quotes aside), or the
    same whole number as an int (2.0 is not option 2: its form is wrong)."""
    if isinstance(key, str):
        return isinstance(given, str) and normal_text(given) == normal_text(key)
    integer = isinstance(given, (int, np.integer)) and not isinstance(given, (bool, np.bool_))
    return integer and given == key


def _choice_form(given, choices, who) -> str | None:
    keys = list(choices)
    numbered = all(isinstance(k, int) for k in keys)
    lettered = all(isinstance(k, str) and len(k) == 1 and k.isalpha() for k in keys)
    if any(_is_choice(given, k) for k in keys):
        return None
    number = isinstance(given, (int, float, np.integer, np.floating)) and not isinstance(given, (bool, np.bool_))
    text = normal_text(given) if isinstance(given, str) else None
    if numbered and text is not None and text.lstrip("+-").isdigit():
        return None  # a number in quotes: type_problem says to drop them
    form = "the option's number" if numbered else "a capital letter" if lettered else "one of the names"
    wanted = f"{who} should be {form} ({_listing(keys)})"
    for key, shown in choices.items():
        if text is not None and shown and text == normal_text(shown):
            return f"{wanted}, not the option's text: {given!r} is {key!r}."
    if text is not None:
        for key in keys:
            if re.match(rf"{re.escape(normal_text(str(key)))}\s*[:.)]", text):
                return f"{wanted} alone: {key!r}, not {given!r}."
        inside = [k for k in keys if re.search(rf"(?<![\w.]){re.escape(normal_text(str(k)))}(?![\w.])", text)]
        if len(inside) == 1 and not (numbered or lettered):
            return f"{wanted} alone: {inside[0]!r}, not {given!r}."
        if len(text) == 1 and text.isalpha() and not lettered:
            return f"{wanted}, not the letter {given!r}."
        return f"{wanted}; {given!r} is not one of them."
    if number and numbered and float(given).is_integer() and int(given) in keys:
        return f"{wanted}, as a whole number: {int(given)}, not {fmt(given)}."
    if number and not numbered:
        return f"{wanted}, not the number {fmt(given)}."
    return f"{wanted}, not {fmt(given)}."
