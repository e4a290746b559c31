"""Notebook 07's "Bytes in flight" figures are the ones bench/streaming.py recorded on each GPU
(docs/data/streaming-*.json), and the records hold what the text draws from them: one record per
GPU kind, every variant verified and timed, Nsight Compute's occupancy beside each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDS = {
    p.stem.removeprefix("streaming-"): json.loads(p.read_text()) for p in (ROOT / "docs/data").glob("streaming-*.json")
}


def _pct(gpu: str, key: str, digits: int = 0) -> str:
    (v,) = [v for v in RECORDS[gpu]["variants"] if v["key"] == key]
    return f"{100 * v['of_copy']:.{digits}f} %"


def _occ(gpu: str, key: str) -> str:
    (v,) = [v for v in RECORDS[gpu]["variants"] if v["key"] == key]
    return f"{round(v['ncu']['achieved occupancy %'])} %"


def _section(folder: str) -> str:
    nb = nbformat.read(ROOT / folder / "07_performance.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("### Bytes in flight")]
    return re.sub(r"\s+", " ", cell.source)


def test_one_record_per_gpu_kind_each_variant_verified_and_profiled():
    assert set(RECORDS) == {"h100-80gb", "h200"}
    for gpu, rec in RECORDS.items():
        assert gpu.split("-")[0].upper() in rec["machine"]["GPU"], (gpu, rec["machine"])
        for v in rec["variants"]:
            assert v["status"] == "ok" and v["of_copy"] > 0, (gpu, v["key"])
            assert 0 < v["ncu"]["achieved occupancy %"] <= 100, (gpu, v["key"])


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_bytes_in_flight_figures_are_the_recorded_ones(folder):
    text = _section(folder)
    h100, h200 = "h100-80gb", "h200"
    assert (
        f"reaches {_pct(h100, 'copy_k1')} of the copy ceiling on the H100 and only {_pct(h200, 'copy_k1')} on the H200"
        in text
    )
    assert f"per thread {_pct(h100, 'copy_k4')} and {_pct(h200, 'copy_k4')}" in text
    assert f"go from {_pct(h200, 'vector_add_k1')} to {_pct(h200, 'vector_add_k4')} on the H200" in text
    assert f"ran at {_occ(h200, 'copy_k1')} achieved occupancy on the H200" in text
    assert f"to {_occ(h200, 'copy_grid_stride')} and reached only {_pct(h200, 'copy_grid_stride')}" in text
    assert f"were slower ({_pct(h200, 'copy_k1_t1024')})" in text
    t64 = (
        f"reaches {_pct(h100, 'transpose_t64_k16', 1)} on the H100 and {_pct(h200, 'transpose_t64_k16', 1)} on the H200"
    )
    assert t64 in text and f"against {_pct(h200, 'transpose_t32_k8', 1)} for the 32 x 32 tile" in text
    unsigned = f"reaches {_pct(h200, 'transpose_t64_k8_u', 1)} on the H200, against {_pct(h200, 'transpose_t64_k8', 1)}"
    assert unsigned in text and "250 PTX instructions instead of 663" in text  # tests/bench/test_streaming.py


def test_the_sgemm_ladders_nsight_figures_are_the_recorded_ones():
    """Notebook 07's "Why each step helps" paragraph quotes docs/data/sgemm_ncu.json (bench/sgemm_profile.py)."""
    rec = json.loads((ROOT / "docs/data/sgemm_ncu.json").read_text())
    steps = {s["step"].split("(")[-1].rstrip(")") if "(" in s["step"] else "CUDA C": s for s in rec["steps"]}
    nb = nbformat.read(ROOT / "solutions" / "07_performance.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("Why each step helps")]
    text = re.sub(r"\s+", " ", cell.source)
    assert rec["GPU"].split(" (")[0] in text and len(steps) == 6
    assert {s["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] for s in rec["steps"]} == {68719476736.0}
    inst = {k: s["smsp__inst_executed.sum"] / 1e9 for k, s in steps.items()}
    assert f"({inst['step 3']:.2f} G warp instructions in step 3, {inst['step 6']:.2f} G in step 6)" in text
    regs = {k: int(s["launch__registers_per_thread"]) for k, s in steps.items()}
    early = [regs[f"step {i}"] for i in (3, 4, 5, 6)]
    assert f"({min(early)} to {max(early)} registers per thread)" in text
    assert f"one block per SM ({regs['step 7']} and {regs['CUDA C']} registers)" in text
    fma = {k: s["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"] for k, s in steps.items()}
    assert f"{fma['step 7']:.0f} % and {fma['CUDA C']:.0f} % of its cycles against {fma['step 6']:.0f} % in step 6" in text
    occupancy = {k: s["sm__warps_active.avg.pct_of_peak_sustained_active"] for k, s in steps.items()}
    assert all(20 < occupancy[f"step {i}"] <= 25 for i in (3, 4, 5, 6)) and occupancy["step 7"] <= 12.5  # 2 blocks, 1
