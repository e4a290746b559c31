"""Where a check's work runs is the executor ``grade`` is given (helpers/exercises/executor.py): the
checks call its operations and believe what it returns, and ``LOCAL`` is the default."""

import pytest

from helpers.exercises.executor import LOCAL, LocalExecutor, frames_of, raised, takes_executor
from helpers.problems import nb02, nb12, nb14

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


class Recording(LocalExecutor):
    """LOCAL's work, with the name of every operation a check asked for."""

    def __init__(self):
        self.ops = []

    def trace(self, *args):
        self.ops.append("trace")
        return super().trace(*args)

    def compile_check(self, *args):
        self.ops.append("compile_check")
        return super().compile_check(*args)

    def run_gpu(self, *args):
        self.ops.append("run_gpu")
        return super().run_gpu(*args)

    def host_run(self, op, fn, here, *args):
        self.ops.append(op)
        return super().host_run(op, fn, here, *args)


class _NoVerdicts:
    """A trace with its verdicts hidden; everything else the trace's own."""

    verdicts = []

    def __init__(self, t):
        self._t = t

    def __getattr__(self, name):
        return getattr(self._t, name)


class Clean(Recording):
    """An executor whose tracer says every kernel is clean (a forged tracer)."""

    def trace(self, kernel, grid, block, call_args, outputs):
        return _NoVerdicts(super().trace(kernel, grid, block, call_args, outputs))


def test_a_kernel_check_runs_through_the_executor_it_is_given():
    run = Recording()
    got = nb02.vector_add.grade(nb02.vector_add.reference_answer(), seed=4, executor=run)
    assert got.status == "passed", got.line()
    assert "trace" in run.ops
    assert "compile_check" in run.ops or "run_gpu" in run.ops  # the GPU launch compiles on a GPU
    assert got.message == nb02.vector_add.grade(nb02.vector_add.reference_answer(), seed=4).message  # LOCAL


def test_the_check_believes_its_executor_not_the_answer():
    """The same wrong answer: failed with the local tracer's verdict, and a tracer that hides verdicts is
    believed (which is why the batch grader's executor never asks the student's process)."""
    from wrong_solutions import nb02 as wrong

    local = nb02.vector_add.grade(wrong.add_racy, seed=3)
    forged = nb02.vector_add.grade(wrong.add_racy, seed=3, executor=Clean())
    assert local.status == "failed" and "race" in local.message, local.line()
    assert "race" not in forged.message, forged.line()


def test_a_custom_judge_that_asks_for_the_executor_gets_it():
    run = Recording()
    assert nb14.compaction_offsets.grade(nb14.compaction_offsets.reference_answer(), seed=2, executor=run).passed
    assert run.ops == ["library_call"] * run.ops.count("library_call") and run.ops
    run = Recording()
    assert nb12.sum_of_squares.grade(nb12.sum_of_squares.reference_answer(), seed=2, executor=run).passed
    assert {"facts", "parfor_count"} <= set(run.ops)


def test_executor_is_not_an_option_a_learner_can_misspell():
    got = nb02.vector_add.grade(nb02.vector_add.reference_answer(), seed=1, executr=LOCAL)
    assert got.status == "error" and "has no option executr=" in got.message
    assert "executor=" not in got.message  # the sentence lists the learner's options only


def test_takes_executor_reads_the_parameter_name():
    assert takes_executor(lambda fn, rng, executor: None)
    assert not takes_executor(lambda fn, rng: None)
    assert takes_executor(len) is False  # a builtin without a signature: not asked


def test_an_exception_from_another_process_keeps_its_name_and_where_it_came_from():
    exc = raised({"type": "ZeroDivisionError", "message": "division by zero", "frames": ["cell", "helper"]})
    assert type(exc).__name__ == "ZeroDivisionError" and str(exc) == "division by zero"
    assert frames_of(exc)[:2] == ("cell", "helper")
    assert type(raised({"type": "not a name!"})).__name__ == "Exception"
    assert raised({"type": "KernelError", "course": True, "refused": True}).refused is True
