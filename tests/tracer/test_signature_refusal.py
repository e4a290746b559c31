"""A kernel given its signature (`@cuda.jit("void(float32[:], float32[:])")`) and traced on arrays the
signature does not take is refused in one sentence (issue 27, fuzz leftovers): a GPU launch of one
signature runs it anyway on memory read as the signature says (tests/gpu/test_refused_on_gpu.py saw
it crash an H100), a list of signatures refuses the launch; the simulator drops the signature, so
the tracer read it from the decorator."""

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import LearnerError
from helpers.tracer import trace
from refused.kernels import ARGS, declared_float64

SIG = "void(float32[:], float32[:])"


@cuda.jit("void(float32[:], float32[:])")
def doubled(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 2


@cuda.jit(SIG)
def doubled_by_name(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 2


@cuda.jit(["void(float32[:], float32[:])", "void(int32[:], int32[:])"])
def doubled_two_ways(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * 2


@cuda.jit("void(float32[:, :], float32)")
def matrix(a, s):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i, 0] = s


def test_float64_arrays_for_a_float32_signature_are_refused_before_running():
    out = np.zeros(32)
    with pytest.raises(LearnerError) as e:
        trace(doubled, 1, 32, np.ones(32), out)
    msg = str(e.value)
    assert msg.startswith("Your kernel doubled is declared with a signature whose parameter a is a 1-D float32 array")
    assert "a is a 1-D float64 array" in msg and "a.astype(np.float32)" in msg and "change the signature" in msg
    assert "\n" not in msg and not out.any()


def test_a_signature_named_by_a_global_is_read_too():
    with pytest.raises(LearnerError, match="parameter a is a 1-D float32 array"):
        trace(doubled_by_name, 1, 32, np.ones(32), np.zeros(32))


def test_arrays_the_signature_takes_run():
    a, out = np.ones(32, np.float32), np.zeros(32, np.float32)
    assert trace(doubled, 1, 32, a, out).ok and list(out) == [2] * 32
    assert trace(doubled_two_ways, 1, 32, a.astype(np.int32), out.astype(np.int32)).ok


def test_a_list_of_signatures_that_takes_none_of_them_is_a_refused_launch():
    with pytest.raises(LearnerError, match="none takes a as a 1-D float64 array: on a GPU Numba refuses this launch"):
        trace(doubled_two_ways, 1, 32, np.ones(32), np.zeros(32))


def test_dimensions_count_too():
    with pytest.raises(LearnerError, match="parameter a is a 2-D float32 array, but a is a 1-D float32 array"):
        trace(matrix, 1, 32, np.ones(32, np.float32), 2.0)


def test_the_refused_kernels_mistyped_signature_is_refused_by_trace():
    """tests/refused/kernels.py: the compile check refuses it; trace() without compile_check= does too."""
    with pytest.raises(LearnerError, match="parameter x is a 1-D float64 array, but x is a 1-D float32 array"):
        trace(declared_float64, 2, 32, *[a.copy() if hasattr(a, "copy") else a for a in ARGS])
