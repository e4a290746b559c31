"""Every kernel the notebooks ship as correct traces clean on the CPU tracer (no verdict at all).

- notebooks 02-04: each `@cuda.jit` kernel of the solution notebook, with awkward sizes (a partial
  last block in every dimension); a kernel added to a notebook must be added to CLEAN, or be one
  of the bugs a notebook demonstrates (those are tested in tests/problems/test_nb02.py and tests/problems/test_nb04.py);
- the reference kernels of the exercises of nb03, nb04 and nb11.

The benchmark's kernels (bench/kernels.py, notebooks 05-07) are traced in tests/bench/test_benchmarks.py.
"""

import numpy as np
import pytest
from support import f32, nan32, notebook_kernels, rng

from helpers.tracer import trace

# name -> (grid, block, args, outputs) for each kernel the notebooks ship as correct.
# Sizes are awkward on purpose: partial last blocks in every dimension.
CLEAN = {
    "02_first_kernels.ipynb": {
        "add_kernel": (3, 8, lambda: (f32(20), f32(20), nan32(20)), ("out",)),
        "whoami": (3, 8, lambda: (np.full(20, -1, np.int32), np.full(20, -1, np.int32)), ("block_of", "thread_of")),
        "add_stride": (2, 8, lambda: (f32(45), f32(45), nan32(45)), ("out",)),
        "blend": (2, 32, lambda: (f32(50), f32(50), np.float32(0.25), nan32(50)), ("out",)),
        "scale": (2, 32, lambda: (np.float32(2.0), f32(50), nan32(50)), ("out",)),
        "vector_add": (4, 32, lambda: (f32(100), f32(100), nan32(100)), ("out",)),
        "saxpy": (4, 32, lambda: (np.float32(1.5), f32(100), f32(100), nan32(100)), ("out",)),
        "square_stride": (2, 32, lambda: (f32(150), nan32(150)), ("out",)),
        "histogram": (3, 32, lambda: (rng.integers(0, 16, 90).astype(np.int32), np.zeros(16, np.int32)), ()),
    },
    "03_memory.ipynb": {
        "scale": (4, 32, lambda: (f32(100), np.float32(3.0), nan32(100)), ("out",)),
        "twice_plus_one": (4, 32, lambda: (f32(100), nan32(100)), ("out",)),
    },
    "04_2d_grids_images.ipynb": {
        "block_number": ((4, 3), (4, 4), lambda: (np.full((10, 13), -1, np.int32),), ("out",)),
        "matrix_add": ((5, 3), (8, 8), lambda: (f32(20, 37), f32(20, 37), nan32(20, 37)), ("out",)),
        "mandelbrot": ((3, 2), (8, 8), lambda: (np.full((13, 21), -1, np.int32), -2.2, 1.0, -1.2, 1.2, 20), ("steps",)),
        "grayscale": ((3, 2), (8, 8), lambda: (f32(13, 21, 3, low=0.0), nan32(13, 21)), ("out",)),
        "mirror": ((3, 2), (8, 8), lambda: (f32(13, 21), nan32(13, 21)), ("out",)),
        "blur": ((3, 2), (8, 8), lambda: (f32(13, 21), nan32(13, 21)), ("out",)),
    },
}
CLEAN_CASES = [(nb, k) for nb, table in CLEAN.items() for k in table]


@pytest.mark.parametrize("nb,kernel", CLEAN_CASES, ids=[f"{nb[:2]}-{k}" for nb, k in CLEAN_CASES])
def test_shipped_kernel_traces_clean(nb, kernel):
    kernels = notebook_kernels(nb)
    grid, block, make_args, outputs = CLEAN[nb][kernel]
    t = trace(kernels[kernel], grid, block, *make_args(), outputs=outputs)
    assert t.ok, t.summary()


def test_every_notebook_kernel_is_covered():
    """A kernel added to a notebook must be added to CLEAN (or to the demonstrated bugs, tests/problems/test_nb02.py/test_nb04.py)."""
    demonstrated = {"add_unguarded", "histogram_racy"}
    device_functions = {"lerp", "escape_steps"}
    for nb, table in CLEAN.items():
        names = set(notebook_kernels(nb))
        assert names - set(table) - demonstrated - device_functions == set(), nb


# -- reference kernels of the exercises


def test_reference_kernels_of_nb03_nb04_trace_clean():
    from helpers.problems import nb03, nb04

    assert trace(nb03._twice_plus_one, 4, 32, f32(100), nan32(100), outputs=("out",)).ok
    for ex in nb04.EXERCISES.values():
        img = f32(13, 21, 3, low=0.0) if ex.name == "grayscale" else f32(13, 21)
        t = trace(ex.reference, (3, 2), (8, 8), img, nan32(13, 21), outputs=("out",))
        assert t.ok, t.summary()


def test_numba_solution_kernels_trace_clean():
    from helpers.problems import nb11

    n = 70
    x, y = np.random.default_rng(0).random((2, n), dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    t = trace(nb11._saxpy, 3, 32, np.float32(2.0), x, y, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
