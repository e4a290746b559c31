"""Notebook 08 - CuPy: the array API, ElementwiseKernel, ReductionKernel and RawKernel.

Array exercises run on CuPy on a GPU and on NumPy standing in for it in CPU mode. CUDA C
exercises are compiled with NVRTC everywhere and run everywhere: through CuPy on a GPU, from
their PTX in helpers.ptx in CPU mode (make_inputs / oracle / output below drive that run).
"""

import numpy as np

from helpers.exercises import register
from helpers.exercises.libraries import ArrayExercise, CudaCExercise, gpu_output_with_guard, guard_intact


def _normalize_rows(xp, a):
    norms = xp.sqrt((a * a).sum(axis=1, keepdims=True))
    return a / norms


def _matrix(rng):
    rows, cols = (int(v) for v in rng.integers(2, 9, size=2))
    if rows == cols:
        cols += 1
    return (rng.uniform(0.5, 2.0, size=(rows, cols)).astype(np.float32),)


normalize_rows = ArrayExercise(
    prompt="Write normalize_rows(xp, a): divide each row of the 2-D array a by its Euclidean length (L2 norm).",
    reference=_normalize_rows,
    make_inputs=_matrix,
    rtol=1e-5,
    atol=1e-6,
    mistakes=(
        (
            lambda xp, a: a / xp.sqrt((a * a).sum(axis=0, keepdims=True)),
            "that divides by the column lengths: sum along axis=1, one value per row.",
        ),
        (
            lambda xp, a: a / (a * a).sum(axis=1, keepdims=True),
            "you divided by the squared length: take the square root.",
        ),
    ),
    hints=(
        "(a * a).sum(axis=1) is one number per row; its square root is the row's length.",
        "Keep that axis with keepdims=True: a (rows, 1) column broadcasts across each row.",
    ),
)

LEAKY_IN, LEAKY_OUT = "float32 x, float32 alpha", "float32 y"


def _run_leaky(op, values):
    import cupy as cp

    k = cp.ElementwiseKernel(LEAKY_IN, LEAKY_OUT, op, "leaky_relu")
    return cp.asnumpy(k(cp.asarray(values["x"]), np.float32(values["alpha"]))), True


def _n(rng):  # never a multiple of the block size: the last block has spare threads
    return 300 + int(rng.integers(1, 100)) * 2 + 1


def _leaky_inputs(rng):
    return {"x": rng.uniform(-2, 2, _n(rng)).astype(np.float32), "alpha": float(rng.uniform(0.05, 0.3))}


def _leaky(v):
    return np.where(v["x"] > 0, v["x"], np.float32(v["alpha"]) * v["x"]).astype(np.float32)


leaky_relu = CudaCExercise(
    prompt=f'Write the operation of cupy.ElementwiseKernel("{LEAKY_IN}", "{LEAKY_OUT}", operation): y = x if x '
    "> 0, else alpha * x.",
    kind="elementwise",
    kernel="leaky_relu",
    in_params=LEAKY_IN,
    out_params=LEAKY_OUT,
    reference="y = x > 0 ? x : alpha * x",
    run_gpu=_run_leaky,
    make_inputs=_leaky_inputs,
    oracle=_leaky,
    output="y",
    mistakes=(
        (lambda v: np.maximum(v["x"], 0), "for x <= 0 the result must be alpha * x, not 0 (that is a plain ReLU)."),
        (
            lambda v: np.where(v["x"] > 0, np.float32(v["alpha"]) * v["x"], v["x"]),
            "the two branches are swapped: x > 0 keeps x, the other side is alpha * x.",
        ),
    ),
    hints=(
        "The operation is one C statement about ONE element: x, alpha and y are plain floats, not arrays.",
        "C's conditional expression: condition ? value_if_true : value_if_false.",
    ),
)

L2_IN, L2_OUT = "float32 x", "float32 y"


def _run_l2(answer, values):
    import cupy as cp

    m, r, p, ident = answer
    k = cp.ReductionKernel(L2_IN, L2_OUT, m, r, p, ident, "l2_norm")
    return np.asarray(cp.asnumpy(k(cp.asarray(values["x"]))), dtype=np.float32).reshape(()), True


def _l2(v):
    return np.asarray(np.sqrt(np.sum(v["x"].astype(np.float64) ** 2)), dtype=np.float32)


l2_norm = CudaCExercise(
    prompt=f'Give (map_expr, reduce_expr, post_map_expr, identity) for cupy.ReductionKernel("{L2_IN}", '
    f'"{L2_OUT}", ...) computing the L2 norm sqrt(sum(x*x)).',
    kind="reduction",
    kernel="l2_norm",
    in_params=L2_IN,
    out_params=L2_OUT,
    reference=("x * x", "a + b", "y = sqrt(a)", "0"),
    run_gpu=_run_l2,
    make_inputs=lambda rng: {"x": rng.uniform(0, 1, _n(rng)).astype(np.float32)},
    oracle=_l2,
    output="y",
    mistakes=(
        (lambda v: np.sqrt(_l2(v) ** 2 + 1), "the identity is the value that changes nothing: 0 for a sum."),
        (lambda v: _l2(v) ** 2, "that is the sum of squares: take its square root in post_map_expr."),
    ),
    hints=(
        "map_expr turns one element into the value to combine; reduce_expr combines two partial results named a and b.",
        "post_map_expr sees the total as a and must assign the output y; the identity of + is 0.",
    ),
)

CLAMP_PARAMS = "const float* x, float* y, float lo, float hi, int n"

_clamp_src = r"""
extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""


def _run_clamp(src, values):
    import cupy as cp

    n = int(values["n"])
    full, y = gpu_output_with_guard(cp, n)
    k = cp.RawKernel(src, "clamp")
    k(((n + 127) // 128,), (128,), (cp.asarray(values["x"]), y, values["lo"], values["hi"], np.int32(n)))
    return cp.asnumpy(y), guard_intact(cp, full, n)


def _clamp_inputs(rng):
    n = _n(rng)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    return {"x": x, "lo": np.float32(-0.5), "hi": np.float32(rng.uniform(0.2, 1.0)), "n": np.int32(n)}


clamp = CudaCExercise(
    prompt=f"Write the CUDA C source of a RawKernel `clamp({CLAMP_PARAMS})`: y[i] = x[i] limited to [lo, hi], "
    "one thread per element.",
    kind="raw",
    kernel="clamp",
    c_params=CLAMP_PARAMS,
    run_gpu=_run_clamp,
    make_inputs=_clamp_inputs,
    oracle=lambda v: np.clip(v["x"], v["lo"], v["hi"]),
    output="y",
    mistakes=(
        (lambda v: np.clip(v["x"], v["hi"], v["lo"]), "lo and hi are swapped: fmaxf with lo, then fminf with hi."),
    ),
    reference=_clamp_src,
    hints=(
        'RawKernel looks the kernel up by name, so declare it extern "C" (no C++ name mangling).',
        "i = blockIdx.x * blockDim.x + threadIdx.x, then `if (i < n)`: the last block has spare threads.",
        "fminf(fmaxf(v, lo), hi) clamps a float.",
    ),
)

EXERCISES = register(__name__, globals())
