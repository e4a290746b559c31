"""ValueExercise's answers in the wrong form (helpers/exercises/values.py): a quiz says the form it wants
(the option's number, a capital letter, one of the names), and a typed float for a count is told to
write the whole number, not to "use // instead of /"."""

import pytest

from helpers.exercises import FunctionExercise, Ints, ValueExercise

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

NUMBERED = ValueExercise(
    answer=2,
    choices={1: "np.zeros(n)", 2: "cuda.device_array(n)", 3: "cuda.to_device(x)"},
    mistakes={1: "that is a host array."},
    name="pick",
    notebook="nb03",
    hints=("no copy",),
)
LETTERED = ValueExercise(
    answer=("B", "A", "C"),
    choices={"A": "launch()", "B": "start.record()", "C": "end.record()"},
    name="order",
    notebook="nb03",
    hints=("record first",),
)
NAMED = ValueExercise(answer="cupy", choices=("numba", "cupy", "pycuda"), name="tool", notebook="nb11", hints=("h",))


def _says(ex, given):
    r = ex.grade(given)
    assert r.status == "failed", r.message
    return r.message


@pytest.mark.parametrize(
    "given,says",
    [
        ("b", "your answer should be the option's number (1, 2 or 3), not the letter 'b'."),
        ("cuda.device_array(n)", "not the option's text: 'cuda.device_array(n)' is 2."),
        ("2: cuda.device_array(n)", "the option's number (1, 2 or 3) alone: 2"),
        (2.0, "as a whole number: 2, not 2.0."),
        (4, "your answer should be the option's number (1, 2 or 3), not 4."),
        ("two", "'two' is not one of them."),
    ],
)
def test_a_numbered_quiz_answer_in_another_form_is_told_the_form(given, says):
    message = _says(NUMBERED, given)
    assert says in message and "//" not in message


def test_a_numbered_quiz_keeps_its_other_sentences():
    assert "without the quotes" in _says(NUMBERED, "2")
    assert "host array" in _says(NUMBERED, 1)
    assert NUMBERED.grade(2).status == "passed"


@pytest.mark.parametrize(
    "given,says",
    [
        ((2, 1, 3), "each item of your answer should be a capital letter ('A', 'B' or 'C'), not the number 2."),
        (("start.record()", "A", "C"), "not the option's text: 'start.record()' is 'B'."),
        (("B", "D", "C"), "'D' is not one of them."),
    ],
)
def test_a_lettered_quiz_answer_in_another_form_is_told_the_form(given, says):
    assert says in _says(LETTERED, given)


def test_letters_in_any_case_pass():
    assert LETTERED.grade(["b", "a", "c"]).status == "passed"


@pytest.mark.parametrize(
    "given,says",
    [
        (2, "one of the names ('numba', 'cupy' or 'pycuda'), not the number 2."),
        ("b", "not the letter 'b'."),
        ("import cupy as cp", "alone: 'cupy', not 'import cupy as cp'."),
    ],
)
def test_a_named_quiz_answer_in_another_form_is_told_the_form(given, says):
    assert says in _says(NAMED, given)


def test_a_typed_float_for_a_count_is_told_to_write_the_whole_number():
    count = ValueExercise(answer=1024, name="threads", notebook="nb01", hints=("h",))
    message = _says(count, 1024.0)
    assert "a whole number (int): write 1024" in message and "use // instead of /" not in message
    assert "a whole number (int): work it out in whole numbers" in _says(count, 1000.5)


def test_a_function_returning_a_float_for_a_count_is_still_told_to_use_floor_division():
    blocks = FunctionExercise(reference=lambda n: (n + 31) // 32, inputs={"n": Ints(1, 999)}, hints=("h",))
    assert "use // instead of /" in blocks.grade(lambda n: n / 32, seed=3).message


def test_a_function_returning_the_right_count_as_a_float_is_told_where_floats_come_from():
    import math

    import numpy as np

    blocks = FunctionExercise(reference=lambda n: (n + 31) // 32, inputs={"n": Ints(1, 999)}, hints=("h",))
    message = blocks.grade(lambda n: np.ceil(n / 32), seed=3).message  # 2.0 where 2 is asked
    assert "/ and np.ceil give floats" in message and "use // instead of /" not in message
    assert blocks.grade(lambda n: math.ceil(n / 32), seed=3).status == "passed"  # math.ceil is an int
