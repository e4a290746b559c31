"""Every shipped exercise: the reference passes, and each catalogued wrong answer fails with its
own message. Wrong answers are data in tests/wrong_solutions/<module>.py; generic learner
mistakes (placeholder, missing @cuda.jit, wrong argument count, ...) are derived here from the
reference, so a new exercise gets them for free.
"""

import inspect
import re

import numpy as np
import pytest
from numba import cuda

from helpers import _numba
from helpers.exercises import FunctionExercise, KernelExercise, ValueExercise
from helpers.problems import all_exercises
from support.catalogue import WRONG, function_with, grade_reference, placeholder, placeholder_kernel

EXERCISES = all_exercises()
GENERIC_EX = re.compile(r"(?<![\w.])ex\.(hint|solution|check)\(")


# Mistake categories the course promises to catch somewhere in its kernel exercises.
REQUIRED_KERNEL_KINDS = {
    "wrong index",
    "missing guard",
    "race",
    "first block only",
    "hard-coded",
    "skips last partial block",
    "wrong dtype",
    "divergent barrier",
}


pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _ids(items):
    return [getattr(x, "id", str(x)) for x in items]


@pytest.mark.parametrize("ex", EXERCISES, ids=_ids(EXERCISES))
def test_reference_passes(ex):
    for seed in (1, None):
        r = grade_reference(ex, seed)
        assert r.status == "passed", r.line()
        assert r.points == ex.points


WRONG_CASES = [(ex, w) for ex in EXERCISES for w in WRONG[ex.notebook].get(ex.name, [])]


@pytest.mark.parametrize("ex,wrong", WRONG_CASES, ids=[f"{ex.id}-{w.kind}" for ex, w in WRONG_CASES])
def test_wrong_solution_fails_with_its_message(ex, wrong):
    for seed in (3,):
        r = ex.grade(wrong.answer, seed=seed, **wrong.options)
        assert r.status == wrong.status, r.line()
        assert wrong.says in r.message, r.line()
        assert r.points == 0
        assert not GENERIC_EX.search(r.message), r.line()  # the learner has no `ex`: name nbNN.exercise


@pytest.mark.parametrize("ex", EXERCISES, ids=_ids(EXERCISES))
def test_every_exercise_has_wrong_solutions(ex):
    assert len(WRONG[ex.notebook].get(ex.name, [])) >= 3, (
        f"add wrong answers for {ex.id} to tests/wrong_solutions/{ex.notebook}.py"
    )


def test_wrong_catalogue_names_only_shipped_exercises():
    shipped = {ex.id for ex in EXERCISES}
    for mod, table in WRONG.items():
        assert {f"{mod}.{name}" for name in table} <= shipped


def test_kernel_catalogue_covers_every_promised_mistake():
    kinds = {w.kind for ex, w in WRONG_CASES if isinstance(ex, KernelExercise)}
    assert REQUIRED_KERNEL_KINDS <= kinds, REQUIRED_KERNEL_KINDS - kinds


# -- generic learner mistakes, derived from each reference


KERNELS = [ex for ex in EXERCISES if isinstance(ex, KernelExercise)]
FUNCTIONS = [ex for ex in EXERCISES if isinstance(ex, FunctionExercise)]


@pytest.mark.parametrize("ex", EXERCISES, ids=_ids(EXERCISES))
@pytest.mark.parametrize("answer", [None, ..., placeholder], ids=["None", "Ellipsis", "placeholder"])
def test_unattempted_is_reported_without_failing(ex, answer, capsys):
    r = ex.grade(answer)
    assert r.status == "not_attempted" and "not attempted" in r.message
    ex.check(answer)  # must not raise in a notebook
    assert "not attempted" in capsys.readouterr().out


@pytest.mark.parametrize("ex", KERNELS, ids=_ids(KERNELS))
def test_kernel_learner_errors(ex):
    opts = ex.reference_options()
    assert ex.grade(placeholder_kernel, **opts).status == "not_attempted"
    plain = _numba.python_function(ex.reference)
    r = ex.grade(plain, **opts)
    assert r.status == "error" and "@cuda.jit" in r.message and "Traceback" not in r.message
    params = list(inspect.signature(plain).parameters)
    for wrong_params in (params[:-1], params + ["extra"]):
        r = ex.grade(cuda.jit(function_with(wrong_params, "pass")), **opts)
        assert r.status == "error" and f"passes {len(params)}" in r.message, r.line()
    r = ex.grade(cuda.jit(device=True)(plain), **opts)
    assert r.status == "error" and "device function" in r.message
    r = ex.grade(42, **opts)
    assert r.status == "error" and "kernel itself" in r.message


@pytest.mark.parametrize("ex", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_function_learner_errors(ex):
    r = ex.grade(cuda.jit(ex.reference))
    assert r.status == "error" and "plain Python function" in r.message
    names = list(ex.inputs)
    r = ex.grade(function_with(names[:-1], "return 1"))
    assert r.status == "error" and f"passes {len(names)}" in r.message
    r = ex.grade(function_with(names, "return undefined_name"))
    assert r.status == "error" and "NameError" in r.message


@pytest.mark.parametrize("ex", FUNCTIONS, ids=_ids(FUNCTIONS))
def test_function_hard_coded_for_the_first_example_fails(ex):
    first = next(ex._cases(np.random.default_rng(0)))  # the first edge case, else a random one
    constant = ex.reference(**first)
    r = ex.grade(function_with(list(ex.inputs), f"return {constant!r}"))
    assert r.status == "failed" and "hard-coded" in r.message, r.line()


@pytest.mark.parametrize("ex", [e for e in EXERCISES if isinstance(e, ValueExercise)])
def test_value_answer_is_exact(ex):
    assert ex.grade(ex.answer).status == "passed"
    near_miss = ex.answer + "_" if isinstance(ex.answer, str) else str(ex.answer)  # right digits, wrong type
    assert ex.grade(near_miss).status == "failed"
