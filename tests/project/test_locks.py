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


LINUX = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix"}
MACOS = {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64", "os_name": "posix"}


def pins(text: str, platform: dict | None = None) -> dict[str, str]:
    """name -> version of every entry whose environment marker holds on `platform` (default: Linux x86-64)."""
    from packaging.markers import Marker

    env = {"python_version": "3.11", "python_full_version": "3.11.9", **(platform or LINUX)}
    out = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = PIN.match(entry)
        if not m:
            continue
        first = entry.splitlines()[0].rstrip(" \\")
        if ";" in first and not Marker(first.split(";", 1)[1].strip()).evaluate(env):
            continue
        out[norm(m.group(1))] = m.group(3)
    return out


def lock(name: str, platform: dict | None = None) -> dict[str, str]:
    return pins((REQ / f"{name}.lock").read_text(), platform)


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


@pytest.mark.parametrize("platform", [LINUX, MACOS], ids=["linux", "macos"])
@pytest.mark.parametrize("name", SETS + ("pycuda",))
def test_lock_satisfies_its_input(name, platform):
    p = lock(name, platform)
    env = {"python_version": "3.11", "python_full_version": "3.11.9", **platform}
    for req in top_level(name):
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        if platform is MACOS and name != "cpu":
            continue  # the GPU sets are for Linux (and Windows): NVIDIA ships nothing for macOS
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


def test_environment_yml_has_every_common_package_and_nvvm():
    """A conda env must run make test too: its lint step needs ruff, the compile check NVVM's wheel."""
    env = environment_yml_pins()
    conda_name = {"cupy-cuda13x": "cupy"}
    wanted = [norm(r.name) for r in top_level("common")] + ["nvidia-nvvm"]
    missing = [n for n in wanted if conda_name.get(n, n) not in env]
    assert missing == [], f"environment.yml lacks {missing}, which every locked set installs"


def test_the_cpu_set_installs_on_macos_without_nvidia_packages():
    """No NVIDIA package has a macOS distribution (docs/data/platforms.json): the CPU set marks them off there
    and gives macOS numba-cuda 0.20.1, the newest with a pure-Python wheel; Linux keeps the full set."""
    import json

    linux, mac = lock("cpu"), lock("cpu", MACOS)
    nvidia = sorted(n for n in linux if n.startswith(("cuda-", "cupy", "nvidia-")))
    assert {"cuda-bindings", "cupy-cuda13x", "nvidia-cuda-nvrtc", "nvidia-nvvm"} <= set(nvidia)
    assert [n for n in nvidia if n in mac] == [], "a package with no macOS distribution is not marked off macOS"
    assert linux["numba-cuda"] == "0.30.4" and mac["numba-cuda"] == "0.20.1"
    same = set(mac) & set(linux) - {"numba-cuda"}
    assert {k: mac[k] for k in same} == {k: linux[k] for k in same}
    record = json.loads((ROOT / "docs/data/platforms.json").read_text())
    import hashlib

    assert record["lock_sha256"] == hashlib.sha256((REQ / "cpu.lock").read_bytes()).hexdigest(), (
        "cpu.lock changed: resolve it again for macOS and Windows and rewrite docs/data/platforms.json"
    )
    rows = {r["uv_platform"]: r for r in record["with_markers"]}
    for plat in ("aarch64-apple-darwin", "x86_64-apple-darwin", "x86_64-pc-windows-msvc", "aarch64-unknown-linux-gnu"):
        assert rows[plat]["rc"] == 0, rows[plat]
    for plat in ("aarch64-apple-darwin", "x86_64-apple-darwin"):
        assert rows[plat]["numba-cuda"] == mac["numba-cuda"] and rows[plat]["nvidia_packages"] == []
        assert rows[plat]["packages"] == len(mac), (rows[plat]["packages"], len(mac))
    assert rows["x86_64-pc-windows-msvc"]["nvidia_packages"] == nvidia
    assert rows["x86_64-pc-windows-msvc"]["packages"] == len(linux)


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
