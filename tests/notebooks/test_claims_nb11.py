"""Notebook 11's launch-cost statements, checked against the recorded H100 run (bench/launch_cost.py)."""

import json
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
REC = json.loads((ROOT / "docs/data/launch_cost.json").read_text())
US = {r["way"]: r["host_us"] for r in REC["rows"] if r["correct"]}


def test_every_way_was_right_and_the_numbers_support_the_text():
    assert all(r["correct"] for r in REC["rows"]) and len(US) == 7
    # "passing CuPy arrays at every launch costs about three times as much as wrapping them once"
    assert 2.5 < US["Numba, CuPy arrays passed at every launch"] / US["Numba, device arrays wrapped once"] < 3.5
    # "an eager signature and reusing the configured launcher change little"
    for way in ("Numba, eager signature, device arrays", "Numba, eager, configured launcher reused"):
        assert abs(US[way] / US["Numba, device arrays wrapped once"] - 1) < 0.2
    # "cuda.core can launch it at the cost of a CUDA C launch"
    assert US["Numba-compiled kernel launched by cuda.core"] < 1.5 * US["CuPy RawKernel (CUDA C)"]
    assert US["Numba-compiled kernel launched by cuda.core"] < US["Numba, device arrays wrapped once"] / 5


def test_one_launch_timing_understates_numba_and_a_batch_does_not():
    t = REC["one_launch_vs_batch"]
    numba, c = t["Numba, device arrays wrapped once"], t["cuda.core launch (CUDA C)"]
    assert numba["one_launch_gbs"] < 0.85 * numba["queued_batch_gbs"]
    assert abs(numba["queued_batch_gbs"] / c["queued_batch_gbs"] - 1) < 0.03
    text = "\n".join(c.source for c in nbformat.read(ROOT / "solutions/11_interop.ipynb", as_version=4).cells)
    assert f"about {round(numba['one_launch_gbs'], -1):,.0f} GB/s" in text
    assert f"about {round(numba['queued_batch_gbs'], -1):,.0f} GB/s" in text
