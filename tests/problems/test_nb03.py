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
