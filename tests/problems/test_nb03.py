"""Notebook 03 (memory): what is particular to its custom exercise class (run_on_device, a
DevicePipelineExercise). The reference and every wrong answer in tests/wrong_solutions/nb03.py run
in tests/problems/test_catalogue.py; its kernels are traced in tests/notebooks/test_kernels_trace_clean.py.
"""

import pytest
from numba import cuda

pytestmark = pytest.mark.usefixtures("progress_file")


def test_run_on_device_learner_errors():
    from helpers.problems import nb03

    ex = nb03.run_on_device
    assert ex.grade(cuda.jit(lambda kernel, x: None)).status == "error"
    r = ex.grade(lambda x: x)
    assert r.status == "error" and "2 arguments" in r.message
    r = ex.grade(lambda kernel, x: undefined_name)  # noqa: F821
    assert r.status == "error" and "NameError" in r.message
    r = ex.grade(42)
    assert r.status == "error" and "function itself" in r.message


def _pipeline(threads, extra_blocks):
    def run_on_device(kernel, x):
        d_x = cuda.to_device(x)
        d_out = cuda.device_array_like(d_x)
        kernel[(x.size + threads - 1) // threads + extra_blocks, threads](d_x, d_out)
        return d_out.copy_to_host()

    return run_on_device


@pytest.mark.parametrize(
    "threads,extra,says",
    [
        (129, 0, "blocks of 129 threads: a GPU runs threads in warps of 32"),
        (127, 0, "blocks of 127 threads"),
        (128, 1, "the extra blocks only start up and do nothing"),
    ],
)
def test_run_on_device_launches_whole_warps_and_no_spare_block(threads, extra, says):
    """The rules a learner's own launch function is held to (nb02.saxpy) hold for the launch inside
    run_on_device too: these answers give the right numbers with one copy each way."""
    from helpers.problems import nb03

    r = nb03.run_on_device.grade(_pipeline(threads, extra), seed=1)
    assert r.status == "failed" and says in r.message, r.line()
    assert nb03.run_on_device.grade(_pipeline(128, 0), seed=1).status == "passed"
