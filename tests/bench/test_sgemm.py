"""The SGEMM ladder's new steps (issue 17): right answers on the CPU, and honest tooling.

Speed is measured on a GPU only (bench/run.py, bench/sgemm_tune.py); here each generated kernel
must compute C = A @ B in the simulator, at sizes that fill whole tiles (the unguarded variant)
and at ragged ones (the guarded variant), and the CUDA C step must be right in the PTX interpreter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bench import sgemm, sgemm_c, sgemm_profile

ROOT = Path(__file__).resolve().parents[2]
SMALL = (
    sgemm.Config(64, 64, 8, 8, 8, 8, 1),
    sgemm.Config(64, 64, 8, 8, 8, 8, 0),
    sgemm.Config(64, 64, 8, 8, 8, 8, 1, VL=1),  # step 7's 128-bit reads: four plain reads on the simulator
    sgemm.Config(64, 64, 8, 4, 8, 8, 0, VL=1),
)


def _run(cfg, m, n, k, seed=3):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    C = np.full((m, n), np.nan, np.float32)  # poison: every element must be written
    kern, grid, block = sgemm.launch(cfg, m, n, k)
    kern[grid, block](A, B, C)
    return np.abs(C - A.astype(np.float64) @ B).max()


@pytest.mark.parametrize("cfg", SMALL, ids=lambda c: c.name())
@pytest.mark.parametrize("shape", [(64, 64, 16), (70, 37, 13)], ids=["whole tiles", "ragged"])
def test_generated_kernel_is_right(cfg, shape):
    assert sgemm.fits(cfg, *shape) == (shape == (64, 64, 16))
    assert _run(cfg, *shape) < 1e-4


def test_a_wrong_generated_kernel_is_caught(monkeypatch):
    """The check above can fail: a generator that drops the last k step gives a wrong C."""
    real = sgemm._source

    def broken(cfg, guarded):
        return real(cfg, guarded).replace("c0_0 += a0 * b0", "c0_0 += float32(0.0)")

    monkeypatch.setattr(sgemm, "_source", broken)
    monkeypatch.setattr(sgemm, "_CACHE", {})
    assert _run(SMALL[1], 64, 64, 16) > 1e-2


def test_configs_that_cannot_run_say_why():
    assert "shared memory" in sgemm.Config(128, 128, 32, 8, 8, 16, 1).problem()
    assert "threads" in sgemm.Config(16, 16, 8, 8, 8, 2, 0).problem()
    assert sgemm.Config(128, 128, 8, 8, 8, 16, 1).problem() is None
    assert all(c.problem() is None for c in sgemm.search_space())
    with pytest.raises(ValueError, match="cannot run"):
        sgemm.make_kernel(sgemm.Config(128, 128, 32, 8, 8, 16, 1), guarded=True)
    assert "groups of 4" in sgemm.Config(64, 64, 8, 8, 2, 8, 1, VL=1).problem()
    assert sgemm.VECTOR.problem() is None and sgemm.VECTOR.name() == "128x256x8 t8x16 lx16 db vl"


def test_tuned_reads_the_recorded_best_and_falls_back(tmp_path):
    recorded = json.loads((ROOT / "docs/data/sgemm_tune.json").read_text())
    assert sgemm.tuned() == sgemm.Config(**recorded["best"])
    best = max((r for r in recorded["configs"] if r.get("status") == "ok"), key=lambda r: r["tflops"])
    assert best["config"] == recorded["best"]  # the file's "best" is its fastest correct config
    bad = tmp_path / "t.json"
    bad.write_text("{not json")
    assert sgemm.tuned(bad) == sgemm.DEFAULT
    bad.write_text(json.dumps({"best": {"BM": 128, "BN": 128, "BK": 64, "TM": 8, "TN": 8, "LX": 16, "DB": 1}}))
    assert sgemm.tuned(bad) == sgemm.DEFAULT  # over 48 KB of shared memory: not used


@pytest.mark.parametrize("label, macros", sgemm_c.VARIANTS)
def test_every_cuda_c_variant_is_right_in_the_ptx_interpreter(label, macros):
    """Each variant bench/sgemm_c.py times (the 8 x 16 thread tile, the k-step's reads issued early) computes
    A @ B, on a grid of two block rows and, where a tile is 128 wide, two block columns."""
    from helpers import ptx

    bn, bk = macros.get("BN", sgemm_c.BN), macros["BK"]
    m, n, k = 256, 256, 3 * bk
    rng = np.random.default_rng(bk + bn)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    C = np.full((m, n), np.nan, np.float32)
    args = (np.int32(m), np.int32(n), np.int32(k), A, B, C)
    opts = tuple(f"-D{key}={v}" for key, v in macros.items())
    src = (ROOT / "bench/sgemm_c.cu").read_text()
    grid, block = (n // bn, m // sgemm_c.BM), (sgemm_c.threads(macros),)
    run = ptx.run(src, "sgemm_vec", grid, block, args, max_steps=10**7, options=opts)
    assert not run.out_of_bounds
    assert np.abs(C - A.astype(np.float64) @ B).max() < 1e-4, label


def test_ncu_csv_parser_reads_a_real_ncu_table():
    recs = sgemm_profile.parse((ROOT / "tests/data/ncu_sgemm_sample.csv").read_text())
    assert [r["step"] for r in recs] == list(sgemm_profile.LADDER[:2])
    assert recs[0]["gpu__time_duration.sum"] == 6599424.0  # "6,599,424" in the CSV
    with pytest.raises(ValueError, match="no ncu CSV"):
        sgemm_profile.parse("==PROF== nothing profiled\n")


def test_ncu_csv_parser_leaves_out_the_kernels_that_fill_the_inputs():
    """The H200 run of 2026-11-28 without -k: CuPy's random-number kernels come first; the six steps follow."""
    recs = sgemm_profile.parse((ROOT / "tests/data/ncu_sgemm_h200.csv").read_text())
    assert [r["step"] for r in recs] == list(sgemm_profile.LADDER)
    assert "sgemm_gen_128x256x8_t8x16" in recs[4]["kernel"] and recs[5]["kernel"] == "sgemm_vec"
    with pytest.raises(ValueError, match="12 SGEMM kernels profiled for 6 ladder steps"):
        text = (ROOT / "tests/data/ncu_sgemm_h200.csv").read_text()
        head, rows = text.split("\n", 1)
        again = re.sub(r'^"(\d+)"', lambda m: f'"{100 + int(m.group(1))}"', rows, flags=re.M)  # launched twice
        sgemm_profile.parse(head + "\n" + rows + again)


def test_ladder_json_agrees_with_the_benchmark_record():
    """notebook 07's ladder (three runs) and docs/benchmarks-h100-80gb.md (one of them) tell the same numbers."""
    recorded = json.loads((ROOT / "docs/data/sgemm_ladder.json").read_text())
    from_doc = sgemm_profile.ladder([(ROOT / "docs/benchmarks-h100-80gb.md").read_text()])
    assert {s["step"]: s["median"] for s in from_doc["steps"]} == {s["step"]: s["median"] for s in recorded["steps"]}
    best_numba = max(s["median"] for s in recorded["steps"] if not s["step"].startswith("SGEMM C"))
    assert best_numba >= 0.60 and recorded["runs"] == 3
    with pytest.raises(ValueError, match="no SGEMM rows"):
        sgemm_profile.ladder(["| nothing | here |"])
