"""Notebook 07's pipeline exercise: its reference is the three-engine model its prompt states, checked
against an event-by-event simulation of that model (the GPU cell after the exercise measures the real thing)."""

import json
from pathlib import Path

import numpy as np
import pytest

from helpers.problems import nb07


def _simulated_pipeline_ms(n_chunks, stage_ms):
    """Event by event: chunk i starts stage s once it has left stage s - 1 and the engine has finished chunk i - 1."""
    done = [0.0] * len(stage_ms)  # when each engine finished its last chunk
    for _ in range(n_chunks):
        ready = 0.0  # when this chunk left the previous stage
        for s, total in enumerate(stage_ms):
            ready = done[s] = max(ready, done[s]) + total / n_chunks
    return done[-1]


def test_pipeline_reference_is_the_three_engine_model_of_its_prompt():
    rng = np.random.default_rng(7)
    for _ in range(500):
        n = int(rng.integers(1, 65))
        stages = [float(v) for v in rng.uniform(0.1, 50, 3)]
        assert nb07.pipeline.reference(n, *stages) == pytest.approx(_simulated_pipeline_ms(n, stages), rel=1e-12)


def test_pipeline_overlap_pays_only_with_more_than_one_chunk():
    assert nb07.pipeline.reference(1, 4.0, 2.0, 4.0) == 10.0  # one chunk: the serial total
    assert nb07.pipeline.reference(4, 4.0, 4.0, 4.0) == 6.0  # balanced: half the serial 12 ms


def _code_cells(name):
    nb = json.loads((Path(__file__).resolve().parents[2] / "solutions" / name).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_the_measurement_cell_is_gpu_only_and_times_with_events_on_the_streams():
    (cell,) = [c for c in _code_cells("07_performance.ipynb") if "pipeline_ms(k, h2d, kernel, d2h)" in c]
    assert cell.startswith("if helpers.gpu_only(")  # CPU mode prints one line and moves on
    for call in ("cuda.event()", "start.record(gate)", "start.wait(s)", "end.record(s)", "cuda.event_elapsed_time("):
        assert call in cell, call
    assert "except Exception" in cell  # an unfinished pipeline_ms prints a sentence, not a traceback
