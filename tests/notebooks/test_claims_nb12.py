"""Notebook 12's corrected claims, each a test that fails if the claim is false on this Numba.

- The myth "@njit parallelizes loops automatically": a serial @njit has no parallel loop and runs every
  iteration on one thread; parallel=True over a range loop is still serial (and Numba warns); only a prange
  loop is split, over every thread Numba may use. Counted by Numba's parfor pass and by numba.get_thread_id(),
  not by timing, so a busy machine cannot make these pass or fail.
- fastmath=True reassociates a float32 sum (another result, SIMD code) and may drop NaN checks; fastmath={"reassoc"}
  keeps them.
- @vectorize: float32 signatures keep float32 data float32, and the cpu and parallel targets agree.
- numba-cuda's own README (the installed package's metadata) announces maintenance mode and numba-cuda-mlir,
  as notebook 12 quotes; the landscape table marks every tool not installed here as not run.
"""

import importlib.metadata
import json
import re
import warnings
from pathlib import Path

import nbformat
import numba
import numpy as np
import pytest
from numba import njit, prange, vectorize
from numba.core.errors import NumbaPerformanceWarning

from helpers import _numba

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "12_cpu_baseline_and_landscape.ipynb"


def _serial(x, who):
    total = 0.0
    for i in range(x.size):
        total += x[i] * x[i]
        who[i] = numba.get_thread_id()
    return total


def _prange(x, who):
    total = 0.0
    for i in prange(x.size):
        total += x[i] * x[i]
        who[i] = numba.get_thread_id()
    return total


def _run(f, n=20_000):
    x, who = np.random.default_rng(0).random(n), np.full(n, -1, np.int64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = f(x, who)
    assert np.isclose(total, np.dot(x, x)) and (who >= 0).all()
    warned = any(issubclass(w.category, NumbaPerformanceWarning) for w in caught)
    return _numba.parfor_count(f), np.unique(who).size, warned


def test_njit_alone_is_one_thread():
    assert _run(njit(_serial)) == (0, 1, False)


def test_parallel_true_over_range_is_still_serial_and_numba_warns():
    assert _run(njit(parallel=True)(_serial)) == (0, 1, True)


def test_prange_runs_iterations_on_more_than_one_thread():
    if numba.get_num_threads() < 2:
        pytest.skip("Numba may use one thread here (NUMBA_NUM_THREADS=1 or one core): nothing to split across")
    loops, threads, warned = _run(njit(parallel=True)(_prange), n=200_000)
    assert loops >= 1 and not warned
    assert 2 <= threads <= numba.get_num_threads()
    if numba.threading_layer() in ("omp", "workqueue"):  # static schedule: each thread gets a chunk
        assert threads == numba.get_num_threads()


def test_parfor_count_is_zero_before_the_first_call_and_for_non_njit():
    f = njit(parallel=True)(_prange)
    assert _numba.parfor_count(f) == 0 and _numba.parfor_count(_prange) == 0
    assert _numba.cpu_jit_options(f)["parallel"] is True and _numba.cpu_jit_options(_prange) == {}


def _total32(x):
    t = np.float32(0.0)
    for i in range(x.size):
        t += x[i]
    return t


def _count_nan(x):
    k = 0
    for v in x:
        if np.isnan(v):
            k += 1
    return k


def test_fastmath_reassociates_a_float32_sum():
    x = np.random.default_rng(2).random(1_000_000, dtype=np.float32)
    strict, fast = njit(_total32), njit(fastmath=True)(_total32)
    assert strict(x) == np.add.accumulate(x)[-1]  # strict: left to right, one element after another
    assert fast(x) != strict(x)  # reordered into partial sums: another rounding
    assert abs(float(fast(x)) - float(x.astype(np.float64).sum())) < 1e-3 * x.size  # still a sum of x


def test_fastmath_may_drop_a_nan_check_and_reassoc_alone_keeps_it():
    data = np.array([1.0, np.nan, 3.0])
    assert njit(_count_nan)(data) == 1
    assert njit(fastmath=True)(_count_nan)(data) == 0
    assert njit(fastmath={"reassoc"})(_count_nan)(data) == 1


def test_vectorize_float32_signature_keeps_float32_and_targets_agree():
    def bump(x, w):
        return np.exp(-((x / w) ** 2))

    sigs = ["float32(float32, float32)", "float64(float64, float64)"]
    cpu, par = vectorize(sigs, target="cpu")(bump), vectorize(sigs, target="parallel")(bump)
    xs = np.linspace(-3, 3, 10_001, dtype=np.float32)
    assert cpu(xs, np.float32(1)).dtype == np.float32 and par(xs, np.float32(1)).dtype == np.float32
    np.testing.assert_array_equal(cpu(xs, np.float32(1)), par(xs, np.float32(1)))
    only64 = vectorize(["float64(float64, float64)"], target="cpu")(bump)
    assert only64(xs, np.float32(1)).dtype == np.float64  # what the leaky_relu exercise's message says


def _markdown(folder):
    nb = nbformat.read(ROOT / folder / NOTEBOOK, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_numba_cuda_readme_says_what_the_notebook_quotes():
    readme = importlib.metadata.metadata("numba-cuda").get_payload()
    assert "Numba-CUDA is in maintenance mode." in readme
    assert "security issues and critical bug fixes through the lifetime of CUDA 13" in re.sub(r"\s+", " ", readme)
    assert "Numba-CUDA-MLIR" in readme
    text = re.sub(r"\s+", " ", _markdown("solutions"))
    assert "maintenance mode" in text and "through the lifetime of CUDA 13" in text


# Landscape rows -> the distributions that would make a snippet runnable here.
NOT_INSTALLED_ROWS = {
    "numba-cuda-mlir": ["numba-cuda-mlir"],
    "nvmath-python": ["nvmath-python"],
    "cuTile Python": ["cuda-tile"],
    "Triton": ["triton"],
    "JAX": ["jax"],
    "Cython": ["Cython", "cython"],
}


# Tools not in the course's environment that were run on the GPU host: the record the row must cite.
RECORDED = {"numba-cuda-mlir": "docs/data/mlir_nb02.json", "cuTile Python": "docs/data/cutile.json"}


def _installed(dists):
    for d in dists:
        try:
            importlib.metadata.version(d)
            return True
        except importlib.metadata.PackageNotFoundError:
            pass
    return False


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_landscape_marks_every_tool_not_installed_here_as_not_run(folder):
    rows = [line for line in _markdown(folder).splitlines() if line.startswith("| **")]
    for tool, dists in NOT_INSTALLED_ROWS.items():
        (row,) = [r for r in rows if r.startswith(f"| **{tool}**")]
        last = row.rstrip(" |").rsplit("|", 1)[-1]
        if not _installed(dists):
            ran = tool in RECORDED and "run on the H100" in last and RECORDED[tool] in last
            assert ran or "not run here" in last or "untested here" in last, row
    # cuda.compute is in the GPU sets since notebook 14: its row reports what the recorded H100 run found
    record = json.loads((ROOT / "docs/data/cccl.json").read_text())
    (row,) = [r for r in rows if r.startswith("| **cuda.compute**")]
    assert "notebook 14" in row and "numba-cuda-mlir is required" in row
    assert record["features"]["custom Python operator (reduce with max_abs)"].startswith("fails: ImportError")
    assert record["features_with_numba_cuda_mlir"]["custom Python operator (reduce with max_abs)"].startswith("works")
    cutile = next(r for r in rows if r.startswith("| **cuTile Python**"))
    assert "r580" in cutile and "8.0" in cutile and "failed to compile a vector add" in cutile
    tile = json.loads((ROOT / RECORDED["cuTile Python"]).read_text())
    assert all(v["correct"] for v in tile["vector_add"].values()) and "CUDA_HOME" in tile["failed_before"]
    assert "CUDA_HOME" in cutile and "n = 128 and 2^20" in cutile
    mlir = json.loads((ROOT / RECORDED["numba-cuda-mlir"]).read_text())
    runs = [r for r in mlir["rows"] if r["module"] == "mlir"]
    right = sum(r["result"] == "correct" for r in runs)
    (row,) = [r for r in rows if r.startswith("| **numba-cuda-mlir**")]
    assert f"{right} of {len(runs)} runs" in row and len({r["kernel"] for r in runs}) == 9
    assert f"({right} of {len(runs)} runs" in re.sub(r"\s+", " ", _markdown(folder))


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_no_code_snippet_for_a_tool_that_is_not_run(folder):
    """Snippets only where they run: no notebook code imports a tool the course does not install."""
    nb = nbformat.read(ROOT / folder / NOTEBOOK, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for module in ("numba_cuda_mlir", "cuda.compute", "cuda.tile", "nvmath", "triton", "jax", "cython", "Cython"):
        assert not re.search(rf"^\s*(import|from)\s+{re.escape(module)}\b", code, re.M), module
