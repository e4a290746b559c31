"""Environment and mode: is there a real NVIDIA GPU, or does the course run on Numba's simulator?

The decision has to be made *before* Numba's CUDA module is imported, because numba-cuda
reads ``NUMBA_ENABLE_CUDASIM`` once, at import. That is why every notebook's first code
cell is ``import helpers``: this module probes the driver through ``ctypes`` (no Numba,
no CuPy), then switches the simulator on when no usable GPU is found.

Override with ``COURSE_MODE=cpu`` (force the simulator even on a GPU machine) or
``COURSE_MODE=gpu`` (insist on a GPU; fail loudly if there is none).
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from .errors import CourseError, GPURequired

# No NVIDIA wheel (cuda-bindings, NVRTC, NVVM, CuPy, cuda.core) exists for macOS: requirements/cpu.in installs
# numba-cuda 0.20.1 there, and its simulator alone (docs/data/platforms.json, README "macOS").
NO_CUDA_WHEELS = sys.platform == "darwin"
NO_WHEELS_HERE = (
    "no NVIDIA wheel (cuda-bindings, NVRTC, NVVM, CuPy, cuda.core) exists for macOS, so it cannot be installed here"
)

# Packages named in the banner and in notebook 00, with the name pip knows them by.
LIBRARIES = {
    "numba": "numba",
    "numba-cuda": "numba-cuda",
    "numpy": "numpy",
    "cupy": None,  # cupy-cuda12x or cupy-cuda13x: resolved in library_versions()
    "cuda-bindings": "cuda-bindings",
    "cuda-core": "cuda-core",
    "pycuda": "pycuda",
}


@dataclass(frozen=True)
class GPUInfo:
    """What the driver says about device 0 (or why there is no usable device)."""

    name: str | None = None
    driver_cuda: str | None = None  # highest CUDA version the driver supports, e.g. "13.0"
    driver_version: str | None = None  # e.g. "580.65.06", from nvidia-smi when present
    compute_capability: str | None = None
    count: int = 0
    problem: str | None = None  # plain reason when no GPU is usable


@dataclass
class Mode:
    """The mode the course runs in, decided once per process."""

    gpu: bool
    reason: str
    info: GPUInfo

    @property
    def name(self) -> str:
        return "GPU" if self.gpu else "CPU"


def _cuda_version_str(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def probe_gpu() -> GPUInfo:
    """Ask libcuda directly; every failure becomes a plain reason, never an exception."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return GPUInfo(problem="no NVIDIA driver found (libcuda.so.1 is not installed)")
    ver = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(ver))
    driver_cuda = _cuda_version_str(ver.value) if ver.value else None
    rc = lib.cuInit(0)
    if rc != 0:
        return GPUInfo(
            driver_cuda=driver_cuda, problem=f"the NVIDIA driver is installed but cuInit failed (CUDA error {rc})"
        )
    count = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    if count.value == 0:
        return GPUInfo(driver_cuda=driver_cuda, problem="the NVIDIA driver sees no GPU")
    dev = ctypes.c_int(0)
    lib.cuDeviceGet(ctypes.byref(dev), 0)
    buf = ctypes.create_string_buffer(256)
    lib.cuDeviceGetName(buf, 256, dev)
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # ..._MINOR
    return GPUInfo(
        name=buf.value.decode(errors="replace"),
        driver_cuda=driver_cuda,
        driver_version=_nvidia_smi_driver(),
        compute_capability=f"{major.value}.{minor.value}",
        count=count.value,
    )


def _nvidia_smi_driver() -> str | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def _decide() -> Mode:
    wanted = os.environ.get("COURSE_MODE", "").strip().lower()
    if wanted not in ("", "auto", "cpu", "gpu"):
        raise CourseError(f"COURSE_MODE={wanted!r} is not understood: use cpu, gpu or leave it unset.")
    if wanted == "cpu":
        return Mode(False, "COURSE_MODE=cpu asked for the simulator", GPUInfo(problem="CPU mode was asked for"))
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") and wanted != "gpu":
        return Mode(
            False,
            "NUMBA_ENABLE_CUDASIM=1 was already set",
            GPUInfo(problem="the simulator was switched on by NUMBA_ENABLE_CUDASIM"),
        )
    info = probe_gpu()
    if info.problem is None:
        return Mode(True, "found an NVIDIA GPU", info)
    if wanted == "gpu":
        raise GPURequired(f"COURSE_MODE=gpu, but {info.problem}. Unset COURSE_MODE to use the CPU simulator.")
    return Mode(False, info.problem, info)


def _switch_simulator(on: bool) -> None:
    """Set the simulator flag before numba.cuda is imported, or say exactly what to do."""
    from . import _numba

    if on:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    active = _numba.simulator_active()
    if active is None or active == on:
        return
    if "numba.cuda" not in sys.modules:
        _numba.reload_config()  # numba was imported, numba.cuda not yet: re-reading the flag is enough
        return
    raise CourseError(
        "Numba's CUDA module was imported before helpers, so it cannot switch to "
        f"{'the simulator' if on else 'the GPU'} any more: restart the kernel "
        "(Kernel > Restart Kernel) and run `import helpers` before importing numba."
    )


def has_module(name: str) -> bool:
    """Is `name` importable? (A missing parent package is a plain False, not an exception.)"""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


MODE: Mode = _decide()
if not has_module("cuda.bindings"):
    # numba-cuda refuses to import without cuda-bindings unless told to use its ctypes bindings (macOS).
    os.environ.setdefault("NUMBA_CUDA_USE_NVIDIA_BINDING", "0")
_switch_simulator(not MODE.gpu)


def on_gpu() -> bool:
    """True when kernels run on a real NVIDIA GPU."""
    return MODE.gpu


def library_versions() -> dict[str, str | None]:
    """Installed versions by distribution metadata (no imports, so it is fast and cannot crash)."""
    out: dict[str, str | None] = {}
    for label, dist in LIBRARIES.items():
        candidates = [dist] if dist else ["cupy-cuda13x", "cupy-cuda12x", "cupy"]
        out[label] = None
        for d in candidates:
            try:
                out[label] = importlib.metadata.version(d)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    return out


def banner_text() -> str:
    """One line: mode, GPU (or simulator) and library versions."""
    v = library_versions()
    libs = " · ".join(f"{k} {v[k]}" for k in ("numba-cuda", "numpy", "cupy", "cuda-bindings", "cuda-core") if v.get(k))
    if MODE.gpu:
        i = MODE.info
        drv = f"driver {i.driver_version} " if i.driver_version else ""
        where = f"{i.name} (sm_{i.compute_capability.replace('.', '')}) · {drv}CUDA {i.driver_cuda}"
        return f"GPU mode · {where} · {libs}"
    if not has_module("cuda.bindings"):
        return f"CPU mode · Numba CUDA simulator ({MODE.reason}) · no NVRTC here: CUDA C cannot compile · {libs}"
    return (
        f"CPU mode · Numba CUDA simulator ({MODE.reason}) · CUDA C launches (CuPy, PyCUDA, cuda.core, driver API) "
        f"run in the course's PTX interpreter · {libs}"
    )


def banner() -> None:
    print(banner_text())
    from .versions import problem_line

    mismatch = problem_line()
    if mismatch:
        print(mismatch)


def gpu_only(what: str) -> bool:
    """Gate for a cell that needs a real GPU.

    Use as ``if helpers.gpu_only("time the copy with CUDA events"): ...``. On a GPU it
    returns True; in CPU mode it prints one plain line saying what would run and why it
    cannot, and returns False. Skips are logged when ``COURSE_GPU_ONLY_LOG`` names a file,
    so ``make test-gpu`` can prove that nothing was skipped.
    """
    ran = MODE.gpu
    log = os.environ.get("COURSE_GPU_ONLY_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"what": what, "ran": ran, "cwd": os.getcwd()}) + "\n")
    if not ran:
        print(f"[GPU only] Skipped: {what} (CPU mode: {MODE.reason}).")
    return ran


def installed(module: str, what: str) -> bool:
    """Gate for a cell that needs a library no wheel provides on this platform (macOS: cuda-bindings,
    NVRTC, CuPy). Where it can be installed, True, so a missing one fails loudly with its import error;
    on macOS without it, one line saying what cannot run here, and False."""
    if has_module(module) or not NO_CUDA_WHEELS:
        return True
    print(f"[Not on macOS] Cannot check here: {what} ({NO_WHEELS_HERE}).")
    return False


# ----------------------------------------------------------------------------- notebook 00
@dataclass(frozen=True)
class Check:
    component: str
    ok: bool
    detail: str
    fix: str = ""


def _try(component: str, fn, fix: str, module: str | None = None) -> Check:
    """Run one probe; a failure becomes a row with the fix, never a traceback. A `module` that cannot
    exist on this platform (macOS) is said so, with what the course cannot do without it."""
    if module and NO_CUDA_WHEELS and not has_module(module):
        return Check(component, False, f"not installed: {NO_WHEELS_HERE}", _NO_WHEEL_FIX.get(component, ""))
    try:
        detail = fn()
        return Check(component, True, detail)
    except Exception as e:  # every failure is reported as a row
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return Check(component, False, f"{type(e).__name__}: {msg}"[:160], fix)


def _numba_check() -> str:
    """Compile and run one small kernel: importing Numba proves little (a NumPy too new for
    numba-cuda imports fine and fails at the first launch)."""
    import numba
    import numpy as np

    from . import _numba_probe

    x = _numba_probe.run()
    if not np.array_equal(x, np.arange(1, 5, dtype=np.float32)):
        raise RuntimeError(f"a 4-element @cuda.jit kernel gave {x.tolist()} instead of [1.0, 2.0, 3.0, 4.0]")
    if MODE.gpu:
        return f"numba {numba.__version__}: a small @cuda.jit kernel compiled and ran on the GPU, right numbers"
    from .compile_check import compile_check

    compiled = compile_check(_numba_probe.add_one, (x,))
    if compiled.ok is False:
        raise RuntimeError(f"Numba's CUDA compiler refused a 4-line kernel: {compiled.message}")
    if compiled.ok is None and NO_CUDA_WHEELS:
        return (
            f"numba {numba.__version__}: a small @cuda.jit kernel ran on the CUDA simulator; the GPU compile check "
            "cannot run here (no NVVM wheel for macOS), so kernel exercises show ? unchecked, never passed"
        )
    if compiled.ok is None:
        return f"numba {numba.__version__}: a small @cuda.jit kernel ran on the CUDA simulator ({compiled.message})"
    return (
        f"numba {numba.__version__}: a small @cuda.jit kernel compiled with Numba's CUDA compiler and ran on the "
        "CUDA simulator, right numbers"
    )


def _numba_fix() -> str:
    """The version mismatch, when there is one, is the fix to give (it names what to install)."""
    try:
        from .versions import problem_line

        line = problem_line()
    except Exception:  # no metadata to read: the generic fix
        line = None
    return line or "Run `make lab` again: it reinstalls the locked environment."


def _versions_check() -> str:
    from .versions import problems

    found = problems()
    if found:
        raise RuntimeError(found[0].split(":")[0])
    v = library_versions()
    return f"numpy {v['numpy']}, numba {v['numba']} and numba-cuda {v['numba-cuda']} fit together"


def _cupy_check() -> str:
    import cupy

    if not MODE.gpu:
        return f"cupy {cupy.__version__} imports; its arrays and launches need a GPU"
    n = cupy.cuda.runtime.getDeviceCount()
    return f"cupy {cupy.__version__}, {n} device(s), {int(cupy.arange(10).sum())} == 45"


def _nvrtc_check() -> str:
    from cuda.bindings import nvrtc

    from .cuda_c import compile as compile_cuda_c

    err, major, minor = nvrtc.nvrtcVersion()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcVersion returned {err}")
    src = 'extern "C" __global__ void inc(float* a) { a[threadIdx.x] += 1.0f; }'
    compile_cuda_c(src, arch="sm_75", name="inc.cu")
    return f"NVRTC {major}.{minor} compiles CUDA C to PTX (works without a GPU)"


def _cuda_core_check() -> str:
    import cuda.core

    if not MODE.gpu:
        return f"cuda.core {cuda.core.__version__} imports; Device() needs a GPU"
    dev = cuda.core.Device()
    dev.set_current()
    return f"cuda.core {cuda.core.__version__}: {dev.name}"


def _pycuda_check() -> str:
    import pycuda

    if not MODE.gpu:
        return f"pycuda {pycuda.VERSION_TEXT} installed; it needs a GPU to run"
    import pycuda.autoprimaryctx  # noqa: F401 - shares the primary context with Numba and CuPy
    import pycuda.driver as drv

    return f"pycuda {pycuda.VERSION_TEXT}: {drv.Context.get_device().name()}"


_NO_WHEEL_FIX = {
    "NVRTC (cuda.bindings)": "CUDA C cannot compile here: notebook 00 section 4 says so in one line, and notebooks "
    "08-11 stop at their first CUDA C cell. Run those on Linux (a Linux container or VM on the Mac is enough).",
    "CuPy": "Notebooks 08-11 need it (through NVRTC): run them on Linux.",
    "cuda.core": "Notebooks 10 and 11 need it: run them on Linux.",
    "PyCUDA": "NVIDIA ships no CUDA toolkit for macOS to build it: notebook 09 runs on Linux.",
}


def checks() -> list[Check]:
    """Every component the course uses, probed one by one (notebook 00's table)."""
    gpu_fix = (
        "No NVIDIA GPU: the course runs in CPU mode, which covers every Numba exercise. "
        "For GPU-only cells use a machine with an NVIDIA GPU and driver (e.g. a cloud or Colab GPU)."
    )
    driver = Check(
        "NVIDIA driver / GPU",
        MODE.gpu,
        f"{MODE.info.name}, driver supports CUDA {MODE.info.driver_cuda}" if MODE.gpu else MODE.reason,
        "" if MODE.gpu else gpu_fix,
    )
    return [
        driver,
        _try(
            "NumPy / Numba versions",
            _versions_check,
            "Run `make lab` again (it reinstalls the locked versions), then restart the kernel.",
        ),
        _try("Numba (numba-cuda)", _numba_check, _numba_fix()),
        _try(
            "NVRTC (cuda.bindings)",
            _nvrtc_check,
            "The NVRTC wheel is missing or does not match cuda-bindings: run `make lab` again (it installs the lock).",
            "cuda.bindings",
        ),
        _try(
            "CuPy",
            _cupy_check,
            "A CuPy built for another CUDA major version: rebuild with `make lab CUDA_SET=cu12` (driver below "
            "580) or cu13.",
            "cupy",
        ),
        _try("cuda.core", _cuda_core_check, "Reinstall the locked set: `make lab`.", "cuda.core"),
        _try(
            "PyCUDA",
            _pycuda_check,
            "PyCUDA is built from source where a CUDA toolkit (nvcc, cuda.h, curand.h) exists: install the toolkit "
            "and run `make pycuda`, or use environment.yml (conda-forge has PyCUDA prebuilt).",
            "pycuda",
        ),
    ]


def report() -> list[Check]:
    """Print the environment table: one line per component, with the fix when it fails."""
    rows = checks()
    for c in rows:
        mark = "ok " if c.ok else "-- "
        print(f"{mark} {c.component:24} {c.detail}")
        if c.fix:
            print(f"    {'':24} fix: {c.fix}")
    return rows
