"""Right answers in another form still pass: any spelling of a library's name, ctypes storage for kernel parameters."""

import numpy as np
import pytest

from helpers.problems import nb09, nb10, nb11

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)


@pytest.mark.parametrize("given", ["CuPy", "cupy ", "'cupy'", "CUPY"])
def test_the_real_exercises_take_any_spelling_of_the_name(given):
    assert _grade(nb11.choose_tool, given).status == "passed"
    module = "import pycuda.autoprimaryctx" if given != "CUPY" else "PyCUDA.autoprimaryctx"
    assert _grade(nb09.context_import, module).status == "passed"
    r = _grade(nb09.context_import, "import pycuda.autoinit")
    assert r.status == "failed" and "non-primary context" in r.message


_CTYPE = {"uint64": "c_uint64", "float32": "c_float", "int32": "c_int32", "float64": "c_double"}


def params_in_ctypes(*args):
    import ctypes

    storage = [getattr(ctypes, _CTYPE[a.dtype.name])(a.item()) for a in args]
    return np.array([ctypes.addressof(s) for s in storage], dtype=np.uint64), storage


def params_all_c_float(*args):
    import ctypes

    storage = [ctypes.c_float(float(a)) for a in args]  # the device pointer squeezed into 4 bytes
    return np.array([ctypes.addressof(s) for s in storage], dtype=np.uint64), storage


def test_kernel_params_accepts_ctypes_storage():
    r = _grade(nb10.kernel_params, params_in_ctypes)
    assert r.status == "passed", r.message
    r = _grade(nb10.kernel_params, params_all_c_float)
    assert r.status == "failed" and "points at 4 bytes" in r.message and "8 bytes" in r.message, r.message
