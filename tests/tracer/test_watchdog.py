"""The watchdog: a trace or check that runs too long stops with one sentence; stop (KeyboardInterrupt) is one line."""

import signal
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import TookTooLong
from helpers.exercises import FunctionExercise, Ints
from helpers.problems import nb01, nb02
from helpers.tracer import trace
from helpers.tracer.watchdog import budget, watchdog

BUDGET = 2


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@cuda.jit
def spin(a, b, out):
    i = cuda.grid(1)
    while True:
        pass
    out[i] = a[i] + b[i]


@cuda.jit
def spin_after_barrier(a, b, out):
    i = cuda.grid(1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 5:
        while True:
            pass
    if i < out.size:
        out[i] = a[i] + b[i]


def _timer_is_off():
    return signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_spinning_kernel_is_stopped_by_trace():
    a = np.zeros(8, np.float32)
    with pytest.raises(TookTooLong) as err:  # a kernel that is never stopped hangs: pytest-timeout fails it
        trace(spin, 1, 8, a, a, a, watchdog=BUDGET)
    msg = str(err.value)
    assert msg.startswith("thread 0 of block 0 has run line ") and "is a loop missing its exit?" in msg
    assert "while True" in msg
    assert _timer_is_off()


def test_a_spinning_thread_among_greenlets_is_named():
    a = np.zeros(32, np.float32)
    with pytest.raises(TookTooLong, match="thread 5 of block 0 has run line"):
        trace(spin_after_barrier, 1, 32, a, a, a, watchdog=BUDGET)
    assert _timer_is_off()


def test_a_spinning_kernel_is_stopped_by_check(capsys):
    nb02.vector_add.check(spin, seed=1, watchdog=BUDGET)
    r = nb02.vector_add.last_result
    assert r.status == "error" and "thread 0 of block 0 has run line" in r.message
    assert "is a loop missing its exit?" in capsys.readouterr().out
    assert _timer_is_off()


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_WATCHDOG_S", "1")
    assert budget() == 1.0 and budget(5) == 5.0
    monkeypatch.delenv("COURSE_WATCHDOG_S")
    assert budget() == 20.0
    a = np.zeros(8, np.float32)
    monkeypatch.setenv("COURSE_WATCHDOG_S", "1")
    armed = []
    setitimer = signal.setitimer
    monkeypatch.setattr(
        signal, "setitimer", lambda which, delay, *rest: armed.append(delay) or setitimer(which, delay, *rest)
    )
    with pytest.raises(TookTooLong):
        trace(spin, 1, 8, a, a, a)
    assert armed[0] == 1.0  # the alarm was set from the environment's budget, not the 20 s default


def spinning_blocks_per_grid(n, t):
    while n > 0:
        n = n  # no progress: the loop never ends
    return (n + t - 1) // t


def test_a_spinning_function_answer_is_stopped():
    r = nb01.blocks_per_grid.grade(spinning_blocks_per_grid, seed=1, watchdog=BUDGET)
    assert r.status == "error"
    assert r.message.startswith("your function has run line ") and "is a loop missing its exit?" in r.message
    assert _timer_is_off()


def test_a_loop_that_swallows_the_stop_is_still_stopped():
    def stubborn(n, t):
        while True:
            try:
                while True:
                    pass
            except Exception:  # the learner's mistake this test is about
                pass

    ex = FunctionExercise(reference=lambda n, t: n, inputs={"n": Ints(1, 9), "t": Ints(1, 9)}, trials=1)
    r = ex.grade(stubborn, seed=1, watchdog=1)
    assert r.status == "error" and "is a loop missing its exit?" in r.message


def interrupted_blocks_per_grid(n, t):
    raise KeyboardInterrupt  # what pressing stop does in Jupyter


def test_stop_is_one_line_not_a_traceback(capsys):
    nb01.blocks_per_grid.check(interrupted_blocks_per_grid, seed=1)
    r = nb01.blocks_per_grid.last_result
    assert r.status == "error" and r.message.startswith("check stopped: ")
    assert "raise KeyboardInterrupt" in r.message  # names the learner's line that was running
    out = capsys.readouterr().out
    assert "check stopped" in out and "Traceback" not in out


def test_nested_watchdogs_restore_the_outer_timer():
    with watchdog(30):
        with watchdog(10):
            assert signal.getitimer(signal.ITIMER_REAL)[0] <= 10
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 20 < left <= 30
    assert _timer_is_off()


def test_zero_turns_it_off():
    with watchdog(0):
        assert _timer_is_off()


def test_a_first_look_at_code_before_the_loop_does_not_call_a_spinning_loop_advancing(monkeypatch):
    """On a loaded machine the first look can land in code that ran before the loop (a slow start):
    the loop's frame is then looked at twice before the watchdog says whether its variables move."""
    import sys

    from helpers.tracer import watchdog as wd

    def before_the_loop():
        return sys._getframe()

    def spinning():
        i = 3  # noqa: F841 - a variable the looks compare
        return sys._getframe()

    start, loop = before_the_loop(), spinning()
    monkeypatch.setattr(wd.signal, "setitimer", lambda *args: None)
    monkeypatch.setattr(wd, "_stack", [wd._Armed(wd.describe_function("your kernel"), None, 0.0, 2.0)])
    monkeypatch.setattr(wd, "_fired", [False])
    monkeypatch.setattr(wd, "_look", [None])
    monkeypatch.setattr(wd, "_progress", [-1e9])  # no progress for ages: past the budget
    wd._on_alarm(None, start)  # first look
    wd._on_alarm(None, loop)  # another frame: look again rather than judge
    with pytest.raises(wd._Stop, match="missing its exit"):
        wd._on_alarm(None, loop)


def _course_work():
    """Stands for the course's own slow code (a picture, a compile awaited) on a loaded machine: it runs
    until the watchdog's alarm has come twice (counted as progress), or at most a long while."""
    from helpers.tracer import watchdog as wd

    seen, last = 0, wd._progress[0]
    for _ in range(500_000_000):
        if wd._progress[0] != last:
            seen, last = seen + 1, wd._progress[0]
            if seen == 2:
                return seen
    return seen


def test_time_in_the_course_code_alone_is_not_the_learners_and_is_not_stopped(monkeypatch):
    from helpers.tracer import watchdog as wd

    monkeypatch.setattr(wd, "HELPERS", str(Path(__file__).resolve().parent))  # this file plays the course's code
    with watchdog(0.3):
        assert _course_work() == 2  # two budgets passed in course code alone, and it was not stopped


def _spin():
    while True:
        pass


def test_a_learner_loop_under_the_watchdog_is_still_stopped():
    with pytest.raises(TookTooLong):
        with watchdog(0.3):
            _spin()
