"""Notebook 15: helpers.profiling's sentences, and the recorded GPU runs support what the notebook says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from helpers import profiling, trace
from helpers.errors import GPURequired, LearnerError

ROOT = Path(__file__).resolve().parents[1]
SAN = json.loads((ROOT / "docs/data/sanitizer.json").read_text())["results"]
NCU = json.loads((ROOT / "docs/data/ncu_course.json").read_text())


def caught(tool):
    return {n for n, r in SAN.items() if r[tool].get("caught") is True}


def test_parse_reads_real_ncu_csv_and_explains_failures():
    rows = profiling.parse((ROOT / "tests/data/ncu_sgemm_sample.csv").read_text())
    assert len(rows) == 2 and rows[0]["gpu__time_duration.sum"] == 6599424.0
    assert rows[0]["kernel"].startswith("bench::sgemm_regblock")
    with pytest.raises(LearnerError, match="NVreg_RestrictProfilingToAdminUsers=0"):
        profiling.parse("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU counters")
    with pytest.raises(LearnerError, match="profiled no kernel"):
        profiling.parse("==PROF== Disconnected from process 1\n")


def test_no_ncu_is_one_sentence(monkeypatch):
    monkeypatch.setattr(profiling.shutil, "which", lambda name: None)
    with pytest.raises(GPURequired, match="not on PATH"):
        profiling.ncu(["python", "x.py"])


def test_sanitizer_record_supports_the_notebook():
    assert caught("memcheck") == {"oob_missing_guard", "oob_second_dimension", "oob_atomic_bin"}
    assert caught("racecheck") == {"race_matmul_missing_sync", "race_scan_in_place", "race_reduction_missing_sync"}
    assert caught("initcheck") == set()
    assert caught("synccheck") == {"divergent_barrier_in_if"}
    assert all(r.get("hang") for r in SAN["divergent_two_branches"].values())
    missed = [n for n, r in SAN.items() if not any(v.get("caught") is True for v in r.values())]
    assert len(missed) == 11 and len(SAN) == 18
    assert {"race_histogram_nonatomic", "race_cross_block_out0", "race_read_during_atomics"} <= set(missed)


def test_the_tracer_catches_the_cupy_pool_overrun_case():
    """The one row of the table that is not in the tracer's corpus: the same kernel on a 1000-element array."""

    @cuda.jit
    def fill(out):
        i = cuda.grid(1)
        out[i] = 1.0

    t = trace(fill, 1, 1001, np.zeros(1000, np.float32))
    assert {v.kind for v in t.verdicts} == {"out_of_bounds"}


def test_ncu_record_supports_the_notebook():
    rows = {r["launch"]: r for r in NCU["rows"]}
    naive, padded = rows["transpose, naive, 4096²"], rows["transpose, tiled + padded, 4096²"]
    assert 4.5 < naive["gpu__time_duration.sum"] / padded["gpu__time_duration.sum"] < 5.5
    add = rows["vector add, 2^24 float32"]
    assert add["dram__bytes_read.sum"] >= 2 * 4 * 2**24 and add["dram__bytes_write.sum"] < 4 * 2**24
    main4 = list(rows.values())[:4]
    assert all(76 <= r["sm__warps_active.avg.pct_of_peak_sustained_active"] <= 97 for r in main4)
    assert all(16 <= r["launch__registers_per_thread"] <= 32 for r in main4)
