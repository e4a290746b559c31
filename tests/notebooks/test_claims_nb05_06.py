"""Claims of notebook 05 (dynamic shared memory, constant memory) and notebook 06 (atomics beyond add, CAS loops,
GPU random numbers), checked against numba-cuda's compiler and sources and NVRTC's assembler, so that the text
fails here if the installed packages stop saying it.

Compiled with Numba's real compiler (NVVM, no GPU) in a process where the simulator is off and helpers is never
imported, as tests/notebooks/test_claims_2026.py does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("solutions", "notebooks")

_COMPILE = r"""
import inspect, json, os, re
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
import numpy as np
from numba import cuda, float32, int32, types
from numba.cuda import random as curand
from numba.cuda.dispatcher import CUDADispatcher

TABLE = np.arange(16, dtype=np.float32)


def with_const(idx, out):
    c = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[idx[i]]


def with_global(idx, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = TABLE[idx[i]]


def write_const(idx, out):
    c = cuda.const.array_like(TABLE)
    c[0] = 2.0
    out[0] = c[0]


def two_dynamic(idx, out):
    a = cuda.shared.array(0, float32)
    b = cuda.shared.array(0, int32)
    t = cuda.threadIdx.x
    a[t] = out[t]
    b[t] = idx[t]
    out[t] = a[t] + b[t]


def fmax(x, out):
    cuda.atomic.max(out, 0, x[cuda.grid(1)])


def cas_float(x, out):
    cuda.atomic.cas(out, 0, x[0], x[1])


def ptx(f, sig):
    return cuda.compile_ptx(f, sig, cc=(9, 0))[0]


def refusal(f, sig):
    try:
        ptx(f, sig)
    except Exception as e:
        return str(e)
    return None


vec_i, vec_f = types.int32[::1], types.float32[::1]
res = {}
res["const"] = [ln.strip() for ln in ptx(with_const, (vec_i, vec_f)).splitlines() if "ld.const" in ln]
res["global"] = [ln.strip() for ln in ptx(with_global, (vec_i, vec_f)).splitlines() if "ld.const" in ln]
res["write_const"] = refusal(write_const, (vec_i, vec_f))
dyn = ptx(two_dynamic, (vec_i, vec_f))
res["extern"] = [ln.strip() for ln in dyn.splitlines() if ".extern .shared" in ln]
res["dynamic_smem_size"] = "%dynamic_smem_size" in dyn
res["fmax"] = sorted(set(re.findall(r"atom\.[\w.]+", ptx(fmax, (vec_f, vec_f)))))
res["imax"] = sorted(set(re.findall(r"atom\.[\w.]+", ptx(fmax, (types.int32[::1], types.int32[::1])))))
res["cas_float"] = refusal(cas_float, (vec_f, vec_f))
res["cas_int"] = refusal(cas_float, (types.int64[::1], types.int64[::1]))
res["configure"] = list(inspect.signature(CUDADispatcher.configure).parameters)
res["states_doc"] = curand.create_xoroshiro128p_states.__doc__
res["uniform_doc"] = curand.xoroshiro128p_uniform_float32.__doc__
print(json.dumps(res))
"""


@pytest.fixture(scope="module")
def compiled():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run(
        [sys.executable, "-c", _COMPILE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _markdown(folder: str, number: str) -> str:
    (path,) = (ROOT / folder).glob(f"{number}_*.ipynb")
    cells = nbformat.read(path, as_version=4).cells
    return re.sub(r"\s+", " ", "\n\n".join(c.source for c in cells if c.cell_type == "markdown"))


def _code(folder: str, number: str) -> str:
    (path,) = (ROOT / folder).glob(f"{number}_*.ipynb")
    return "\n\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


# ============================================================== notebook 05


def test_dynamic_shared_arrays_are_sized_by_the_fourth_launch_item_and_all_start_at_one_address(compiled):
    assert compiled["configure"] == ["self", "griddim", "blockdim", "stream", "sharedmem"]
    assert compiled["dynamic_smem_size"]  # the shape is read from the launch's byte count
    assert len(compiled["extern"]) == 2 and all(ln.endswith("[];") for ln in compiled["extern"])
    for folder in FOLDERS:
        text = _markdown(folder, "05")
        assert "`kernel[blocks, threads, stream, nbytes]`" in text and "`.extern .shared`" in text
        assert "starts at the same address" in text and "slice it" in text


def test_constant_memory_is_read_only_and_a_read_global_array_lands_there_too(compiled):
    assert compiled["const"] and compiled["global"]  # ld.const in both kernels
    assert "readonly array" in compiled["write_const"]
    for folder in FOLDERS:
        text = _markdown(folder, "05")
        assert "a write does not compile" in text
        assert "a global NumPy array that a kernel reads directly lands in constant memory as well" in text


def test_constant_memory_holds_64_kib_as_the_assembler_says():
    pytest.importorskip("cuda.bindings.nvrtc")
    from cuda.bindings import nvrtc

    from helpers import limits

    def log(n_floats):
        kernel = 'extern "C" __global__ void k(float* o) { o[0] = t[threadIdx.x]; }'
        src = f"__constant__ float t[{n_floats}];\n{kernel}"
        _, prog = nvrtc.nvrtcCreateProgram(src.encode(), b"k.cu", 0, [], [])
        (result,) = nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_90"])  # a real arch: ptxas runs
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        text = bytearray(size)  # NVRTC writes into it: never b" " * size (CPython's shared one-byte object)
        nvrtc.nvrtcGetProgramLog(prog, text)
        return result, text.decode(errors="replace")

    assert limits.MAX_CONST_BYTES == 64 * 1024
    ok, _ = log(limits.MAX_CONST_BYTES // 4)
    refused, message = log(limits.MAX_CONST_BYTES // 4 + 1)
    assert ok == nvrtc.nvrtcResult.NVRTC_SUCCESS and refused != nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert "too much global constant data (0x10004 bytes, 0x10000 max)" in message
    assert "0x10000 max" in limits.const_problem(limits.MAX_CONST_BYTES + 4)
    for folder in FOLDERS:
        assert "64 KiB for all of a kernel's tables" in _markdown(folder, "05")


# ============================================================== notebook 06


def test_atomic_max_covers_floats_through_a_cas_loop_and_cas_takes_integers_only(compiled):
    assert any(".cas.b32" in k for k in compiled["fmax"]) and not any("max.f32" in k for k in compiled["fmax"])
    assert any(".max.s32" in k for k in compiled["imax"])
    assert compiled["cas_float"] is not None and compiled["cas_int"] is None
    nvvm = (ROOT / ".venv/lib/python3.11/site-packages/numba_cuda/numba/cuda/cudadrv/nvvm.py").read_text()
    assert "def ir_numba_atomic_minmax" in nvvm
    for folder in FOLDERS:
        text = _markdown(folder, "06")
        assert "(int32, int64, uint32 and uint64 only)" in text
        assert "`ir_numba_atomic_minmax` in numba-cuda's `cudadrv/nvvm.py`" in text


def test_random_states_are_2_to_the_64_steps_apart_and_draws_lie_in_0_1(compiled):
    assert "separated by 2**64 steps" in compiled["states_doc"]
    assert "[0.0, 1.0)" in compiled["uniform_doc"]
    for folder in FOLDERS:
        text = _markdown(folder, "06")
        assert "each 2^64 steps along one sequence from the last" in text and "[0, 1)" in text
        assert "xoroshiro128p_uniform_float32(states, i)" in _code(folder, "06")
