"""Notebooks 08-11 (CuPy, PyCUDA, cuda-python, interop): exercises, helpers.cuda_c, bench/interop.py.

- Every exercise's reference passes and has at least three catalogued wrong answers
  (tests/wrong_solutions/nb08..nb11; test_problems.py runs them, tests/gpu/ the GPU-only ones).
- In CPU mode the CUDA C checks run the kernel (helpers.ptx) and say so; never a pass unrun.
- Solution Numba kernels pass the CPU tracer with no verdicts.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import importlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import helpers  # noqa: E402,F401 - decides the mode before numba is imported
from helpers import cuda_c  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MINE = ("nb08", "nb09", "nb10", "nb11")
PROBLEMS = {m: importlib.import_module(f"helpers.problems.{m}") for m in MINE}
WRONGS = {m: importlib.import_module(f"wrong_solutions.{m}") for m in MINE}
EXERCISES = [ex for m in MINE for ex in PROBLEMS[m].EXERCISES.values()]


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


def _grade_reference(ex, seed):
    options = ex.reference_options() if hasattr(ex, "reference_options") else {}
    return ex.grade(ex.reference_answer(), seed=seed, **options)


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_reference_passes(ex):
    r = _grade_reference(ex, seed=1)
    assert r.status == "passed", r.line()


# The WRONG catalogues run in tests/test_problems.py (every mode); the WRONG_GPU ones, CUDA C that
# compiles but computes wrong numbers, run in tests/gpu/test_wrong_numbers_gpu.py under make test-gpu.


def test_every_exercise_has_wrong_answers():
    for ex in EXERCISES:
        n = len(getattr(WRONGS[ex.notebook], "WRONG").get(ex.name, []))
        assert n >= 3, f"{ex.id} has {n} wrong answers"


CUDA_C = [ex for ex in EXERCISES if type(ex).__name__ == "CudaCExercise"]


@pytest.mark.skipif(helpers.on_gpu(), reason="CPU-mode wording")
@pytest.mark.parametrize("ex", CUDA_C, ids=[ex.id for ex in CUDA_C])
def test_cpu_mode_runs_the_numbers(ex):
    r = _grade_reference(ex, seed=1)
    assert r.status == "passed" and "run on the CPU" in r.message and r.metrics.get("numbers_checked") is True


def test_array_exercise_names_its_stand_in():
    r = _grade_reference(PROBLEMS["nb08"].normalize_rows, seed=1)
    assert ("NumPy standing in" in r.message) != helpers.on_gpu()


# ----------------------------------------------------------------------------- Numba solutions, traced


def test_numba_solution_kernels_trace_clean():
    from helpers.tracer import trace

    n = 70
    x, y = np.random.default_rng(0).random((2, n), dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    t = trace(PROBLEMS["nb11"]._saxpy, 3, 32, np.float32(2.0), x, y, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)


# ----------------------------------------------------------------------------- helpers.cuda_c


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


# ----------------------------------------------------------------------------- bench/interop.py


def test_bench_interop_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "frag.md"
    env = dict(os.environ, COURSE_MODE="cpu")
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "interop.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
