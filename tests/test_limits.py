"""The GPU's launch limits, refused in the tracer, the exercise launch check and the pipeline spy."""

import numba
import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers import limits
from helpers.errors import LearnerError
from helpers.exercises import launch
from helpers.exercises.pipeline import _SpyKernel
from helpers.problems import nb02
from helpers.tracer import trace


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


@cuda.jit
def fill(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i


@cuda.jit
def huge_shared(x):
    tile = cuda.shared.array(1048576, np.float32)  # 4 MB
    tile[0] = 1.0
    x[0] = tile[0]


@cuda.jit
def two_tiles(x):
    a = cuda.shared.array(8192, np.float32)  # 32 KB
    b = cuda.shared.array(8192, np.float32)  # another 32 KB: 64 KB in one block
    a[0] = 1.0
    b[0] = 1.0
    x[0] = a[0] + b[0]


@cuda.jit
def legal_shared(x):
    tile = cuda.shared.array(12288, np.float32)  # exactly 48 KB
    tile[0] = 2.0
    x[0] = tile[0]


@cuda.jit
def returns_value(x):
    i = cuda.grid(1)
    return i


@cuda.jit
def returns_value_syncs(x):
    i = cuda.grid(1)
    cuda.syncthreads()
    return i


x = np.zeros(64, np.float32)


@pytest.mark.parametrize(
    "grid, block, says",
    [
        (1, 2048, "2048 threads per block is more than the 1024"),
        (1, (32, 40), "1280 threads per block"),
        (1, (1, 1, 128), "64 threads deep in z"),
        (2**31, 1024, "2,147,483,647 blocks along x"),
        ((1, 65536), 32, "65,535 along y"),
        ((1, 1, 70000), 32, "65,535 along y and z"),
    ],
)
def test_limit_sentences(grid, block, says):
    g = (grid,) if isinstance(grid, int) else grid
    b = (block,) if isinstance(block, int) else block
    assert says in (limits.block_problem(b) or limits.grid_problem(g))
    with pytest.raises(LearnerError, match=None) as err:  # the tracer refuses it before anything runs
        trace(fill, grid, block, x)
    assert says in str(err.value)
    with pytest.raises(LearnerError) as err:  # so does the exercise's launch validation
        launch.validate_launch((grid, block))
    assert says in str(err.value)


def test_legal_limits_pass():
    assert limits.block_problem((1024,)) is None and limits.block_problem((16, 16, 4)) is None
    assert limits.grid_problem((2**31 - 1, 65535, 65535)) is None


def test_huge_legal_launch_is_refused_by_the_tracer_not_run():
    with pytest.raises(LearnerError, match="trace a smaller problem"):
        trace(fill, 2**21, 1024, x)  # legal on a GPU; 2^31 threads one by one on a CPU is not
    with pytest.raises(LearnerError, match="2,147,483,647 blocks"):
        trace(fill, 2**31, 1024, x)


def test_the_most_threads_a_cpu_launch_starts_is_the_callers():
    assert limits.trace_size_problem(limits.TRACE_MAX_THREADS) is None
    assert "at most 4,194,304" in limits.trace_size_problem(limits.TRACE_MAX_THREADS + 1)
    assert limits.trace_size_problem(2**24, most=2**25) is None  # a launch that keeps no access log (ptx/launch.py)
    with pytest.raises(LearnerError, match="at most 100"):
        limits.launch_limits((1, 1, 1), (128, 1, 1), most_threads=100)


def test_static_shared_memory_is_48_kb_per_block():
    with pytest.raises(LearnerError, match="48 KB") as err:
        trace(huge_shared, 1, 32, x)
    assert "4,194,304 bytes" in str(err.value)
    with pytest.raises(LearnerError, match="65,536 bytes"):
        trace(two_tiles, 1, 32, x)
    trace(legal_shared, 2, 32, x)  # 48 KB in each of two blocks is fine: the limit is per block


@cuda.jit
def dynamic_tile(x):
    tile = cuda.shared.array(0, numba.float32)
    tile[cuda.threadIdx.x] = x[cuda.threadIdx.x]


def test_dynamic_shared_memory_past_48_kb_is_refused_at_the_launch():
    """numba-cuda 0.30 never sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (numba-cuda issue 94), so the
    driver refuses more than 48 KB of dynamic shared memory; tests/gpu/test_refused_on_gpu.py checks it on a GPU."""
    trace(dynamic_tile[1, 32, 0, 48 * 1024], x)  # the limit itself launches
    with pytest.raises(LearnerError, match=r"asks for 49,156 bytes of dynamic shared memory.*Numba does not"):
        trace(dynamic_tile[1, 32, 0, 48 * 1024 + 4], x)


@pytest.mark.parametrize("kernel", [returns_value, returns_value_syncs])
def test_a_kernel_cannot_return_a_value(kernel):
    with pytest.raises(LearnerError, match="a kernel cannot return a value: write the result into an output array"):
        trace(kernel, 1, 32, x)


def test_a_returning_kernel_fails_its_check():
    @cuda.jit
    def add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]
        return 0

    r = nb02.vector_add.grade(add, seed=1)
    assert r.status == "failed" and "return" in r.message and "output array" in r.message, r.message


def test_pipeline_spy_refuses_an_illegal_launch():
    spy = _SpyKernel(nb02.vector_add.reference)
    with pytest.raises(LearnerError, match="1024"):
        spy[1, 2048](np.zeros(4), np.zeros(4))
    with pytest.raises(LearnerError, match="65,535 along y"):
        spy[(1, 70000), 32](np.zeros(4), np.zeros(4))


@cuda.jit
def huge_local(x):
    a = cuda.local.array(1 << 22, numba.float32)  # 16 MB per thread: an H200 refused the launch
    a[0] = x[0]
    x[0] = a[0]


@cuda.jit
def legal_local(x):
    a = cuda.local.array(64, numba.float32)
    a[0] = x[0]
    x[0] = a[0]


def test_local_arrays_of_512_kb_or_more_per_thread_are_refused_before_they_are_allocated():
    with pytest.raises(LearnerError, match="16,777,216 bytes") as err:
        trace(huge_local, 1, 32, x)
    assert "CUDA_ERROR_INVALID_VALUE" in str(err.value)
    trace(legal_local, 1, 32, x)
    assert limits.local_problem(512 * 1024) and limits.local_problem(512 * 1024 - 4) is None


def test_constant_memory_is_64_kib_for_all_of_a_kernels_tables():
    assert limits.const_problem(64 * 1024) is None
    says = limits.const_problem(64 * 1024 + 4)
    assert "65,540 bytes" in says and "(0x10004 bytes, 0x10000 max)" in says  # the words of ptxas


CUDA_C = r"""
extern "C" __global__ void big_shared(float* x) {
  __shared__ float s[1 << 28];
  s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = s[threadIdx.x + 1];
}
extern "C" __global__ void just_over(float* x) {
  __shared__ float s[12289];
  s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = s[threadIdx.x + 1];
}
extern "C" __global__ void just_under(float* x) {
  __shared__ float s[12288];
  s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = s[threadIdx.x + 1];
}
extern "C" __global__ void big_local(float* x, int k) {
  float a[1 << 22];
  for (int i = 0; i < (1 << 22); i++) a[i] = x[i % 7] * i;
  x[threadIdx.x] = a[k];
}
"""


@pytest.mark.parametrize(
    "kernel, args, says",
    [
        ("big_shared", (), "uses too much shared data (0x40000000 bytes, 0xc000 max)"),
        ("just_over", (), "uses too much shared data (0xc004 bytes, 0xc000 max)"),
        ("big_local", (np.int32(5),), "16,777,216 bytes, and a GPU refuses to launch"),
    ],
)
def test_cuda_c_memory_a_gpu_refuses_is_refused_with_its_words(kernel, args, says):
    """The sentences are what ptxas and the driver said on an H200 (CuPy RawKernel, 2026-11-27)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    with pytest.raises(LearnerError) as err:
        ptx.run(CUDA_C, kernel, 1, 32, (np.ones(64, np.float32), *args))
    assert says in str(err.value)


def test_cuda_c_static_shared_memory_of_exactly_48_kb_runs():
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    ptx.run(CUDA_C, "just_under", 1, 32, (np.ones(64, np.float32),))
