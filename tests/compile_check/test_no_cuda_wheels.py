"""Where no NVIDIA wheel exists (macOS: no cuda-bindings, NVRTC, NVVM, CuPy or cuda.core), the course says what it
cannot check, in one line, and never counts an unchecked kernel as passed (issue 30 item 4).

NVRTC and the other packages are hidden in this process (sys.modules); NVVM is hidden from a real compile server
by a sitecustomize that makes cuda.pathfinder find no libnvvm, as on a machine without the nvidia-nvvm wheel.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import helpers
from helpers import env
from helpers.compile_check import client

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ("cuda.bindings", "cuda.core", "cupy", "pycuda")

_NO_NVVM = """
import cuda.pathfinder as pf
from cuda.pathfinder import DynamicLibNotFoundError

_load = pf.load_nvidia_dynamic_lib


def _without_nvvm(name, *args, **kwargs):
    if "nvvm" in name:
        raise DynamicLibNotFoundError(f"Failure finding lib{name}.so: no nvidia-nvvm wheel here")
    return _load(name, *args, **kwargs)


pf.load_nvidia_dynamic_lib = _without_nvvm
"""


@pytest.fixture
def on_macos(monkeypatch):
    monkeypatch.setattr(env, "NO_CUDA_WHEELS", True)
    for name in HIDDEN:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
def no_nvvm(monkeypatch, tmp_path):
    """The shared compile server replaced by one that finds no NVVM, with an empty cache."""
    (tmp_path / "sitecustomize.py").write_text(_NO_NVVM)

    def wrap(argv, environ):
        environ["PYTHONPATH"] = str(tmp_path) + (":" + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else "")
        return argv, environ

    server = client.Server(wrap=wrap)
    monkeypatch.setattr(client._STATE, "server", server)
    monkeypatch.setattr(client._STATE, "cache", {})
    yield server
    server.close()


def test_hidden_libraries_are_rows_that_say_why_not_tracebacks(on_macos, monkeypatch, capsys):
    monkeypatch.setattr(env, "_numba_check", lambda: "numba: ran")  # the NVVM row has its own test below
    rows = {r.component: r for r in env.report()}
    out = capsys.readouterr().out
    assert "Traceback" not in out and "ModuleNotFoundError" not in out, out
    for component in ("NVRTC (cuda.bindings)", "CuPy", "cuda.core", "PyCUDA"):
        row = rows[component]
        assert not row.ok and row.detail.startswith("not installed: no NVIDIA wheel"), row
        assert "macOS" in row.detail and "Linux" in row.fix and "make lab" not in row.fix, row
    assert "no NVRTC here: CUDA C cannot compile" in helpers.banner_text()


def test_a_cuda_c_cell_says_it_cannot_check_here_on_macos_and_fails_loudly_elsewhere(on_macos, monkeypatch, capsys):
    assert env.installed("cuda.bindings", "compile CUDA C with NVRTC") is False
    line = capsys.readouterr().out.strip()
    assert line.startswith("[Not on macOS] Cannot check here: compile CUDA C with NVRTC") and "\n" not in line
    monkeypatch.setattr(env, "NO_CUDA_WHEELS", False)  # Linux: a missing wheel is a broken install, not hidden
    assert env.installed("cuda.bindings", "compile CUDA C with NVRTC") is True


def test_without_nvvm_a_right_kernel_is_unchecked_never_passed(no_nvvm, monkeypatch):
    from helpers import _numba_probe
    from helpers.compile_check import compile_check
    from helpers.problems import nb02

    r = compile_check(_numba_probe.add_one, (np.zeros(4, np.float32),))
    assert r.ok is None and "could not run" in r.message and "nvvm" in r.message.lower(), r.message
    graded = nb02.saxpy.grade(nb02.saxpy.reference_answer(), seed=1, **nb02.saxpy.reference_options())
    assert graded.status == "unchecked" and not graded.passed and graded.points == 0, graded.line()
    assert "not marked passed" in graded.message, graded.message
    monkeypatch.setattr(env, "NO_CUDA_WHEELS", True)
    row = env._try("Numba (numba-cuda)", env._numba_check, "")
    assert row.ok and "cannot run here (no NVVM wheel for macOS)" in row.detail and "unchecked" in row.detail, row


def _markdown(folder: str, number: str) -> str:
    (path,) = (ROOT / folder).glob(f"{number}_*.ipynb")
    cells = json.loads(path.read_text())["cells"]
    return re.sub(r"\s+", " ", " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))


def test_readme_and_notebook_00_say_what_cpu_mode_can_and_cannot_do_on_macos():
    lock = (ROOT / "requirements/cpu.lock").read_text()
    (mac,) = re.findall(r"^numba-cuda==(\S+) ; sys_platform == 'darwin'", lock, re.M)
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text())
    assert "On Linux or macOS with Python" not in readme  # make env could not install on macOS
    section = readme.split("### macOS")[1].split("## The conda path")[0]
    for words in (f"numba-cuda {mac}", "unchecked", "never passed", "notebooks 08–11", "docs/data/platforms.json"):
        assert words in section, words
    assert "WSL 2" in readme.split("## Start here")[1].split("```")[0]
    for folder in ("solutions", "notebooks"):
        text = _markdown(folder, "00")
        assert f"numba-cuda {mac}" in text and "*unchecked*, never passed" in text and "notebooks 08–11" in text
