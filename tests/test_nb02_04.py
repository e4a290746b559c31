"""Notebooks 02-04: every kernel they ship traces clean, every bug they demonstrate is caught,
and the custom exercise classes of nb03/nb04 report learner errors plainly.

Kernels are taken from the solution notebooks themselves (their `@cuda.jit` definitions, found
with `ast`), so a kernel edited in a notebook is re-checked here without running the notebook.
"""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import ast  # noqa: E402
import math  # noqa: E402
from pathlib import Path  # noqa: E402

import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numba import cuda  # noqa: E402

import helpers  # noqa: E402,F401 - decides CPU/GPU mode before numba is imported
from helpers.tracer import trace  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _is_cuda_jit(dec) -> bool:
    node = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(node, ast.Attribute) and node.attr == "jit"


def notebook_kernels(name):
    """{function name: @cuda.jit object} for every kernel and device function defined in a solution notebook."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    ns = {"cuda": cuda, "np": np, "math": math}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        defs = [
            n for n in tree.body if isinstance(n, ast.FunctionDef) and any(_is_cuda_jit(d) for d in n.decorator_list)
        ]
        if defs:
            code = compile(ast.Module(body=defs, type_ignores=[]), f"{name}:{cell.get('id', '?')}", "exec")
            exec(code, ns)  # noqa: S102 - the course's own notebooks
    return {k: v for k, v in ns.items() if k not in ("cuda", "np", "math", "__builtins__")}


rng = np.random.default_rng(0)


def f32(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def nan32(*shape):
    return np.full(shape, np.nan, dtype=np.float32)


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
    """A kernel added to a notebook must be added to CLEAN (or to the demonstrated bugs below)."""
    demonstrated = {"add_unguarded", "histogram_racy"}
    device_functions = {"lerp", "escape_steps"}
    for nb, table in CLEAN.items():
        names = set(notebook_kernels(nb))
        assert names - set(table) - demonstrated - device_functions == set(), nb


def test_reference_kernels_of_nb03_nb04_trace_clean():
    from helpers.problems import nb03, nb04

    assert trace(nb03._twice_plus_one, 4, 32, f32(100), nan32(100), outputs=("out",)).ok
    for ex in nb04.EXERCISES.values():
        img = f32(13, 21, 3, low=0.0) if ex.name == "grayscale" else f32(13, 21)
        t = trace(ex.reference, (3, 2), (8, 8), img, nan32(13, 21), outputs=("out",))
        assert t.ok, t.summary()


# -- the bugs the notebooks demonstrate must really be caught (the text says they are)


def test_nb02_unguarded_add_is_out_of_bounds():
    k = notebook_kernels("02_first_kernels.ipynb")["add_unguarded"]
    t = trace(k, 3, 8, f32(20), f32(20), nan32(20), outputs=("out",))
    kinds = {v.kind for v in t.verdicts}
    assert kinds == {"out_of_bounds"}, t.summary()
    assert t.show(block=2) is not None


def test_nb02_racy_histogram_is_a_race_with_right_counts():
    k = notebook_kernels("02_first_kernels.ipynb")["histogram_racy"]
    data = np.random.default_rng(1).integers(0, 4, size=64).astype(np.int32)
    hist = np.zeros(4, np.int32)
    t = trace(k, 2, 32, data, hist)
    assert np.array_equal(hist, np.bincount(data, minlength=4)), "the notebook says the counts come out right"
    assert {v.kind for v in t.verdicts} == {"race"}, t.summary()


def test_nb04_floor_division_grid_leaves_unwritten_output():
    k = notebook_kernels("04_2d_grids_images.ipynb")["matrix_add"]
    small = (20, 37)
    out = nan32(*small)
    t = trace(k, (small[1] // 8, small[0] // 8), (8, 8), f32(*small), f32(*small), out, outputs=("out",))
    assert {v.kind for v in t.verdicts} == {"unwritten_output"}, t.summary()
    assert np.isnan(out[:, 32:]).all() and np.isnan(out[16:, :]).all() and not np.isnan(out[:16, :32]).any()


# -- exercises of nb03 and nb04: test_problems.py runs the reference and every wrong answer in
# tests/wrong_solutions/nb03.py and nb04.py; here, what is particular to their custom exercise classes.


@pytest.fixture(autouse=True)
def _progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


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


def test_image_exercise_describes_unwritten_pixels_with_a_picture():
    from helpers.problems import nb04
    from wrong_solutions.nb04 import gray_first_block_only

    r = nb04.grayscale.grade(gray_first_block_only, seed=7)
    assert r.status == "failed" and "only the first block" in r.message and r.picture is not None
