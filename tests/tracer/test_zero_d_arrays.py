"""A 0-d array is one element of memory every thread sees: traced like any array, drawn as one cell,
and t.show() of a launch that touched no array at all says so in a sentence (issue 27, fuzz leftovers)."""

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import LearnerError
from helpers.tracer import trace


@cuda.jit
def every_thread_writes(x):
    x[()] = 1.0


@cuda.jit
def thread_0_writes(x):
    if cuda.grid(1) == 0:
        x[()] = 2.0


@cuda.jit
def scalars_only(n):
    i = n + 1  # noqa: F841


def test_a_0d_array_is_traced_and_drawn():
    x = np.zeros((), np.float32)
    t = trace(thread_0_writes, 1, 4, x, outputs="x")
    assert x[()] == 2.0 and t.ok and len(t.accesses) == 1
    assert t.show() is not None and t.show_coalescing() is not None
    assert "No problems found" in t.summary()


def test_threads_writing_one_0d_element_race():
    t = trace(every_thread_writes, 1, 4, np.zeros((), np.float32))
    assert [v.kind for v in t.verdicts] == ["race"]
    assert "Race on x[()]" in t.verdicts[0].message
    assert t.show() is not None


def test_showing_a_launch_that_touched_no_array_is_one_sentence():
    t = trace(scalars_only, 1, 4, 3)
    with pytest.raises(LearnerError, match="nothing to draw: scalars_only has no array parameters"):
        t.show()
