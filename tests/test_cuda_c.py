"""helpers.cuda_c: the CUDA C toolbox of notebooks 08-11 (NVRTC compile, plain error messages,
entry points, the CuPy/PyCUDA kernel-source wrappers, signature probes). Runs in CPU mode too:
NVRTC compiles without a GPU.

The CUDA C sources the course ships are compiled in tests/notebooks/test_cuda_sources_compile.py.
"""

import os

import pytest

from helpers import cuda_c


def test_check_unpacks_and_raises():
    from cuda.bindings import driver, nvrtc

    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert cuda_c.check((ok,)) is None
    assert cuda_c.check((ok, 5)) == 5
    assert cuda_c.check((ok, 1, 2)) == (1, 2)
    with pytest.raises(cuda_c.CudaError, match="CUDA_ERROR_INVALID_VALUE"):
        cuda_c.check((driver.CUresult.CUDA_ERROR_INVALID_VALUE, None))
    with pytest.raises(TypeError):
        cuda_c.check(0)


def test_compile_error_is_one_plain_message():
    with pytest.raises(cuda_c.CompileError) as e:
        cuda_c.compile('extern "C" __global__ void k(float* x) { x[0] = 1 }', name="k.cu")
    msg = str(e.value)
    assert msg.startswith('k.cu does not compile: k.cu(1): error: expected a ";"') and "\n" not in msg
    assert "expected" in e.value.log


def test_compile_targets_and_entry_points():
    src = 'extern "C" __global__ void k(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1.0f; }'
    assert cuda_c.entry_points(cuda_c.compile(src)) == {"k": 2}
    assert cuda_c.cubin_arch(cuda_c.compile(src, target="cubin", arch="sm_80")) == "sm_80"
    assert "k" in cuda_c.entry_points(cuda_c.compile("__global__ void k(float* x, int n) {}", extern_c=True))
    with pytest.raises(ValueError):
        cuda_c.cubin_arch(b"// PTX")


def test_wrappers_compile_and_catch_mistakes():
    cuda_c.compile(cuda_c.elementwise_source("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]"))
    cuda_c.compile(cuda_c.reduction_source("float32 x", "float64 y", "x", "a > b ? a : b", "y = a", "-1e300"))
    cuda_c.compile(cuda_c.pycuda_elementwise_source("float* x", "x[i] = 2 * x[i]"))
    with pytest.raises(cuda_c.CompileError):
        cuda_c.compile(cuda_c.elementwise_source("float32 x", "float32 y", "y = x +"))
    with pytest.raises(ValueError, match="unknown type"):
        cuda_c.elementwise_source("float x", "float y", "y = x")


def test_signature_probe():
    src = 'extern "C" __global__ void k(const float* x, float* y, int n) {}'
    cuda_c.compile(src + cuda_c.signature_probe("k", "const float* x, float* y, int n"))
    with pytest.raises(cuda_c.CompileError, match="SIGNATURE"):  # const and pointer order count
        cuda_c.compile(src + cuda_c.signature_probe("k", "float* y, const float* x, int n"))
    with pytest.raises(cuda_c.CompileError, match="SIGNATURE"):
        cuda_c.compile(src + cuda_c.signature_probe("k", "float* x, float* y, long long n"))


# Every way the course hands NVRTC a buffer, in a fresh process (the damage is per process): the PTX and
# CUBIN paths, an empty log (size 1: the case that wrote a NUL into CPython's shared b" "), an error log,
# the stand-ins' compile, and the two cells notebooks 00 and 10 teach.
_EVERY_COMPILE_PATH = r"""
import json, sys
import helpers
from helpers import cuda_c
from helpers.standins import _launch
SRC = 'extern "C" __global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1.0f; }'
cuda_c.compile(SRC)
cuda_c.compile(SRC, target="cubin")
try:
    cuda_c.compile("__global__ void k( {")
except cuda_c.CompileError:
    pass
_launch.compile_ptx(SRC)
for name, needle in (("00_setup.ipynb", "nvrtcGetPTX("), ("10_cuda_python.ipynb", "def nvrtc_compile(")):
    cells = json.load(open(f"solutions/{name}"))["cells"]
    (src,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and needle in "".join(c["source"])]
    ns = {"check": cuda_c.check, "cuda_c": cuda_c, "helpers": helpers}
    exec("from cuda.bindings import nvrtc\n" + src, ns)
print(json.dumps([repr(bytes([32])), repr(" ".encode()), "a b".encode().hex()]))
"""


def test_no_compile_path_writes_into_an_immutable_bytes_object():
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "COURSE_MODE": "cpu"}
    run = subprocess.run([sys.executable, "-c", _EVERY_COMPILE_PATH], cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == ["b' '", "b' '", "612062"]


def _includes(header):
    return f'#include <{header}>\nextern "C" __global__ void k(float* x) {{ x[0] = 1.0f; }}\n'


@pytest.mark.parametrize("header", ["cuda_fp16.h", "cuda_bf16.h"])
def test_the_half_precision_headers_the_environment_ships_are_found(header):
    # numba-cuda ships them in the CPU set, the CUDA runtime wheel in the GPU set
    assert any(os.path.isfile(os.path.join(d, header)) for d in cuda_c.header_dirs())
    assert "k" in cuda_c.entry_points(cuda_c.compile(_includes(header)))


def test_a_header_the_environment_lacks_is_named_not_nvrtcs_raw_error():
    with pytest.raises(cuda_c.CompileError) as e:
        cuda_c.compile(_includes("no_such_header.h"), name="k.cu")
    msg = str(e.value)
    assert msg.startswith("k.cu does not compile: it includes <no_such_header.h>, a header this environment does not")
    assert "cuda_fp16.h" in msg and "open source file" not in msg and "open source file" in e.value.log


def test_cooperative_groups_is_named_where_it_is_not_shipped():
    if any(os.path.isfile(os.path.join(d, "cooperative_groups.h")) for d in cuda_c.header_dirs()):
        cuda_c.compile(_includes("cooperative_groups.h"))  # the GPU set's runtime wheel ships it
        return
    with pytest.raises(cuda_c.CompileError, match="includes <cooperative_groups.h>, a header this environment does"):
        cuda_c.compile(_includes("cooperative_groups.h"))
