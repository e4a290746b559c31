"""Wrong answers for helpers/problems/nb08.py (CuPy).

``WRONG`` fails in every mode (array mistakes; CUDA C that NVRTC rejects or that has the wrong
name/signature). ``WRONG_GPU`` compiles fine and is wrong only in its numbers: it can fail only
where the check runs the kernel, on a GPU (tests/gpu/test_wrong_numbers_gpu.py runs it there).
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
    ],
    "l2_norm": [
        Wrong("three pieces", ("x * x", "a + b", "y = sqrt(a)"), "four strings"),
        Wrong("undefined name", ("x * x", "a + b", "y = sqrt(total)", "0"), 'identifier "total" is undefined'),
        Wrong("syntax error", ("x * x", "a +", "y = sqrt(a)", "0"), "NVRTC rejects it"),
    ],
    "clamp": [
        Wrong("missing extern C", CLAMP_OK.replace('extern "C" ', ""), 'extern "C"'),
        Wrong("wrong signature", CLAMP_OK.replace("float lo", "double lo"), "parameters are wrong"),
        Wrong("syntax error", CLAMP_OK.replace("hi);", "hi)"), "NVRTC rejects it"),
        Wrong("wrong name", CLAMP_OK.replace("void clamp", "void clip"), "no kernel named clamp"),
    ],
}

WRONG_GPU = {
    "leaky_relu": [Wrong("plain relu", "y = x > 0 ? x : 0", "results are wrong")],
    "l2_norm": [Wrong("wrong identity", ("x * x", "a + b", "y = sqrt(a)", "1"), "results are wrong")],
    "clamp": [
        Wrong("missing guard", CLAMP_OK.replace("if (i < n) ", ""), "past the end"),
        Wrong(
            "wrong index", CLAMP_OK.replace("blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x"), "results are wrong"
        ),
    ],
}
