"""helpers/exercises/kernels.py on a GPU, played here by an executor that records launches: a kernel whose traced
run shows a grid sync some threads never reach is not launched (a block that never arrives hangs the GPU), and a
GPU's wrong numbers are named by the mistake the traced run of the same launches shows."""

import pytest

from helpers import env
from helpers.exercises.executor import LocalExecutor
from helpers.problems import nb06, nb17

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


class LostUpdates(Launches):
    """A GPU whose lanes do not run in the tracer's order: whatever the kernel, prod[0] comes out as another
    wrong product (one more factor lost), as a GPU's CAS loop that never retries gives from run to run."""

    def run_gpu(self, kernel, grid, block, call_args):
        out = super().run_gpu(kernel, grid, block, call_args)
        call_args[1][0] = (call_args[1][0] * 7 + 3) % nb06.P
        return out


def test_wrong_gpu_numbers_are_named_by_the_mistake_the_trace_shows(monkeypatch):
    from wrong_solutions import nb06 as wrong

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    got = nb06.atomic_mul.grade(wrong.mul_one_try, seed=3, executor=LostUpdates())
    assert got.status == "failed" and "retrying with the value it returned" in got.message, got.line()
    # a kernel right in the tracer's order: the GPU's numbers are wrong, no traced mistake names them
    got = nb06.atomic_mul.grade(nb06.atomic_mul.reference_answer(), seed=3, executor=LostUpdates())
    assert got.status == "failed" and "retrying" not in got.message and "should be" in got.message, got.line()
