"""FunctionExercise's failure sentences by cause (helpers/exercises/functions.py): floor division is named,
never "hard-coded"; a float32 result shows the digits that differ and says it is float32 rounding."""

import numpy as np
import pytest

from helpers.exercises import FunctionExercise, Ints

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

SHARE = FunctionExercise(
    reference=lambda part, whole: part / whole,
    inputs={"part": Ints(1, 9), "whole": Ints(10, 20)},
    name="share",
    notebook="nb01",
    hints=("part / whole",),
)
HALF = FunctionExercise(
    reference=lambda n: n / 2, inputs={"n": Ints(0, 1000)}, name="half", notebook="nb01", hints=("n / 2",)
)
MEAN = FunctionExercise(
    reference=lambda n: float(np.mean(np.arange(1, n + 1) ** 0.5)),
    inputs={"n": Ints(2_000, 5_000)},
    trials=20,
    name="mean",
    notebook="nb01",
    hints=("the mean of the square roots",),
)


def share_floored(part, whole):
    return part // whole


def half_floored(n):
    return n // 2


def mean_float32(n):
    total = np.float32(0.0)
    for k in range(1, n + 1):
        total += np.float32(k**0.5)
    return total / np.float32(n)


def test_floor_division_making_every_result_0_is_not_called_hard_coded():
    r = SHARE.grade(share_floored, seed=3)
    assert r.status == "failed" and "hard-coded" not in r.message, r.message
    assert "returned 0 but should return" in r.message
    assert "every result is 0 because `part // whole` is floor (integer) division" in r.message
    assert "divide with / instead" in r.message


def test_floor_division_rounding_down_is_named():
    r = HALF.grade(half_floored, seed=3)
    assert r.status == "failed", r.message
    assert "the results were rounded down to whole numbers by the floor (integer) division `n // 2`" in r.message


def test_floor_division_in_an_exercise_with_whole_answers_is_not_blamed():
    blocks = FunctionExercise(
        reference=lambda n, t: (n + t - 1) // t, inputs={"n": Ints(1, 999), "t": Ints(choices=(32, 64))}
    )
    r = blocks.grade(lambda n, t: n // t, seed=3)
    assert r.status == "failed" and "floor" not in r.message, r.message


def test_a_known_mistake_outranks_floor_division():
    ex = FunctionExercise(
        reference=lambda n: n / 2,
        inputs={"n": Ints(0, 1000)},
        mistakes=((lambda n: float(n // 2), "that rounds down: use /."),),
    )
    r = ex.grade(half_floored, seed=3)
    assert "that rounds down: use /." in r.message and "floor (integer) division" not in r.message


def test_a_float32_result_shows_digits_that_differ_and_names_float32_rounding():
    r = MEAN.grade(mean_float32, seed=3)
    assert r.status == "failed", r.message
    shown = r.message.split(" returned ")[1].split(" but should return ")
    assert shown[0] != shown[1].split(" (")[0], r.message
    assert "the difference is float32 rounding" in r.message and "accumulate) in float64" in r.message
