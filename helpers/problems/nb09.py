"""Notebook 09 - PyCUDA: contexts, SourceModule, prepared calls and ElementwiseKernel.

SourceModule and ElementwiseKernel sources are compiled with NVRTC everywhere (PyCUDA itself
uses nvcc at run time). Their numbers are checked by running the same kernel: through CuPy on a
GPU (so the checks do not depend on PyCUDA being installed), from its PTX in CPU mode.
"""

import re

import numpy as np

from helpers.exercises import FunctionExercise, ValueExercise, register
from helpers.exercises.cuda_runners import LINCOMB_ARGS, call_with_pycuda_kernel, run_axpby, run_lincomb
from helpers.exercises.libraries import CallExercise, CudaCExercise
from helpers.exercises.library_calls import launch_problem

context_import = ValueExercise(
    prompt="Which module do you import so that PyCUDA uses the primary context, the one Numba, CuPy and "
    "cuda.core use? (a string)",
    answer="pycuda.autoprimaryctx",
    mistakes={
        "pycuda.autoinit": "autoinit creates a NEW, non-primary context; Numba then refuses to run "
        '("Numba cannot operate on non-primary CUDA context").',
        "pycuda.driver": "pycuda.driver is the API itself; importing it creates no context at all.",
    },
    explanation="pycuda.autoprimaryctx retains the device's primary context and makes it current, so every "
    "library shares it.",
    hints=(
        "Two modules create a context on import: one makes a new context, the other retains an existing one.",
        "The one you want has 'primary' in its name.",
    ),
)

# ----------------------------------------------------------------------------- prepared calls

_STRUCT = {"float": "f", "double": "d", "int": "i", "unsigned int": "I", "long long": "q", "unsigned long long": "Q"}


def _prepare_format(params):
    out = ""
    for p in params.split(","):
        words = p.replace("*", " * ").split()[:-1]  # drop the parameter name
        words = [w for w in words if w not in ("const", "__restrict__")]
        out += "P" if "*" in words else _STRUCT[" ".join(words)]
    return out


class _Signatures:
    """Random C parameter lists, e.g. 'float* out, const float* x, float a, int n'."""

    types = ("float*", "const float*", "double*", "int*", "float", "double", "int", "unsigned int", "long long")
    # where C code puts a pointer's star: all three are the same declaration
    stars = ("{t}* {n}", "{t} *{n}", "{t} * {n}")

    def draw(self, rng):
        k = int(rng.integers(2, 6))
        params = []
        for j in range(k):
            t = self.types[int(rng.integers(len(self.types)))]
            style = self.stars[int(rng.integers(len(self.stars)))] if t.endswith("*") else "{t} {n}"
            params.append(style.format(t=t.rstrip("*"), n=f"p{j}"))
        return ", ".join(params)


def _pointee_char(params):  # mistake: a pointer described by what it points to
    return "".join(_prepare_format(re.sub(r"\bconst\b|\*", "", p)) for p in params.split(","))


prepare_format = FunctionExercise(
    prompt="Write prepare_format(params) that turns a C parameter list such as 'float* out, const float* x, "
    "float a, int n' "
    "into the format string PyCUDA's function.prepare() wants ('PPfi'): P for any pointer, f float, d double, "
    "i int, I unsigned int, q long long.",
    reference=_prepare_format,
    inputs={"params": _Signatures()},
    trials=60,
    edge_cases=(("float* out, const float* x, float a, int n",), ("double* y, unsigned int m",)),
    mistakes=(
        (_pointee_char, "a pointer is passed as an address: every pointer is 'P', whatever it points to."),
        (
            lambda params: _prepare_format(params).replace("f", "d"),
            "a C float is 4 bytes, 'f'; 'd' is an 8-byte double.",
        ),
    ),
    hints=(
        "Split on commas; in each parameter the last word is the name, the rest is the type.",
        "If the type contains '*', it is 'P'. Otherwise drop 'const' and look the type up in a dict.",
    ),
)

# ----------------------------------------------------------------------------- SourceModule

AXPBY_PARAMS = "float* out, const float* x, const float* y, float a, float b, int n"

_axpby_src = r"""
__global__ void axpby(float* out, const float* x, const float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + b * y[i];
}
"""


def _axpby_inputs(rng):
    n = 300 + 2 * int(rng.integers(1, 100)) + 1  # not a multiple of the block size
    x, y = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(2))
    a, b = np.float32(rng.uniform(0.5, 2)), np.float32(rng.uniform(-2, -0.5))  # PyCUDA needs numpy scalars
    return {"x": x, "y": y, "a": a, "b": b, "n": np.int32(n)}


def _axpby(v):
    return (v["a"] * v["x"] + v["b"] * v["y"]).astype(np.float32)


_SWAPPED = "a and b are swapped: out = a*x + b*y."

axpby = CudaCExercise(
    prompt=f"Write the source for SourceModule with a kernel axpby({AXPBY_PARAMS}): out[i] = a*x[i] + b*y[i]. "
    '(SourceModule adds extern "C" for you.)',
    kind="sourcemodule",
    kernel="axpby",
    c_params=AXPBY_PARAMS,
    run_gpu=run_axpby,
    make_inputs=_axpby_inputs,
    oracle=_axpby,
    output="out",
    mistakes=((lambda v: v["b"] * v["x"] + v["a"] * v["y"], _SWAPPED),),
    reference=_axpby_src,
    hints=(
        "The parameter list is given: copy it exactly, in that order.",
        "One thread per element: compute i from blockIdx, blockDim and threadIdx, and check i < n.",
    ),
)

# ----------------------------------------------------------------------------- ElementwiseKernel


def _lincomb_inputs(rng):
    v = _axpby_inputs(rng)
    del v["n"]  # PyCUDA's ElementwiseKernel adds n itself
    return v


lincomb = CudaCExercise(
    prompt=f'Write the operation for PyCUDA\'s ElementwiseKernel("{LINCOMB_ARGS}", operation): z = a*x + b*y.',
    kind="pycuda_elementwise",
    kernel="lincomb",
    arguments=LINCOMB_ARGS,
    reference="z[i] = a * x[i] + b * y[i]",
    run_gpu=run_lincomb,
    make_inputs=_lincomb_inputs,
    oracle=_axpby,
    output="z",
    mistakes=(
        (lambda v: v["b"] * v["x"] + v["a"] * v["y"], _SWAPPED.replace("out", "z")),
        (lambda v: v["a"] * v["x"] + v["y"], "y is multiplied by b too: z[i] = a * x[i] + b * y[i]."),
    ),
    hints=(
        "Unlike CuPy's ElementwiseKernel, PyCUDA's passes whole arrays: index them with i.",
        "z[i] = ... ; a and b are plain floats.",
    ),
)


# ----------------------------------------------------------------------------- drv.InOut

_twice_src = r"""
__global__ void twice(float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
"""


def _pycuda():
    """(driver, SourceModule): the real PyCUDA on a GPU (primary context), the stand-in in CPU mode."""
    from helpers import env

    if env.on_gpu():
        import pycuda.autoprimaryctx  # noqa: F401 - the notebook's context
        import pycuda.driver as drv
        from pycuda.compiler import SourceModule
    else:
        from helpers.standins.pycuda import SourceModule
        from helpers.standins.pycuda import driver as drv
    return drv, SourceModule


def _double_in_place_reference(twice, x):
    drv, _ = _pycuda()
    twice(drv.InOut(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))


def _judge_in_out(fn, rng, executor):
    kernel = {"source": _twice_src, "name": "twice"}
    # 256k + 1: one element more than whole blocks, where a grid rounded one short (or by 257) misses it
    for n in (int(rng.integers(300, 700)), 256, 256 * int(rng.integers(2, 4)) + 1, int(rng.integers(1, 40))):
        x = rng.uniform(-10, 10, n).astype(np.float32)
        before = x.copy()
        done = executor.host_run("pycuda_call", fn, call_with_pycuda_kernel, kernel, [x])  # x changed in place
        launches, wrapped = done.launches, done.wrapped
        returned = None if done.result is None or isinstance(done.result, np.ndarray) else type(done.result).__name__
        if returned is not None:
            return (
                False,
                f"double_in_place returned {returned}; it should change x itself and return None.",
            )
        if len(launches) != 1:
            return False, launch_problem(launches, n, 256, f"for n = {n}", stream=False)
        if np.array_equal(x, before) and any(not itself for _, itself in wrapped[0]):
            return False, (
                "x did not change: the kernel got a copy of x (x.copy() or np.array(x)), so the doubled values went "
                "back into the copy; pass x itself: drv.InOut(x)."
            )
        if np.array_equal(x, before):
            return False, (
                "x did not change: drv.In copies the array to the GPU but never back; drv.InOut copies it in before "
                "the launch and back after it."
            )
        if np.allclose(x, 2 * before):
            if problem := launch_problem(launches, n, 256, f"for n = {n}", stream=False):
                return False, problem
            continue
        if np.array_equal(x[: (n // 256) * 256], 2 * before[: (n // 256) * 256]) and n % 256:
            return False, f"for n = {n} the last {n % 256} elements were not doubled: use grid = ((n + 255) // 256, 1)."
        if any(w == "Out" for w, _ in wrapped[0]):
            return False, (
                "x changed but is not 2 * x: drv.Out copies the result back but does not copy x to the GPU first, so "
                "the kernel doubled memory that never held x; use drv.InOut."
            )
        bad = int(np.flatnonzero(~np.isclose(x, 2 * before))[0])
        return (
            False,
            f"for n = {n}, x changed but is not 2 * x: x[{bad}] is {x[bad]:.6g}, expected {2 * before[bad]:.6g}.",
        )
    return True, "x doubled in place for four sizes (partial last blocks included), copied in and back by drv.InOut."


in_out = CallExercise(
    remote_ok=True,  # its judge runs the learner's function through the executor (judged grading)
    prompt="Write double_in_place(twice, x): twice is SourceModule's kernel twice(float* x, int n) (x[i] *= 2); x is a "
    "float32 NumPy array. Launch it with 256 threads per block so that x itself, on the host, ends up doubled, "
    "using drv.InOut; return nothing.",
    reference=_double_in_place_reference,
    judge=_judge_in_out,
    hints=(
        "drv.In copies to the GPU before the launch, drv.Out back after it, drv.InOut both.",
        "twice(drv.InOut(x), np.int32(x.size), block=(256, 1, 1), grid=((x.size + 255) // 256, 1))",
    ),
)

EXERCISES = register(__name__, globals())
