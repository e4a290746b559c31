"""bench/sticky_errors.py (notebook 19's record) refuses CPU mode in one plain line and writes nothing, its
children included: an experiment run without a GPU says so instead of faulting."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "sticky_errors.py"


def _run(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, COURSE_MODE="cpu"),
        timeout=120,
        cwd=ROOT,
    )


def test_bench_sticky_errors_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "sticky_errors.json"
    r = _run("--out", str(out))
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_a_child_without_a_gpu_answers_one_json_line():
    r = _run("--child", "numba_fault")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "needs a GPU" in json.loads(r.stdout.strip().splitlines()[-1])["error"]


def test_show_prints_each_step_as_it_returned_or_raised(capsys):
    from bench.sticky_errors import show

    record = {
        "machine": {"GPU": "Some GPU (sm_90, 132 SMs)"},
        "tools": {"nsys": None, "ncu": "/usr/bin/ncu"},
        "experiments": {
            "numba_fault": {
                "steps": [
                    {"step": "launch", "ok": True},
                    {"step": "cuda.synchronize()", "ok": False, "error": "CudaAPIError", "message": "[700] boom"},
                ]
            },
            "cupy_fault": {"error": "exit status 1: no CuPy"},
        },
    }
    show(record, ["numba_fault", "cupy_fault", "core_fault"])
    out = capsys.readouterr().out
    assert "Some GPU (sm_90, 132 SMs); on PATH: nsys no, ncu yes" in out
    assert "  launch: returned" in out and "  cuda.synchronize(): raised CudaAPIError: [700] boom" in out
    assert "could not run: exit status 1: no CuPy" in out and "core_fault:\n  could not run: not in this record" in out
