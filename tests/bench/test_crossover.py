"""bench/crossover.py in CPU mode: its pure logic, its refusal without a GPU, and one tiny run on the simulator.

The GPU run itself (`python -m bench.crossover --out docs/data --docs docs/benchmarks-<gpu>.md`) happens on a GPU
host; notebook 12 plots the JSON it writes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import crossover as C

ROOT = Path(__file__).resolve().parents[2]


def _rows(cpu, total, kernel=None):
    kernel = kernel or [t / 10 for t in total]
    return [
        {"n": 1 << (10 + k), "cpu_ms": c, "gpu_total_ms": t, "gpu_kernel_ms": g, "ok": True}
        for k, (c, t, g) in enumerate(zip(cpu, total, kernel))
    ]


@pytest.mark.parametrize(
    "cpu,total,want",
    [
        ([1, 2, 4, 8], [5, 5, 3, 3], 1 << 12),  # wins from the third size on
        ([1, 2, 4, 8], [5, 5, 5, 9], None),  # loses at the largest size: never
        ([1, 2, 4, 8], [5, 1, 5, 3], 1 << 13),  # an early win that does not last is not the crossover
        ([9, 9, 9], [1, 1, 1], 1 << 10),  # wins everywhere
        ([1, 2], [1, 2], None),  # a tie is not a win
    ],
)
def test_wins_from(cpu, total, want):
    assert C.wins_from(_rows(cpu, total)) == want


def test_wins_from_reads_the_key_it_is_given():
    rows = _rows([1, 2, 4, 8], [5, 5, 5, 9], kernel=[0.5, 0.5, 0.5, 0.5])
    assert C.wins_from(rows, "gpu_total_ms") is None and C.wins_from(rows, "gpu_kernel_ms") == 1 << 10


def _result():
    machine = {
        "gpu": "Test GPU (sm_90)",
        "cpu": "Test CPU",
        "cpu_count": 16,
        "numba_threads": 16,
        "threading_layer": "omp",
        "versions": {"numba": "0.68.1", "numpy": None},
        "python": "3.12.3",
    }
    workloads = {"saxpy": {"description": "SAXPY", "rows": _rows([1, 2, 4, 8], [5, 5, 3, 3])}}
    return {"date": "2026-11-23 20:00 UTC", "machine": machine, "workloads": workloads}


def test_markdown_names_machine_and_crossovers():
    md = C.render_markdown(_result())
    assert md.startswith(C.BEGIN) and md.rstrip().endswith(C.END)
    assert "Test GPU (sm_90)" in md and "16 logical cores" in md and "numba 0.68.1" in md and "numpy" not in md
    assert "GPU with transfers faster from n = 2^12" in md and "GPU kernel alone faster from n = 2^10" in md
    assert md.count("| ok |") == 4


def test_update_section_replaces_only_its_own_section():
    old = "# Benchmarks\n\nintro\n\n" + C.BEGIN + "\nold numbers\n" + C.END + "\n\n## Later\nkept\n"
    new = C.update_section(old, C.render_markdown(_result()))
    assert "old numbers" not in new and "## Later\nkept" in new and "intro" in new
    assert new.count(C.BEGIN) == 1 and new.count(C.END) == 1
    appended = C.update_section("# Benchmarks\n", C.render_markdown(_result()))
    assert appended.startswith("# Benchmarks\n\n" + C.BEGIN)


def test_refuses_cpu_mode_in_one_line(tmp_path):
    env = dict(os.environ, COURSE_MODE="cpu")
    r = subprocess.run(
        [sys.executable, "-m", "bench.crossover", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "needs a GPU" in lines[0], lines
    assert not (tmp_path / "crossover.json").exists()


def test_one_tiny_size_on_the_simulator_agrees_and_is_json():
    """The orchestration end to end (the GPU kernels on the simulator): results checked, rows serialisable."""
    result = C.measure([64], repeats_small=1, repeats_large=1)
    assert set(result) == {"saxpy", "sine"}
    for w in result.values():
        (row,) = w["rows"]
        assert row["n"] == 64 and row["ok"] and row["cpu_ms"] > 0
    json.dumps(result)
