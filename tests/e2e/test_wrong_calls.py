"""A wrong call to the course's functions (a bad seed, a forgotten launch, an odd argument) is one sentence, never
a traceback from inside helpers."""

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from helpers import cuda_c, geometry, trace
from helpers.errors import CourseError, LearnerError
from helpers.problems import nb02

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


@cuda.jit
def copy_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


_X, _OUT = np.zeros(10, np.float32), np.zeros(10, np.float32)
WRONG_CALLS = {
    "check seed='abc'": (lambda: nb02.vector_add.grade(nb02.vector_add.reference, seed="abc"), "seed must be"),
    "unknown keyword to check": (
        lambda: nb02.vector_add.grade(nb02.vector_add.reference, lanch=3),
        "has no option lanch= (did you mean launch=?)",
    ),
    "cuda_c.compile(None)": (lambda: cuda_c.compile(None), "src must be a string of CUDA C"),
    "cuda_c.compile(non-UTF-8 bytes)": (
        lambda: cuda_c.compile(b'\xff\xfeextern "C" __global__ void f() {}'),
        "not UTF-8 text",
    ),
    "cuda_c.compile(arch=90)": (lambda: cuda_c.compile('extern "C" __global__ void f() {}', arch=90), "'sm_90'"),
    "cuda_c.compile(target='PTX')": (
        lambda: cuda_c.compile('extern "C" __global__ void f() {}', target="PTX"),
        "target must be 'ptx' or 'cubin'",
    ),
    "cuda_c.check(123)": (lambda: cuda_c.check(123), "pass the call's result itself"),
    "geometry.grid_explorer(3)": (lambda: geometry.grid_explorer(3), "takes 1 (a 1D launch) or 2"),
    "geometry.launch_2d((10,), (8, 8))": (lambda: geometry.launch_2d((10,), (8, 8)), "shape must be a pair"),
    "trace() with a forgotten launch": (lambda: trace(copy_kernel, _X, _OUT), "griddim must be an int"),
    "trace(k, '12', 32, ...)": (lambda: trace(copy_kernel, "12", 32, _X, _OUT), "not '12'"),
    "geometry.launch_1d(10**9, 256)": (lambda: geometry.launch_1d(10**9, 256), "at most 16,777,216"),
    "a 0-d array": (lambda: trace(copy_kernel, 1, 32, np.array(1.0, np.float32), _OUT), "0-dimensional"),
}


@pytest.mark.parametrize("name", list(WRONG_CALLS))
def test_a_wrong_call_is_one_sentence_not_a_traceback(name):
    call, says = WRONG_CALLS[name]
    try:
        result = call()
    except CourseError as e:  # LearnerError (and KernelError for the kernel's own line): one line in Jupyter
        message = str(e)
    else:  # grade() never raises: the sentence is its message
        assert result.status == "error", result
        message = result.message
    assert says in message, message
    assert "\n" not in message and "Traceback" not in message and "helpers/" not in message, message


@cuda.jit
def copy_3d(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_show_takes_a_block_by_its_coordinates_on_a_3d_trace():
    x = np.arange(64, dtype=np.float32)
    t = trace(copy_3d, (2, 2, 2), (8, 1, 1), x, np.zeros_like(x))
    from matplotlib.text import Text

    titles = lambda fig: sorted(t.get_text() for t in fig.findobj(Text) if "block" in t.get_text())  # noqa: E731
    assert titles(t.show(block=(1, 1, 1))) == titles(t.show(block=7)) != titles(t.show(block=0))
    with pytest.raises(LearnerError, match=r"block must be a block of this trace's 2 x 2 x 2 grid"):
        t.show(block=(2, 0, 0))
