"""trace() traces the launch its call states (issue 27, fuzz leftovers): in CPU mode the simulator's
`k[4, 256]` configures the kernel itself and the kernel keeps it, so `trace(k, out)` after a launch
silently traced that old launch; a GPU's kernel keeps no launch, so trace() now says the launch is
missing, and a launch given twice is refused too."""

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import LearnerError
from helpers.tracer import trace


@cuda.jit
def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


def _launched():
    out = np.zeros(1024, np.float32)
    fill[4, 256](out)
    return out


def test_a_kernel_launched_before_and_traced_without_a_launch_is_refused():
    out = _launched()
    with pytest.raises(LearnerError, match=r"names no launch: write trace\(fill\[griddim, blockdim\]|Give the launch"):
        trace(fill, out)


def test_the_launch_written_in_the_call_is_the_one_traced():
    out = _launched()
    assert (trace(fill[2, 32], out).nblocks, trace(fill, 3, 32, out).nblocks) == (2, 3)
    launch = fill[5, 32]  # a launch configuration kept under another name is a launch too
    assert trace(launch, out).nblocks == 5


def test_a_launch_given_twice_is_refused():
    out = _launched()
    with pytest.raises(LearnerError, match=r"given the launch twice, as fill\[\.\.\.\] and as 2, 32"):
        trace(fill[2, 32], 2, 32, out)
