"""helpers/exercises/kernels.py on a GPU, played here by an executor that records launches: a kernel whose traced
run shows a grid sync some threads never reach is not launched (a block that never arrives hangs the GPU)."""

import pytest

from helpers import env
from helpers.exercises.executor import LocalExecutor
from helpers.problems import nb17

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


class Launches(LocalExecutor):
    """The local tracer; a GPU launch is recorded and run by the tracer too, in place, as a launch would."""

    launch_compiles = True

    def __init__(self):
        self.launched = []

    def run_gpu(self, kernel, grid, block, call_args):
        self.launched.append((grid, block))
        self.trace(kernel, grid, block, call_args, [])
        return []  # no element of any guard band written


def test_a_grid_sync_that_some_threads_miss_is_never_launched_on_the_gpu(monkeypatch):
    from wrong_solutions import nb17 as wrong

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    gpu = Launches()
    got = nb17.normalize.grade(wrong.normalize_grid_sync_behind_guard, seed=3, executor=gpu)
    assert got.status == "failed" and "grid sync" in got.message, got.line()
    assert gpu.launched == []
    right = Launches()  # the reference is launched, case by case
    assert nb17.normalize.grade(nb17.normalize.reference_answer(), seed=3, executor=right).status == "passed"
    assert len(right.launched) == 4
