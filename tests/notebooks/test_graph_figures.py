"""Notebook 16's launch-cost figures are the ones bench/streams_graphs.py recorded
(docs/data/streams_graphs.json), and name the GPU they came from."""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORD = json.loads((ROOT / "docs/data/streams_graphs.json").read_text())


def _us(lib: str, way: str) -> str:
    return f"{RECORD['launch_cost'][lib][way]['done_us']:.1f} µs"


def _text(folder: str) -> str:
    nb = nbformat.read(ROOT / folder / "16_streams_and_graphs.ipynb", as_version=4)
    return re.sub(r"\s+", " ", "\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_launch_cost_figures_are_the_recorded_ones(folder):
    text, gpu = _text(folder), RECORD["machine"]["GPU"].split(" (")[0]
    assert gpu.startswith("NVIDIA")
    sentence = (
        f"(`docs/data/streams_graphs.json`, an {gpu}): launched one by one, a Numba kernel costs "
        f"{_us('numba', 'one by one')} of host time and a CuPy `RawKernel` {_us('cupy', 'one by one')}; replayed from "
        f"a graph, {_us('numba', 'graph')} and {_us('cupy', 'graph')} per kernel"
    )
    assert sentence in text
    assert (
        f"({_us('numba', 'one by one')} a Numba launch on an {gpu}, {_us('numba', 'graph')} per kernel replayed)"
        in text
    )


def test_no_overlap_figure_is_kept_from_the_withdrawn_run():
    assert "overlap" not in RECORD and "np.arange" in RECORD["overlap_withdrawn"]
