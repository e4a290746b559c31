"""Notebook 10 - cuda-python: (err, value) tuples, packing kernel arguments, cuda.core Program.

All three checks run for real on the CPU: NVRTC compiles without a GPU, and argument packing
is plain host memory read back through ctypes.
"""

import re

import numpy as np

from helpers import _wire, cuda_c
from helpers.exercises import register
from helpers.exercises.executor import frames_of
from helpers.exercises.libraries import CallExercise
from helpers.exercises.library_calls import (
    launch_problem,
    observed_core_launch,
    observed_storage_call,
    scalars_problem,
)

# ----------------------------------------------------------------------------- check()


def _check(result):
    err, *values = result
    if int(err) != 0:
        raise RuntimeError(f"CUDA call failed: {err.name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _judge_check(fn, rng):
    from cuda.bindings import driver, nvrtc

    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    cases = [
        ((ok, 13, 2), (13, 2), "several values come back as a tuple"),
        ((ok, b"NVRTC_SUCCESS"), b"NVRTC_SUCCESS", "one value comes back on its own, not in a tuple"),
        ((ok,), None, "no values: return None"),
        (nvrtc.nvrtcVersion(), _check(nvrtc.nvrtcVersion()), "a real nvrtcVersion() result"),
    ]
    for given, want, what in cases:
        try:
            got = fn(given)
        except Exception as e:  # the learner's code may raise anything: one sentence names it
            return False, f"check_result({given!r}) raised {type(e).__name__}: {e}, but it is a success ({what})."
        if type(got) is not type(want) or got != want:
            return False, f"check_result({given!r}) returned {got!r}, expected {want!r}: {what}."
    for err in (driver.CUresult.CUDA_ERROR_INVALID_VALUE, nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION):
        try:
            got = fn((err, None))
        except Exception as e:  # the learner chooses the exception type
            if err.name not in str(e):
                return (
                    False,
                    f"check_result raised for {err.name}, good, but its message {str(e)!r} does not name the error: "
                    "include err.name.",
                )
            continue
        return (
            False,
            f"check_result(({err.name}, None)) returned {got!r}: an error code must raise an exception, "
            "or failures go unnoticed.",
        )
    return True, "returns the values of successful calls and raises, naming the error, on failures."


check_result = CallExercise(
    prompt=(
        "Write check_result(result) for cuda.bindings results: result is (err, *values). Raise an exception naming the "
        "error (err.name) when int(err) != 0; otherwise return None, the single value, or a tuple of the values."
    ),
    reference=_check,
    remote_ok=True,  # judged grading: its judge only calls fn (enums and exception origins cross the wire)
    judge=_judge_check,
    hints=(
        "err, *values = result splits the tuple.",
        "Every success code is 0; compare int(err) != 0. Then look at len(values).",
    ),
)

# ----------------------------------------------------------------------------- kernel arguments


def _kernel_params(*args):
    storage = [np.array([a], dtype=a.dtype) for a in args]  # one small array per value, kept alive by the caller
    params = np.array([s.ctypes.data for s in storage], dtype=np.uint64)
    return params, storage


def _what(params) -> str:
    """What params is, without its addresses (they differ from run to run)."""
    if isinstance(params, np.ndarray):
        return f"a {params.dtype} array of shape {params.shape}"
    if isinstance(params, (list, tuple)):
        return f"a {type(params).__name__} of {len(params)} items"
    return f"a {_wire.type_name(params)}"


def _judge_params(fn, rng, executor):
    args = (
        np.uint64(0x7F0000000000 + 256 * int(rng.integers(1, 1000))),  # a device pointer, as a number
        np.float32(rng.uniform(0.5, 3)),
        np.int32(rng.integers(1, 10**6)),
        np.float64(rng.uniform(0.5, 3)),
    )
    # called where the storage lives (the student's process, when the grader judges): the bytes at
    # each address come back, read only inside the storage it returned
    out, regions, reads = observed_storage_call(executor, fn, args, [a.dtype.itemsize for a in args])
    if not (isinstance(out, tuple) and len(out) == 2):
        return False, "return two things: (params, storage) — the address array and the objects that hold the values."
    params = out[0]
    if not isinstance(params, np.ndarray) or params.dtype != np.uint64 or params.shape != (len(args),):
        return (
            False,
            f"params must be a NumPy uint64 array with one address per argument ({len(args)}), got {_what(params)}.",
        )
    for j, (addr, value) in enumerate(zip(params.tolist(), args)):
        size = value.dtype.itemsize
        if not any(lo <= addr and addr + size <= hi for lo, hi in regions):
            if addr == int(value) or np.float64(addr) == np.float64(value):
                return False, (
                    f"params[{j}] holds the value itself; cuLaunchKernel wants the ADDRESS of memory holding "
                    "the value (e.g. arr.ctypes.data)."
                )
            short = [hi - lo for lo, hi in regions if lo <= addr < hi]
            if short:
                return False, (
                    f"params[{j}] points at {short[0]} bytes but argument {j} is {value!r} ({value.dtype}, "
                    f"{size} bytes): store each value with its own type and size, e.g. np.array([a], dtype=a.dtype)."
                )
            return False, (
                f"params[{j}] = {addr:#x} does not point into anything you returned as storage: return the objects "
                "that hold the values (NumPy arrays or ctypes values) as storage."
            )
        raw = reads[j] if j < len(reads) else None
        if raw is None:  # inside its storage, yet not read back: only a broken student's process says so
            return False, f"params[{j}] could not be read back from your storage."
        if raw != value.tobytes():
            return False, (
                f"params[{j}] points at bytes {raw.hex()} but argument {j} is {value!r} ({value.dtype}, "
                f"bytes {value.tobytes().hex()}): keep each value's own dtype, a float32 is 4 bytes."
            )
    return True, "every address points at the argument's own bytes, kept alive by storage."


kernel_params = CallExercise(
    prompt="Write kernel_params(*args) for cuLaunchKernel: args are NumPy scalars (a device pointer as np.uint64, "
    "np.float32, np.int32...). Return (params, storage): params is a uint64 array of the ADDRESSES of the values, "
    "storage the NumPy arrays (or ctypes values) holding them (they must outlive the launch).",
    reference=_kernel_params,
    remote_ok=True,  # judged grading: its judge works on a stand-in (exercises/library_calls.py)
    judge=_judge_params,
    hints=(
        "np.array([a], dtype=a.dtype) stores one value in memory you can point to; .ctypes.data is its address.",
        "params = np.array([s.ctypes.data for s in storage], dtype=np.uint64)",
    ),
)

# ----------------------------------------------------------------------------- cuda.core Program


def _to_cubin(src, arch):
    from cuda.core import Program, ProgramOptions

    return bytes(Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin").code)


_probe_src = (
    'extern "C" __global__ void twice(float* x, int n) '
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }"
)


def _compiled_to_ptx_without_driver(exc: BaseException) -> bool:
    """True when ``exc`` came from cuda.core's ``compile("ptx")`` asking the driver whether it can load the PTX.

    ``Program.compile("cubin")`` needs no driver, but ``compile("ptx")`` calls ``cuDriverGetVersion``: in CPU
    mode a learner who compiles to PTX gets a missing-driver error instead of PTX text, so the PTX message
    below must be given for that error too.
    """
    return any(name.rsplit(".", 1)[-1] == "_can_load_generated_ptx" for name in frames_of(exc))


_PTX = 'to_cubin(src, "{arch}") {what}: compile("cubin") gives the binary.'


def _judge_cubin(fn, rng):
    for arch in ("sm_80", "sm_90"):
        try:
            out = fn(_probe_src, arch)
        except Exception as e:  # the learner's code may raise anything: one sentence names it
            if _compiled_to_ptx_without_driver(e):
                what = 'compiled to PTX (compile("ptx") asks the NVIDIA driver, absent in CPU mode)'
                return False, _PTX.format(arch=arch, what=what)
            raise
        if isinstance(out, str) and re.fullmatch(r"(?:0x)?[0-9a-fA-F\s]+", out) and out.strip():
            return False, (
                f'to_cubin(src, "{arch}") returned the CUBIN as a hex string; return the bytes themselves '
                "(ObjectCode.code), not .hex() of them."
            )
        if isinstance(out, str) or (isinstance(out, (bytes, bytearray)) and bytes(out[:20]).lstrip().startswith(b"//")):
            return False, _PTX.format(arch=arch, what="returned PTX text")
        if not isinstance(out, (bytes, bytearray)):
            return False, f"return bytes (ObjectCode.code), not {_wire.type_name(out)}."
        if bytes(out[:4]) != b"\x7fELF":
            return False, "that is not a CUBIN (a CUBIN is an ELF file starting with b'\\x7fELF')."
        got = cuda_c.cubin_arch(bytes(out))
        if got != arch:
            return False, f'to_cubin(src, "{arch}") built for {got}: pass ProgramOptions(arch=arch).'
    try:
        fn(_probe_src.replace("2.0f;", "2.0f"), "sm_90")
    except Exception:  # cuda.core raises its own error type
        return True, "builds CUBINs for the asked architecture and raises on a compile error."
    return False, "a source with a syntax error did not raise: do not swallow the compiler's error."


to_cubin = CallExercise(
    prompt="Write to_cubin(src, arch) with cuda.core: compile the CUDA C string src for arch (e.g. 'sm_90') and return "
    "the CUBIN bytes.",
    reference=_to_cubin,
    remote_ok=True,  # judged grading: its judge only calls fn (enums and exception origins cross the wire)
    judge=_judge_cubin,
    hints=(
        "Program(src, code_type='c++', options=ProgramOptions(arch=arch)).compile('cubin') returns an ObjectCode.",
        "ObjectCode.code holds the bytes.",
    ),
)


# ----------------------------------------------------------------------------- a cuda.core launch

_saxpy_src = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


def _launch_saxpy_reference(stream, kernel, x, y, out, a):
    from helpers.standins import library

    core = library("cuda.core")
    n = out.size
    threads = 256
    config = core.LaunchConfig(grid=(n + threads - 1) // threads, block=threads)
    core.launch(stream, config, kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))


def _judge_launch(fn, rng, executor):
    kernel = {"source": _saxpy_src, "name": "saxpy"}
    # 256k + 1: one element more than whole blocks, where a grid rounded one short (or by 257) misses it
    for n in (int(rng.integers(300, 700)), 256, 256 * int(rng.integers(2, 4)) + 1, int(rng.integers(1, 40))):
        a = float(round(rng.uniform(0.5, 3.0), 3))  # a Python float, as a learner's variable would be
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out = np.full(n, np.nan, dtype=np.float32)
        # the stream, the kernel and the device arrays are made where fn runs (the student's process
        # when the grader judges); the arrays come back afterwards
        done = observed_core_launch(executor, fn, kernel, [x, y, out], [a])
        x_after, y_after, got = done.arrays
        if not done.launches:
            return False, launch_problem(done.launches, n, 256, f"for n = {n}")
        got, xh, yh = (np.asarray(v, dtype=np.float64) for v in (got, x, y))
        want = a * xh + yh
        if np.allclose(got, want, rtol=1e-5, atol=1e-6):
            if not (np.array_equal(x_after, x) and np.array_equal(y_after, y)):
                return (
                    False,
                    f"for n = {n}, out is right but x or y changed: the kernel's inputs must stay as they were.",
                )
            if problem := launch_problem(done.launches, n, 256, f"for n = {n}") or scalars_problem(
                done.launches, ("a", "n"), ("float32", "int32"), f"for n = {n}"
            ):
                return False, problem
            continue
        if np.isnan(got).any():
            first = int(np.flatnonzero(np.isnan(got))[0])
            return False, (
                f"for n = {n}, out[{first}:] was never written: the grid must cover every element, "
                "grid = (n + threads - 1) // threads (ceiling division), not n // threads."
            )
        c = np.polyfit(xh, got - yh, 1)[0] if n > 2 else None
        if c is not None and np.allclose(got, c * xh + yh, rtol=1e-4, atol=1e-5) and not np.isclose(c, a):
            return False, (
                f"out is {c:.3g} * x + y, not {a} * x + y: a Python float is sent as an 8-byte double and the kernel's "
                "`float a` reads only 4 of its bytes; pass np.float32(a) (and np.int32(n) for `int n`)."
            )
        bad = int(np.flatnonzero(~np.isclose(got, want))[0])
        return False, f"for n = {n} with a = {a}, out is not a * x + y (first difference at element {bad})."
    return True, "right for four sizes (partial last blocks included), with a passed as the kernel's float."


core_launch = CallExercise(
    prompt="Write launch_saxpy(stream, kernel, x, y, out, a) with cuda.core: launch `kernel` (the SAXPY above: "
    "const float* x, const float* y, float* out, float a, int n) on `stream` with 256 threads per block and enough "
    "blocks for n = out.size elements. x, y, out are device arrays (pass .data.ptr); a is a Python float.",
    reference=_launch_saxpy_reference,
    remote_ok=True,  # judged grading: its judge works on a stand-in (exercises/library_calls.py)
    judge=_judge_launch,
    hints=(
        "config = core.LaunchConfig(grid=(n + 255) // 256, block=256); core.launch(stream, config, kernel, ...)",
        "The kernel's a is a float and n an int: np.float32(a), np.int32(n).",
    ),
)

EXERCISES = register(__name__, globals())
