"""Notebook 19's checks accept right answers written another way, and the sticky errors' truth table is the
documentation's: the errors every CUDA guide calls sticky are in it, the ones it calls recoverable are not."""

import re

import pytest
from cuda.bindings import runtime
from numba import cuda

from helpers.problems import nb19

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


class CudaCallError(Exception):
    """A learner's own exception class: the check reads the message, not the type."""


def check_with_int(result):
    err, *values = result
    if int(err) != 0:  # the enums are ints
        name = runtime.cudaGetErrorName(err)[1].decode()
        raise CudaCallError(f"{name} ({runtime.cudaGetErrorString(err)[1].decode()})")
    if len(values) == 0:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def sticky_by_regex(errors):
    return [e.name for e in errors if re.search(r"must\s+be\s+terminated\s+and\s+relaunched", e.__doc__ or "")]


@cuda.jit
def chunk_sums_while(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = -(-x.size // out.size)  # ceiling division written another way
        k = i * chunk
        s = 0
        while k < x.size and k < (i + 1) * chunk:
            s += x[k]
            k += 1
        out[i] = s


@pytest.mark.parametrize(
    "ex,answer",
    [(nb19.check_call, check_with_int), (nb19.sticky_errors, sticky_by_regex), (nb19.chunk_sums, chunk_sums_while)],
)
def test_right_answers_written_another_way_pass(ex, answer):
    r = ex.grade(answer, seed=7)
    assert r.status == "passed", r.line()


DOCUMENTED_STICKY = (  # the CUDA runtime API's list (cudaError_t), as guides repeat it
    "cudaErrorIllegalAddress",
    "cudaErrorIllegalInstruction",
    "cudaErrorMisalignedAddress",
    "cudaErrorInvalidAddressSpace",
    "cudaErrorInvalidPc",
    "cudaErrorLaunchFailure",
    "cudaErrorHardwareStackError",
    "cudaErrorAssert",
    "cudaErrorLaunchTimeout",
)
RECOVERABLE = (
    "cudaErrorInvalidValue",
    "cudaErrorMemoryAllocation",
    "cudaErrorInvalidConfiguration",
    "cudaErrorLaunchOutOfResources",
    "cudaErrorInvalidDevice",
)


def test_the_truth_table_read_from_the_docstrings_is_cuda_s():
    table = nb19._sticky_errors(list(runtime.cudaError_t))
    assert set(DOCUMENTED_STICKY) <= set(table)
    assert not set(RECOVERABLE) & set(table)
    assert "cudaSuccess" not in table


class _Documented:
    """An error code with the documentation given here: the answer follows the text, not the number."""

    def __init__(self, name, doc):
        self.name, self.__doc__ = name, doc


def test_the_answer_comes_from_the_documentation_not_from_the_code():
    wrapped = "An error. To continue using CUDA, the process\nmust be terminated and relaunched."
    codes = [_Documented("a", wrapped), _Documented("b", "A failed allocation."), _Documented("c", None)]
    assert nb19._sticky_errors(codes) == ["a"]
