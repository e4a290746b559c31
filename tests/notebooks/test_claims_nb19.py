"""Notebook 19's claims, each against the installed sources it cites or the GPU record it quotes
(docs/data/sticky_errors.json, written by bench/sticky_errors.py on a GPU)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest
from cuda.bindings import runtime

from helpers.problems import nb19

ROOT = Path(__file__).resolve().parents[2]
NB = nbformat.read(ROOT / "solutions" / "19_debugging_and_errors.ipynb", as_version=4)
TEXT = " ".join(" ".join(c.source.split()) for c in NB.cells if c.cell_type == "markdown")
RECORD_PATH = ROOT / "docs" / "data" / "sticky_errors.json"


def _source(module_name: str) -> str:
    """The installed file's text: read, not imported (in CPU mode numba.cuda's dispatcher is the simulator's)."""
    package, _, name = module_name.rpartition(".")
    return (Path(importlib.util.find_spec(package).origin).parent / f"{name}.py").read_text()


def test_the_sticky_sentence_quoted_is_the_documentation_s_and_the_famous_errors_carry_it():
    assert f'"{nb19.STICKY}"' in TEXT
    errors = runtime.cudaError_t
    for name in ("cudaErrorIllegalAddress", "cudaErrorAssert", "cudaErrorLaunchFailure", "cudaErrorTensorMemoryLeak"):
        assert nb19._documented_sticky(getattr(errors, name)), name
    for name in ("cudaErrorLaunchOutOfResources", "cudaErrorInvalidConfiguration", "cudaErrorMemoryAllocation"):
        assert not nb19._documented_sticky(getattr(errors, name)), name
    assert "requesting too many threads or blocks" in " ".join(errors.cudaErrorInvalidConfiguration.__doc__.split())


def test_synchronize_is_documented_to_return_earlier_failures():
    quoted = "returns an error if one of the preceding tasks has failed"
    assert quoted in TEXT and quoted in " ".join(runtime.cudaDeviceSynchronize.__doc__.split())


def test_exception_classes_are_where_the_table_says():
    import cuda.core
    from cuda.core._utils.cuda_utils import CUDAError
    from cupy.cuda import driver as cupy_driver
    from cupy.cuda import runtime as cupy_runtime
    from numba.cuda.core.errors import NumbaPerformanceWarning
    from numba.cuda.cudadrv.driver import CudaAPIError

    assert issubclass(cupy_runtime.CUDARuntimeError, RuntimeError) and issubclass(
        cupy_driver.CUDADriverError, RuntimeError
    )
    assert (
        str(cupy_runtime.CUDARuntimeError(700)) == "cudaErrorIllegalAddress: an illegal memory access was encountered"
    )
    assert "cudaErrorIllegalAddress: an illegal memory access was encountered" in TEXT
    assert issubclass(NumbaPerformanceWarning, Warning) and "`numba.cuda.core.errors`" in TEXT
    assert CudaAPIError.__name__ in TEXT
    assert not hasattr(cuda.core, "CUDAError") and "not exported at the top of `cuda.core` 1.2" in TEXT
    assert CUDAError.__module__ == "cuda.core._utils.cuda_utils"


def test_numba_warnings_and_debug_builds_are_as_described():
    dispatcher = _source("numba.cuda.dispatcher")
    assert "min_grid_size = 128" in dispatcher and "fewer than 128 blocks" in TEXT
    assert "from cuda.core import launch" in dispatcher and "calls `cuda.core.launch`" in TEXT
    assert "errors.NumbaPerformanceWarning(" in dispatcher and "from numba.cuda.core import errors" in dispatcher
    launch = dispatcher[dispatcher.index("    def launch(self, args, griddim, blockdim") :]
    after = launch[launch.index("launch(stream, config, kernel, *kernelargs)") :]
    assert re.search(r"if self\.debug:\s+driver\.device_to_host\(", after)  # the error flag is copied back each launch
    decorators = _source("numba.cuda.decorators")
    assert "line info only with code generation unaffected" in decorators and "may result in a crash" in decorators
    assert "NUMBA_CUDA_DEBUGINFO" in decorators
    printing = _source("numba.cuda.printimpl")
    assert '"%lld"' in printing and '"%llu"' in printing and '"%f"' in printing and "more than 32 items" in printing
    for kind in ("types.Integer", "types.Float", "types.Boolean", "types.StringLiteral", "types.UniTuple", "Dim3"):
        assert f"@print_item.register({kind})" in printing, kind


def test_ipykernel_forwards_c_level_output_by_default():
    from ipykernel.kernelapp import IPKernelApp

    assert IPKernelApp.capture_fd_output.default_value is True and "capture_fd_output" in TEXT


def _steps(record, name):
    return {row["step"]: row for row in record["experiments"][name]["steps"]}


def test_the_gpu_record_agrees_with_the_text():
    if not RECORD_PATH.exists():
        pytest.skip("docs/data/sticky_errors.json is written by bench/sticky_errors.py on a GPU; not recorded yet")
    record = json.loads(RECORD_PATH.read_text())
    fault = _steps(record, "numba_fault")
    assert fault["launch far_store[8, 128](d, FAR)"]["ok"]  # the launch returns
    assert not fault["cuda.synchronize()"]["ok"]  # the next synchronizing call reports it
    assert not fault["cuda.to_device(np.ones(4))"]["ok"]  # and every later call fails: sticky
    assert not fault["a correct launch, fill[8, 128](d), and its copy back"]["ok"]
    bad = _steps(record, "numba_bad_config")
    assert not bad["fill[2, 2048](d): 2,048 threads per block"]["ok"]
    assert bad["a correct launch, fill[32, 128](d), and its copy back"]["ok"]  # not sticky
    assert record["tools"]["nsys"] is None and "has **no `nsys`**" in TEXT
    assert record["tools"]["ncu"] and record["tools"]["compute-sanitizer"]


def test_the_error_name_functions_are_the_ones_named():
    from cuda.bindings import driver

    assert hasattr(driver, "cuGetErrorName") and hasattr(driver, "cuGetErrorString")
    assert not hasattr(driver, "cuDriverGetErrorName") and "there is no `cuDriverGetErrorName`" in TEXT
    errors = runtime.cudaError_t
    # the runtime's answer with no driver at all (CPU mode), as the text says
    assert runtime.cudaGetErrorName(errors.cudaErrorIllegalAddress) == (errors.cudaSuccess, b"cudaErrorIllegalAddress")
    assert issubclass(errors, int) and errors.cudaSuccess == 0
