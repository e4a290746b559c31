"""CUDA C wrong answers that compile fine, run on a real GPU: the CPU suite runs them through
helpers.ptx (tests/problems/test_catalogue.py); here the same catalogue must fail on the GPU as well.

Collected by `make test-gpu` (COURSE_MODE=gpu); the CPU suite ignores tests/gpu/.
"""

import importlib
import sys
from pathlib import Path

import pytest

import helpers  # noqa: F401 - decides the mode before numba is imported
from helpers.problems import MODULES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for wrong_solutions
CASES = []
for name in sorted(MODULES):
    try:
        wrong = importlib.import_module(f"wrong_solutions.{name}")
    except ModuleNotFoundError:
        continue
    problems = importlib.import_module(f"helpers.problems.{name}")
    for ex_name, ws in [*wrong.WRONG.items(), *getattr(wrong, "WRONG_GPU", {}).items()]:
        ex = problems.EXERCISES[ex_name]
        CASES += [(ex, w) for w in ws if type(ex).__name__ == "CudaCExercise" and w.kind != "negative index"]


@pytest.mark.parametrize("ex,wrong", CASES, ids=[f"{ex.id}-{w.kind}" for ex, w in CASES])
def test_wrong_numbers_fail_on_gpu(ex, wrong, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))
    assert helpers.on_gpu(), "run with COURSE_MODE=gpu on an NVIDIA GPU"
    r = ex.grade(wrong.answer, seed=3, **wrong.options)
    assert r.status == wrong.status and wrong.says in r.message, r.line()


def test_there_are_gpu_only_wrong_answers():
    assert len(CASES) >= 3
