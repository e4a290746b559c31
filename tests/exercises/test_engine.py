"""Engine unit tests: inputs, poisoning, comparison, messages, launches, placeholders, seeds,
progress, hints and solutions. Shipped exercises are covered by tests/problems/test_catalogue.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import helpers
from helpers import exercises as E
from helpers.exercises import explain, inputs, launch
from helpers.exercises import progress as _progress
from helpers.problems import nb01, nb02

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


# -- a new exercise takes a dozen lines


@cuda.jit
def _negate(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = -x[i]


NEGATE = E.KernelExercise(
    prompt="out = -x",
    args=(E.In("x"), E.Out("out")),
    expect=lambda x: -x,
    reference=_negate,
    launch=E.per_element(16),
    hints=("one", "two"),
)
E.register("tests.scratch", {"negate": NEGATE})


@cuda.jit
def negate_unguarded(x, out):
    i = cuda.grid(1)
    out[i] = -x[i]


@cuda.jit
def negate_raises(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = -x[i] + (None if i == 3 else 0)  # TypeError in thread 3 (division by 0 is inf/0 on a GPU)


@cuda.jit
def negate_half(x, out):
    i = cuda.grid(1)
    if i < x.size and i % 2 == 0:
        out[i] = -x[i]


def test_registered_definition_gets_its_name_and_passes():
    assert NEGATE.id == "scratch.negate"
    r = NEGATE.grade(_negate, seed=7)
    assert r.status == "passed" and r.seed == 7, r.line()
    assert "1.0 global read" in r.message  # the success line carries a useful figure


def test_success_line_has_a_figure():
    r = nb02.vector_add.grade(nb02.vector_add.reference, seed=1)
    assert "2.0 global reads" in r.message and r.metrics["global_reads_per_thread"] == pytest.approx(2.0)


# -- inputs, sizes, poisoning, comparison


def test_outputs_are_poisoned_and_accumulators_initialised():
    rng = np.random.default_rng(0)
    assert np.isnan(inputs.make(E.Out("o"), rng, 5, (1,))).all()
    ints = inputs.make(E.Out("o", "int32"), rng, 5, (1,))
    assert (ints == np.iinfo(np.int32).min).all()
    assert (inputs.make(E.Acc("h", "int32", shape=(4,)), rng, 5, (1,)) == 0).all()
    assert inputs.make(E.Out("o", shape="blocks"), rng, 100, (4,)).shape == (4,)
    x = inputs.make(E.In("d", "int32", low=0, high=3), rng, 1000, (1,))
    assert x.dtype == np.int32 and set(np.unique(x)) == {0, 1, 2}
    s = inputs.make(E.Scalar("a"), rng, 5, (1,))
    assert isinstance(s, np.float32)


def test_compare_separates_unwritten_from_wrong():
    exp = np.arange(6, dtype=np.float32)
    got = exp.copy()
    got[1], got[4], got[5] = inputs.poison(np.float32), 99, np.nan  # never written, wrong, a computed NaN
    un, wr = explain.compare(got, exp, 1e-5, 1e-6, True)
    assert list(un) == [1] and list(wr) == [4, 5]
    un, wr = explain.compare(got, exp, 1e-5, 1e-6, False)  # accumulators have no poison
    assert list(un) == [] and list(wr) == [1, 4, 5]


def test_unwritten_message_names_the_cause():
    msg = explain.unwritten_message("out", np.arange(96, 100), 100, (4,), (32,), "per_element")
    assert "96–99" in msg and "last, partial block" in msg
    msg = explain.unwritten_message("out", np.arange(32, 100), 100, (4,), (32,), "per_element")
    assert "only the first block" in msg
    msg = explain.unwritten_message("out", np.arange(0, 100, 2), 100, (4,), (32,), "per_element")
    assert "50 of 100" in msg and "exactly one thread" in msg


def test_unwritten_message_for_one_result_per_block():
    msg = explain.unwritten_message("out", np.arange(1, 4), 4, (4,), (32,), "per_element", per_block=True)
    assert "only block 0 wrote its result" in msg and "out[cuda.blockIdx.x]" in msg
    msg = explain.unwritten_message("out", np.array([2]), 4, (4,), (32,), "per_element", per_block=True)
    assert "out[2] were never written" in msg


def test_failure_has_a_picture_and_the_seed():
    r = NEGATE.grade(negate_half, seed=11)
    assert r.status == "failed" and "never written" in r.message
    assert r.picture is not None and "seed=11" in r.line()
    assert "<img" in r._repr_html_() and "#cf222e" in r._repr_html_()


def test_comparison_does_not_trust_numpy_attributes(monkeypatch):
    # A notebook (or a kernel running as Python) could rebind these; grading must not care.
    for name in ("allclose", "isclose", "array_equal", "isnan", "abs", "absolute", "equal"):
        monkeypatch.setattr(np, name, lambda *a, **k: True)
    r = nb02.vector_add.grade(nb02.vector_add.reference, seed=2)
    monkeypatch.undo()
    assert r.status == "passed"
    from wrong_solutions.nb02 import add_subtracts

    for name in ("allclose", "isclose", "array_equal"):
        monkeypatch.setattr(np, name, lambda *a, **k: True)
    assert nb02.vector_add.grade(add_subtracts, seed=2).status == "failed"


# -- seeds


def test_same_seed_same_result_and_fresh_inputs_otherwise():
    from wrong_solutions.nb02 import add_first_block_only

    a = nb02.vector_add.grade(add_first_block_only, seed=123)
    b = nb02.vector_add.grade(add_first_block_only, seed=123)
    assert (a.status, a.message) == (b.status, b.message)
    runs = [nb02.vector_add.grade(nb02.vector_add.reference) for _ in range(3)]
    assert len({r.seed for r in runs}) == 3
    assert len({r.message for r in runs}) > 1  # "correct for n = ..." names the fresh sizes


def test_function_exercise_seed_reproduces():
    wrong = lambda n, t: n // t  # noqa: E731
    assert nb01.blocks_per_grid.grade(wrong, seed=5).message == nb01.blocks_per_grid.grade(wrong, seed=5).message


# -- learner mistakes never escape as exceptions


def test_kernel_raising_becomes_an_error_result():
    r = NEGATE.grade(negate_raises, seed=1)
    assert r.status == "error" and "TypeError" in r.message and "line" in r.message


def test_out_of_bounds_found_by_tracer():
    r = NEGATE.grade(negate_unguarded, seed=1)
    assert r.status == "failed" and "out-of-bounds" in r.message


@pytest.mark.parametrize(
    "cfg, says",
    [
        ((4, 0), "at least 1"),
        ((0.5, 32), "whole numbers"),
        ((4, 2048), "1024"),
        ((4, (1, 1, 128)), "64 threads deep"),
        ((4,), "(blocks_per_grid, threads_per_block)"),
        (((1, 1, 1, 1), 32), "1 to 3"),
    ],
)
def test_bad_launch_configurations(cfg, says):
    with pytest.raises(helpers.errors.LearnerError, match=None) as err:
        launch.validate_launch(cfg)
    assert says in str(err.value)


def test_launch_passed_to_an_engine_launched_exercise_is_an_error():
    r = nb02.vector_add.grade(nb02.vector_add.reference, launch=lambda n: (1, 32))
    assert r.status == "error" and "without launch=" in r.message


@pytest.mark.parametrize("answer", [None, ...])
def test_placeholders(answer):
    assert E.not_attempted(answer)


def test_placeholder_detection_uses_source():
    def todo(n, t):
        return None  # YOUR CODE HERE

    def done(n, t):
        return (n + t - 1) // t

    ns = {}
    exec("def f(n, t):\n    return 1\n", ns)  # noqa: S102 - no source available: judged by running
    assert E.not_attempted(todo) and E.not_attempted(cuda.jit(todo))
    assert not E.not_attempted(done) and not E.not_attempted(ns["f"])


def test_check_prints_one_line_and_never_raises(capsys):
    nb01.blocks_per_grid.check(lambda n, t: n // t, seed=3)
    nb01.blocks_per_grid.check(lambda: 1)
    nb01.blocks_per_grid.check()
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 3
    assert out[0].startswith("✗") and "rounds down" in out[0]
    assert out[1].startswith("✗") and "takes 0 arguments" in out[1]
    assert out[2].startswith("·") and "not attempted" in out[2]


# -- hints, solutions, repr


def test_hints_advance_and_stop_at_the_last(capsys, progress_file):
    ex = E.KernelExercise(
        prompt="p", args=NEGATE.args, expect=NEGATE.expect, reference=_negate, hints=("first", "second")
    )
    E.register("tests.scratch", {"hinted": ex})
    for _ in range(3):
        ex.hint()
    out = capsys.readouterr().out
    assert out.index("first") < out.index("second")
    assert out.count("second") == 2 and "Hint 2/2" in out and "solution()" in out
    assert json.loads(progress_file.read_text())["exercises"]["scratch.hinted"]["hints_seen"] == 2


def test_solution_only_on_request(capsys, progress_file):
    assert "_saxpy" not in repr(nb02.saxpy) and "1024" not in repr(nb01.threads_launched)
    nb02.saxpy.solution()
    out = capsys.readouterr().out
    assert "def _saxpy(alpha, x, y, out):" in out and "launch" in out
    nb01.threads_launched.solution()
    assert "1024" in capsys.readouterr().out
    assert json.loads(progress_file.read_text())["exercises"]["nb02.saxpy"]["solution_seen"] is True


# -- progress


def test_progress_counts_attempts_and_keeps_a_pass(capsys, progress_file):
    ex = nb01.blocks_per_grid
    ex.check(None)  # placeholder: no attempt
    ex.check(lambda n, t: n // t)
    ex.check(lambda n, t: (n + t - 1) // t)
    ex.check(lambda n, t: n // t)  # a later wrong try does not take the pass away
    e = json.loads(progress_file.read_text())["exercises"]["nb01.blocks_per_grid"]
    assert e["attempts"] == 3 and e["passed"] is True and e["status"] == "failed" and e["points"] == 1.0
    row = next(r for r in _progress.rows([ex]) if r["exercise"] == "nb01.blocks_per_grid")
    assert row["status"] == "passed" and row["attempts"] == 3 and row["points"] == "1/1"


def test_progress_survives_a_restart(progress_file):
    code = (
        "import os; os.environ.setdefault('NUMBA_ENABLE_CUDASIM', '1')\n"
        "import helpers\n"
        "from helpers.problems import nb01\n"
        "nb01.idle_threads.check(lambda n, t: (n + t - 1) // t * t - n)\n"
        "nb01.threads_launched.check(1000)\n"
    )
    env = dict(os.environ, COURSE_PROGRESS_FILE=str(progress_file))
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True)
    import importlib

    importlib.reload(_progress)  # a fresh module state reads only the file
    rows = {r["exercise"]: r for r in helpers.progress(show=False)}
    assert rows["nb01.idle_threads"]["status"] == "passed"
    assert (
        rows["nb01.threads_launched"]["status"] == "failed"
        and "more threads than elements" in rows["nb01.threads_launched"]["last result"]
    )
    assert rows["nb02.saxpy"]["status"] == "not attempted"


def test_progress_table_via_helpers(capsys):
    nb01.threads_launched.check(1024)
    helpers.progress()
    out = capsys.readouterr().out
    assert "nb01.threads_launched" in out and "passed" in out and "nb02.histogram" in out


def test_progress_default_path_is_the_course_root(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_PROGRESS_FILE")
    monkeypatch.chdir(ROOT / "notebooks")
    assert _progress.progress_path() == ROOT / ".course-progress.json"
    monkeypatch.chdir(tmp_path)
    assert _progress.progress_path() == tmp_path.resolve() / ".course-progress.json"


def test_damaged_progress_file_counts_as_empty(progress_file):
    progress_file.write_text("{not json")
    nb01.threads_launched.grade(1024)  # grade is pure: reads and writes nothing
    assert progress_file.read_text() == "{not json"
    assert _progress.load() == {}  # and the damaged file is kept aside (tests/exercises/test_progress.py)
