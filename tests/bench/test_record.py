"""bench/record.py: one make bench run is kept per GPU kind, and a run on one kind never overwrites another's."""

import json

import pytest

from bench import record, report


def _run(gpu: str):
    meta = {"GPU": f"{gpu} (sm_90, 132 SMs)", "date": "2026-11-28 12:00 UTC"}
    ceilings = {"copy": report.Ceiling("copy", "Device-to-device copy", 4.0e12)}
    rows = [report.Row("copy_k4", "copy, 4 elements per thread", "bandwidth", "2^26", "ok", 1e-4, 3.9e8, 15)]
    return meta, ceilings, rows, report.judge(rows, ceilings)


def test_the_record_holds_each_row_with_its_fraction_of_the_ceiling_and_the_verdicts():
    rec = record.build(*_run("NVIDIA H200"))
    (row,) = rec["rows"]
    assert row["rate"] == pytest.approx(3.9e12) and row["of_ceiling"] == pytest.approx(0.975)
    copy_k4 = next(t for t in rec["targets"] if t["best"] == "copy_k4")
    assert copy_k4["result"] == "pass" and copy_k4["minimum"] == 0.92
    assert rec["ceilings"]["copy"]["value"] == 4.0e12 and json.loads(json.dumps(rec)) == rec


def test_each_gpu_kind_gets_its_own_files(tmp_path):
    docs = tmp_path / "docs"
    for gpu, copy_gbs in (("NVIDIA H100 80GB HBM3", 2984), ("NVIDIA H200", 4185)):
        staging = tmp_path / f"staging-{copy_gbs}"
        record.write(staging / "data", *_run(gpu))
        (staging / "benchmarks.md").write_text(f"# Benchmarks on {gpu}\n")
        (staging / "data" / "crossover.json").write_text(json.dumps({"copy_gbs": copy_gbs}))
        record.place(staging, docs)
    assert (docs / "benchmarks-h100-80gb.md").read_text() == "# Benchmarks on NVIDIA H100 80GB HBM3\n"
    assert (docs / "benchmarks-h200.md").read_text() == "# Benchmarks on NVIDIA H200\n"
    assert json.loads((docs / "data" / "crossover-h100-80gb.json").read_text()) == {"copy_gbs": 2984}
    assert json.loads((docs / "data" / "crossover-h200.json").read_text()) == {"copy_gbs": 4185}
    assert {p.name for p in (docs / "data").glob("bench-*.json")} == {"bench-h100-80gb.json", "bench-h200.json"}


def test_a_staging_folder_without_the_run_record_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    with pytest.raises(SystemExit, match="bench/run.py --record did not finish"):
        record.place(tmp_path, tmp_path / "docs")
