"""The watchdog's budget is time without progress: a long trace whose threads each finish
quickly is not stopped (a correct check on a loaded 2-core machine can outlast the budget), a
thread that spins is, naming itself."""

import time  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numba import cuda  # noqa: E402

import helpers  # noqa: E402, F401
from helpers.errors import TookTooLong  # noqa: E402


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
    started = time.monotonic()
    t = helpers.trace(slow_but_finishing, 2, 32, out, watchdog=1.0)
    assert time.monotonic() - started > 2.0  # the whole trace took twice the budget
    assert list(out[:3]) == [0, 1, 2] and t is not None


def test_a_spinning_thread_is_still_stopped_within_its_budget():
    out = np.zeros(64, np.float32)
    started = time.monotonic()
    with pytest.raises(TookTooLong) as e:
        helpers.trace(spins_at_thread_5, 2, 32, out, watchdog=1.0)
    assert time.monotonic() - started < 1.0 + 5
    assert "thread 5 of block 0" in str(e.value) and "while i == 5" in str(e.value)
