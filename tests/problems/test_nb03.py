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


def test_run_on_device_in_place_is_not_an_output_allocated_on_the_device():
    """kernel(d_x, d_x) then d_x.copy_to_host(): right numbers, one copy each way, but the kernel wrote
    over its input and no output was allocated, which is what the exercise asks for."""
    from helpers.problems import nb03

    def in_place(kernel, x):
        d_x = cuda.to_device(x)
        kernel[(x.size + 127) // 128, 128](d_x, d_x)
        return d_x.copy_to_host()

    r = nb03.run_on_device.grade(in_place, seed=1)
    assert r.status == "failed" and "same device array as its input and its output" in r.message, r.line()


def test_run_on_device_with_one_block_for_everything_fails_past_1024_elements():
    from helpers.problems import nb03

    def one_block(kernel, x):
        d_x = cuda.to_device(x)
        d_out = cuda.device_array_like(d_x)
        kernel[1, (x.size + 31) // 32 * 32](d_x, d_out)  # whole warps, but one block for everything
        return d_out.copy_to_host()

    r = nb03.run_on_device.grade(one_block, seed=1)
    assert r.status != "passed" and "1024" in r.message.replace(",", ""), r.line()
