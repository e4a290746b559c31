"""bench/mlir_kernels.py, which ran notebook 02's kernels under numba-cuda-mlir on the H100 (the
record notebook 12 cites): its kernel extraction and its verdicts, checked on the simulator."""

import json
import sys
from pathlib import Path

import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import mlir_kernels as mk  # noqa: E402


def test_every_kernel_of_notebook_02_is_found_as_written():
    sources = mk.kernel_sources()
    names = {"add_kernel", "vector_add", "saxpy", "square_stride", "histogram", "blend", "lerp", "whoami"}
    assert names <= set(sources)
    assert "device=True" in sources["lerp"] and "cuda.atomic.add" in sources["histogram"]
    assert {c["kernel"] for c in mk.cases(10, np.random.default_rng(0))} <= set(sources)


def test_the_kernels_verify_on_the_simulator_and_a_wrong_one_is_caught():
    sources = mk.kernel_sources()
    kernels = mk.build(cuda, sources)
    rows = [mk.run_case(cuda, kernels, c, "numpy") for c in mk.cases(1000, np.random.default_rng(1))]
    assert [r["result"] for r in rows] == ["correct"] * len(rows), rows
    broken = dict(sources, vector_add=sources["vector_add"].replace("a[i] + b[i]", "a[i] - b[i]"))
    kernels = mk.build(cuda, broken)
    case = next(c for c in mk.cases(1000, np.random.default_rng(1)) if c["kernel"] == "vector_add")
    assert mk.run_case(cuda, kernels, case, "numpy")["result"] == "WRONG"
    case = dict(case, kernel="no_such_kernel")
    assert mk.run_case(cuda, kernels, case, "numpy")["result"] == "error"


def test_the_record_is_complete():
    doc = json.loads((ROOT / "docs/data/mlir_nb02.json").read_text())
    assert doc["gpu"].startswith("NVIDIA") and set(doc["versions"]) == {"numba", "mlir"}
    for module in ("numba", "mlir"):
        runs = [(r["kernel"], r["arrays"]) for r in doc["rows"] if r["module"] == module]
        assert len(runs) == len(set(runs)) == 27  # nine kernels x three kinds of array
