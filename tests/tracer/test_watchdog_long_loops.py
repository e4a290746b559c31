"""A thread busy in a long loop is not a loop missing its exit (issue 27, fuzz leftovers): before it
stops a thread the watchdog looks twice, and a loop whose variables keep changing is said to be
more work per thread than the CPU tracer can run at this size (a spinning one keeps its sentence);
a trace whose threads keep finishing is not stopped, but past its budget it says once that it is
still going, where, and that a smaller problem is faster."""

import time

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import TookTooLong
from helpers.exercises import FunctionExercise, Ints
from helpers.tracer import trace

pytestmark = pytest.mark.usefixtures("progress_file")  # a grade never writes the learner's own file


@cuda.jit
def long_loop(out):
    i = cuda.grid(1)
    s = 0.0
    for j in range(10**12):  # correct, and far more than the tracer runs in a second
        s += j
    out[i] = s


@cuda.jit
def long_loop_of_lanes(out):
    i = cuda.grid(1)
    s = 0.0
    while s < 1e300:  # every thread agrees, so its block runs as NumPy lanes: only s (one per lane) changes
        s = s + 1.0 + 0 * i
    out[i] = s


@cuda.jit
def spins(out):
    i = cuda.grid(1)
    while i >= 0:
        pass
    out[i] = i


@cuda.jit
def slow_but_finishing(out):
    i = cuda.grid(1)
    time.sleep(0.04)  # each thread ends long before the budget; all of them together do not
    out[i] = i


def test_a_thread_busy_in_a_long_loop_is_stopped_as_too_much_work():
    with pytest.raises(TookTooLong) as e:  # never stopped, it hangs: pytest-timeout fails it
        trace(long_loop, 1, 4, np.zeros(4, np.float32), watchdog=1.0)
    msg = str(e.value)
    assert msg.startswith("thread 0 of block 0 has run line ") and "(`s += j`)" in msg
    assert "its variables keep changing: more work per thread than the CPU tracer can run at this size" in msg
    assert "trace a smaller problem" in msg and "is a loop missing its exit?" not in msg


def test_a_long_loop_run_as_lanes_is_also_too_much_work():
    from helpers.tracer import vector

    assert vector.ENABLED
    with pytest.raises(TookTooLong) as e:
        trace(long_loop_of_lanes, 1, 4, np.zeros(4, np.float64), watchdog=1.0)
    msg = str(e.value)
    assert msg.startswith("thread 0 of block 0 has run line ") and "its variables keep changing" in msg


def test_a_spinning_thread_is_still_a_loop_missing_its_exit():
    with pytest.raises(TookTooLong) as e:
        trace(spins, 1, 4, np.zeros(4, np.float32), watchdog=1.0)
    assert str(e.value).endswith("is a loop missing its exit?") and "keep changing" not in str(e.value)


def test_a_long_trace_of_quick_threads_says_once_that_it_carries_on(capsys):
    out = np.zeros(64, np.float32)
    # 64 threads sleeping 40 ms each: the trace lasts at least 2.56 s, over twice the 1 s budget.
    trace(slow_but_finishing, 2, 32, out, watchdog=1.0)
    said = capsys.readouterr().out
    assert said.count("The CPU tracer has run slow_but_finishing for ") == 1, said
    assert "(at block " in said and "each of its 64 threads runs as Python here" in said
    assert list(out[:3]) == [0, 1, 2]


def test_a_function_answer_busy_in_a_loop_is_said_so():
    def counts_forever(n, t):
        k = 0
        while k >= 0:
            k += 1
        return k

    ex = FunctionExercise(reference=lambda n, t: n, inputs={"n": Ints(1, 9), "t": Ints(1, 9)}, trials=1)
    r = ex.grade(counts_forever, seed=1, watchdog=1)
    assert r.status == "error" and "its variables keep changing: a loop that never reaches its exit" in r.message
