"""The catalogue of wrong answers (tests/wrong_solutions/<module>.py) and the generic learner answers
derived from a reference: shared by the direct checks (tests/problems/test_catalogue.py) and the
judged ones (tests/grading/test_judge.py), which must agree answer by answer."""

import importlib

from numba import cuda

from helpers.exercises import KernelExercise
from helpers.problems import MODULES


def _wrong_table(mod):
    """tests/wrong_solutions/<mod>.py's WRONG table; a module without one gets {} (and fails the
    catalogue test that requires one per exercise)."""
    try:
        return importlib.import_module(f"wrong_solutions.{mod}").WRONG
    except ModuleNotFoundError as e:
        if e.name != f"wrong_solutions.{mod}":
            raise
        return {}


WRONG = {mod: _wrong_table(mod) for mod in MODULES}


def grade_reference(ex, seed=None):
    options = ex.reference_options() if isinstance(ex, KernelExercise) else {}
    return ex.grade(ex.reference_answer(), seed=seed, **options)


def function_with(params, body="return None"):
    """A function with the given parameter names (its source is not inspectable: exec'd)."""
    ns = {}
    exec(f"def learner({', '.join(params)}):\n    {body}\n", ns)  # noqa: S102 - test helper
    return ns["learner"]


def placeholder(*args):
    pass  # YOUR CODE HERE


placeholder_kernel = cuda.jit(placeholder)
