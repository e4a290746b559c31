"""The locked environments: pins, known traps, and agreement between the lock and environment.yml."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
REQ = ROOT / "requirements"
SETS = ("cpu", "cu12", "cu13")
sys.path.insert(0, str(ROOT / "tools"))
import envset  # noqa: E402

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)(\[[^\]]*\])?==([^\s;\\]+)", re.M)


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    return {norm(m.group(1)): m.group(3) for m in PIN.finditer(text)}


def lock(name: str) -> dict[str, str]:
    return pins((REQ / f"{name}.lock").read_text())


def top_level(name: str) -> list[Requirement]:
    """Requirements of a .in file, following -r includes."""
    out = []
    for line in (REQ / f"{name}.in").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            out += top_level(line[3:].strip().removesuffix(".in"))
        else:
            out.append(Requirement(line))
    return out


def trap_problems(lock_pins: dict[str, str], in_reqs: list[Requirement]) -> list[str]:
    """The two traps the issue names, as a function so a planted bad lock can prove it fails."""
    problems = []
    np_v = lock_pins.get("numpy")
    if np_v is None or Version(np_v) >= Version("2.5"):
        problems.append(
            f"numpy {np_v} is not below 2.5 (numpy 2.5 removed np.row_stack, which numba-cuda 0.30.4 calls)"
        )
    nc = lock_pins.get("numba-cuda")
    if nc != "0.30.4":
        problems.append(
            f"numba-cuda resolved to {nc}, not 0.30.4 (pip falls back to 0.13 when extras and cuda-python disagree)"
        )
    cu12_extra = any(r.name == "numba-cuda" and "cu12" in r.extras for r in in_reqs)
    for pkg in ("cuda-python", "cuda-bindings"):
        v = lock_pins.get(pkg)
        if cu12_extra and v and Version(v).major >= 13:
            problems.append(f"numba-cuda[cu12] is mixed with {pkg} {v}: keep every cuda-* package on 12.x")
    return problems


@pytest.mark.parametrize("name", SETS)
def test_lock_avoids_known_traps(name):
    assert trap_problems(lock(name), top_level(name)) == []


def test_trap_detector_catches_planted_mistakes():
    cu12 = top_level("cu12")
    bad = dict(lock("cu12"), **{"cuda-python": "13.4.4", "numba-cuda": "0.13.0", "numpy": "2.5.0"})
    found = " | ".join(trap_problems(bad, cu12))
    assert "numpy 2.5.0 is not below 2.5" in found
    assert "numba-cuda resolved to 0.13.0" in found
    assert "numba-cuda[cu12] is mixed with cuda-python 13.4.4" in found


def test_cuda_sets_match_their_cuda_major():
    for name, major in (("cu12", 12), ("cu13", 13), ("cpu", 13)):
        p = lock(name)
        for pkg in ("cuda-bindings", "cuda-python"):
            assert Version(p[pkg]).major == major, (name, pkg, p[pkg])
    assert "cupy-cuda12x" in lock("cu12") and "cupy-cuda13x" not in lock("cu12")
    assert "cupy-cuda13x" in lock("cu13") and "cupy-cuda12x" not in lock("cu13")
    # The CPU set compiles CUDA C without a GPU: it must carry an NVRTC wheel.
    assert "nvidia-cuda-nvrtc" in lock("cpu")


@pytest.mark.parametrize("name", SETS + ("pycuda",))
def test_every_locked_package_is_pinned_and_hashed(name):
    text = (REQ / f"{name}.lock").read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 1)[1] if text.startswith("#") else text)
    entries = [e for e in entries if e.strip() and not e.lstrip().startswith("#")]
    assert entries, "empty lock"
    for e in entries:
        assert PIN.match(e), f"not pinned with ==: {e.splitlines()[0]}"
        assert "--hash=sha256:" in e, f"no hash: {e.splitlines()[0]}"


@pytest.mark.parametrize("name", SETS + ("pycuda",))
def test_lock_satisfies_its_input(name):
    p = lock(name)
    for req in top_level(name):
        assert norm(req.name) in p, f"{req.name} from {name}.in is missing from {name}.lock: run make lock"
        assert req.specifier.contains(p[norm(req.name)], prereleases=True), (req, p[norm(req.name)])


def test_pycuda_lock_agrees_with_every_set():
    pc = lock("pycuda")
    for name in SETS:
        other = lock(name)
        shared = set(pc) & set(other)
        assert {k: pc[k] for k in shared} == {k: other[k] for k in shared}, name


def environment_yml_pins() -> dict[str, str]:
    pins_ = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"^\s*-\s*([A-Za-z0-9_.\-]+)\s*=+\s*([^\s#]+)", line)
        if m:
            pins_[norm(m.group(1))] = m.group(2)
    return pins_


def test_environment_yml_agrees_with_the_lock():
    env = environment_yml_pins()
    cu13 = {**lock("cu13"), **lock("pycuda")}
    cu13["cupy"] = cu13["cupy-cuda13x"]  # conda-forge's name for the same release
    shared = sorted(set(env) & set(cu13))
    assert len(shared) >= 15, f"too few shared packages to mean anything: {shared}"
    disagree = {k: (env[k], cu13[k]) for k in shared if env[k] != cu13[k]}
    assert disagree == {}, f"environment.yml vs requirements/cu13.lock (yml, lock): {disagree}"
    for required in ("numba", "numba-cuda", "numpy", "cupy", "cuda-python", "cuda-core", "pycuda", "nbval"):
        assert required in env, f"environment.yml does not pin {required}"


@pytest.mark.parametrize(
    "major, wanted, expected",
    [
        (13, "auto", "cu13"),
        (14, "auto", "cu13"),
        (12, "auto", "cu12"),
        (11, "auto", "cpu"),
        (None, "auto", "cpu"),
        (13, "cu12", "cu12"),
        (None, "cu13", "cu13"),
        (12, "cpu", "cpu"),
    ],
)
def test_set_is_picked_from_the_driver(major, wanted, expected):
    assert envset.pick(wanted, major) == expected


def test_unknown_set_is_refused_in_one_line():
    with pytest.raises(SystemExit, match="CUDA_SET='cu11' is not one of auto, cpu, cu12, cu13"):
        envset.pick("cu11", None)


def test_running_environment_matches_the_lock():
    """The Python running the tests is the locked one (COURSE_ENV=current hosts excepted)."""
    import numba
    import numpy

    assert Version(numpy.__version__) < Version("2.5")
    from importlib.metadata import version

    assert version("numba-cuda") == "0.30.4"
    assert numba.__version__ == lock("cpu")["numba"]
