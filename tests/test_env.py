"""Mode detection, the banner, GPU-only cells and problem sizes (CPU mode on this machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import helpers
from helpers import env

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **envvars) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "COURSE_MODE")}
    e.update(envvars)
    e["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


def test_cpu_mode_banner_names_the_simulator_and_versions():
    assert not env.on_gpu()
    text = env.banner_text()
    assert text.startswith("CPU mode · Numba CUDA simulator")
    assert "CUDA C launches (CuPy, PyCUDA, cuda.core, driver API) run in the course's PTX interpreter" in text
    assert "numba-cuda 0.30.4" in text and "numpy " in text
    assert "\n" not in text


def test_simulator_is_switched_on_before_numba_loads():
    # A fresh interpreter without the flag: importing helpers alone must turn the simulator on.
    r = run_python(
        "import helpers, os; from numba import cuda; "
        "print(os.environ['NUMBA_ENABLE_CUDASIM'], type(cuda.jit(lambda a: None)).__name__)"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "FakeCUDAKernel"]


def test_numba_imported_first_gets_one_plain_instruction():
    r = run_python("import numba.cuda\nimport helpers", COURSE_MODE="cpu")
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert "restart the kernel" in last and "import helpers` before importing numba" in last


def test_course_mode_gpu_without_a_gpu_fails_in_one_sentence():
    r = run_python("import helpers", COURSE_MODE="gpu")
    assert r.returncode != 0
    assert "GPURequired: COURSE_MODE=gpu, but no NVIDIA driver found" in r.stderr


def test_unknown_course_mode_is_refused():
    r = run_python("import helpers", COURSE_MODE="fast")
    assert "COURSE_MODE='fast' is not understood: use cpu, gpu or leave it unset." in r.stderr


def test_gpu_only_prints_one_line_and_logs(capsys, tmp_path, monkeypatch):
    log = tmp_path / "gpu-only.jsonl"
    monkeypatch.setenv("COURSE_GPU_ONLY_LOG", str(log))
    assert helpers.gpu_only("time the copy with CUDA events") is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("[GPU only] Skipped: time the copy with CUDA events (CPU mode:")
    assert json.loads(log.read_text())["ran"] is False


def test_report_lists_every_component_with_a_fix_when_missing(capsys):
    rows = env.report()
    names = [r.component for r in rows]
    assert names == [
        "NVIDIA driver / GPU",
        "NumPy / Numba versions",
        "Numba (numba-cuda)",
        "NVRTC (cuda.bindings)",
        "CuPy",
        "cuda.core",
        "PyCUDA",
    ]
    by = {r.component: r for r in rows}
    assert by["NVRTC (cuda.bindings)"].ok, by["NVRTC (cuda.bindings)"].detail  # compiles without a GPU
    assert by["Numba (numba-cuda)"].ok and by["NumPy / Numba versions"].ok
    assert not by["NVIDIA driver / GPU"].ok and by["NVIDIA driver / GPU"].fix
    for r in rows:
        assert r.ok or r.fix, f"{r.component} failed without a fix"


def test_course_errors_print_one_line_in_ipython():
    """In a notebook a CourseError shows its sentence, not a traceback through helpers."""
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_cell('import helpers')\n"
        "ip.run_cell('from helpers.errors import LearnerError\\nraise LearnerError(\"threads_per_block must be "
        "positive.\")')\n"
    )
    r = run_python(code, COURSE_MODE="cpu")
    assert "LearnerError: threads_per_block must be positive." in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


# -- NumPy / Numba / numba-cuda versions (notebook 00 and the banner) -----------------------------
def _fake_versions(**have):
    real = {"numba-cuda": "0.30.4", "numba": "0.68.1", "numpy": "2.4.6"}
    real.update({k.replace("_", "-"): v for k, v in have.items()})
    return lambda dist: real.get(dist)


def test_the_locked_versions_fit_together():
    from helpers import versions

    assert versions.problems() == []
    assert versions.problem_line() is None


def test_a_numpy_too_new_for_numba_is_one_sentence_with_the_fix():
    from helpers import versions

    found = versions.problems(version=_fake_versions(numpy="2.6.1"))
    assert found, "numpy 2.6.1 is outside numba 0.68.1's numpy<2.6"
    assert any("numpy 2.6.1 is outside what numba 0.68.1 supports (numpy<2.6" in s for s in found), found
    assert all("make lab" in s and s.count(". ") == 0 for s in found), found  # one sentence each


def test_a_numpy_the_course_excludes_is_named_even_when_numba_accepts_it():
    from helpers import versions

    found = versions.problems(version=_fake_versions(numpy="2.5.0"))
    assert len(found) == 1 and "what the course supports" in found[0] and "row_stack" not in found[0], found


def test_the_banner_adds_the_mismatch_and_the_report_row_fails(monkeypatch, capsys):
    from helpers import versions

    fake = _fake_versions(numpy="2.6.1")
    monkeypatch.setattr(versions, "_version", fake)
    monkeypatch.setattr(versions.problems, "__defaults__", (fake, versions._requirements))
    env.banner()
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].startswith("numpy 2.6.1 is outside"), out
    row = next(r for r in env.checks() if r.component == "NumPy / Numba versions")
    assert not row.ok and "numpy 2.6.1" in row.detail and "make lab" in row.fix


def test_the_course_range_is_the_one_the_locks_pin():
    import re

    from packaging.specifiers import SpecifierSet

    from helpers import versions

    line = re.search(r"^numpy\s*([^\s#]+)", (ROOT / "requirements" / "common.in").read_text(), re.M)
    assert line and SpecifierSet(line.group(1)) == SpecifierSet(versions.COURSE_RANGES["numpy"])


def test_the_numba_row_compiles_and_runs_a_kernel_and_names_a_mismatch(monkeypatch):
    from helpers import _numba_probe, env, versions

    row = next(r for r in env.checks() if r.component == "Numba (numba-cuda)")
    assert row.ok and "compiled with Numba's CUDA compiler" in row.detail and "right numbers" in row.detail, row

    def row_stack_gone():
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    line = "numpy 2.5.0 is outside what the course supports (numpy<2.5): run `make lab` again."
    monkeypatch.setattr(_numba_probe, "run", row_stack_gone)
    monkeypatch.setattr(versions, "problem_line", lambda: line)
    row = next(r for r in env.checks() if r.component == "Numba (numba-cuda)")
    assert not row.ok and "row_stack" in row.detail and row.fix == line, row
    notebook = (ROOT / "solutions" / "00_setup.ipynb").read_text()
    assert "compile_check(" in notebook  # notebook 00 compiles its first kernel with the real compiler too
