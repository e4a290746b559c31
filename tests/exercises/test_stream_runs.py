"""helpers.exercises.stream_runs: the course's RawKernels handed to a learner's function log every launch and,
on a GPU, refuse a NumPy scalar of the wrong size before it reaches the kernel, in the sentence the CPU's runner
gives (a GPU would read the low bytes of an int64 for an int and get the right number by luck of byte order)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import LearnerError
from helpers.exercises import stream_runs
from helpers.problems import nb16


class Kernel:
    def __init__(self):
        self.calls = []

    def __call__(self, grid, block, args, **kwargs):
        self.calls.append(args)


def test_the_signature_is_read_from_the_kernels_ptx():
    names, params = stream_runs.signature(nb16.ADD_ONE_SRC, "add_one")
    assert names == ["a", "n"] and [p.size for p in params] == [8, 4]


def test_a_scalar_of_the_wrong_size_is_refused_before_the_launch_and_the_right_one_runs():
    log, kernel = [], Kernel()
    add_one = stream_runs.Logged(kernel, "add_one", log, stream_runs.signature(nb16.ADD_ONE_SRC, "add_one"))
    x = np.zeros(4, np.float32)
    with pytest.raises(LearnerError, match=r"Argument 1 \(n\) is int64 \(8 bytes\) but the kernel's parameter is .u32"):
        add_one((1,), (128,), (x, np.int64(4)))
    assert kernel.calls == [] and log == [["add_one", [1], [128]]]
    add_one((1,), (128,), (x, np.int32(4)))
    assert len(kernel.calls) == 1


def test_without_a_signature_every_call_goes_through():
    kernel = Kernel()
    stream_runs.Logged(kernel, "twice", [])((1,), (128,), (np.zeros(4, np.float32), np.int64(4)))
    assert len(kernel.calls) == 1
