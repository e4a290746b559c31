"""What the CPU mode refuses, a real GPU refuses too (issue 12): each kernel of
tests/refused/kernels.py fails to compile or launch on the GPU, the correct one runs, and the
launch limits the course enforces (helpers/limits.py) are the hardware's."""

import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import helpers  # noqa: F401 - decides the mode before numba is imported
from helpers import limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from numba import cuda  # noqa: E402

from refused.kernels import ARGS, CASES, good  # noqa: E402


def test_the_correct_kernel_runs():
    x, out, n = ARGS
    out = out.copy()
    good[1, 64](x, out, n)
    cuda.synchronize()
    assert np.isfinite(out).all() and out[3] > 0


_LAUNCH = """
import sys
sys.path.insert(0, {tests!r})
from numba import cuda
from refused.kernels import ARGS, CASES
kernel = dict((f, k) for f, k, _ in CASES)[{family!r}]
x, out, n = ARGS
try:
    kernel[1, 64](x, out.copy(), n)
    cuda.synchronize()
    print("RAN")
except Exception as e:
    print("RAISED", type(e).__name__)
"""


@pytest.mark.parametrize("family,kernel,words", CASES, ids=[c[0] for c in CASES])
def test_refused_kernel_fails_on_the_gpu(family, kernel, words):
    """Each in its own process: a mistyped signature launches and crashes the context (misaligned
    address on the H100), which would fail every later test in this one."""
    tests = str(Path(__file__).resolve().parent.parent)
    code = _LAUNCH.format(tests=tests, family=family)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.startswith("RAISED"), (r.stdout, r.stderr[-2000:])
    if family == "signature dtype":
        assert "CudaAPIError" in r.stdout or "TypeError" in r.stdout, r.stdout


@cuda.jit
def _copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_more_threads_per_block_than_the_limit_is_refused():
    x = np.ones(4096, np.float32)
    _copy[1, limits.MAX_THREADS_PER_BLOCK](x, np.zeros_like(x))  # the limit itself runs
    cuda.synchronize()
    with pytest.raises(Exception):
        _copy[1, limits.MAX_THREADS_PER_BLOCK + 1](x, np.zeros_like(x))
        cuda.synchronize()


def test_grid_y_past_the_limit_is_refused():
    x = np.ones(4, np.float32)
    with pytest.raises(Exception):
        _copy[(1, limits.MAX_GRID_DIM[1] + 1), 1](x, np.zeros_like(x))
        cuda.synchronize()


def _tile_copy(words):
    """A kernel that copies x through a shared tile of ``words`` floats (0: the launch's dynamic shared memory)."""

    @cuda.jit
    def tile_copy(x, out):
        tile = cuda.shared.array(words, numba.float32)
        i = cuda.threadIdx.x
        tile[i] = x[i]
        cuda.syncthreads()
        out[i] = tile[i]

    return tile_copy


def test_static_shared_memory_of_4_mb_is_refused():
    """The size the issue reported (a 4 MB tile). The course refuses anything past 48 KB, the limit every
    GPU has; from Numba an H100 also runs 49-100 KB static tiles (helpers/limits.py), as the sentence says."""
    big_tile = _tile_copy((4 << 20) // 4)
    x = np.ones(32, np.float32)
    with pytest.raises(Exception):
        big_tile[1, 32](x, np.zeros_like(x))
        cuda.synchronize()


def test_dynamic_shared_memory_past_48_kb_is_refused():
    """numba-cuda does not opt in to more dynamic shared memory (numba-cuda issue 94): 48 KB launches, one word
    more is refused, as helpers/limits.py's dynamic_shared_problem says in CPU mode."""
    dynamic_tile = _tile_copy(0)
    x = np.ones(32, np.float32)
    dynamic_tile[1, 32, 0, 48 * 1024](x, np.zeros_like(x))
    cuda.synchronize()
    with pytest.raises(Exception):
        dynamic_tile[1, 32, 0, 48 * 1024 + 4](x, np.zeros_like(x))
        cuda.synchronize()
