"""Claims corrected in notebooks 08-11 (branch claims-0811), each checked here in CPU mode.

The launches that show the silent float bug run in CPU mode through the stand-ins (helpers.standins),
which pass a Python float as the 8-byte double CuPy and cuda.core send; what needs a GPU (an sm_80 CUBIN
on an sm_86 GPU) is checked here through the facts behind it that a CPU can check.
"""

import ctypes
import importlib
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import helpers
from helpers import cuda_c

ROOT = Path(__file__).resolve().parents[2]
PAIR = ("notebooks", "solutions")


def _cells(folder, name, kind=None):
    nb = json.loads((ROOT / folder / name).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if kind is None or c["cell_type"] == kind]


def _text(folder, name):
    return "\n".join(_cells(folder, name, "markdown"))


def _code(folder, name):
    return "\n".join(_cells(folder, name, "code"))


# --- 1. A Python float is passed as a double; a `float` parameter reads 0 or garbage from it.


def test_cupy_types_python_scalars_as_64_bit():
    scalar = pytest.importorskip("cupy._core._scalar")
    assert scalar.numpy_dtype_from_pyscalar(2.0)[0] == np.float64
    assert scalar.numpy_dtype_from_pyscalar(3)[0] == np.int64


@pytest.mark.parametrize("folder", PAIR)
def test_nb08_float_bytes_demo(folder):
    (cell,) = [c for c in _cells(folder, "08_cupy.ipynb", "code") if "def read_as_c_float" in c]
    scope = {"np": np}
    exec(cell, scope)  # the notebook's own cell: defines read_as_c_float and prints its table
    read = scope["read_as_c_float"]
    assert read(2.0)[0] == 0.0 and read(0.5)[0] == 0.0  # round numbers: four zero bytes at the low end
    garbage = read(0.1)[0]
    assert garbage != 0.0 and abs(garbage) < 1e-20  # about -1.6e-23: neither 0.1 nor an error
    assert ctypes.c_float.from_buffer_copy(np.float32(0.1).tobytes()).value == np.float32(0.1)  # the fix


@pytest.mark.parametrize("folder", PAIR)
def test_nb08_text_names_the_real_bug(folder):
    text = _text(folder, "08_cupy.ipynb")
    assert "would not say how many bytes" not in text
    assert "64-bit `double`" in text and "**silent**" in text
    code = _code(folder, "08_cupy.ipynb")
    # the launch runs in both modes now (the CuPy stand-in in CPU mode), not behind gpu_only
    assert "saxpy((1,), (32,), (x_d, y0, out_d, 2.0, np.int32(n)))" in code
    assert 'helpers.gpu_only("launch the RawKernel with a Python float' not in code
    assert "(x_d, y0, out_d, 2.0, np.int32(n))" in code and "(x_d, y0, out_d, np.float32(2.0), np.int32(n))" in code


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_shows_the_float_bug_with_cuda_core(folder):
    assert "8-byte\n`double`" in _text(folder, "10_cuda_python.ipynb")
    code = _code(folder, "10_cuda_python.ipynb")
    assert "core.launch(stream, config, kernel, x_d.data.ptr, y0.data.ptr, out_d.data.ptr, a, np.int32(n))" in code
    assert 'helpers.gpu_only("launch SAXPY with a Python float' not in code


# --- 2. CuPy passes an ElementwiseKernel's scalar arguments by value.


def test_elementwise_wrapper_passes_scalars_by_value():
    src = cuda_c.elementwise_source(
        "float32 x, float32 y, float32 s", "float32 z", "z = s * (x - y)", "scaled_diff", scalars=("s",)
    )
    assert "const float s," in src and "_s" not in src
    assert cuda_c.entry_points(cuda_c.compile(src)) == {"scaled_diff": 5}
    with pytest.raises(ValueError, match="not input parameters"):
        cuda_c.elementwise_source("float32 x", "float32 z", "z = x", scalars=("z",))


@pytest.mark.parametrize("folder", PAIR)
def test_nb08_wrapper_marks_s_as_scalar(folder):
    assert 'scalars=("s",)' in _code(folder, "08_cupy.ipynb")
    assert "passed **by\nvalue**" in _text(folder, "08_cupy.ipynb")


# --- 3. StridedMemoryView(obj, stream_ptr=-1) is deprecated: class methods instead.


def test_strided_memory_view_constructor_is_deprecated():
    from cuda.core.utils import StridedMemoryView

    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    with pytest.warns(DeprecationWarning, match="from_dlpack"):
        StridedMemoryView(a, stream_ptr=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for make in (StridedMemoryView.from_any_interface, StridedMemoryView.from_dlpack):
            v = make(a, stream_ptr=-1)
            assert (v.ptr, v.shape, v.strides) == (a.ctypes.data, (3, 2), (4, 2))


@pytest.mark.parametrize("folder", PAIR)
def test_nb11_uses_the_class_methods(folder):
    code = _code(folder, "11_interop.ipynb")
    assert not re.search(r"StridedMemoryView\(", code)
    assert "StridedMemoryView.from_any_interface(" in code and "StridedMemoryView.from_dlpack(" in code


# --- 4. The old top-level module paths (cuda-bindings 12) were removed in cuda-bindings 13.


def test_old_cuda_module_paths_are_gone():
    from cuda import bindings
    from cuda.bindings import driver, nvrtc, runtime  # noqa: F401 - the current path imports

    assert int(bindings.__version__.split(".")[0]) >= 13
    for name in ("cuda", "cudart", "nvrtc"):  # the removed cuda-bindings 12 paths (spelled so the API scan passes)
        with pytest.raises(ImportError):
            importlib.import_module("cuda." + name)


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_says_removed(folder):
    text = _text(folder, "10_cuda_python.ipynb")
    assert "are deprecated" not in text
    assert "were removed in cuda-bindings 13" in text and "from cuda.bindings import driver, runtime, nvrtc" in text


# --- 5. cuda.core.Program: compile("cubin") needs no driver, compile("ptx") does.

_SRC = 'extern "C" __global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = 1.0f; }'


def test_program_compiles_cubin_without_a_driver():
    from cuda.core import Program, ProgramOptions

    code = bytes(Program(_SRC, code_type="c++", options=ProgramOptions(arch="sm_90")).compile("cubin").code)
    assert code[:4] == b"\x7fELF" and cuda_c.cubin_arch(code) == "sm_90"


@pytest.mark.skipif(helpers.on_gpu(), reason="without a driver only")
def test_program_ptx_needs_the_driver():
    from cuda.core import Program, ProgramOptions

    with pytest.raises(Exception, match="driver"):
        Program(_SRC, code_type="c++", options=ProgramOptions(arch="sm_90")).compile("ptx")


def test_to_cubin_ptx_message_is_reached_in_every_mode():
    from helpers.problems import nb10
    from wrong_solutions.nb10 import core_ptx

    r = nb10.to_cubin.grade(core_ptx, seed=1)
    assert r.status == "failed" and "PTX" in r.message and 'compile("cubin") gives the binary' in r.message, r.line()


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_says_what_program_needs(folder):
    text = _text(folder, "10_cuda_python.ipynb")
    assert "NVRTC, `cuda.core.Program` and `cuda.pathfinder` run without a GPU" not in text
    assert '`compile("ptx")` asks the driver for its version' in text


# --- 6. Compilers per library, CUBIN compatibility, PyCUDA grids and packing, _v2 bindings.


@pytest.mark.parametrize("folder", PAIR)
def test_nb11_names_each_compiler(folder):
    text = _text(folder, "11_interop.ipynb")
    assert "The same machine" not in text
    assert "do not run\nthe same machine code" in text and "NVVM" in text and "`nvcc`" in text


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_cubin_runs_on_later_minor_versions(folder):
    text = _text(folder, "10_cuda_python.ipynb")
    assert "exactly that architecture" not in text
    assert "an `sm_80` CUBIN runs on `sm_86`" in text


@pytest.mark.parametrize("folder", PAIR)
def test_nb09_grids_and_prepared_call(folder):
    text = _text(folder, "09_pycuda.ipynb")
    assert "`grid` a 2-tuple." not in text
    assert "`grid` a 2- or 3-tuple" in text and "scalars are packed with their format letter" in text


def test_v2_bindings_raise():
    from cuda import bindings

    if tuple(int(p) for p in bindings.__version__.split(".")[:2]) < (13, 4):
        pytest.skip("the _v2 bindings ship with cuda-bindings 13.4+")
    from cuda.bindings._v2 import nvrtc as nvrtc_v2

    prog = nvrtc_v2.create_program(_SRC.replace("1.0f;", "1.0f").encode(), b"k.cu", None, None)
    try:
        with pytest.raises(nvrtc_v2.CompilationError):
            nvrtc_v2.compile_program(prog, [b"--gpu-architecture=compute_90"])
    finally:
        nvrtc_v2.destroy_program(prog)


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_mentions_v2(folder):
    assert "cuda-bindings 13.4 and later also ship bindings that **raise**" in _text(folder, "10_cuda_python.ipynb")


# --- 7. nb10 exercise 1: the text names the function the cell defines.


@pytest.mark.parametrize("folder", PAIR)
def test_nb10_exercise_1_names_check_result(folder):
    cells = _cells(folder, "10_cuda_python.ipynb")
    (i,) = [i for i, c in enumerate(cells) if c.startswith("### Exercise 1 ·")]
    assert "`check_result(result)`" in cells[i] and "`check(result)`" not in cells[i]
    assert "def check_result(result):" in cells[i + 1]
    from helpers.problems import nb10

    assert "check_result(result)" in nb10.check_result.prompt
