"""The number formatting every kind shares (helpers/exercises/base.py): a float32 result that differs
from a float64 answer by rounding is said to be float32 rounding, and nothing else is."""

import numpy as np

from helpers.exercises.base import fmt_pair, rounding_note

X = np.random.default_rng(0).standard_normal(1000)
EXACT = float(np.dot(X, X))
IN_FLOAT32 = np.float32(np.dot(X.astype(np.float32), X.astype(np.float32)))


def test_a_float32_result_is_float32_rounding():
    note = rounding_note(IN_FLOAT32, EXACT)
    assert note.startswith("the difference is float32 rounding") and "in float64" in note
    assert rounding_note(float(IN_FLOAT32), EXACT) == note  # converted back to a Python float, still float32
    shown = fmt_pair(IN_FLOAT32, EXACT)
    assert shown[0] != shown[1]


def test_a_float16_result_names_float16():
    assert "float16 rounding" in rounding_note(np.float16(1.5), 1.5004)


def test_other_differences_are_not_rounding():
    assert rounding_note(EXACT * (1 + 1e-12), EXACT) is None  # a float64 result: a formula, not float32
    assert rounding_note(np.float32(2.0), 2.5) is None  # far apart: a wrong formula
    assert rounding_note(25.0, 25.000001) is None  # a whole number: rounded by the learner, not by float32
    assert rounding_note(IN_FLOAT32, 3) is None  # an int answer: not a question of precision
    assert rounding_note(EXACT, EXACT) is None
