"""The watchdog's budget is time without progress: a long trace whose threads each finish
quickly is not stopped (a correct check on a loaded 2-core machine can outlast the budget), a
thread that spins is, naming itself."""

import time

import numpy as np
import pytest
from numba import cuda

import helpers
from helpers.errors import TookTooLong


@cuda.jit
def slow_but_finishing(out):
    i = cuda.grid(1)
    time.sleep(0.04)  # each thread ends long before the budget; all of them together do not
    out[i] = i


@cuda.jit
def spins_at_thread_5(out):
    i = cuda.grid(1)
    while i == 5:
        pass
    out[i] = i


def test_many_quick_threads_outlast_the_budget_and_are_not_stopped():
    out = np.zeros(64, np.float32)
    # 64 threads sleeping 40 ms each: the trace lasts at least 2.56 s, over twice the 1 s budget.
    t = helpers.trace(slow_but_finishing, 2, 32, out, watchdog=1.0)
    assert list(out[:3]) == [0, 1, 2] and t is not None


def test_a_spinning_thread_is_still_stopped_within_its_budget():
    out = np.zeros(64, np.float32)
    with pytest.raises(TookTooLong) as e:  # never stopped, it hangs: pytest-timeout fails it
        helpers.trace(spins_at_thread_5, 2, 32, out, watchdog=1.0)
    assert "thread 5 of block 0" in str(e.value) and "while i == 5" in str(e.value)


@cuda.jit
def _copies(out):
    i = cuda.grid(1)
    out[i] = i


@pytest.mark.parametrize("budget,lanes,touches", [(0, False, 0), (30, False, 64), (0, True, 0), (30, True, 1)])
def test_progress_is_noted_per_thread_only_while_a_watchdog_is_armed(monkeypatch, budget, lanes, touches):
    from helpers.tracer import runner, vector

    seen = []
    monkeypatch.setattr(runner, "touch", lambda: seen.append(1))
    monkeypatch.setattr(vector, "ENABLED", lanes)  # threads run as NumPy lanes note progress once per run
    helpers.trace(_copies, 2, 32, np.zeros(64, np.int64), watchdog=budget)
    assert len(seen) == touches  # off (watchdog=0 and no check around it): not a call per thread
