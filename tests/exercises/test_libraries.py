"""The exercises of notebooks 08-11 (CuPy, PyCUDA, cuda-python, interop), whose classes are in
helpers.exercises.libraries (ArrayExercise, CudaCExercise, CallExercise).

- Every exercise's reference passes and has at least three catalogued wrong answers
  (tests/wrong_solutions/nb08..nb11; tests/problems/test_catalogue.py runs them, tests/gpu/ the GPU-only ones).
- In CPU mode the CUDA C checks run the kernel (helpers.ptx) and say so, and nb08's array
  exercises that NumPy stood in for CuPy.

helpers.cuda_c is tested in test_cuda_c.py, bench/interop.py in tests/bench/test_benchmarks.py, and nb11's Numba
kernel in tests/notebooks/test_kernels_trace_clean.py.
"""

import importlib

import pytest

import helpers

MINE = ("nb08", "nb09", "nb10", "nb11")
PROBLEMS = {m: importlib.import_module(f"helpers.problems.{m}") for m in MINE}
WRONGS = {m: importlib.import_module(f"wrong_solutions.{m}") for m in MINE}
EXERCISES = [ex for m in MINE for ex in PROBLEMS[m].EXERCISES.values()]

pytestmark = pytest.mark.usefixtures("progress_file")


def _grade_reference(ex, seed):
    options = ex.reference_options() if hasattr(ex, "reference_options") else {}
    return ex.grade(ex.reference_answer(), seed=seed, **options)


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_reference_passes(ex):
    r = _grade_reference(ex, seed=1)
    assert r.status == "passed", r.line()


# The WRONG catalogues run in tests/problems/test_catalogue.py (every mode); the WRONG_GPU ones, CUDA C that
# compiles but computes wrong numbers, run in tests/gpu/test_wrong_numbers_gpu.py under make test-gpu.


def test_every_exercise_has_wrong_answers():
    for ex in EXERCISES:
        n = len(getattr(WRONGS[ex.notebook], "WRONG").get(ex.name, []))
        assert n >= 3, f"{ex.id} has {n} wrong answers"


CUDA_C = [ex for ex in EXERCISES if type(ex).__name__ == "CudaCExercise"]


@pytest.mark.skipif(helpers.on_gpu(), reason="CPU-mode wording")
@pytest.mark.parametrize("ex", CUDA_C, ids=[ex.id for ex in CUDA_C])
def test_cpu_mode_runs_the_numbers(ex):
    r = _grade_reference(ex, seed=1)
    assert r.status == "passed" and "run on the CPU" in r.message and r.metrics.get("numbers_checked") is True


def test_array_exercise_names_its_stand_in():
    r = _grade_reference(PROBLEMS["nb08"].normalize_rows, seed=1)
    assert ("NumPy standing in" in r.message) != helpers.on_gpu()
