"""Notebook 16's launch-cost and copy-overlap figures are the ones bench/streams_graphs.py recorded
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


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_overlap_figures_are_the_recorded_ones(folder):
    overlap, gpu = RECORD["overlap"], RECORD["machine"]["GPU"].split(" (")[0]
    ms = {way: f"{r['ms']:.1f} ms" for way, r in overlap.items()}
    sentence = (
        f"Measured on an {gpu} by `bench/streams_graphs.py` (`docs/data/streams_graphs.json`): copying "
        f"{RECORD['settings']['elements']:,} float32 to the GPU, computing 2x + 1 and copying the result back took "
        f"{ms['one stream, pageable']} from pageable memory, {ms['one stream, pinned']} from pinned memory, and "
        f"{ms['4 streams, pinned']} from pinned memory cut into 4 chunks on 4 streams"
    )
    assert sentence in _text(folder)
