"""Wrong answers for helpers/problems/nb08.py (CuPy).

``WRONG`` fails in every mode: CUDA C answers are run in CPU mode too (helpers.ptx), so wrong
numbers, a missing bounds check or a race fail there as on a GPU. ``WRONG_GPU`` is left for
answers only a GPU can catch (none now).
"""

import numpy as np

from . import Wrong

CLAMP_OK = r"""
extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""


def rows_by_columns(xp, a):
    return a / xp.sqrt((a * a).sum(axis=0, keepdims=True))


def rows_squared(xp, a):
    return a / (a * a).sum(axis=1, keepdims=True)


def rows_numpy(xp, a):
    return a / np.sqrt((a * a).sum(axis=1, keepdims=True))


def rows_no_keepdims(xp, a):
    return a / xp.sqrt((a * a).sum(axis=1))


WRONG = {
    "normalize_rows": [
        Wrong("wrong axis", rows_by_columns, "column lengths"),
        Wrong("missing sqrt", rows_squared, "square root"),
        Wrong("numpy instead of xp", rows_numpy, "calls NumPy directly"),
        Wrong("no keepdims", rows_no_keepdims, "could not be broadcast", status="error"),
    ],
    "leaky_relu": [
        Wrong("wrong output name", "z = x > 0 ? x : alpha * x", 'identifier "z" is undefined'),
        Wrong("syntax error", "y = x > 0 ? x alpha * x", "NVRTC rejects it"),
        Wrong("python syntax", "y = x if x > 0 else alpha * x", "NVRTC rejects it"),
        Wrong("not a string", 0.1, "as a string"),
        Wrong("plain relu", "y = x > 0 ? x : 0", "plain ReLU"),
        Wrong("swapped branch", "y = x > 0 ? alpha * x : x", "branches are swapped"),
        Wrong("wrong formula", "y = x > 0 ? x : alpha + x", "results are wrong: element"),
    ],
    "l2_norm": [
        Wrong("three pieces", ("x * x", "a + b", "y = sqrt(a)"), "four strings"),
        Wrong("undefined name", ("x * x", "a + b", "y = sqrt(total)", "0"), 'identifier "total" is undefined'),
        Wrong("syntax error", ("x * x", "a +", "y = sqrt(a)", "0"), "NVRTC rejects it"),
        Wrong("wrong identity", ("x * x", "a + b", "y = sqrt(a)", "1"), "identity"),
        Wrong("no sqrt", ("x * x", "a + b", "y = a", "0"), "square root"),
    ],
    "clamp": [
        Wrong("missing extern C", CLAMP_OK.replace('extern "C" ', ""), 'extern "C"'),
        Wrong("wrong signature", CLAMP_OK.replace("float lo", "double lo"), "parameters are wrong"),
        Wrong("syntax error", CLAMP_OK.replace("hi);", "hi)"), "NVRTC rejects it"),
        Wrong("wrong name", CLAMP_OK.replace("void clamp", "void clip"), "no kernel named clamp"),
        Wrong("missing guard", CLAMP_OK.replace("if (i < n) ", ""), "past the end"),
        Wrong("wrong index", CLAMP_OK.replace("blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x"), "Race on y"),
        Wrong(
            "swapped pointers",
            CLAMP_OK.replace("const float* x, float* y", "float* y, const float* x"),
            "parameters are wrong",
        ),
        Wrong("out of bounds", CLAMP_OK.replace("fmaxf(x[i]", "fmaxf(x[i + 1]"), "Out of bounds"),
        Wrong(
            "lo and hi swapped", CLAMP_OK.replace("fminf(fmaxf(x[i], lo), hi)", "fminf(fmaxf(x[i], hi), lo)"), "swapped"
        ),
    ],
}

WRONG_GPU: dict = {}
